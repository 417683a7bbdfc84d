"""sluice.bench drivers: command lines, message sets and the final tables (no benchmark runs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sluice import ofp
from sluice.bench import (
    BENCHES,
    control,
    forwarding,
    io_floor,
    results_path,
    stateful,
    write_results,
)

REPO = Path(__file__).resolve().parents[2]


def test_control_args() -> None:
    a = control.parse_args([])
    assert (a.rounds, a.n, a.prefill, a.pktin_rounds, a.no_ovs) == (3, 100_000, 10_000, 50,
                                                                    False)
    assert a.out.endswith("bench/results/control.json")
    a = control.parse_args(["--rounds", "1", "--n", "10", "--no-ovs", "--out", "/tmp/c.json"])
    assert (a.rounds, a.n, a.no_ovs, a.out) == (1, 10, True, "/tmp/c.json")


def test_forwarding_args() -> None:
    a = forwarding.parse_args([])
    assert (a.rounds, a.intervals, a.interval, a.ovs) == (3, 3, 1.0, "auto")
    assert a.case_list == ["tc1", "chain8", "depth32k", "three_stage"]
    assert a.flow_list == [1, 10_000, 1_000_000]
    assert a.out.endswith("bench/results/forwarding.json")
    a = forwarding.parse_args(["--cases", "chain8,tc1", "--flows", "10k,1", "--ovs", "no"])
    assert (a.case_list, a.flow_list, a.ovs) == (["chain8", "tc1"], [10_000, 1], "no")
    assert [forwarding.flow_label(n) for n in (1, 10_000, 1_000_000, 2500)] == [
        "1", "10k", "1m", "2500"]


def test_forwarding_sizes_and_options() -> None:
    """Pools hold the whole pcap (net_pcap infinite_rx), EAL -m holds the pool; OVS cannot
    run a 1M-frame pcap; the cache-off flag is found as a whole option only."""
    assert forwarding.mbufs_for(1) == 32768 and forwarding.mbufs_for(1_000_000) == 1_032_768
    assert forwarding.eal_mem_mb(32768) == 1024
    assert forwarding.eal_mem_mb(1_032_768) >= 1_032_768 * 2304 / 2**20 + 512
    assert forwarding.ovs_skip_reason(10_000) is None
    assert "262,144" in (forwarding.ovs_skip_reason(1_000_000) or "")
    assert forwarding.has_option("  --no-flow-cache   off\n", "--no-flow-cache")
    assert not forwarding.has_option("  --no-flow-cache-x\n  --no-cache\n", "--no-flow-cache")


def test_forwarding_rules_and_rates(tmp_path: Path) -> None:
    """OVS gets the flow lines without comments and table declarations; Sluice's rates skip
    the warm-up and partial intervals."""
    f = tmp_path / "r.flows"
    f.write_text("# c\ntable=2,kind=lpm,fields=nw_dst,name=fib\n\n"
                 "table=2,ip,nw_dst=10.0.0.0/8 actions=output:2\n")
    assert forwarding.ovs_rules(str(f)) == ["table=2,ip,nw_dst=10.0.0.0/8 actions=output:2"]
    samples = [{"t": t, "tx": int(t * 1e7), "busy_cycles": int(t * 2e9),
                "packets": int(t * 1e7)} for t in (0.0, 0.5, 1.0, 1.5, 2.0, 2.2)]
    rates, busy = forwarding.sluice_rates({"samples": samples}, 2, 0.5)
    assert [round(r) for r in rates] == [10_000_000, 10_000_000] and busy == 200.0
    assert forwarding.sluice_duration(3, 1.0) == 4.3


def test_forwarding_figures() -> None:
    """Ratios are medians of per-round ratios; old names kept; skips are reported."""
    R = forwarding.Runs
    runs = {("testpmd", "1"): R({0: [30e6], 1: [20e6], 2: [40e6]}),
            ("sluice:tc1", "1"): R({0: [15e6], 1: [12e6], 2: [16e6]}, {0: 200.0, 1: 210.0,
                                                                        2: 190.0}),
            ("percache:tc1", "1"): R({0: [10e6], 1: [6e6], 2: [8e6]}),
            ("ovs:tc1", "1"): R({0: [10e6], 1: [8e6], 2: [12e6]}),
            ("sluice:chain8", "1"): R({0: [12e6], 1: [6e6], 2: [8e6]})}
    skipped = {("ovs:chain8", "1"): "--ovs no"}
    res, rows = forwarding.figures(runs, skipped, ["tc1", "chain8"], ["1"], 3e9)
    assert res["testpmd_mpps_1"] == 30.0 and res["tc1_mpps_1"] == 15.0
    assert res["tc1_ratio_1"] == res["tc1_ratio"] == 0.5  # 0.5, 0.6, 0.4
    assert res["tc1_vs_ovs_1"] == 1.5 and res["tc1_vs_percache_1"] == 2.0
    assert res["chain8_vs_tc1_1"] == 0.5  # per round 12/15, 6/12, 8/16
    assert res["tc1_cycles_per_pkt_1"] == 200.0 and res["tc1_busy_cycles_per_pkt_1"] == 200.0
    assert res["tc1_spread_1"] == round(4 / 15, 3)
    assert res["ovs_chain8_skipped_1"] == "--ovs no" and "ovs_chain8_mpps_1" not in res
    assert "chain8_percache_mpps_1" not in res and "chain8_percache_skipped_1" not in res
    lines = forwarding.table_lines(rows)
    assert lines[0].split() == ["contender", "flows", "Mpps", "cyc/pkt", "ratio", "vs", "ovs",
                                "vs", "off", "spread"]
    assert lines[1].split() == ["testpmd", "1", "30.00", "100.0", "-", "-", "-", "0.67"]
    assert lines[2].split() == ["tc1", "1", "15.00", "200.0", "0.50", "1.50", "2.00", "0.27"]
    assert ["ovs_chain8", "1", "[1]"] in [ln.split() for ln in lines]
    assert lines[-1] == "[1] skipped: --ovs no"


def test_io_floor_figures() -> None:
    """Ratios to testpmd and to the floor are medians of per-round ratios; the cycle gaps
    are differences of the medians' cycles per packet."""
    R = forwarding.Runs
    runs = {("testpmd", "1"): R({0: [40e6], 1: [50e6], 2: [30e6]}),
            ("io_floor", "1"): R({0: [36e6], 1: [40e6], 2: [30e6]}),
            ("tc1", "1"): R({0: [24e6], 1: [30e6], 2: [15e6]})}
    res, lines = io_floor.figures(runs, ["1", "10k"], 4e9)
    assert res["io_floor_ratio_1"] == 0.9  # 0.9, 0.8, 1.0
    assert res["tc1_ratio_1"] == 0.6 and res["tc1_vs_floor_1"] == 0.667  # 24/36, 30/40, 15/30
    assert res["testpmd_cycles_per_pkt_1"] == 100.0 and res["io_floor_cycles_per_pkt_1"] == 111.1
    assert res["floor_gap_cycles_1"] == 11.1 and res["pipeline_cycles_1"] == 55.6
    assert "tc1_ratio_10k" not in res and "floor_gap_cycles_10k" not in res
    assert lines[3].split() == ["tc1", "1", "24.00", "166.7", "0.60", "0.67"]
    assert [ln.split()[:3] for ln in lines[4:]] == [[c, "10k", "failed:"]
                                                    for c in io_floor.CONTENDERS]


