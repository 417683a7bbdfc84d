"""Dispatch benchmark (issue #7): the I/O core's schedulers, real and modelled.

Two parts, one command (``bench/run dispatch``):

real   ``build/src/dispatch/bench_dispatch``: ns per packet the I/O core spends to
       distribute a packet on this machine (5-tuple + CRC32-C, the scheduler, the
       out-buffer, rte_ring enqueue), 8 workers, per scheduler; samples (one pass over
       60,000 frames each) interleave the schedulers, the median is reported with the
       minimum and the 90th percentile.  The seed reports 23.3 / 28.4 /
       24.4 / 31.4 ns for RR / CRC32 / HRW / adaptive (target: adaptive <= 15 ns).
model  ``build/src/dispatch/model_dispatch``: the same dispatcher code driving simulated
       workers in virtual time (skewed, bursty traces; deterministic per seed),
       reproducing seed 002's experiments: per-core distribution (Fig. 2), throughput
       at zero loss and at <= 1e-4 loss (Fig. 3), loss vs load with one and two
       overloaded cores (Figs. 4-5), threshold vs drop probability (Table 1), plus
       reordered packets per scheduler.

Writes bench/results/dispatch.json (one flat object), dispatch.md (the tables) and
dispatch_*.png (plots).  Ratios: model_adaptive_vs_hrw is the mean over trace seeds of
adaptive's zero-loss throughput divided by HRW's on the same trace (likewise vs CRC32, and
ordered vs adaptive); model_reordered_ordered counts packets of the ordered scheduler that
overtook an earlier packet of their flow, summed over the seeds at 80 % load
(model_reordered_all_runs_<s>: over every simulated run, overloads included).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

from sluice.bench import arg_parser, write_results
from sluice.telemetry import runtime_dir
from sluice.testing import REPO, sluice_binary

ROOT = str(REPO)
BENCH = os.path.join(ROOT, "build", "src", "dispatch", "bench_dispatch")
MODEL = os.path.join(ROOT, "build", "src", "dispatch", "model_dispatch")
SLUICE = str(sluice_binary())  # $SLUICE_BIN, else build/app/sluice
SCHEDS = ["rr", "crc32", "hrw", "adaptive", "ordered"]
SEED_NS = {"rr": 23.3, "crc32": 28.4, "hrw": 24.4, "adaptive": 31.4}


def run_json(cmd: Sequence[str]) -> dict[str, Any]:
    """Run @cmd and parse its stdout as JSON."""
    out = subprocess.run(list(cmd), check=True, capture_output=True, text=True).stdout
    res: dict[str, Any] = json.loads(out)
    return res


def rss_rate(workers: int, seconds: float, tmp: str) -> float:
    """Median per-interval tx rate (pps) of the RSS design with @workers workers.

    net_null0 generates 64-byte frames on every rx queue, one rule forwards them to
    net_null1.  Worker lcores: 1 on CPU 1, 2 on CPU 0 (the control thread's CPU: it sleeps
    between 1 ms rounds), so two workers really run on two CPUs."""
    js = os.path.join(tmp, f"rss{workers}.json")
    prefix = f"slbench-disp-{os.getpid()}"
    lcores = "0@0,1@1" + (",2@0" if workers > 1 else "")
    cmd = [SLUICE, "-q", "-s", "0.5", "-d", str(seconds), "-j", js, "-w", str(workers),
           "-p", "net_null0,size=64", "-p", "net_null1,no-rx=1", "-F",
           "in_port=1,actions=output:2", "--mgmt", "none", "--", "--no-huge", "-m", "1024",
           "--no-pci", f"--file-prefix={prefix}", "--lcores", lcores,
           "--log-level=lib.eal:error"]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=seconds + 60)
    finally:
        shutil.rmtree(runtime_dir(prefix), ignore_errors=True)
    if r.returncode != 0:
        raise RuntimeError(f"sluice failed ({r.returncode}):\n{r.stdout[-2000:]}")
    with open(js) as f:
        smp = json.load(f)["samples"]
    rates = [(b["tx"] - a["tx"]) / (b["t"] - a["t"]) for a, b in zip(smp, smp[1:])
             if a["t"] >= 1.0]
    return float(statistics.median(rates))


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = arg_parser("dispatch", __doc__)
    ap.add_argument("--rounds", type=int, default=9, help="real: interleaved rounds")
    ap.add_argument("--workers", type=int, default=8, help="workers (real and model)")
    ap.add_argument("--seeds", type=int, default=8, help="model: trace seeds")
    ap.add_argument("--packets", type=int, default=400000, help="model: packets per trace")
    ap.add_argument("--quick", action="store_true", help="small model run (smoke test)")
    ap.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    ap.add_argument("--rss-rounds", type=int, default=3,
                    help="real RSS runs (1 and 2 workers, interleaved; 0: skip)")
    return ap.parse_args(argv)


def mean_ratio(a: Sequence[float], b: Sequence[float]) -> float:
    """Mean over seeds of a[i] / b[i]."""
    return statistics.mean(x / y for x, y in zip(a, b) if y > 0)


def figures(real: dict[str, Any], model: dict[str, Any]) -> dict[str, float]:
    """The flat JSON figures."""
    res: dict[str, float] = {}
    for s in SCHEDS:
        res[f"ns_per_pkt_{s}"] = real[s]
        res[f"ns_per_pkt_{s}_min"] = real[f"{s}_min"]
        res[f"ns_per_pkt_{s}_p90"] = real[f"{s}_p90"]
        if s in SEED_NS:
            res[f"ns_per_pkt_{s}_vs_seed"] = round(real[s] / SEED_NS[s], 3)
    res["ns_per_pkt_parse_only"] = real["parse_only"]
    res["ns_workers"] = real["workers"]
    tp = model["throughput"]
    for s in SCHEDS:
        res[f"model_zero_loss_mpps_{s}"] = round(statistics.mean(tp[s]["zero_loss"]), 3)
        res[f"model_loss1e4_mpps_{s}"] = round(statistics.mean(tp[s]["loss_1e4"]), 3)
        res[f"model_reordered_{s}"] = sum(model["at_80pct"][s]["reordered"])
    z = {s: tp[s]["zero_loss"] for s in SCHEDS}
    z4 = {s: tp[s]["loss_1e4"] for s in SCHEDS}
    res["model_adaptive_vs_hrw"] = round(mean_ratio(z["adaptive"], z["hrw"]), 3)
    res["model_adaptive_vs_crc32"] = round(mean_ratio(z["adaptive"], z["crc32"]), 3)
    res["model_adaptive_vs_rr"] = round(mean_ratio(z["adaptive"], z["rr"]), 3)
    res["model_ordered_vs_adaptive"] = round(mean_ratio(z["ordered"], z["adaptive"]), 3)
    res["model_ordered_vs_hrw"] = round(mean_ratio(z["ordered"], z["hrw"]), 3)
    res["model_1e4_adaptive_vs_hrw"] = round(mean_ratio(z4["adaptive"], z4["hrw"]), 3)
    res["model_1e4_adaptive_vs_crc32"] = round(mean_ratio(z4["adaptive"], z4["crc32"]), 3)
    # Every simulated run of every experiment (bisections and overload sweeps included).
    for s in SCHEDS:
        res[f"model_reordered_all_runs_{s}"] = model["all_runs"][s]["reordered"]
        res[f"model_packets_all_runs_{s}"] = model["all_runs"][s]["packets"]
    res["model_capacity_mpps"] = model["params"]["capacity_mpps"]
    res["model_seeds"] = model["params"]["seeds"]
    return res


def markdown(real: dict[str, Any], model: dict[str, Any], fig: dict[str, float]) -> str:
    p = model["params"]
    lines = ["# bench/run dispatch", ""]
    if "real_rss_mpps_1w" in fig:
        lines += ["## Real: RSS design, TC1 rule, net_null 64-byte frames (median Mpps)", "",
                  "| workers | Mpps |", "|---|---|",
                  f"| 1 | {fig['real_rss_mpps_1w']} |", f"| 2 | {fig['real_rss_mpps_2w']} |",
                  "", f"2 workers / 1 worker = {fig['real_rss_2w_vs_1w']} (the second "
                  "worker shares CPU 0 with the control thread)", ""]
    lines += [f"## Real: ns per packet to distribute ({real['workers']} workers, "
              f"{real['samples']} samples of {real['packets_per_sample']} packets, median "
              "[min - 90th percentile])", "",
              "| scheduler | ns/packet | seed 002 |", "|---|---|---|"]
    for s in SCHEDS:
        lines.append(f"| {s} | {real[s]:.2f} [{real[s + '_min']:.2f} - {real[s + '_p90']:.2f}] | "
                     f"{SEED_NS.get(s, '-')} |")
    lines.append(f"| (tuple + CRC only) | {real['parse_only']:.2f} | |")
    lines += ["", f"## Model ({p['workers']} workers x {p['worker_mpps']} Mpps, ring "
              f"{p['ring_size']}, {p['flows']} mice + {p['elephants']} elephants x "
              f"{p['elephant_share']:.0%}, {p['packets']} packets x {p['seeds']} seeds)", "",
              "### Throughput (Mpps, mean over seeds; Fig. 3)", "",
              "| scheduler | zero loss | loss <= 1e-4 | reordered @80 % | loss @80 % |",
              "|---|---|---|---|---|"]
    for s in SCHEDS:
        a = model["at_80pct"][s]
        lines.append(f"| {s} | {fig['model_zero_loss_mpps_' + s]:.3f} | "
                     f"{fig['model_loss1e4_mpps_' + s]:.3f} | {sum(a['reordered'])} | "
                     f"{statistics.mean(a['loss']):.2e} |")
    lines += ["", "Reordered packets over every simulated run (bisections, sweeps): " + ", ".join(
        f"{s} {fig['model_reordered_all_runs_' + s]} of {fig['model_packets_all_runs_' + s]}"
        for s in SCHEDS)]
    lines += ["", f"adaptive / hrw = {fig['model_adaptive_vs_hrw']}, adaptive / crc32 = "
              f"{fig['model_adaptive_vs_crc32']}, ordered / adaptive = "
              f"{fig['model_ordered_vs_adaptive']} (zero-loss throughput, mean of per-seed "
              "ratios)", "", "### Packets per worker at 70 % load (Fig. 2)", "",
              "| scheduler | " + " | ".join(f"w{i}" for i in range(p["workers"])) + " |",
              "|---|" + "---|" * p["workers"]]
    for s in SCHEDS:
        lines.append(f"| {s} | " + " | ".join(str(x) for x in model["distribution"][s]) + " |")
    for key, title in (("one_core", "one core overloaded (Fig. 4)"),
                       ("two_cores", "two cores overloaded (Fig. 5)")):
        d = model[key]
        lines += ["", f"### Loss vs offered load, {title}", "",
                  "| Mpps | " + " | ".join(SCHEDS) + " |", "|---|" + "---|" * len(SCHEDS)]
        for i, load in enumerate(d["loads_mpps"]):
            lines.append(f"| {load:g} | " + " | ".join(f"{d[s][i]:.4f}" for s in SCHEDS) + " |")
    t = model["threshold"]
    lines += ["", f"### Threshold (Table 1; hrw at {t['hrw_load']:.0%} of capacity)", "",
              "| threshold | P(drop given tau > threshold), hrw | adaptive loss | adaptive "
              "adjustments | adaptive zero-loss Mpps |", "|---|---|---|---|---|"]
    for r in t["rows"]:
        lines.append(f"| {r['threshold']:.2f} | {r['p_drop_hrw']:.3f} | "
                     f"{r['adaptive_loss']:.2e} | {r['adaptive_adjustments']} | "
                     f"{r['adaptive_zero_loss_mpps']:.3f} |")
    return "\n".join(lines) + "\n"


def plots(real: dict[str, Any], model: dict[str, Any], prefix: str) -> list[str]:
    """PNG plots next to the JSON; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    n = model["params"]["workers"]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(SCHEDS)
    for k, s in enumerate(SCHEDS):
        ax.bar([i + k * width for i in range(n)], model["distribution"][s], width, label=s)
    ax.set_xlabel("worker")
    ax.set_ylabel("packets")
    ax.set_title("Packets per worker at 70 % load (model, Fig. 2)")
    ax.legend()
    out.append(f"{prefix}_fig2_distribution.png")
    fig.savefig(out[-1], dpi=100, bbox_inches="tight")
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4))
    tp = model["throughput"]
    xs = range(len(SCHEDS))
    ax.bar([x - 0.2 for x in xs], [statistics.mean(tp[s]["zero_loss"]) for s in SCHEDS], 0.4,
           label="zero loss")
    ax.bar([x + 0.2 for x in xs], [statistics.mean(tp[s]["loss_1e4"]) for s in SCHEDS], 0.4,
           label="loss <= 1e-4")
    ax.set_xticks(list(xs), SCHEDS)
    ax.set_ylabel("offered Mpps")
    ax.set_title("Throughput (model, Fig. 3)")
    ax.legend()
    out.append(f"{prefix}_fig3_throughput.png")
    fig.savefig(out[-1], dpi=100, bbox_inches="tight")
    plt.close(fig)

    for key, title, name in (("one_core", "one core overloaded (Fig. 4)", "fig4_one_core"),
                             ("two_cores", "two cores overloaded (Fig. 5)", "fig5_two_cores")):
        fig, ax = plt.subplots(figsize=(7, 4))
        d = model[key]
        styles = ["o-", "s--", "^:", "D-", "x-."]  # overlapping curves stay visible
        for s, st in zip(SCHEDS, styles):
            ax.plot(d["loads_mpps"], d[s], st, label=s, alpha=0.8)
        ax.set_xlabel("offered Mpps")
        ax.set_ylabel("loss rate")
        ax.set_title(f"Loss vs load, {title}")
        ax.legend()
        out.append(f"{prefix}_{name}.png")
        fig.savefig(out[-1], dpi=100, bbox_inches="tight")
        plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.bar(SCHEDS, [real[s] for s in SCHEDS], label="Sluice (this machine)")
    ax.bar([s for s in SCHEDS if s in SEED_NS], [SEED_NS[s] for s in SCHEDS if s in SEED_NS],
           fill=False, edgecolor="black", label="seed 002")
    ax.set_ylabel("ns per packet")
    ax.set_title("Cost of distributing a packet (Fig. 6)")
    ax.legend()
    out.append(f"{prefix}_fig6_ns_per_pkt.png")
    fig.savefig(out[-1], dpi=100, bbox_inches="tight")
    plt.close(fig)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    a = parse_args(argv)
    for b in (BENCH, MODEL):
        if not os.path.exists(b):
            print(f"bench/run dispatch: {b} missing: build first (ninja -C build)",
                  file=sys.stderr)
            return 2
    real = run_json([BENCH, "--workers", str(a.workers), "--rounds", str(a.rounds)])
    margs = [MODEL, "--workers", str(a.workers)]
    margs += ["--quick"] if a.quick else ["--seeds", str(a.seeds), "--packets", str(a.packets)]
    model = run_json(margs)
    fig = figures(real, model)
    if a.rss_rounds > 0 and os.path.exists(SLUICE):
        r1, r2 = [], []
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(a.rss_rounds):
                r1.append(rss_rate(1, 4.0, tmp))
                r2.append(rss_rate(2, 4.0, tmp))
        fig["real_rss_mpps_1w"] = round(statistics.median(r1) / 1e6, 3)
        fig["real_rss_mpps_2w"] = round(statistics.median(r2) / 1e6, 3)
        fig["real_rss_2w_vs_1w"] = round(statistics.median(r2) / statistics.median(r1), 3)
    md = markdown(real, model, fig)
    write_results(a.out, fig, [md])
    prefix = os.path.splitext(a.out)[0]
    with open(prefix + ".md", "w") as f:
        f.write(md)
    with open(prefix + "_model.json", "w") as f:
        json.dump(model, f)
    if not a.no_plots:
        for path in plots(real, model, prefix):
            print(f"plot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
