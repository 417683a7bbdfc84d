"""OpenState state tables over OpenFlow (issue #9): Sluice's experimenter messages as bytes.

The byte layouts are docs/openflow.md section 12.6; ``src/ofp/ofp_state.c`` is the switch's
codec and these encoders produce the same bytes (python/tests/test_sluice_openstate.py checks
the examples of the docs).  Pure Python: with os-ken, pass a body as the ``data`` of an
``OFPExperimenter(dp, experimenter=ofp.SL_EXPERIMENTER_ID, exp_type=..., data=...)``, and an
action or OXM from here as raw bytes of a flow_mod built with :mod:`sluice.ofp`.

- :func:`state_table` / :func:`state_table_data`: declare a state table (lookup and update
  scopes, capacity), the form of ``table=0,kind=state,lookup=nw_src,update=nw_src,size=N``;
- :func:`action_set_state`: the ``set_state`` action; :func:`oxm_state`: match on ``state``;
- :func:`state_set`, :func:`state_del`: write or delete a flow's state (the key is OXM TLVs
  giving every lookup-scope field, e.g. ``[ofp.oxm_eth_type(0x800), ofp.oxm_ipv4_src(a)]``);
- :func:`state_dump_request`, :func:`state_stats_request` and the reply parsers
  :func:`parse_state_dump_reply`, :func:`parse_state_stats_reply`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sluice import ofp

#: Experimenter message types (exp_type) of the OpenState extension.
SL_OFPX_STATE_TABLE = 10
SL_OFPX_STATE_SET = 11
SL_OFPX_STATE_DEL = 12
SL_OFPX_STATE_DUMP = 13
SL_OFPX_STATE_DUMP_REPLY = 14
SL_OFPX_STATE_STATS = 15
SL_OFPX_STATE_STATS_REPLY = 16
#: Experimenter action subtype of set_state; experimenter OXM field of ``state``.
SL_OFPXAT_SET_STATE = 1
SL_OXM_SL_STATE = 2
#: ``table_id`` of a set_state that writes the state table the packet last passed.
STATE_TABLE_AUTO = 0xFF
STATE_DEL_ALL = 0x1
STATE_REPLY_MORE = 0x1
SCOPE_FIELDS_MAX = 8
U32 = 0xFFFFFFFF


def _u32(value: int, what: str) -> int:
    if not 0 <= value <= U32:
        raise ValueError(f"{what} {value}: 0..{U32}")
    return value


def _table(table_id: int) -> int:
    if not 0 <= table_id <= ofp.TABLE_ID_MAX:
        raise ValueError(f"table id {table_id}: 0..{ofp.TABLE_ID_MAX}")
    return table_id


def oxm_state(state: int, mask: int | None = None) -> bytes:
    """``state=STATE[/MASK]`` TLV (experimenter OXM field 2, value and mask 32 bits)."""
    val = struct.pack("!I", _u32(state, "state"))
    if mask is None:
        return struct.pack("!II", (0xFFFF << 16) | (SL_OXM_SL_STATE << 9) | 8,
                           ofp.SL_EXPERIMENTER_ID) + val
    msk = struct.pack("!I", _u32(mask, "state mask"))
    val = bytes(a & b for a, b in zip(val, msk, strict=True))
    return struct.pack("!II", (0xFFFF << 16) | (SL_OXM_SL_STATE << 9) | (1 << 8) | 12,
                       ofp.SL_EXPERIMENTER_ID) + val + msk


def action_set_state(state: int, table_id: int = STATE_TABLE_AUTO, idle_ms: int = 0,
                     hard_ms: int = 0, rollback: int = 0) -> bytes:
    """The 32-byte set_state action (flow syntax ``set_state(S,table=T,idle_ms=I,...)``)."""
    if table_id != STATE_TABLE_AUTO:
        _table(table_id)
    return struct.pack("!HHIHBBIIII4x", 0xFFFF, 32, ofp.SL_EXPERIMENTER_ID, SL_OFPXAT_SET_STATE,
                       table_id, 0, _u32(state, "state"), _u32(rollback, "rollback"),
                       _u32(idle_ms, "idle_ms"), _u32(hard_ms, "hard_ms"))


def state_table_data(table_id: int, lookup: Sequence[str | bytes],
                     update: Sequence[str | bytes] = (), max_entries: int = 0,
                     name: str = "") -> bytes:
    """The SL_OFPX_STATE_TABLE body: scopes as flow-syntax field names (or OXM ids)."""
    if not 1 <= len(lookup) <= SCOPE_FIELDS_MAX or len(update) > SCOPE_FIELDS_MAX:
        raise ValueError(f"scopes of 1..{SCOPE_FIELDS_MAX} fields (update may be empty)")
    if update and len(update) != len(lookup):
        raise ValueError("lookup and update scopes must pair up")
    raw_name = name.encode()
    if len(raw_name) > ofp.TABLE_NAME_MAX or b"\0" in raw_name:
        raise ValueError(f"table name {name!r}: at most {ofp.TABLE_NAME_MAX} bytes")
    ids = [ofp.oxm_id(f) for f in (*lookup, *update)]
    return (struct.pack("!BBBxI32s", _table(table_id), len(lookup), len(update),
                        _u32(max_entries, "max_entries"), raw_name) + b"".join(ids))


def state_table(table_id: int, lookup: Sequence[str | bytes], update: Sequence[str | bytes] = (),
                max_entries: int = 0, name: str = "", xid: int = 0) -> bytes:
    """A whole SL_OFPX_STATE_TABLE message."""
    return ofp.experimenter(ofp.SL_EXPERIMENTER_ID, SL_OFPX_STATE_TABLE,
                            state_table_data(table_id, lookup, update, max_entries, name), xid)


def _mod_data(table_id: int, flags: int, key: Iterable[bytes], state: int = 0,
              rollback: int = 0, idle_ms: int = 0, hard_ms: int = 0) -> bytes:
    return (struct.pack("!BBxxIIII4x", _table(table_id), flags, _u32(state, "state"),
                        _u32(rollback, "rollback"), _u32(idle_ms, "idle_ms"),
                        _u32(hard_ms, "hard_ms")) + ofp.match(list(key)))


def state_set(table_id: int, key: Iterable[bytes], state: int, *, rollback: int = 0,
              idle_ms: int = 0, hard_ms: int = 0, xid: int = 0) -> bytes:
    """SL_OFPX_STATE_SET: the state of the flow @key (OXM TLVs of the lookup scope)."""
    return ofp.experimenter(ofp.SL_EXPERIMENTER_ID, SL_OFPX_STATE_SET,
                            _mod_data(table_id, 0, key, state, rollback, idle_ms, hard_ms), xid)


def state_del(table_id: int, key: Iterable[bytes] | None = None, xid: int = 0) -> bytes:
    """SL_OFPX_STATE_DEL: one flow's state, or every state with @key None."""
    flags = STATE_DEL_ALL if key is None else 0
    return ofp.experimenter(ofp.SL_EXPERIMENTER_ID, SL_OFPX_STATE_DEL,
                            _mod_data(table_id, flags, key or ()), xid)