def test_io_floor_patch_applies() -> None:
    """bench/io_floor.patch still applies to the worker (git apply --check on this tree)."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    r = subprocess.run(["git", "-C", str(REPO), "apply", "--check", io_floor.PATCH],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"refresh bench/io_floor.patch: {r.stderr}"


def test_control_message_sets() -> None:
    one = ofp.flow_mod([ofp.oxm_eth_dst(b"\x02\x01\0\0\0\0")], [ofp.action_output(2)],
                       table_id=control.EXACT_TABLE, priority=100, cookie=control.STORM_COOKIE)
    blob = control.exact_flow_mods(3)
    assert blob[:len(one)] == one and len(blob) == 3 * len(one)
    masks = control.mask_flow_mods(0, 4, control.PREFILL_COOKIE)
    n = 0
    off = 0
    while off < len(masks):
        h = ofp.parse_header(masks[off:])
        assert h.type == ofp.OFPT_FLOW_MOD and masks[off + 24] == control.MASK_TABLE
        off += h.length
        n += 1
    assert n == 4


def test_control_summary_table() -> None:
    results = {"dump_100k_s": 0.123, "flow_mods_per_s_exact": 943851.68,
               "ovs_flow_mods_per_s_exact": 193602.371,
               "ovs_ratio_flow_mods_per_s_exact": 4.875, "packet_in_rtt_us": 1531.417}
    assert control.summary_lines(results, ["packet_in_rtt_us", "flow_mods_per_s_exact",
                                           "dump_100k_s"]) == [
        "figure                               sluice            ovs   ratio",
        "dump_100k_s                           0.123                       ",
        "flow_mods_per_s_exact           943,851.680    193,602.371    4.88",
        "packet_in_rtt_us                  1,531.417                       ",
    ]


def test_runnable_as_modules_and_bench_run() -> None:
    """Every benchmark of the one list runs as a module and through bench/run, with the same
    options; bench/run --list lists exactly that list."""
    for name, bench in BENCHES.items():
        r = subprocess.run([sys.executable, "-m", bench.module, "--help"], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0 and "--rounds" in r.stdout and "--out" in r.stdout, r.stderr
        r2 = subprocess.run([str(REPO / "bench" / "run"), name, "--help"], capture_output=True,
                            text=True, timeout=60)
        assert r2.returncode == 0 and r2.stdout == r.stdout, r2.stderr
    r = subprocess.run([str(REPO / "bench" / "run"), "--list"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    listed = [ln.split()[0] for ln in r.stdout.splitlines()[1:]]
    assert listed == list(BENCHES), r.stdout
    r = subprocess.run([str(REPO / "bench" / "run"), "nosuch"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "unknown benchmark 'nosuch'" in r.stderr


def test_write_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The one writer: the table printed, then one flat JSON object, keys sorted."""
    out = tmp_path / "sub" / "x.json"
    write_results(str(out), {"b_mpps": 2.5, "a_ratio": 0.5}, ["table line"])
    assert json.loads(out.read_text()) == {"a_ratio": 0.5, "b_mpps": 2.5}
    assert out.read_text().index("a_ratio") < out.read_text().index("b_mpps")
    printed = capsys.readouterr().out
    assert printed.startswith("table line\n") and f"wrote {out}" in printed
    assert results_path("ffp").endswith("bench/results/ffp.json")


