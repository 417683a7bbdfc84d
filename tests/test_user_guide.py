"""The user guide's walkthrough (docs/user-guide.md, section 11), run as written.

The test reads the guide's shell blocks and types them into tmux windows, one window per
"Terminal N" of the guide, the way a person following it would: hosts in two namespaces,
the os-ken learning switch, Sluice, ``sluicectl monitor``, then a ping.  It then reads the
monitor's screen and checks what it shows (both ports receiving and transmitting at the
ping's rate, redrawn in place), and that dump-flows lists the learned flows.

Needs root, tmux, iproute2 and os-ken (scripts/setup.sh installs them).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sluice import testing

GUIDE = testing.repo_root() / "docs" / "user-guide.md"
NETNS = ("h1", "h2")


def walkthrough() -> list[tuple[str, list[str]]]:
    """(terminal, commands) for each shell block of section 11, in order."""
    text = GUIDE.read_text()
    sec = text[text.index("## 11. Walkthrough"):]
    steps: list[tuple[str, list[str]]] = []
    who = None
    lines = iter(sec.splitlines())
    for line in lines:
        m = re.match(r"\*\*(Terminal \d|Cleanup)\*\*", line)
        if m:
            who = m.group(1)
        elif line.startswith("```sh") and who is not None:
            cmds = []
            for body in lines:
                if body.startswith("```"):
                    break
                if body.strip() and not body.lstrip().startswith("#"):
                    cmds.append(body)
            steps.append((who, cmds))
            who = None
    return steps


class Tmux:
    """A private tmux server (its own socket) with one window per guide terminal."""

    def __init__(self, cwd: Path) -> None:
        self.sock = testing.unique("slg")
        self.cwd = cwd
        self.windows: dict[str, int] = {}
        self._run("new-session", "-d", "-s", "g", "-x", "110", "-y", "45", "-c", str(cwd),
                  "bash --noprofile --norc")
        self.windows["Terminal 1"] = 0

    def _run(self, *args: str) -> str:
        r = subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True,
                           timeout=20)
        assert r.returncode == 0, r.stderr
        return r.stdout

    def window(self, who: str) -> int:
        if who not in self.windows:
            idx = len(self.windows)
            self._run("new-window", "-t", f"g:{idx}", "-c", str(self.cwd),
                      "bash --noprofile --norc")
            self.windows[who] = idx
        return self.windows[who]

    def type(self, who: str, line: str) -> None:
        w = self.window(who)
        self._run("send-keys", "-t", f"g:{w}", "-l", "--", line)
        self._run("send-keys", "-t", f"g:{w}", "Enter")

    def key(self, who: str, key: str) -> None:
        self._run("send-keys", "-t", f"g:{self.window(who)}", key)

    def screen(self, who: str, history: int = 0) -> str:
        args = ["capture-pane", "-p", "-J", "-t", f"g:{self.window(who)}"]
        if history:
            args += ["-S", str(-history)]
        return self._run(*args)

    def wait(self, who: str, pattern: str, timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while True:
            m = re.search(pattern, self.screen(who, history=2000))
            if m:
                return m
            if time.monotonic() > deadline:
                raise AssertionError(f"{who}: no /{pattern}/ within {timeout} s; screen:\n"
                                     + self.screen(who, history=200))
            time.sleep(0.2)

    def pane_pids(self) -> list[int]:
        out = self._run("list-panes", "-s", "-t", "g", "-F", "#{pane_pid}")
        return [int(p) for p in out.split()]

    def kill(self) -> None:
        """Stop what the windows started (by PID, children first), then the server."""
        pids = []
        for shell in self.pane_pids():
            pids += descendants(shell)
        for pid in reversed(pids):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while any(alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        # The process may exit between the kill() probe and this read.
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def descendants(pid: int) -> list[int]:
    """All descendants of @pid, parents before children (from /proc)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo += children.get(p, [])
    return out


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    if os.geteuid() != 0 or shutil.which("tmux") is None or shutil.which("ip") is None:
        pytest.skip("needs root, tmux and iproute2")
    for ns in NETNS:
        if Path(f"/run/netns/{ns}").exists():
            pytest.skip(f"network namespace {ns} exists already (the guide's names)")
    if testing.tcp_listening(6653):
        pytest.skip("port 6653 is taken (the guide's controller port)")
    try:
        import os_ken  # noqa: F401
    except ImportError:
        pytest.skip("os-ken not installed")
    t = Tmux(testing.repo_root())
    try:
        yield t
    finally:
        t.kill()
        for ns in NETNS:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


