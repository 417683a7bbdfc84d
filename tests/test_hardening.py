"""Hardening (issue #21): configuration input is never silently cut or lost.

Each case is a reproduction from the issue that passed (wrongly) before the fix:
a flow file or state file is read line by line with a bounded reader, and a
read error, an endless line or a NUL byte is an error naming file and line,
never an early end of file.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SLUICECTL = REPO / "build" / "app" / "sluicectl"


def check(sluice_bin: Path, path: str | Path,
          timeout: float = 20.0) -> subprocess.CompletedProcess[str]:
    """``sluice --check -f PATH`` (no DPDK is started)."""
    return subprocess.run([str(sluice_bin), "--check", "-f", str(path)], capture_output=True,
                          text=True, timeout=timeout)


def test_check_dev_zero_is_an_error(sluice_bin: Path) -> None:
    """``--check -f /dev/zero`` used to report "0 flows OK" (a NUL is no end of line)."""
    r = check(sluice_bin, "/dev/zero")
    assert r.returncode == 2, r
    assert "/dev/zero:1: NUL byte in the line" in r.stderr


def test_long_line_is_refused_with_file_and_line(sluice_bin: Path, tmp_path: Path) -> None:
    """A line over 64 KiB followed by junk: refused at line 2, not "1 flows OK"."""
    f = tmp_path / "long.flows"
    f.write_text("priority=1 actions=drop\n" + "priority=2," + "ip," * 40000
                 + " actions=drop\nbogus line\n")
    r = check(sluice_bin, f)
    assert r.returncode == 2, r
    assert f"{f}:2: line longer than 65536 bytes" in r.stderr


def test_text_after_a_nul_byte_is_not_ignored(sluice_bin: Path, tmp_path: Path) -> None:
    """``priority=1 actions=drop\\0garbage``: the NUL used to end the line silently."""
    f = tmp_path / "nul.flows"
    f.write_bytes(b"priority=1 actions=output:1\npriority=2 actions=drop\0 bogus\n")
    r = check(sluice_bin, f)
    assert r.returncode == 2, r
    assert f"{f}:2: NUL byte in the line" in r.stderr


def test_read_error_is_an_error(sluice_bin: Path, tmp_path: Path) -> None:
    """A path that opens but cannot be read (a directory): a read error, not 0 flows."""
    r = check(sluice_bin, tmp_path)
    assert r.returncode == 2, r
    assert "read error: Is a directory" in r.stderr


def test_sluicectl_add_flows_dev_zero_stops_at_once(sluice_bin: Path) -> None:
    """``sluicectl add-flows /dev/zero`` grew to 7.7 GB; now it stops at the first byte."""
    if not SLUICECTL.exists():
        pytest.skip("no sluicectl built")
    t0 = time.monotonic()
    r = subprocess.run([str(SLUICECTL), "add-flows", "/dev/zero"], capture_output=True,
                       text=True, timeout=20)
    assert r.returncode == 2, r
    assert "/dev/zero:1: NUL byte in the line" in r.stderr
    assert time.monotonic() - t0 < 20  # bounded by the timeout above, not a speed claim


def test_sluicectl_add_states_long_line(tmp_path: Path) -> None:
    """add-states reads with the same bounded reader: an endless line names its line."""
    if not SLUICECTL.exists():
        pytest.skip("no sluicectl built")
    f = tmp_path / "states.txt"
    f.write_text("# comment\n" + "x" * 70000 + "\n")
    r = subprocess.run([str(SLUICECTL), "add-states", str(f)], capture_output=True,
                       text=True, timeout=20)
    assert r.returncode == 2, r
    assert f"{f}:2: line too long" in r.stderr


# --------------------------------------------------------------------------
# Weak defaults
# --------------------------------------------------------------------------


def _tcp_listeners(port: int) -> set[str]:
    """Local addresses (hex, as /proc/net/tcp writes them) listening on @port."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        addr, hexport = fields[1].split(":")
        if int(hexport, 16) == port and fields[3] == "0A":  # TCP_LISTEN
            found.add(addr)
    return found


def test_ptcp_without_address_listens_on_loopback(sluice_bin: Path) -> None:
    """``ptcp:PORT`` listened on 0.0.0.0, giving any peer flow_mod rights; now 127.0.0.1."""
    from sluice import testing
    from sluice.testing import Sluice, SluiceConfig

    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    port = testing.free_tcp_port()
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1"], controllers=(f"ptcp:{port}",)),
                binary=sluice_bin)
    try:
        sw.wait_listening()
        assert _tcp_listeners(port) == {"0100007F"}, _tcp_listeners(port)
    finally:
        sw.stop()


