"""sluice.ofp message builders checked against os-ken's OpenFlow 1.3 codec (no Sluice needed).

Messages os-ken can parse (flow_mod, hello, echo, experimenter) are built with
sluice.ofp, parsed by os_ken.ofproto.ofproto_v1_3_parser, and their fields
compared; messages os-ken only serializes (packet_out, multipart requests,
barrier) are compared byte for byte with os-ken's serialization.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
from typing import Any

import pytest

os.environ.setdefault("OSKEN_HUB_TYPE", "eventlet")
osken = pytest.importorskip("os_ken")

from os_ken.ofproto import ofproto_v1_3 as ofproto  # noqa: E402
from os_ken.ofproto import ofproto_v1_3_parser as parser  # noqa: E402

from sluice import ofp  # noqa: E402


class _Datapath:
    """The attributes os-ken's parser and serializer need from a datapath."""

    ofproto = ofproto
    ofproto_parser = parser


DP: Any = _Datapath()


def parse(raw: bytes) -> Any:
    """Parse one whole message with os-ken; checks the header first."""
    h = ofp.parse_header(raw)
    assert h.version == ofproto.OFP_VERSION
    assert h.length == len(raw)
    return parser.msg_parser(DP, h.version, h.type, h.length, h.xid, raw)


def serialize(msg: Any, xid: int) -> bytes:
    """os-ken's encoding of @msg with transaction id @xid."""
    msg.xid = None
    msg.set_xid(xid)
    msg.serialize()
    return bytes(msg.buf)


def test_flow_mod_add_exact_fields() -> None:
    """Steps: build an add with in_port, eth_dst, eth_type, ip_proto, tcp_dst and output:2.
    Verify: os-ken parses every header field, each OXM value and the apply_actions output."""
    raw = ofp.flow_mod(
        [ofp.oxm_in_port(1), ofp.oxm_eth_dst("02:00:00:00:00:2a"), ofp.oxm_eth_type(0x0800),
         ofp.oxm_ip_proto(6), ofp.oxm_tcp_dst(8080)],
        [ofp.action_output(2)],
        table_id=3, priority=100, cookie=0x1234, idle_timeout=10, hard_timeout=20,
        flags=ofp.OFPFF_SEND_FLOW_REM, xid=77)
    m = parse(raw)
    assert isinstance(m, parser.OFPFlowMod)
    assert (m.xid, m.table_id, m.command, m.priority, m.cookie) == (77, 3, ofproto.OFPFC_ADD,
                                                                    100, 0x1234)
    assert (m.idle_timeout, m.hard_timeout, m.flags) == (10, 20, ofproto.OFPFF_SEND_FLOW_REM)
    assert m.buffer_id == ofproto.OFP_NO_BUFFER
    assert m.out_port == ofproto.OFPP_ANY and m.out_group == ofproto.OFPG_ANY
    assert m.match["in_port"] == 1
    assert m.match["eth_dst"] == "02:00:00:00:00:2a"
    assert m.match["eth_type"] == 0x0800
    assert m.match["ip_proto"] == 6
    assert m.match["tcp_dst"] == 8080
    (inst,) = m.instructions
    assert inst.type == ofproto.OFPIT_APPLY_ACTIONS
    (act,) = inst.actions
    assert isinstance(act, parser.OFPActionOutput)
    assert (act.port, act.max_len) == (2, ofproto.OFPCML_NO_BUFFER)
    # Re-encoding with os-ken gives the same bytes.
    assert serialize(m, 77) == raw


@pytest.mark.parametrize("plen,mask", [(24, "255.255.255.0"), (8, "255.0.0.0"), (32, None)])
def test_flow_mod_masked_ipv4_dst(plen: int, mask: str | None) -> None:
    """Steps: add with ipv4_dst 10.1.2.3/plen.
    Verify: os-ken reads the masked value (host bits cleared) and the mask."""
    raw = ofp.flow_mod([ofp.oxm_eth_type(0x0800), ofp.oxm_ipv4_dst("10.1.2.3", plen)],
                       [ofp.action_output(1)])
    m = parse(raw)
    v = m.match["ipv4_dst"]
    if mask is None:
        assert v == "10.1.2.3"
    else:
        pairs = zip(socket.inet_aton("10.1.2.3"), socket.inet_aton(mask), strict=True)
        net = socket.inet_ntoa(bytes(a & b for a, b in pairs))
        assert v == (net, mask)


