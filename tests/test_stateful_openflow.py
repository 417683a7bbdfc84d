"""OpenState over OpenFlow: Sluice's state-table experimenter messages against a running switch.

One Sluice (two net_null ports, examples/stateful/port_knocking.flows: table 0 a state table
on nw_src) serves the module; every case talks to its management socket with the raw client
(sluice.ofp.Client) and the encoders of sluice.openstate, so the Python encoders, the switch's
decoders and its agent are checked together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from sluice import ofp, openstate, testing
from sluice.testing import Sluice, SluiceConfig

EXAMPLE = testing.REPO / "examples" / "stateful" / "port_knocking.flows"


@pytest.fixture(scope="module")
def sw() -> Iterator[Sluice]:
    s = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                            flows_file=str(EXAMPLE), name=testing.unique("slso")))
    try:
        s.wait_ready()
        yield s
        assert s.alive(), s.output
    finally:
        s.stop()


def key(addr: str) -> list[bytes]:
    return [ofp.oxm_eth_type(0x0800), ofp.oxm_ipv4_src(addr)]


def dump(c: ofp.Client, table: int = 0) -> list[openstate.StateEntry]:
    """Every entry of a dump, over all its parts."""
    xid = ofp.next_xid()
    c.send(openstate.state_dump_request(table, xid=xid))
    out: list[openstate.StateEntry] = []
    while True:
        m = c.wait_for(lambda m: m.xid == xid, 10)
        assert m.type == ofp.OFPT_EXPERIMENTER, f"type {m.type}"
        _, more, entries = openstate.parse_state_dump_reply(m.raw)
        out += entries
        if not more:
            return out


def stats(c: ofp.Client, table: int = 0) -> dict[str, int]:
    xid = ofp.next_xid()
    c.send(openstate.state_stats_request(table, xid=xid))
    return openstate.parse_state_stats_reply(c.wait_for(lambda m: m.xid == xid, 10).raw)


def check_error(c: ofp.Client, msg: bytes, etype: int, code: int | None = None) -> None:
    xid = ofp.parse_header(msg).xid
    c.send(msg)
    m = c.wait_for(lambda m: m.xid == xid, 10)
    assert m.type == ofp.OFPT_ERROR, f"expected OFPT_ERROR, got type {m.type}"
    e = ofp.parse_error(m)
    assert e.type == etype and (code is None or e.code == code), f"got {e.type}/{e.code}"


def test_set_dump_delete(sw: Sluice) -> None:
    """Steps: STATE_SET for 10.0.0.7 (state 3, idle 60 s, rollback 1) and a barrier; dump;
    STATE_STATS; STATE_DEL of the key; dump again.
    Verify: the dump holds exactly that key (nw_src=10.0.0.7 exact, with dl_type) in state
    3 with its timeouts; stats count it; after the delete the table is empty."""
    target = sw.openflow_target
    assert target is not None
    with ofp.Client.connect(target) as c:
        c.send(openstate.state_set(0, key("10.0.0.7"), 3, rollback=1, idle_ms=60000,
                                   xid=ofp.next_xid()))
        c.barrier()
        entries = dump(c)
        assert len(entries) == 1, entries
        e = entries[0]
        assert (e.state, e.rollback, e.idle_ms, e.hard_ms) == (3, 1, 60000, 0)
        assert 0 < e.idle_left_ms <= 60000
        assert e.key == ofp.match(key("10.0.0.7"))
        st = stats(c)
        assert st["n_entries"] == 1 and st["capacity"] == 65536 and st["bytes"] > 0, st
        c.send(openstate.state_del(0, key("10.0.0.7"), xid=ofp.next_xid()))
        c.barrier()
        assert dump(c) == []


def test_dump_in_parts(sw: Sluice) -> None:
    """Steps: 2,000 STATE_SETs back to back, a barrier, a dump; then STATE_DEL (all).
    Verify: the dump comes in several parts (MORE on all but the last) and holds the 2,000
    states; the delete-all empties the table."""
    target = sw.openflow_target
    assert target is not None
    with ofp.Client.connect(target) as c:
        msgs = b"".join(openstate.state_set(0, key(f"10.1.{i >> 8}.{i & 255}"), 2,
                                            xid=ofp.next_xid()) for i in range(2000))
        c.send(msgs)
        c.barrier()
        xid = ofp.next_xid()
        c.send(openstate.state_dump_request(0, xid=xid))
        parts, n = 0, 0
        while True:
            _, more, entries = openstate.parse_state_dump_reply(
                c.wait_for(lambda m: m.xid == xid, 10).raw)
            parts += 1
            n += len(entries)
            assert all(e.state == 2 for e in entries)
            if not more:
                break
        assert n == 2000 and parts > 1, (n, parts)
        c.send(openstate.state_del(0, xid=ofp.next_xid()))
        c.barrier()
        assert stats(c)["n_entries"] == 0


def _bad_pad(xid: int) -> bytes:
    m = bytearray(openstate.state_set(0, key("10.0.0.1"), 1, xid=xid))
    m[18] = 1
    return bytes(m)


def _del_all_with_key(xid: int) -> bytes:
    m = bytearray(openstate.state_del(0, key("10.0.0.1"), xid=xid))
    m[17] = openstate.STATE_DEL_ALL
    return bytes(m)


#: name -> (builder taking an xid, error type, error code or None for "any code")
CASES: dict[str, tuple[Callable[[int], bytes], int, int | None]] = {
    "not_a_state_table": (lambda x: openstate.state_set(1, key("10.0.0.1"), 1, xid=x),
                          ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_TABLE_ID),
    "field_outside_scope": (lambda x: openstate.state_set(
        0, [ofp.oxm_eth_type(0x0800), ofp.oxm_ipv4_dst("10.0.0.1")], 1, xid=x),
        ofp.OFPET_BAD_MATCH, ofp.OFPBMC_BAD_FIELD),
    "masked_key": (lambda x: openstate.state_set(
        0, [ofp.oxm_eth_type(0x0800), ofp.oxm(11, b"\x0a\0\0\0", b"\xff\0\0\0")], 1, xid=x),
        ofp.OFPET_BAD_MATCH, ofp.OFPBMC_BAD_FIELD),
    "pad": (_bad_pad, ofp.OFPET_BAD_REQUEST, 5),
    "del_all_with_key": (_del_all_with_key, ofp.OFPET_BAD_REQUEST, 5),
    "truncated": (lambda x: ofp.experimenter(ofp.SL_EXPERIMENTER_ID, openstate.SL_OFPX_STATE_SET,
                                             b"\0" * 8, x),
                  ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_LEN),
    "reply_type_to_switch": (lambda x: ofp.experimenter(
        ofp.SL_EXPERIMENTER_ID, openstate.SL_OFPX_STATE_STATS_REPLY, b"\0" * 104, x),
        ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_EXP_TYPE),
    "dump_not_a_state_table": (lambda x: openstate.state_dump_request(1, xid=x),
                               ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_TABLE_ID),
    # Scopes of different widths (nw_src 32 bits, tcp_dst 16).
    "scope_mismatch": (lambda x: openstate.state_table(5, ["nw_src"], ["tcp_dst"], xid=x),
                       ofp.OFPET_TABLE_MOD_FAILED, 1),
    "set_state_to_non_state_table": (lambda x: ofp.flow_mod(
        [], [openstate.action_set_state(1, table_id=1)], table_id=1, priority=5, xid=x),
        ofp.OFPET_BAD_ACTION, None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_keeps_connection(sw: Sluice, case: str) -> None:
    """Steps: fresh connection, one bad OpenState message (see CASES).
    Verify: OFPT_ERROR with the expected type/code for its xid; the connection then still
    answers a barrier, and the switch keeps running."""
    build, etype, code = CASES[case]
    target = sw.openflow_target
    assert target is not None
    with ofp.Client.connect(target) as c:
        check_error(c, build(ofp.next_xid()), etype, code)
        c.barrier()
    assert sw.alive()


def test_flow_with_set_state_and_state_match(sw: Sluice) -> None:
    """Steps: a flow_mod in table 1 matching state=4 (experimenter OXM) with a set_state
    action (experimenter action), then sluicectl dump-flows table=1.
    Verify: the switch accepts it and prints it back as state=4 ... set_state(5,...)."""
    target = sw.openflow_target
    assert target is not None
    with ofp.Client.connect(target) as c:
        c.send(ofp.flow_mod([openstate.oxm_state(4), ofp.oxm_eth_type(0x0800)],
                            [openstate.action_set_state(5, idle_ms=100), ofp.action_output(2)],
                            table_id=1, priority=77, xid=ofp.next_xid()))
        c.barrier()
    out = sw.sluicectl("dump-flows", "table=1,priority=77", check=True).stdout
    assert "state=4" in out and "set_state(5,idle_ms=100),output:2" in out, out


def test_telemetry_table_reports_states(sw: Sluice) -> None:
    """Steps: STATE_SET for two keys and a barrier; telemetry /sluice/table,0.
    Verify: the state table's spec line is its declaration; entries counts the states,
    mem_bytes its memory, and the state_* counters are present (refused 0)."""
    target = sw.openflow_target
    assert target is not None
    with ofp.Client.connect(target) as c:
        c.send(openstate.state_set(0, key("10.2.0.1"), 3, xid=ofp.next_xid())
               + openstate.state_set(0, key("10.2.0.2"), 3, xid=ofp.next_xid()))
        c.barrier()
        n = stats(c)["n_entries"]
        reply = sw.telemetry.request("/sluice/table", 0)["/sluice/table"]
        c.send(openstate.state_del(0, xid=ofp.next_xid()))
        c.barrier()
    assert reply["spec"].startswith("table=0,kind=state,lookup=nw_src,update=nw_src"), reply
    assert reply["entries"] == n >= 2 and reply["mem_bytes"] > 0, reply
    assert reply["state_capacity"] == 65536 and reply["state_refused"] == 0, reply
