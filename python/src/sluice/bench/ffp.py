"""Fast forwarding path benchmark (issue #6; seed 000, section 5): composite pipeline
(pipeline + FFP) vs pipeline only, in the seed's three scenarios.

Scenarios (the seed's three-stage model; table sizes below):
  server  Ethernet mask (dl_dst, dl_type; 272 entries) -> IPv6 5-tuple ACL mask
          (ipv6_src, ipv6_dst, udp_src, udp_dst; 2,001 entries, 200 low-latency)
          -> FIB lpm on ipv6_dst (10,001 prefixes)
  video   Ethernet mask -> SEADP table mask on raw fields over IPv6 next header 253
          (raw(l4,0,32) content id, raw(l4,32,16) QoS class, raw(l4,48,16) channel;
          2,001 entries, 200 low-latency) -> FIB lpm on ipv6_dst (10,001 prefixes)
  iov     Ethernet mask (dl_type 0x88DC; 272 entries) -> WSM table mask on raw fields
          over L3 (raw(l3,0,8) WSMP version, raw(l3,8,16) PSID; 65 entries) -> exact
          dl_dst (1,024 entries)
Low-latency flows hit only low-latency entries (Ethernet and FIB entries serve both
classes and are marked; ACL/SEADP/WSM entries of the low-latency service are marked);
normal flows hit a normal stage-2 entry.  A flow's frames share one destination MAC (one of
256 stations, drawn per flow), as frames of one flow behind a router do.

Contenders, interleaved round by round: ``pipeline`` (--no-ffp --no-cache --no-flow-cache:
the seed's plain pipeline), ``composite`` (FFP on, --no-cache, the cost model deciding, path
records, i.e. the flow cache, on), and at 64 B pure low-latency, for reference,
``pipeline_dcache`` (--no-ffp --no-flow-cache with Sluice's decision cache) and
``composite_tables`` (--no-cache --no-flow-cache: the seed's per-table LUTs alone, figures
``*_tables_only``).
Traffic: pcap files replayed by net_pcap (infinite_rx) into net_null, one forwarding lcore.
Throughput: median Tx rate (the forwarding core is saturated: the maximum rate, nothing is
lost inside the switch). Latency: the switch's own per-class histograms (/sluice/ffp):
the time a burst spends in the pipeline, recorded once per packet of its class.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from sluice.bench import arg_parser, write_results
from sluice.telemetry import Telemetry, runtime_dir
from sluice.testing import REPO, sluice_binary

ROOT = str(REPO)
SLUICE = str(sluice_binary())  # $SLUICE_BIN, else build/app/sluice
DIFF = os.path.join(ROOT, "build", "src", "pipeline", "test_pipeline_diff")
SEED = 6
N_FLOWS = 512            # distinct flows per class in the traffic
N_FRAMES = 4096          # frames per pcap (replayed forever)
SIZES = (64, 256, 1024, 1518)
SHARES = (0, 20, 50, 80, 100)
SCENARIOS = ("server", "video", "iov")
N_MACS = 256
N_ACL = 2000
N_LL_ACL = 200
N_FIB = 10000
N_WSM = 64
N_EXACT_MACS = 1024
OUT_PORT = 2


def mac(i: int) -> str:
    return f"02:00:00:00:{i >> 8 & 0xff:02x}:{i & 0xff:02x}"


def mac_bytes(i: int) -> bytes:
    return bytes([2, 0, 0, 0, i >> 8 & 0xFF, i & 0xFF])


def v6(prefix16: int, *words: int) -> bytes:
    """An IPv6 address 2001:db8:PREFIX:w3:w4:... (missing words zero)."""
    w = [0x2001, 0x0DB8, prefix16, *words]
    w += [0] * (8 - len(w))
    return struct.pack("!8H", *w)


def v6s(b: bytes) -> str:
    return ":".join(f"{x:x}" for x in struct.unpack("!8H", b))


class Scenario:
    """Rules and flows of one scenario (deterministic for a seed)."""

    def __init__(self, name: str) -> None:
        self.name = name
        rng = random.Random(f"{SEED}-{name}")
        self.lines: list[str] = []
        #: Flow descriptors per class: dicts of header values.
        self.flows: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
        ethertype = 0x88DC if name == "iov" else 0x86DD
        stage3 = "exact" if name == "iov" else "lpm"
        self.lines += [
            f"# FFP benchmark, scenario {name} (python/src/sluice/bench/ffp.py)",
            "table=0,kind=mask,fields=dl_dst+dl_type,name=ethernet",
        ]
        if name == "server":
            self.lines.append("table=1,kind=mask,fields=ipv6_src+ipv6_dst+udp_src+udp_dst,name=acl")
        elif name == "video":
            self.lines.append("table=1,kind=mask,fields=raw(l4,0,32)+raw(l4,32,16)+raw(l4,48,16),"
                              "name=seadp")
        else:
            self.lines.append("table=1,kind=mask,fields=raw(l3,0,8)+raw(l3,8,16),name=wsm")
        if stage3 == "lpm":
            self.lines.append("table=2,kind=lpm,fields=ipv6_dst,name=fib")
        else:
            self.lines.append("table=2,kind=exact,fields=dl_dst,name=fib")
        # Stage 1: one entry per station (shared by both classes: marked), masked groups.
        for i in range(N_MACS):
            self.lines.append(f"table=0,priority=200,dl_dst={mac(i)},dl_type={ethertype:#06x},"
                              f"low_latency actions=goto_table:1")
        for g in range(16):
            self.lines.append(f"table=0,priority=100,dl_dst=02:00:00:01:{g:02x}:00/"
                              f"ff:ff:ff:ff:ff:00,dl_type={ethertype:#06x} actions=goto_table:1")
        # Stage 3.
        self.fib: list[bytes] = []
        if stage3 == "lpm":
            for i in range(N_FIB):
                plen = rng.choice((48, 56, 64))
                addr = v6(0x4000 + i, rng.randrange(65536), rng.randrange(65536))
                a = bytearray(addr)
                for bit in range(plen, 128):
                    a[bit // 8] &= ~(0x80 >> (bit % 8)) & 0xFF
                self.fib.append(bytes(a))
                self.lines.append(f"table=2,ipv6,ipv6_dst={v6s(bytes(a))}/{plen},low_latency "
                                  f"actions=output:{OUT_PORT}")
            self.lines.append(f"table=2,ipv6,ipv6_dst=::/0,low_latency actions=output:{OUT_PORT}")
        else:
            for i in range(N_EXACT_MACS):
                self.lines.append(f"table=2,dl_dst={mac(i)},low_latency actions=output:{OUT_PORT}")
        # Stage 2 and the flows.
        getattr(self, f"_stage2_{name}")(rng)

    def _stage2_server(self, rng: random.Random) -> None:
        # Low-latency service: specific /64 pairs, udp_dst 5004 (RTP), highest priorities.
        for i in range(N_LL_ACL):
            src = v6(0x0001, i, 0)
            dst = self.fib[rng.randrange(len(self.fib))]
            self.lines.append(f"table=1,priority={30000 + i},udp6,ipv6_src={v6s(src)}/64,"
                              f"ipv6_dst={v6s(dst)}/64,udp_dst=5004,low_latency "
                              "actions=goto_table:2")
            for _ in range(N_FLOWS // N_LL_ACL + 1):
                self.flows[True].append({"src": src[:8] + rng.randbytes(8), "dst": dst[:8] +
                                         rng.randbytes(8), "sport": rng.randrange(1024, 65535),
                                         "dport": 5004})
        # Normal ACL: many masks (prefix lengths x port wildcards), lower priorities.
        normal: list[tuple[bytes, bytes]] = []
        for i in range(N_ACL - N_LL_ACL):
            slen = rng.choice((48, 56, 64, 80, 96, 128))
            dlen = rng.choice((48, 56, 64))
            src = v6(0x0002, rng.randrange(4096), rng.randrange(65536), rng.randrange(65536))
            dst = self.fib[rng.randrange(len(self.fib))]
            port = rng.choice(("", ",udp_dst=53", ",udp_dst=80", ",udp_src=123"))
            self.lines.append(f"table=1,priority={1000 + i},udp6,ipv6_src={v6s(src)}/{slen},"
                              f"ipv6_dst={v6s(dst)}/{dlen}{port} actions=goto_table:2")
            if slen == 128 and port == "":
                normal.append((src, dst))
        self.lines.append("table=1,priority=1,udp6 actions=goto_table:2")
        for k in range(N_FLOWS):
            src, dst = normal[k % len(normal)]
            self.flows[False].append({"src": src, "dst": dst[:8] + rng.randbytes(8),
                                      "sport": rng.randrange(1024, 65535),
                                      "dport": rng.randrange(1024, 65535)})

    def _stage2_video(self, rng: random.Random) -> None:
        # SEADP: content id (32), QoS class (16), channel (16) right after the IPv6 header.
        for i in range(N_LL_ACL):
            cid = 0x10000000 | i << 8
            self.lines.append(f"table=1,priority={30000 + i},ipv6,nw_proto=253,"
                              f"raw(l4,0,32)={cid:#x}/0xffffff00,raw(l4,32,16)=0x0001,"
                              f"low_latency actions=goto_table:2")
            for _ in range(N_FLOWS // N_LL_ACL + 1):
                self.flows[True].append({"dst": self.fib[rng.randrange(len(self.fib))][:8]
                                         + rng.randbytes(8), "cid": cid | rng.randrange(256),
                                         "qos": 1, "chan": rng.randrange(65536)})
        normal: list[tuple[int, int]] = []
        for i in range(N_ACL - N_LL_ACL):
            cid = 0x20000000 | rng.randrange(1 << 24) << 4
            cmask = rng.choice((0xFFFFFFF0, 0xFFFFFF00, 0xFFFF0000, 0xFFFFFFFF))
            qos = rng.choice((2, 3, 4))
            chan = rng.choice(("", f",raw(l4,48,16)={rng.randrange(65536):#x}",
                               ",raw(l4,48,16)=0x0100/0xff00"))
            self.lines.append(f"table=1,priority={1000 + i},ipv6,nw_proto=253,"
                              f"raw(l4,0,32)={cid & cmask:#x}/{cmask:#x},raw(l4,32,16)={qos:#x}"
                              f"{chan} actions=goto_table:2")
            if chan == "":
                normal.append((cid & cmask, qos))
        self.lines.append("table=1,priority=1,ipv6,nw_proto=253 actions=goto_table:2")
        for k in range(N_FLOWS):
            cid, qos = normal[k % len(normal)]
            self.flows[False].append({"dst": self.fib[rng.randrange(len(self.fib))][:8]
                                      + rng.randbytes(8), "cid": cid, "qos": qos,
                                      "chan": rng.randrange(65536)})

    def _stage2_iov(self, rng: random.Random) -> None:
        # WSM: WSMP version (8 bits), PSID (16 bits) at the start of L3.
        for i in range(N_WSM):
            psid = 0x2000 + i
            ll = i < N_WSM // 4  # safety services
            self.lines.append(f"table=1,priority={100 + i},dl_type=0x88dc,raw(l3,0,8)=0x03,"
                              f"raw(l3,8,16)={psid:#x}{',low_latency' if ll else ''} "
                              "actions=goto_table:2")
            # Stations the Ethernet stage knows (the exact stage holds 1,024, these among them).
            for _ in range(N_FLOWS // (N_WSM // 2)):
                self.flows[ll].append({"psid": psid, "dmac": rng.randrange(N_MACS)})
        self.lines.append("table=1,priority=1,dl_type=0x88dc actions=goto_table:2")

    def rules(self) -> str:
        return "\n".join(self.lines) + "\n"

    def frame(self, fl: dict[str, Any], size: int, rng: random.Random) -> bytes:
        if self.name == "iov":
            dmac = fl["dmac"]
            eth = mac_bytes(dmac) + bytes.fromhex("020000ff0001") + b"\x88\xdc"
            body = struct.pack("!BHB", 3, fl["psid"], 0) + bytes(8)
        else:
            # One station per flow, drawn on the flow's first frame (a flow's frames share
            # their Ethernet header, as they do behind a router).
            dmac = fl.setdefault("dmac", rng.randrange(N_MACS))
            eth = mac_bytes(dmac) + bytes.fromhex("020000ff0001") + b"\x86\xdd"
            if self.name == "server":
                l4 = struct.pack("!HHHH", fl["sport"], fl["dport"], 0, 0)
                nh, src = 17, fl["src"]
            else:
                l4 = struct.pack("!IHH", fl["cid"], fl["qos"], fl["chan"]) + bytes(8)
                nh, src = 253, v6(0x0003, 1)
            plen = max(len(l4), size - 4 - 14 - 40)
            l4 = (l4 + bytes(plen))[:plen]
            if nh == 17:
                l4 = l4[:4] + struct.pack("!H", plen) + l4[6:]
            body = struct.pack("!IHBB", 0x60000000, plen, nh, 64) + src + fl["dst"] + l4
        f = eth + body
        f = f + bytes(max(0, size - 4 - len(f)))
        # The FCS is not in the capture.  Never cut into the headers: an IPv6 + UDP frame
        # needs 62 bytes, and a header whose lengths run past the frame is not believed (its
        # L3/L4 fields read as absent, so the ACL missed every "64 B" frame).
        return f[:max(size - 4, len(eth) + len(body))]


def write_pcap(path: str, frames: Sequence[bytes]) -> None:
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for fr in frames:
            f.write(struct.pack("<IIII", 0, 0, len(fr), len(fr)))
            f.write(fr)


def traffic(sc: Scenario, share: int, size: int, path: str) -> None:
    rng = random.Random(f"{SEED}-{sc.name}-{share}-{size}")
    frames = []
    for _ in range(N_FRAMES):
        ll = rng.randrange(100) < share
        pool = sc.flows[ll] or sc.flows[not ll]
        frames.append(sc.frame(pool[rng.randrange(len(pool))], size, rng))
    write_pcap(path, frames)


def run_switch(pcap: str, rules: str, extra: list[str], warmup: float, measure: float,
               tag: str) -> dict[str, float]:
    """Run Sluice on @pcap; Tx rate over the measured window and /sluice/ffp at its end."""
    name = f"slffp{os.getpid()}{tag}"
    cmd = [SLUICE, "-q", "--name", name, "-p", f"net_pcap0,rx_pcap={pcap},infinite_rx=1",
           "-p", "net_null0,no-rx=1", "-f", rules, *extra, "--", "--no-huge", "-m", "512",
           "--no-pci", "-l", "0,1", "--log-level=lib.eal:error"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        tel = Telemetry(file_prefix=name, connect_timeout=30)
        deadline = time.monotonic() + 30
        while True:  # the /sluice commands exist once the switch has started
            try:
                tel.ports()
                break
            except Exception:
                if time.monotonic() > deadline or p.poll() is not None:
                    raise
                time.sleep(0.1)
        time.sleep(warmup)
        p0 = tel.ports()
        t0, tx0, rx0 = time.monotonic(), p0[OUT_PORT]["tx_packets"], p0[1]["rx_packets"]
        time.sleep(measure)
        p1 = tel.ports()
        t1, tx1, rx1 = time.monotonic(), p1[OUT_PORT]["tx_packets"], p1[1]["rx_packets"]
        ffp = tel.call("/sluice/ffp")
        dp = tel.datapath()
        tel.close()
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            out, _ = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        shutil.rmtree(runtime_dir(name), ignore_errors=True)
    if p.returncode not in (0, -signal.SIGTERM):
        raise RuntimeError(f"sluice failed ({p.returncode}):\n{out[-2000:]}")
    # Every frame of the traffic is meant to be forwarded: the share shows a rule set or
    # traffic that drops (a scenario bug, not a speed).
    r: dict[str, float] = {"pps": (tx1 - tx0) / (t1 - t0),
                           "forwarded_share": (tx1 - tx0) / max(1, rx1 - rx0)}
    for k, v in ffp.items():
        if isinstance(v, (int, float)):
            r[k] = float(v)
        elif isinstance(v, dict) and k.startswith("table_"):
            for kk, vv in v.items():
                r[f"{k}_{kk}"] = float(vv)
        elif isinstance(v, dict) and k == "path":
            for kk, vv in v.items():
                r[f"path_{kk}"] = float(vv)
    dpd: dict[str, Any] = dict(dp)
    for k in ("busy_cycles", "packets"):
        if k in dpd:
            r[f"dp_{k}"] = float(dpd[k])
    return r


def med(runs: list[dict[str, float]], key: str) -> float:
    vals = [r[key] for r in runs if key in r]
    return statistics.median(vals) if vals else 0.0


def diff_run(n_packets: int) -> dict[str, int]:
    """The long differential run (src/pipeline/test_pipeline_diff)."""
    r = subprocess.run([DIFF, str(n_packets), "6", "12"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=3600)
    m = re.search(r"differential: (\d+) packets .*?, (\d+) updates, (\d+) mismatches", r.stdout)
    if m is None:
        raise RuntimeError(f"test_pipeline_diff output not understood:\n{r.stdout[-2000:]}")
    return {"diff_packets": int(m.group(1)), "diff_updates": int(m.group(2)),
            "diff_mismatches": int(m.group(3)), "diff_rc": r.returncode}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = arg_parser("ffp", __doc__)
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default 2)")
    ap.add_argument("--warmup", type=float, default=0.5, help="seconds before measuring")
    ap.add_argument("--measure", type=float, default=1.5, help="seconds measured per run")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--shares", default=",".join(map(str, SHARES)))
    ap.add_argument("--diff-packets", type=int, default=10_000_000,
                    help="packets of the long differential run (0: skip)")
    ap.add_argument("--write-files", metavar="DIR",
                    help="only write each scenario's flow file and 64 B pcaps (LL share 100, 20, "
                         "0 %%) to DIR, for build/bench_ffp")
    ap.add_argument("--report", default=os.path.join(ROOT, "bench", "results", "ffp.md"))
    return ap.parse_args(argv)


def plots(data: dict[str, Any], outdir: str) -> list[str]:
    """PNG plots (matplotlib); returns the file names written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    written = []
    for sc, d in data.items():
        fig, ax = plt.subplots(1, 2, figsize=(10, 4))
        for cont in ("pipeline", "composite"):
            xs = sorted(d["size"])
            ax[0].plot(xs, [d["size"][x][cont]["gbps"] for x in xs], marker="o", label=cont)
            ys = sorted(d["share"])
            ax[1].plot(ys, [d["share"][y][cont]["ll_p50"] for y in ys], marker="o",
                       label=f"{cont} low-latency")
            ax[1].plot(ys, [d["share"][y][cont]["normal_p50"] for y in ys], marker="x",
                       linestyle="--", label=f"{cont} normal")
        ax[0].set_xlabel("frame size (B)")
        ax[0].set_ylabel("throughput (Gbit/s, pure low-latency)")
        ax[0].legend()
        ax[1].set_xlabel("low-latency share (%)")
        ax[1].set_ylabel("p50 processing latency (ns)")
        ax[1].legend(fontsize=7)
        fig.suptitle(f"FFP, scenario {sc}")
        fig.tight_layout()
        name = f"ffp_{sc}.png"
        fig.savefig(os.path.join(outdir, name), dpi=90)
        plt.close(fig)
        written.append(name)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    a = parse_args(argv)
    if a.write_files:
        os.makedirs(a.write_files, exist_ok=True)
        for sc_name in [s for s in a.scenarios.split(",") if s]:
            sc = Scenario(sc_name)
            with open(os.path.join(a.write_files, f"{sc_name}.flows"), "w") as f:
                f.write(sc.rules())
            for share in (100, 20, 0):
                traffic(sc, share, 64, os.path.join(a.write_files, f"{sc_name}-{share}.pcap"))
        print(f"wrote {a.write_files}")
        return 0
    if not os.path.exists(SLUICE) or not os.path.exists(DIFF):
        subprocess.run(["ninja", "-C", os.path.join(ROOT, "build")], check=True)
    scenarios = [s for s in a.scenarios.split(",") if s]
    sizes = [int(x) for x in a.sizes.split(",") if x]
    shares = [int(x) for x in a.shares.split(",") if x]
    contenders = {"pipeline": ["--no-ffp", "--no-cache", "--no-flow-cache"],
                  "composite": ["--no-cache"]}
    results: dict[str, float] = {}
    data: dict[str, Any] = {}
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="slffp-") as tmp:
        for sc_name in scenarios:
            sc = Scenario(sc_name)
            rules = os.path.join(tmp, f"{sc_name}.flows")
            with open(rules, "w") as f:
                f.write(sc.rules())
            pcaps = {}
            for size in sizes:
                pcaps[("size", size)] = os.path.join(tmp, f"{sc_name}-ll-{size}.pcap")
                traffic(sc, 100, size, pcaps[("size", size)])
            for share in shares:
                pcaps[("share", share)] = os.path.join(tmp, f"{sc_name}-mix-{share}.pcap")
                traffic(sc, share, 64, pcaps[("share", share)])
            runs: dict[tuple[str, int, str], list[dict[str, float]]] = {}
            for rnd in range(a.rounds):
                for key, pcap in pcaps.items():
                    for cont, extra in contenders.items():
                        r = run_switch(pcap, rules, extra, a.warmup, a.measure,
                                       f"{sc_name[0]}{key[1]}{cont[0]}")
                        runs.setdefault((key[0], key[1], cont), []).append(r)
                r = run_switch(pcaps[("size", sizes[0])], rules, ["--no-ffp", "--no-flow-cache"],
                               a.warmup, a.measure, f"{sc_name[0]}d")
                runs.setdefault(("dcache", sizes[0], "pipeline_dcache"), []).append(r)
                # The seed's design alone: per-table LUTs, no path records.
                r = run_switch(pcaps[("size", sizes[0])], rules, ["--no-cache", "--no-flow-cache"],
                               a.warmup, a.measure, f"{sc_name[0]}t")
                runs.setdefault(("tables", sizes[0], "composite_tables"), []).append(r)
                print(f"  {sc_name}: round {rnd + 1}/{a.rounds} done", flush=True)
            d: dict[str, Any] = {"size": {}, "share": {}}
            for size in sizes:
                d["size"][size] = {}
                for cont in contenders:
                    rr = runs[("size", size, cont)]
                    pps = med(rr, "pps")
                    d["size"][size][cont] = {
                        "mpps": pps / 1e6, "gbps": pps * (size + 20) * 8 / 1e9,
                        "ll_p50": med(rr, "low_latency_p50_ns"),
                        "ll_p99": med(rr, "low_latency_p99_ns"),
                        "ll_p999": med(rr, "low_latency_p999_ns"),
                        "ll_share": med(rr, "low_latency_packets") / max(
                            1.0, med(rr, "low_latency_packets") + med(rr, "normal_packets")),
                    }
            for share in shares:
                d["share"][share] = {}
                for cont in contenders:
                    rr = runs[("share", share, cont)]
                    d["share"][share][cont] = {
                        "mpps": med(rr, "pps") / 1e6,
                        "ll_p50": med(rr, "low_latency_p50_ns"),
                        "ll_p99": med(rr, "low_latency_p99_ns"),
                        "normal_p50": med(rr, "normal_p50_ns"),
                        "normal_mean": med(rr, "normal_mean_ns"),
                        "normal_p99": med(rr, "normal_p99_ns"),
                    }
            data[sc_name] = d
            s0 = d["size"][sizes[0]]
            p, c = s0["pipeline"], s0["composite"]
            dc = med(runs[("dcache", sizes[0], "pipeline_dcache")], "pps") / 1e6
            tr = runs[("tables", sizes[0], "composite_tables")]
            tb = {"mpps": med(tr, "pps") / 1e6, "ll_p50": med(tr, "low_latency_p50_ns"),
                  "ll_p99": med(tr, "low_latency_p99_ns")}
            if p["ll_p50"] and c["ll_p50"]:
                results[f"{sc_name}_ll_latency_reduction"] = round(1 - c["ll_p50"] / p["ll_p50"], 3)
                results[f"{sc_name}_ll_p99_reduction"] = round(1 - c["ll_p99"] / p["ll_p99"], 3)
            results[f"{sc_name}_ll_throughput_ratio_{sizes[0]}b"] = round(c["mpps"] / p["mpps"], 3)
            fwd = min(med(rr, "forwarded_share") for rr in runs.values())
            results[f"{sc_name}_forwarded_share_min"] = round(fwd, 4)
            if fwd < 0.999:
                print(f"  warning: {sc_name}: a contender forwarded only {fwd:.1%} of what it "
                      "received (its traffic meets a drop)", file=sys.stderr)
            # Load-independent: packets per ns of pipeline time (full 32-packet bursts).
            if p["ll_p50"] and c["ll_p50"]:
                results[f"{sc_name}_ll_pipeline_capacity_ratio_{sizes[0]}b"] = round(
                    p["ll_p50"] / c["ll_p50"], 3)
            results[f"{sc_name}_ll_mpps_{sizes[0]}b_pipeline"] = round(p["mpps"], 3)
            results[f"{sc_name}_ll_mpps_{sizes[0]}b_composite"] = round(c["mpps"], 3)
            results[f"{sc_name}_ll_mpps_{sizes[0]}b_pipeline_dcache"] = round(dc, 3)
            # Per-table LUTs alone (--no-flow-cache): the seed's FFP without Sluice's path records.
            results[f"{sc_name}_ll_mpps_{sizes[0]}b_tables_only"] = round(tb["mpps"], 3)
            results[f"{sc_name}_ll_p50_ns_tables_only"] = tb["ll_p50"]
            if p["ll_p50"] and tb["ll_p50"]:
                results[f"{sc_name}_ll_latency_reduction_tables_only"] = round(
                    1 - tb["ll_p50"] / p["ll_p50"], 3)
            if p["mpps"]:
                results[f"{sc_name}_ll_throughput_ratio_{sizes[0]}b_tables_only"] = round(
                    tb["mpps"] / p["mpps"], 3)
            cr0 = runs[("size", sizes[0], "composite")][-1]
            for k in ("hits", "misses", "inserts", "stale", "evictions"):
                results[f"{sc_name}_path_{k}"] = cr0.get(f"path_{k}", 0.0)
            results[f"{sc_name}_ll_p50_ns_pipeline"] = p["ll_p50"]
            results[f"{sc_name}_ll_p50_ns_composite"] = c["ll_p50"]
            results[f"{sc_name}_ll_p99_ns_pipeline"] = p["ll_p99"]
            results[f"{sc_name}_ll_p99_ns_composite"] = c["ll_p99"]
            results[f"{sc_name}_ll_p999_ns_pipeline"] = p["ll_p999"]
            results[f"{sc_name}_ll_p999_ns_composite"] = c["ll_p999"]
            if 20 in d["share"]:
                m = d["share"][20]
                if m["pipeline"]["normal_p50"]:
                    results[f"{sc_name}_normal_latency_ratio"] = round(
                        m["composite"]["normal_p50"] / m["pipeline"]["normal_p50"], 3)
                if m["pipeline"]["normal_mean"]:
                    results[f"{sc_name}_normal_latency_ratio_mean"] = round(
                        m["composite"]["normal_mean"] / m["pipeline"]["normal_mean"], 3)
            if 0 in d["share"]:
                m = d["share"][0]
                if m["pipeline"]["mpps"]:
                    results[f"{sc_name}_normal_only_throughput_ratio"] = round(
                        m["composite"]["mpps"] / m["pipeline"]["mpps"], 3)
            # Report section.
            lines += [f"## Scenario {sc_name}", "",
                      "Pure low-latency traffic: throughput and processing latency (ns)", "",
                      "| frame B | pipeline Mpps | composite Mpps | ratio | pipeline Gbit/s | "
                      "composite Gbit/s | pipeline p50/p99/p99.9 | composite p50/p99/p99.9 |",
                      "|---:|---:|---:|---:|---:|---:|---|---|"]
            for size in sizes:
                p, c = d["size"][size]["pipeline"], d["size"][size]["composite"]
                lines.append(f"| {size} | {p['mpps']:.3f} | {c['mpps']:.3f} | "
                             f"{c['mpps'] / p['mpps'] if p['mpps'] else 0:.2f} | {p['gbps']:.2f} | "
                             f"{c['gbps']:.2f} | {p['ll_p50']:.0f}/{p['ll_p99']:.0f}/"
                             f"{p['ll_p999']:.0f} | {c['ll_p50']:.0f}/{c['ll_p99']:.0f}/"
                             f"{c['ll_p999']:.0f} |")
            lines += ["", f"Reference: pipeline with the decision cache (--no-ffp "
                          f"--no-flow-cache), "
                          f"{sizes[0]} B pure low-latency: {dc:.3f} Mpps", "",
                      f"Per-table LUTs alone (`--no-flow-cache`, the seed's design), "
                      f"{sizes[0]} B "
                      f"pure low-latency: {tb['mpps']:.3f} Mpps, LL p50 {tb['ll_p50']:.0f} ns "
                      f"(p99 {tb['ll_p99']:.0f}); composite path records (last run): "
                      f"{cr0.get('path_hits', 0):.0f} hits, "
                      f"{cr0.get('path_misses', 0):.0f} misses, "
                      f"{cr0.get('path_inserts', 0):.0f} inserts", "",
                      "Mixed traffic (64 B): p50 (p99) processing latency per class, ns", "",
                      "| LL share % | pipeline LL | composite LL | pipeline normal | "
                      "composite normal | pipeline Mpps | composite Mpps |",
                      "|---:|---:|---:|---:|---:|---:|---:|"]
            for share in shares:
                p, c = d["share"][share]["pipeline"], d["share"][share]["composite"]
                lines.append(f"| {share} | {p['ll_p50']:.0f} ({p['ll_p99']:.0f}) | "
                             f"{c['ll_p50']:.0f} ({c['ll_p99']:.0f}) | {p['normal_p50']:.0f} "
                             f"({p['normal_p99']:.0f}) | {c['normal_p50']:.0f} "
                             f"({c['normal_p99']:.0f}) | {p['mpps']:.3f} | {c['mpps']:.3f} |")
            cr = runs[("size", sizes[0], "composite")][-1]
            luts = sorted({k.split("_")[1] for k in cr if k.startswith("table_")})
            lines += ["", "Composite, per table (last 64 B run): cost model and LUT counters", "",
                      "| table | active | search ns | probe ns | LL entries | LUT entries | hits | "
                      "misses | verifications | evictions |", "|---:|---:|---:|---:|---:|---:|"
                      "---:|---:|---:|---:|"]
            for t in luts:
                def g(k: str) -> float:
                    return cr.get(f"table_{t}_{k}", 0.0)
                lines.append(f"| {t} | {g('active'):.0f} | {g('search_ns'):.0f} | "
                             f"{g('probe_ns'):.0f} | {g('low_latency_entries'):.0f} | "
                             f"{g('entries'):.0f} | {g('hits'):.0f} | {g('misses'):.0f} | "
                             f"{g('verifications'):.0f} | {g('evictions'):.0f} |")
            lines.append("")
        outdir = os.path.dirname(os.path.abspath(a.out))
        os.makedirs(outdir, exist_ok=True)
        if a.diff_packets > 0:
            dr = diff_run(a.diff_packets)
            results.update({k: v for k, v in dr.items() if k != "diff_rc"})
            lines += ["## Long differential run", "",
                      f"`build/src/pipeline/test_pipeline_diff {a.diff_packets} 6 12`: "
                      f"{dr['diff_packets']} packets, {dr['diff_updates']} updates, "
                      f"{dr['diff_mismatches']} mismatches (exit {dr['diff_rc']}).", ""]
        try:
            pngs = plots(data, outdir)
        except ImportError:
            pngs = []
    results["rounds"] = a.rounds
    write_results(a.out, results, ["", *(f"  {k:<44} {results[k]}" for k in sorted(results))])
    header = ["# FFP benchmark (bench/run ffp)", "",
              "Re-run: `bench/run ffp` (options: `bench/run ffp --help`). Pipeline = "
              "`--no-ffp --no-cache --no-flow-cache`; composite = `--no-cache` (FFP on, cost "
              "model, path records (the flow cache) on); tables only = `--no-cache "
              "--no-flow-cache` (the seed's per-table LUTs). Latency = "
              "the switch's per-class histograms (/sluice/ffp): burst time in the pipeline, "
              "once per packet. Medians of the rounds. The Mpps figures are the switch's Tx rate "
              "on a forwarding core shared with whatever else runs (on the 2-core development VM: "
              "other benchmarks and builds), so they move with that load; the latency p50s are "
              "per-burst times and much steadier; `*_pipeline_capacity_ratio_64b` (pipeline p50 / "
              "composite p50 per 32-packet burst) is the throughput ratio of the pipeline stage "
              "alone. Plots: "
              + ", ".join(f"![{p}]({p})" for p in pngs), ""]
    with open(a.report, "w") as f:
        f.write("\n".join(header + lines) + "\n")
    print("\n".join(lines))
    print(f"\nwrote {a.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
