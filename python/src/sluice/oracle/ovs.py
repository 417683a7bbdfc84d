"""A private Open vSwitch for the oracle: ovsdb-server and ovs-vswitchd (the plain build,
``--enable-dummy=override``) in a run directory and network namespace of their own, one
bridge ``br0`` on the userspace datapath (``datapath_type=netdev``) whose OpenFlow ports
1..N are netdev-dummy ports.

- Frames go in with ``ovs-appctl netdev-dummy/receive pN HEX...`` (32 per call, see
  _RECEIVE_FRAMES) and come out in each port's ``options:tx_pcap`` file, written and flushed
  as the datapath sends.
- The bridge is in fail mode secure, speaks OpenFlow 1.3 only, and connects to a controller
  on a Unix socket inside the run directory (``set_controller``; OVS refuses Unix targets
  elsewhere, and takes passive ones as service connections, which get no packet-ins).
- ``other_config:vlan-limit=0`` lets OVS parse two VLAN tags (its default, 1, stops at the
  first and sees the second tag's TPID as the EtherType); one handler and one revalidator
  thread on a 2-core machine.
- ``purge()`` (``revalidator/purge``) drops every datapath flow, so a new rule set never
  meets megaflows of the old one.
- Megaflows are off (``upcall/disable-megaflows``): every datapath flow matches one flow
  key exactly.  OVS 3.1 translates an action that changes part of an MPLS label stack
  entry (set_mpls_ttl, dec_mpls_ttl, set_field on mpls_label or mpls_tc) into a datapath
  ``set(mpls(lse=...))`` of the whole entry but unwildcards only the part it changed, so
  a later packet that differs in the rest (another label, TC or TTL) reuses the megaflow
  and leaves with the first packet's entry.  The oracle compares OpenFlow semantics, not
  the flow cache; exact-match flows take that bug (and the order of the packets) out.

Everything is stopped by PID; the namespace and run directory are removed.  Nothing talks
to a system OVS: every command gets the private socket paths explicitly, and
OVS_RUNDIR/OVS_DBDIR/OVS_LOGDIR/OVS_SYSCONFDIR point into the run directory.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence

from sluice.testing import Proc, unique

OVS_SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
OVS_PKGDATADIR = "/usr/share/openvswitch"
#: The non-DPDK ovs-vswitchd of Debian's openvswitch-switch (``/usr/sbin/ovs-vswitchd`` is an
#: alternatives link that may point at the DPDK build, which also works).
OVS_VSWITCHD_PLAIN = "/usr/lib/openvswitch-switch/ovs-vswitchd"
OVS_TOOLS = ("ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-ofctl", "ovs-appctl")
OVS_PACKAGE = "openvswitch-switch"
#: Bytes of hex per ovs-appctl call (unixctl requests are JSON; stay well below limits).
_RECEIVE_CHUNK = 60_000
#: Frames per netdev-dummy/receive call.  A dummy rx queue holds 100 frames
#: (NETDEV_DUMMY_MAX_QUEUE, more are dropped silently) and the main thread, which also
#: serves unixctl, takes up to 32 (NETDEV_MAX_BURST) from each queue per loop; one call is
#: one loop, so 32 per call never overflows.
_RECEIVE_FRAMES = 32


def vswitchd_path() -> str | None:
    if os.access(OVS_VSWITCHD_PLAIN, os.X_OK):
        return OVS_VSWITCHD_PLAIN
    return shutil.which("ovs-vswitchd")


def ovs_missing() -> str | None:
    """What of Open vSwitch is not installed (None: all of it is)."""
    missing = [] if vswitchd_path() else ["ovs-vswitchd"]
    missing += [t for t in OVS_TOOLS if shutil.which(t) is None]
    if not os.path.exists(OVS_SCHEMA):
        missing.append(OVS_SCHEMA)
    return ", ".join(missing) if missing else None


class OvsError(RuntimeError):
    """A command of the private OVS failed (the message holds its stderr and log tail)."""


class OvsDummySwitch:
    """start(), then use; stop() always (also after a failed start).

    @controller names the Unix socket OVS connects to as its controller, inside the run
    directory (OVS refuses Unix controllers elsewhere); the full path is ``controller``
    after construction.  @workdir holds the run directory (made here, removed by stop()).
    """

    def __init__(self, workdir: str, n_ports: int, controller: str,
                 netns: bool = True) -> None:
        self.tag = unique("ovo")
        self.n_ports = n_ports
        self.run = os.path.join(workdir, f"{self.tag}-ovs")
        os.makedirs(self.run)
        self.controller = os.path.join(self.run, controller)
        self.env = {**os.environ, "OVS_RUNDIR": self.run, "OVS_DBDIR": self.run,
                    "OVS_LOGDIR": self.run, "OVS_SYSCONFDIR": self.run,
                    "OVS_PKGDATADIR": OVS_PKGDATADIR}
        self.netns: str | None = self.tag if netns else None
        self._netns_added = False
        self.procs: list[Proc] = []
        self.db = f"unix:{os.path.join(self.run, 'db.sock')}"
        self.tx_pcaps = {p: os.path.join(self.run, f"p{p}-tx.pcap")
                         for p in range(1, n_ports + 1)}

    # -- paths ------------------------------------------------------------------

    @property
    def target(self) -> str:
        """br0's management socket (for ovs-ofctl)."""
        return f"unix:{self.run}/br0.mgmt"

    @property
    def ctl(self) -> str:
        return os.path.join(self.run, "vswitchd.ctl")

    def log_tail(self, n: int = 20) -> str:
        """ovs-vswitchd's last warnings and errors (for error messages)."""
        try:
            with open(os.path.join(self.run, "vswitchd.log")) as f:
                text = f.read()
        except OSError:
            text = ""
        out = self.procs[-1].output if self.procs else ""
        lines = [ln for ln in (text + "\n" + out).splitlines()
                 if re.search(r"\|(ERR|WARN|EMER)\|", ln)]
        return "\n".join(lines[-n:])

    # -- lifecycle --------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> None:
        """Database, daemon, bridge, ports and controller; raises OvsError when any part
        does not come up within @timeout."""
        vswitchd = vswitchd_path()
        if vswitchd is None:
            raise OvsError("ovs-vswitchd not installed")
        if self.netns is not None:
            subprocess.run(["ip", "netns", "add", self.netns], check=True, capture_output=True)
            self._netns_added = True
        db, sock = os.path.join(self.run, "conf.db"), os.path.join(self.run, "db.sock")
        subprocess.run(["ovsdb-tool", "create", db, OVS_SCHEMA], check=True,
                       capture_output=True)
        self.procs.append(Proc(["ovsdb-server", db, f"--remote=punix:{sock}",
                                f"--unixctl={self.run}/ovsdb.ctl", "--no-chdir",
                                f"--log-file={self.run}/ovsdb.log", "-vconsole:off"],
                               netns=self.netns, env=self.env, name="ovsdb-server"))
        self._wait(lambda: os.path.exists(sock), timeout, "ovsdb-server's socket")
        self.vsctl("--no-wait", "init", "--", "set", "Open_vSwitch", ".",
                   "other_config:vlan-limit=0", "other_config:n-handler-threads=1",
                   "other_config:n-revalidator-threads=1")
        self.procs.append(Proc([vswitchd, self.db, "--enable-dummy=override",
                                f"--unixctl={self.ctl}", "--no-chdir",
                                f"--log-file={self.run}/vswitchd.log", "-vconsole:off"],
                               netns=self.netns, env=self.env, name="ovs-vswitchd"))
        self._wait(lambda: os.path.exists(self.ctl), timeout, "ovs-vswitchd's control socket")
        cmd = ["add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
               "protocols=OpenFlow13", "fail_mode=secure",
               "other_config:datapath-id=00000000000000aa"]
        for p in range(1, self.n_ports + 1):
            cmd += ["--", "add-port", "br0", f"p{p}", "--", "set", "Interface", f"p{p}",
                    "type=dummy", f"ofport_request={p}", f"options:tx_pcap={self.tx_pcaps[p]}"]
        self.vsctl(*cmd, timeout=timeout)
        for p in range(1, self.n_ports + 1):
            ofport = self.vsctl("get", "Interface", f"p{p}", "ofport").strip()
            if ofport != str(p):
                raise OvsError(f"OVS port p{p} got ofport {ofport}\n{self.log_tail()}")
        self.vsctl("set-controller", "br0", f"unix:{self.controller}", "--", "set",
                   "controller", "br0", "inactivity_probe=0", "max_backoff=1000")
        # Exact-match datapath flows only (see the module doc: megaflows and MPLS).
        self.appctl("upcall/disable-megaflows")

    def _wait(self, pred: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not pred():
            if any(not p.alive() for p in self.procs):
                dead = [p for p in self.procs if not p.alive()][0]
                raise OvsError(f"{dead.name} exited ({dead.proc.returncode}):\n{dead.output}\n"
                               f"{self.log_tail()}")
            if time.monotonic() > deadline:
                raise OvsError(f"no {what} after {timeout} s\n{self.log_tail()}")
            time.sleep(0.05)

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.stop(timeout=10)
        self.procs.clear()
        if self._netns_added and self.netns is not None:
            subprocess.run(["ip", "netns", "del", self.netns], check=False, capture_output=True)
            self._netns_added = False
        shutil.rmtree(self.run, ignore_errors=True)

    # -- commands ---------------------------------------------------------------

    def _cmd(self, cmd: Sequence[str], timeout: float) -> str:
        r = subprocess.run(list(cmd), check=False, capture_output=True, text=True,
                           timeout=timeout, env=self.env)
        if r.returncode != 0:
            raise OvsError(f"{' '.join(cmd[:4])} ... failed ({r.returncode}): "
                           f"{r.stderr.strip()}\n{self.log_tail(5)}")
        return r.stdout

    def vsctl(self, *args: str, timeout: float = 30) -> str:
        return self._cmd(["ovs-vsctl", f"--db={self.db}", f"--timeout={int(timeout)}", *args],
                         timeout + 5)

    def appctl(self, *args: str, timeout: float = 30) -> str:
        return self._cmd(["ovs-appctl", "-t", self.ctl, f"--timeout={int(timeout)}", *args],
                         timeout + 5)

    def inject(self, port: int, frames: Sequence[bytes]) -> None:
        """Hand @frames to OpenFlow port @port as if received (in order)."""
        batch: list[str] = []
        size = 0
        for f in frames:
            h = f.hex()
            if batch and (size + len(h) > _RECEIVE_CHUNK or len(batch) == _RECEIVE_FRAMES):
                self.appctl("netdev-dummy/receive", f"p{port}", *batch)
                batch, size = [], 0
            batch.append(h)
            size += len(h)
        if batch:
            self.appctl("netdev-dummy/receive", f"p{port}", *batch)

    def purge(self) -> None:
        """Delete every datapath flow (the next packets are upcalls against the new tables)."""
        self.appctl("revalidator/purge")

    def controller_connected(self) -> bool:
        return self.vsctl("get", "controller", "br0", "is_connected").strip() == "true"
