"""sluice.osken: os-ken messages for Sluice's experimenter extensions, built and parsed
without a controller (a fake datapath records what would be sent)."""

from __future__ import annotations

import struct
from typing import Any

import pytest

osken = pytest.importorskip("sluice.osken", reason="os-ken not installed (pip install .[apps])")

from os_ken.controller import ofp_event  # noqa: E402
from os_ken.controller.handler import MAIN_DISPATCHER  # noqa: E402
from os_ken.ofproto import ofproto_protocol, ofproto_v1_0, ofproto_v1_3_parser  # noqa: E402

from sluice import ofp  # noqa: E402
from sluice.ofp import TableDecl, TableKind  # noqa: E402

DOCS_LPM = bytes.fromhex(
    "04 04 00 3c 00 00 00 10 53 4c 55 43 00 00 00 01"
    "02 02 00 00 00 00 10 00 66 69 62 00 00 00 00 00"
    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
    "00 00 00 00 00 00 00 00 80 00 18 04")


class FakeDatapath(ofproto_protocol.ProtocolDesc):  # type: ignore[misc]
    """What os-ken's Datapath offers apps: ofproto, ofproto_parser, xids, send_msg, send."""

    def __init__(self, version: int = 4) -> None:
        super().__init__(version)
        self.xid = 0x0F
        self.sent: list[bytes] = []

    def set_xid(self, msg: Any) -> int:
        self.xid = (self.xid + 1) & self.ofproto.MAX_XID
        msg.set_xid(self.xid)
        return self.xid

    def send_msg(self, msg: Any) -> bool:
        if msg.xid is None:
            self.set_xid(msg)
        msg.serialize()
        return self.send(msg.buf)

    def send(self, buf: bytes) -> bool:
        self.sent.append(bytes(buf))
        return True


def parse(dp: Any, raw: bytes) -> Any:
    """Decode bytes as os-ken would on receipt."""
    h = ofp.parse_header(raw)
    return ofproto_v1_3_parser.msg_parser(dp, h.version, h.type, h.length, h.xid, raw)


def test_table_declare_msg_bytes() -> None:
    dp = osken.offline_datapath()
    msg = osken.table_declare_msg(dp, 2, "lpm", ["nw_dst"], max_entries=4096, name="fib")
    assert isinstance(msg, ofproto_v1_3_parser.OFPExperimenter)
    assert (msg.experimenter, msg.exp_type) == (0x534C5543, 1)
    assert osken.encode(msg, xid=0x10) == DOCS_LPM
    raw = osken.encode(osken.table_declare_msg(dp, 4, TableKind.MASK,
                                               ["nw_src", "tcp_dst", "raw(l4,96,12)"],
                                               name="acl"), xid=0x25B)
    assert raw == ofp.table_declare(4, "mask", ["nw_src", "tcp_dst", "raw(l4,96,12)"],
                                    name="acl", xid=0x25B)
    with pytest.raises(ValueError):
        osken.table_declare_msg(dp, 254, "lpm")


def test_declare_table_sends_and_sets_xid() -> None:
    dp = FakeDatapath()
    msg = osken.declare_table(dp, 2, "lpm", ["ipv4_dst"], 4096, "fib")
    assert msg.xid == 0x10 and dp.sent == [DOCS_LPM]


def test_declare_tables_then_barrier() -> None:
    dp = FakeDatapath()
    msgs = osken.declare_tables(dp, ["table=2,kind=lpm,fields=nw_dst,size=4096,name=fib",
                                     TableDecl(3, TableKind.EXACT, ("dl_dst",), 100)])
    assert len(dp.sent) == 3 and dp.sent[0] == DOCS_LPM
    assert dp.sent[1] == ofp.table_declare(3, "exact", ["dl_dst"], 100, xid=0x11)
    assert ofp.parse_header(dp.sent[2]).type == ofp.OFPT_BARRIER_REQUEST
    assert [m.xid for m in msgs] == [0x10, 0x11, 0x12]
    # A bad line sends nothing at all.
    dp2 = FakeDatapath()
    with pytest.raises(ValueError):
        osken.declare_tables(dp2, ["table=2,kind=lpm", "table=3,kind=nope"])
    assert dp2.sent == []
    assert osken.declare_tables(FakeDatapath(), [], barrier=False) == []
    dp3 = FakeDatapath()
    assert osken.barrier(dp3).xid == 0x10
    assert ofp.parse_header(dp3.sent[0]).type == ofp.OFPT_BARRIER_REQUEST


