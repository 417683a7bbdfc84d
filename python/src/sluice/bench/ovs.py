"""Open vSwitch with its DPDK (netdev) datapath as a benchmark contender, shared by
``bench/run forwarding`` and ``bench/run decomposition``.

BENCH-NOTES' recipe: a private ovsdb-server and ``ovs-vswitchd-dpdk`` (run by path) with their
own run dir, in a network namespace of their own (the netdev datapath owns a tap named
``ovs-netdev``, which another userspace OVS may hold), no hugepages
(``dpdk-extra="--no-huge -m N --legacy-mem ..."``: OVS adds ``--in-memory`` otherwise, which
DPDK rejects with ``--no-huge``), the PMD on core 1, everything else on core 0, one bridge
``br0`` (``datapath_type=netdev``, OpenFlow 1.3, fail mode secure) whose rules come through
``ovs-ofctl -O OpenFlow13``.

Memory: OVS sizes its shared mbuf pool itself, not from ``-m``: MAX_NB_MBUF (262,144 mbufs)
for an MTU of 1,500 (halved until it fits; ``per-port-memory`` gives fewer); ``-m`` only has to
hold that pool (~0.6 GB) and the rest of DPDK's heap.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence

from sluice.telemetry import runtime_dir
from sluice.testing import Proc, unique

OVS_VSWITCHD_DPDK = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
OVS_SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
#: Programs the contender needs besides ovs-vswitchd-dpdk.
OVS_TOOLS = ("ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-ofctl", "ovs-appctl")
OVS_PACKAGE = "openvswitch-switch-dpdk"
#: The most mbufs OVS 3.1 gives its shared pool at MTU 1,500 (MAX_NB_MBUF = 4096 * 64 in
#: lib/netdev-dpdk.c); the whole pool, whatever dpdk-extra's -m.
OVS_MAX_MBUFS = 4096 * 64


def ovs_missing() -> str | None:
    """What of OVS-DPDK is not installed (None: all of it is)."""
    missing = [p for p in (OVS_VSWITCHD_DPDK, OVS_SCHEMA) if not os.path.exists(p)]
    missing += [t for t in OVS_TOOLS if shutil.which(t) is None]
    return ", ".join(missing) if missing else None


def ensure_ovs(install: bool, log: Callable[[str], None] = print) -> str | None:
    """Make OVS-DPDK available: apt-get update and install openvswitch-switch-dpdk when it is
    missing and @install (root only).  Returns None when it is usable, else why not."""
    missing = ovs_missing()
    if missing is None:
        return None
    if not install:
        return f"not installed ({missing})"
    if os.geteuid() != 0:
        return f"not installed ({missing}) and not root: apt-get install {OVS_PACKAGE}"
    if shutil.which("apt-get") is None:
        return f"not installed ({missing}) and no apt-get"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    log(f"   installing {OVS_PACKAGE} (apt-get update; apt-get install)")
    try:
        up = subprocess.run(["apt-get", "update", "-qq"], check=False, capture_output=True,
                            text=True, timeout=900, env=env)
        r = subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                            OVS_PACKAGE], check=False, capture_output=True, text=True,
                           timeout=900, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"apt-get install {OVS_PACKAGE} failed: {e}"
    missing = ovs_missing()
    if missing is None:
        return None
    err = (r.stderr.strip() or r.stdout.strip() or up.stderr.strip()).splitlines()
    return (f"apt-get install {OVS_PACKAGE} failed (exit {r.returncode}"
            f"{', apt-get update exit ' + str(up.returncode) if up.returncode else ''}): "
            f"{err[-1] if err else 'no output'}; still missing: {missing}")


def ovs_available(install: bool, log: Callable[[str], None] = print) -> bool:
    """Open vSwitch with its DPDK datapath; apt-get installs it when asked (root only)."""
    why = ensure_ovs(install, log)
    if why is not None:
        log(f"   Open vSwitch-DPDK unavailable: {why}")
    return why is None


class OvsSwitch:
    """ovsdb-server + ovs-vswitchd-dpdk in a private run dir (under @tmp) and network namespace;
    start(), then bridge() with the ports and rules, stop() (by PID) at the end."""

    def __init__(self, tmp: str, tag: str | None = None, mem_mb: int = 1024,
                 lcore_mask: str = "0x1", pmd_mask: str = "0x2") -> None:
        self.tag = tag or unique("ovs")
        self.tmp = tmp
        self.mem_mb = mem_mb
        self.lcore_mask = lcore_mask
        self.pmd_mask = pmd_mask
        self.run = os.path.join(tmp, self.tag + "-ovs")
        self.env = {**os.environ, "OVS_RUNDIR": self.run, "OVS_DBDIR": self.run,
                    "OVS_LOGDIR": self.run}
        self.netns = self.tag
        self.procs: list[Proc] = []
        self.db = f"unix:{os.path.join(self.run, 'db.sock')}"
        self.vsctl_cmd = ["ovs-vsctl", f"--db={self.db}", "--timeout=120"]
        self._netns_added = False

    @property
    def target(self) -> str:
        """br0's OpenFlow management socket (for ovs-ofctl)."""
        return f"unix:{self.run}/br0.mgmt"

    @property
    def log_tail(self) -> str:
        """ovs-vswitchd's last warnings, errors and DPDK messages (for error messages)."""
        text = ""
        try:
            with open(os.path.join(self.run, "vswitchd.log")) as f:
                text = f.read()
        except OSError:
            pass
        out = self.procs[-1].output if self.procs else ""
        lines = [ln for ln in (text + "\n" + out).splitlines()
                 if re.search(r"\|(ERR|WARN|EMER)\||dpdk|pcap|EAL", ln)]
        return "\n".join(lines[-20:])

    def start(self) -> None:
        os.makedirs(self.run)
        subprocess.run(["ip", "netns", "add", self.netns], check=True, capture_output=True)
        self._netns_added = True
        db, sock = os.path.join(self.run, "conf.db"), os.path.join(self.run, "db.sock")
        subprocess.run(["ovsdb-tool", "create", db, OVS_SCHEMA], check=True, capture_output=True)
        self.procs.append(Proc(["ovsdb-server", db, f"--remote=punix:{sock}",
                                f"--unixctl={self.run}/ovsdb.ctl", "--no-chdir"],
                               netns=self.netns, env=self.env, name="ovsdb-server"))
        deadline = time.monotonic() + 20
        while not os.path.exists(sock):
            if time.monotonic() > deadline:
                raise RuntimeError(f"ovsdb-server did not start:\n{self.procs[0].output}")
            time.sleep(0.05)
        extra = (f"--no-huge -m {self.mem_mb} --legacy-mem --no-pci --file-prefix={self.tag} "
                 "--log-level=lib.eal:error")
        self.vsctl("--no-wait", "init", "--", "set", "Open_vSwitch", ".",
                   "other_config:dpdk-init=true", f"other_config:dpdk-extra={extra}",
                   f"other_config:dpdk-lcore-mask={self.lcore_mask}",
                   f"other_config:pmd-cpu-mask={self.pmd_mask}")
        self.procs.append(Proc([OVS_VSWITCHD_DPDK, self.db, f"--unixctl={self.run}/vswitchd.ctl",
                                "--no-chdir", f"--log-file={self.run}/vswitchd.log"],
                               netns=self.netns, env=self.env, name="ovs-vswitchd"))

    def vsctl(self, *args: str, timeout: float = 180) -> str:
        r = subprocess.run([*self.vsctl_cmd, *args], check=False, capture_output=True, text=True,
                           env=self.env, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"ovs-vsctl {' '.join(args[:3])} failed: {r.stderr.strip()}\n"
                               f"{self.log_tail}")
        return r.stdout

    def ofctl(self, *args: str, timeout: float = 300) -> str:
        r = subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", args[0], self.target, *args[1:]],
                           check=False, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"ovs-ofctl {args[0]} failed: {r.stderr.strip()}")
        return r.stdout

    def appctl(self, *args: str, timeout: float = 60) -> str:
        r = subprocess.run(["ovs-appctl", "-t", f"{self.run}/vswitchd.ctl", *args],
                           check=False, capture_output=True, text=True, timeout=timeout,
                           env=self.env)
        if r.returncode != 0:
            raise RuntimeError(f"ovs-appctl {args[0]} failed: {r.stderr.strip()}")
        return r.stdout

    def bridge(self, ports: Sequence[str], flows: Sequence[str], groups: Sequence[str] = (),
               n_rxq: int = 1) -> None:
        """br0 with its groups and @flows (ovs-ofctl syntax, no Sluice table declarations)
        installed before its DPDK ports (OpenFlow ports 1, 2, ... in order of @ports), so no
        frame meets an empty table; raises when a port fails to come up (OVS records it in
        the Interface's error column)."""
        self.vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
                   "protocols=OpenFlow13", "fail_mode=secure")
        for g in groups:
            self.ofctl("add-group", g, timeout=60)
        rules = os.path.join(self.run, "br0.flows")
        with open(rules, "w") as f:
            f.write("\n".join(flows) + "\n")
        self.ofctl("add-flows", rules)
        cmd: list[str] = []
        for i, dev in enumerate(ports):
            cmd += ["--", "add-port", "br0", f"p{i + 1}", "--", "set", "Interface", f"p{i + 1}",
                    "type=dpdk", f"options:dpdk-devargs={dev}", f"ofport_request={i + 1}",
                    f"options:n_rxq={n_rxq}"]
        self.vsctl(*cmd[1:])
        for i in range(len(ports)):
            err = self.vsctl("--if-exists", "get", "Interface", f"p{i + 1}", "error").strip()
            ofport = self.vsctl("--if-exists", "get", "Interface", f"p{i + 1}", "ofport").strip()
            if (err and err != "[]") or ofport in ("", "-1", "[]"):
                raise RuntimeError(f"OVS port p{i + 1} ({ports[i]}) did not come up: "
                                   f"{err or 'no ofport'}\n{self.log_tail}")

    def port_tx(self, port: int) -> int:
        """Frames OpenFlow port @port has sent (live DPDK counters, ovs-ofctl dump-ports)."""
        out = self.ofctl("dump-ports", str(port), timeout=30)
        m = re.search(r"tx pkts=(\d+)", out)
        if not m:
            raise RuntimeError(f"ovs-ofctl dump-ports {port}: no tx count in:\n{out}")
        return int(m.group(1))

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.stop(timeout=20)
        self.procs.clear()
        if self._netns_added:
            subprocess.run(["ip", "netns", "del", self.netns], check=False, capture_output=True)
            self._netns_added = False
        shutil.rmtree(runtime_dir(self.tag), ignore_errors=True)
