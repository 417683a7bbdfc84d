"""One import path: ``import sluice`` and its version; os-ken stays out of the stdlib modules."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import sluice


def test_version() -> None:
    assert sluice.__version__ == importlib.metadata.version("sluice")
    assert all(part.isdigit() for part in sluice.__version__.split(".")[:3])


def test_stdlib_modules_do_not_import_os_ken() -> None:
    code = ("import sys, sluice, sluice.ofp, sluice.testing, sluice.telemetry, "
            "sluice.bench.control, sluice.bench.forwarding\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('os_ken', 'eventlet', 'scapy', 'pytest'))\n"
            "assert not bad, bad")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_py_typed_marker() -> None:
    from importlib.resources import files

    assert files("sluice").joinpath("py.typed").is_file()