# --------------------------------------------------------------------------
# Smaller ones
# --------------------------------------------------------------------------


def _sluice(sluice_bin: Path, *args: str, prefix: str) -> subprocess.CompletedProcess[str]:
    import shutil

    try:
        return subprocess.run(
            [str(sluice_bin), *args, "--", "--no-huge", "-m", "256", "--no-pci",
             f"--file-prefix={prefix}", "-l", "0,1", "--log-level=lib.eal:error"],
            capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)


@pytest.mark.parametrize("mode,message", [
    ("hypercube:", "hypercube: missing addr="),
    ("hypercube:addr=1", "hypercube: no neighbours"),
    ("keyflow:tag=0xf2", "keyflow: missing key="),
])
def test_fwd_mode_needs_its_parameters(sluice_bin: Path, mode: str, message: str) -> None:
    """``--fwd-mode hypercube:`` was accepted with no address or neighbours."""
    from sluice.testing import unique_prefix

    r = _sluice(sluice_bin, "-p", "net_null0,no-rx=1", "--fwd-mode", mode, "-d", "0.1",
                prefix=unique_prefix("fm"))
    assert r.returncode == 2, r
    assert message in r.stderr


def test_unwritable_json_is_refused_at_start(sluice_bin: Path, tmp_path: Path) -> None:
    """An unwritable ``-j FILE`` was found only at exit, losing the run's data."""
    from sluice.testing import unique_prefix

    t0 = time.monotonic()
    r = _sluice(sluice_bin, "-p", "net_null0,no-rx=1", "-j", str(tmp_path / "no" / "x.json"),
                "-d", "30", prefix=unique_prefix("js"))
    assert r.returncode == 2, r
    assert "--json" in r.stderr and "No such file or directory" in r.stderr
    assert time.monotonic() - t0 < 30  # refused before the 30 s run, not after it


def test_table_declared_twice_is_an_error(sluice_bin: Path, tmp_path: Path) -> None:
    """A second declaration of a table silently replaced the first."""
    f = tmp_path / "dup.flows"
    f.write_text("table=1,kind=lpm,fields=nw_dst\npriority=1 actions=drop\ntable=1,kind=mask\n")
    r = check(sluice_bin, f)
    assert r.returncode == 2, r
    assert f"{f}:3: table 1 is already declared (line 1)" in r.stderr
    if SLUICECTL.exists():
        r = subprocess.run([str(SLUICECTL), "add-flows", str(f)], capture_output=True, text=True,
                           timeout=20)
        assert r.returncode == 2 and "table 1 is already declared (line 1)" in r.stderr, r


# --------------------------------------------------------------------------
# Packet-in accounting
# --------------------------------------------------------------------------


def test_packet_in_storm_every_drop_is_counted(sluice_bin: Path, tmp_path: Path) -> None:
    """A controller that stops reading: packet-ins pile up behind its socket.  They used
    to be counted as sent (tx) and vanish; now every queued packet-in is forwarded,
    dropped with a reason, or still pending, and the run says so.
    """
    import json
    import socket

    from scapy.all import IP, UDP, Ether, Raw  # type: ignore[import-untyped]

    from sluice import testing
    from sluice.testing import Sluice, SluiceConfig, write_pcap

    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    rx = tmp_path / "storm.pcap"
    write_pcap(rx, [bytes(Ether() / IP(dst=f"10.0.0.{i}") / UDP() / Raw(b"s" * 1400))
                    for i in range(1, 9)])
    port = testing.free_tcp_port()
    sw = Sluice(SluiceConfig(ports=[f"net_pcap0,rx_pcap={rx},infinite_rx=1",
                                    "net_null0,no-rx=1"],
                             controllers=(f"ptcp:{port}:127.0.0.1",), fail_mode="secure",
                             flows=["priority=0 actions=CONTROLLER"], packet_in_rate=20000,
                             mem_mb=1024),
                binary=sluice_bin, workdir=str(tmp_path))
    try:
        sw.wait_listening()
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(bytes.fromhex("040000100000000100010008 00000010"))  # HELLO, 1.3 only
            time.sleep(3)  # the storm: nobody reads, the switch's socket fills up
        rc = sw.stop()
        assert rc == 0, sw.output
    finally:
        if sw.alive():
            sw.stop()
    j = json.loads((tmp_path / "sluice.json").read_text())
    p = j["packet_ins"]
    assert p["queued"] > 0, j
    assert p["queued"] == p["forwarded"] + p["standalone"] + p["dropped"] + p["pending"], p
    assert p["dropped"] == p["drop_unwanted"] + p["drop_congested"] + p["drop_too_big"], p
    assert p["drop_congested"] > 0, p
    line = [ln for ln in sw.output.splitlines() if ln.startswith("check: packet-ins")]
    assert line and line[-1].endswith(": OK"), sw.output


