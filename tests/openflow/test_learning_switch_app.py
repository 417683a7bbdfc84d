"""The os-ken learning-switch app against a scripted fake switch (no Sluice needed).

The test plays the switch side of OpenFlow 1.3 over TCP with sluice.ofp:
HELLO, FEATURES_REPLY, an empty PORT_DESC reply, then packet_ins, and checks
the flow_mods and packet_outs ``python -m sluice.apps.run learning_switch``
sends back.
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("OSKEN_HUB_TYPE", "eventlet")
pytest.importorskip("os_ken")

from os_ken.ofproto import ofproto_v1_3 as ofproto  # noqa: E402
from os_ken.ofproto import ofproto_v1_3_parser as parser  # noqa: E402

from sluice import ofp, testing  # noqa: E402

H1 = "02:00:00:00:00:01"
H2 = "02:00:00:00:00:02"


class _Datapath:
    ofproto = ofproto
    ofproto_parser = parser


@pytest.fixture
def app() -> Iterator[tuple[testing.Proc, int]]:
    """The learning-switch app on a free port; stopped by PID afterwards."""
    port = testing.free_tcp_port()
    proc = testing.Proc([sys.executable, "-m", "sluice.apps.run",
                         f"--ofp-tcp-listen-port={port}", "learning_switch"], name="os-ken")
    try:
        testing.wait_until(lambda: testing.tcp_listening(port) or not proc.alive(), 30,
                           "the os-ken app to listen")
        assert proc.alive(), proc.output
        yield proc, port
    finally:
        rc = proc.stop()
        assert rc == 0, proc.output  # SIGTERM ends it cleanly


def _switch_handshake(c: ofp.Client, dpid: int = 0x5A) -> None:
    """Answer the controller's features and port-desc requests as a 2-port switch would."""
    while True:
        m = c.recv(10)
        if m.type == ofp.OFPT_FEATURES_REQUEST:
            c.send(ofp.message(ofp.OFPT_FEATURES_REPLY,
                               struct.pack("!QIBB2xII", dpid, 0, 254, 0, 0, 0), m.xid))
        elif m.type == ofp.OFPT_MULTIPART_REQUEST:
            mp_type, _ = struct.unpack_from("!HH", m.raw, 8)
            assert mp_type == ofp.OFPMP_PORT_DESC
            c.send(ofp.message(ofp.OFPT_MULTIPART_REPLY, struct.pack("!HH4x", mp_type, 0), m.xid))
            return
        elif m.type == ofp.OFPT_ECHO_REQUEST:
            c.send(ofp.echo_reply(m.body, m.xid))


def _packet_in(in_port: int, frame: bytes) -> bytes:
    body = struct.pack("!IHBBQ", ofp.OFP_NO_BUFFER, len(frame), 0, 0, 0)
    return ofp.message(ofp.OFPT_PACKET_IN,
                       body + ofp.match([ofp.oxm_in_port(in_port)]) + b"\0\0" + frame)


def _parse_packet_out(m: ofp.Msg) -> tuple[int, int, list[int], bytes]:
    """(buffer_id, in_port, output ports, data) of a packet_out with output actions."""
    buffer_id, in_port, alen = struct.unpack_from("!IIH", m.raw, 8)
    outs, off = [], 24
    while off < 24 + alen:
        atype, length, port = struct.unpack_from("!HHI", m.raw, off)
        assert atype == ofp.OFPAT_OUTPUT
        outs.append(port)
        off += length
    return buffer_id, in_port, outs, m.raw[24 + alen:]


def _parse(m: ofp.Msg) -> Any:
    """os-ken's decoding of a message it has a parser for (flow_mod)."""
    return parser.msg_parser(_Datapath(), m.version, m.type, len(m.raw), m.xid, m.raw)


def _next(c: ofp.Client, types: set[int]) -> ofp.Msg:
    return c.wait_for(lambda m: m.type in types, 10)


def test_learning_switch_app(app: tuple[testing.Proc, int]) -> None:
    """Steps: connect as a switch; packet_in h1->h2 on port 1, then h2->h1 on port 2.
    Verify: the table-miss entry (priority 0, output CONTROLLER NO_BUFFER) comes first;
    h1->h2 is flooded by packet_out with the frame and no flow; h2->h1 installs
    in_port=2,eth_dst=h1 -> output:1 (priority 1, idle 60) before the packet_out to 1."""
    proc, port = app
    with ofp.Client.connect(f"tcp:127.0.0.1:{port}") as c:
        _switch_handshake(c)
        miss = _parse(_next(c, {ofp.OFPT_FLOW_MOD}))
        assert (miss.priority, miss.table_id, miss.command) == (0, 0, ofp.OFPFC_ADD)
        assert len(miss.match.fields) == 0
        (act,) = miss.instructions[0].actions
        assert (act.port, act.max_len) == (ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)

        f1 = testing.eth_frame(H2, H1, b"first")
        c.send(_packet_in(1, f1))
        m = _next(c, {ofp.OFPT_PACKET_OUT, ofp.OFPT_FLOW_MOD})
        assert m.type == ofp.OFPT_PACKET_OUT, "no flow for an unknown destination"
        assert _parse_packet_out(m) == (ofp.OFP_NO_BUFFER, 1, [ofp.OFPP_FLOOD], f1)

        f2 = testing.eth_frame(H1, H2, b"reply")
        c.send(_packet_in(2, f2))
        fm = _parse(_next(c, {ofp.OFPT_FLOW_MOD, ofp.OFPT_PACKET_OUT}))
        assert isinstance(fm, parser.OFPFlowMod), "the flow_mod must precede the packet_out"
        assert (fm.priority, fm.idle_timeout, fm.table_id) == (1, 60, 0)
        assert dict(fm.match.items()) == {"in_port": 2, "eth_dst": H1}
        assert fm.instructions[0].actions[0].port == 1
        m = _next(c, {ofp.OFPT_PACKET_OUT})
        assert _parse_packet_out(m) == (ofp.OFP_NO_BUFFER, 2, [1], f2)
    assert proc.alive(), proc.output
