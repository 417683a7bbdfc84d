"""No-I/O pipeline cost of the decomposition cases (issue #5): ``bench/run pipeline_cost``.

Writes each case's flows, groups and generator streams (sluice.decomp) to a file and runs
build/src/gen/bench_pipeline on them: the pipeline alone (sl_pipeline_run_burst, bursts of 32,
sluice-gen's own frames, no ports), cases interleaved round by round, medians. This is the
switch's share of a decomposition run without the memif transport and the machine's
scheduling, so it shows what each test case costs the pipeline itself.

Figures (bench/results/pipeline_cost.json): ``ns_per_pkt_CASE``, ``ns_spread_CASE`` ((max - min)
/ median over rounds), ``rate_ratio_CASE`` (TC1's ns / the case's ns: the throughput ratio the
pipeline alone would give), ``tc3_n8_ratio``, ``tc2_32k_ratio``, ``tc456_spread``
((max - min) / max of the TC4-TC6 rates), ``tsc_hz``.
"""

from __future__ import annotations

import os
import subprocess
import tempfile

from sluice import decomp
from sluice.bench import arg_parser, write_results
from sluice.testing import REPO

CASES = "tc1,tc3_2,tc3_4,tc3_8,tc2_1k,tc2_32k,tc4,tc5,tc6"


def write_case(path: str, case: str, size: int) -> None:
    with open(path, "w") as f:
        for g in decomp.groups(case):
            f.write(f"group {g}\n")
        for row in decomp.flows(case):
            f.write(f"{'table' if 'kind=' in row else 'flow'} {row}\n")
        # The main streams only: TC2's 1 Mb/s side stream is noise at saturation.
        for s in decomp.streams(case, 1.0, size):
            if not s.startswith("name=side"):
                f.write(f"stream {s}\n")


def figures(out: str) -> dict[str, float]:
    """The JSON figures from bench_pipeline's output lines."""
    res: dict[str, float] = {}
    ns: dict[str, float] = {}
    for line in out.splitlines():
        if line.startswith("ns_per_pkt_"):
            head, *rest = line.split()
            case, text = head[len("ns_per_pkt_"):].split("=")
            v = float(text)
            ns[case] = v
            res[f"ns_per_pkt_{case}"] = v
            kv = dict(x.split("=") for x in rest if "=" in x)
            if "min" in kv and "max" in kv and v > 0:
                res[f"ns_spread_{case}"] = round((float(kv["max"]) - float(kv["min"])) / v, 3)
        elif line.startswith("tsc_hz="):
            res["tsc_hz"] = float(line.split("=")[1])
    if "tc1" in ns:
        for case, v in ns.items():
            if case != "tc1" and v > 0:
                res[f"rate_ratio_{case}"] = round(ns["tc1"] / v, 3)
        for key, case in (("tc3_n8_ratio", "tc3_8"), ("tc2_32k_ratio", "tc2_32k")):
            if f"rate_ratio_{case}" in res:
                res[key] = res[f"rate_ratio_{case}"]
    rates = [1 / ns[c] for c in ("tc4", "tc5", "tc6") if ns.get(c, 0) > 0]
    if len(rates) == 3:
        res["tc456_spread"] = round((max(rates) - min(rates)) / max(rates), 3)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = arg_parser("pipeline_cost", __doc__)
    ap.add_argument("--build", default=str(REPO / "build"), help="meson build directory")
    ap.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default 9)")
    ap.add_argument("--bursts", type=int, default=20000, help="bursts per case per round")
    ap.add_argument("--cases", default=CASES)
    ap.add_argument("--size", type=int, default=128, help="frame size, FCS included")
    ap.add_argument("--low-latency", action="store_true",
                    help="mark every entry low-latency (as --ffp-auto does to entries hit "
                         "steadily): the FFP's path records carry the packets")
    a = ap.parse_args(argv)
    exe = os.path.join(a.build, "src", "gen", "bench_pipeline")
    if not os.access(exe, os.X_OK):
        print(f"bench/run pipeline_cost: {exe} not built (ninja -C {a.build})")
        return 2
    with tempfile.TemporaryDirectory(prefix=f"bench_pipeline_{os.getpid()}_") as d:
        args = []
        for case in a.cases.split(","):
            path = os.path.join(d, case)
            try:
                write_case(path, case, a.size)
            except (KeyError, ValueError) as e:
                print(f"bench/run pipeline_cost: case '{case}': {e}")
                return 2
            args.append(f"{case}={path}")
        mark = ["-l"] if a.low_latency else []
        out = subprocess.run([exe, *mark, str(a.rounds), str(a.bursts), *args], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
    res = figures(out)
    table = [f"{'case':10} {'ns/pkt':>8} {'spread':>7} {'rate/TC1':>9}"]
    table += [f"{case:10} {res[f'ns_per_pkt_{case}']:8.2f} "
              f"{res.get(f'ns_spread_{case}', 0):7.3f} {res.get(f'rate_ratio_{case}', 1.0):9.3f}"
              for case in a.cases.split(",") if f"ns_per_pkt_{case}" in res]
    table += [f"{k} = {res[k]}" for k in ("tc3_n8_ratio", "tc2_32k_ratio", "tc456_spread")
              if k in res]
    res.update(rounds=a.rounds, bursts=a.bursts, size=a.size)
    write_results(a.out, res, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
