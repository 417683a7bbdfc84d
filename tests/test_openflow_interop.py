"""OpenFlow 1.3 interoperability: ovs-ofctl, ovs-testcontroller and an os-ken app drive Sluice.

Sluice's ports are net_af_packet devices on the root-namespace ends of veth pairs;
the tests send and receive raw frames on the other ends (AF_PACKET), or give them
to hosts h1/h2 in their own namespaces.  IPv6 is off on every link and no
address is set in the root namespace, so only test traffic crosses a link and
counters can be checked exactly.  Every process is stopped by PID and every
namespace, link and socket path removed in teardown.

Needs root, iproute2, ovs-ofctl (openvswitch-common), ovs-testcontroller,
iperf3, ping, and a Sluice binary with -C/--controller (skipped otherwise,
except test_ofctl_commands_encode, which checks the ovs-ofctl command lines
used here against a fake switch).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sluice import ofp, testing
from sluice.testing import RawPort, Sluice, SluiceConfig, Topology, ofctl, parse_dump_flows

pytestmark = pytest.mark.openflow

FRAME_SIZE = 100
SRC = "02:00:00:00:01:01"
DST = "02:00:00:00:01:02"
MARK = b"sluice-of-test"
#: Generous deadline for frames to cross Sluice (never a timing assertion).
DEADLINE = 10.0

H1_MAC, H2_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
H1_IP, H2_IP = "10.0.0.1", "10.0.0.2"

GROUPS = [
    "group_id=1,type=all,bucket=output:2,bucket=output:3",
    "group_id=2,type=select,bucket=weight:100,actions=output:2,"
    "bucket=weight:100,actions=output:3",
    "group_id=3,type=indirect,bucket=actions=output:3",
    "group_id=4,type=fast_failover,bucket=watch_port:2,actions=output:2,"
    "bucket=watch_port:3,actions=output:3",
]
PACKET_OUT_FRAME = testing.eth_frame(DST, SRC, MARK + b"-packet-out", size=FRAME_SIZE)


def frames(n: int, tag: bytes = b"") -> list[bytes]:
    """@n distinct test frames of FRAME_SIZE bytes."""
    return [testing.eth_frame(DST, SRC, MARK + tag + b"-%d" % i, size=FRAME_SIZE)
            for i in range(n)]


def ours(f: bytes) -> bool:
    return MARK in f


@dataclass
class Switch:
    """Sluice under test: its OpenFlow target and the far ends of its ports."""

    sw: Sluice
    target: str
    peers: dict[int, RawPort]  # OpenFlow port -> raw socket on the veth peer
    pcap_tx: dict[int, Path] = field(default_factory=dict)

    def send(self, port: int, fs: list[bytes]) -> None:
        self.peers[port].send(fs)

    def expect(self, port: int, n: int) -> list[bytes]:
        """Wait (deadline) for @n test frames on @port's peer; return what came."""
        return self.peers[port].recv_until(lambda g: len(g) >= n, DEADLINE, keep=ours)

    def quiet(self, port: int) -> list[bytes]:
        """Test frames that arrive on @port's peer within a short drain window."""
        return self.peers[port].recv_until(lambda g: False, 0.5, keep=ours)

    def flows(self) -> list[testing.DumpedFlow]:
        return parse_dump_flows(ofctl(self.target, "dump-flows"))


@pytest.fixture(scope="module")
def of_sluice_bin(sluice_bin: Path) -> Path:
    """The sluice binary, when it has the OpenFlow side and the test can make veths."""
    if not testing.netns_usable():
        pytest.skip("needs root and iproute2 (veth pairs, namespaces)")
    if not shutil.which("ovs-ofctl"):
        pytest.skip("ovs-ofctl not installed (openvswitch-common)")
    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller yet")
    return sluice_bin


