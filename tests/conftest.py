"""pytest fixtures and hooks of Sluice's system tests; the harness itself (runs of the real
``sluice`` binary with explicit EAL arguments, pcap helpers, the conservation check) is
:mod:`sluice.testing`, which tests import directly.

Every run uses ``--no-huge --no-pci`` and a file prefix unique to the process, so the suite
needs no NIC and no hugepages.  Processes are tracked by PID and killed by PID (never by
name); DPDK runtime directories are removed afterwards.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

# The harness finds build/ and tools/ in this tree, whichever sluice package is installed.
os.environ.setdefault("SLUICE_ROOT", str(Path(__file__).resolve().parent.parent))

from sluice import testing  # noqa: E402  (after SLUICE_ROOT: testing reads it on import)


@pytest.fixture(scope="session")
def sluice_bin() -> Path:
    """Path to the sluice binary, (re)built with ninja when a build dir exists.

    SLUICE_BIN=PATH tests another binary; SLUICE_NO_BUILD=1 skips the ninja step.
    """
    env_bin = os.environ.get("SLUICE_BIN")
    if env_bin:
        path = Path(env_bin)
    else:
        path = testing.DEFAULT_BIN
        ninja = shutil.which("ninja")
        no_build = os.environ.get("SLUICE_NO_BUILD") == "1"
        if ninja and not no_build and (testing.BUILD_DIR / "build.ninja").exists():
            res = subprocess.run(
                [ninja, "-C", str(testing.BUILD_DIR), "app/sluice"],
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
    testing.reap_processes()


@pytest.fixture
def run_sluice(sluice_bin: Path, tmp_path: Path) -> Callable[..., testing.RunResult]:
    """Return ``run(ports, flows=None, flows_file=None, duration=1.0, extra=[])``:
    :func:`sluice.testing.run_switch` with this test's binary and tmp_path."""

    return functools.partial(testing.run_switch, sluice_bin, tmp_path)


@pytest.fixture
def pcap_switch(
    run_sluice: Callable[..., testing.RunResult], tmp_path: Path
) -> Callable[..., testing.RunResult]:
    """Return ``switch(n_ports, inputs, flows, ...)``: :func:`sluice.testing.run_pcap_switch`
    (a switch of pcap ports, what each port sent read back into ``result.out[N]``)."""

    return functools.partial(testing.run_pcap_switch, run_sluice, tmp_path)


@pytest.fixture
def start_sluice(
    sluice_bin: Path, tmp_path: Path
) -> Iterable[Callable[..., testing.BackgroundSluice]]:
    """Return ``start(ports, flows, duration)`` launching sluice in the background
    (:func:`sluice.testing.start_background`); what is still running at the end is killed."""
    started: list[testing.BackgroundSluice] = []

    def start(ports: list[str], flows: list[str], duration: float) -> testing.BackgroundSluice:
        bg = testing.start_background(sluice_bin, tmp_path, ports, flows, duration)
        started.append(bg)
        return bg

    yield start
    for bg in started:
        bg.discard()


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers the suites use."""
    config.addinivalue_line("markers", "openflow: OpenFlow 1.3 tests (need sluice -C/--controller)")
