"""Switch-agent behaviour over raw OpenFlow: timeouts and flow_removed, table kinds
declared with Sluice's experimenter message, roles, port status on link changes, and
the standalone fail mode (a learning switch while the controller is unreachable).

Each test starts its own Sluice on veth pairs (af_packet ports) and talks to it with
the raw client in ``sluice.ofp``; deadlines, never timing assertions.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sluice import ofp, testing
from sluice.testing import Sluice, SluiceConfig, Topology

pytestmark = pytest.mark.openflow

OFPT_FLOW_REMOVED = 11
OFPT_PORT_STATUS = 12
OFPT_ROLE_REQUEST = 24
OFPT_ROLE_REPLY = 25
OFPFF_SEND_FLOW_REM = 1
SL_EXPERIMENTER = 0x534C5543
SL_OFPX_TABLE_DECLARE = 1


@pytest.fixture
def switch(sluice_bin: Path) -> Iterator[tuple[Sluice, str, Topology, list[tuple[str, str]]]]:
    """Sluice on two veth pairs with a ptcp listener; yields (switch, target, topo, veths)."""
    if not testing.netns_usable():
        pytest.skip("needs root and iproute2 (veth pairs)")
    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    with Topology() as topo:
        veths = [topo.add_veth("sag"), topo.add_veth("sag")]
        port = testing.free_tcp_port()
        sw = Sluice(SluiceConfig(ports=testing.af_packet_ports([a for a, _ in veths]),
                                 controllers=(f"ptcp:{port}:127.0.0.1",)), binary=sluice_bin)
        try:
            (target,) = sw.wait_listening()
            yield sw, target, topo, veths
            assert sw.alive(), sw.output
        finally:
            sw.stop()


def _recv_type(c: ofp.Client, msg_type: int, deadline_s: float) -> ofp.Msg:
    """The next message of @msg_type (others are skipped) before the deadline."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            m = c.recv(timeout=max(0.05, end - time.monotonic()))
        except TimeoutError:
            break
        if m.type == msg_type:
            return m
        if m.type == 2:  # echo request: answer, or the switch drops a silent peer
            c.send(ofp.echo_reply(m.body, m.xid))
    raise AssertionError(f"no message of type {msg_type} within {deadline_s} s")


def _flow_mod_flags(msg: bytes, flags: int) -> bytes:
    """Set ofp_flow_mod.flags (offset 44) in an encoded flow_mod."""
    return msg[:44] + struct.pack("!H", flags) + msg[46:]


def test_hard_and_idle_timeouts_send_flow_removed(switch) -> None:
    """hard_timeout=1 and idle_timeout=1 flows disappear with OFPRR_HARD/IDLE_TIMEOUT."""
    sw, target, _, _ = switch
    with ofp.Client.connect(target) as c:
        hard = ofp.flow_mod([ofp.oxm_eth_dst("02:00:00:00:00:01")], [ofp.action_output(2)],
                            priority=5, cookie=0x11, hard_timeout=1)
        idle = ofp.flow_mod([ofp.oxm_eth_dst("02:00:00:00:00:02")], [ofp.action_output(2)],
                            priority=5, cookie=0x22, idle_timeout=1)
        c.send(_flow_mod_flags(hard, OFPFF_SEND_FLOW_REM))
        c.send(_flow_mod_flags(idle, OFPFF_SEND_FLOW_REM))
        c.barrier()
        reasons = {}
        for _ in range(2):
            m = _recv_type(c, OFPT_FLOW_REMOVED, 10)
            body = m.body
            # ofp_flow_removed: cookie u64, priority u16, reason u8, table_id u8, ...
            cookie, _prio, reason = struct.unpack_from("!QHB", body, 0)
            reasons[cookie] = reason
        assert reasons == {0x11: 1, 0x22: 0}, reasons  # HARD_TIMEOUT=1, IDLE_TIMEOUT=0
        out = testing.ofctl(target, "dump-flows")
        assert "02:00:00:00:00:0" not in out, out


def _declare(table_id: int, kind: int, oxm_ids: list[bytes], name: bytes = b"") -> bytes:
    body = struct.pack("!BBHI32s", table_id, kind, 0, 0, name) + b"".join(oxm_ids)
    return ofp.experimenter(SL_EXPERIMENTER, SL_OFPX_TABLE_DECLARE, body)


def test_table_kind_declared_over_openflow(switch) -> None:
    """An lpm table on nw_dst takes prefixes and refuses other fields (BAD_MATCH)."""
    sw, target, _, _ = switch
    ipv4_dst_id = struct.pack("!HBB", 0x8000, 12 << 1, 4)
    with ofp.Client.connect(target) as c:
        c.send(_declare(3, 2, [ipv4_dst_id], b"fib"))
        c.barrier()  # an error would arrive first and make barrier() raise
        ok = ofp.flow_mod([ofp.oxm_eth_type(0x0800), ofp.oxm_ipv4_dst("10.1.0.0", 16)],
                          [ofp.action_output(2)], table_id=3, priority=16)
        c.send(ok)
        c.barrier()
        bad = ofp.flow_mod([ofp.oxm_eth_type(0x0800), ofp.oxm_ip_proto(6), ofp.oxm_tcp_dst(80)],
                           [ofp.action_output(2)], table_id=3, priority=16, xid=77)
        c.send(bad)
        err = ofp.parse_error(_recv_type(c, ofp.OFPT_ERROR, 5))
        assert (err.type, err.code) == (4, 6), err  # OFPET_BAD_MATCH / OFPBMC_BAD_FIELD
        # Declaring a table that holds flows is refused (TABLE_MOD_FAILED / EPERM).
        c.send(_declare(3, 3, []))
        err = ofp.parse_error(_recv_type(c, ofp.OFPT_ERROR, 5))
        assert (err.type, err.code) == (8, 2), err
    out = testing.ofctl(target, "dump-flows", "table=3")
    assert "nw_dst=10.1.0.0/16" in out and out.count("table=3") == 1, out