@pytest.fixture
def make_switch(of_sluice_bin: Path) -> Iterator[Callable[..., Switch]]:
    """Return ``make(n_ports, pcap_tx_ports=(), flows=None, controllers=())``.

    Ports 1..n_ports are af_packet on veths; the ports listed in
    @pcap_tx_ports (numbered after them) are tx-only pcap ports.  Sluice
    always gets a punix listener, which ``Switch.target`` names.
    """
    stack = contextlib.ExitStack()

    def make(n_ports: int, pcap_tx_ports: int = 0, flows: list[str] | None = None,
             controllers: tuple[str, ...] = (), fail_mode: str | None = None) -> Switch:
        topo = stack.enter_context(Topology())
        work = stack.enter_context(tempfile.TemporaryDirectory(prefix="slof-"))
        pairs = [topo.add_veth("sof") for _ in range(n_ports)]
        ports = testing.af_packet_ports([a for a, _ in pairs])
        pcaps = {}
        for i in range(pcap_tx_ports):
            n = n_ports + i + 1
            pcaps[n] = Path(work) / f"tx{n}.pcap"
            ports.append(f"net_pcap{i},tx_pcap={pcaps[n]}")
        sock = testing.socket_path("slof")
        sw = Sluice(SluiceConfig(ports=ports, flows=flows, fail_mode=fail_mode,
                                 controllers=(*controllers, f"punix:{sock}")),
                    binary=of_sluice_bin)
        stack.callback(sw.stop)
        sw.wait_listening()
        assert f"unix:{sock}" in sw.listen_targets, sw.output
        peers = {i + 1: stack.enter_context(RawPort(b)) for i, (_, b) in enumerate(pairs)}
        return Switch(sw, f"unix:{sock}", peers, pcaps)

    try:
        yield make
    finally:
        stack.close()


# ---------------------------------------------------------------------------
# ovs-ofctl against the passive listener
# ---------------------------------------------------------------------------


def test_add_flow_counters_aggregate(make_switch: Callable[..., Switch]) -> None:
    """Steps: add-flow in_port=1 -> output:2 (cookie 0x1); send 7 frames into port 1.
    Verify: 7 frames leave port 2 and none port 3; dump-flows shows n_packets=7,
    n_bytes=700 on that flow; dump-aggregate counts 7 packets, 700 bytes, 1 flow."""
    s = make_switch(3)
    ofctl(s.target, "add-flow", "cookie=0x1,priority=100,in_port=1,actions=output:2")
    s.send(1, frames(7))
    assert len(s.expect(2, 7)) == 7
    assert s.quiet(3) == []
    (f,) = s.flows()
    assert (f.cookie, f.int("priority"), f.fields.get("in_port")) == (1, 100, "1"), f.line
    assert f.actions == "output:2", f.line
    assert (f.int("n_packets"), f.int("n_bytes")) == (7, 7 * FRAME_SIZE), f.line
    agg = ofctl(s.target, "dump-aggregate")
    assert re.search(r"packet_count=7\b", agg), agg
    assert re.search(rf"byte_count={7 * FRAME_SIZE}\b", agg), agg
    assert re.search(r"flow_count=1\b", agg), agg


def test_add_flows_file_mod_del(make_switch: Callable[..., Switch], tmp_path: Path) -> None:
    """Steps: add-flows from a file (cookies 1, 2, 3); mod-flows cookie=0x1/-1 to output:3;
    send 5 frames into port 1; del-flows cookie=0x1/-1; send 3 more.
    Verify: 3 flows after add-flows; after mod the 5 frames leave port 3 only and the
    cookie-1 flow counts 5; after del-flows only cookies 2 and 3 remain, their counters
    untouched, and the 3 later frames go nowhere (table miss drops)."""
    s = make_switch(3)
    ff = tmp_path / "flows.txt"
    ff.write_text("cookie=0x1,priority=100,in_port=1,actions=output:2\n"
                  "cookie=0x2,priority=100,in_port=2,actions=output:1\n"
                  "cookie=0x3,priority=50,in_port=3,actions=output:1\n")
    ofctl(s.target, "add-flows", str(ff))
    assert sorted(f.cookie for f in s.flows()) == [1, 2, 3]
    ofctl(s.target, "mod-flows", "cookie=0x1/-1,in_port=1,actions=output:3")
    s.send(1, frames(5))
    assert len(s.expect(3, 5)) == 5
    assert s.quiet(2) == []
    by_cookie = {f.cookie: f for f in s.flows()}
    assert by_cookie[1].actions == "output:3", by_cookie[1].line
    assert by_cookie[1].int("n_packets") == 5, by_cookie[1].line
    ofctl(s.target, "del-flows", "cookie=0x1/-1")
    left = s.flows()
    assert sorted(f.cookie for f in left) == [2, 3]
    assert all(f.int("n_packets") == 0 for f in left), [f.line for f in left]
    s.send(1, frames(3, b"after-del"))
    assert s.quiet(2) == [] and s.quiet(3) == []


