"""Mask-attack benchmark: ``bench/run attack``.

A mask table ("acl", table 0, fields dl_type + nw_src + nw_dst) holds --masks deny rules,
each with its own random arbitrary-bit masks on nw_src and nw_dst (so --masks distinct masks,
the worst case for tuple space search and for rte_acl's tries), plus one permit rule for the
benign traffic (priority 1, ip,nw_src=10.0.0.0/16 -> output:2): benign keys find their winner
only after every mask, as do keys that match nothing.

Data plane (tuple-space explosion, as CVE-2019-25076 against Open vSwitch):
  benign_mpps                port 1 (net_pcap, infinite_rx) replays --frames 64-byte frames of
                             64 benign UDP flows; port 2 (net_null) forwards them; Mpps = tx
                             rate per --json interval after a warm-up (forwarding.py's
                             run_sluice), median of the intervals and rounds.
  benign_mpps_under_attack   the same pcap length with every tenth frame an attack frame: a
                             fresh random nw_src/nw_dst pair (--frames / 10 distinct keys, more
                             than fit beside the benign ones in the decision cache without
                             collisions), which matches no rule and is dropped by the table
                             miss.  tx counts benign frames only.
  benign_ratio_under_attack  benign_mpps_under_attack / benign_mpps (per round, then median).
                             Its ceiling is 0.9 (a tenth of the frames are the attack's); 0.8
                             allows an attack frame to cost 2.25 benign ones.
Control plane (distinct-mask rules installed over OpenFlow):
  distinct_mask_add_2000_s   the --masks deny rules as flow_mods on one connection, then a
                             barrier: first byte sent -> barrier reply.
  barrier_p99_ms_during_rebuild   meanwhile a second connection sends a barrier every 20 ms
                             and times each reply, from the first flow_mod until no build of
                             the mask table's classifier is in flight (telemetry
                             /sluice/table,0 rebuild_pending; binaries without it build in the
                             flow_mod path: until the barrier reply);
                             p99 of those round trips (a barrier that got no answer in the
                             window counts as the window's length).
  telemetry_max_ms_during_rebuild the same window, a telemetry /sluice/info every 20 ms: the
                             longest wait for an answer (the control thread serves them).
  rss_peak_mb_2000_masks     VmHWM of the switch once the snapshot is up to date.
  startup_2000_masks_s       a switch started with the same rules in its flow file: spawn ->
                             "sluice: name" (ready: flows loaded, channel and telemetry up);
                             startup_baseline_s is the same with the permit rule only, and
                             startup_snapshot_s spawn -> snapshot up to date.
Each figure is the median of --rounds fresh switches; *_spread is (max - min) / median.
Machine: 2 cores shared with the generator-free pcap replay (core 1 forwards, core 0 runs
the control thread and this client): compare runs, not absolutes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Sequence

from sluice import ofp, testing
from sluice.bench import arg_parser, forwarding, write_results
from sluice.bench.forwarding import eal_mem_mb, mbufs_for, run_sluice
from sluice.telemetry import Telemetry

ACL_TABLE = 0
DECL = f"table={ACL_TABLE},kind=mask,fields=dl_type+nw_src+nw_dst,size=65536,name=acl"
PERMIT = "priority=1,ip,nw_src=10.0.0.0/16,actions=output:2"
BENIGN_FLOWS = 64
PROBE_S = 0.02
SEED = 21


def log(msg: str) -> None:
    print(msg, flush=True)


# ---------------------------------------------------------------------------
# Rules and frames
# ---------------------------------------------------------------------------


def benign_keys() -> list[tuple[int, int]]:
    """(nw_src, nw_dst) of the benign flows: 10.0.0.i -> 10.1.0.i."""
    return [((10 << 24) | (i + 1), (10 << 24) | (1 << 16) | (i + 1)) for i in range(BENIGN_FLOWS)]


def acl_rules(n: int, seed: int = SEED) -> list[tuple[int, int, int, int, int]]:
    """@n deny rules (priority, src, src_mask, dst, dst_mask), each (src_mask, dst_mask)
    pair distinct, none matching a benign key; priorities 100.. distinct."""
    rng = random.Random(seed)
    benign = benign_keys()
    seen: set[tuple[int, int]] = set()
    out: list[tuple[int, int, int, int, int]] = []
    while len(out) < n:
        sm, dm = rng.getrandbits(32), rng.getrandbits(32)
        if (sm, dm) in seen or (sm | dm) == 0:
            continue
        s, d = rng.getrandbits(32) & sm, rng.getrandbits(32) & dm
        if any((bs & sm) == s and (bd & dm) == d for bs, bd in benign):
            continue
        seen.add((sm, dm))
        out.append((100 + len(out), s, sm, d, dm))
    return out


def ip4(v: int) -> str:
    return socket.inet_ntoa(struct.pack("!I", v))


def flow_lines(rules: Sequence[tuple[int, int, int, int, int]]) -> list[str]:
    return [DECL, PERMIT] + [
        f"priority={p},ip,nw_src={ip4(s)}/{ip4(sm)},nw_dst={ip4(d)}/{ip4(dm)},actions=drop"
        for p, s, sm, d, dm in rules]


def flow_mods(rules: Sequence[tuple[int, int, int, int, int]]) -> bytes:
    return b"".join(
        ofp.flow_mod([ofp.oxm_eth_type(0x0800),
                      ofp.oxm(ofp.OFPXMT_IPV4_SRC, struct.pack("!I", s), struct.pack("!I", sm)),
                      ofp.oxm(ofp.OFPXMT_IPV4_DST, struct.pack("!I", d), struct.pack("!I", dm))],
                     [], table_id=ACL_TABLE, priority=p)
        for p, s, sm, d, dm in rules)


def udp_frame(src: int, dst: int, sport: int = 1024, dport: int = 53) -> bytes:
    """A 60-byte (64 with FCS) Ethernet/IPv4/UDP frame."""
    ip = struct.pack("!BBHHHBBHII", 0x45, 0, 46, 0, 0, 64, 17, 0, src, dst)
    udp = struct.pack("!HHHH", sport, dport, 26, 0)
    eth = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00"
    return eth + ip + udp + bytes(18)


def write_pcap(path: str, frames: Sequence[bytes]) -> None:
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 0, i, len(fr), len(fr)) + fr)


def make_pcaps(tmp: str, n_frames: int, attack_every: int,
               rules: Sequence[tuple[int, int, int, int, int]]) -> tuple[str, str]:
    """(benign-only pcap, pcap with every @attack_every-th frame an attack frame)."""
    benign = [udp_frame(s, d) for s, d in benign_keys()]
    rng = random.Random(SEED + 1)
    normal, attacked = [], []
    for i in range(n_frames):
        normal.append(benign[i % len(benign)])
        if i % attack_every == attack_every - 1:
            while True:  # outside 10.0.0.0/16 (the permit rule): a table miss, dropped
                s, d = rng.getrandbits(32), rng.getrandbits(32)
                if s >> 16 != 0x0A00:
                    break
            attacked.append(udp_frame(s, d, rng.getrandbits(16), rng.getrandbits(16)))
        else:
            attacked.append(benign[i % len(benign)])
    paths = os.path.join(tmp, "benign.pcap"), os.path.join(tmp, "attack.pcap")
    write_pcap(paths[0], normal)
    write_pcap(paths[1], attacked)
    return paths


# ---------------------------------------------------------------------------
# Control plane
# ---------------------------------------------------------------------------


def snapshot_current(tel: Telemetry) -> bool | None:
    """No classifier build is in flight for the acl table (None: the binary does not say:
    its builds are synchronous)."""
    r = tel.request("/sluice/table", ACL_TABLE).get("/sluice/table", {})
    if not isinstance(r, dict) or "rebuild_pending" not in r:
        return None
    return not int(r["rebuild_pending"])


def vm_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {key} for pid {pid}")


class Prober(threading.Thread):
    """Every PROBE_S: one timed request; records (send time, seconds to the answer)."""

    def __init__(self, fn: object) -> None:
        super().__init__(daemon=True)
        self.fn = fn
        self.samples: list[tuple[float, float]] = []
        self.stop_at: float | None = None
        self.error: BaseException | None = None
        self.pending_since: float | None = None

    def run(self) -> None:
        try:
            while self.stop_at is None or time.perf_counter() < self.stop_at:
                t0 = time.perf_counter()
                self.pending_since = t0
                self.fn()  # type: ignore[operator]
                self.pending_since = None
                self.samples.append((t0, time.perf_counter() - t0))
                time.sleep(max(0.0, PROBE_S - (time.perf_counter() - t0)))
        except BaseException as e:  # noqa: BLE001 - reported by the caller
            self.error = e


def control_round(rules: Sequence[tuple[int, int, int, int, int]], blob: bytes,
                  timeout: float) -> dict[str, float]:
    """One fresh switch: the distinct-mask flow_mods, barrier and telemetry probes, RSS."""
    sock = testing.socket_path("slat")
    cfg = testing.SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                               flows=[DECL, PERMIT], controllers=(f"punix:{sock}",),
                               name=testing.unique("slat"), mem_mb=1024)
    r: dict[str, float] = {}
    with testing.Sluice(cfg) as sw:
        sw.wait_listening()
        sw.wait_ready()
        rss0 = vm_kb(sw.pid, "VmRSS")
        tel = Telemetry(path=sw.telemetry_path, connect_timeout=30.0, timeout=timeout)
        probe_tel = Telemetry(path=sw.telemetry_path, connect_timeout=30.0, timeout=timeout)
        target = f"unix:{sock}"
        with ofp.Client.connect(target, timeout=30) as c, \
                ofp.Client.connect(target, timeout=30) as pc:
            c.barrier()
            pc.barrier()
            tp = Prober(lambda: probe_tel.request("/sluice/info"))
            bp = Prober(lambda: pc.barrier(timeout=timeout))
            xid = ofp.next_xid()
            t0 = time.perf_counter()
            tp.start()
            bp.start()
            c.send(blob + ofp.barrier_request(xid))
            errors = 0
            while True:
                m = c.recv(timeout)
                if m.type == ofp.OFPT_ERROR:
                    errors += 1
                elif m.type == ofp.OFPT_BARRIER_REPLY and m.xid == xid:
                    break
            t_barrier = time.perf_counter()
            if errors:
                raise RuntimeError(f"{errors} errors for the distinct-mask flow_mods")
            # The window ends once the snapshot is up to date (or at the barrier reply).
            while True:
                cur = snapshot_current(tel)
                if cur is None or cur:
                    break
                if time.perf_counter() - t0 > timeout:
                    raise RuntimeError("the mask table's snapshot never became current")
                time.sleep(0.01)
            t_done = time.perf_counter()
            for p in (tp, bp):
                p.stop_at = t_done
            for p in (tp, bp):
                p.join(timeout + 5)
                if p.error is not None:
                    raise RuntimeError(f"probe failed: {p.error!r}")
            window = t_done - t0
            bar = [d for s, d in bp.samples if s <= t_done] or [0.0]
            tels = [d for s, d in tp.samples if s <= t_done] or [0.0]
            r["distinct_mask_add_2000_s"] = t_barrier - t0
            r["rebuild_done_s"] = window
            r["barrier_p99_ms_during_rebuild"] = quantile(bar, 0.99) * 1e3
            r["barrier_max_ms_during_rebuild"] = max(bar) * 1e3
            r["telemetry_max_ms_during_rebuild"] = max(tels) * 1e3
            r["barrier_probes"] = len(bar)
            r["telemetry_probes"] = len(tels)
            r["window_s"] = window
        info = tel.request("/sluice/table", ACL_TABLE).get("/sluice/table", {})
        if int(info.get("entries", 0)) != len(rules) + 1:
            raise RuntimeError(f"table holds {info.get('entries')} entries, "
                               f"expected {len(rules) + 1}")
        r["rss_start_mb"] = rss0 / 1024
        r["rss_peak_mb_2000_masks"] = vm_kb(sw.pid, "VmHWM") / 1024
        tel.close()
        probe_tel.close()
    return r


def quantile(v: Sequence[float], q: float) -> float:
    s = sorted(v)
    return s[min(len(s) - 1, int(q * len(s)))]


def startup_round(tmp: str, rules: Sequence[tuple[int, int, int, int, int]],
                  timeout: float) -> dict[str, float]:
    """Seconds to "ready" with the distinct-mask rules in the flow file, and without them."""
    r: dict[str, float] = {}
    for key, lines in (("startup_baseline_s", [DECL, PERMIT]),
                       ("startup_2000_masks_s", flow_lines(rules))):
        cfg = testing.SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                                   flows=lines, name=testing.unique("slas"), mem_mb=1024)
        t0 = time.perf_counter()
        with testing.Sluice(cfg, workdir=tempfile.mkdtemp(dir=tmp)) as sw:
            sw.wait_ready(timeout)
            r[key] = time.perf_counter() - t0
            if key == "startup_2000_masks_s":
                with Telemetry(path=sw.telemetry_path, connect_timeout=30.0,
                               timeout=timeout) as tel:
                    while snapshot_current(tel) is False:
                        if time.perf_counter() - t0 > timeout:
                            raise RuntimeError("no current snapshot after start")
                        time.sleep(0.01)
                r["startup_snapshot_s"] = time.perf_counter() - t0
    return r


# ---------------------------------------------------------------------------
# Data plane
# ---------------------------------------------------------------------------


def dataplane_round(tmp: str, pcaps: tuple[str, str], flows_path: str, n_frames: int,
                    intervals: int, extra: Sequence[str]) -> dict[str, float]:
    r: dict[str, float] = {}
    for key, pcap in (("benign_mpps", pcaps[0]), ("benign_mpps_under_attack", pcaps[1])):
        rates, _busy = run_sluice(pcap, n_frames, flows_path, extra, intervals, 1.0, tmp,
                                  mem_mb=eal_mem_mb(mbufs_for(n_frames)) + 2048)
        r[key] = statistics.median(rates) / 1e6
    r["benign_ratio_under_attack"] = r["benign_mpps_under_attack"] / r["benign_mpps"]
    return r


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = arg_parser("attack", __doc__)
    ap.add_argument("--rounds", type=int, default=3, help="fresh switches per figure (3)")
    ap.add_argument("--masks", type=int, default=2000, help="distinct-mask deny rules (2000)")
    ap.add_argument("--frames", type=int, default=131072, help="frames per pcap (131072)")
    ap.add_argument("--attack-every", type=int, default=10,
                    help="every Nth frame of the attack pcap is an attack frame (10)")
    ap.add_argument("--intervals", type=int, default=3, help="1-s rate samples per run (3)")
    ap.add_argument("--timeout", type=float, default=120.0, help="per wait, seconds (120)")
    ap.add_argument("--only", choices=("control", "startup", "dataplane"), action="append",
                    help="run only these parts (repeatable); the others keep an earlier value")
    ap.add_argument("--extra", default="", help="more sluice options, space separated")
    ap.add_argument("--sluice", help="the switch binary (default build/app/sluice)")
    return ap.parse_args(argv)


FIGURES = ("benign_mpps", "benign_mpps_under_attack", "benign_ratio_under_attack",
           "distinct_mask_add_2000_s", "barrier_p99_ms_during_rebuild",
           "telemetry_max_ms_during_rebuild", "rss_peak_mb_2000_masks", "startup_2000_masks_s")
TARGETS = {"benign_ratio_under_attack": (">=", 0.80), "distinct_mask_add_2000_s": ("<=", 1.0),
           "telemetry_max_ms_during_rebuild": ("<=", 100.0),
           "rss_peak_mb_2000_masks": ("<=", 400.0)}


def main(argv: Sequence[str] | None = None) -> int:
    a = parse_args(argv)
    parts = set(a.only or ("control", "startup", "dataplane"))
    if a.sluice:
        os.environ["SLUICE_BIN"] = forwarding.SLUICE = os.path.abspath(a.sluice)
    rules = acl_rules(a.masks)
    blob = flow_mods(rules)
    extra = a.extra.split()
    samples: dict[str, list[float]] = {}

    def add(rnd: int, name: str, r: dict[str, float]) -> None:
        for k, v in r.items():
            samples.setdefault(k, []).append(v)
        log(f"  {name} round {rnd + 1}/{a.rounds}: "
            + ", ".join(f"{k} {v:,.3f}" for k, v in sorted(r.items())))

    with tempfile.TemporaryDirectory(prefix="slbench-attack-") as tmp:
        flows_path = os.path.join(tmp, "acl.flows")
        with open(flows_path, "w") as f:
            f.write("\n".join(flow_lines(rules)) + "\n")
        pcaps = make_pcaps(tmp, a.frames, a.attack_every, rules) if "dataplane" in parts else None
        log(f"{a.masks} distinct-mask rules; eal -m {eal_mem_mb(mbufs_for(a.frames)) + 2048} MB "
            f"for {a.frames} frames")
        for rnd in range(a.rounds):
            if "control" in parts:
                add(rnd, "control", control_round(rules, blob, a.timeout))
            if "startup" in parts:
                add(rnd, "startup", startup_round(tmp, rules, a.timeout))
            if pcaps is not None:
                add(rnd, "dataplane", dataplane_round(tmp, pcaps, flows_path, a.frames,
                                                      a.intervals, extra))
    results: dict[str, float] = {}
    if a.only and os.path.exists(a.out):
        with open(a.out) as f:
            results = json.load(f)
    for k, v in samples.items():
        med = statistics.median(v)
        results[k] = round(med, 4)
        results[f"{k}_spread"] = round((max(v) - min(v)) / max(abs(med), 1e-12), 3)
    results["rounds"] = a.rounds
    results["masks"] = a.masks
    results["frames"] = a.frames
    results["attack_every"] = a.attack_every
    table = ["", f"{'figure':<34} {'median':>12} {'spread':>8} {'target':>10}"]
    for k in FIGURES:
        if k not in results:
            continue
        t = TARGETS.get(k)
        ok = ""
        if t is not None:
            good = results[k] >= t[1] if t[0] == ">=" else results[k] <= t[1]
            ok = f"{t[0]}{t[1]:g} {'ok' if good else 'MISS'}"
        table.append(f"{k:<34} {results[k]:>12,.3f} {results.get(k + '_spread', 0):>8.3f} "
                     f"{ok:>10}")
    write_results(a.out, results, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
