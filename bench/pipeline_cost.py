#!/usr/bin/env python3
"""No-I/O pipeline cost (ns/packet) of the decomposition cases: writes each case's flows,
groups and generator streams (python/src/sluice/decomp.py) and runs build/.../bench_pipeline.

Usage: bench/pipeline_cost.py [--build DIR] [--rounds R] [--bursts B] [--cases a,b,...]
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "src"))
from sluice import decomp  # noqa: E402

CASES = "tc1,tc3_2,tc3_4,tc3_8,tc2_1k,tc2_32k,tc4,tc5,tc6"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--bursts", type=int, default=20000)
    ap.add_argument("--cases", default=CASES)
    ap.add_argument("--size", type=int, default=128)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix=f"bench_pipeline_{os.getpid()}_") as d:
        args = []
        for case in a.cases.split(","):
            path = os.path.join(d, case)
            with open(path, "w") as f:
                for g in decomp.groups(case):
                    f.write(f"group {g}\n")
                for row in decomp.flows(case):
                    kind = "table" if "kind=" in row else "flow"
                    f.write(f"{kind} {row}\n")
                # The main streams only: TC2's 1 Mb/s side stream is noise at saturation.
                for s in decomp.streams(case, 1.0, a.size):
                    if not s.startswith("name=side"):
                        f.write(f"stream {s}\n")
            args.append(f"{case}={path}")
        exe = os.path.join(a.build, "src", "gen", "bench_pipeline")
        out = subprocess.run([exe, str(a.rounds), str(a.bursts)] + args, check=True,
                             stdout=subprocess.PIPE, text=True).stdout
    print(out, end="")
    ns = {}
    for line in out.splitlines():
        if line.startswith("ns_per_pkt_"):
            k, v = line.split()[0][len("ns_per_pkt_"):].split("=")
            ns[k] = float(v)
    if "tc1" in ns:
        for k in ns:
            if k != "tc1":
                print(f"rate_ratio_{k}={ns['tc1'] / ns[k]:.3f}")
    p = [ns[k] for k in ("tc4", "tc5", "tc6") if k in ns]
    if len(p) == 3:
        print(f"tc456_spread={(max(p) - min(p)) / max(p):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