# --------------------------------------------------------------------------
# Socket permissions
# --------------------------------------------------------------------------


def _as_nobody() -> None:
    import os

    os.setgid(65534)
    os.setuid(65534)


def test_sockets_are_0660_whatever_the_umask(sluice_bin: Path, tmp_path: Path) -> None:
    """Under ``umask 000`` the management and telemetry sockets were 0777 and user
    nobody installed ``priority=65535 actions=drop``.  Now both are 0660 and nobody's
    sluicectl is refused; with the file opened up by hand, the switch's SO_PEERCRED
    check still closes nobody's connection.
    """
    import os
    import shutil
    import stat
    import tempfile

    from sluice import testing
    from sluice.testing import Sluice, SluiceConfig

    if os.geteuid() != 0 or not SLUICECTL.exists():
        pytest.skip("needs root (to act as nobody) and sluicectl")
    # Nobody must reach the socket and a sluicectl: a directory under /tmp it may enter
    # (the clone and pytest's tmp_path may sit in directories only root enters), so
    # what refuses it is the socket's mode or the switch, not the path.
    pub = Path(tempfile.mkdtemp(prefix="sl-umask-", dir="/tmp"))
    pub.chmod(0o755)
    ctl = pub / "sluicectl"  # DPDK-free: a copy runs anywhere
    shutil.copy(SLUICECTL, ctl)
    ctl.chmod(0o755)
    mgmt = pub / "sw.mgmt"
    old = os.umask(0)
    try:
        sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1"], mgmt=str(mgmt)),
                    binary=sluice_bin, workdir=str(tmp_path))
        sw.wait_output("datapath id", 30)
    finally:
        os.umask(old)
    try:
        tele = testing.runtime_dir(sw.prefix) / "dpdk_telemetry.v2"
        testing.wait_until(mgmt.exists, 10, "the management socket")
        for path in (mgmt, tele):
            assert stat.S_IMODE(path.stat().st_mode) == 0o660, (path, oct(path.stat().st_mode))
        flow = "priority=65535 actions=drop"
        r = subprocess.run([str(ctl), "-t", f"unix:{mgmt}", "add-flow", flow],
                           capture_output=True, text=True, timeout=20, preexec_fn=_as_nobody)
        assert r.returncode != 0 and "Permission denied" in r.stderr, r
        mgmt.chmod(0o666)  # a mistake by hand: the switch itself still says no
        r = subprocess.run([str(ctl), "-t", f"unix:{mgmt}", "--timeout", "2", "add-flow",
                            flow], capture_output=True, text=True, timeout=20,
                           preexec_fn=_as_nobody)
        assert r.returncode != 0, r
        dump = subprocess.run([str(SLUICECTL), "-t", f"unix:{mgmt}", "dump-flows"],
                              capture_output=True, text=True, timeout=20)
        assert dump.returncode == 0 and "65535" not in dump.stdout, dump
        assert "not allowed: refused" in sw.output or sw.alive()
    finally:
        sw.stop()
        shutil.rmtree(pub, ignore_errors=True)


# --------------------------------------------------------------------------
# Port errors name the file or interface, and exit 2
# --------------------------------------------------------------------------


