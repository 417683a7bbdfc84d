"""Forwarding benchmark (issue #2): the I/O limit vs Sluice, same vdevs, same run.

Contenders, interleaved round by round (A B C A B C ...) because this machine is noisy:
  testpmd      dpdk-testpmd io-forwarding (the I/O limit)
  tc1          Sluice, one rule in_port=1,actions=output:2 (seed 001 TC1)
  three_stage  Sluice, Ethernet mask -> 100-rule ACL mask -> 1,000-prefix FIB lpm
  three_stage_nocache  the same with --no-cache: the classifiers alone, no decision cache
Each on net_pcap0 (infinite_rx, 64-byte frames) -> net_null0 (no-rx), one forwarding lcore
(core 1; control on core 0), no hugepages. Rates are medians of per-interval Tx rates after
a warm-up; ratios are to testpmd's median in the same run. cycles/packet = TSC Hz / rate
(the forwarding core is saturated, so this is the whole per-packet cost, I/O included);
Sluice's own busy cycles/packet from its loop counters are reported too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from sluice.telemetry import runtime_dir
from sluice.testing import REPO

ROOT = str(REPO)
SLUICE = os.path.join(ROOT, "build", "app", "sluice")
TRAFFIC = os.path.join(ROOT, "tools", "sluice_traffic.py")

#: One row of the final table: contender, flows, Mpps, cycles/packet, ratio to testpmd,
#: Sluice busy cycles/packet (None for testpmd), spread.
Row = tuple[str, int, float, float, float, "float | None", float]


#: The TSC rate DPDK measured in the last Sluice run (its --json "tsc_hz"); preferred over
#: /proc/cpuinfo's nominal rate, which VMs often misreport or omit.
_switch_tsc_hz: list[float] = []


def tsc_hz() -> float:
    """TSC ticks per second: the switch's own measurement when a run gave one."""
    if _switch_tsc_hz:
        return _switch_tsc_hz[-1]
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and "@" in line:
                m = re.search(r"@\s*([\d.]+)GHz", line)
                if m:
                    return float(m.group(1)) * 1e9
    return 2.0e9


def gen(tmp: str) -> dict[str, str]:
    files = {}
    for profile, flows in (("tc1", 1), ("tc1", 10000), ("three-stage", 1), ("three-stage", 10000)):
        path = os.path.join(tmp, f"{profile}-{flows}.pcap")
        subprocess.run([sys.executable, TRAFFIC, "pcap", profile, path, "--flows", str(flows)],
                       check=True)
        files[f"{profile}-{flows}"] = path
    rules = os.path.join(tmp, "three-stage.flows")
    subprocess.run([sys.executable, TRAFFIC, "rules", "three-stage", rules], check=True)
    files["rules"] = rules
    return files


def vdevs(pcap: str) -> list[str]:
    return [f"net_pcap0,rx_pcap={pcap},infinite_rx=1", "net_null0,no-rx=1"]


def run_testpmd(pcap: str, intervals: int, interval_s: float) -> list[float]:
    """Port 1 Tx-pps over `intervals` windows, from interactive `show port stats`."""
    cmd = ["dpdk-testpmd", "--no-huge", "-m", "1024", "--no-pci",
           f"--file-prefix=slbench-tp-{os.getpid()}", "-l", "0,1", "--main-lcore", "0",
           "--log-level=lib.eal:error"]
    for v in vdevs(pcap):
        cmd += ["--vdev", v]
    cmd += ["--", "-i", "--forward-mode=io", "--nb-cores=1", "--total-num-mbufs=32768"]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    assert p.stdin is not None
    script = "start\n"
    p.stdin.write(script)
    p.stdin.flush()
    time.sleep(1.5)
    p.stdin.write("show port stats 1\n")
    p.stdin.flush()
    for _ in range(intervals):
        time.sleep(interval_s)
        p.stdin.write("show port stats 1\n")
        p.stdin.flush()
    p.stdin.write("stop\nquit\n")
    p.stdin.flush()
    out, _ = p.communicate(timeout=60)
    shutil.rmtree(runtime_dir(f"slbench-tp-{os.getpid()}"), ignore_errors=True)
    rates = [float(x) for x in re.findall(r"Tx-pps:\s+(\d+)", out)]
    if len(rates) < intervals + 1:
        raise RuntimeError(f"testpmd gave {len(rates)} samples:\n{out[-2000:]}")
    return rates[1:]  # the first covers start-up


