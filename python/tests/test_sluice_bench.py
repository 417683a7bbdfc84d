"""sluice.bench drivers: command lines, message sets and the final tables (no benchmark runs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sluice import ofp
from sluice.bench import BENCHES, control, forwarding, stateful

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
    assert (a.rounds, a.intervals, a.interval) == (3, 3, 1.0)
    assert a.out.endswith("bench/results/forwarding.json")


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


def test_forwarding_table() -> None:
    assert forwarding.table_lines([("testpmd", 1, 46.246, 60.5, 1.0, None, 0.0),
                                   ("three_stage_nocache", 10000, 4.43, 632.6, 0.17, 621.5,
                                    0.031)]) == [
        "contender             flows     Mpps  cyc/pkt  ratio  busy cyc  spread",
        "testpmd                   1    46.25     60.5   1.00              0.00",
        "three_stage_nocache   10000     4.43    632.6   0.17     621.5    0.03",
    ]


def test_runnable_as_modules_and_wrappers() -> None:
    for name, module in BENCHES.items():
        r = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0 and "--rounds" in r.stdout, r.stderr
        wrapper = REPO / "bench" / f"{name}.py"
        if wrapper.exists():
            r2 = subprocess.run([sys.executable, str(wrapper), "--help"], capture_output=True,
                                text=True, timeout=60)
            assert r2.returncode == 0 and r2.stdout == r.stdout, r2.stderr


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