def state_dump_request(table_id: int, xid: int = 0) -> bytes:
    return ofp.experimenter(ofp.SL_EXPERIMENTER_ID, SL_OFPX_STATE_DUMP,
                            struct.pack("!B7x", _table(table_id)), xid)


def state_stats_request(table_id: int, xid: int = 0) -> bytes:
    return ofp.experimenter(ofp.SL_EXPERIMENTER_ID, SL_OFPX_STATE_STATS,
                            struct.pack("!B7x", _table(table_id)), xid)


@dataclass(frozen=True)
class StateEntry:
    """One entry of a dump reply; ``key`` is the encoded ofp_match (OXM TLVs inside)."""

    key: bytes
    state: int
    rollback: int
    idle_ms: int
    hard_ms: int
    idle_left_ms: int
    hard_left_ms: int


def _exp_body(msg: bytes, exp_type: int) -> bytes:
    h = ofp.parse_header(msg)
    if h.type != ofp.OFPT_EXPERIMENTER or len(msg) < 16 or h.length != len(msg):
        raise ValueError("not a whole experimenter message")
    exp_id, t = struct.unpack_from("!II", msg, 8)
    if exp_id != ofp.SL_EXPERIMENTER_ID or t != exp_type:
        raise ValueError(f"experimenter {exp_id:#x} type {t}, expected type {exp_type}")
    return msg[16:]


def parse_state_dump_reply(msg: bytes) -> tuple[int, bool, list[StateEntry]]:
    """(table_id, more parts follow, entries) of one SL_OFPX_STATE_DUMP_REPLY part."""
    body = _exp_body(msg, SL_OFPX_STATE_DUMP_REPLY)
    if len(body) < 8:
        raise ValueError("short dump reply")
    table_id, flags, n = struct.unpack_from("!BxHI", body)
    entries, ofs = [], 8
    while ofs < len(body):
        if len(body) - ofs < 32:
            raise ValueError("truncated entry")
        length, state, rb, idle, hard, idle_left, hard_left = struct.unpack_from(
            "!H2xIIIIII", body, ofs)
        if length < 40 or length % 8 or ofs + length > len(body):
            raise ValueError(f"bad entry length {length}")
        entries.append(StateEntry(body[ofs + 32:ofs + length], state, rb, idle, hard, idle_left,
                                  hard_left))
        ofs += length
    if len(entries) != n:
        raise ValueError(f"{len(entries)} entries, the part says {n}")
    return table_id, bool(flags & STATE_REPLY_MORE), entries


STATS_FIELDS = ("lookups", "hits", "sets", "inserts", "deletes", "expired", "evicted", "refused",
                "commands", "bytes", "foreign")


def parse_state_stats_reply(msg: bytes) -> dict[str, int]:
    """The counters of a SL_OFPX_STATE_STATS_REPLY, with table_id, capacity and n_entries."""
    body = _exp_body(msg, SL_OFPX_STATE_STATS_REPLY)
    if len(body) != 104:
        raise ValueError(f"stats reply body of {len(body)} bytes, expected 104")
    table_id, capacity, n_entries = struct.unpack_from("!B3xII", body)
    out = {"table_id": table_id, "capacity": capacity, "n_entries": n_entries}
    out.update(zip(STATS_FIELDS, struct.unpack_from("!11Q", body, 16), strict=True))
    return out
