"""Multipart requests in pieces (OFPMPF_REQ_MORE, OpenFlow 1.3.5 section 7.3.5) over a raw
OpenFlow connection: the switch answers once the last piece is in, keeps interleaved xids
apart, and refuses a type change, a bad body and requests past its bounds
(docs/openflow.md section 3).

One Sluice (two af_packet ports on veths, one startup flow, a ptcp listener) serves the
module; each test opens its own connection.  "No answer yet" is checked without timing:
a barrier sent after the pieces is answered, and nothing for the request's xid came before
that reply (the switch handles a connection's messages in order).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sluice import ofp, testing
from sluice.testing import Sluice, SluiceConfig, Topology

pytestmark = pytest.mark.openflow

#: SL_OFP_MP_HELD_MAX and SL_OFP_MP_OPEN_MAX (src/ofp/ofp.h).
HELD_MAX = 256 * 1024
OPEN_MAX = 8


@pytest.fixture(scope="module")
def target(sluice_bin) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """Sluice with two af_packet ports, one flow and a ptcp listener; yields its target."""
    if not testing.netns_usable():
        pytest.skip("needs root and iproute2 (veth pairs)")
    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller yet")
    with Topology() as topo:
        (a1, _), (a2, _) = topo.add_veth("smp"), topo.add_veth("smp")
        port = testing.free_tcp_port()
        sw = Sluice(SluiceConfig(ports=testing.af_packet_ports([a1, a2]),
                                 flows=["priority=10,in_port=1,actions=output:2"],
                                 controllers=(f"ptcp:{port}:127.0.0.1",)), binary=sluice_bin)
        try:
            (t,) = sw.wait_listening()
            yield t
            assert sw.alive(), sw.output
        finally:
            sw.stop()


def piece(mp_type: int, xid: int, body: bytes = b"", more: bool = True) -> bytes:
    return ofp.multipart_request(mp_type, body, flags=ofp.OFPMPF_REQ_MORE if more else 0,
                                 xid=xid)


def until_barrier(c: ofp.Client) -> list[ofp.Msg]:
    """Send a barrier; return every message that came before its reply."""
    bxid = ofp.next_xid()
    c.send(ofp.barrier_request(bxid))
    got = []
    while True:
        m = c.recv(10)
        if m.xid == bxid and m.type == ofp.OFPT_BARRIER_REPLY:
            return got
        got.append(m)


def replies(c: ofp.Client, xid: int) -> list[ofp.Msg]:
    """The messages for @xid up to the last multipart reply (or an error)."""
    out = []
    while True:
        m = c.wait_for(lambda m: m.xid == xid, 10)
        out.append(m)
        if m.type == ofp.OFPT_ERROR or not ofp.multipart_reply_info(m)[1] & ofp.OFPMPF_REPLY_MORE:
            return out


def expect_error(c: ofp.Client, xid: int, etype: int, code: int, sent: bytes) -> None:
    (m,) = replies(c, xid)
    assert m.type == ofp.OFPT_ERROR, m.type
    e = ofp.parse_error(m)
    assert (e.type, e.code) == (etype, code), e.name
    n = min(64, len(sent))
    assert e.data[:n] == sent[:n]


def test_pieces_answered_after_the_last(target: str) -> None:
    """Steps: OFPMP_DESC as three empty pieces, a barrier after the first two; then a flow
    stats request as an empty piece plus the body.
    Verify: nothing for the xid before the barrier reply; one DESC reply after the last
    piece; the flow stats reply lists the one startup flow."""
    with ofp.Client.connect(target) as c:
        x = ofp.next_xid()
        c.send(piece(ofp.OFPMP_DESC, x) + piece(ofp.OFPMP_DESC, x))
        assert [m for m in until_barrier(c) if m.xid == x] == []
        c.send(piece(ofp.OFPMP_DESC, x, more=False))
        (m,) = replies(c, x)
        mp_type, flags, body = ofp.multipart_reply_info(m)
        assert (m.type, mp_type, flags) == (ofp.OFPT_MULTIPART_REPLY, ofp.OFPMP_DESC, 0)
        assert b"Sluice" in body

        y = ofp.next_xid()
        c.send(piece(ofp.OFPMP_FLOW, y)
               + piece(ofp.OFPMP_FLOW, y, ofp.flow_stats_request_body(), more=False))
        n = sum(ofp.count_flow_stats(ofp.multipart_reply_info(r)[2]) for r in replies(c, y))
        assert n == 1


def test_interleaved_xids(target: str) -> None:
    """Steps: PORT_DESC piece (xid A), DESC piece (xid B), DESC last piece (B), PORT_DESC
    last piece (A).
    Verify: B's DESC reply, then A's PORT_DESC reply with both ports; no error."""
    with ofp.Client.connect(target) as c:
        a, b = ofp.next_xid(), ofp.next_xid()
        c.send(piece(ofp.OFPMP_PORT_DESC, a) + piece(ofp.OFPMP_DESC, b)
               + piece(ofp.OFPMP_DESC, b, more=False))
        (mb,) = replies(c, b)
        assert ofp.multipart_reply_info(mb)[0] == ofp.OFPMP_DESC
        c.send(piece(ofp.OFPMP_PORT_DESC, a, more=False))
        ra = replies(c, a)
        assert all(ofp.multipart_reply_info(m)[0] == ofp.OFPMP_PORT_DESC for m in ra)
        assert sum(len(ofp.multipart_reply_info(m)[2]) for m in ra) == 2 * 64  # ofp_port
        assert c.errors_since(0.2) == []


def test_type_change_and_bad_body(target: str) -> None:
    """Steps: a DESC piece then a TABLE piece of the same xid; a PORT_STATS piece with a
    4-byte body (8 needed); a FLOW piece whose match is garbage.
    Verify: BAD_REQUEST/BAD_MULTIPART for the type change, BAD_REQUEST/BAD_LEN and
    BAD_MATCH/BAD_TYPE for the bodies, each echoing the piece at once; the connection
    still answers a barrier."""
    with ofp.Client.connect(target) as c:
        x = ofp.next_xid()
        c.send(piece(ofp.OFPMP_DESC, x))
        bad = piece(ofp.OFPMP_TABLE, x)
        c.send(bad)
        expect_error(c, x, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_MULTIPART, bad)
        y = ofp.next_xid()
        c.send(piece(ofp.OFPMP_PORT_STATS, y))
        bad = piece(ofp.OFPMP_PORT_STATS, y, b"\0\0\0\1")
        c.send(bad)
        expect_error(c, y, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_LEN, bad)
        z = ofp.next_xid()
        bad = piece(ofp.OFPMP_FLOW, z, b"\xff" * 40)
        c.send(bad)
        expect_error(c, z, ofp.OFPET_BAD_MATCH, ofp.OFPBMC_BAD_TYPE, bad)
        until_barrier(c)


def test_table_features_in_pieces(target: str) -> None:
    """Steps: TABLE_FEATURES as three empty pieces; then as pieces whose bodies together
    would set the table features.
    Verify: the first gets the table features reply (its last message without
    REPLY_MORE); the second TABLE_FEATURES_FAILED/EPERM after its last piece only,
    echoing the reassembled request (both bodies)."""
    with ofp.Client.connect(target) as c:
        x = ofp.next_xid()
        c.send(piece(ofp.OFPMP_TABLE_FEATURES, x) + piece(ofp.OFPMP_TABLE_FEATURES, x)
               + piece(ofp.OFPMP_TABLE_FEATURES, x, more=False))
        rx = replies(c, x)
        assert all(m.type == ofp.OFPT_MULTIPART_REPLY for m in rx)
        assert all(ofp.multipart_reply_info(m)[0] == ofp.OFPMP_TABLE_FEATURES for m in rx)

        y = ofp.next_xid()
        c.send(piece(ofp.OFPMP_TABLE_FEATURES, y, b"\0\x40" + b"\0" * 6))
        assert [m for m in until_barrier(c) if m.xid == y] == []
        c.send(piece(ofp.OFPMP_TABLE_FEATURES, y, b"tail", more=False))
        whole = ofp.multipart_request(ofp.OFPMP_TABLE_FEATURES, b"\0\x40" + b"\0" * 6 + b"tail",
                                      xid=y)
        expect_error(c, y, ofp.OFPET_TABLE_FEATURES_FAILED, ofp.OFPTFFC_EPERM, whole)


def test_bounds(target: str) -> None:
    """Steps: open OPEN_MAX requests, then one more xid; finish the open ones.  Then send
    empty pieces of one xid until past HELD_MAX bytes.
    Verify: the extra xid gets BAD_REQUEST/MULTIPART_BUFFER_OVERFLOW and the open ones
    are all answered; the piece that takes the held bytes past HELD_MAX gets the same
    error, none before it; the connection still answers a barrier."""
    with ofp.Client.connect(target) as c:
        xids = [ofp.next_xid() for _ in range(OPEN_MAX)]
        c.send(b"".join(piece(ofp.OFPMP_DESC, x) for x in xids))
        extra = ofp.next_xid()
        bad = piece(ofp.OFPMP_DESC, extra)
        c.send(bad)
        expect_error(c, extra, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_MULTIPART_BUFFER_OVERFLOW, bad)
        c.send(b"".join(piece(ofp.OFPMP_DESC, x, more=False) for x in xids))
        for x in xids:
            (m,) = replies(c, x)
            assert m.type == ofp.OFPT_MULTIPART_REPLY

        y = ofp.next_xid()
        n_fit = HELD_MAX // 16
        c.send(piece(ofp.OFPMP_DESC, y) * n_fit)
        assert [m for m in until_barrier(c) if m.xid == y] == []
        last = piece(ofp.OFPMP_DESC, y)
        c.send(last)
        expect_error(c, y, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_MULTIPART_BUFFER_OVERFLOW, last)
        until_barrier(c)
