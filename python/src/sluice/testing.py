"""Test and benchmark helpers: Sluice processes, namespaces, veth pairs, raw frames.

Rules every helper follows:
- processes are started in their own session and stopped by PID (their process
  group), never by name;
- every name (DPDK file prefix, namespace, interface, socket path) includes this
  process's PID and a counter, so parallel runs do not collide;
- everything created is removed in ``stop()``/``close()``/``__exit__``, and an
  ``atexit`` hook removes whatever a crashed test left behind.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sluice.telemetry import Telemetry, runtime_dir
from sluice.telemetry import socket_path as telemetry_socket_path


def _is_repo(p: Path) -> bool:
    return (p / "meson.build").is_file() and (p / "python" / "pyproject.toml").is_file()


def repo_root() -> Path:
    """The Sluice source tree: $SLUICE_ROOT, else the tree this package sits in
    (editable install), else the first parent of the working directory that is one,
    else the working directory."""
    env = os.environ.get("SLUICE_ROOT")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parents[3]
    if _is_repo(here):
        return here
    cwd = Path.cwd().resolve()
    for p in (cwd, *cwd.parents):
        if _is_repo(p):
            return p
    return cwd


REPO = repo_root()
DEFAULT_BIN = REPO / "build" / "app" / "sluice"
DPDK_RUN_DIR = Path("/var/run/dpdk")
LISTEN_RE = re.compile(r"^sluice: listening on (\S+)", re.M)
#: The line a switch prints once its name, telemetry and management socket are up.
READY_RE = re.compile(r"^sluice: name (\S+):", re.M)


def mgmt_dir() -> Path:
    """Where Sluice puts its management socket NAME.mgmt by default: /run/sluice for
    root, else $XDG_RUNTIME_DIR/sluice (or /tmp/sluice), as app/sluice.c does."""
    if os.geteuid() == 0:
        return Path("/run/sluice")
    return Path(os.environ.get("XDG_RUNTIME_DIR") or "/tmp") / "sluice"

_counter = itertools.count()
_live_pgids: set[int] = set()
_live_links: set[str] = set()
_live_netns: set[str] = set()
_live_paths: set[str] = set()


def sluice_binary() -> Path:
    """$SLUICE_BIN, else build/app/sluice of this repository, else ``sluice`` on PATH (the
    installed package's /usr/bin/sluice), else build/app/sluice (which then does not exist)."""
    env = os.environ.get("SLUICE_BIN")
    if env:
        return Path(env)
    if not DEFAULT_BIN.exists():
        found = shutil.which("sluice")
        if found:
            return Path(found)
    return DEFAULT_BIN


def sluicectl_binary(sluice_bin: Path | None = None) -> Path:
    """$SLUICECTL_BIN, else ``sluicectl`` next to the sluice binary (build/app/)."""
    env = os.environ.get("SLUICECTL_BIN")
    if env:
        return Path(env)
    return (sluice_bin or sluice_binary()).parent / "sluicectl"


def unique(tag: str) -> str:
    """A short name unique to this process and call: TAG + pid + counter (<= 15 chars
    for tags of up to 4 characters, so it fits an interface name)."""
    return f"{tag}{os.getpid() % 100000}x{next(_counter)}"


def eal_args(prefix: str | None, lcores: str = "0,1", mem_mb: int = 512) -> list[str]:
    """Explicit EAL arguments: no hugepages, no PCI, a private file prefix (none when
    @prefix is None: a switch given ``--name`` derives it)."""
    fp = [f"--file-prefix={prefix}"] if prefix is not None else []
    # "0@0,1@1,2@1": EAL --lcores maps several lcores onto fewer CPUs (several workers here).
    lc = ["--lcores", lcores] if "@" in lcores else ["-l", lcores]
    return ["--no-huge", "-m", str(mem_mb), "--no-pci", *fp, *lc,
            "--log-level=lib.eal:error"]


def run(cmd: Sequence[str], check: bool = True, timeout: float = 30.0,
        netns: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command (inside @netns when given) and capture its output."""
    full = (["ip", "netns", "exec", netns] if netns else []) + list(cmd)
    r = subprocess.run(full, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(full)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    return r


def _killpg(pid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


# ---------------------------------------------------------------------------
# Background processes
# ---------------------------------------------------------------------------


class Proc:
    """A background process in its own session; output collected by a reader thread.

    stop() sends @stop_signal to its process group (by PID), waits, then SIGKILL.
    """

    def __init__(self, cmd: Sequence[str], netns: str | None = None,
                 env: dict[str, str] | None = None, name: str = "") -> None:
        self.cmd = (["ip", "netns", "exec", netns] if netns else []) + [str(c) for c in cmd]
        self.name = name or Path(self.cmd[0]).name
        self.lines: list[str] = []
        self._cv = threading.Condition()
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True,
                                     env=env)
        _live_pgids.add(self.proc.pid)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            with self._cv:
                self.lines.append(raw.decode(errors="replace").rstrip("\n"))
                self._cv.notify_all()
        with self._cv:
            self._cv.notify_all()

    @property
    def output(self) -> str:
        with self._cv:
            return "\n".join(self.lines)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_output(self, pattern: re.Pattern[str] | str, timeout: float) -> re.Match[str]:
        """Wait until a line matches @pattern; raise with the output so far on
        timeout or when the process exits first."""
        rx = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        seen = 0
        with self._cv:
            while True:
                for line in self.lines[seen:]:
                    m = rx.search(line)
                    if m:
                        return m
                seen = len(self.lines)
                if self.proc.poll() is not None and not self._reader.is_alive():
                    raise RuntimeError(f"{self.name} exited ({self.proc.returncode}) before "
                                       f"printing /{rx.pattern}/:\n" + "\n".join(self.lines))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{self.name}: no /{rx.pattern}/ within {timeout} s:\n"
                                       + "\n".join(self.lines))
                self._cv.wait(min(left, 0.2))

    def stop(self, stop_signal: int = signal.SIGTERM, timeout: float = 10.0) -> int:
        """Stop the process group by PID; returns the exit code (negative: signal)."""
        # Once reaped, the PID may be reused: only signal a process not yet waited for.
        if self.proc.poll() is None:
            _killpg(self.proc.pid, stop_signal)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self._reader.join(timeout=5)
        _live_pgids.discard(self.proc.pid)
        return self.proc.returncode

    def __enter__(self) -> Proc:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class SluiceConfig:
    """What to start Sluice with (options before ``--``)."""

    ports: Sequence[str]
    controllers: Sequence[str] = ()  # -C targets: tcp:H:P, ptcp:P[:IP], punix:PATH, unix:PATH,
    #                                   ssl:H:P, pssl:P[:IP] (TLS files: extra)
    flows: Sequence[str] | None = None  # lines of a startup flow file (-f)
    flows_file: str | None = None
    dpid: int | None = None
    fail_mode: str | None = None  # secure | standalone
    probe_interval: float | None = None
    packet_in_rate: int | None = None
    duration: float | None = None  # -d; None: until SIGTERM
    extra: Sequence[str] = ()
    lcores: str = "0,1"
    mem_mb: int = 512
    #: ``--name NAME``: the switch's EAL file prefix (then not passed here) and
    #: management socket mgmt_dir()/NAME.mgmt.  None: --name is not passed (binaries
    #: without it work) and the file prefix, which is also the default name, is unique
    #: per instance.  testing.unique("sl") makes a unique name.
    name: str | None = None
    #: ``--mgmt PATH|none`` when set; None: not passed (the switch's default path).
    mgmt: str | None = None
    #: The LOCAL port (a TAP interface named after the switch); off by default here so
    #: port listings and counts are the ports given.  True: Sluice's default (LOCAL).
    local: bool = False


def sluice_args(cfg: SluiceConfig, prefix: str, json_path: str,
                flows_path: str | None = None) -> list[str]:
    """The command line (after the binary) Sluice is started with for @cfg.

    @flows_path is where ``cfg.flows`` were written (required when they are set);
    @prefix the EAL file prefix, passed unless ``cfg.name`` is set.
    """
    args: list[str] = []
    if cfg.name is not None:
        args += ["--name", cfg.name]
    if cfg.mgmt is not None:
        args += ["--mgmt", cfg.mgmt]
    for p in cfg.ports:
        args += ["-p", p]
    if cfg.flows is not None:
        if flows_path is None:
            raise ValueError("cfg.flows is set: flows_path must say where they were written")
        args += ["-f", flows_path]
    if cfg.flows_file:
        args += ["-f", cfg.flows_file]
    for c in cfg.controllers:
        args += ["-C", c]
    if cfg.dpid is not None:
        args += ["--dpid", f"{cfg.dpid:x}"]
    if cfg.fail_mode:
        args += ["--fail-mode", cfg.fail_mode]
    if cfg.probe_interval is not None:
        args += ["--probe-interval", str(cfg.probe_interval)]
    if cfg.packet_in_rate is not None:
        args += ["--packet-in-rate", str(cfg.packet_in_rate)]
    if cfg.duration is not None:
        args += ["-d", str(cfg.duration)]
    if not cfg.local:
        args += ["--no-local"]
    args += ["-s", "0", "-q", "-j", json_path, *cfg.extra]
    args += ["--", *eal_args(None if cfg.name is not None else prefix, cfg.lcores, cfg.mem_mb)]
    return args


class Sluice(Proc):
    """A running Sluice switch.

    ``listen_targets`` holds what its "sluice: listening on ..." lines
    announced, as client targets ("unix:PATH", "tcp:127.0.0.1:PORT").
    ``prefix`` is its EAL file prefix (``cfg.name`` when set), which locates its
    DPDK telemetry socket (``telemetry``, ``telemetry_path``).
    """

    def __init__(self, cfg: SluiceConfig, binary: Path | None = None,
                 workdir: str | None = None) -> None:
        self.cfg = cfg
        self.binary = Path(binary or sluice_binary())
        self.prefix = cfg.name if cfg.name is not None else unique("slof")
        self.workdir = workdir or tempfile.mkdtemp(prefix=f"{self.prefix}-")
        self._own_workdir = workdir is None
        self.json_path = os.path.join(self.workdir, "sluice.json")
        flows_path = None
        if cfg.flows is not None:
            flows_path = os.path.join(self.workdir, "startup.flows")
            Path(flows_path).write_text("\n".join(cfg.flows) + "\n")
        for c in cfg.controllers:
            if c.startswith("punix:"):
                _live_paths.add(c[len("punix:"):])
        self.args = sluice_args(cfg, self.prefix, self.json_path, flows_path)
        self._telemetry: Telemetry | None = None
        super().__init__([str(self.binary), *self.args], name="sluice")
        self.listen_targets: list[str] = []

    @property
    def mgmt_path(self) -> Path | None:
        """The management socket: ``cfg.mgmt``, None for ``--mgmt none``, else the
        switch's default mgmt_dir()/NAME.mgmt (NAME: ``cfg.name``, else the file
        prefix).  Binaries older than --name/--mgmt have none: the path stays absent."""
        if self.cfg.mgmt == "none":
            return None
        if self.cfg.mgmt is not None:
            return Path(self.cfg.mgmt)
        return mgmt_dir() / f"{self.prefix}.mgmt"

    @property
    def openflow_target(self) -> str | None:
        """A client target for this switch: its management socket (unless it does not
        exist while a passive -C listener was announced: binaries without one), else the
        first listener (after wait_listening), else None."""
        mgmt = self.mgmt_path
        if mgmt is not None and (mgmt.exists() or not self.listen_targets):
            return f"unix:{mgmt}"
        return self.listen_targets[0] if self.listen_targets else None

    def wait_ready(self, timeout: float = 30.0) -> str:
        """Wait for the "sluice: name NAME: ..." line (binaries with --name print it once
        telemetry and the management socket are up); returns NAME."""
        return self.wait_output(READY_RE, timeout).group(1)

    @property
    def telemetry_path(self) -> Path:
        """This instance's DPDK telemetry socket."""
        return telemetry_socket_path(self.prefix)

    @property
    def telemetry(self) -> Telemetry:
        """A telemetry client connected to this instance (made on first use, waiting up
        to 30 s for the socket; closed by stop())."""
        if self._telemetry is None:
            if not self.alive():
                raise RuntimeError(f"sluice exited ({self.proc.returncode}):\n{self.output}")
            self._telemetry = Telemetry(path=self.telemetry_path, connect_timeout=30.0,
                                        timeout=10.0)
        return self._telemetry

    def sluicectl_cmd(self, *args: str) -> list[str]:
        """The sluicectl command line sluicectl() runs."""
        cmd = [str(sluicectl_binary(self.binary)), "--telemetry", str(self.telemetry_path)]
        target = self.openflow_target
        if target is not None:
            cmd += ["--target", target]
        return [*cmd, *args]

    def sluicectl(self, *args: str, check: bool = False,
                  timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        """Run ``sluicectl --telemetry SOCKET [--target TARGET] ARGS`` against this instance
        ($SLUICECTL_BIN, else sluicectl next to the sluice binary); output captured as text."""
        cmd = self.sluicectl_cmd(*args)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
        return r

    def wait_listening(self, n: int | None = None, timeout: float = 30.0) -> list[str]:
        """Wait for the "listening on" line of every passive -C target (or @n lines)."""
        want = n if n is not None else sum(
            1 for c in self.cfg.controllers if c.startswith(("ptcp:", "pssl:", "punix:")))
        deadline = time.monotonic() + timeout
        while True:
            found = LISTEN_RE.findall(self.output)
            if len(found) >= want:
                break
            if not self.alive():
                raise RuntimeError(f"sluice exited ({self.proc.returncode}):\n{self.output}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"sluice: {len(found)}/{want} listeners after {timeout} s:\n"
                                   + self.output)
            time.sleep(0.05)
        self.listen_targets = [_client_target(t) for t in found]
        return self.listen_targets

    def stop(self, stop_signal: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        """SIGTERM by PID (clean exit, JSON written), SIGKILL after @timeout; clean up."""
        if self._telemetry is not None:
            self._telemetry.close()
            self._telemetry = None
        try:
            return super().stop(stop_signal, timeout)
        finally:
            shutil.rmtree(runtime_dir(self.prefix), ignore_errors=True)
            mgmt = self.mgmt_path
            if mgmt is not None and self.proc.poll() is not None and mgmt.is_socket():
                with contextlib.suppress(OSError):
                    mgmt.unlink()
            for c in self.cfg.controllers:
                if c.startswith("punix:"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(c[len("punix:"):])
                    _live_paths.discard(c[len("punix:"):])
            if self._own_workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Sluice:
        return self


def _client_target(listen: str) -> str:
    """'ptcp:PORT[:IP]' -> 'tcp:IP:PORT' (IP default 127.0.0.1), 'pssl:...' -> 'ssl:...'
    likewise; 'punix:P' -> 'unix:P'."""
    if listen.startswith("punix:"):
        return "unix:" + listen[len("punix:"):]
    if listen.startswith(("ptcp:", "pssl:")):
        parts = listen[len("ptcp:"):].split(":", 1)
        ip = parts[1] if len(parts) > 1 and parts[1] not in ("", "0.0.0.0") else "127.0.0.1"
        return f"{listen[1:4]}:{ip}:{parts[0]}"
    return listen


def socket_path(tag: str = "sl") -> str:
    """A short unique Unix socket path under /tmp (sun_path holds 107 bytes)."""
    p = f"/tmp/{unique(tag)}.sock"
    _live_paths.add(p)
    return p


def free_tcp_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tcp_listening(port: int, netns: str | None = None) -> bool:
    """True when some socket listens on TCP @port (reads /proc/net/tcp{,6}; no connection made)."""
    text = ""
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        if netns:
            r = run(["cat", f], check=False, netns=netns)
            text += r.stdout
        elif os.path.exists(f):
            text += Path(f).read_text()
    want = f":{port:04X}"
    for line in text.splitlines()[1:]:
        cols = line.split()
        if len(cols) > 3 and cols[1].endswith(want) and cols[3] == "0A":
            return True
    return False


def wait_until(pred: Callable[[], bool], timeout: float, what: str, step: float = 0.1) -> None:
    """Poll @pred until true; TimeoutError naming @what after @timeout seconds."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(step)


# ---------------------------------------------------------------------------
# Namespaces and veth pairs
# ---------------------------------------------------------------------------


def _sysctl_if(ifname: str, key: str, value: str, netns: str | None = None) -> None:
    run(["sysctl", "-q", "-w", f"net.ipv6.conf.{ifname}.{key}={value}"], check=False, netns=netns)


class Topology:
    """Namespaces and veth pairs, all removed by close() (also on exceptions, via ``with``)."""

    def __init__(self) -> None:
        self.netns: list[str] = []
        self.links: list[str] = []

    def add_netns(self, tag: str = "ns") -> str:
        """Create a namespace with lo up and IPv6 off (quiet links); return its name."""
        name = unique(tag)
        run(["ip", "netns", "add", name])
        self.netns.append(name)
        _live_netns.add(name)
        run(["ip", "link", "set", "lo", "up"], netns=name)
        run(["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"], check=False, netns=name)
        run(["sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1"], check=False,
            netns=name)
        return name

    def add_veth(self, tag: str = "sv", peer_netns: str | None = None,
                 peer_name: str | None = None, peer_addr: str | None = None,
                 peer_mac: str | None = None, mtu: int | None = None) -> tuple[str, str]:
        """A veth pair: (root-namespace end, peer end).  The peer moves into
        @peer_netns (renamed @peer_name, given @peer_addr "IP/LEN" and @peer_mac)
        when asked.  Both ends are up, with IPv6 off and no addresses in the root
        namespace, so nothing but test traffic crosses the link."""
        base = unique(tag)
        a, b = base + "a", base + "b"
        run(["ip", "link", "add", a, "type", "veth", "peer", "name", b])
        self.links.append(a)
        _live_links.add(a)
        _sysctl_if(a, "disable_ipv6", "1")
        _sysctl_if(b, "disable_ipv6", "1")
        if mtu:
            run(["ip", "link", "set", a, "mtu", str(mtu)])
            run(["ip", "link", "set", b, "mtu", str(mtu)])
        if peer_netns:
            run(["ip", "link", "set", b, "netns", peer_netns])
            if peer_name:
                run(["ip", "link", "set", b, "name", peer_name], netns=peer_netns)
                b = peer_name
            if peer_mac:
                run(["ip", "link", "set", b, "address", peer_mac], netns=peer_netns)
            if peer_addr:
                run(["ip", "addr", "add", peer_addr, "dev", b], netns=peer_netns)
            run(["ip", "link", "set", b, "up"], netns=peer_netns)
        else:
            if peer_mac:
                run(["ip", "link", "set", b, "address", peer_mac])
            run(["ip", "link", "set", b, "up"])
        run(["ip", "link", "set", a, "up"])
        # A software switch on an AF_PACKET socket sees frames as the kernel
        # hands them over: without this, TCP segments arrive as 64 KB GSO
        # super-frames with partial checksums that no other host accepts.
        offloads = ["tx", "off", "rx", "off", "tso", "off", "gso", "off", "gro", "off"]
        run(["ethtool", "-K", a, *offloads], check=False)
        run(["ethtool", "-K", b, *offloads], check=False, netns=peer_netns)
        return a, b

    def close(self) -> None:
        """Delete every link and namespace created, in reverse order; never raises."""
        for a in reversed(self.links):
            run(["ip", "link", "del", a], check=False)
            _live_links.discard(a)
        for ns in reversed(self.netns):
            run(["ip", "netns", "del", ns], check=False)
            _live_netns.discard(ns)
        self.links.clear()
        self.netns.clear()

    def __enter__(self) -> Topology:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ns_popen(netns: str, cmd: Sequence[str], name: str = "") -> Proc:
    """Start @cmd inside @netns in the background (stop() it by PID)."""
    return Proc(cmd, netns=netns, name=name or Path(cmd[0]).name)


# ---------------------------------------------------------------------------
# Raw frames on an interface of the root namespace
# ---------------------------------------------------------------------------

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


class RawPort:
    """An AF_PACKET socket on one interface: send frames, collect received ones.

    Frames the host itself sends (PACKET_OUTGOING) are ignored.
    """

    def __init__(self, ifname: str) -> None:
        self.ifname = ifname
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.sock.bind((ifname, ETH_P_ALL))

    def send(self, frames: Sequence[bytes]) -> None:
        for f in frames:
            self.sock.send(f)

    def drain(self) -> None:
        """Drop everything queued so far."""
        self.sock.setblocking(False)
        try:
            while True:
                self.sock.recv(65535)
        except BlockingIOError:
            pass
        finally:
            self.sock.setblocking(True)

    def recv_until(self, pred: Callable[[list[bytes]], bool], timeout: float,
                   keep: Callable[[bytes], bool] = lambda f: True) -> list[bytes]:
        """Collect frames (those @keep accepts) until @pred(frames) or @timeout; returns them."""
        got: list[bytes] = []
        deadline = time.monotonic() + timeout
        while not pred(got):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.sock.settimeout(left)
            try:
                data, addr = self.sock.recvfrom(65535)
            except TimeoutError:
                break
            if addr[2] == PACKET_OUTGOING:
                continue
            if keep(data):
                got.append(data)
        return got

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawPort:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def eth_frame(dst: str, src: str, payload: bytes = b"", eth_type: int = 0x88B5,
              size: int = 100) -> bytes:
    """An Ethernet frame of @size bytes (no FCS): dst, src, type, payload, zero fill."""
    from sluice.ofp import mac_bytes

    f = mac_bytes(dst) + mac_bytes(src) + struct.pack("!H", eth_type) + payload
    return f + b"\0" * max(0, size - len(f))


# ---------------------------------------------------------------------------
# Leftover cleanup
# ---------------------------------------------------------------------------


@atexit.register
def _cleanup_leftovers() -> None:
    for pgid in list(_live_pgids):
        _killpg(pgid)
    for a in list(_live_links):
        subprocess.run(["ip", "link", "del", a], capture_output=True)
    for ns in list(_live_netns):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    for p in list(_live_paths):
        with contextlib.suppress(OSError):
            os.unlink(p)


@contextlib.contextmanager
def sluice(cfg: SluiceConfig, wait: bool = True, timeout: float = 30.0) -> Iterator[Sluice]:
    """``with sluice(cfg) as sw:`` start Sluice, wait for its listeners, stop it by PID after."""
    sw = Sluice(cfg)
    try:
        if wait:
            sw.wait_listening(timeout=timeout)
        yield sw
    finally:
        sw.stop()


# ---------------------------------------------------------------------------
# Sluice with OpenFlow, ovs-ofctl
# ---------------------------------------------------------------------------


def openflow_supported(binary: Path | None = None) -> bool:
    """True when this Sluice binary advertises -C/--controller in its --help."""
    b = binary or sluice_binary()
    try:
        r = subprocess.run([str(b), "--help"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--controller" in r.stdout + r.stderr


def netns_usable() -> bool:
    """Root with iproute2: namespaces, veth pairs and AF_PACKET sockets are available."""
    return os.geteuid() == 0 and shutil.which("ip") is not None


def counter_frames(n_fwd: int, n_ttl1: int, n_arp: int, fill: bytes = b"s") -> list[Any]:
    """Frames whose fate the counter tests know: @n_fwd UDP datagrams to 10.0.1.1.. (TTL 9,
    forwarded by a dec_ttl flow), @n_ttl1 with TTL 1 (ttl-expired), @n_arp ARP requests
    (table-miss without an ARP flow); scapy packets, in that order."""
    from scapy.all import ARP, IP, UDP, Ether, Raw  # type: ignore[attr-defined]

    fwd = [Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
           / IP(src="10.0.0.1", dst=f"10.0.1.{i + 1}", ttl=9)
           / UDP(sport=1000 + i, dport=53) / Raw(fill * 18) for i in range(n_fwd)]
    ttl1 = [Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
            / IP(src="10.0.0.1", dst="10.0.2.1", ttl=1) / UDP(sport=7, dport=7)
            for _ in range(n_ttl1)]
    arp = [Ether(src="02:00:00:00:00:01", dst="ff:ff:ff:ff:ff:ff")
           / ARP(psrc="10.0.0.1", pdst="10.0.0.9") for _ in range(n_arp)]
    return fwd + ttl1 + arp


def af_packet_ports(ifaces: Sequence[str], first: int = 0) -> list[str]:
    """Devargs for net_af_packet ports on @ifaces (vdev names unique within one process)."""
    return [f"net_af_packet{first + i},iface={ifc}" for i, ifc in enumerate(ifaces)]


OFCTL_TIMEOUT = 20


def ofctl(target: str, *args: str, check: bool = True) -> str:
    """Run ``ovs-ofctl -O OpenFlow13 --no-names CMD TARGET ARGS`` and return stdout.

    @args[0] is the command; the switch @target goes right after it.
    """
    cmd = ["ovs-ofctl", "-O", "OpenFlow13", "--no-names", f"--timeout={OFCTL_TIMEOUT}",
           args[0], target, *args[1:]]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=OFCTL_TIMEOUT + 10)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    return r.stdout


@dataclass
class DumpedFlow:
    """One line of ovs-ofctl dump-flows: its key=value fields, bare words, actions."""

    fields: dict[str, str]
    words: set[str]
    actions: str
    line: str

    def int(self, key: str) -> int:
        return int(self.fields[key], 0)

    @property
    def cookie(self) -> builtins.int:
        return int(self.fields.get("cookie", "0"), 0)


def parse_dump_flows(text: str) -> list[DumpedFlow]:
    """Parse ``ovs-ofctl dump-flows`` output (header line skipped)."""
    out = []
    for line in text.splitlines():
        if "actions=" not in line or line.startswith(("OFPST_", "NXST_")):
            continue
        head, _, actions = line.strip().partition("actions=")
        fields: dict[str, str] = {}
        words: set[str] = set()
        for item in re.split(r"[,\s]+", head.strip()):
            if not item:
                continue
            k, eq, v = item.partition("=")
            if eq:
                fields[k] = v.rstrip("s") if k == "duration" else v
            else:
                words.add(k)
        out.append(DumpedFlow(fields, words, actions.strip(), line))
    return out


class FakeSwitch:
    """A scripted OpenFlow 1.3 "switch" on a Unix socket, for checking what a
    tool (ovs-ofctl, a controller) sends without a real switch.

    It sends HELLO, answers FEATURES_REQUEST (dpid 1, no ports), ECHO, BARRIER
    and every multipart request (an empty reply of the same type), and records
    every other message in ``received`` (raw bytes).  One thread per connection.
    """

    def __init__(self) -> None:
        from sluice import ofp

        self._ofp = ofp
        self.path = socket_path("fsw")
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(self.path)
        self.srv.listen(8)
        self.target = "unix:" + self.path
        self.received: list[bytes] = []
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._accept = threading.Thread(target=self._accept_loop, daemon=True)
        self._accept.start()

    def _accept_loop(self) -> None:
        while True:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self, conn: socket.socket) -> None:
        ofp = self._ofp
        c = ofp.Client(conn)
        try:
            c.send(ofp.hello())
            while True:
                m = c.recv(30)
                if m.type == ofp.OFPT_HELLO:
                    continue
                if m.type == ofp.OFPT_ECHO_REQUEST:
                    c.send(ofp.echo_reply(m.body, m.xid))
                elif m.type == ofp.OFPT_BARRIER_REQUEST:
                    c.send(ofp.message(ofp.OFPT_BARRIER_REPLY, b"", m.xid))
                elif m.type == ofp.OFPT_FEATURES_REQUEST:
                    c.send(ofp.message(ofp.OFPT_FEATURES_REPLY,
                                       struct.pack("!QIBB2xII", 1, 0, 254, 0, 0, 0), m.xid))
                elif m.type == ofp.OFPT_MULTIPART_REQUEST:
                    mp_type = struct.unpack_from("!H", m.raw, 8)[0]
                    c.send(ofp.message(ofp.OFPT_MULTIPART_REPLY,
                                       struct.pack("!HH4x", mp_type, 0), m.xid))
                else:
                    with self._lock:
                        self.received.append(m.raw)
        except (ofp.ConnectionClosed, TimeoutError, OSError):
            pass
        finally:
            conn.close()

    def take(self) -> list[bytes]:
        """Messages recorded so far (and forget them)."""
        with self._lock:
            out, self.received = self.received, []
        return out

    def close(self) -> None:
        self.srv.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        _live_paths.discard(self.path)

    def __enter__(self) -> FakeSwitch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------------
# One-shot runs: the system tests' harness (tests/conftest.py's fixtures wrap these)
# ---------------------------------------------------------------------------

BUILD_DIR = REPO / "build"
#: Default run length in seconds; pcap rx ports deliver their file at once.
DEFAULT_DURATION = 1.0
#: Extra seconds a run may take beyond its duration before it is killed.
RUN_GRACE = 25.0

_prefix_counter = itertools.count()


def unique_prefix(tag: str = "t") -> str:
    """A DPDK --file-prefix unique to this process and call."""
    return f"sltest-{os.getpid()}-{tag}{next(_prefix_counter)}"


def _cleanup_prefix(prefix: str) -> None:
    shutil.rmtree(DPDK_RUN_DIR / prefix, ignore_errors=True)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill one process we started (and its process group), by PID."""
    if proc.poll() is not None:
        return
    _killpg(proc.pid)
    proc.wait(timeout=10)


def reap_processes() -> None:
    """Kill every process group this module started that is still running (by PID): what a
    failed test left behind."""
    for pgid in list(_live_pgids):
        _killpg(pgid)
        _live_pgids.discard(pgid)


@dataclass
class RunResult:
    """Outcome of one sluice run."""

    returncode: int
    output: str
    json: dict[str, Any] | None
    args: list[str] = field(default_factory=list)
    #: Frames written by each OpenFlow port's tx pcap (run_pcap_switch only).
    out: dict[int, list[Any]] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Any]:  # allows ``rc, out, js = run_sluice(...)``
        return iter((self.returncode, self.output, self.json))

    def drops(self) -> dict[str, int]:
        """Non-zero drop counters by reason."""
        assert self.json is not None, self.output
        return {k: v for k, v in self.json["drops"].items() if v}

    def _entry(self, section: str, key: str, n: int) -> dict[str, Any]:
        assert self.json is not None, self.output
        for e in self.json[section]:
            if e[key] == n:
                return dict(e)
        raise KeyError(n)

    def port(self, n: int) -> dict[str, Any]:
        """JSON counters of OpenFlow port @n."""
        return self._entry("ports", "port", n)

    def table(self, n: int) -> dict[str, Any]:
        """JSON counters of table @n."""
        return self._entry("tables", "table", n)


def run_sluice_raw(binary: Path, args: Sequence[str], timeout: float = 30.0,
                   prefix: str | None = None) -> tuple[int, str]:
    """Run sluice with @args verbatim (no EAL args added); returns (rc, stdout+stderr).
    @prefix: the DPDK file prefix whose runtime directory is removed afterwards."""
    proc = subprocess.Popen([str(binary), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    _live_pgids.add(proc.pid)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        out, _ = proc.communicate()
        raise AssertionError(
            f"sluice did not exit within {timeout} s: {args}\n{out.decode(errors='replace')}"
        ) from None
    finally:
        _live_pgids.discard(proc.pid)
        if prefix is not None:
            _cleanup_prefix(prefix)
    return proc.returncode, out.decode(errors="replace")


def _load_json(path: Path) -> dict[str, Any] | None:
    return dict(json.loads(path.read_text())) if path.exists() else None


def run_switch(binary: Path, workdir: Path, ports: Sequence[str],
               flows: Sequence[str] | None = None, flows_file: str | Path | None = None,
               duration: float = DEFAULT_DURATION, extra: Sequence[str] = ()) -> RunResult:
    """Run sluice for @duration seconds with the devargs @ports (OpenFlow ports 1..N in
    order), the flow/table-declaration lines @flows (written to a file in @workdir) or
    @flows_file, and the options @extra; no LOCAL port unless @extra has ``--local``.  The
    JSON output is parsed when the run wrote it."""
    prefix = unique_prefix("r")
    json_path = workdir / f"{prefix}.json"
    args: list[str] = []
    for p in ports:
        args += ["-p", p]
    if flows is not None:
        ff = workdir / f"{prefix}.flows"
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
    rc, out = run_sluice_raw(binary, args, timeout=duration + RUN_GRACE, prefix=prefix)
    return RunResult(rc, out, _load_json(json_path), args)


def run_pcap_switch(run: Callable[..., RunResult], workdir: Path, n_ports: int,
                    inputs: dict[int, Sequence[Any]], flows: Sequence[str],
                    duration: float = DEFAULT_DURATION, extra: Sequence[str] = (),
                    expect_rc: int | None = 0) -> RunResult:
    """A switch of pcap ports, run with @run (``run(ports, flows=, duration=, extra=)``).

    Port N (1-based) is ``net_pcapN-1``; it reads ``inputs[N]`` (scapy packets or bytes)
    when given and writes everything sent out of it to its own pcap, which is read back
    into ``result.out[N]``."""
    tag = unique_prefix("p")
    ports = []
    outs = {}
    for n in range(1, n_ports + 1):
        dev = f"net_pcap{n - 1}"
        if inputs.get(n):
            rx = workdir / f"{tag}-in{n}.pcap"
            write_pcap(rx, inputs[n])
            dev += f",rx_pcap={rx}"
        tx = workdir / f"{tag}-out{n}.pcap"
        outs[n] = tx
        dev += f",tx_pcap={tx}"
        ports.append(dev)
    res = run(ports, flows=flows, duration=duration, extra=extra)
    if expect_rc is not None:
        assert res.returncode == expect_rc, res.output
    for n, path in outs.items():
        res.out[n] = read_pcap(path) if path.exists() else []
    return res


def write_pcap(path: str | Path, frames: Sequence[Any]) -> None:
    """Write frames (scapy packets or raw bytes, runts included) as an Ethernet pcap."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
        for i, fr in enumerate(frames):
            b = bytes(fr)
            f.write(struct.pack("<IIII", 1, i, len(b), len(b)))
            f.write(b)


def read_pcap(path: str | Path) -> list[Any]:
    """Read a pcap written by a sluice port, as a list of scapy Ether packets (Raw for
    runts scapy cannot dissect).  Needs scapy."""
    from scapy.all import (  # type: ignore[import-untyped,import-not-found,attr-defined,unused-ignore]
        Ether,
        Raw,
        rdpcap,
    )

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
        self.proc = subprocess.Popen([str(binary), *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        _live_pgids.add(self.proc.pid)

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
            _live_pgids.discard(self.proc.pid)
            _cleanup_prefix(self.prefix)
        return RunResult(self.proc.returncode, out.decode(errors="replace"),
                         _load_json(self.json_path))

    def discard(self) -> None:
        """Kill the run if it is still going (by PID) and remove its runtime directory."""
        if self.alive():
            _kill(self.proc)
        _live_pgids.discard(self.proc.pid)
        _cleanup_prefix(self.prefix)


def start_background(binary: Path, workdir: Path, ports: Sequence[str], flows: Sequence[str],
                     duration: float) -> BackgroundSluice:
    """Start sluice in the background for @duration seconds with the devargs @ports and the
    flow lines @flows (written to a file in @workdir); no LOCAL port."""
    prefix = unique_prefix("bg")
    json_path = workdir / f"{prefix}.json"
    ff = workdir / f"{prefix}.flows"
    ff.write_text("\n".join(flows) + "\n")
    args: list[str] = []
    for p in ports:
        args += ["-p", p]
    args += ["-f", str(ff), "-d", str(duration), "-s", "0", "-q", "-j", str(json_path)]
    args += ["--no-local", "--", *eal_args(prefix)]
    return BackgroundSluice(binary, args, prefix, json_path, duration + RUN_GRACE)
