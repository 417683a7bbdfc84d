"""Mininet switch class for Sluice, like ofsoftswitch13's ``UserSwitch``.

    from mininet.net import Mininet
    from mininet.topo import SingleSwitchTopo
    from sluice.mininet import SluiceSwitch

    net = Mininet(topo=SingleSwitchTopo(2), switch=SluiceSwitch, controller=None)

The paper's hypercube with the FlexForward controller: ``HypercubeTopo`` (8 switches, h1 and h2
three links apart) and ``flexforward_config(net, mode, control_socket)`` for
``SLUICE_FF_CONFIG``; start ``python -m sluice.apps.run flexforward`` and give Mininet a
``RemoteController`` on its port (tests/test_mininet.py does).

Each switch is one Sluice process whose OpenFlow ports are the switch's Mininet interfaces in
port order (``net_af_packet`` vdevs, offloads off), with ``--dpid`` from Mininet, a ``-C
tcp:IP:PORT`` per controller (and ``-C ptcp:PORT`` when Mininet gives the switch a
``listenPort``), ``--name mn<pid>-<switch>`` (so ``sluicectl -n NAME`` and telemetry find it),
``--idle-sleep-max`` (default 200 us: many switches share the cores) and no hugepages.
Parameters: ``sluice_bin``, ``idle_sleep_max``, ``fail_mode`` (``secure`` by default,
``standalone`` for a learning switch when no controller is up, and with no controller at
all a table-miss flow to ``NORMAL`` before ``flows``), ``flows`` (startup flow lines),
``fwd_mode`` (``--fwd-mode``), ``mem_mb``, ``extra`` (more options).  Logs go to
``/tmp/<name>-sluice.log``.  ``stop()`` kills its process by PID.

Mininet's ``dpctl`` command (``switch.dpctl(*args)``) runs ``sluicectl -n NAME`` with
``ovs-ofctl``'s arguments minus the switch: ``dpctl dump-flows``, ``dpctl add-flow
priority=1,in_port=1,actions=output:2``, ``dpctl del-flows``, ``dpctl dump-ports``; a few
``ovs-ofctl`` and ofsoftswitch13 ``dpctl`` names sluicectl spells differently are mapped
(``DPCTL_ALIASES``: ``dump-ports-desc`` is ``show``, ...).  ``connected()`` asks the switch
(telemetry ``/sluice/info``) whether an OpenFlow controller connection is up; as for Mininet's
``OVSSwitch``, a switch in fail mode ``standalone`` counts as connected without one (it
forwards on its own), so ``Mininet(waitConnected=True)`` and ``net.waitConnected()`` work.

``mn --custom $(python3 -c 'import sluice.mininet as m; print(m.__file__)') --switch sluice``
picks the class from ``switches``.

Run Mininet in a network namespace of its own (``ip netns exec NS python3 ...``) and never
``mn -c``: it kills processes by name.  Several switches in one namespace are fine: the
AF_PACKET fanout group ids DPDK derives from PID and ifindex may collide, and Sluice then has
the kernel pick free ones (docs/user-guide.md, section 2).

This module needs Mininet (Debian ``mininet``, system Python); the rest of the package
does not import it.
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path
from typing import Any

from mininet.node import Switch  # type: ignore[import-not-found]
from mininet.topo import Topo  # type: ignore[import-not-found]

from sluice.telemetry import Telemetry, TelemetryError
from sluice.testing import sluice_binary, sluicectl_binary

#: ``ovs-ofctl`` (and ofsoftswitch13 ``dpctl``) commands that sluicectl names otherwise;
#: every other command goes to sluicectl as it is.
DPCTL_ALIASES = {
    "dump-ports-desc": "show",   # ovs-ofctl: sluicectl show lists the ports
    "features": "show",          # ofsoftswitch13 dpctl
    "port-desc": "show",
    "stats-flow": "dump-flows",
    "stats-port": "dump-ports",
    "stats-table": "dump-tables",
    "stats-group": "dump-groups",
    "stats-meter": "dump-meters",
    "meter-config": "dump-meters",
}
#: sluicectl options that take a value (so the value is not taken for the command).
_VALUE_OPTIONS = {"-O", "--timeout", "--interval", "--count", "--dir", "--file", "--bytes",
                  "--snaplen", "--hex"}


class SluiceSwitch(Switch):  # type: ignore[misc]
    """A Mininet switch run by Sluice."""

    dpidLen = 16

    def __init__(self, name: str, sluice_bin: str | None = None, idle_sleep_max: int = 200,
                 fail_mode: str = "secure", flows: list[str] | None = None,
                 fwd_mode: str | None = None, mem_mb: int = 64, extra: list[str] | None = None,
                 **params: Any) -> None:
        Switch.__init__(self, name, **params)
        self.sluice_bin = sluice_bin or str(sluice_binary())
        self.idle_sleep_max = idle_sleep_max
        self.fail_mode = fail_mode
        self.flows = flows
        self.fwd_mode = fwd_mode
        self.mem_mb = mem_mb
        self.extra = extra or []
        self.instance = f"mn{os.getpid() % 100000}-{name}"
        self.logfile = f"/tmp/{self.instance}-sluice.log"
        self.sluice_pid: int | None = None

    @classmethod
    def setup(cls) -> None:
        if not os.access(str(sluice_binary()), os.X_OK):
            raise RuntimeError(f"{sluice_binary()} not found: build Sluice first")

    def _command(self, controllers: list[Any]) -> str:
        intfs = sorted((i for i in self.intfList() if self.ports.get(i, 0) > 0),
                       key=lambda i: self.ports[i])
        args = [self.sluice_bin, "--name", self.instance, "--dpid", f"{int(self.dpid, 16):x}",
                "--fail-mode", self.fail_mode, "--idle-sleep-max", str(self.idle_sleep_max),
                "--mbufs", "2048", "-q", "-s", "0"]
        for c in controllers:
            args += ["-C", f"tcp:{c.IP()}:{c.port}"]
        if self.listenPort:
            args += ["-C", f"ptcp:{self.listenPort}"]
        flows = list(self.flows or [])
        if not controllers and self.fail_mode == "standalone":
            # Sluice's standalone mode stands in for a controller that is down; with none
            # configured, be what OVSSwitch is then: a learning switch (output:NORMAL).
            flows.insert(0, "priority=0,actions=NORMAL")
        if flows:
            path = f"/tmp/{self.instance}.flows"
            with open(path, "w") as f:
                f.write("\n".join(flows) + "\n")
            args += ["-f", path]
        if self.fwd_mode:
            args += ["--fwd-mode", self.fwd_mode]
        for n, intf in enumerate(intfs):
            args += ["-p", f"net_af_packet{n},iface={intf},framecnt=1024"]
        args += [*self.extra, "--", "--no-huge", "-m", str(self.mem_mb), "--no-pci",
                 "--lcores=0@0,1@1", "--log-level=lib.eal:error"]
        return " ".join(f"'{a}'" for a in args)

    def start(self, controllers: list[Any]) -> None:
        for intf in self.intfList():
            if self.ports.get(intf, 0) > 0:
                self.cmd(f"ethtool -K {intf} tx off rx off tso off gso off gro off")
        cmd = self._command(controllers)
        out = self.cmd(f"{cmd} > {self.logfile} 2>&1 & echo $!")
        self.sluice_pid = int(out.strip().split()[-1])
        deadline = time.monotonic() + 30
        while "sluice: name " not in self._log():
            if not os.path.exists(f"/proc/{self.sluice_pid}") or time.monotonic() > deadline:
                log = self._log()
                self._kill()
                raise RuntimeError(f"{self.name}: sluice did not start:\n{log[-2000:]}")
            time.sleep(0.1)

    def dpctl(self, *args: str) -> str:
        """Mininet's ``dpctl`` command: ``ovs-ofctl``'s arguments without the switch (the
        command and its arguments, options anywhere), run as ``sluicectl -n NAME ...``; returns
        what it printed (errors included)."""
        args_l = list(args)
        i = 0
        while i < len(args_l) and args_l[i].startswith("-"):
            i += 2 if args_l[i] in _VALUE_OPTIONS else 1
        if i < len(args_l):
            args_l[i] = DPCTL_ALIASES.get(args_l[i], args_l[i])
        ctl = sluicectl_binary(Path(self.sluice_bin))
        return str(self.cmd(" ".join(shlex.quote(a) for a in
                                     [str(ctl), "-n", self.instance, *args_l])))

    def connected(self) -> bool:
        """Whether the switch is up with an OpenFlow controller connection (telemetry
        /sluice/info's controllers_connected), or, as Mininet's OVSSwitch has it, in fail
        mode standalone (it forwards without a controller)."""
        if self.sluice_pid is None:
            return False
        try:
            with Telemetry(file_prefix=self.instance, timeout=2.0) as t:
                info = t.info()
        except (OSError, TelemetryError):
            return False  # not up (yet), or gone
        return info.get("controllers_connected", 0) > 0 or self.fail_mode == "standalone"

    def _log(self) -> str:
        try:
            with open(self.logfile, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def _kill(self) -> None:
        if self.sluice_pid is None:
            return
        try:
            os.kill(self.sluice_pid, 15)
            for _ in range(100):
                if not os.path.exists(f"/proc/{self.sluice_pid}"):
                    break
                time.sleep(0.05)
            else:
                os.kill(self.sluice_pid, 9)
        except ProcessLookupError:
            pass
        self.cmd("wait")  # reap it in the node's shell
        self.sluice_pid = None

    def stop(self, deleteIntfs: bool = True) -> None:
        self._kill()
        for path in (self.logfile, f"/tmp/{self.instance}.flows"):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        super().stop(deleteIntfs)


class HypercubeTopo(Topo):  # type: ignore[misc]
    """The FlexForward paper's topology: 2**dim switches s1.. in a hypercube (switch i+1 and
    switch (i ^ 2**b)+1 linked for every bit b), host h1 on s1 and h2 on the opposite corner
    (dim links apart)."""

    def build(self, dim: int = 3) -> None:
        n = 1 << dim
        sw = [self.addSwitch(f"s{i + 1}") for i in range(n)]
        for i in range(n):
            for b in range(dim):
                j = i ^ (1 << b)
                if i < j:
                    self.addLink(sw[i], sw[j])
        self.addLink(self.addHost("h1"), sw[0])
        self.addLink(self.addHost("h2"), sw[n - 1])


def flexforward_config(net: Any, mode: str, control: str, drain_ms: int = 50) -> dict[str, Any]:
    """The FlexForward controller's config (sluice.apps.flexforward) for a built Mininet
    network: expected switches and links, and where each host is attached."""
    hosts = []
    for h in net.hosts:
        intf = h.defaultIntf()
        link = intf.link
        peer = link.intf2 if link.intf1 is intf else link.intf1
        hosts.append({"name": h.name, "mac": h.MAC(), "ip": h.IP(),
                      "dpid": int(peer.node.dpid, 16), "port": peer.node.ports[peer]})
    n_links = sum(1 for lk in net.links
                  if isinstance(lk.intf1.node, Switch) and isinstance(lk.intf2.node, Switch))
    return {"switches": len(net.switches), "links": n_links, "mode": mode,
            "drain_ms": drain_ms, "control": control, "hosts": hosts}


#: For ``mn --custom .../sluice/mininet.py --switch sluice``.
switches = {"sluice": SluiceSwitch}
