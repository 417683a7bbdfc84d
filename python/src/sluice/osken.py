"""os-ken helpers for Sluice's OpenFlow experimenter extensions.

Byte layouts live in :mod:`sluice.ofp` (stdlib only; docs/openflow-experimenter.md);
this module wraps them in os-ken message objects for controller apps::

    from sluice import osken

    @osken.set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def features(self, ev):
        dp = ev.msg.datapath
        osken.declare_table(dp, 2, "lpm", ["nw_dst"], max_entries=4096, name="fib")
        osken.declare_tables(dp, ["table=4,kind=mask,fields=nw_src+tcp_dst+raw(l4,96,12)"])

    @osken.set_ev_cls(ofp_event.EventOFPErrorMsg, MAIN_DISPATCHER)
    def error(self, ev):
        e = osken.parse_error(ev.msg)
        if e.declared_table is not None:
            self.logger.error("table %d refused: %s", e.declared_table, e.name)

A successful declaration gets no reply (like a flow_mod): send a barrier (``barrier=True``
in declare_tables) and treat an error with the declaration's xid before the barrier reply
as the refusal.  Match fields os-ken's ``OFPMatch`` cannot express (Sluice's raw fields and
nw_ttl, experimenter OXMs) go through :func:`send_raw` with bytes built by
:mod:`sluice.ofp` (``ofp.flow_mod([ofp.oxm_raw("l4", 0, 16, 0x1234)], ...)``).

Only this module and :mod:`sluice.apps` import os-ken.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import Any, TypeVar, cast

from os_ken.controller import handler as _handler
from os_ken.ofproto import ofproto_protocol, ofproto_v1_3

from sluice import ofp, openstate
from sluice.ofp import TableDecl, TableKind

__all__ = [
    "Datapath", "TableDecl", "TableKind", "barrier", "declare_table", "declare_tables",
    "decode_table_declare", "encode", "is_table_declare", "offline_datapath", "parse_error",
    "send_raw", "set_ev_cls", "table_declare_msg",
    "set_state_action", "state_table_msg", "state_set_msg", "state_del_msg",
    "send_raw", "set_ev_cls", "table_declare_msg", "ll_set_msg", "set_low_latency",
    "ffp_config_msg",
]

#: An os-ken datapath (``os_ken.controller.controller.Datapath``, or anything with
#: ``ofproto``, ``ofproto_parser``, ``send_msg``; os-ken ships no type information).
Datapath = Any
#: An os-ken message object (``MsgBase`` subclass).
Msg = Any

_F = TypeVar("_F", bound=Callable[..., Any])


def set_ev_cls(ev_cls: Any, dispatchers: Any = None) -> Callable[[_F], _F]:
    """os-ken's ``set_ev_cls`` decorator, typed so that handlers keep their signature."""
    return cast(Callable[[_F], _F], _handler.set_ev_cls(ev_cls, dispatchers))


def offline_datapath() -> Datapath:
    """An OpenFlow 1.3 protocol description usable as ``datapath`` to build and
    serialize messages without a connection (tests, pre-encoding)."""
    return ofproto_protocol.ProtocolDesc(ofproto_v1_3.OFP_VERSION)


def _parser(datapath: Datapath) -> Any:
    if datapath.ofproto.OFP_VERSION != ofp.OFP_VERSION:
        raise ValueError(f"Sluice's experimenter messages need OpenFlow 1.3, this datapath "
                         f"speaks version {datapath.ofproto.OFP_VERSION:#x}")
    return datapath.ofproto_parser


def table_declare_msg(datapath: Datapath, table_id: int, kind: TableKind | int | str,
                      fields: Iterable[str | bytes] = (), max_entries: int = 0,
                      name: str = "") -> Msg:
    """An ``OFPExperimenter`` declaring one table (SL_OFPX_TABLE_DECLARE), not sent.

    @kind: ``TableKind`` or ``"direct" | "exact" | "lpm" | "mask"``; @fields: flow-syntax
    names (``nw_dst``, ``ipv4_dst``, ``nw_ttl``, ``raw(l4,96,12)``) or encoded OXM ids;
    empty: derived from the table's first flows.  ValueError for values the switch's
    codec would refuse anyway (table id > 253, name > 31 bytes, > 24 fields, ...).
    """
    data = ofp.table_declare_data(table_id, kind, fields, max_entries, name)
    return _parser(datapath).OFPExperimenter(datapath, experimenter=ofp.SL_EXPERIMENTER_ID,
                                             exp_type=ofp.SL_OFPX_TABLE_DECLARE, data=data)


