"""sluice.openstate: the OpenState experimenter encoders give the bytes of the switch's codec
(the golden vectors of src/ofp/test_ofp_state.c and docs/openflow.md section 12.6)."""

from __future__ import annotations

import struct

import pytest

from sluice import ofp, openstate


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", "").replace("\n", ""))


def test_state_set_golden() -> None:
    key = [ofp.oxm_eth_type(0x0800), ofp.oxm_ipv4_src("10.0.0.1")]
    msg = openstate.state_set(0, key, 3, rollback=1, idle_ms=100, xid=7)
    assert msg == h("04 04 00 40 00 00 00 07 53 4c 55 43 00 00 00 0b"
                    "00 00 00 00 00 00 00 03 00 00 00 01 00 00 00 64 00 00 00 00 00 00 00 00"
                    "00 01 00 12 80 00 0a 02 08 00 80 00 16 04 0a 00 00 01 00 00 00 00 00 00")


def test_state_del_all_golden() -> None:
    assert openstate.state_del(2, xid=8) == h(
        "04 04 00 30 00 00 00 08 53 4c 55 43 00 00 00 0c"
        "02 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
        "00 01 00 04 00 00 00 00")


def test_state_table_golden() -> None:
    msg = openstate.state_table(0, ["nw_src", "nw_dst"], ["nw_dst", "nw_src"], 1000, xid=5)
    assert msg == h("04 04 00 48 00 00 00 05 53 4c 55 43 00 00 00 0a 00 02 02 00 00 00 03 e8"
                    + "00" * 32 + "80 00 16 04 80 00 18 04 80 00 18 04 80 00 16 04")
    with pytest.raises(ValueError):
        openstate.state_table_data(0, ["nw_src"], ["nw_dst", "tcp_dst"])
    with pytest.raises(ValueError):
        openstate.state_table_data(254, ["nw_src"])


def test_action_and_oxm_golden() -> None:
    assert openstate.action_set_state(5) == h("ff ff 00 20 53 4c 55 43 00 01 ff 00 00 00 00 05"
                                              + "00" * 16)
    assert ofp.match([openstate.oxm_state(3), ofp.oxm_eth_type(0x0800)]) == h(
        "00 01 00 16 ff ff 04 08 53 4c 55 43 00 00 00 03 80 00 0a 02 08 00 00 00")
    assert openstate.oxm_state(3, 0xF)[2:4] == b"\x05\x0c"
    assert openstate.state_dump_request(7, xid=3) == h(
        "04 04 00 18 00 00 00 03 53 4c 55 43 00 00 00 0d 07 00 00 00 00 00 00 00")


def test_parse_replies() -> None:
    key = ofp.match([ofp.oxm_eth_type(0x0800), ofp.oxm_ipv4_src("10.0.0.1")])
    entry = struct.pack("!H2xIIIIII4x", 32 + len(key), 3, 0, 100, 0, 40, 0) + key
    body = struct.pack("!BxHI", 4, 1, 1) + entry
    msg = ofp.experimenter(ofp.SL_EXPERIMENTER_ID, openstate.SL_OFPX_STATE_DUMP_REPLY, body, 9)
    table_id, more, entries = openstate.parse_state_dump_reply(msg)
    assert table_id == 4 and more and len(entries) == 1
    assert entries[0].state == 3 and entries[0].idle_left_ms == 40 and entries[0].key == key
    bad = ofp.experimenter(ofp.SL_EXPERIMENTER_ID, openstate.SL_OFPX_STATE_DUMP_REPLY,
                           struct.pack("!BxHI", 4, 0, 2) + entry, 9)
    with pytest.raises(ValueError):
        openstate.parse_state_dump_reply(bad)
    stats = struct.pack("!B3xII4x11Q", 1, 100, 2, *range(11))
    st = openstate.parse_state_stats_reply(
        ofp.experimenter(ofp.SL_EXPERIMENTER_ID, openstate.SL_OFPX_STATE_STATS_REPLY, stats))
    assert st["capacity"] == 100 and st["n_entries"] == 2 and st["hits"] == 1
    assert st["bytes"] == 9 and st["foreign"] == 10
