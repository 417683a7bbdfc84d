"""Shared fixtures and helpers for Sluice's Python system tests.

Every test runs the real ``sluice`` binary with explicit EAL arguments
(``--no-huge --no-pci``, a file prefix unique to the process) so the suite
needs no NIC and no hugepages.  Processes are tracked by PID and killed by
PID (never by name); DPDK runtime directories are removed afterwards.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import pytest
from scapy.all import Ether, Packet, Raw, rdpcap  # type: ignore[import-untyped]

REPO = Path(__file__).resolve().parent.parent
BUILD_DIR = REPO / "build"
DEFAULT_BIN = BUILD_DIR / "app" / "sluice"
DPDK_RUN_DIR = Path("/var/run/dpdk")

#: Default run length in seconds; pcap rx ports deliver their file at once.
DEFAULT_DURATION = 1.0
#: Extra seconds a run may take beyond its duration before it is killed.
RUN_GRACE = 25.0

_prefix_counter = itertools.count()
_live_pids: set[int] = set()


def unique_prefix(tag: str = "t") -> str:
    """A DPDK --file-prefix unique to this pytest process and call."""
    return f"sltest-{os.getpid()}-{tag}{next(_prefix_counter)}"


def eal_args(prefix: str) -> list[str]:
    """The explicit EAL arguments every test run uses."""
    return [
        "--no-huge",
        "-m",
        "512",
        "--no-pci",
        f"--file-prefix={prefix}",
        "-l",
        "0,1",
        "--log-level=lib.eal:error",
    ]


def _cleanup_prefix(prefix: str) -> None:
    shutil.rmtree(DPDK_RUN_DIR / prefix, ignore_errors=True)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill one process we started (and its process group), by PID."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=10)


@pytest.fixture(scope="session")
def sluice_bin() -> Path:
    """Path to the sluice binary, (re)built with ninja when a build dir exists.

    SLUICE_BIN=PATH tests another binary; SLUICE_NO_BUILD=1 skips the ninja step.
    """
    env_bin = os.environ.get("SLUICE_BIN")
    if env_bin:
        path = Path(env_bin)
    else:
        path = DEFAULT_BIN
        ninja = shutil.which("ninja")
        no_build = os.environ.get("SLUICE_NO_BUILD") == "1"
        if ninja and not no_build and (BUILD_DIR / "build.ninja").exists():
            res = subprocess.run(
                [ninja, "-C", str(BUILD_DIR), "app/sluice"],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if res.returncode != 0:
                pytest.exit(f"building sluice failed:\n{res.stdout}\n{res.stderr}", returncode=3)
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.exit(f"sluice binary not found at {path} (build it or set SLUICE_BIN)", returncode=3)
    return path


@pytest.fixture(scope="session", autouse=True)
def _reap_leftovers() -> Iterable[None]:
    """At session end, kill any sluice process a failed test left running (by PID)."""
    yield
    for pid in list(_live_pids):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        _live_pids.discard(pid)


@dataclass
class RunResult:
    """Outcome of one sluice run."""

    returncode: int
    output: str
    json: dict[str, Any] | None
    args: list[str] = field(default_factory=list)
    #: Frames written by each OpenFlow port's tx pcap (pcap_switch only).
    out: dict[int, list[Packet]] = field(default_factory=dict)

    def __iter__(self):  # allows ``rc, out, js = run_sluice(...)``
        return iter((self.returncode, self.output, self.json))

    def drops(self) -> dict[str, int]:
        """Non-zero drop counters by reason."""
        assert self.json is not None, self.output
        return {k: v for k, v in self.json["drops"].items() if v}

    def _entry(self, section: str, key: str, n: int) -> dict[str, Any]:
        assert self.json is not None, self.output
        for e in self.json[section]:
            if e[key] == n:
                return e
        raise KeyError(n)

    def port(self, n: int) -> dict[str, Any]:
        """JSON counters of OpenFlow port @n."""
        return self._entry("ports", "port", n)

    def table(self, n: int) -> dict[str, Any]:
        """JSON counters of table @n."""
        return self._entry("tables", "table", n)


def run_sluice_raw(
    binary: Path,
    args: Sequence[str],
    timeout: float = 30.0,
    prefix: str | None = None,
) -> tuple[int, str]:
    """Run sluice with @args verbatim (no EAL args added); returns (rc, stdout+stderr)."""
    proc = subprocess.Popen(
        [str(binary), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    _live_pids.add(proc.pid)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        out, _ = proc.communicate()
        raise AssertionError(
            f"sluice did not exit within {timeout} s: {args}\n{out.decode(errors='replace')}"
        )
    finally:
        _live_pids.discard(proc.pid)
        if prefix is not None:
            _cleanup_prefix(prefix)
    return proc.returncode, out.decode(errors="replace")


@pytest.fixture
def run_sluice(sluice_bin: Path, tmp_path: Path) -> Callable[..., RunResult]:
    """Return ``run(ports, flows=None, flows_file=None, duration=1.0, extra=[])``.

    @ports are devargs strings (OpenFlow ports 1..N in order); @flows is a
    list of flow/table-declaration lines written to a flow file (or use
    @flows_file); @extra are more sluice options before ``--``.  The JSON
    output is parsed when the run wrote it.
    """

    def run(
        ports: Sequence[str],
        flows: Sequence[str] | None = None,
        flows_file: str | Path | None = None,
        duration: float = DEFAULT_DURATION,
        extra: Sequence[str] = (),
    ) -> RunResult:
        prefix = unique_prefix("r")
        json_path = tmp_path / f"{prefix}.json"
        args: list[str] = []
        for p in ports:
            args += ["-p", p]
        if flows is not None:
            ff = tmp_path / f"{prefix}.flows"
            ff.write_text("\n".join(flows) + "\n")
            args += ["-f", str(ff)]
        if flows_file is not None:
            args += ["-f", str(flows_file)]
        # No LOCAL port unless a test asks for it: counts and listings stay the ports given.
        if "--local" in extra:
            extra = [a for a in extra if a != "--local"]
        else:
            extra = ["--no-local", *extra]
        args += ["-d", str(duration), "-s", "0", "-q", "-j", str(json_path), *extra]
        args += ["--", *eal_args(prefix)]
        rc, out = run_sluice_raw(sluice_bin, args, timeout=duration + RUN_GRACE, prefix=prefix)
        js = json.loads(json_path.read_text()) if json_path.exists() else None
        return RunResult(rc, out, js, args)

    return run


@pytest.fixture
def pcap_switch(run_sluice: Callable[..., RunResult], tmp_path: Path) -> Callable[..., RunResult]:
    """Return ``switch(n_ports, inputs, flows, ...)``: a switch of pcap ports.

    Port N (1-based) is ``net_pcap{N-1}``; it reads ``inputs[N]`` (a list of
    scapy packets or bytes) when given and writes everything sent out of it to
    its own pcap, which is read back into ``result.out[N]``.
    """

    def switch(
        n_ports: int,
        inputs: dict[int, Sequence[Packet | bytes]],
        flows: Sequence[str],
        duration: float = DEFAULT_DURATION,
        extra: Sequence[str] = (),
        expect_rc: int | None = 0,
    ) -> RunResult:
        tag = unique_prefix("p")
        ports = []
        outs = {}
        for n in range(1, n_ports + 1):
            dev = f"net_pcap{n - 1}"
            if inputs.get(n):
                rx = tmp_path / f"{tag}-in{n}.pcap"
                write_pcap(rx, inputs[n])
                dev += f",rx_pcap={rx}"
            tx = tmp_path / f"{tag}-out{n}.pcap"
            outs[n] = tx
            dev += f",tx_pcap={tx}"
            ports.append(dev)
        res = run_sluice(ports, flows=flows, duration=duration, extra=extra)
        if expect_rc is not None:
            assert res.returncode == expect_rc, res.output
        for n, path in outs.items():
            res.out[n] = read_pcap(path) if path.exists() else []
        return res

    return switch


def write_pcap(path: str | Path, frames: Sequence[Packet | bytes]) -> None:
    """Write frames (scapy packets or raw bytes, runts included) as an Ethernet pcap."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
        for i, fr in enumerate(frames):
            b = bytes(fr)
            f.write(struct.pack("<IIII", 1, i, len(b), len(b)))
            f.write(b)