def _role(role: int, gen: int, xid: int) -> bytes:
    return ofp.message(OFPT_ROLE_REQUEST, struct.pack("!I4xQ", role, gen), xid)


def test_roles_master_slave_and_stale_generation(switch) -> None:
    """A second master demotes the first to slave; slaves cannot modify; stale ids fail."""
    sw, target, _, _ = switch
    with ofp.Client.connect(target) as a, ofp.Client.connect(target) as b:
        a.send(_role(2, 10, 1))  # MASTER, generation 10
        assert _recv_type(a, OFPT_ROLE_REPLY, 5).body[:4] == struct.pack("!I", 2)
        b.send(_role(2, 11, 2))
        assert _recv_type(b, OFPT_ROLE_REPLY, 5).body[:4] == struct.pack("!I", 2)
        a.send(ofp.flow_mod([ofp.oxm_in_port(1)], [ofp.action_output(2)], xid=3))
        err = ofp.parse_error(_recv_type(a, ofp.OFPT_ERROR, 5))
        assert (err.type, err.code) == (1, 10), err  # BAD_REQUEST / IS_SLAVE
        a.send(_role(2, 9, 4))  # generation older than 11
        err = ofp.parse_error(_recv_type(a, ofp.OFPT_ERROR, 5))
        assert (err.type, err.code) == (11, 0), err  # ROLE_REQUEST_FAILED / STALE
        b.send(ofp.flow_mod([ofp.oxm_in_port(1)], [ofp.action_output(2)]))
        b.barrier()


def test_port_status_on_link_down(sluice_bin: Path) -> None:
    """Taking a port's link down sends OFPT_PORT_STATUS (reason MODIFY, state LINK_DOWN).

    A TAP port: its PMD reports the kernel interface's state (af_packet's does not).
    """
    if not testing.netns_usable():
        pytest.skip("needs root and iproute2")
    tap = testing.unique("sltap")[:15]
    port = testing.free_tcp_port()
    sw = Sluice(SluiceConfig(ports=[f"net_tap0,iface={tap}", "net_null0"],
                             controllers=(f"ptcp:{port}:127.0.0.1",)), binary=sluice_bin)
    try:
        (target,) = sw.wait_listening()
        with ofp.Client.connect(target) as c:
            c.barrier()
            testing.wait_until(
                lambda: testing.run(["ip", "link", "set", tap, "up"], check=False).returncode
                == 0, 10, "the TAP interface")
            testing.run(["ip", "link", "set", tap, "down"])
            deadline = time.monotonic() + 10
            while True:  # an "up" status may come first
                m = _recv_type(c, OFPT_PORT_STATUS, max(0.1, deadline - time.monotonic()))
                reason = m.body[0]
                port_no, = struct.unpack_from("!I", m.body, 8)
                state, = struct.unpack_from("!I", m.body, 8 + 4 + 4 + 6 + 2 + 16 + 4)
                assert (reason, port_no) == (2, 1), m.body.hex()
                if state & 1:
                    break  # LINK_DOWN
    finally:
        sw.stop()


def test_standalone_learns_while_controller_unreachable(sluice_bin: Path) -> None:
    """fail-mode standalone with a dead controller target: hosts still talk (learning)."""
    if not testing.netns_usable() or not shutil_which("ping"):
        pytest.skip("needs root, iproute2 and ping")
    with Topology() as topo:
        h1, h2 = topo.add_netns("sah"), topo.add_netns("sah")
        a1, _ = topo.add_veth("sas", peer_netns=h1, peer_name="eth0", peer_addr="10.9.0.1/24")
        a2, _ = topo.add_veth("sas", peer_netns=h2, peer_name="eth0", peer_addr="10.9.0.2/24")
        dead = testing.free_tcp_port()
        ctl = testing.free_tcp_port()
        sw = Sluice(SluiceConfig(ports=testing.af_packet_ports([a1, a2]),
                                 controllers=(f"tcp:127.0.0.1:{dead}", f"ptcp:{ctl}:127.0.0.1"),
                                 fail_mode="standalone"), binary=sluice_bin)
        try:
            (target,) = sw.wait_listening()
            testing.wait_until(
                lambda: testing.run(["ping", "-c", "1", "-W", "1", "10.9.0.2"], check=False,
                                    netns=h1).returncode == 0,
                30, "h1 to reach h2 in standalone mode")
            out = testing.ofctl(target, "dump-flows")
            assert "cookie=0x534c5354414e4401" in out, out  # the learning switch's flows
            assert "dl_dst=" in out, out
        finally:
            sw.stop()


def shutil_which(cmd: str) -> str | None:
    import shutil

    return shutil.which(cmd)