def test_flow_mod_matches_osken_serialization() -> None:
    """Steps: build the same flow_mod with os-ken and with sluice.ofp.
    Verify: identical bytes (match padding, instruction and action layout)."""
    match = parser.OFPMatch(in_port=7, eth_dst="aa:bb:cc:dd:ee:ff", eth_type=0x0800,
                            ipv4_dst=("192.168.0.0", "255.255.0.0"), ip_proto=17)
    insts = [parser.OFPInstructionActions(ofproto.OFPIT_APPLY_ACTIONS,
                                          [parser.OFPActionOutput(3, 0xFFFF)]),
             parser.OFPInstructionGotoTable(5)]
    ref = serialize(parser.OFPFlowMod(DP, cookie=9, table_id=1, priority=300, match=match,
                                      out_port=ofproto.OFPP_ANY, out_group=ofproto.OFPG_ANY,
                                      instructions=insts), 5)
    mine = ofp.flow_mod([ofp.oxm_in_port(7), ofp.oxm_eth_dst("aa:bb:cc:dd:ee:ff"),
                         ofp.oxm_eth_type(0x0800), ofp.oxm_ip_proto(17),
                         ofp.oxm_ipv4_dst("192.168.0.0", 16)],  # os-ken sorts by field
                        [ofp.action_output(3)], [ofp.inst_goto_table(5)],
                        cookie=9, table_id=1, priority=300, xid=5)
    assert mine == ref


def test_flow_delete_cookie() -> None:
    """Steps: non-strict and strict deletes filtered by cookie.
    Verify: command, table 255, cookie/mask, out_port/out_group ANY, no instructions."""
    m = parse(ofp.flow_delete(cookie=1, cookie_mask=0xFFFFFFFFFFFFFFFF))
    assert (m.command, m.table_id) == (ofproto.OFPFC_DELETE, ofproto.OFPTT_ALL)
    assert (m.cookie, m.cookie_mask) == (1, 0xFFFFFFFFFFFFFFFF)
    assert m.out_port == ofproto.OFPP_ANY and m.out_group == ofproto.OFPG_ANY
    assert m.instructions == []
    m = parse(ofp.flow_delete([ofp.oxm_in_port(2)], strict=True, table_id=0, priority=5))
    assert (m.command, m.table_id, m.priority) == (ofproto.OFPFC_DELETE_STRICT, 0, 5)
    assert m.match["in_port"] == 2


def test_flow_mod_group_and_write_actions() -> None:
    """Steps: group action in write_actions, write_metadata, clear_actions.
    Verify: os-ken parses each instruction and the group id."""
    raw = ofp.flow_mod([], None, [
        ofp.inst_clear_actions(),
        ofp.inst_actions([ofp.action_group(42)], kind=ofp.OFPIT_WRITE_ACTIONS),
        ofp.inst_write_metadata(0x5, 0xFF),
    ])
    m = parse(raw)
    kinds = [type(i) for i in m.instructions]
    assert kinds == [parser.OFPInstructionActions, parser.OFPInstructionActions,
                     parser.OFPInstructionWriteMetadata]
    assert m.instructions[0].type == ofproto.OFPIT_CLEAR_ACTIONS
    assert m.instructions[1].type == ofproto.OFPIT_WRITE_ACTIONS
    assert m.instructions[1].actions[0].group_id == 42
    assert (m.instructions[2].metadata, m.instructions[2].metadata_mask) == (5, 0xFF)


def test_packet_out_matches_osken() -> None:
    """Steps: packet_out from CONTROLLER with output:2 and a frame.
    Verify: same bytes as os-ken's OFPPacketOut."""
    frame = bytes(range(60))
    ref = serialize(parser.OFPPacketOut(DP, buffer_id=ofproto.OFP_NO_BUFFER,
                                        in_port=ofproto.OFPP_CONTROLLER,
                                        actions=[parser.OFPActionOutput(2, 0xFFFF)], data=frame),
                    9)
    assert ofp.packet_out(frame, [ofp.action_output(2)], xid=9) == ref


def test_flow_stats_request_matches_osken() -> None:
    """Steps: multipart flow request for all tables, and one filtered by match and cookie.
    Verify: same bytes as os-ken's OFPFlowStatsRequest."""
    ref = serialize(parser.OFPFlowStatsRequest(DP), 3)
    assert ofp.flow_stats_request(xid=3) == ref
    ref = serialize(parser.OFPFlowStatsRequest(
        DP, table_id=2, cookie=7, cookie_mask=0xFF,
        match=parser.OFPMatch(in_port=1)), 4)
    body = ofp.flow_stats_request_body(2, [ofp.oxm_in_port(1)], cookie=7, cookie_mask=0xFF)
    assert ofp.multipart_request(ofp.OFPMP_FLOW, body, xid=4) == ref


def test_barrier_echo_features() -> None:
    """Verify: barrier and features requests equal os-ken's; echo parses with its data."""
    assert ofp.barrier_request(11) == serialize(parser.OFPBarrierRequest(DP), 11)
    assert ofp.features_request(12) == serialize(parser.OFPFeaturesRequest(DP), 12)
    m = parse(ofp.echo_request(b"ping", 13))
    assert isinstance(m, parser.OFPEchoRequest) and m.data == b"ping"


def test_hello_bitmap() -> None:
    """Steps: hello for 1.0 + 1.3, and for 1.3 only.
    Verify: os-ken reads the version bitmap; hello_versions() reads it back."""
    raw = ofp.hello([1, 4], xid=1)
    m = parse(raw)
    (elem,) = m.elements
    assert elem.type == ofproto.OFPHET_VERSIONBITMAP
    assert elem.versions == [1, 4]
    assert ofp.hello_versions(raw) == {1, 4}
    assert ofp.hello_versions(ofp.hello(bitmap=False)) == {4}
    assert len(raw) % 8 == 0