def test_dump_tables_ports_desc(make_switch: Callable[..., Switch]) -> None:
    """Steps: one flow in_port=1 -> output:2; 7 frames into port 1.
    Verify: dump-tables: table 0 active=1, lookup=7, matched=7; dump-ports: port 1
    rx 7 packets / 700 bytes, port 2 tx 7 / 700; dump-ports-desc lists ports 1-3."""
    s = make_switch(3)
    ofctl(s.target, "add-flow", "priority=100,in_port=1,actions=output:2")
    s.send(1, frames(7))
    assert len(s.expect(2, 7)) == 7
    tables = ofctl(s.target, "dump-tables")
    m = re.search(r"table 0:\s*\n\s*active=(\d+), lookup=(\d+), matched=(\d+)", tables)
    assert m, tables
    assert tuple(map(int, m.groups())) == (1, 7, 7), tables
    ports = ofctl(s.target, "dump-ports")
    rx = {int(p): (int(n), int(b)) for p, n, b in
          re.findall(r"port\s+(\d+): rx pkts=(\d+), bytes=(\d+)", ports)}
    tx = {int(p): (int(n), int(b)) for p, n, b in
          re.findall(r"port\s+(\d+): rx .*\n\s+tx pkts=(\d+), bytes=(\d+)", ports)}
    assert rx[1] == (7, 7 * FRAME_SIZE), ports
    assert tx[2] == (7, 7 * FRAME_SIZE), ports
    assert tx[3] == (0, 0), ports
    desc = ofctl(s.target, "dump-ports-desc")
    numbers = {int(n) for n in re.findall(r"^\s*(\d+)\(", desc, re.M)}
    assert {1, 2, 3} <= numbers, desc


def test_groups(make_switch: Callable[..., Switch]) -> None:
    """Steps: add all, select, indirect and fast-failover groups; point in_port=1 at
    each in turn (mod-flows) and send frames into port 1.
    Verify: dump-groups lists the four with their types and outputs; all copies each
    frame to ports 2 and 3; select sends each frame to exactly one of 2, 3; indirect
    to 3; fast-failover (watch port 2 up) to 2."""
    s = make_switch(3)
    for g in GROUPS:
        ofctl(s.target, "add-group", g)
    dump = ofctl(s.target, "dump-groups")
    types = dict(re.findall(r"group_id=(\d+),type=(\w+)", dump))
    assert types == {"1": "all", "2": "select", "3": "indirect", "4": "ff"}, dump
    for gid, outs in (("1", "23"), ("2", "23"), ("3", "3"), ("4", "23")):
        line = next(ln for ln in dump.splitlines() if f"group_id={gid}," in ln)
        assert sorted(re.findall(r"output:(\d+)", line)) == list(outs), line

    ofctl(s.target, "add-flow", "priority=100,in_port=1,actions=group:1")
    s.send(1, frames(4, b"all"))
    assert len(s.expect(2, 4)) == 4 and len(s.expect(3, 4)) == 4

    ofctl(s.target, "mod-flows", "in_port=1,actions=group:2")
    s.send(1, frames(6, b"select"))
    got2 = s.peers[2].recv_until(lambda g: False, 1.0, keep=ours)
    got3 = s.peers[3].recv_until(lambda g: False, 0.1, keep=ours)
    assert len(got2) + len(got3) == 6, (len(got2), len(got3))

    ofctl(s.target, "mod-flows", "in_port=1,actions=group:3")
    s.send(1, frames(4, b"indirect"))
    assert len(s.expect(3, 4)) == 4 and s.quiet(2) == []

    ofctl(s.target, "mod-flows", "in_port=1,actions=group:4")
    s.send(1, frames(4, b"ff"))
    assert len(s.expect(2, 4)) == 4 and s.quiet(3) == []


CHAIN_DST2, CHAIN_DST3 = "02:00:00:00:02:02", "02:00:00:00:03:03"


