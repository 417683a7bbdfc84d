"""Forwarding benchmark (issue #2): the I/O limit, Sluice and Open vSwitch-DPDK on the same
vdevs, pcaps and rules, in the same run.

Contenders, interleaved round by round (testpmd, then per case sluice, sluice cache off, ovs;
again next round) because this machine is noisy:
  testpmd           dpdk-testpmd io-forwarding (the I/O limit)
  CASE              Sluice with the case's rules
  CASE_percache     the same with --no-flow-cache: no whole-pipeline cache, the per-table
                    caches and classifiers only (skipped when build/app/sluice lacks the flag)
  ovs_CASE          OVS-DPDK 3.1 (openvswitch-switch-dpdk, apt-get installs it when missing),
                    the same rules through ovs-ofctl -O OpenFlow13
Cases (rules from tools/sluice_traffic.py):
  tc1          in_port=1,actions=output:2
  chain8       8-table goto chain, every table matching a real field (ip ... udp), output:2
  depth32k     32,768 exact eth_dst entries the traffic never hits + the in_port forward rule
  three_stage  8 masked MAC rules -> 100-rule ACL -> 1,000-prefix FIB (dec_ttl,output:2)
Each with 1, 10,000 and 1,000,000 flows (distinct 5-tuples, 64-byte frames) on net_pcap0
(infinite_rx) -> net_null0 (no-rx), one forwarding lcore (core 1; control on core 0), no
hugepages. Rates: testpmd and Sluice per-interval Tx rates after a warm-up; OVS its sink port's
tx count over wall time after a warm-up, a fresh OVS per run. Ratios are medians of per-round
ratios (each round's contender over the same round's testpmd, OVS, cache-off run or tc1).
cycles/packet = TSC Hz / rate (the forwarding core is saturated: the whole per-packet cost).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import pairwise

from sluice import decomp
from sluice.bench import arg_parser, write_results
from sluice.bench.ovs import OVS_MAX_MBUFS, OVS_VSWITCHD_DPDK, OvsSwitch, ensure_ovs
from sluice.telemetry import runtime_dir
from sluice.testing import REPO, sluice_binary, unique

ROOT = str(REPO)
SLUICE = str(sluice_binary())  # $SLUICE_BIN, else build/app/sluice
TRAFFIC = os.path.join(ROOT, "tools", "sluice_traffic.py")

CASES = ("tc1", "chain8", "depth32k", "three_stage")
#: sluice_traffic.py profile of each case's rules and of its traffic.
RULES_PROFILE = {"tc1": "tc1", "chain8": "chain8", "depth32k": "depth32k",
                 "three_stage": "three-stage"}
TRAFFIC_PROFILE = {"tc1": "tc1", "chain8": "tc1", "depth32k": "tc1",
                   "three_stage": "three-stage"}
DEFAULT_FLOWS = "1,10k,1m"
#: Sluice's option that turns its whole-pipeline cache off (the percache baseline).
NO_FLOW_CACHE = "--no-flow-cache"
FRAME_SIZE = 64
#: Seconds of warm-up before the first measured interval: testpmd, Sluice (intervals starting
#: at or after this time of its --json samples), OVS (after its ports are up: its handler
#: threads install the megaflows of many flows, the PMD fills its caches).
WARMUP_TESTPMD_S = 1.5
WARMUP_SLUICE_S = 1.0
WARMUP_OVS_S = 5.0
#: Bytes of memory per mbuf, generously (2,176-byte data room + mbuf header + mempool
#: overhead), to size EAL -m for a big pool.
MBUF_BYTES = 2560


def log(msg: str) -> None:
    print(msg, flush=True)


# ---------------------------------------------------------------------------
# Sizes and names
# ---------------------------------------------------------------------------


def flow_label(n: int) -> str:
    """JSON suffix of a flow count: 1, 10k, 1m (others likewise: 100k, 2500)."""
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}m"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def parse_flows(text: str) -> list[int]:
    """'1,10k,1m' -> [1, 10000, 1000000] (1..1,000,000 each, no duplicates)."""
    out: list[int] = []
    for tok in (t.strip().lower() for t in text.split(",")):
        if not tok:
            continue
        m = re.fullmatch(r"(\d+)([km]?)", tok)
        if not m:
            raise ValueError(f"--flows: '{tok}' is not a count (e.g. 1, 10k, 1m)")
        n = int(m.group(1)) * {"": 1, "k": 1000, "m": 1_000_000}[m.group(2)]
        if not 1 <= n <= 1_000_000:
            raise ValueError(f"--flows: {tok} must be 1..1m")
        if n not in out:
            out.append(n)
    if not out:
        raise ValueError("--flows: no flow count")
    return out


def parse_cases(text: str) -> list[str]:
    out = [c.strip() for c in text.split(",") if c.strip()]
    bad = [c for c in out if c not in CASES]
    if bad or not out:
        raise ValueError(f"--cases: unknown {', '.join(bad) or 'none given'} "
                         f"(known: {', '.join(CASES)})")
    return out


def mbufs_for(frames: int) -> int:
    """mbufs for a pcap of @frames: net_pcap infinite_rx holds one per frame, plus room for
    the rings and per-lcore caches; 32,768 (as before, Sluice's default) up to 16,384 frames."""
    return 32768 if frames <= 16384 else frames + 32768


def eal_mem_mb(mbufs: int) -> int:
    """EAL -m (MB) for a pool of @mbufs: 1,024 as before for small pools, else the pool plus
    1 GB, rounded up to a GB (4,096 for a 1M-frame pcap)."""
    need = mbufs * MBUF_BYTES / 2**20
    if need <= 512:
        return 1024
    return 1024 * math.ceil((need + 1024) / 1024)


def vdevs(pcap: str) -> list[str]:
    return [f"net_pcap0,rx_pcap={pcap},infinite_rx=1", "net_null0,no-rx=1"]


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


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------


def gen_pcap(tmp: str, profile: str, flows: int) -> str:
    path = os.path.join(tmp, f"{profile}-{flows}.pcap")
    if not os.path.exists(path):
        subprocess.run([sys.executable, TRAFFIC, "pcap", profile, path, "--flows", str(flows),
                        "--size", str(FRAME_SIZE)], check=True)
    return path


def gen_rules(tmp: str, case: str) -> str:
    path = os.path.join(tmp, f"{case}.flows")
    subprocess.run([sys.executable, TRAFFIC, "rules", RULES_PROFILE[case], path], check=True)
    return path


def ovs_rules(path: str) -> list[str]:
    """A Sluice flow file as ovs-ofctl add-flows lines: no comments, no table declarations."""
    with open(path) as f:
        lines = [ln.strip() for ln in f if ln.strip() and not ln.lstrip().startswith("#")]
    return decomp.strip_declarations(lines)


def sluice_help(binary: str = SLUICE) -> str:
    """build/app/sluice --help (retried: the binary may be being relinked)."""
    err = ""
    for attempt in range(3):
        try:
            r = subprocess.run([binary, "--help"], check=False, capture_output=True, text=True,
                               timeout=30)
            if r.stdout:
                return r.stdout + r.stderr
            err = r.stderr
        except OSError as e:
            err = str(e)
        time.sleep(3)
    raise RuntimeError(f"{binary} --help failed: {err}")


def has_option(help_text: str, option: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", help_text) is not None


# ---------------------------------------------------------------------------
# Contenders
# ---------------------------------------------------------------------------


class _Interactive:
    """A process driven through stdin; its output is collected by a reader thread so a
    prompt without a newline is seen."""

    def __init__(self, cmd: Sequence[str]) -> None:
        self.proc = subprocess.Popen(list(cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.buf = bytearray()
        self.cv = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            chunk = os.read(fd, 65536)
            with self.cv:
                if not chunk:
                    self.cv.notify_all()
                    return
                self.buf += chunk
                self.cv.notify_all()

    @property
    def text(self) -> str:
        with self.cv:
            return self.buf.decode(errors="replace")

    def wait_for(self, pattern: str, timeout: float, start: int = 0) -> bool:
        rx = re.compile(pattern.encode())
        deadline = time.monotonic() + timeout
        with self.cv:
            while not rx.search(self.buf, start):
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self.reader.is_alive()):
                    return False
                self.cv.wait(min(left, 0.2))
        return True

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()

    def close(self, timeout: float) -> None:
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.reader.join(timeout=5)


def run_testpmd(pcap: str, frames: int, intervals: int,
                interval_s: float) -> tuple[list[float], None]:
    """Port 1 Tx-pps over @intervals windows, from interactive `show port stats 1` (testpmd
    computes each rate from its own TSC between two of them); no busy cycles."""
    prefix = unique("fwtp")
    mbufs = mbufs_for(frames)
    cmd = ["dpdk-testpmd", "--no-huge", "-m", str(eal_mem_mb(mbufs)), "--no-pci",
           f"--file-prefix={prefix}", "-l", "0,1", "--main-lcore", "0",
           "--log-level=lib.eal:error"]
    for v in vdevs(pcap):
        cmd += ["--vdev", v]
    cmd += ["--", "-i", "--forward-mode=io", "--nb-cores=1", f"--total-num-mbufs={mbufs}"]
    p = _Interactive(cmd)
    try:
        # The prompt comes once the ports are started (net_pcap has preloaded the file).
        if not p.wait_for(r"testpmd> ", 180):
            raise RuntimeError(f"testpmd did not start:\n{p.text[-3000:]}")
        p.send("start")
        time.sleep(WARMUP_TESTPMD_S)
        p.send("show port stats 1")
        for _ in range(intervals):
            time.sleep(interval_s)
            p.send("show port stats 1")
        p.send("stop")
        p.send("quit")
        p.close(120)
    finally:
        if p.proc.poll() is None:
            os.killpg(p.proc.pid, signal.SIGKILL)
            p.proc.wait(timeout=10)
        shutil.rmtree(runtime_dir(prefix), ignore_errors=True)
    out = p.text
    rates = [float(x) for x in re.findall(r"Tx-pps:\s+(\d+)", out)]
    if len(rates) < intervals + 1:
        raise RuntimeError(f"testpmd gave {len(rates)} samples:\n{out[-2000:]}")
    return rates[1:intervals + 1], None  # the first covers start-up


def sluice_duration(intervals: int, interval_s: float) -> float:
    """-d for a Sluice run: warm-up up to the first sample at or after WARMUP_SLUICE_S, the
    measured intervals, and a little to spare."""
    first = math.ceil(WARMUP_SLUICE_S / interval_s - 1e-9) * interval_s
    return round(first + intervals * interval_s + 0.3, 3)


def sluice_rates(d: dict[str, object], intervals: int,
                 interval_s: float) -> tuple[list[float], float]:
    """Per-interval Tx rates of a Sluice --json summary after the warm-up (full intervals
    only, the first @intervals), and its busy cycles per packet over them."""
    s = d["samples"]
    assert isinstance(s, list)
    rates: list[float] = []
    first = last = None
    for a, b in pairwise(s):
        if a["t"] < WARMUP_SLUICE_S - 0.05 or b["t"] - a["t"] < 0.8 * interval_s:
            continue
        rates.append((b["tx"] - a["tx"]) / (b["t"] - a["t"]))
        first = a if first is None else first
        last = b
        if len(rates) == intervals:
            break
    if not rates or first is None or last is None:
        raise RuntimeError(f"sluice gave no measured interval (samples: {s})")
    busy = ((last["busy_cycles"] - first["busy_cycles"])
            / max(1, last["packets"] - first["packets"]))
    return rates, busy


def run_sluice(pcap: str, frames: int, rules: str, extra: Sequence[str], intervals: int,
               interval_s: float, tmp: str, attempts: int = 3,
               mem_mb: int | None = None, binary: str = SLUICE) -> tuple[list[float], float]:
    """Tx rates per interval after a warm-up, and Sluice's busy cycles/packet.  A failed
    start is tried again (build/app/sluice may be being relinked under us).  @mem_mb: EAL -m
    (default: eal_mem_mb of the pool); @binary: another build of the switch."""
    err = ""
    for attempt in range(attempts):
        if attempt:
            last = (err.strip().splitlines() or ["?"])[-1]
            log(f"      sluice failed, again in 5 s: {last[:160]}")
            time.sleep(5)
        prefix = unique("fwsl")
        js = os.path.join(tmp, f"{prefix}.json")
        mbufs = mbufs_for(frames)
        duration = sluice_duration(intervals, interval_s)
        cmd = [binary, "-q", "-s", str(interval_s), "-d", str(duration), "-j", js,
               "--mbufs", str(mbufs), "-f", rules, *extra]
        for v in vdevs(pcap):
            cmd += ["-p", v]
        cmd += ["--", "--no-huge", "-m", str(mem_mb or eal_mem_mb(mbufs)), "--no-pci",
                f"--file-prefix={prefix}", "-l", "0,1", "--log-level=lib.eal:error"]
        try:
            r = subprocess.run(cmd, check=False, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=duration + 240)
        except (OSError, subprocess.TimeoutExpired) as e:
            err = str(e) or type(e).__name__
            continue
        finally:
            shutil.rmtree(runtime_dir(prefix), ignore_errors=True)
        if r.returncode != 0:
            err = f"exit {r.returncode}:\n{r.stdout[-2000:]}"
            continue
        try:
            with open(js) as f:
                d = json.load(f)
            os.unlink(js)
            if d.get("tsc_hz"):
                _switch_tsc_hz.append(float(d["tsc_hz"]))
            return sluice_rates(d, intervals, interval_s)
        except (OSError, ValueError, KeyError, RuntimeError) as e:
            err = f"bad --json output ({e}):\n{r.stdout[-2000:]}"
    raise RuntimeError(f"sluice failed {attempts} times: {err}")


def run_ovs(pcap: str, rules: Sequence[str], intervals: int, interval_s: float,
            tmp: str) -> tuple[list[float], None]:
    """A fresh OVS-DPDK (rules installed before its ports): port 2's tx rate over wall time,
    per interval after the warm-up (live DPDK counters through ovs-ofctl dump-ports)."""
    sw = OvsSwitch(tmp, unique("fwov"))
    try:
        sw.start()
        sw.bridge(vdevs(pcap), rules)
        time.sleep(WARMUP_OVS_S)

        def sample() -> tuple[float, int]:
            t0 = time.monotonic()
            n = sw.port_tx(2)
            return (t0 + time.monotonic()) / 2, n

        prev = sample()
        rates = []
        for _ in range(intervals):
            time.sleep(max(0.0, prev[0] + interval_s - time.monotonic()))
            cur = sample()
            rates.append((cur[1] - prev[1]) / (cur[0] - prev[0]))
            prev = cur
        if not any(rates):
            raise RuntimeError(f"OVS forwarded nothing\n{sw.log_tail}")
        return rates, None
    finally:
        sw.stop()


def ovs_version() -> str:
    try:
        r = subprocess.run([OVS_VSWITCHD_DPDK, "--version"], check=False, capture_output=True,
                           text=True, timeout=30)
        m = re.search(r"(\d+\.\d+\.\d+)", r.stdout)
        return m.group(1) if m else "?"
    except OSError:
        return "?"


def ovs_skip_reason(frames: int) -> str | None:
    """Why OVS cannot run a pcap of @frames, if it cannot: its shared mbuf pool is fixed."""
    if frames + 16384 > OVS_MAX_MBUFS:
        return (f"OVS 3.1 sizes its shared mbuf pool itself, at most {OVS_MAX_MBUFS:,} mbufs "
                "(MAX_NB_MBUF in lib/netdev-dpdk.c, whatever dpdk-extra -m; per-port-memory "
                f"gives fewer) and net_pcap infinite_rx needs one per pcap frame ({frames:,})")
    return None


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


def prefix_of(contender: str) -> str:
    """JSON prefix of a contender: testpmd, CASE, CASE_percache, ovs_CASE."""
    kind, _, case = contender.partition(":")
    return {"testpmd": "testpmd", "sluice": case, "percache": f"{case}_percache",
            "ovs": f"ovs_{case}"}[kind]


@dataclass
class Runs:
    """What one contender gave at one flow count: per round, the interval rates (pps)."""
    rounds: dict[int, list[float]] = field(default_factory=dict)
    busy: dict[int, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def per_round(self) -> dict[int, float]:
        return {r: statistics.median(v) for r, v in self.rounds.items()}

    def all_rates(self) -> list[float]:
        return [x for v in self.rounds.values() for x in v]


def paired(num: dict[int, float], den: dict[int, float]) -> float | None:
    """Median over the rounds both have of num[r] / den[r]."""
    rs = [num[r] / den[r] for r in num if r in den and den[r] > 0]
    return round(statistics.median(rs), 3) if rs else None


#: One table row: contender prefix, flows label, Mpps, cycles/packet, ratio to testpmd,
#: Sluice / OVS, cache on / off, spread (None: not measured), note (a skip reason).
Row = tuple[str, str, "float | None", "float | None", "float | None", "float | None",
            "float | None", "float | None", str]


def figures(runs: dict[tuple[str, str], Runs], skipped: dict[tuple[str, str], str],
            cases: Sequence[str], labels: Sequence[str],
            hz: float) -> tuple[dict[str, object], list[Row]]:
    """The flat JSON figures and the table rows."""
    res: dict[str, object] = {}
    rows: list[Row] = []
    for lab in labels:
        contenders = ["testpmd"] + [f"{k}:{c}" for c in cases
                                    for k in ("sluice", "percache", "ovs")]
        base = runs.get(("testpmd", lab))
        base_r = base.per_round() if base else {}
        for c in contenders:
            p = prefix_of(c)
            run = runs.get((c, lab))
            if run is None or not run.rounds:
                why = skipped.get((c, lab)) or (
                    f"failed: {run.errors[-1]}" if run is not None and run.errors else None)
                if why:
                    res[f"{p}_skipped_{lab}"] = why
                    rows.append((p, lab, None, None, None, None, None, None, why))
                continue
            vals = run.all_rates()
            med = statistics.median(vals)
            per = run.per_round()
            res[f"{p}_mpps_{lab}"] = round(med / 1e6, 3)
            res[f"{p}_cycles_per_pkt_{lab}"] = round(hz / med, 1)
            res[f"{p}_spread_{lab}"] = round((max(vals) - min(vals)) / med, 3)
            res[f"{p}_rounds_{lab}"] = ", ".join(f"{per[r] / 1e6:.3f}" for r in sorted(per))
            if run.busy:
                res[f"{p}_busy_cycles_per_pkt_{lab}"] = round(
                    statistics.median(run.busy.values()), 1)
            ratio = vs_ovs = vs_off = None
            if c != "testpmd":
                ratio = paired(per, base_r)
                if ratio is not None:
                    res[f"{p}_ratio_{lab}"] = ratio
            kind, _, case = c.partition(":")
            if kind == "sluice":
                o = runs.get((f"ovs:{case}", lab))
                if o and o.rounds:
                    vs_ovs = paired(per, o.per_round())
                    if vs_ovs is not None:
                        res[f"{case}_vs_ovs_{lab}"] = vs_ovs
                n = runs.get((f"percache:{case}", lab))
                if n and n.rounds:
                    vs_off = paired(per, n.per_round())
                    if vs_off is not None:
                        res[f"{case}_vs_percache_{lab}"] = vs_off
            if kind in ("sluice", "ovs") and case == "chain8":
                t = runs.get((c.replace("chain8", "tc1"), lab))
                if t and t.rounds:
                    v = paired(per, t.per_round())
                    if v is not None:
                        res[f"{p}_vs_tc1_{lab}"] = v
            rows.append((p, lab, med / 1e6, hz / med, ratio, vs_ovs, vs_off,
                         (max(vals) - min(vals)) / med, ""))
    # The issue-#2 names, as before: ratio to testpmd at 1 and 10,000 flows.
    for case in ("tc1", "three_stage"):
        if f"{case}_ratio_1" in res:
            res[f"{case}_ratio"] = res[f"{case}_ratio_1"]
    return res, rows


def table_lines(table: Sequence[Row]) -> list[str]:
    """The final table ('-' where a figure does not apply or was not measured); the reasons
    for skipped rows are numbered below it."""
    def f(v: float | None, width: int, prec: int) -> str:
        return f"{'-' if v is None else f'{v:.{prec}f}':>{width}}"

    lines = [(f"{'contender':<20} {'flows':>5} {'Mpps':>7} {'cyc/pkt':>8} {'ratio':>6} "
              f"{'vs ovs':>6} {'vs off':>6} {'spread':>6}")]
    notes: list[str] = []
    for name, lab, mpps, cyc, ratio, vs_ovs, vs_off, spread, note in table:
        if note:
            if note not in notes:
                notes.append(note)
            lines.append(f"{name:<20} {lab:>5} [{notes.index(note) + 1}]")
            continue
        lines.append(f"{name:<20} {lab:>5} {f(mpps, 7, 2)} {f(cyc, 8, 1)} {f(ratio, 6, 2)} "
                     f"{f(vs_ovs, 6, 2)} {f(vs_off, 6, 2)} {f(spread, 6, 2)}")
    lines += [f"[{i + 1}] skipped: {n}" for i, n in enumerate(notes)]
    return lines


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def add_round_options(ap: argparse.ArgumentParser, rounds: int) -> None:
    """--rounds (default @rounds), --intervals and --interval (check_round_options)."""
    ap.add_argument("--rounds", type=int, default=rounds,
                    help=f"interleaved rounds (default {rounds})")
    ap.add_argument("--intervals", type=int, default=3, help="measured intervals per run")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds per interval")


def check_round_options(ap: argparse.ArgumentParser, a: argparse.Namespace) -> None:
    if a.rounds < 1 or a.intervals < 1 or a.interval <= 0:
        ap.error("--rounds and --intervals must be >= 1, --interval > 0")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = arg_parser("forwarding", __doc__)
    add_round_options(ap, 3)
    ap.add_argument("--cases", default=",".join(CASES),
                    help=f"cases (default {','.join(CASES)})")
    ap.add_argument("--flows", default=DEFAULT_FLOWS,
                    help=f"flow counts, distinct 5-tuples in the pcap (default {DEFAULT_FLOWS})")
    ap.add_argument("--ovs", choices=("auto", "no"), default="auto",
                    help="OVS-DPDK contenders (auto: when installed or apt-get can install "
                         "openvswitch-switch-dpdk; no: none)")
    a = ap.parse_args(argv)
    try:
        a.case_list = parse_cases(a.cases)
        a.flow_list = parse_flows(a.flows)
    except ValueError as e:
        ap.error(str(e))
    check_round_options(ap, a)
    return a


#: One contender run: its per-interval rates (pps) and, for Sluice, busy cycles/packet.
Measure = Callable[[], "tuple[list[float], float | None]"]


def measure(what: str, fn: Measure, run: Runs, rnd: int) -> None:
    """Run one contender once; its rates go to @run (a failure is recorded, not raised)."""
    try:
        rates, busy = fn()
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        msg = str(e).strip().splitlines()
        run.errors.append(msg[0][:300] if msg else "error")
        log(f"      {what}: FAILED: {run.errors[-1]}")
        return
    run.rounds[rnd] = rates
    if busy is not None:
        run.busy[rnd] = busy
    log(f"      {what:<24} {statistics.median(rates) / 1e6:7.2f} Mpps")


def main(argv: Sequence[str] | None = None) -> int:
    a = parse_args(argv)
    if not os.path.exists(SLUICE):
        subprocess.run(["ninja", "-C", os.path.join(ROOT, "build")], check=True)
    if shutil.which("dpdk-testpmd") is None:
        log("forwarding: dpdk-testpmd not found (Debian package dpdk)")
        return 1
    cases: list[str] = a.case_list
    flows: list[int] = a.flow_list
    labels = [flow_label(n) for n in flows]
    skipped: dict[tuple[str, str], str] = {}
    percache = has_option(sluice_help(), NO_FLOW_CACHE)
    if not percache:
        log(f"forwarding: build/app/sluice --help does not list {NO_FLOW_CACHE}: no cache-off "
            "(percache) runs")
        for c in cases:
            for lab in labels:
                skipped[(f"percache:{c}", lab)] = f"build/app/sluice has no {NO_FLOW_CACHE}"
    use_ovs = False
    if a.ovs == "no":
        why = "--ovs no"
    else:
        why = ensure_ovs(install=True, log=log) or ""
        use_ovs = not why
        if why:
            log(f"forwarding: Open vSwitch-DPDK unavailable, no OVS runs: {why}")
    if not use_ovs:
        for c in cases:
            for lab in labels:
                skipped[(f"ovs:{c}", lab)] = why
    runs: dict[tuple[str, str], Runs] = {}
    extra_res: dict[str, object] = {}
    if use_ovs:
        extra_res["ovs_version"] = ovs_version()
    with tempfile.TemporaryDirectory(prefix="slbench-") as tmp:
        rules = {c: gen_rules(tmp, c) for c in cases}
        rules_ovs = {c: ovs_rules(rules[c]) for c in cases}
        for n, lab in zip(flows, labels):
            log(f"{lab} flows: generating pcaps ({n:,} distinct 5-tuples, {FRAME_SIZE} B)")
            pcaps = {prof: gen_pcap(tmp, prof, n)
                     for prof in sorted({"tc1"} | {TRAFFIC_PROFILE[c] for c in cases})}
            ovs_why = ovs_skip_reason(n) if use_ovs else None
            if ovs_why:
                log(f"   no OVS runs at {lab} flows: {ovs_why}")
                for c in cases:
                    skipped[(f"ovs:{c}", lab)] = ovs_why
            for rnd in range(a.rounds):
                log(f"   round {rnd + 1}/{a.rounds}, {lab} flows")
                measure("testpmd", partial(run_testpmd, pcaps["tc1"], n, a.intervals, a.interval),
                        runs.setdefault(("testpmd", lab), Runs()), rnd)
                for c in cases:
                    pcap = pcaps[TRAFFIC_PROFILE[c]]
                    contenders: list[tuple[str, Measure]] = [
                        (f"sluice:{c}", partial(run_sluice, pcap, n, rules[c], [], a.intervals,
                                                a.interval, tmp))]
                    if percache:
                        contenders.append((f"percache:{c}", partial(
                            run_sluice, pcap, n, rules[c], [NO_FLOW_CACHE], a.intervals,
                            a.interval, tmp)))
                    if use_ovs and not ovs_why:
                        contenders.append((f"ovs:{c}", partial(
                            run_ovs, pcap, rules_ovs[c], a.intervals, a.interval, tmp)))
                    for name, fn in contenders:
                        measure(prefix_of(name), fn, runs.setdefault((name, lab), Runs()), rnd)
    hz = tsc_hz()
    results, table = figures(runs, skipped, cases, labels, hz)
    results.update(extra_res)
    results.update({"tsc_hz": hz, "rounds": a.rounds, "intervals": a.intervals,
                    "interval_s": a.interval, "frame_size": FRAME_SIZE,
                    "cases": ",".join(cases), "flows": ",".join(labels),
                    "percache_available": percache, "ovs_available": use_ovs})
    lines = ["", *table_lines(table)]
    lines.append("ratio: to testpmd; vs ovs: Sluice / OVS; vs off: cache on / " + NO_FLOW_CACHE
                 + " (medians of per-round ratios); spread: (max - min) / median of interval "
                 "rates")
    chain = [f"{who} {lab} flows {results[k]}" for lab in labels
             for who, p in (("Sluice", "chain8"), ("OVS", "ovs_chain8"))
             if (k := f"{p}_vs_tc1_{lab}") in results]
    if chain:
        lines.append("chain8 / tc1: " + ", ".join(chain))
    write_results(a.out, results, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