@pytest.mark.parametrize("devargs,message", [
    ("net_pcap0,rx_pcap=/nonexistent/in.pcap",
     "rx_pcap file '/nonexistent/in.pcap': No such file or directory"),
    ("net_pcap0,rx_pcap=/dev/null,tx_pcap=/nonexistent/out.pcap",
     "directory '/nonexistent': No such file or directory"),
    ("net_af_packet0,iface=slnoiface0", "iface 'slnoiface0': no such network interface"),
    ("bogus_dev0", "the EAL cannot attach it"),
    ("net_pcap0,rx_pcap=/dev/null,bogus_key=1", "the EAL cannot attach it"),
    # net_null read size=abc as 0 and failed at queue setup ("Cannot allocate memory", exit 1)
    ("net_null0,size=abc", "'size=abc': not a number"),
])
def test_bad_port_names_its_cause(sluice_bin: Path, devargs: str, message: str) -> None:
    """A missing pcap file or interface said "Operation not permitted"; bad devargs
    exited 1 or 2.  Now the message names the file or interface and the exit is 2."""
    from sluice.testing import unique_prefix

    r = _sluice(sluice_bin, "-p", devargs, "-d", "0.1", prefix=unique_prefix("pe"))
    assert r.returncode == 2, r
    assert message in r.stderr, r.stderr
    assert "Operation not permitted" not in r.stderr


# --------------------------------------------------------------------------
# af_packet ports: link state from the kernel, no outgoing frames
# --------------------------------------------------------------------------


def test_af_packet_link_follows_the_interface(sluice_bin: Path) -> None:
    """An af_packet port said "link up" whatever its interface did.  Now taking the
    veth peer down sends port_status LINK_DOWN (so fast failover can react), up again
    LIVE, and deleting the interface leaves the port down."""
    import struct as st

    from sluice import ofp, testing
    from sluice.testing import Sluice, SluiceConfig, Topology

    if not testing.netns_usable() or not testing.openflow_supported(sluice_bin):
        pytest.skip("needs root, iproute2 and -C")
    with Topology() as topo:
        ns = topo.add_netns("slk")
        a, b = topo.add_veth("slk", peer_netns=ns)
        port = testing.free_tcp_port()
        sw = Sluice(SluiceConfig(ports=testing.af_packet_ports([a]),
                                 controllers=(f"ptcp:{port}:127.0.0.1",)), binary=sluice_bin)
        try:
            (target,) = sw.wait_listening()
            with ofp.Client.connect(target) as c:
                c.barrier()

                def next_state(deadline: float) -> int:
                    end = time.monotonic() + deadline
                    while time.monotonic() < end:
                        try:
                            m = c.recv(timeout=max(0.05, end - time.monotonic()))
                        except TimeoutError:
                            break
                        if m.type == 2:
                            c.send(ofp.echo_reply(m.body, m.xid))
                        if m.type == 12:  # PORT_STATUS
                            return int(st.unpack_from("!I", m.body, 8 + 4 + 4 + 6 + 2 + 16 + 4)[0])
                    raise AssertionError("no port_status")

                testing.run(["ip", "link", "set", b, "down"], netns=ns)
                assert next_state(10) & 1, "LINK_DOWN after the peer went down"
                testing.run(["ip", "link", "set", b, "up"], netns=ns)
                assert next_state(10) & 4, "LIVE after the peer came back"
                testing.run(["ip", "link", "del", a])
                assert next_state(10) & 1, "LINK_DOWN once the interface is gone"
            assert sw.alive(), sw.output
        finally:
            sw.stop()


def test_af_packet_ignores_frames_sent_by_others(sluice_bin: Path) -> None:
    """Frames other sockets send out of the port's interface reached the switch as if
    received (phantom hosts for a learning controller).  Now the port's rx stays 0."""
    from scapy.all import Ether, Raw, sendp  # type: ignore[import-untyped]

    from sluice import testing
    from sluice.testing import Sluice, SluiceConfig, Topology

    if not testing.netns_usable():
        pytest.skip("needs root and iproute2")
    with Topology() as topo:
        ns = topo.add_netns("slo")  # IPv6 off there: the peer stays silent
        a, _b = topo.add_veth("slo", peer_netns=ns)
        testing.run(["sysctl", "-q", "-w", f"net.ipv6.conf.{a}.disable_ipv6=1"], check=False)
        sw = Sluice(SluiceConfig(ports=testing.af_packet_ports([a]), flows=["actions=drop"]),
                    binary=sluice_bin)
        try:
            sw.wait_output("datapath id", 30)
            time.sleep(0.5)
            sendp([Ether(src="02:00:00:00:00:99", dst="ff:ff:ff:ff:ff:ff") / Raw(b"x" * 50)] * 20,
                  iface=a, verbose=False)
            time.sleep(1.0)
            rc = sw.stop()
            assert rc == 0, sw.output
        finally:
            if sw.alive():
                sw.stop()
        line = [ln for ln in sw.output.splitlines() if "port 1" in ln]
        assert line and " rx 0 " in line[0], sw.output