def run_sluice(pcap: str, flows_args: list[str], intervals: int, interval_s: float,
               tmp: str) -> tuple[list[float], float]:
    """Tx rates per interval after a warm-up, and Sluice's busy cycles/packet."""
    js = os.path.join(tmp, "sluice.json")
    duration = 1.5 + intervals * interval_s + 0.2
    cmd = [SLUICE, "-q", "-s", str(interval_s), "-d", str(duration), "-j", js]
    for v in vdevs(pcap):
        cmd += ["-p", v]
    cmd += flows_args
    cmd += ["--", "--no-huge", "-m", "1024", "--no-pci", f"--file-prefix=slbench-sl-{os.getpid()}",
            "-l", "0,1", "--log-level=lib.eal:error"]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=duration + 60)
    finally:
        shutil.rmtree(runtime_dir(f"slbench-sl-{os.getpid()}"), ignore_errors=True)
    if r.returncode != 0:
        raise RuntimeError(f"sluice failed ({r.returncode}):\n{r.stdout[-2000:]}")
    with open(js) as f:
        d = json.load(f)
    if d.get("tsc_hz"):
        _switch_tsc_hz.append(float(d["tsc_hz"]))
    s = d["samples"]
    rates = []
    for a, b in zip(s, s[1:]):
        if a["t"] < 1.0:  # warm-up
            continue
        rates.append((b["tx"] - a["tx"]) / (b["t"] - a["t"]))
    busy = (s[-1]["busy_cycles"] - s[1]["busy_cycles"]) / max(1, s[-1]["packets"] - s[1]["packets"])
    return rates, busy


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--intervals", type=int, default=3, help="measured intervals per run")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds per interval")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "forwarding.json"))
    return ap.parse_args(argv)


def table_lines(table: Sequence[Row]) -> list[str]:
    """The final table."""
    lines = [f"{'contender':<20} {'flows':>6} {'Mpps':>8} {'cyc/pkt':>8} {'ratio':>6} "
             f"{'busy cyc':>9} {'spread':>7}"]
    for name, flows, mpps, cyc, ratio, b, spread in table:
        lines.append(f"{name:<20} {flows:>6} {mpps:>8.2f} {cyc:>8.1f} {ratio:>6.2f} "
                     f"{'' if b is None else f'{b:9.1f}':>9} {spread:>7.2f}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    a = parse_args(argv)
    if not os.path.exists(SLUICE):
        subprocess.run(["ninja", "-C", os.path.join(ROOT, "build")], check=True)
    results: dict[str, float] = {}
    table: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="slbench-") as tmp:
        files = gen(tmp)
        for flows, suffix in ((1, ""), (10000, "_10k")):
            samples: dict[str, list[float]] = {"testpmd": [], "tc1": [], "three_stage": [],
                                               "three_stage_nocache": []}
            busy: dict[str, list[float]] = {"tc1": [], "three_stage": [],
                                            "three_stage_nocache": []}
            for rnd in range(a.rounds):
                samples["testpmd"] += run_testpmd(files[f"tc1-{flows}"], a.intervals, a.interval)
                r, b = run_sluice(files[f"tc1-{flows}"], ["-F", "in_port=1,actions=output:2"],
                                  a.intervals, a.interval, tmp)
                samples["tc1"] += r
                busy["tc1"].append(b)
                r, b = run_sluice(files[f"three-stage-{flows}"], ["-f", files["rules"]],
                                  a.intervals, a.interval, tmp)
                samples["three_stage"] += r
                busy["three_stage"].append(b)
                r, b = run_sluice(files[f"three-stage-{flows}"],
                                  ["-f", files["rules"], "--no-cache"], a.intervals, a.interval, tmp)
                samples["three_stage_nocache"] += r
                busy["three_stage_nocache"].append(b)
                print(f"  round {rnd + 1}/{a.rounds} ({flows} flows): "
                      + ", ".join(f"{k} {statistics.median(v[-a.intervals:]) / 1e6:.2f}"
                                  for k, v in samples.items()) + " Mpps", flush=True)
            hz = tsc_hz()
            base = statistics.median(samples["testpmd"])
            for name, vals in samples.items():
                med = statistics.median(vals)
                results[f"{name}_mpps{suffix}"] = round(med / 1e6, 3)
                results[f"{name}_cycles_per_pkt{suffix}"] = round(hz / med, 1)
                results[f"{name}_spread{suffix}"] = round((max(vals) - min(vals)) / med, 3)
                if name != "testpmd":
                    results[f"{name}_ratio{suffix}"] = round(med / base, 3)
                    results[f"{name}_busy_cycles_per_pkt{suffix}"] = round(
                        statistics.median(busy[name]), 1)
                table.append((name, flows, med / 1e6, hz / med, med / base,
                              statistics.median(busy[name]) if name in busy else None,
                              (max(vals) - min(vals)) / med))
    results["tsc_hz"] = hz
    results["rounds"] = a.rounds
    print()
    for line in table_lines(table):
        print(line)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    print(f"\nwrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