def test_experimenter() -> None:
    """Verify: os-ken parses experimenter id, type and data."""
    m = parse(ofp.experimenter(0xDEADBEEF, 7, b"garbage!", xid=2))
    assert isinstance(m, parser.OFPExperimenter)
    assert (m.experimenter, m.exp_type, m.data) == (0xDEADBEEF, 7, b"garbage!")


def test_error_and_packet_in_decoders() -> None:
    """Steps: os-ken serializes an error; a packet_in is built by hand and parsed by os-ken.
    Verify: parse_error and parse_packet_in read them back."""
    err = parser.OFPErrorMsg(DP, type_=ofproto.OFPET_BAD_ACTION,
                             code=ofproto.OFPBAC_BAD_OUT_PORT, data=b"x" * 64)
    raw = serialize(err, 8)
    e = ofp.parse_error(ofp.Msg(4, ofp.OFPT_ERROR, 8, raw))
    assert (e.type, e.code, e.data) == (ofp.OFPET_BAD_ACTION, ofp.OFPBAC_BAD_OUT_PORT, b"x" * 64)
    frame = bytes(range(64))
    # os-ken parses packet_ins but does not encode them: build one by hand, check both ways.
    m = ofp.match([ofp.oxm_in_port(3)])
    raw = ofp.message(ofp.OFPT_PACKET_IN, struct.pack("!IHBBQ", ofp.OFP_NO_BUFFER, 64, 0, 0, 0)
                      + m + b"\0\0" + frame, 9)
    pin = parse(raw)
    assert (pin.buffer_id, pin.total_len, pin.match["in_port"], pin.data) == (
        ofproto.OFP_NO_BUFFER, 64, 3, frame)
    buf, total, reason, table, data = ofp.parse_packet_in(ofp.Msg(4, ofp.OFPT_PACKET_IN, 9, raw))
    assert (buf, total, reason, table, data) == (ofp.OFP_NO_BUFFER, 64, 0, 0, frame)


def test_count_flow_stats() -> None:
    """Steps: os-ken serializes nothing for replies, so build two ofp_flow_stats by hand.
    Verify: count_flow_stats counts both and rejects a short entry."""
    entry = struct.pack("!HBxIIHHHH4xQQQ", 56, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    entry += ofp.match([])
    assert len(entry) == 56
    assert ofp.count_flow_stats(entry * 2) == 2
    with pytest.raises(ValueError):
        ofp.count_flow_stats(struct.pack("!H", 8) + b"\0" * 6)


def test_bulk_encoding_is_fast() -> None:
    """Verify: 100,000 exact flow_mods encode (sanity check of the benchmark's approach)."""
    msgs = [ofp.flow_mod([ofp.oxm_eth_dst(struct.pack("!HI", 0x0200, i))],
                         [ofp.action_output(1)], priority=10) for i in range(100_000)]
    blob = b"".join(msgs)
    assert len(blob) == 100_000 * len(msgs[0])
    assert parse(msgs[-1]).match["eth_dst"] == "02:00:00:01:86:9f"


class _FakeSwitch(threading.Thread):
    """A one-connection OpenFlow server: sends HELLO, answers echo/barrier, records the rest."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.port = self.srv.getsockname()[1]
        self.got: list[int] = []

    def run(self) -> None:
        conn, _ = self.srv.accept()
        c = ofp.Client(conn)
        c.send(ofp.hello())
        try:
            while True:
                m = c.recv(10)
                self.got.append(m.type)
                if m.type == ofp.OFPT_ECHO_REQUEST:
                    c.send(ofp.echo_reply(m.body, m.xid))
                elif m.type == ofp.OFPT_BARRIER_REQUEST:
                    c.send(ofp.message(ofp.OFPT_PACKET_IN, b"\0" * 4, 999))  # unrelated first
                    c.send(ofp.message(ofp.OFPT_BARRIER_REPLY, b"", m.xid))
        except (ofp.ConnectionClosed, TimeoutError, OSError):
            pass
        finally:
            conn.close()
            self.srv.close()


def test_client_handshake_echo_barrier() -> None:
    """Steps: Client against a fake switch: handshake, echo, barrier.
    Verify: the unrelated message before the barrier reply is kept in ``pending``."""
    fs = _FakeSwitch()
    fs.start()
    with ofp.Client.connect(f"tcp:127.0.0.1:{fs.port}") as c:
        assert c.peer_hello is not None
        c.echo(b"abc")
        c.barrier()
        assert [m.type for m in c.pending] == [ofp.OFPT_PACKET_IN]
        assert c.recv(1).type == ofp.OFPT_PACKET_IN
    fs.join(5)
    assert fs.got[:3] == [ofp.OFPT_HELLO, ofp.OFPT_ECHO_REQUEST, ofp.OFPT_BARRIER_REQUEST]