def test_group_chaining(make_switch: Callable[..., Switch]) -> None:
    """Steps: add indirect groups 2 (eth_dst:=D2, output:2) and 3 (eth_dst:=D3, output:3),
    select group 1 whose buckets chain to them (group:2, group:3), a flow sending port 1
    to group 1; send 12 frames of distinct flows into port 1.  Then try a loop (group 2
    chaining back to 1) and deleting group 2.  Then fast failover: group 4 (ff, watch
    port 2 -> output:2), group 5 (ff, watch_group 4 -> group:4, watch port 3 ->
    output:3); point port 1 at group 5, send, take port 2 down with mod-port, send.
    Verify: GROUP_FEATURES announces chaining and chaining checks (capabilities 0xf);
    every frame leaves exactly once, on 2 with eth_dst D2 or on 3 with D3
    (scapy), and group stats count 12 in group 1 and the per-port shares in 2 and 3;
    the loop is refused with OFPGMFC_LOOP and the delete with OFPGMFC_CHAINED_GROUP,
    both leaving the groups as they were; with port 2 up group 5 reaches port 2
    through group 4, with port 2 down (group 4 dead) port 3."""
    from scapy.all import IP, UDP, Ether  # type: ignore[import-untyped]

    s = make_switch(3)
    ofctl(s.target, "add-group",
          f"group_id=2,type=indirect,bucket=set_field:{CHAIN_DST2}->eth_dst,output:2")
    ofctl(s.target, "add-group",
          f"group_id=3,type=indirect,bucket=set_field:{CHAIN_DST3}->eth_dst,output:3")
    ofctl(s.target, "add-group", "group_id=1,type=select,bucket=weight:100,actions=group:2,"
          "bucket=weight:100,actions=group:3")
    ofctl(s.target, "add-flow", "priority=100,in_port=1,actions=group:1")
    # GROUP_FEATURES capabilities: select weight and liveness, chaining, chaining checks.
    features = ofctl(s.target, "dump-group-features")
    assert re.search(r"Capabilities:\s+0xf\b", features), features

    def udp_frames(n: int, tag: bytes) -> list[bytes]:
        return [bytes(Ether(src=SRC, dst=DST) / IP(src="10.1.0.1", dst="10.1.0.2") /
                      UDP(sport=1000 + i, dport=2000) / (MARK + tag + b"-%d" % i))
                for i in range(n)]

    s.send(1, udp_frames(12, b"chain"))
    got2 = s.peers[2].recv_until(lambda g: False, 1.0, keep=ours)
    got3 = s.peers[3].recv_until(lambda g: False, 0.1, keep=ours)
    assert len(got2) + len(got3) == 12, (len(got2), len(got3))
    assert all(Ether(f).dst == CHAIN_DST2 for f in got2), [Ether(f).dst for f in got2]
    assert all(Ether(f).dst == CHAIN_DST3 for f in got3), [Ether(f).dst for f in got3]
    stats = ofctl(s.target, "dump-group-stats")
    counts = {m[0]: int(m[1]) for m in
              re.findall(r"group_id=(\d+),.*?packet_count=(\d+)", stats)}
    assert counts == {"1": 12, "2": len(got2), "3": len(got3)}, stats

    # A loop through group 1 and a delete of a chained group: refused, nothing changes.
    loop = subprocess_stderr(s.target, "mod-group",
                             "group_id=2,type=indirect,bucket=actions=group:1")
    assert "OFPGMFC_LOOP" in loop, loop
    busy = subprocess_stderr(s.target, "del-groups", "group_id=2")
    assert "OFPGMFC_CHAINED_GROUP" in busy, busy
    dump = ofctl(s.target, "dump-groups")
    assert re.search(r"group_id=2,type=indirect,bucket=.*output:2", dump), dump

    # Fast failover on a watched group.
    ofctl(s.target, "add-group", "group_id=4,type=ff,bucket=watch_port:2,actions=output:2")
    ofctl(s.target, "add-group", "group_id=5,type=ff,bucket=watch_group:4,actions=group:4,"
          "bucket=watch_port:3,actions=output:3")
    ofctl(s.target, "mod-flows", "in_port=1,actions=group:5")
    s.send(1, udp_frames(4, b"ff-up"))
    assert len(s.expect(2, 4)) == 4 and s.quiet(3) == []
    ofctl(s.target, "mod-port", "2", "down")
    s.send(1, udp_frames(4, b"ff-down"))
    assert len(s.expect(3, 4)) == 4 and s.quiet(2) == []


