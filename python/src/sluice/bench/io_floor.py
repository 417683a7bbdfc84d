"""The worker loop's floor (issue #19): Sluice with no pipeline against testpmd io.

bench/io_floor.patch makes a worker forward every received packet to the other of ports
1 and 2 without building packet contexts or running the pipeline: what is left is the
worker loop itself (rx and tx bursts, port counters, the latency histogram, RCU and
credits, the state-table service, idle accounting).  Its ratio to testpmd io-forwarding is
the most any pipeline can reach in this loop, on this harness.

Contenders, interleaved round by round on the same pcap and vdevs as `bench/run
forwarding` (net_pcap0 infinite_rx -> net_null0 no-rx, 64 B frames, one forwarding lcore):
  testpmd    dpdk-testpmd io-forwarding (the I/O limit)
  io_floor   this tree with bench/io_floor.patch applied, built in a temporary git worktree
  tc1        build/app/sluice with in_port=1,actions=output:2
Figures per flow count L (1, 10k): testpmd_mpps_L, io_floor_mpps_L, tc1_mpps_L;
io_floor_ratio_L and tc1_ratio_L (to testpmd), tc1_vs_floor_L (medians of per-round
ratios); <contender>_cycles_per_pkt_L (TSC Hz / rate); floor_gap_cycles_L (floor - testpmd:
the loop's own cost) and pipeline_cycles_L (tc1 - floor: contexts, pipeline, tx grouping).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from functools import partial

from sluice.bench import arg_parser, write_results
from sluice.bench.forwarding import (
    ROOT,
    SLUICE,
    Runs,
    add_round_options,
    check_round_options,
    flow_label,
    gen_pcap,
    gen_rules,
    log,
    measure,
    paired,
    parse_flows,
    run_sluice,
    run_testpmd,
    tsc_hz,
)

PATCH = os.path.join(ROOT, "bench", "io_floor.patch")
CONTENDERS = ("testpmd", "io_floor", "tc1")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = arg_parser("io_floor", __doc__)
    add_round_options(ap, 5)
    ap.add_argument("--flows", default="1,10k",
                    help="flow counts, distinct 5-tuples in the pcap (default 1,10k)")
    a = ap.parse_args(argv)
    try:
        a.flow_list = parse_flows(a.flows)
    except ValueError as e:
        ap.error(str(e))
    check_round_options(ap, a)
    return a


def build_floor(tmp: str) -> str:
    """This tree's HEAD with bench/io_floor.patch, built in a git worktree under @tmp (the
    build options of scripts/setup.sh); returns its switch binary."""
    tree = os.path.join(tmp, "floor")
    subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-q", tree, "HEAD"],
                   check=True)
    try:
        r = subprocess.run(["git", "-C", tree, "apply", PATCH], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{PATCH} does not apply to HEAD (src/worker/worker.c moved on: "
                               f"refresh the patch): {r.stderr.strip()}")
        subprocess.run(["meson", "setup", os.path.join(tree, "build"), tree,
                        "--buildtype=release", f"-Dcpu={os.environ.get('SL_CPU', 'native')}"],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["ninja", "-C", os.path.join(tree, "build"), "app/sluice"], check=True,
                       stdout=subprocess.DEVNULL)
    except (subprocess.CalledProcessError, RuntimeError):
        remove_floor(tree)
        raise
    return os.path.join(tree, "build", "app", "sluice")


def remove_floor(tree: str) -> None:
    subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", tree], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(tree, ignore_errors=True)


def figures(runs: dict[tuple[str, str], Runs], labels: Sequence[str],
            hz: float) -> tuple[dict[str, object], list[str]]:
    res: dict[str, object] = {}
    lines = [f"{'contender':<10} {'flows':>5} {'Mpps':>7} {'cyc/pkt':>8} {'ratio':>6} "
             f"{'vs floor':>8}"]
    for lab in labels:
        base = runs.get(("testpmd", lab), Runs()).per_round()
        floor = runs.get(("io_floor", lab), Runs()).per_round()
        cyc: dict[str, float] = {}
        for c in CONTENDERS:
            r = runs.get((c, lab), Runs())
            rates = r.all_rates()
            if not rates:
                lines.append(f"{c:<10} {lab:>5} failed: {'; '.join(r.errors)[:120]}")
                continue
            mpps = statistics.median(rates) / 1e6
            cyc[c] = hz / (mpps * 1e6)
            res[f"{c}_mpps_{lab}"] = round(mpps, 3)
            res[f"{c}_cycles_per_pkt_{lab}"] = round(cyc[c], 1)
            ratio = paired(r.per_round(), base) if c != "testpmd" else None
            vs_floor = paired(r.per_round(), floor) if c == "tc1" else None
            if ratio is not None:
                res[f"{c}_ratio_{lab}"] = ratio
            if vs_floor is not None:
                res[f"tc1_vs_floor_{lab}"] = vs_floor
            lines.append(f"{c:<10} {lab:>5} {mpps:7.2f} {cyc[c]:8.1f} "
                         f"{'-' if ratio is None else f'{ratio:.2f}':>6} "
                         f"{'-' if vs_floor is None else f'{vs_floor:.2f}':>8}")
        if "io_floor" in cyc and "testpmd" in cyc:
            res[f"floor_gap_cycles_{lab}"] = round(cyc["io_floor"] - cyc["testpmd"], 1)
        if "io_floor" in cyc and "tc1" in cyc:
            res[f"pipeline_cycles_{lab}"] = round(cyc["tc1"] - cyc["io_floor"], 1)
    return res, lines


def main(argv: Sequence[str] | None = None) -> int:
    a = parse_args(argv)
    if shutil.which("dpdk-testpmd") is None:
        log("io_floor: dpdk-testpmd not found (Debian package dpdk)")
        return 1
    if not os.path.exists(SLUICE):
        subprocess.run(["ninja", "-C", os.path.join(ROOT, "build")], check=True)
    labels = [flow_label(n) for n in a.flow_list]
    runs: dict[tuple[str, str], Runs] = {}
    with tempfile.TemporaryDirectory(prefix="slfloor-") as tmp:
        log("io_floor: building HEAD with bench/io_floor.patch in a worktree")
        try:
            floor_bin = build_floor(tmp)
        except (subprocess.CalledProcessError, RuntimeError) as e:
            log(f"io_floor: could not build the floor: {e}")
            return 1
        try:
            rules = gen_rules(tmp, "tc1")
            for n, lab in zip(a.flow_list, labels):
                pcap = gen_pcap(tmp, "tc1", n)
                for rnd in range(a.rounds):
                    log(f"   round {rnd + 1}/{a.rounds}, {lab} flows")
                    measure("testpmd", partial(run_testpmd, pcap, n, a.intervals, a.interval),
                            runs.setdefault(("testpmd", lab), Runs()), rnd)
                    measure("io_floor", partial(run_sluice, pcap, n, rules, [], a.intervals,
                                                a.interval, tmp, binary=floor_bin),
                            runs.setdefault(("io_floor", lab), Runs()), rnd)
                    measure("tc1", partial(run_sluice, pcap, n, rules, [], a.intervals,
                                           a.interval, tmp),
                            runs.setdefault(("tc1", lab), Runs()), rnd)
        finally:
            remove_floor(os.path.join(tmp, "floor"))
    hz = tsc_hz()
    res, lines = figures(runs, labels, hz)
    res.update({"tsc_hz": hz, "rounds": a.rounds, "intervals": a.intervals,
                "interval_s": a.interval, "flows": ",".join(labels)})
    lines.append("ratio: to testpmd; vs floor: tc1 / io_floor (medians of per-round ratios)")
    write_results(a.out, res, ["", *lines])
    return 0


if __name__ == "__main__":
    sys.exit(main())