def declare_table(datapath: Datapath, table_id: int, kind: TableKind | int | str,
                  fields: Iterable[str | bytes] = (), max_entries: int = 0,
                  name: str = "") -> Msg:
    """Build and send a table declaration; returns the message (``.xid`` is set by
    ``send_msg``, to match an error reply against)."""
    msg = table_declare_msg(datapath, table_id, kind, fields, max_entries, name)
    datapath.send_msg(msg)
    return msg


def declare_tables(datapath: Datapath, decls: Iterable[TableDecl | str],
                   barrier: bool = True) -> list[Msg]:
    """Send several declarations (``TableDecl`` or flow-file lines such as
    ``"table=2,kind=lpm,fields=nw_dst,size=4096,name=fib"``), then a barrier request
    unless not @barrier.  Returns the messages sent, barrier last.  Every line is
    parsed before anything is sent (ValueError: nothing sent)."""
    parsed = [d if isinstance(d, TableDecl) else TableDecl.parse(d) for d in decls]
    msgs = [table_declare_msg(datapath, d.table_id, d.kind, d.fields, d.max_entries, d.name)
            for d in parsed]
    if barrier:
        msgs.append(_parser(datapath).OFPBarrierRequest(datapath))
    for m in msgs:
        datapath.send_msg(m)
    return msgs


def barrier(datapath: Datapath) -> Msg:
    """Send a barrier request; returns it (its ``.xid`` identifies the reply)."""
    msg = _parser(datapath).OFPBarrierRequest(datapath)
    datapath.send_msg(msg)
    return msg


def is_table_declare(msg: Msg) -> bool:
    """True for an ``OFPExperimenter`` that is a Sluice TABLE_DECLARE."""
    return (getattr(msg, "experimenter", None) == ofp.SL_EXPERIMENTER_ID
            and getattr(msg, "exp_type", None) == ofp.SL_OFPX_TABLE_DECLARE)


def decode_table_declare(msg: Msg) -> TableDecl:
    """The declaration an ``OFPExperimenter`` carries (ValueError if it is not one)."""
    if not is_table_declare(msg):
        raise ValueError("not a Sluice TABLE_DECLARE experimenter message")
    data = bytes(msg.data)
    xid = msg.xid or 0
    return TableDecl.decode(ofp.experimenter(ofp.SL_EXPERIMENTER_ID, ofp.SL_OFPX_TABLE_DECLARE,
                                             data, xid))


def parse_error(msg: Msg) -> ofp.Error:
    """An os-ken ``OFPErrorMsg`` as :class:`sluice.ofp.Error`.

    ``.name`` spells type and code (``"OFPET_BAD_MATCH/OFPBMC_DUP_FIELD"``);
    ``.declared_table`` is the table id when the refused request was a Sluice
    TABLE_DECLARE (the error's data holds its first 64 bytes), else None;
    experimenter errors (``OFPET_EXPERIMENTER``) carry ``.experimenter`` and the
    exp_type in ``.code``.
    """
    if msg.type == ofp.OFPET_EXPERIMENTER:
        return ofp.Error(msg.type, int(msg.exp_type), bytes(msg.data), int(msg.experimenter))
    return ofp.Error(int(msg.type), int(msg.code), bytes(msg.data))


def send_raw(datapath: Datapath, data: bytes) -> int:
    """Send one message encoded by :mod:`sluice.ofp` (e.g. a flow_mod with raw-field OXMs)
    with a fresh xid from the datapath's counter; returns that xid."""
    if len(data) < ofp.OFP_HEADER_LEN or ofp.parse_header(data).length != len(data):
        raise ValueError("send_raw takes exactly one whole OpenFlow message")
    _parser(datapath)
    xid = int(datapath.set_xid(_XidHolder()))
    datapath.send(data[:4] + struct.pack("!I", xid) + data[8:])
    return xid


class _XidHolder:
    """What ``Datapath.set_xid`` needs to hand out the next xid."""

    xid: int | None = None

    def set_xid(self, xid: int) -> None:
        self.xid = xid


def encode(msg: Msg, xid: int | None = None) -> bytes:
    """Serialize an os-ken message to bytes (with @xid when given), as send_msg would."""
    if xid is not None:
        msg.set_xid(xid)
    msg.serialize()  # an unset xid is written as 0
    return bytes(msg.buf)


# ---------------------------------------------------------------------------
# OpenState state tables (issue #9; sluice.openstate has the byte layouts)
# ---------------------------------------------------------------------------


def state_table_msg(datapath: Datapath, table_id: int, lookup: list[str],
                    update: list[str] | None = None, max_entries: int = 0,
                    name: str = "") -> Msg:
    """An ``OFPExperimenter`` declaring a state table (SL_OFPX_STATE_TABLE), not sent."""
    data = openstate.state_table_data(table_id, lookup, update or [], max_entries, name)
    return _parser(datapath).OFPExperimenter(datapath, experimenter=ofp.SL_EXPERIMENTER_ID,
                                             exp_type=openstate.SL_OFPX_STATE_TABLE, data=data)


