"""The app runner (python -m sluice.apps.run) as a process: starts, stops on signals."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("os_ken")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_runner_exits_0_on_signal(sig: signal.Signals) -> None:
    """Steps: start the runner with learning_switch on a free port; wait for its
    "listening" line (printed once the signal handlers are installed); connect to
    the port (retrying until it listens); send SIG.
    Verify: the port accepts a TCP connection; the process exits with status 0
    within 20 s (it used to ignore SIGTERM and run until killed)."""
    port = _free_port()
    env = dict(os.environ, OSKEN_HUB_TYPE="eventlet")
    proc = subprocess.Popen([sys.executable, "-m", "sluice.apps.run",
                             f"--ofp-tcp-listen-port={port}", "learning_switch"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        seen = []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            if "listening on" in line:
                break
        assert any("listening on" in ln for ln in seen), "".join(seen)
        while True:  # the listener starts just after the line is printed
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=10):
                    break
            except ConnectionRefusedError:
                assert time.monotonic() < deadline, "the port never accepted a connection"
                time.sleep(0.1)
        proc.send_signal(sig)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