def read_pcap(path: str | Path) -> list[Packet]:
    """Read a pcap written by a sluice port, as a list of Ether packets."""
    out = []
    for p in rdpcap(str(path)):
        b = bytes(p)
        try:
            out.append(Ether(b))
        except Exception:  # runts that scapy cannot dissect
            out.append(Raw(b))
    return out


def assert_balanced(res: RunResult) -> None:
    """Check the conservation law and that the text check line says OK."""
    assert res.returncode == 0, res.output
    j = res.json
    assert j is not None, res.output
    assert j["rx"] + j["copies"] == j["tx"] + j["tx_drops"] + j["pipeline_drops"], j
    assert j["pipeline_drops"] == sum(j["drops"].values()), j
    gone = j.get("ports_deleted", {})  # ports deleted at run time keep their share
    assert j["rx"] == sum(p["rx"] for p in j["ports"]) + gone.get("rx", 0), j
    assert j["tx"] == sum(p["tx"] for p in j["ports"]) + gone.get("tx", 0), j
    assert j["tx_drops"] == sum(p["tx_drops"] for p in j["ports"]) + gone.get("tx_drops", 0), j
    check = [ln for ln in res.output.splitlines() if ln.startswith("check:")]
    assert check and check[-1].endswith(": OK"), res.output