def _mod_msg(datapath: Datapath, exp_type: int, msg: bytes) -> Msg:
    return _parser(datapath).OFPExperimenter(datapath, experimenter=ofp.SL_EXPERIMENTER_ID,
                                             exp_type=exp_type, data=msg[16:])


def state_set_msg(datapath: Datapath, table_id: int, key: list[bytes], state: int, *,
                  rollback: int = 0, idle_ms: int = 0, hard_ms: int = 0) -> Msg:
    """SL_OFPX_STATE_SET as an ``OFPExperimenter``; @key: OXM TLVs (``sluice.ofp.oxm_*``)
    giving every lookup-scope field."""
    return _mod_msg(datapath, openstate.SL_OFPX_STATE_SET,
                    openstate.state_set(table_id, key, state, rollback=rollback,
                                        idle_ms=idle_ms, hard_ms=hard_ms))


def state_del_msg(datapath: Datapath, table_id: int, key: list[bytes] | None = None) -> Msg:
    """SL_OFPX_STATE_DEL as an ``OFPExperimenter`` (every state of the table when @key is None)."""
    return _mod_msg(datapath, openstate.SL_OFPX_STATE_DEL, openstate.state_del(table_id, key))


def set_state_action(datapath: Datapath, state: int, table_id: int = openstate.STATE_TABLE_AUTO,
                     idle_ms: int = 0, hard_ms: int = 0, rollback: int = 0) -> Any:
    """The set_state action as os-ken's ``OFPActionExperimenterUnknown``, for the actions of
    an ``OFPFlowMod`` (matches on ``state`` need :func:`send_raw` with
    ``sluice.openstate.oxm_state``: os-ken's OFPMatch has no such field)."""
    raw = openstate.action_set_state(state, table_id, idle_ms, hard_ms, rollback)
    return _parser(datapath).OFPActionExperimenterUnknown(experimenter=ofp.SL_EXPERIMENTER_ID,
                                                          data=raw[8:])

def _match_bytes(match: Any) -> bytes:
    """An ofp_match as bytes from an os-ken ``OFPMatch``, encoded bytes or a list of OXMs."""
    if isinstance(match, (bytes, bytearray)):
        return bytes(match)
    if isinstance(match, (list, tuple)):
        return ofp.match(list(match))
    buf = bytearray()
    match.serialize(buf, 0)
    return bytes(buf)


def ll_set_msg(datapath: Datapath, table_id: int, match: Any = (), *, on: bool = True,
               priority: int = 0x8000, strict: bool = True, cookie: int = 0,
               cookie_mask: int = 0) -> Msg:
    """An ``OFPExperimenter`` SL_OFPX_LL_SET (not sent): mark (@on) or unmark the flows
    selected like a flow_mod modify as low-latency (docs/openflow.md 12.7).  @match: an
    os-ken ``OFPMatch``, encoded ofp_match bytes, or a list of :mod:`sluice.ofp` OXMs."""
    data = ofp.ll_set_data(table_id, _match_bytes(match), on=on, priority=priority,
                           strict=strict, cookie=cookie, cookie_mask=cookie_mask)
    return _parser(datapath).OFPExperimenter(datapath, experimenter=ofp.SL_EXPERIMENTER_ID,
                                             exp_type=ofp.SL_OFPX_LL_SET, data=data)


def set_low_latency(datapath: Datapath, table_id: int, match: Any = (), *, on: bool = True,
                    priority: int = 0x8000, strict: bool = True) -> Msg:
    """Send an SL_OFPX_LL_SET right after the flow_mod that added the flow (the same batch:
    packets see both at once).  No reply on success; send a barrier to confirm."""
    msg = ll_set_msg(datapath, table_id, match, on=on, priority=priority, strict=strict)
    datapath.send_msg(msg)
    return msg


def ffp_config_msg(datapath: Datapath, enabled: bool = True, *, cost_model: bool = True,
                   auto_pps: int = 0, auto_min_timeout: int = 0) -> Msg:
    """An ``OFPExperimenter`` SL_OFPX_FFP_CONFIG (not sent; docs/openflow.md 12.8)."""
    data = ofp.ffp_config_data(enabled, cost_model=cost_model, auto_pps=auto_pps,
                               auto_min_timeout=auto_min_timeout)
    return _parser(datapath).OFPExperimenter(datapath, experimenter=ofp.SL_EXPERIMENTER_ID,
                                             exp_type=ofp.SL_OFPX_FFP_CONFIG, data=data)
