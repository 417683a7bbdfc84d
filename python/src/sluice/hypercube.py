"""The FlexForward paper's emulated network, on one machine: 8 Sluice switches in a
3-cube (3 neighbours each), hosts A and B at maximum hop distance (3 links apart), and
the FlexForward controller (:mod:`sluice.apps.flexforward`).

    python -m sluice.hypercube up [--mode hypercube] [--idle-sleep-max 200] [--dir DIR]
    python -m sluice.hypercube status|mode MODE [--naive]|ping [-c N]|down [--dir DIR]

Built from network namespaces and veth pairs: A and B each live in a namespace of their
own (``eth0`` with 10.0.0.1/.2 and static ARP entries); switch-to-switch links are veth
pairs in the root namespace; every switch is one Sluice process with
``net_af_packet`` ports, a small ``-m``, its own ``--name`` (EAL file prefix, management
socket) and ``--lcores`` mapping its two threads onto the machine's cores (even
switches datapath on core 1, odd ones on core 0), with adaptive idle sleep.  Every
name carries this process's PID.  The port order on each switch is shuffled, so the
controller must really discover the wiring.  ``up`` writes ``state.json`` in its
directory; ``down`` stops the processes it lists (by PID) and deletes the links and
namespaces it lists.  From Python: ``with Hypercube(...) as hc: hc.ping(...)``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sluice import testing
from sluice.flexforward import control_request

N_SWITCHES = 8
DIM = 3
#: Hosts: (name, switch index, IP, MAC).  Byte 4 of the MACs is not a mode tag.
HOSTS = [("A", 0, "10.0.0.1", "02:00:00:00:aa:01"), ("B", 7, "10.0.0.2", "02:00:00:00:bb:02")]


def _run(cmd: Sequence[str], netns: str | None = None, check: bool = True) -> str:
    full = (["ip", "netns", "exec", netns] if netns else []) + list(cmd)
    r = subprocess.run(full, capture_output=True, text=True, timeout=60)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(full)}: {r.stderr.strip()}")
    return r.stdout


@dataclass
class State:
    """What ``up`` created (enough for ``down`` in another process)."""

    dir: str
    tag: str
    netns: dict[str, str] = field(default_factory=dict)     # host name -> namespace
    links: list[str] = field(default_factory=list)          # root-namespace veth ends
    pids: dict[str, int] = field(default_factory=dict)      # "s0".."s7", "ctl" -> pid
    names: dict[str, str] = field(default_factory=dict)     # "s0".. -> sluice --name
    control: str = ""
    ofp_port: int = 0

    def save(self) -> None:
        Path(self.dir, "state.json").write_text(json.dumps(self.__dict__, indent=1))

    @classmethod
    def load(cls, d: str) -> State:
        return cls(**json.loads(Path(d, "state.json").read_text()))


class Hypercube:
    """Build, drive and tear down the emulated hypercube (a context manager)."""

    def __init__(self, mode: str = "openflow", idle_sleep_max: int = 200,
                 workdir: str | None = None, drain_ms: int = 50,
                 sluice_bin: Path | None = None, extra: Sequence[str] = ()) -> None:
        self.mode = mode
        self.idle_sleep_max = idle_sleep_max
        self.drain_ms = drain_ms
        self.bin = Path(sluice_bin or testing.sluice_binary())
        self.extra = list(extra)
        #: A directory of our own (no @workdir) is removed by down(), logs included.
        self.own_dir = workdir is None
        d = workdir or tempfile.mkdtemp(prefix=f"sluice-hc{os.getpid()}-")
        os.makedirs(d, exist_ok=True)
        self.state = State(dir=d, tag=f"hc{os.getpid() % 100000}")
        #: Control links: /30s in 10.X.Y.0/24, X.Y from the PID (parallel runs differ).
        self.net = f"10.{200 + os.getpid() % 50}.{os.getpid() // 50 % 256}"
        #: switch index -> {OpenFlow port: peer switch index or host name}
        self.wiring: dict[int, dict[int, int | str]] = {}

    # -- building --------------------------------------------------------------

    def up(self, timeout: float = 60.0) -> None:
        try:
            self._build()
            self.wait_ready(timeout)
        except BaseException:
            self.down()
            raise

    def _veth(self, a: str, b: str) -> None:
        _run(["ip", "link", "add", a, "type", "veth", "peer", "name", b])
        self.state.links.append(a)
        self.state.save()
        for n in (a, b):
            _run(["sysctl", "-q", "-w", f"net.ipv6.conf.{n}.disable_ipv6=1"], check=False)

    def _up_if(self, name: str, netns: str | None = None) -> None:
        _run(["ip", "link", "set", name, "up"], netns)
        _run(["ethtool", "-K", name, "tx", "off", "rx", "off", "tso", "off", "gso", "off",
              "gro", "off"], netns, check=False)

    def _build(self) -> None:
        st = self.state
        rng = random.Random(8)
        # One namespace per switch: AF_PACKET fanout group ids are per namespace, and
        # DPDK derives them from the PID and ifindex, which collide across processes.
        for i in range(N_SWITCHES):
            ns = f"{st.tag}s{i}"
            _run(["ip", "netns", "add", ns])
            st.netns[f"s{i}"] = ns
            st.save()
            _run(["ip", "link", "set", "lo", "up"], ns)
            _run(["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"], ns, check=False)
            # Control link to the controller in the root namespace.
            a, z = f"{st.tag}m{i}a", f"{st.tag}m{i}b"
            self._veth(a, z)
            _run(["ip", "link", "set", z, "netns", ns])
            _run(["ip", "addr", "add", f"{self.net}.{i * 4 + 1}/30", "dev", a])
            _run(["ip", "addr", "add", f"{self.net}.{i * 4 + 2}/30", "dev", z], ns)
            _run(["ip", "link", "set", a, "up"])
            _run(["ip", "link", "set", z, "up"], ns)
        ports: dict[int, list[tuple[str, int | str]]] = {i: [] for i in range(N_SWITCHES)}
        k = 0
        for i in range(N_SWITCHES):
            for b in range(DIM):
                j = i ^ (1 << b)
                if i < j:
                    a, z = f"{st.tag}l{k}a", f"{st.tag}l{k}b"
                    k += 1
                    self._veth(a, z)
                    for end, sw in ((a, i), (z, j)):
                        _run(["ip", "link", "set", end, "netns", st.netns[f"s{sw}"]])
                        self._up_if(end, st.netns[f"s{sw}"])
                    ports[i].append((a, j))
                    ports[j].append((z, i))
        for i in range(N_SWITCHES):
            rng.shuffle(ports[i])
        hosts_cfg = []
        for name, sw, ip, mac in HOSTS:
            ns = f"{st.tag}{name.lower()}"
            _run(["ip", "netns", "add", ns])
            st.netns[name] = ns
            st.save()
            _run(["ip", "link", "set", "lo", "up"], ns)
            _run(["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"], ns, check=False)
            a, z = f"{st.tag}h{name.lower()}", f"{st.tag}h{name.lower()}p"
            self._veth(a, z)
            _run(["ip", "link", "set", z, "netns", ns])
            _run(["ip", "link", "set", z, "name", "eth0"], ns)
            _run(["ip", "link", "set", "eth0", "address", mac], ns)
            _run(["ip", "addr", "add", f"{ip}/24", "dev", "eth0"], ns)
            self._up_if("eth0", ns)
            _run(["ip", "link", "set", a, "netns", st.netns[f"s{sw}"]])
            self._up_if(a, st.netns[f"s{sw}"])
            ports[sw].append((a, name))
            hosts_cfg.append({"name": name, "mac": mac, "ip": ip, "dpid": sw + 1,
                              "port": len(ports[sw])})
        for name, _sw, _ip, _mac in HOSTS:
            for other, _s, oip, omac in HOSTS:
                if other != name:
                    _run(["ip", "neigh", "replace", oip, "lladdr", omac, "dev", "eth0",
                          "nud", "permanent"], st.netns[name])
        for i in range(N_SWITCHES):
            self.wiring[i] = {p + 1: peer for p, (_if, peer) in enumerate(ports[i])}

        # The controller.
        st.ofp_port = testing.free_tcp_port()
        st.control = os.path.join(st.dir, "ctl.sock")
        cfg = {"switches": N_SWITCHES, "links": N_SWITCHES * DIM // 2, "mode": self.mode,
               "drain_ms": self.drain_ms, "control": st.control, "hosts": hosts_cfg}
        Path(st.dir, "controller.json").write_text(json.dumps(cfg, indent=1))
        env = dict(os.environ, SLUICE_FF_CONFIG=os.path.join(st.dir, "controller.json"),
                   PYTHONPATH=str(testing.REPO / "python" / "src"))
        st.pids["ctl"] = self._spawn("ctl", [sys.executable, "-m", "sluice.apps.run",
                                             "--ofp-tcp-listen-port", str(st.ofp_port),
                                             "--ofp-listen-host", "0.0.0.0", "flexforward"],
                                     env)
        testing.wait_until(lambda: testing.tcp_listening(st.ofp_port), 30, "the controller")

        # The switches.
        for i in range(N_SWITCHES):
            name = f"{st.tag}s{i}"
            st.names[f"s{i}"] = name
            args = ["ip", "netns", "exec", st.netns[f"s{i}"], str(self.bin), "--name", name,
                    "--dpid", f"{i + 1:x}",
                    "--fail-mode", "secure", "-C", f"tcp:{self.net}.{i * 4 + 1}:{st.ofp_port}",
                    "--idle-sleep-max", str(self.idle_sleep_max), "--mbufs", "2048",
                    "-q", "-s", "0", *self.extra]
            for n, (ifname, _peer) in enumerate(ports[i]):
                args += ["-p", f"net_af_packet{n},iface={ifname},framecnt=2048"]
            lcores = "0@0,1@1" if i % 2 == 0 else "0@1,1@0"
            args += ["--", "--no-huge", "-m", "64", "--no-pci", f"--lcores={lcores}",
                     "--log-level=lib.eal:error"]
            st.pids[f"s{i}"] = self._spawn(f"s{i}", args)

    def _spawn(self, tag: str, cmd: Sequence[str], env: dict[str, str] | None = None) -> int:
        log = open(os.path.join(self.state.dir, f"{tag}.log"), "w")
        p = subprocess.Popen(list(cmd), stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True, env=env)
        log.close()
        self.state.pids[tag] = p.pid
        self.state.save()
        return p.pid

    # -- driving ------------------------------------------------------------------

    def control(self, req: dict[str, Any], timeout: float = 60.0) -> dict[str, Any]:
        """One request to the controller's control socket."""
        return control_request(self.state.control, req, timeout)

    def status(self) -> dict[str, Any]:
        return self.control({"cmd": "status"})

    def wait_ready(self, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        last: dict[str, Any] = {}
        while time.monotonic() < deadline:
            for tag, pid in self.state.pids.items():
                if not _alive(pid):
                    raise RuntimeError(f"{tag} exited:\n" + self.log(tag)[-3000:])
            with contextlib.suppress(OSError, ValueError):
                last = self.status()
                if last.get("ready"):
                    return last
                if last.get("errors"):
                    raise RuntimeError(f"controller errors: {last['errors']}")
            time.sleep(0.2)
        raise TimeoutError(f"fabric not ready after {timeout} s: {last}\n"
                           + self.log("ctl")[-3000:])

    def set_mode(self, mode: str, naive: bool = False) -> dict[str, Any]:
        rep = self.control({"cmd": "mode", "mode": mode, "naive": naive})
        if "error" in rep:
            raise RuntimeError(f"mode {mode}: {rep['error']}")
        return rep

    def log(self, tag: str) -> str:
        with contextlib.suppress(OSError):
            return Path(self.state.dir, f"{tag}.log").read_text(errors="replace")
        return ""

    def netns(self, host: str) -> str:
        return self.state.netns[host]

    def exec(self, host: str, cmd: Sequence[str], timeout: float = 120.0,
             check: bool = False) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["ip", "netns", "exec", self.netns(host), *cmd],
                              capture_output=True, text=True, timeout=timeout, check=check)

    def popen(self, host: str, cmd: Sequence[str]) -> subprocess.Popen[str]:
        return subprocess.Popen(["ip", "netns", "exec", self.netns(host), *cmd],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)

    def ping(self, src: str = "A", dst: str = "B", count: int = 3, interval: float = 0.2,
             timeout: float = 60.0) -> tuple[int, int, list[float]]:
        """(sent, received, RTTs in ms) of ``ping`` from host @src to @dst."""
        ip = next(h[2] for h in HOSTS if h[0] == dst)
        r = self.exec(src, ["ping", "-n", "-c", str(count), "-i", str(interval), "-W", "1", ip],
                      timeout=timeout)
        return parse_ping(r.stdout)

    def telemetry(self, switch: int, cmd: str) -> dict[str, Any]:
        """One telemetry command on switch @switch (0..7)."""
        from sluice.telemetry import Telemetry

        with Telemetry(file_prefix=self.state.names[f"s{switch}"], connect_timeout=5) as t:
            reply: dict[str, Any] = t.call(cmd)
            return reply

    def fwd_stats(self) -> dict[int, dict[str, Any]]:
        """/sluice/fwd of every switch."""
        return {i: self.telemetry(i, "/sluice/fwd") for i in range(N_SWITCHES)}

    def switch_pids(self) -> list[int]:
        return [p for t, p in self.state.pids.items() if t.startswith("s")]

    def down(self) -> None:
        down(self.state)
        if self.own_dir:
            shutil.rmtree(self.state.dir, ignore_errors=True)

    def __enter__(self) -> Hypercube:
        self.up()
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()