def test_decode_received_declaration() -> None:
    dp = osken.offline_datapath()
    msg = parse(dp, DOCS_LPM)
    assert osken.is_table_declare(msg)
    assert osken.decode_table_declare(msg) == TableDecl(2, TableKind.LPM, ("nw_dst",), 4096,
                                                        "fib")
    other = parse(dp, ofp.experimenter(0x2320, 1, b"\0" * 8))
    assert not osken.is_table_declare(other)
    with pytest.raises(ValueError):
        osken.decode_table_declare(other)


def test_parse_error_of_a_refused_declaration() -> None:
    dp = osken.offline_datapath()
    refused = ofp.table_declare(4, "lpm", ["nw_dst", "tcp_dst"], xid=6)
    raw = ofp.message(ofp.OFPT_ERROR, struct.pack("!HH", 8, 1) + refused[:64], xid=6)
    e = osken.parse_error(parse(dp, raw))
    assert e.name == "OFPET_TABLE_MOD_FAILED/OFPTMFC_BAD_CONFIG"
    assert e.declared_table == 4 and e.experimenter is None
    fm = ofp.flow_mod([], [ofp.action_output(1)])
    raw = ofp.message(ofp.OFPT_ERROR, struct.pack("!HHI", 0xFFFF, 2600, 0x4F4E4600) + fm)
    e2 = osken.parse_error(parse(dp, raw))
    assert (e2.type, e2.code, e2.experimenter, e2.data) == (0xFFFF, 2600, 0x4F4E4600, fm)
    assert e2.declared_table is None


def test_send_raw_uses_the_datapath_xids() -> None:
    dp = FakeDatapath()
    fm = ofp.flow_mod([ofp.oxm_eth_type(0x0800), ofp.oxm_nw_ttl(64),
                       ofp.oxm_raw("l4", 0, 16, 0x1234, 0xFF00)],
                      [ofp.action_output(2)], xid=999)
    assert osken.send_raw(dp, fm) == 0x10
    assert dp.sent == [fm[:4] + struct.pack("!I", 0x10) + fm[8:]]
    with pytest.raises(ValueError):
        osken.send_raw(dp, fm + ofp.barrier_request())
    with pytest.raises(ValueError):
        osken.send_raw(dp, fm[:20])


def test_openflow_1_0_datapath_is_refused() -> None:
    dp = FakeDatapath(ofproto_v1_0.OFP_VERSION)
    with pytest.raises(ValueError, match="OpenFlow 1.3"):
        osken.declare_table(dp, 1, "exact")
    assert dp.sent == []


def test_set_ev_cls_keeps_the_handler() -> None:
    def handler(self: object, ev: object) -> str:
        return "called"

    decorated = osken.set_ev_cls(ofp_event.EventOFPErrorMsg, MAIN_DISPATCHER)(handler)
    assert decorated is handler and decorated(None, None) == "called"
    assert ofp_event.EventOFPErrorMsg in decorated.callers


def test_learning_switch_app_registers_its_handlers() -> None:
    from sluice.apps import APPS, learning_switch

    assert APPS["learning_switch"] == learning_switch.__name__
    cls = learning_switch.LearningSwitch13
    assert ofp_event.EventOFPSwitchFeatures in cls.switch_features_handler.callers
    assert ofp_event.EventOFPPacketIn in cls.packet_in_handler.callers


def test_openstate_messages_and_action() -> None:
    """The os-ken wrappers serialize to the bytes of sluice.openstate (the C codec's goldens)."""
    from sluice import openstate

    dp = osken.offline_datapath()
    assert osken.encode(osken.state_table_msg(dp, 0, ["nw_src", "nw_dst"], ["nw_dst", "nw_src"],
                                              1000), xid=5) == openstate.state_table(
        0, ["nw_src", "nw_dst"], ["nw_dst", "nw_src"], 1000, xid=5)
    key = [ofp.oxm_eth_type(0x0800), ofp.oxm_ipv4_src("10.0.0.1")]
    assert osken.encode(osken.state_set_msg(dp, 0, key, 3, rollback=1, idle_ms=100), xid=7) == \
        openstate.state_set(0, key, 3, rollback=1, idle_ms=100, xid=7)
    assert osken.encode(osken.state_del_msg(dp, 2), xid=8) == openstate.state_del(2, xid=8)
    fm = ofproto_v1_3_parser.OFPFlowMod(
        dp, table_id=1, instructions=[ofproto_v1_3_parser.OFPInstructionActions(
            dp.ofproto.OFPIT_APPLY_ACTIONS, [osken.set_state_action(dp, 5)])])
    raw = osken.encode(fm, xid=1)
    assert openstate.action_set_state(5) in raw

