"""sluice-gen and the decomposition study (issue #5): the generator's behaviour, the switch's
pipeline-length tracking, and a short run of the benchmark's sweep (CI smoke: no performance
assertions, only that the report is complete and that every counter adds up)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scapy.all import IP, UDP, Ether, Raw, wrpcap  # type: ignore[import-untyped]

from sluice.testing import REPO, unique_prefix

GEN = REPO / "build" / "app" / "sluice-gen"
SLUICE = REPO / "build" / "app" / "sluice"


def gen(args: list[str], prefix: str | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    p = prefix or unique_prefix("gen")
    cmd = [str(GEN), *args, "--", "-l", "0", "--no-huge", "-m", "256", "--no-pci",
           "--no-telemetry", f"--file-prefix={p}", "--log-level=lib.eal:error"]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(Path("/var/run/dpdk") / p, ignore_errors=True)


def test_gen_usage_errors() -> None:
    """Steps: run sluice-gen with bad options and streams.  Verify: exit code 2 and a message
    naming the offending value."""
    r = gen(["-s", "pps=10"])
    assert r.returncode == 2 and "--tx" in r.stderr
    r = gen(["-t", "net_ring0"])
    assert r.returncode == 2 and "--stream" in r.stderr
    r = gen(["-t", "net_ring0", "-s", "pps=10,size=20"])
    assert r.returncode == 2 and "size=20" in r.stderr
    r = gen(["-t", "net_ring0", "-s", "name=a,pps=1", "-s", "name=a,pps=1"])
    assert r.returncode == 2 and "'a' given twice" in r.stderr
    r = gen(["-t", "net_ring0", "-s", "pps=1", "-d", "0"])
    assert r.returncode == 2 and "--duration" in r.stderr
    r = gen(["-t", "net_ring0", "-s", "pps=1", "--tx-queues", "0"])
    assert r.returncode == 2 and "--tx-queues" in r.stderr and "'0'" in r.stderr


def test_gen_link_timeout_is_a_runtime_error(tmp_path: Path) -> None:
    """Steps: a memif server nobody connects to; a memif client with no server.  Verify:
    exit 1 naming the port (link not up after --link-timeout; the port fails to start)."""
    sock = tmp_path / "none.sock"
    r = gen(["-t", f"net_memif0,role=server,socket={sock},id=0", "-s", "pps=10",
             "--link-timeout", "0.3"])
    assert r.returncode == 1 and "link not up after 0.3 s" in r.stderr and str(sock) in r.stderr
    r = gen(["-t", f"net_memif0,role=client,socket={sock},id=0", "-s", "pps=10"])
    assert r.returncode == 1 and f"port 'net_memif0,role=client,socket={sock}" in r.stderr


def _check_stream_counts(d: dict[str, Any]) -> None:
    fwd = [s for s in d["streams"] if not s["expect_drop"]]
    for s in d["streams"]:
        assert s["lost"] == max(0, s["tx"] - s["rx"])
        assert s["latency_ns"]["count"] == s["rx"]
        assert sum(c for _, c in s["latency_ns"]["histogram"]) == s["rx"]
    t = d["total"]
    assert t["tx"] == sum(s["tx"] for s in fwd) and t["rx"] == sum(s["rx"] for s in fwd)
    assert t["lost"] == max(0, t["tx"] - t["rx"])


def test_gen_loopback_counts_and_latency(tmp_path: Path) -> None:
    """Steps: two streams (one varying 100 destination MACs) and a pcap stream through a
    net_ring loopback port for 0.3 s.  Verify: each stream's frames come back with its own
    signature (rx == tx, nothing foreign, no reordering), latency percentiles are ordered,
    the histogram holds every frame, the pcap frames keep their own length."""
    pcap = tmp_path / "in.pcap"
    wrpcap(str(pcap), [Ether(dst="02:00:00:00:00:09") / IP() / UDP() / Raw(b"x" * 100)] * 3)
    js = tmp_path / "gen.json"
    r = gen(["-t", "net_ring0", "-d", "0.3", "-j", str(js),
             "-s", "name=a,size=128,mbps=50",
             "-s", "name=b,size=64,pps=20000,eth_dst=02:00:00:00:10:00+100",
             "-s", f"name=p,pcap={pcap},pps=1000"])
    assert r.returncode == 0, r.stderr
    d = json.loads(js.read_text())
    _check_stream_counts(d)
    assert d["rx_foreign"] == 0
    by = {s["name"]: s for s in d["streams"]}
    for s in by.values():
        assert s["tx"] > 0 and s["rx"] == s["tx"] and s["reordered"] == 0
        lat = s["latency_ns"]
        assert lat["min"] <= lat["p50"] <= lat["p99"] <= lat["p999"] <= lat["max"]
    # 50 Mb/s of 128-byte frames on the wire is 42,229 frames/s.
    assert abs(by["a"]["offered_pps"] - 50e6 / (148 * 8)) < 1
    assert by["p"]["rx_bytes"] == by["p"]["rx"] * (len(Ether() / IP() / UDP()) + 100 + 4)
    assert "stream" in r.stdout and "total" in r.stdout


def test_gen_several_tx_queues(tmp_path: Path) -> None:
    """Steps: 0.3 s of two streams through a net_ring loopback port with four tx and four rx
    queues (--tx-queues 4 --rx-queues 4: bursts take the tx queues in turn, each ring loops
    back to the rx queue of its number).  Verify: every frame comes back, nothing foreign."""
    js = tmp_path / "gen.json"
    r = gen(["-t", "net_ring0", "-d", "0.3", "-j", str(js), "--tx-queues", "4",
             "--rx-queues", "4", "-s", "name=a,size=128,pps=200000",
             "-s", "name=b,size=256,pps=100000"])
    assert r.returncode == 0, r.stderr
    d = json.loads(js.read_text())
    _check_stream_counts(d)
    assert d["rx_foreign"] == 0
    for s in d["streams"]:
        assert s["tx"] > 10000 and s["rx"] == s["tx"], s
    r = gen(["-t", "net_ring0", "-s", "pps=1", "--tx-queues", "2.5"])
    assert r.returncode == 2 and "--tx-queues '2.5': expected a whole number" in r.stderr


def test_switch_chain_tracking_and_warning(tmp_path: Path) -> None:
    """Steps: Pipeline 3 (tables 0 -> 1|2 -> 3) with traffic through both branches, and
    --chain-warn 3.  Verify: the installed chain is 3, packets traversed 3 (not the 4 tables
    one burst visits), and the warning is logged for both."""
    rules = tmp_path / "p3.flows"
    rules.write_text("table=0,priority=1,ip,nw_dst=10.2.0.0/16 actions=goto_table:1\n"
                     "table=0,priority=1,ip,nw_dst=10.3.0.0/16 actions=goto_table:2\n"
                     "table=1,priority=1 actions=goto_table:3\n"
                     "table=2,priority=1 actions=goto_table:3\n"
                     "table=3,priority=1 actions=output:2\n")
    pcap = tmp_path / "in.pcap"
    wrpcap(str(pcap), [Ether() / IP(dst=f"10.{2 + i % 2}.0.1") / UDP() for i in range(64)])
    js = tmp_path / "sw.json"
    prefix = unique_prefix("chain")
    try:
        r = subprocess.run([str(SLUICE), "--mgmt", "none", "-q", "-d", "1.5", "-j", str(js),
                            "--chain-warn", "3", "-p", f"net_pcap0,rx_pcap={pcap}",
                            "-p", "net_null0,no-rx=1", "-f", str(rules), "--", "--no-huge",
                            "-m", "512", "--no-pci", f"--file-prefix={prefix}", "-l", "0,1",
                            "--log-level=lib.eal:error"],
                           capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(Path("/var/run/dpdk") / prefix, ignore_errors=True)
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads(js.read_text())
    assert d["rx"] == 64 and d["tx"] == 64
    assert d["chain_installed"] == 3 and d["chain_traversed"] == 3
    assert "goto chain of 3 tables (--chain-warn 3)" in r.stderr
    assert "packets traversed a goto chain of 3 tables" in r.stderr
    r2 = subprocess.run([str(SLUICE), "--chain-warn", "0", "-p", "net_null0"],
                        capture_output=True, text=True, timeout=30)
    assert r2.returncode == 2 and "--chain-warn" in r2.stderr


@pytest.mark.skipif(shutil.which("ovs-ofctl") is None, reason="needs ovs-ofctl (groups)")
def test_decomposition_smoke(tmp_path: Path) -> None:
    """Steps: bench/run decomposition --smoke (TC1, TC2 1K, TC3 N=2, TC4-TC6 at two low rates,
    0.3 s trials).  Verify: the report has the seed's tables (average latency, p99, loss per
    rate per case) and a plot; every trial's streams add up; per switch instance, what the
    generator sent is what the switch received and what it transmitted is what the generator
    received (up to frames still in a ring after the drain, normally none); TC4-TC6 traffic
    hits every row; the switch's chain lengths are each case's L;
    the JSON has the decomposition costs 200 / 54 / 53."""
    out = tmp_path / "decomposition.json"
    outdir = tmp_path / "report"
    r = subprocess.run([sys.executable, "-m", "sluice.bench", "decomposition",
                        "--smoke", "--out", str(out), "--outdir", str(outdir)],
                       capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONPATH": str(REPO / "python" / "src")})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads(out.read_text())
    assert (res["tc4_cost"], res["tc5_cost"], res["tc6_cost"]) == (200, 54, 53)
    assert (res["tc4_longest_chain"], res["tc5_longest_chain"], res["tc6_longest_chain"]) == (
        1, 2, 3)
    assert res["gen_ceiling_mpps"] > 0
    md = (outdir / "report.md").read_text()
    cases = ["tc1", "tc2_1k", "tc3_2", "tc4", "tc5", "tc6"]
    for title in ("Avg latency (us), 128-byte", "p99 latency (us), 128-byte",
                  "Loss %, 128-byte"):
        assert f"#### {title}" in md
    assert "| Gb/s | " + " | ".join(cases) + " |" in md
    assert "| 0.05 |" in md and "| 0.10 |" in md
    assert "total cost 200" in md and "total cost 54" in md and "total cost 53" in md
    assert (outdir / "sweep-128.png").stat().st_size > 1000
    sw = json.loads((outdir / "sweep.json").read_text())
    assert len(sw["trials"]) == len(cases) * 2
    for t in sw["trials"]:
        fwd = [s for s in t["streams"] if not s["expect_drop"]]
        assert t["tx"] == sum(s["tx"] for s in fwd) and t["rx"] == sum(s["rx"] for s in fwd)
        assert t["lost"] == t["tx"] - t["rx"]
        for s in t["streams"]:
            assert s["lost"] == max(0, s["tx"] - s["rx"])
            if s["expect_drop"]:
                assert s["rx"] == 0
    # The generator sends into four rx queues of the switch (--queues' default).
    assert res["memif_queues"] == 4
    expect_chain = {"tc1": 1, "tc2_1k": 1, "tc3_2": 2, "tc4": 1, "tc5": 2, "tc6": 3}
    for c in cases:
        chk = sw["checks"][f"{c}_128"]
        assert chk["switch_balanced"]
        # Exact but for frames a descheduled core left in a ring after the 0.5 s drain
        # (normally none; never negative, never more than a ring holds).
        assert chk["in_flight_to_switch"] == chk["gen_sent"] - chk["switch_rx"]
        assert 0 <= chk["in_flight_to_switch"] <= 16384 * res["memif_queues"]
        assert chk["in_flight_from_switch"] == chk["switch_tx"] - chk["gen_received"]
        assert 0 <= chk["in_flight_from_switch"] <= 16384
        if chk["in_flight_to_switch"] == 0:
            assert chk["switch_pipeline_drops"] == chk["gen_sent_to_drop"]
        assert (chk["gen_sent_to_drop"] > 0) == (c in ("tc4", "tc5", "tc6"))
        assert chk["chain_installed"] == expect_chain[c]
        assert chk["chain_traversed"] == expect_chain[c]
    for c in ("tc4", "tc5", "tc6"):
        assert sw["flows_hit"][c]["unused"] == 0 and sw["flows_hit"][c]["flows"] > 0