def subprocess_stderr(target: str, *args: str) -> str:
    """ovs-ofctl's output (stdout and stderr) for a command expected to fail."""
    cmd = ["ovs-ofctl", "-O", "OpenFlow13", "--no-names", "--timeout=10", args[0], target,
           *args[1:]]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert r.returncode != 0, r.stdout
    return r.stdout + r.stderr


def test_packet_out(make_switch: Callable[..., Switch]) -> None:
    """Steps: packet-out in_port=controller with output:2 (af_packet), then output:3
    (a tx-only pcap port); stop Sluice (SIGTERM).
    Verify: the frame arrives whole on port 2's peer, and port 3's pcap holds exactly it."""
    s = make_switch(2, pcap_tx_ports=1)
    hexframe = PACKET_OUT_FRAME.hex()
    ofctl(s.target, "packet-out", f"in_port=controller packet={hexframe} actions=output:2")
    assert s.expect(2, 1) == [PACKET_OUT_FRAME]
    ofctl(s.target, "packet-out", f"in_port=controller packet={hexframe} actions=output:3")
    ofctl(s.target, "dump-flows")  # a round trip: the packet-out was processed
    assert s.sw.stop() == 0, s.sw.output
    from scapy.all import rdpcap  # type: ignore[import-untyped]

    pkts = [bytes(p) for p in rdpcap(str(s.pcap_tx[3]))]
    assert pkts == [PACKET_OUT_FRAME]


def test_ofctl_commands_encode() -> None:
    """Steps: run this file's ovs-ofctl group, packet-out and flow commands against
    a fake switch (no Sluice).
    Verify: ovs-ofctl accepts each and sends the intended OpenFlow 1.3 message
    (group types, bucket weights and watch ports, packet-out from CONTROLLER)."""
    if not shutil.which("ovs-ofctl"):
        pytest.skip("ovs-ofctl not installed")
    with testing.FakeSwitch() as fs:
        for i, g in enumerate(GROUPS):
            ofctl(fs.target, "add-group", g)
            (raw,) = fs.take()
            assert raw[1] == ofp.OFPT_GROUP_MOD
            gtype, gid = raw[10], int.from_bytes(raw[12:16], "big")
            assert (gtype, gid) == ([0, 1, 2, 3][i], i + 1), raw.hex()
        ofctl(fs.target, "packet-out",
              f"in_port=controller packet={PACKET_OUT_FRAME.hex()} actions=output:3")
        (raw,) = fs.take()
        assert raw[1] == ofp.OFPT_PACKET_OUT
        assert int.from_bytes(raw[12:16], "big") == ofp.OFPP_CONTROLLER
        assert raw.endswith(PACKET_OUT_FRAME)
        ofctl(fs.target, "del-flows", "cookie=0x1/-1")
        (raw,) = fs.take()
        assert raw[1] == ofp.OFPT_FLOW_MOD and raw[25] == ofp.OFPFC_DELETE
        assert raw[8:24] == (1).to_bytes(8, "big") + b"\xff" * 8


# ---------------------------------------------------------------------------
# Real controllers: h1 and h2 in namespaces, Sluice in --fail-mode secure
# ---------------------------------------------------------------------------


def _ovs_testcontroller(port: int, work: str) -> testing.Proc:
    if not shutil.which("ovs-testcontroller"):
        pytest.skip("ovs-testcontroller not installed (openvswitch-testcontroller)")
    return testing.Proc(["ovs-testcontroller", "-O", "OpenFlow13", f"--unixctl={work}/tc.ctl",
                         "-vconsole:info", f"ptcp:{port}:127.0.0.1"], name="ovs-testcontroller")


def _osken_learning_switch(port: int, work: str) -> testing.Proc:
    pytest.importorskip("os_ken")
    env = dict(os.environ, OSKEN_HUB_TYPE="eventlet")
    return testing.Proc([sys.executable, "-m", "sluice.apps.run",
                         f"--ofp-tcp-listen-port={port}", "learning_switch"], env=env,
                        name="os-ken")