def test_stateful_traffic_and_examples(tmp_path: Path) -> None:
    """The benchmark's frames are 64-byte TCP segments to port 22 with per-flow addresses,
    its state files name each flow once, and the examples' table sizes can be adjusted."""
    f0, f1 = stateful.frame(0), stateful.frame(1)
    assert len(f0) == 64 and f0[12:14] == b"\x08\x00" and f0[23] == 6
    assert f0[36:38] == (22).to_bytes(2, "big") and f0[26:30] != f1[26:30] and f0[:6] != f1[:6]
    states = tmp_path / "s.txt"
    assert stateful.write_states(str(states), "portknock", 3) == 3
    assert states.read_text().splitlines() == ["0 ip,nw_src=10.0.0.1 3", "0 ip,nw_src=10.0.0.2 3",
                                               "0 ip,nw_src=10.0.0.3 3"]
    assert stateful.write_states(str(states), "maclearn", 2) == 4
    assert states.read_text().splitlines()[1] == "0 dl_dst=02:02:00:00:00:01 2"
    path = stateful.example(str(tmp_path), "portknock", 123456)
    assert "kind=state,lookup=nw_src,update=nw_src,size=123456," in Path(path).read_text()


def test_pipeline_cost_figures() -> None:
    """bench_pipeline's lines become the flat JSON figures: ns, spreads, rate ratios to TC1,
    the issue's tc3_n8/tc2_32k ratios and the TC4-TC6 spread of rates."""
    from sluice.bench import pipeline_cost

    out = ("ns_per_pkt_tc1=10.00 min=9.00 max=11.00 out=1 of 1\n"
           "ns_per_pkt_tc3_8=12.50 min=12.00 max=13.00 out=1 of 1\n"
           "ns_per_pkt_tc2_32k=10.00 min=10.00 max=10.00 out=1 of 1\n"
           "ns_per_pkt_tc4=20.00 min=20 max=20 out=1 of 1\n"
           "ns_per_pkt_tc5=25.00 min=25 max=25 out=1 of 1\n"
           "ns_per_pkt_tc6=40.00 min=40 max=40 out=1 of 1\n"
           "tsc_hz=2600000000\n")
    r = pipeline_cost.figures(out)
    assert r["ns_per_pkt_tc1"] == 10.0 and r["ns_spread_tc1"] == 0.2
    assert r["tc3_n8_ratio"] == 0.8 and r["rate_ratio_tc3_8"] == 0.8
    assert r["tc2_32k_ratio"] == 1.0
    assert r["tc456_spread"] == 0.5  # rates 1/20, 1/25, 1/40: (0.05 - 0.025) / 0.05
    assert r["tsc_hz"] == 2.6e9


def test_ffp_frames_keep_their_headers_whole() -> None:
    """bench/run ffp cut its "64 B" IPv6 frames to 60 bytes, inside the UDP header, so the
    switch (rightly) did not believe the IPv6 payload length and every frame missed the ACL.
    Every frame must hold its headers whole, with lengths that fit the frame."""
    import random
    import struct

    from sluice.bench.ffp import Scenario

    rng = random.Random(1)
    for name, l4_min in (("server", 8), ("video", 16)):
        sc = Scenario(name)
        for size in (64, 128):
            for ll in (True, False):
                f = sc.frame(sc.flows[ll][0], size, rng)
                (plen,) = struct.unpack("!H", f[18:20])
                assert f[12:14] == b"\x86\xdd" and plen >= l4_min
                assert len(f) >= 14 + 40 + plen, (name, size, len(f), plen)
                assert len(f) >= size - 4