class BackgroundSluice:
    """A sluice process running in the background; stop() waits for it (kills on timeout)."""

    def __init__(self, binary: Path, args: Sequence[str], prefix: str, json_path: Path,
                 timeout: float) -> None:
        self.prefix = prefix
        self.json_path = json_path
        self.timeout = timeout
        self.proc = subprocess.Popen(
            [str(binary), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        _live_pids.add(self.proc.pid)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, interrupt: bool = False) -> RunResult:
        """Wait for the run to end; kill it by PID after the timeout.

        With @interrupt, first send SIGINT (sluice stops cleanly and writes its
        JSON) instead of waiting for the -d duration.
        """
        if interrupt and self.alive():
            os.kill(self.proc.pid, signal.SIGINT)
        try:
            out, _ = self.proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill(self.proc)
            out, _ = self.proc.communicate()
        finally:
            _live_pids.discard(self.proc.pid)
            _cleanup_prefix(self.prefix)
        js = json.loads(self.json_path.read_text()) if self.json_path.exists() else None
        return RunResult(self.proc.returncode, out.decode(errors="replace"), js)


@pytest.fixture
def start_sluice(sluice_bin: Path, tmp_path: Path) -> Iterable[Callable[..., BackgroundSluice]]:
    """Return ``start(ports, flows, duration)`` launching sluice in the background."""
    started: list[BackgroundSluice] = []

    def start(ports: Sequence[str], flows: Sequence[str], duration: float) -> BackgroundSluice:
        prefix = unique_prefix("bg")
        json_path = tmp_path / f"{prefix}.json"
        ff = tmp_path / f"{prefix}.flows"
        ff.write_text("\n".join(flows) + "\n")
        args: list[str] = []
        for p in ports:
            args += ["-p", p]
        args += ["-f", str(ff), "-d", str(duration), "-s", "0", "-q", "-j", str(json_path)]
        args += ["--no-local", "--", *eal_args(prefix)]
        bg = BackgroundSluice(sluice_bin, args, prefix, json_path, duration + RUN_GRACE)
        started.append(bg)
        return bg

    yield start
    for bg in started:
        if bg.alive():
            _kill(bg.proc)
        _live_pids.discard(bg.proc.pid)
        _cleanup_prefix(bg.prefix)


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers the suites use."""
    config.addinivalue_line("markers", "openflow: OpenFlow 1.3 tests (need sluice -C/--controller)")