def parse_ping(out: str) -> tuple[int, int, list[float]]:
    """(sent, received, RTTs ms) from ping output (RTTs only without -q)."""
    import re

    m = re.search(r"(\d+) packets transmitted, (\d+) (?:packets )?received", out)
    rtts = [float(x) for x in re.findall(r"time=([\d.]+) ms", out)]
    return (int(m.group(1)), int(m.group(2)), rtts) if m else (0, 0, rtts)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.split(")")[-1].split()[0] == "Z":
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            return False
    return True


def down(st: State) -> None:
    """Stop what @st lists (switches first, by PID and process group), remove links and
    namespaces.  Never raises."""
    order = sorted(st.pids, key=lambda t: t == "ctl")
    for tag in order:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(st.pids[tag], signal.SIGTERM)
    deadline = time.monotonic() + 10
    for tag in order:
        # sluice.apps.run does not always exit on SIGTERM (os-ken's server threads): the
        # controller gets 2 s, the switches (which must clean up DPDK state) the rest.
        if tag == "ctl":
            deadline = min(deadline, time.monotonic() + 2)
        while _alive(st.pids[tag]) and time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(st.pids[tag], os.WNOHANG)
            time.sleep(0.05)
        if _alive(st.pids[tag]):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(st.pids[tag], signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(st.pids[tag], 0)
    for link in reversed(st.links):
        _run(["ip", "link", "del", link], check=False)
    for ns in st.netns.values():
        _run(["ip", "netns", "del", ns], check=False)
    for name in st.names.values():
        with contextlib.suppress(OSError):
            os.unlink(testing.mgmt_dir() / f"{name}.mgmt")
    st.pids.clear()
    st.links.clear()
    st.netns.clear()
    with contextlib.suppress(OSError):
        st.save()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sluice.hypercube", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=["up", "down", "status", "mode", "ping"])
    ap.add_argument("arg", nargs="?")
    ap.add_argument("--dir", default="/tmp/sluice-hypercube",
                    help="state directory (default /tmp/sluice-hypercube)")
    ap.add_argument("--mode", default="openflow", help="initial mode (up)")
    ap.add_argument("--idle-sleep-max", type=int, default=200, help="us (up; default 200)")
    ap.add_argument("--naive", action="store_true", help="mode: switch all at once")
    ap.add_argument("-c", "--count", type=int, default=5, help="ping count")
    a = ap.parse_args(argv)
    if a.cmd == "up":
        if Path(a.dir, "state.json").exists() and State.load(a.dir).pids:
            print(f"{a.dir} is in use: run down first", file=sys.stderr)
            return 2
        hc = Hypercube(a.mode, a.idle_sleep_max, a.dir)
        hc.up()
        print(json.dumps(hc.status()))
        return 0
    try:
        st = State.load(a.dir)
    except OSError:
        print(f"no hypercube in {a.dir}", file=sys.stderr)
        return 2
    if a.cmd == "down":
        down(st)
        return 0
    hc = Hypercube(workdir=a.dir)
    hc.state = st
    if a.cmd == "status":
        print(json.dumps(hc.status()))
    elif a.cmd == "mode":
        if not a.arg:
            print("mode needs a MODE", file=sys.stderr)
            return 2
        print(json.dumps(hc.set_mode(a.arg, a.naive)))
    else:
        sent, recv, rtts = hc.ping(count=a.count)
        print(f"{recv}/{sent} replies, RTT ms {rtts}")
        return 0 if recv == sent else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