@pytest.mark.parametrize("controller", ["ovs-testcontroller", "os-ken"])
def test_real_controller_ping_iperf(of_sluice_bin: Path, controller: str) -> None:
    """Steps: start the controller on a free TCP port; h1 (10.0.0.1) and h2 (10.0.0.2)
    in namespaces on veths whose other ends are Sluice ports 1 and 2; Sluice with
    -C tcp:127.0.0.1:PORT, a punix listener and --fail-mode secure (so only the
    controller can make traffic pass); ping h2 from h1 until it answers (deadline);
    ping -c 3; iperf3 -t 2 from h1 to h2.
    Verify: ping -c 3 loses nothing; iperf3 reports bytes received > 0; dump-flows
    shows the controller's table-miss entry (priority 0, CONTROLLER) and a learned
    priority-1 flow to h2's MAC out of port 2 that carried packets."""
    for tool in ("ping", "iperf3"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} not installed")
    with contextlib.ExitStack() as stack:
        work = stack.enter_context(tempfile.TemporaryDirectory(prefix="slof-ctl-"))
        topo = stack.enter_context(Topology())
        h1, h2 = topo.add_netns("h1"), topo.add_netns("h2")
        a1, _ = topo.add_veth("sh", peer_netns=h1, peer_name="eth0", peer_addr=f"{H1_IP}/24",
                              peer_mac=H1_MAC)
        a2, _ = topo.add_veth("sh", peer_netns=h2, peer_name="eth0", peer_addr=f"{H2_IP}/24",
                              peer_mac=H2_MAC)
        port = testing.free_tcp_port()
        start = _ovs_testcontroller if controller == "ovs-testcontroller" else \
            _osken_learning_switch
        ctl = start(port, work)
        stack.callback(ctl.stop)
        testing.wait_until(lambda: testing.tcp_listening(port) or not ctl.alive(), 30,
                           f"{controller} to listen")
        assert ctl.alive(), ctl.output
        sock = testing.socket_path("slof")
        sw = Sluice(SluiceConfig(ports=testing.af_packet_ports([a1, a2]), fail_mode="secure",
                                 controllers=(f"tcp:127.0.0.1:{port}", f"punix:{sock}")),
                    binary=of_sluice_bin)
        stack.callback(sw.stop)
        sw.wait_listening()

        def ping_once() -> bool:
            r = testing.run(["ping", "-c", "1", "-W", "1", H2_IP], check=False, netns=h1)
            return r.returncode == 0

        try:
            testing.wait_until(ping_once, 60, f"h1 to reach h2 through {controller}",
                               step=0.5)
        except TimeoutError:
            pytest.fail(f"no ping through {controller}\n--- sluice:\n{sw.output}\n"
                        f"--- {controller}:\n{ctl.output}")
        r = testing.run(["ping", "-c", "3", "-i", "0.2", "-W", "2", H2_IP], check=False,
                        netns=h1)
        assert r.returncode == 0 and " 0% packet loss" in r.stdout, r.stdout

        srv = testing.ns_popen(h2, ["iperf3", "-s", "-1", "-B", H2_IP, "-p", "5201"])
        stack.callback(srv.stop)
        testing.wait_until(lambda: testing.tcp_listening(5201, netns=h2), 20,
                           "iperf3 -s in h2")
        r = testing.run(["iperf3", "-c", H2_IP, "-p", "5201", "-t", "2", "-J"], check=False,
                        timeout=60, netns=h1)
        assert r.returncode == 0, r.stdout + r.stderr
        result = json.loads(r.stdout)
        assert result["end"]["sum_received"]["bytes"] > 0, result["end"]

        flows = parse_dump_flows(ofctl(f"unix:{sock}", "dump-flows"))
        miss = [f for f in flows if f.int("priority") == 0]
        assert miss and "CONTROLLER" in miss[0].actions, [f.line for f in flows]
        learned = [f for f in flows if f.int("priority") == 1
                   and f.fields.get("dl_dst") == H2_MAC and f.actions == "output:2"]
        assert learned, [f.line for f in flows]
        assert max(f.int("n_packets") for f in learned) > 0, [f.line for f in learned]
        assert sw.alive() and ctl.alive()