def _veth_into(topo: object, ns: str, inner: str, index: int) -> str:
    """A veth pair: @inner in @ns with ifindex @index, its peer (returned) in this test's
    namespace (removed with @ns, and by topo.close()).  Both up, IPv6 off: silent links."""
    from sluice import testing

    outer = inner[:-1] + "r"
    testing.run(["ip", "link", "add", inner, "index", str(index), "type", "veth", "peer",
                 "name", outer, "netns", str(os.getpid())], netns=ns)
    topo.links.append(outer)  # type: ignore[attr-defined]
    testing.run(["sysctl", "-q", "-w", f"net.ipv6.conf.{outer}.disable_ipv6=1"], check=False)
    testing.run(["ip", "link", "set", inner, "up"], netns=ns)
    testing.run(["ip", "link", "set", outer, "up"])
    return outer


class _GatedSluice:
    """Sluice in @ns behind a shell that waits for open_gate() and then execs the switch
    (same PID), so the test knows the PID before the switch opens its ports."""

    def __init__(self, sluice_bin: Path, ns: str, cfg: object, workdir: Path) -> None:
        from sluice import testing

        self.prefix = testing.unique("sfo")
        self.json_path = workdir / f"{self.prefix}.json"
        flows = workdir / f"{self.prefix}.flows"
        flows.write_text("\n".join(cfg.flows or []) + "\n")  # type: ignore[attr-defined]
        self.gate = workdir / f"{self.prefix}.gate"
        os.mkfifo(self.gate)
        args = testing.sluice_args(cfg, self.prefix, str(self.json_path), str(flows))  # type: ignore[arg-type]
        self.proc = testing.Proc(["sh", "-c", 'read _ < "$0" && exec "$@"', str(self.gate),
                                  str(sluice_bin), *args], netns=ns, name="sluice")

    def open_gate(self) -> None:
        deadline = time.monotonic() + 20
        while True:  # the shell may not have opened the FIFO yet (ENXIO until it does)
            try:
                fd = os.open(self.gate, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                if time.monotonic() > deadline or not self.proc.alive():
                    raise
                time.sleep(0.05)
        os.write(fd, b"go\n")
        os.close(fd)

    def stop(self) -> dict:
        import json
        import shutil

        from sluice import testing

        rc = self.proc.stop()
        shutil.rmtree(testing.DPDK_RUN_DIR / self.prefix, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            (testing.mgmt_dir() / f"{self.prefix}.mgmt").unlink()
        assert rc == 0, self.proc.output
        return json.loads(self.json_path.read_text())


def test_af_packet_fanout_ids_colliding_between_two_switches(sluice_bin: Path,
                                                             tmp_path: Path) -> None:
    """DPDK's af_packet PMD names its fanout group PID ^ ifindex (16 bits); a second switch
    in the namespace whose PID ^ ifindex equalled the first one's died at start ("could not
    set PACKET_FANOUT ... Invalid argument").  Now its port takes a free group id.

    Steps: in a new namespace start switch A on veth index 10 (group id G = PID_A ^ 10);
    start switch B's shell, and with its PID known make B's veth with the index that gives
    PID_B ^ index = G; B's port has two queue sockets (qpairs=2, --rx-queues 2); let B
    start; send 20 frames into A's veth and 30 into B's.
    Verify: both switches are up (their PIDs are the ones the ids were computed from); B
    logged the remap at info level; A counted 20 frames and B exactly 30 (B's two sockets
    share one group: in two groups each frame would arrive twice)."""
    from sluice import testing
    from sluice.telemetry import Telemetry
    from sluice.testing import SluiceConfig, Topology

    if not testing.netns_usable():
        pytest.skip("needs root and iproute2")
    with Topology() as topo:
        ns = topo.add_netns("sfo")
        inner_a, inner_b = testing.unique("sfo") + "n", testing.unique("sfo") + "n"
        outer_a = _veth_into(topo, ns, inner_a, 10)
        cfg_a = SluiceConfig(ports=[f"net_af_packet0,iface={inner_a}"], flows=["actions=drop"],
                             mem_mb=256)
        cfg_b = SluiceConfig(ports=[f"net_af_packet1,iface={inner_b},qpairs=2"],
                             flows=["actions=drop"], mem_mb=256,
                             extra=["--rx-queues", "2", "--log-level", "port:info"])
        a = _GatedSluice(sluice_bin, ns, cfg_a, tmp_path)
        b = None
        try:
            a.open_gate()
            a.proc.wait_output(testing.READY_RE, 30)
            group = (a.proc.pid ^ 10) & 0xFFFF
            # B's interface is made once B's PID is known, with the index that collides.
            b = _GatedSluice(sluice_bin, ns, cfg_b, tmp_path)
            index_b = 0x10000 | ((b.proc.pid ^ group) & 0xFFFF)  # never 0, never 10
            outer_b = _veth_into(topo, ns, inner_b, index_b)
            assert (b.proc.pid ^ index_b) & 0xFFFF == group
            b.open_gate()
            b.proc.wait_output(testing.READY_RE, 30)
            for sw in (a, b):
                assert os.readlink(f"/proc/{sw.proc.pid}/exe") == str(sluice_bin.resolve())
            assert re.search(rf"fanout group 0x{group:04x} .*{inner_b}.* taken", b.proc.output), \
                b.proc.output

            with testing.RawPort(outer_a) as ra, testing.RawPort(outer_b) as rb:
                ra.send([testing.eth_frame("ff:ff:ff:ff:ff:ff", "02:00:00:00:0a:01")] * 20)
                rb.send([testing.eth_frame("ff:ff:ff:ff:ff:ff", "02:00:00:00:0b:01")] * 30)
            with Telemetry(file_prefix=a.prefix) as ta, Telemetry(file_prefix=b.prefix) as tb:
                testing.wait_until(lambda: ta.ports()[1]["rx_packets"] >= 20
                                   and tb.ports()[1]["rx_packets"] >= 30, 20, "the frames")
            ports_a, ports_b = a.stop()["ports"], b.stop()["ports"]
            assert [p["rx"] for p in ports_a] == [20], ports_a
            assert [p["rx"] for p in ports_b] == [30], ports_b
        finally:
            for sw in (a, b):
                if sw is not None and sw.proc.alive():
                    sw.proc.stop()


def test_af_packet_port_recovers_when_its_interface_returns(sluice_bin: Path) -> None:
    """A port whose veth was deleted and made again under the same name never forwarded
    again (3/3 pings lost) until a restart.  Now the switch opens the port again on the new
    interface (same name, same number) and pings go through."""
    from sluice import testing
    from sluice.testing import Sluice, SluiceConfig, Topology

    if not testing.netns_usable():
        pytest.skip("needs root and iproute2")
    with Topology() as topo:
        ns1, ns2 = topo.add_netns("src1"), topo.add_netns("src2")
        a1, _ = topo.add_veth("srv", peer_netns=ns1, peer_name="eth0", peer_addr="10.77.0.1/24")
        a2, _ = topo.add_veth("srv", peer_netns=ns2, peer_name="eth0", peer_addr="10.77.0.2/24")
        sw = Sluice(SluiceConfig(ports=testing.af_packet_ports([a1, a2]),
                                 flows=["in_port=1 actions=output:2",
                                        "in_port=2 actions=output:1"]), binary=sluice_bin)
        try:
            sw.wait_output("datapath id", 30)

            def ping() -> subprocess.CompletedProcess[str]:
                return subprocess.run(["ip", "netns", "exec", ns1, "ping", "-c", "3", "-i",
                                       "0.2", "-W", "1", "10.77.0.2"], capture_output=True,
                                      text=True, timeout=30)

            assert ping().returncode == 0
            testing.run(["ip", "link", "del", a1])
            peer = a1[:-1] + "c"  # the same interface name again, another ifindex
            testing.run(["ip", "link", "add", a1, "type", "veth", "peer", "name", peer])
            testing.run(["ip", "link", "set", peer, "netns", ns1])
            testing.run(["ip", "link", "set", peer, "name", "eth0"], netns=ns1)
            testing.run(["ip", "addr", "add", "10.77.0.1/24", "dev", "eth0"], netns=ns1)
            testing.run(["ip", "link", "set", "eth0", "up"], netns=ns1)
            testing.run(["ip", "link", "set", a1, "up"])
            sw.wait_output(r"port 1 \(\S+\) is back", 15)
            r = ping()
            assert r.returncode == 0 and " 0% packet loss" in r.stdout, r.stdout + sw.output
            assert sw.alive(), sw.output
        finally:
            sw.stop()
