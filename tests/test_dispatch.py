"""Several workers: the I/O-core design and the RSS design end to end (issue #7).

This machine has two CPUs, so the tests map several lcores onto them with EAL
``--lcores`` (the datapath lcores time-share a CPU: slow, but every counter
must still be exact).  Ports are pcap vdevs with one tx pcap per tx queue (a
queue per worker), so the tests see which worker sent what.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from scapy.all import IP, UDP, Ether, Raw  # type: ignore[import-untyped]

from sluice import testing
from sluice.telemetry import Telemetry, TelemetryError
from sluice.testing import (
    Sluice,
    SluiceConfig,
    read_pcap,
    run_sluice_raw,
    unique_prefix,
    write_pcap,
)

N_FLOWS = 40
N_PKTS = 2400


def frames(n: int = N_PKTS, n_flows: int = N_FLOWS, first: int = 0) -> list[Ether]:
    """UDP frames of @n_flows flows, round robin; the payload holds (flow, sequence)."""
    out = []
    for i in range(first, first + n):
        f = i % n_flows
        out.append(
            Ether(src="02:00:00:00:00:aa", dst="02:00:00:00:00:02")
            / IP(src=f"10.0.{f}.1", dst="10.1.0.2")
            / UDP(sport=1000 + f, dport=5001)
            / Raw(f.to_bytes(2, "big") + (i // n_flows).to_bytes(4, "big"))
        )
    return out


def tag(pkt: Any) -> tuple[int, int]:
    """(flow, sequence) of a frame built by frames()."""
    b = bytes(pkt[Raw].load)
    return int.from_bytes(b[:2], "big"), int.from_bytes(b[2:6], "big")


def run(tmp_path: Path, sluice_bin: Path, opts: list[str], rx: dict[str, list[Ether]],
        n_txq: int, lcores: str, duration: float = 2.0,
        p2_rxq: int = 1) -> tuple[int, str, dict[str, Any] | None, list[list[Any]]]:
    """Port 1 reads the pcaps of @rx (one rx queue each), port 2 writes one pcap per tx queue
    (and has @p2_rxq rx queues, empty pcaps, when more than one: --rx-queues is per port).

    Returns (rc, output, json, frames per tx queue of port 2)."""
    prefix = unique_prefix("d")
    p1 = "net_pcap0"
    for name, fr in rx.items():
        path = tmp_path / f"{prefix}-{name}.pcap"
        write_pcap(path, fr)
        p1 += f",rx_pcap={path}"
    for q in range(n_txq):
        p1 += f",tx_pcap={tmp_path / f'{prefix}-p1-q{q}.pcap'}"
    outs = [tmp_path / f"{prefix}-p2-q{q}.pcap" for q in range(n_txq)]
    p2 = "net_pcap1," + ",".join(f"tx_pcap={o}" for o in outs)
    if p2_rxq > 1:
        empty = tmp_path / f"{prefix}-empty.pcap"
        write_pcap(empty, [])
        p2 += f",rx_pcap={empty}" * p2_rxq
    js_path = tmp_path / f"{prefix}.json"
    args = ["-p", p1, "-p", p2, "-F", "in_port=1,actions=output:2", "-d", str(duration),
            "-s", "0", "-q", "-j", str(js_path), "--no-local", *opts,
            "--", "--no-huge", "-m", "512", "--no-pci", f"--file-prefix={prefix}",
            "--lcores", lcores, "--log-level=lib.eal:error"]
    rc, out = run_sluice_raw(sluice_bin, args, timeout=duration + 40, prefix=prefix)
    js = json.loads(js_path.read_text()) if js_path.exists() else None
    return rc, out, js, [read_pcap(o) if o.exists() else [] for o in outs]


def check_exact(out: str, js: dict[str, Any] | None, n: int) -> None:
    """Every packet received once and sent once: counters add up exactly."""
    assert js is not None, out
    assert js["rx"] == n and js["tx"] == n, out
    assert js["pipeline_drops"] == 0 and js["tx_drops"] == 0, out
    assert js["ports"][0]["rx"] == n and js["ports"][1]["tx"] == n, js["ports"]
    assert "check: rx" in out and out.split("check:")[1].splitlines()[0].endswith("OK"), out
    assert sum(w["packets"] for w in js["workers"]) == n, js["workers"]


@pytest.mark.parametrize("sched", ["hrw", "crc32", "ordered"])
def test_io_core_two_workers(tmp_path: Path, sluice_bin: Path, sched: str) -> None:
    """The I/O-core design with two workers, flow-affine schedulers.

    Steps: one I/O lcore and two worker lcores (three lcores on CPU 1); 2,400
        frames of 40 UDP flows enter port 1 and leave port 2; rings hold 4,096
        packets, so nothing can be refused.
    Verify: exact counters (rx = tx = 2,400, no drop, per-worker packets sum up,
        the dispatcher gave each worker what it processed); every frame leaves
        exactly once; each flow leaves by one worker's tx queue, in order; both
        workers got flows.
    """
    rc, out, js, qs = run(tmp_path, sluice_bin,
                          ["-w", "2", "--dispatch", "io", "--scheduler", sched,
                           "--worker-ring", "4096"],
                          {"in": frames()}, 2, "0@0,1@1,2@1,3@1")
    assert rc == 0, out
    check_exact(out, js, N_PKTS)
    assert js is not None
    assert js["dispatch"] == "io" and js["scheduler"] == sched
    for w in js["workers"]:
        assert w["dispatched"] == w["packets"] and w["ring_full"] == 0, js["workers"]
    seen = sorted(tag(p) for q in qs for p in q)
    assert seen == sorted(tag(p) for p in frames()), "every frame exactly once"
    where: dict[int, set[int]] = defaultdict(set)
    for qi, q in enumerate(qs):
        last: dict[int, int] = {}
        for p in q:
            f, s = tag(p)
            where[f].add(qi)
            assert s > last.get(f, -1), f"flow {f} reordered in queue {qi}"
            last[f] = s
    assert all(len(v) == 1 for v in where.values()), "a flow stayed on one worker"
    assert all(len(q) > 0 for q in qs), "both workers got flows"


@pytest.mark.parametrize("sched", ["rr", "adaptive"])
def test_io_core_counters_exact(tmp_path: Path, sluice_bin: Path, sched: str) -> None:
    """Schedulers that may split flows still lose and duplicate nothing.

    Steps: as above with rr (whole bursts in turn) and adaptive.
    Verify: exact counters; the frames leaving port 2 are exactly those that
        entered.
    """
    rc, out, js, qs = run(tmp_path, sluice_bin,
                          ["-w", "2", "--dispatch", "io", "--scheduler", sched,
                           "--worker-ring", "4096"],
                          {"in": frames()}, 2, "0@0,1@1,2@1,3@1")
    assert rc == 0, out
    check_exact(out, js, N_PKTS)
    assert sorted(tag(p) for q in qs for p in q) == sorted(tag(p) for p in frames())


def test_rss_two_workers(tmp_path: Path, sluice_bin: Path) -> None:
    """The RSS design: each worker polls its own rx queue of every port.

    Steps: port 1 has two rx queues (two pcaps, 1,200 frames each), two
        workers on two lcores; each transmits on its own tx queue of port 2.
    Verify: exact counters; worker i's tx queue carries exactly the frames of
        rx queue i, in order (per-lcore counters summed by the control thread).
    """
    a = frames(1200, 20, 0)
    b = frames(1200, 20, 1200)
    rc, out, js, qs = run(tmp_path, sluice_bin, ["-w", "2"], {"a": a, "b": b}, 2,
                          "0@0,1@1,2@1")
    assert rc == 0, out
    check_exact(out, js, 2400)
    assert js is not None and js["dispatch"] == "rss"
    assert [tag(p) for p in qs[0]] == [tag(p) for p in a]
    assert [tag(p) for p in qs[1]] == [tag(p) for p in b]
    assert [w["packets"] for w in js["workers"]] == [1200, 1200]


def test_rx_queues_one_worker_polls_all(tmp_path: Path, sluice_bin: Path) -> None:
    """--rx-queues: one worker polls every rx queue of a port.

    Steps: port 1 has three rx queues (three pcaps of 800 frames), one worker,
        --rx-queues 3.
    Verify: exact counters (all 2,400 frames, not only queue 0's); every frame
        leaves once; each queue's frames leave in their order.
    """
    parts = [frames(800, 10, 800 * k) for k in range(3)]
    rc, out, js, qs = run(tmp_path, sluice_bin, ["--rx-queues", "3"],
                          {f"q{k}": parts[k] for k in range(3)}, 1, "0@0,1@1", p2_rxq=3)
    assert rc == 0, out
    check_exact(out, js, 2400)
    got = [tag(p) for p in qs[0]]
    assert sorted(got) == sorted(tag(p) for part in parts for p in part)
    for part in parts:
        mine = {tag(p) for p in part}
        assert [t for t in got if t in mine] == [tag(p) for p in part], "queue order kept"


def test_rx_queues_shared_out_over_workers(tmp_path: Path, sluice_bin: Path) -> None:
    """--rx-queues with RSS: worker i polls queues i, i + workers, ...

    Steps: port 1 has four rx queues (pcaps a, b, c, d of 600 frames), two
        workers, --rx-queues 4.
    Verify: exact counters; worker 0's tx queue carries exactly a and c, worker
        1's exactly b and d.
    """
    parts = [frames(600, 10, 600 * k) for k in range(4)]
    rc, out, js, qs = run(tmp_path, sluice_bin, ["-w", "2", "--rx-queues", "4"],
                          {f"q{k}": parts[k] for k in range(4)}, 2, "0@0,1@1,2@1", p2_rxq=4)
    assert rc == 0, out
    check_exact(out, js, 2400)
    assert js is not None
    for w in (0, 1):
        want = sorted(tag(p) for p in parts[w] + parts[w + 2])
        assert sorted(tag(p) for p in qs[w]) == want, f"worker {w}"
    assert [w["packets"] for w in js["workers"]] == [1200, 1200]


def test_rx_queues_io_core_polls_all(tmp_path: Path, sluice_bin: Path) -> None:
    """--rx-queues with the I/O core: it polls every rx queue.

    Steps: port 1 has two rx queues (1,200 frames each), an I/O core and two
        workers (hrw), --rx-queues 2.
    Verify: exact counters; the frames leaving port 2 are exactly those that
        entered both queues.
    """
    a, b = frames(1200, 20, 0), frames(1200, 20, 1200)
    rc, out, js, qs = run(tmp_path, sluice_bin,
                          ["-w", "2", "--dispatch", "io", "--scheduler", "hrw",
                           "--worker-ring", "4096", "--rx-queues", "2"],
                          {"a": a, "b": b}, 2, "0@0,1@1,2@1,3@1", p2_rxq=2)
    assert rc == 0, out
    check_exact(out, js, 2400)
    assert sorted(tag(p) for q in qs for p in q) == sorted(tag(p) for p in a + b)


@pytest.mark.parametrize(
    "opts, message",
    [
        (["-w", "3"], "--workers 3 needs 3 datapath lcores"),
        (["-w", "2", "--dispatch", "io"], "--workers 2 with --dispatch io needs 3"),
        (["--dispatch", "io", "--scheduler", "wrr"], "unknown scheduler 'wrr'"),
        (["--dispatch", "io", "--sched-threshold", "1.5"], "--sched-threshold: invalid value"),
        (["--dispatch", "io", "--sched-threshold", "-0.1"], "--sched-threshold: invalid value"),
        (["--scheduler", "hrw"], "--scheduler applies to the I/O core"),
        (["--dispatch", "foo"], "--dispatch: invalid value 'foo'"),
        (["--dispatch", "io", "--worker-ring", "1000"], "power of two"),
        (["-w", "2", "--rx-queues", "1"], "--rx-queues 1: fewer than the 2 workers"),
        (["--rx-queues", "0"], "--rx-queues: invalid value '0'"),
        (["--rx-queues", "65"], "--rx-queues: invalid value '65'"),
        (["--rx-queues", "1.5"], "--rx-queues: invalid value '1.5'"),
    ],
)
def test_dispatch_config_errors(sluice_bin: Path, opts: list[str], message: str) -> None:
    """Impossible configurations are refused with exit code 2, naming the value.

    Steps: start with @opts and two lcores.
    Verify: exit code 2 and the message.
    """
    prefix = unique_prefix("e")
    rc, out = run_sluice_raw(
        sluice_bin,
        ["-p", "net_null0,no-rx=1", "-d", "0.1", *opts, "--", "--no-huge", "-m", "256",
         "--no-pci", f"--file-prefix={prefix}", "-l", "0,1", "--log-level=lib.eal:error"],
        prefix=prefix,
    )
    assert rc == 2, out
    assert message in out, out


def test_workers_telemetry_and_runtime_scheduler(sluice_bin: Path, tmp_path: Path) -> None:
    """Per-worker telemetry and a scheduler change while traffic flows.

    Steps: I/O-core dispatch, two workers, hrw, net_null traffic (endless) into
        port 1, forwarded to port 2; read /sluice/workers; switch to ordered with
        threshold 0.5 by ``sluicectl dispatch``; try a bad scheduler and a bad
        threshold; stop the switch.
    Verify: two workers with ring and dispatch counters; the change shows in
        /sluice/dispatch and in the final JSON; bad values are refused naming the
        value (sluicectl exit 1); final counters balance, dispatch-full drops equal
        the workers' ring_full sum.
    """
    cfg = SluiceConfig(ports=["net_null0,size=64", "net_null1,no-rx=1"],
                       flows=["in_port=1,actions=output:2"], name=testing.unique("dp"),
                       lcores="0@0,1@1,2@1,3@1",
                       extra=["-w", "2", "--dispatch", "io", "--scheduler", "hrw"])
    sw = Sluice(cfg, binary=sluice_bin, workdir=str(tmp_path))
    try:
        sw.wait_output(r"sluice: name ", timeout=30)
        tel = Telemetry(file_prefix=sw.prefix, connect_timeout=20)
        testing.wait_until(lambda: tel.workers()["io_rx"] > 0, 30, "traffic at the I/O core")
        w = tel.workers()
        assert w["workers"] == 2 and w["dispatch"] == "io" and w["scheduler"] == "hrw"
        assert w["threshold_pct"] == 25
        for k in ("0", "1"):
            assert w[k]["ring_size"] == 1024 and 0 <= w[k]["ring_used"] <= 1024
            assert {"packets", "dispatched", "ring_full", "adjust_from"} <= set(w[k])
        # Pipeline latency (from the I/O core's receive) is sampled for every worker packet.
        testing.wait_until(lambda: tel.call("/sluice/latency")["pipeline"]["count"] > 0, 30,
                           "latency samples")
        lat = tel.call("/sluice/latency")["pipeline"]
        assert 0 < lat["p50_ns"] <= lat["p99_ns"] and lat["max_ns"] > 0
        r = sw.sluicectl("dispatch", "ordered", "0.5")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "ordered" in r.stdout
        d = tel.dispatch()
        assert d["scheduler"] == "ordered" and d["threshold_pct"] == 50
        r = sw.sluicectl("dispatch", "bogus")
        assert r.returncode == 1 and "unknown scheduler 'bogus'" in r.stderr, r.stderr
        r = sw.sluicectl("dispatch", "1.5")
        assert r.returncode == 2 and "outside 0..1" in r.stderr, r.stderr
        with pytest.raises(TelemetryError, match="outside 0..1"):
            tel.dispatch(threshold=2)
        r = sw.sluicectl("workers")
        assert r.returncode == 0 and "ring_full" in r.stdout, r.stdout + r.stderr
        tel.close()
    finally:
        rc = sw.stop()
    assert rc == 0, sw.output
    js = json.loads(Path(sw.json_path).read_text())
    assert js["scheduler"] == "ordered" and js["dispatch"] == "io"
    assert js["rx"] + js["copies"] == js["tx"] + js["tx_drops"] + js["pipeline_drops"], js
    assert js["drops"]["dispatch-full"] == sum(w["ring_full"] for w in js["workers"])
    # Every packet the I/O core received was given to a worker's out-buffer.
    assert js["rx"] == sum(w["dispatched"] for w in js["workers"])


def tx_order_violations(qs: list[list[Any]]) -> int:
    """Frames sent (pcap timestamp) before an earlier frame of their flow, across queues."""
    by_flow: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for q in qs:
        for p in q:
            f, s = tag(p)
            by_flow[f].append((s, float(p.time)))
    bad = 0
    for pkts in by_flow.values():
        pkts.sort()
        latest = float("-inf")
        for _, t in pkts:
            if t < latest:
                bad += 1
            latest = max(latest, t)
    return bad


@pytest.mark.parametrize("sched", ["ordered", "hrw"])
def test_io_core_overload_exact(tmp_path: Path, sluice_bin: Path, sched: str) -> None:
    """Overloaded workers: refused packets are counted exactly, order is kept.

    Steps: 2,400 frames of 40 flows arrive at once; worker rings of 64 slots and a
        threshold of 0.1, so the rings overflow (pcap tx is slow: the workers are the
        bottleneck).  Both rings fill together here, so the ordered scheduler finds
        nowhere to move a flow; its moves are exercised by test_dispatch.c and
        fuzz_dispatch, which check the same property with moves.
    Verify: every frame is sent or counted as a dispatch-full drop, and the drops
        equal the workers' ring_full; across both tx queues no frame of a flow
        leaves (pcap timestamp) before an earlier frame of the same flow.
    """
    rc, out, js, qs = run(tmp_path, sluice_bin,
                          ["-w", "2", "--dispatch", "io", "--scheduler", sched,
                           "--worker-ring", "64", "--sched-threshold", "0.1"],
                          {"in": frames()}, 2, "0@0,1@1,2@1,3@1")
    assert rc == 0, out
    assert js is not None, out
    drops = js["drops"]["dispatch-full"]
    assert js["rx"] == N_PKTS and js["tx"] + drops == N_PKTS, out
    assert js["pipeline_drops"] == drops and js["tx_drops"] == 0, out
    assert drops == sum(w["ring_full"] for w in js["workers"]), js["workers"]
    assert sum(len(q) for q in qs) == js["tx"]
    assert tx_order_violations(qs) == 0


def test_io_core_two_ports_both_ways(tmp_path: Path, sluice_bin: Path) -> None:
    """Worker rings carry packets of several input ports (each port's run is its own burst).

    Steps: I/O-core design, two workers (hrw); port 1 receives 1,200 frames and
        forwards them to port 2, port 2 receives 1,200 other frames and forwards them
        to port 1, at the same time; each port has one tx pcap per worker.
    Verify: exact counters per port; each port sends exactly the frames the other
        received, each flow in order within a tx queue.
    """
    prefix = unique_prefix("b")
    a = frames(1200, 20, 0)
    b = frames(1200, 20, 5000)
    pa, pb = tmp_path / f"{prefix}-a.pcap", tmp_path / f"{prefix}-b.pcap"
    write_pcap(pa, a)
    write_pcap(pb, b)
    outs = {p: [tmp_path / f"{prefix}-p{p}-q{q}.pcap" for q in range(2)] for p in (1, 2)}
    devs = [f"net_pcap0,rx_pcap={pa}," + ",".join(f"tx_pcap={o}" for o in outs[1]),
            f"net_pcap1,rx_pcap={pb}," + ",".join(f"tx_pcap={o}" for o in outs[2])]
    js_path = tmp_path / f"{prefix}.json"
    args = ["-p", devs[0], "-p", devs[1], "-F", "in_port=1,actions=output:2",
            "-F", "in_port=2,actions=output:1", "-d", "2", "-s", "0", "-q", "-j", str(js_path),
            "-w", "2", "--dispatch", "io", "--scheduler", "hrw", "--worker-ring", "4096",
            "--no-local", "--", "--no-huge", "-m", "512", "--no-pci", f"--file-prefix={prefix}",
            "--lcores", "0@0,1@1,2@1,3@1", "--log-level=lib.eal:error"]
    rc, out = run_sluice_raw(sluice_bin, args, timeout=45, prefix=prefix)
    assert rc == 0, out
    js = json.loads(js_path.read_text())
    assert js["rx"] == 2400 and js["tx"] == 2400 and js["pipeline_drops"] == 0, out
    assert [(p["rx"], p["tx"]) for p in js["ports"]] == [(1200, 1200), (1200, 1200)], js["ports"]
    q1 = [read_pcap(o) for o in outs[1]]
    q2 = [read_pcap(o) for o in outs[2]]
    assert sorted(tag(p) for q in q1 for p in q) == sorted(tag(p) for p in b)
    assert sorted(tag(p) for q in q2 for p in q) == sorted(tag(p) for p in a)
    for q in q1 + q2:
        last: dict[int, int] = {}
        for p in q:
            f, s = tag(p)
            assert s > last.get(f, -1), f"flow {f} reordered"
            last[f] = s