# LOCAL has no number.
PORT_ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", re.M)


def si(v: str) -> float:
    mult = {"k": 1e3, "M": 1e6, "G": 1e9}
    return float(v[:-1]) * mult[v[-1]] if v[-1] in mult else float(v)


def test_walkthrough_in_tmux(tmux: Tmux) -> None:
    steps = walkthrough()
    assert [w for w, _ in steps] == ["Terminal 1", "Terminal 2", "Terminal 3", "Terminal 4",
                                     "Terminal 1", "Cleanup"], steps
    (_, setup), (_, ctrl), (_, switch), (_, monitor), (_, traffic), (_, cleanup) = steps

    for line in setup:
        tmux.type("Terminal 1", line)
    tmux.type("Terminal 1", "echo setup-$((40+2))")
    tmux.wait("Terminal 1", r"setup-42", 30)

    for line in ctrl:
        tmux.type("Terminal 2", line)
    tmux.wait("Terminal 2", r"listening on tcp:127\.0\.0\.1:6653", 60)

    for line in switch:
        tmux.type("Terminal 3", line)
    tmux.wait("Terminal 3", r"sluice: name s1", 60)
    tmux.wait("Terminal 3", r"\[\s*\d+\.\ds\] rx", 30)  # per-second rate lines

    for line in monitor:
        tmux.type("Terminal 4", line)
    tmux.wait("Terminal 4", r"PORT\s+NAME", 30)

    ping, background, *rest = traffic
    tmux.type("Terminal 1", ping)
    m = tmux.wait("Terminal 1", r"3 packets transmitted, (\d) received", 60)
    assert m.group(1) == "3", tmux.screen("Terminal 1", 100)
    tmux.type("Terminal 1", background)
    time.sleep(4)  # the monitor refreshes every second; let it see the 5 pps ping

    screen = tmux.screen("Terminal 4")
    ports_view = screen.split("TABLE NAME")[0]  # the PORT section only (tables are rows too)
    rows = {int(r[0]): r for r in PORT_ROW.findall(ports_view)}
    assert set(rows) == {1, 2}, screen
    for port in (1, 2):
        _, name, rx_pps, _, tx_pps, _ = rows[port]
        assert 1 <= si(rx_pps) <= 50 and 1 <= si(tx_pps) <= 50, screen
    assert screen.count("PORT") == 1, "the view redraws in place:\n" + screen
    assert re.search(r"^s1\s+dpid \w+\s+up ", screen, re.M), screen
    assert re.search(r"^\s*0\s+\S+\s+\d+\s+\S+\s+\S+", screen, re.M), "table 0 row:\n" + screen
    assert "DATAPATH:" in screen and "cycles/pkt" in screen, screen

    dump_flows, stats = rest
    tmux.type("Terminal 1", dump_flows)
    flows = tmux.wait("Terminal 1", r"(?s)priority=\d+,in_port=\d,dl_dst=.*?n_packets", 20)
    assert flows
    learned = re.findall(r"n_packets=(\d+).*in_port=\d,dl_dst=", tmux.screen("Terminal 1", 200))
    assert learned and max(int(n) for n in learned) > 0
    tmux.type("Terminal 1", stats)
    tmux.wait("Terminal 1", r"s1-p2", 20)  # port 2, named after its interface

    # Cleanup as the guide says: Ctrl-C in terminals 4, 3, 2, then the namespaces.
    for who in ("Terminal 4", "Terminal 3", "Terminal 2"):
        tmux.key(who, "C-c")
    tmux.wait("Terminal 3", r"final counters", 30)
    tmux.wait("Terminal 3", r"check: .*: OK", 10)
    for line in cleanup:
        tmux.type("Terminal 1", line)
    tmux.type("Terminal 1", "echo clean-$((40+2))")
    tmux.wait("Terminal 1", r"clean-42", 30)
    for ns in NETNS:
        assert not Path(f"/run/netns/{ns}").exists()
