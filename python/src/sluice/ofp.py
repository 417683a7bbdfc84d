"""A minimal raw OpenFlow 1.3 client and message builders (control path, test side).

Everything here is plain ``struct`` packing over a blocking socket, independent of
os-ken, so a benchmark can pre-encode 100,000 flow_mods in well under a second and
a test can send deliberately malformed bytes.  Builders return ``bytes`` of one
whole message (header included); ``xid`` defaults to 0 where the caller does not
care.

Example::

    from sluice import ofp
    with ofp.Client.connect("unix:/tmp/sluice.sock") as c:
        c.send(ofp.flow_mod(match=[ofp.oxm_in_port(1)], actions=[ofp.action_output(2)]))
        c.barrier()
        flows = c.multipart(ofp.OFPMP_FLOW, ofp.flow_stats_request_body())
"""

from __future__ import annotations

import enum
import itertools
import re
import select
import socket
import struct
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

# ---------------------------------------------------------------------------
# Constants (OpenFlow 1.3.5, openflow.h names without the enum prefixes' noise)
# ---------------------------------------------------------------------------

OFP_VERSION = 0x04
OFP_HEADER_LEN = 8
OFP_TCP_PORT = 6653

# Message types.
OFPT_HELLO = 0
OFPT_ERROR = 1
OFPT_ECHO_REQUEST = 2
OFPT_ECHO_REPLY = 3
OFPT_EXPERIMENTER = 4
OFPT_FEATURES_REQUEST = 5
OFPT_FEATURES_REPLY = 6
OFPT_GET_CONFIG_REQUEST = 7
OFPT_GET_CONFIG_REPLY = 8
OFPT_SET_CONFIG = 9
OFPT_PACKET_IN = 10
OFPT_FLOW_REMOVED = 11
OFPT_PORT_STATUS = 12
OFPT_PACKET_OUT = 13
OFPT_FLOW_MOD = 14
OFPT_GROUP_MOD = 15
OFPT_PORT_MOD = 16
OFPT_TABLE_MOD = 17
OFPT_MULTIPART_REQUEST = 18
OFPT_MULTIPART_REPLY = 19
OFPT_BARRIER_REQUEST = 20
OFPT_BARRIER_REPLY = 21

# Hello elements.
OFPHET_VERSIONBITMAP = 1

# Flow-mod commands and flags.
OFPFC_ADD = 0
OFPFC_MODIFY = 1
OFPFC_MODIFY_STRICT = 2
OFPFC_DELETE = 3
OFPFC_DELETE_STRICT = 4
OFPFF_SEND_FLOW_REM = 1 << 0
OFPFF_CHECK_OVERLAP = 1 << 1
OFPFF_RESET_COUNTS = 1 << 2

# Reserved ports, buffers, groups, tables.
OFPP_MAX = 0xFFFFFF00
OFPP_IN_PORT = 0xFFFFFFF8
OFPP_TABLE = 0xFFFFFFF9
OFPP_NORMAL = 0xFFFFFFFA
OFPP_FLOOD = 0xFFFFFFFB
OFPP_ALL = 0xFFFFFFFC
OFPP_CONTROLLER = 0xFFFFFFFD
OFPP_LOCAL = 0xFFFFFFFE
OFPP_ANY = 0xFFFFFFFF
OFPCML_NO_BUFFER = 0xFFFF
OFP_NO_BUFFER = 0xFFFFFFFF
OFPG_ANY = 0xFFFFFFFF
OFPTT_ALL = 0xFF

# Match, OXM.
OFPMT_OXM = 1
OFPXMC_OPENFLOW_BASIC = 0x8000
OFPXMT_IN_PORT = 0
OFPXMT_METADATA = 2
OFPXMT_ETH_DST = 3
OFPXMT_ETH_SRC = 4
OFPXMT_ETH_TYPE = 5
OFPXMT_IP_PROTO = 10
OFPXMT_IPV4_SRC = 11
OFPXMT_IPV4_DST = 12
OFPXMT_TCP_SRC = 13
OFPXMT_TCP_DST = 14
OFPXMT_UDP_SRC = 15
OFPXMT_UDP_DST = 16

# Instructions.
OFPIT_GOTO_TABLE = 1
OFPIT_WRITE_METADATA = 2
OFPIT_WRITE_ACTIONS = 3
OFPIT_APPLY_ACTIONS = 4
OFPIT_CLEAR_ACTIONS = 5

# Actions.
OFPAT_OUTPUT = 0
OFPAT_GROUP = 22
OFPAT_SET_FIELD = 25
OFPAT_EXPERIMENTER = 0xFFFF

# Multipart.
OFPMP_DESC = 0
OFPMP_FLOW = 1
OFPMP_AGGREGATE = 2
OFPMP_TABLE = 3
OFPMP_PORT_STATS = 4
OFPMP_GROUP_DESC = 7
OFPMP_TABLE_FEATURES = 12
OFPMP_PORT_DESC = 13
OFPMP_EXPERIMENTER = 0xFFFF
OFPMPF_REQ_MORE = 1
OFPMPF_REPLY_MORE = 1

# Error types and the codes the tests use.
OFPET_HELLO_FAILED = 0
OFPHFC_INCOMPATIBLE = 0
OFPET_BAD_REQUEST = 1
OFPBRC_BAD_VERSION = 0
OFPBRC_BAD_TYPE = 1
OFPBRC_BAD_MULTIPART = 2
OFPBRC_BAD_EXPERIMENTER = 3
OFPBRC_BAD_EXP_TYPE = 4
OFPBRC_BAD_LEN = 6
OFPBRC_BAD_TABLE_ID = 9
OFPBRC_MULTIPART_BUFFER_OVERFLOW = 13
OFPET_BAD_ACTION = 2
OFPBAC_BAD_TYPE = 0
OFPBAC_BAD_LEN = 1
OFPBAC_BAD_OUT_PORT = 4
OFPBAC_BAD_OUT_GROUP = 9
OFPET_BAD_INSTRUCTION = 3
OFPBIC_UNKNOWN_INST = 0
OFPBIC_BAD_TABLE_ID = 2
OFPET_BAD_MATCH = 4
OFPBMC_BAD_TYPE = 0
OFPBMC_BAD_LEN = 1
OFPBMC_BAD_FIELD = 6
OFPBMC_BAD_PREREQ = 9
OFPBMC_BAD_VALUE = 7
OFPBMC_BAD_MASK = 8
OFPBMC_DUP_FIELD = 10
OFPET_FLOW_MOD_FAILED = 5
OFPET_GROUP_MOD_FAILED = 6
OFPET_PORT_MOD_FAILED = 7
OFPET_TABLE_MOD_FAILED = 8
OFPTMFC_BAD_TABLE = 0
OFPTMFC_BAD_CONFIG = 1
OFPTMFC_EPERM = 2
OFPET_TABLE_FEATURES_FAILED = 13
OFPTFFC_EPERM = 5
OFPET_EXPERIMENTER = 0xFFFF

# OXM classes.
OFPXMC_EXPERIMENTER = 0xFFFF

_HEADER = struct.Struct("!BBHI")
_xids = itertools.count(1)


def next_xid() -> int:
    """A fresh transaction id (process-wide counter, 32-bit wrap)."""
    return next(_xids) & 0xFFFFFFFF


def pad8(n: int) -> int:
    """Bytes of padding that round @n up to a multiple of 8."""
    return (8 - n % 8) % 8


# ---------------------------------------------------------------------------
# Generic framing
# ---------------------------------------------------------------------------


def header(msg_type: int, length: int, xid: int = 0, version: int = OFP_VERSION) -> bytes:
    """An ofp_header."""
    return _HEADER.pack(version, msg_type, length, xid)


def message(msg_type: int, body: bytes = b"", xid: int = 0, version: int = OFP_VERSION) -> bytes:
    """One whole message: header (with the right length) + @body."""
    return _HEADER.pack(version, msg_type, OFP_HEADER_LEN + len(body), xid) + body


class Header(NamedTuple):
    """A decoded ofp_header."""

    version: int
    type: int
    length: int
    xid: int


def parse_header(data: bytes) -> Header:
    """Decode the first 8 bytes of @data."""
    return Header(*_HEADER.unpack_from(data))


# ---------------------------------------------------------------------------
# Symmetric and simple messages
# ---------------------------------------------------------------------------


def hello(versions: Iterable[int] = (OFP_VERSION,), xid: int = 0,
          version: int | None = None, bitmap: bool = True) -> bytes:
    """OFPT_HELLO with a version-bitmap element (unless @bitmap is False).

    @version is the header version; default: the highest of @versions.
    """
    vs = sorted(set(versions))
    hv = version if version is not None else vs[-1]
    if not bitmap:
        return message(OFPT_HELLO, b"", xid, hv)
    n_words = max(vs) // 32 + 1
    words = [0] * n_words
    for v in vs:
        words[v // 32] |= 1 << (v % 32)
    elem_len = 4 + 4 * n_words
    elem = struct.pack("!HH", OFPHET_VERSIONBITMAP, elem_len)
    elem += b"".join(struct.pack("!I", w) for w in words)
    elem += b"\0" * pad8(elem_len)
    return message(OFPT_HELLO, elem, xid, hv)


def hello_versions(msg: bytes) -> set[int]:
    """Versions a peer's HELLO announces: its bitmap, else its header version."""
    h = parse_header(msg)
    off = OFP_HEADER_LEN
    while off + 4 <= h.length:
        etype, elen = struct.unpack_from("!HH", msg, off)
        if elen < 4:
            break
        if etype == OFPHET_VERSIONBITMAP:
            out = set()
            for i in range((elen - 4) // 4):
                (w,) = struct.unpack_from("!I", msg, off + 4 + 4 * i)
                out |= {32 * i + b for b in range(32) if w >> b & 1}
            return out
        off += elen + pad8(elen)
    return {h.version}


def echo_request(data: bytes = b"", xid: int = 0) -> bytes:
    return message(OFPT_ECHO_REQUEST, data, xid)


def echo_reply(data: bytes = b"", xid: int = 0) -> bytes:
    return message(OFPT_ECHO_REPLY, data, xid)


def barrier_request(xid: int = 0) -> bytes:
    return message(OFPT_BARRIER_REQUEST, b"", xid)


def features_request(xid: int = 0) -> bytes:
    return message(OFPT_FEATURES_REQUEST, b"", xid)


def experimenter(experimenter_id: int, exp_type: int, data: bytes = b"", xid: int = 0) -> bytes:
    """OFPT_EXPERIMENTER: experimenter id, experimenter type, opaque data."""
    return message(OFPT_EXPERIMENTER, struct.pack("!II", experimenter_id, exp_type) + data, xid)


# ---------------------------------------------------------------------------
# OXM match
# ---------------------------------------------------------------------------


def oxm(field: int, value: bytes, mask: bytes | None = None,
        oxm_class: int = OFPXMC_OPENFLOW_BASIC) -> bytes:
    """One OXM TLV: class, field, hasmask, length, then value (and mask)."""
    if mask is not None and len(mask) != len(value):
        raise ValueError("mask and value differ in length")
    payload = value + (mask or b"")
    hdr = (oxm_class << 16) | (field << 9) | ((mask is not None) << 8) | len(payload)
    return struct.pack("!I", hdr) + payload


def mac_bytes(mac: str | bytes) -> bytes:
    """'aa:bb:cc:dd:ee:ff' (or 6 raw bytes) -> 6 bytes."""
    if isinstance(mac, bytes):
        if len(mac) != 6:
            raise ValueError("a MAC is 6 bytes")
        return mac
    b = bytes(int(x, 16) for x in mac.split(":"))
    if len(b) != 6:
        raise ValueError(f"bad MAC {mac!r}")
    return b


def ipv4_bytes(addr: str | int) -> bytes:
    """'10.0.0.1' or an int -> 4 bytes."""
    if isinstance(addr, int):
        return struct.pack("!I", addr)
    return socket.inet_aton(addr)


def oxm_in_port(port: int) -> bytes:
    return oxm(OFPXMT_IN_PORT, struct.pack("!I", port))


def oxm_eth_dst(mac: str | bytes, mask: str | bytes | None = None) -> bytes:
    return oxm(OFPXMT_ETH_DST, mac_bytes(mac), None if mask is None else mac_bytes(mask))


def oxm_eth_src(mac: str | bytes, mask: str | bytes | None = None) -> bytes:
    return oxm(OFPXMT_ETH_SRC, mac_bytes(mac), None if mask is None else mac_bytes(mask))


def oxm_eth_type(eth_type: int) -> bytes:
    return oxm(OFPXMT_ETH_TYPE, struct.pack("!H", eth_type))


def oxm_ip_proto(proto: int) -> bytes:
    return oxm(OFPXMT_IP_PROTO, struct.pack("!B", proto))


def oxm_ipv4_dst(addr: str | int, prefix_len: int | None = None) -> bytes:
    """ipv4_dst, masked to a /@prefix_len when given (and shorter than 32)."""
    value = ipv4_bytes(addr)
    if prefix_len is None or prefix_len == 32:
        return oxm(OFPXMT_IPV4_DST, value)
    mask = struct.pack("!I", (0xFFFFFFFF << (32 - prefix_len)) & 0xFFFFFFFF)
    value = bytes(a & b for a, b in zip(value, mask, strict=True))
    return oxm(OFPXMT_IPV4_DST, value, mask)


def oxm_ipv4_src(addr: str | int) -> bytes:
    return oxm(OFPXMT_IPV4_SRC, ipv4_bytes(addr))


def oxm_tcp_dst(port: int) -> bytes:
    return oxm(OFPXMT_TCP_DST, struct.pack("!H", port))


def oxm_udp_dst(port: int) -> bytes:
    return oxm(OFPXMT_UDP_DST, struct.pack("!H", port))


def match(oxms: Sequence[bytes] = ()) -> bytes:
    """ofp_match of type OXM holding @oxms, padded to 8 bytes."""
    body = b"".join(oxms)
    length = 4 + len(body)
    return struct.pack("!HH", OFPMT_OXM, length) + body + b"\0" * pad8(length)


# ---------------------------------------------------------------------------
# Actions and instructions
# ---------------------------------------------------------------------------


def action_output(port: int, max_len: int = OFPCML_NO_BUFFER) -> bytes:
    return struct.pack("!HHIH6x", OFPAT_OUTPUT, 16, port, max_len)


def action_group(group_id: int) -> bytes:
    return struct.pack("!HHI", OFPAT_GROUP, 8, group_id)


def action_set_field(oxm_tlv: bytes) -> bytes:
    length = 4 + len(oxm_tlv)
    return struct.pack("!HH", OFPAT_SET_FIELD, length + pad8(length)) + oxm_tlv + b"\0" * pad8(
        length)


def action_raw(action_type: int, body: bytes = b"\0\0\0\0") -> bytes:
    """Any action: type, length (4 + len(body)), body; no padding added."""
    return struct.pack("!HH", action_type, 4 + len(body)) + body


def inst_actions(actions: Sequence[bytes], kind: int = OFPIT_APPLY_ACTIONS) -> bytes:
    """apply_actions (or write_actions with @kind=OFPIT_WRITE_ACTIONS)."""
    body = b"".join(actions)
    return struct.pack("!HH4x", kind, 8 + len(body)) + body


def inst_goto_table(table_id: int) -> bytes:
    return struct.pack("!HHB3x", OFPIT_GOTO_TABLE, 8, table_id)


def inst_write_metadata(metadata: int, mask: int = 0xFFFFFFFFFFFFFFFF) -> bytes:
    return struct.pack("!HH4xQQ", OFPIT_WRITE_METADATA, 24, metadata, mask)


def inst_clear_actions() -> bytes:
    return struct.pack("!HH4x", OFPIT_CLEAR_ACTIONS, 8)


# ---------------------------------------------------------------------------
# Controller-to-switch messages
# ---------------------------------------------------------------------------

_FLOW_MOD = struct.Struct("!QQBBHHHIIIH2x")  # 40 bytes after the header


def flow_mod(
    match: Sequence[bytes] | bytes = (),
    actions: Sequence[bytes] | None = None,
    instructions: Sequence[bytes] | None = None,
    *,
    command: int = OFPFC_ADD,
    table_id: int = 0,
    priority: int = 0x8000,
    cookie: int = 0,
    cookie_mask: int = 0,
    idle_timeout: int = 0,
    hard_timeout: int = 0,
    buffer_id: int = OFP_NO_BUFFER,
    out_port: int = OFPP_ANY,
    out_group: int = OFPG_ANY,
    flags: int = 0,
    xid: int = 0,
) -> bytes:
    """OFPT_FLOW_MOD.

    @match is a list of OXM TLVs (or an already built ofp_match as bytes);
    @actions, when given, become one apply_actions instruction placed before
    @instructions.  Delete commands default to out_port/out_group ANY.
    """
    m = match if isinstance(match, bytes) else globals()["match"](match)
    insts = b""
    if actions is not None:
        insts += inst_actions(actions)
    if instructions:
        insts += b"".join(instructions)
    body = _FLOW_MOD.pack(cookie, cookie_mask, table_id, command, idle_timeout, hard_timeout,
                          priority, buffer_id, out_port, out_group, flags) + m + insts
    return message(OFPT_FLOW_MOD, body, xid)


def flow_delete(match: Sequence[bytes] = (), *, table_id: int = OFPTT_ALL, strict: bool = False,
                priority: int = 0x8000, cookie: int = 0, cookie_mask: int = 0,
                out_port: int = OFPP_ANY, xid: int = 0) -> bytes:
    """OFPT_FLOW_MOD delete (non-strict by default, all tables by default)."""
    return flow_mod(match, None, None, command=OFPFC_DELETE_STRICT if strict else OFPFC_DELETE,
                    table_id=table_id, priority=priority, cookie=cookie, cookie_mask=cookie_mask,
                    out_port=out_port, xid=xid)


def packet_out(data: bytes, actions: Sequence[bytes], in_port: int = OFPP_CONTROLLER,
               buffer_id: int = OFP_NO_BUFFER, xid: int = 0) -> bytes:
    """OFPT_PACKET_OUT carrying @data (no buffering)."""
    acts = b"".join(actions)
    body = struct.pack("!IIH6x", buffer_id, in_port, len(acts)) + acts + data
    return message(OFPT_PACKET_OUT, body, xid)


def multipart_request(mp_type: int, body: bytes = b"", flags: int = 0, xid: int = 0) -> bytes:
    """OFPT_MULTIPART_REQUEST of @mp_type with @body."""
    return message(OFPT_MULTIPART_REQUEST, struct.pack("!HH4x", mp_type, flags) + body, xid)


def flow_stats_request_body(table_id: int = OFPTT_ALL, match_oxms: Sequence[bytes] = (),
                            out_port: int = OFPP_ANY, out_group: int = OFPG_ANY,
                            cookie: int = 0, cookie_mask: int = 0) -> bytes:
    """Body of an OFPMP_FLOW (or OFPMP_AGGREGATE) request."""
    return struct.pack("!B3xII4xQQ", table_id, out_port, out_group, cookie,
                       cookie_mask) + match(match_oxms)


def flow_stats_request(table_id: int = OFPTT_ALL, match_oxms: Sequence[bytes] = (),
                       xid: int = 0) -> bytes:
    """A whole OFPMP_FLOW request (all flows of @table_id by default)."""
    return multipart_request(OFPMP_FLOW, flow_stats_request_body(table_id, match_oxms), xid=xid)


# ---------------------------------------------------------------------------
# Sluice experimenter extensions (docs/openflow-experimenter.md)
# ---------------------------------------------------------------------------

#: Sluice's experimenter id ("SLUC"; not an IEEE OUI, see the doc).
SL_EXPERIMENTER_ID = 0x534C5543
#: Experimenter message types under SL_EXPERIMENTER_ID.
SL_OFPX_TABLE_DECLARE = 1
#: Fast forwarding path (docs/openflow.md 12.7, 12.8): low-latency marks, FFP configuration.
SL_OFPX_LL_SET = 2
SL_OFPX_FFP_CONFIG = 3
SL_OFPX_LL_STRICT = 0x1
SL_OFPX_FFP_ON, SL_OFPX_FFP_AUTO, SL_OFPX_FFP_NO_MODEL = 0x1, 0x2, 0x4
#: Experimenter OXM fields (class OFPXMC_EXPERIMENTER) under SL_EXPERIMENTER_ID.
SL_OXM_SL_RAW = 0
SL_OXM_SL_IP_TTL = 1
#: Raw field bases: first byte of the frame, of L3, of L4.
RAW_BASE_PKT, RAW_BASE_L3, RAW_BASE_L4 = 0, 1, 2
RAW_BASES: dict[str, int] = {"pkt": RAW_BASE_PKT, "l3": RAW_BASE_L3, "l4": RAW_BASE_L4}
RAW_BITS_MAX = 128
#: Table declarations: longest name (bytes, NUL excluded), most key fields, highest table id.
TABLE_NAME_MAX = 31
TABLE_FIELDS_MAX = 24
TABLE_ID_MAX = 253
#: Length of a TABLE_DECLARE message without fields (header 16 + body 40).
TABLE_DECLARE_LEN = 56

_TABLE_DECLARE = struct.Struct("!BBxxI32s")  # body after exp_type: 40 bytes


class TableKind(enum.IntEnum):
    """Table kinds on the wire (``kind`` of SL_OFPX_TABLE_DECLARE); fixed numbers."""

    DIRECT = 0  # array indexed by one exact field
    EXACT = 1  # hash of all fields, every field exact
    LPM = 2  # longest prefix match on one field
    MASK = 3  # arbitrary masks, priorities ("ternary")

    @classmethod
    def parse(cls, kind: TableKind | int | str) -> TableKind:
        """A kind from its number or flow-syntax name (direct, exact, lpm, mask, ternary)."""
        if isinstance(kind, str):
            name = kind.strip().lower()
            if name == "ternary":
                return cls.MASK
            try:
                return cls[name.upper()]
            except KeyError:
                raise ValueError(f"unknown table kind {kind!r} "
                                 "(direct, exact, lpm, mask or ternary)") from None
        return cls(kind)

    @property
    def flow_name(self) -> str:
        """The flow-file spelling: direct, exact, lpm, mask."""
        return self.name.lower()


#: Match fields with an OXM basic number, as in src/pkt/pkt.h's registry:
#: flow-syntax name -> (OXM field number, bits).
FIELDS: dict[str, tuple[int, int]] = {
    "in_port": (0, 32), "metadata": (2, 64), "dl_dst": (3, 48), "dl_src": (4, 48),
    "dl_type": (5, 16), "dl_vlan": (6, 13), "dl_vlan_pcp": (7, 3), "ip_dscp": (8, 6),
    "nw_ecn": (9, 2), "nw_proto": (10, 8), "nw_src": (11, 32), "nw_dst": (12, 32),
    "tcp_src": (13, 16), "tcp_dst": (14, 16), "udp_src": (15, 16), "udp_dst": (16, 16),
    "sctp_src": (17, 16), "sctp_dst": (18, 16), "icmp_type": (19, 8), "icmp_code": (20, 8),
    "arp_op": (21, 16), "arp_spa": (22, 32), "arp_tpa": (23, 32), "arp_sha": (24, 48),
    "arp_tha": (25, 48), "ipv6_src": (26, 128), "ipv6_dst": (27, 128),
    "ipv6_label": (28, 20), "icmpv6_type": (29, 8), "icmpv6_code": (30, 8),
    "nd_target": (31, 128), "mpls_label": (34, 20), "mpls_tc": (35, 3), "mpls_bos": (36, 1),
}
#: OpenFlow / ovs-ofctl aliases Sluice also accepts (src/pkt/pkt.c).
FIELD_ALIASES: dict[str, str] = {
    "eth_dst": "dl_dst", "eth_src": "dl_src", "eth_type": "dl_type", "vlan_vid": "dl_vlan",
    "vlan_pcp": "dl_vlan_pcp", "ip_proto": "nw_proto", "ipv4_src": "nw_src",
    "ipv4_dst": "nw_dst", "ip_ecn": "nw_ecn", "icmpv4_type": "icmp_type",
    "icmpv4_code": "icmp_code", "ipv6_flabel": "ipv6_label", "ipv6_nd_target": "nd_target",
    "ip_ttl": "nw_ttl",
}

_RAW_RE = re.compile(r"raw\(\s*(\w+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)")


def _wire_size(bits: int) -> int:
    """OXM value bytes of a basic field: ceil(bits / 8), 20-bit fields in 32 bits."""
    size = (bits + 7) // 8
    return 4 if size == 3 else size


def _raw_check(base: int | str, bit_off: int, n_bits: int) -> int:
    b = RAW_BASES.get(base, -1) if isinstance(base, str) else base
    if b not in RAW_BASES.values():
        raise ValueError(f"bad raw field base {base!r}: pkt (0), l3 (1) or l4 (2)")
    if not 0 <= bit_off <= 0xFFFF:
        raise ValueError(f"bad raw field bit offset {bit_off}: 0..65535")
    if not 1 <= n_bits <= RAW_BITS_MAX:
        raise ValueError(f"bad raw field width {n_bits}: 1..{RAW_BITS_MAX} bits")
    return b


def _exp_oxm_header(field: int, masked: bool, length: int) -> bytes:
    hdr = (OFPXMC_EXPERIMENTER << 16) | (field << 9) | (masked << 8) | length
    return struct.pack("!II", hdr, SL_EXPERIMENTER_ID)


def _uint_bytes(value: int | bytes, size: int, n_bits: int, what: str) -> bytes:
    if isinstance(value, bytes):
        if len(value) != size:
            raise ValueError(f"{what}: {len(value)} bytes, expected {size}")
        value = int.from_bytes(value, "big")
    if value < 0 or value >> n_bits:
        raise ValueError(f"{what} {value:#x} does not fit {n_bits} bits")
    return value.to_bytes(size, "big")


def oxm_raw(base: int | str, bit_off: int, n_bits: int, value: int | bytes,
            mask: int | bytes | None = None) -> bytes:
    """Sluice raw field TLV ``raw(BASE,BIT_OFF,N_BITS)=VALUE[/MASK]`` (experimenter OXM 0).

    @value (and @mask) are right-aligned in ceil(N_BITS / 8) bytes; value bits
    outside the mask are cleared, as the switch does on decode.
    """
    b = _raw_check(base, bit_off, n_bits)
    size = (n_bits + 7) // 8
    val = _uint_bytes(value, size, n_bits, "raw value")
    payload = struct.pack("!BBH", b, n_bits, bit_off)
    if mask is None:
        return _exp_oxm_header(SL_OXM_SL_RAW, False, 8 + size) + payload + val
    msk = _uint_bytes(mask, size, n_bits, "raw mask")
    val = bytes(x & y for x, y in zip(val, msk, strict=True))
    return _exp_oxm_header(SL_OXM_SL_RAW, True, 8 + 2 * size) + payload + val + msk


def oxm_nw_ttl(ttl: int) -> bytes:
    """Sluice ``nw_ttl=TTL`` TLV (experimenter OXM 1; exact matches only)."""
    if not 0 <= ttl <= 0xFF:
        raise ValueError(f"bad TTL {ttl}")
    return _exp_oxm_header(SL_OXM_SL_IP_TTL, False, 5) + bytes([ttl])


def field_name(name: str) -> str:
    """The canonical flow-syntax name of a field ("ipv4_dst" -> "nw_dst"); ValueError if unknown."""
    n = FIELD_ALIASES.get(name, name)
    if n not in FIELDS and n != "nw_ttl":
        raise ValueError(f"unknown field {name!r}")
    return n


def oxm_id(field: str | bytes) -> bytes:
    """The OXM id (TLV header without value) of a field, as table declarations list them.

    @field is a flow-syntax name (``nw_dst``, ``ipv4_dst``, ``nw_ttl``), a raw
    field ``raw(l4,96,12)``, or an already encoded id (returned as is).
    """
    if isinstance(field, bytes):
        return field
    f = field.strip()
    m = _RAW_RE.fullmatch(f)
    if m:
        n_bits = int(m.group(3))
        b = _raw_check(m.group(1), int(m.group(2)), n_bits)
        return (_exp_oxm_header(SL_OXM_SL_RAW, False, 8 + (n_bits + 7) // 8)
                + struct.pack("!BBH", b, n_bits, int(m.group(2))))
    if f.startswith("raw"):
        raise ValueError(f"bad raw field {field!r}: expected raw(BASE,BIT_OFFSET,N_BITS)")
    name = field_name(f)
    if name == "nw_ttl":
        return _exp_oxm_header(SL_OXM_SL_IP_TTL, False, 5)
    oxm_field, bits = FIELDS[name]
    return struct.pack("!I", (OFPXMC_OPENFLOW_BASIC << 16) | (oxm_field << 9) | _wire_size(bits))


def table_declare_data(table_id: int, kind: TableKind | int | str,
                       fields: Iterable[str | bytes] = (), max_entries: int = 0,
                       name: str | bytes = "") -> bytes:
    """The TABLE_DECLARE body after ``exp_type`` (the ``data`` of an os-ken OFPExperimenter):
    table_id, kind, pad, max_entries, name[32], then the fields' OXM ids.

    @fields: see oxm_id(); empty means "derive them from the table's first flows".
    @max_entries 0 is the pipeline's default.  ValueError for values the codec
    refuses (table id above 253, a name over 31 bytes, more than 24 fields, ...).
    """
    k = TableKind.parse(kind)
    if not 0 <= table_id <= TABLE_ID_MAX:
        raise ValueError(f"table id {table_id}: 0..{TABLE_ID_MAX}")
    if not 0 <= max_entries <= 0xFFFFFFFF:
        raise ValueError(f"max_entries {max_entries}: 0..2^32-1")
    raw_name = name.encode() if isinstance(name, str) else name
    if len(raw_name) > TABLE_NAME_MAX or b"\0" in raw_name:
        raise ValueError(f"table name {name!r}: at most {TABLE_NAME_MAX} bytes, no NUL")
    ids = [oxm_id(f) for f in fields]
    if len(ids) > TABLE_FIELDS_MAX:
        raise ValueError(f"{len(ids)} fields: at most {TABLE_FIELDS_MAX}")
    return _TABLE_DECLARE.pack(table_id, k, max_entries, raw_name) + b"".join(ids)


def table_declare(table_id: int, kind: TableKind | int | str,
                  fields: Iterable[str | bytes] = (), max_entries: int = 0,
                  name: str | bytes = "", xid: int = 0) -> bytes:
    """A whole SL_OFPX_TABLE_DECLARE message (what ``sl_ofp_table_declare_encode`` writes).

    ``table_declare(2, "lpm", ["nw_dst"], 4096, "fib", xid=0x10)`` is the
    60-byte example of docs/openflow-experimenter.md.
    """
    return experimenter(SL_EXPERIMENTER_ID, SL_OFPX_TABLE_DECLARE,
                        table_declare_data(table_id, kind, fields, max_entries, name), xid)


def oxm_id_name(data: bytes, off: int = 0) -> tuple[str, int]:
    """(flow-syntax name, length) of the OXM id at @data[@off:]; ValueError when unknown."""
    if off + 4 > len(data):
        raise ValueError("OXM id cut short")
    (hdr,) = struct.unpack_from("!I", data, off)
    cls, fld, length = hdr >> 16, (hdr >> 9) & 0x7F, hdr & 0xFF
    if cls == OFPXMC_OPENFLOW_BASIC:
        for n, (num, _bits) in FIELDS.items():
            if num == fld:
                return n, 4
        raise ValueError(f"unknown OXM basic field {fld}")
    if cls == OFPXMC_EXPERIMENTER and off + 8 <= len(data):
        (exp,) = struct.unpack_from("!I", data, off + 4)
        if exp == SL_EXPERIMENTER_ID and fld == SL_OXM_SL_IP_TTL:
            return "nw_ttl", 8
        if exp == SL_EXPERIMENTER_ID and fld == SL_OXM_SL_RAW and off + 12 <= len(data):
            base, n_bits, bit_off = struct.unpack_from("!BBH", data, off + 8)
            bases = {v: k for k, v in RAW_BASES.items()}
            if base in bases:
                return f"raw({bases[base]},{bit_off},{n_bits})", 12
    raise ValueError(f"unknown or cut-short OXM id {data[off:off + 12].hex()} "
                     f"(class {cls:#x}, field {fld}, length {length})")


@dataclass(frozen=True)
class TableDecl:
    """One table declaration: what a flow-file line
    ``table=2,kind=lpm,fields=nw_dst,size=4096,name=fib`` or a TABLE_DECLARE says.

    ``fields`` holds flow-syntax names (or encoded OXM ids as bytes).
    """

    table_id: int
    kind: TableKind
    fields: tuple[str | bytes, ...] = ()
    max_entries: int = 0
    name: str = ""

    def data(self) -> bytes:
        """The experimenter ``data`` (body after exp_type)."""
        return table_declare_data(self.table_id, self.kind, self.fields, self.max_entries,
                                  self.name)

    def encode(self, xid: int = 0) -> bytes:
        """The whole TABLE_DECLARE message."""
        return table_declare(self.table_id, self.kind, self.fields, self.max_entries, self.name,
                             xid)

    def flow_syntax(self) -> str:
        """The flow-file line (fields given as bytes are shown as their names)."""
        out = f"table={self.table_id},kind={self.kind.flow_name}"
        if self.fields:
            names = [f if isinstance(f, str) else oxm_id_name(f)[0] for f in self.fields]
            out += ",fields=" + "+".join(names)
        if self.max_entries:
            out += f",size={self.max_entries}"
        if self.name:
            out += f",name={self.name}"
        return out

    @classmethod
    def parse(cls, line: str) -> TableDecl:
        """Parse a flow-file table declaration
        (``table=N,kind=K[,fields=A+B][,size=N][,name=S]``)."""
        items: dict[str, str] = {}
        for item in _split_decl(line):
            k, eq, v = item.partition("=")
            if not eq:
                raise ValueError(f"{line!r}: expected key=value, got {item!r}")
            key = k.strip()
            if key in items:
                raise ValueError(f"{line!r}: {key} given twice")
            items[key] = v.strip()
        unknown = set(items) - {"table", "kind", "fields", "size", "name"}
        if unknown:
            raise ValueError(f"{line!r}: unknown key(s) {', '.join(sorted(unknown))}")
        if "kind" not in items:
            raise ValueError(f"{line!r}: table declaration without kind=")
        fields = tuple(f for f in items.get("fields", "").split("+") if f)
        for f in fields:
            oxm_id(f)  # validates the name
        decl = cls(int(items.get("table", "0"), 0), TableKind.parse(items["kind"]), fields,
                   int(items.get("size", "0"), 0), items.get("name", ""))
        decl.data()  # validates ranges
        return decl

    @classmethod
    def decode(cls, msg: bytes) -> TableDecl:
        """Decode a whole TABLE_DECLARE message (fields as names); ValueError if it is not one."""
        if len(msg) < TABLE_DECLARE_LEN:
            raise ValueError(f"TABLE_DECLARE of {len(msg)} bytes, at least {TABLE_DECLARE_LEN}")
        h = parse_header(msg)
        exp, exp_type = struct.unpack_from("!II", msg, OFP_HEADER_LEN)
        if h.type != OFPT_EXPERIMENTER or exp != SL_EXPERIMENTER_ID or \
                exp_type != SL_OFPX_TABLE_DECLARE:
            raise ValueError("not a Sluice TABLE_DECLARE")
        table_id, kind, max_entries, raw_name = _TABLE_DECLARE.unpack_from(msg, 16)
        end = min(h.length, len(msg))
        fields: list[str | bytes] = []
        off = TABLE_DECLARE_LEN
        while off < end:
            name, n = oxm_id_name(msg[:end], off)
            fields.append(name)
            off += n
        return cls(table_id, TableKind(kind), tuple(fields), max_entries,
                   raw_name.split(b"\0", 1)[0].decode(errors="replace"))


def _split_decl(line: str) -> list[str]:
    """Split on commas outside parentheses (raw(l4,96,12) stays whole)."""
    out: list[str] = []
    depth, cur = 0, ""
    for ch in line.strip():
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        out.append(cur)
    return [x.strip() for x in out if x.strip()]


def table_declare_target(data: bytes) -> int | None:
    """The table id of the TABLE_DECLARE at the start of @data (an error's copy of the
    failed request, possibly cut at 64 bytes), or None when @data is not one."""
    if len(data) < 17 or data[1] != OFPT_EXPERIMENTER:
        return None
    exp, exp_type = struct.unpack_from("!II", data, OFP_HEADER_LEN)
    if exp != SL_EXPERIMENTER_ID or exp_type != SL_OFPX_TABLE_DECLARE:
        return None
    return data[16]


# Error names, for messages: type -> (type name, {code: code name}).
ERROR_NAMES: dict[int, tuple[str, dict[int, str]]] = {
    0: ("OFPET_HELLO_FAILED", {0: "OFPHFC_INCOMPATIBLE", 1: "OFPHFC_EPERM"}),
    1: ("OFPET_BAD_REQUEST", dict(enumerate((
        "OFPBRC_BAD_VERSION", "OFPBRC_BAD_TYPE", "OFPBRC_BAD_MULTIPART",
        "OFPBRC_BAD_EXPERIMENTER", "OFPBRC_BAD_EXP_TYPE", "OFPBRC_EPERM", "OFPBRC_BAD_LEN",
        "OFPBRC_BUFFER_EMPTY", "OFPBRC_BUFFER_UNKNOWN", "OFPBRC_BAD_TABLE_ID",
        "OFPBRC_IS_SLAVE", "OFPBRC_BAD_PORT", "OFPBRC_BAD_PACKET",
        "OFPBRC_MULTIPART_BUFFER_OVERFLOW")))),
    2: ("OFPET_BAD_ACTION", dict(enumerate((
        "OFPBAC_BAD_TYPE", "OFPBAC_BAD_LEN", "OFPBAC_BAD_EXPERIMENTER", "OFPBAC_BAD_EXP_TYPE",
        "OFPBAC_BAD_OUT_PORT", "OFPBAC_BAD_ARGUMENT", "OFPBAC_EPERM", "OFPBAC_TOO_MANY",
        "OFPBAC_BAD_QUEUE", "OFPBAC_BAD_OUT_GROUP", "OFPBAC_MATCH_INCONSISTENT",
        "OFPBAC_UNSUPPORTED_ORDER", "OFPBAC_BAD_TAG", "OFPBAC_BAD_SET_TYPE",
        "OFPBAC_BAD_SET_LEN", "OFPBAC_BAD_SET_ARGUMENT")))),
    3: ("OFPET_BAD_INSTRUCTION", dict(enumerate((
        "OFPBIC_UNKNOWN_INST", "OFPBIC_UNSUP_INST", "OFPBIC_BAD_TABLE_ID",
        "OFPBIC_UNSUP_METADATA", "OFPBIC_UNSUP_METADATA_MASK", "OFPBIC_BAD_EXPERIMENTER",
        "OFPBIC_BAD_EXP_TYPE", "OFPBIC_BAD_LEN", "OFPBIC_EPERM")))),
    4: ("OFPET_BAD_MATCH", dict(enumerate((
        "OFPBMC_BAD_TYPE", "OFPBMC_BAD_LEN", "OFPBMC_BAD_TAG", "OFPBMC_BAD_DL_ADDR_MASK",
        "OFPBMC_BAD_NW_ADDR_MASK", "OFPBMC_BAD_WILDCARDS", "OFPBMC_BAD_FIELD",
        "OFPBMC_BAD_VALUE", "OFPBMC_BAD_MASK", "OFPBMC_BAD_PREREQ", "OFPBMC_DUP_FIELD",
        "OFPBMC_EPERM")))),
    5: ("OFPET_FLOW_MOD_FAILED", dict(enumerate((
        "OFPFMFC_UNKNOWN", "OFPFMFC_TABLE_FULL", "OFPFMFC_BAD_TABLE_ID", "OFPFMFC_OVERLAP",
        "OFPFMFC_EPERM", "OFPFMFC_BAD_TIMEOUT", "OFPFMFC_BAD_COMMAND", "OFPFMFC_BAD_FLAGS")))),
    6: ("OFPET_GROUP_MOD_FAILED", dict(enumerate((
        "OFPGMFC_GROUP_EXISTS", "OFPGMFC_INVALID_GROUP", "OFPGMFC_WEIGHT_UNSUPPORTED",
        "OFPGMFC_OUT_OF_GROUPS", "OFPGMFC_OUT_OF_BUCKETS", "OFPGMFC_CHAINING_UNSUPPORTED",
        "OFPGMFC_WATCH_UNSUPPORTED", "OFPGMFC_LOOP", "OFPGMFC_UNKNOWN_GROUP",
        "OFPGMFC_CHAINED_GROUP", "OFPGMFC_BAD_TYPE", "OFPGMFC_BAD_COMMAND",
        "OFPGMFC_BAD_BUCKET", "OFPGMFC_BAD_WATCH", "OFPGMFC_EPERM")))),
    7: ("OFPET_PORT_MOD_FAILED", dict(enumerate((
        "OFPPMFC_BAD_PORT", "OFPPMFC_BAD_HW_ADDR", "OFPPMFC_BAD_CONFIG",
        "OFPPMFC_BAD_ADVERTISE", "OFPPMFC_EPERM")))),
    8: ("OFPET_TABLE_MOD_FAILED", dict(enumerate((
        "OFPTMFC_BAD_TABLE", "OFPTMFC_BAD_CONFIG", "OFPTMFC_EPERM")))),
    9: ("OFPET_QUEUE_OP_FAILED", dict(enumerate((
        "OFPQOFC_BAD_PORT", "OFPQOFC_BAD_QUEUE", "OFPQOFC_EPERM")))),
    10: ("OFPET_SWITCH_CONFIG_FAILED", dict(enumerate((
        "OFPSCFC_BAD_FLAGS", "OFPSCFC_BAD_LEN", "OFPSCFC_EPERM")))),
    11: ("OFPET_ROLE_REQUEST_FAILED", dict(enumerate((
        "OFPRRFC_STALE", "OFPRRFC_UNSUP", "OFPRRFC_BAD_ROLE")))),
    12: ("OFPET_METER_MOD_FAILED", dict(enumerate((
        "OFPMMFC_UNKNOWN", "OFPMMFC_METER_EXISTS", "OFPMMFC_INVALID_METER",
        "OFPMMFC_UNKNOWN_METER", "OFPMMFC_BAD_COMMAND", "OFPMMFC_BAD_FLAGS",
        "OFPMMFC_BAD_RATE", "OFPMMFC_BAD_BURST", "OFPMMFC_BAD_BAND", "OFPMMFC_BAD_BAND_VALUE",
        "OFPMMFC_OUT_OF_METERS", "OFPMMFC_OUT_OF_BANDS")))),
    13: ("OFPET_TABLE_FEATURES_FAILED", dict(enumerate((
        "OFPTFFC_BAD_TABLE", "OFPTFFC_BAD_METADATA", "OFPTFFC_BAD_TYPE", "OFPTFFC_BAD_LEN",
        "OFPTFFC_BAD_ARGUMENT", "OFPTFFC_EPERM")))),
}
#: Experimenter error codes: (experimenter id, exp_code) -> name.
EXPERIMENTER_ERROR_NAMES: dict[tuple[int, int], str] = {
    (0x4F4E4600, 2600): "ONFBIC_DUP_INSTRUCTION",  # what Sluice sends, as OVS does
}
ONF_EXPERIMENTER_ID = 0x4F4E4600


def error_name(etype: int, code: int, experimenter_id: int | None = None) -> str:
    """``"OFPET_BAD_MATCH/OFPBMC_DUP_FIELD"``; numbers where a name is unknown."""
    if etype == OFPET_EXPERIMENTER:
        exp = experimenter_id if experimenter_id is not None else 0
        name = EXPERIMENTER_ERROR_NAMES.get((exp, code), str(code))
        return f"OFPET_EXPERIMENTER/{exp:#010x}/{name}"
    tname, codes = ERROR_NAMES.get(etype, (str(etype), {}))
    return f"{tname}/{codes.get(code, str(code))}"


# ---------------------------------------------------------------------------
# Decoding what tests look at
# ---------------------------------------------------------------------------


@dataclass
class Msg:
    """One received message: its header fields and the raw bytes."""

    version: int
    type: int
    xid: int
    raw: bytes

    @property
    def body(self) -> bytes:
        return self.raw[OFP_HEADER_LEN:]


@dataclass
class Error:
    """A decoded OFPT_ERROR.

    For OFPET_EXPERIMENTER errors ``code`` is the exp_code, ``experimenter``
    the experimenter id and ``data`` what follows it; else ``experimenter``
    is None.  ``data`` is (the start of) the failed request for most types.
    """

    type: int
    code: int
    data: bytes
    experimenter: int | None = None

    @property
    def name(self) -> str:
        """``"OFPET_BAD_MATCH/OFPBMC_DUP_FIELD"``."""
        return error_name(self.type, self.code, self.experimenter)

    @property
    def declared_table(self) -> int | None:
        """The table id when the failed request is a Sluice TABLE_DECLARE, else None."""
        return table_declare_target(self.data)


def parse_error_bytes(raw: bytes) -> Error:
    """Decode a whole OFPT_ERROR message given as bytes (ValueError for other types)."""
    if len(raw) < OFP_HEADER_LEN + 4 or raw[1] != OFPT_ERROR:
        raise ValueError(f"not an error message: {raw[:OFP_HEADER_LEN].hex()}")
    etype, code = struct.unpack_from("!HH", raw, OFP_HEADER_LEN)
    if etype == OFPET_EXPERIMENTER and len(raw) >= OFP_HEADER_LEN + 8:
        (exp,) = struct.unpack_from("!I", raw, OFP_HEADER_LEN + 4)
        return Error(etype, code, raw[OFP_HEADER_LEN + 8:], exp)
    return Error(etype, code, raw[OFP_HEADER_LEN + 4:])


def parse_error(msg: Msg) -> Error:
    """Decode an OFPT_ERROR message (raises ValueError for other types)."""
    if msg.type != OFPT_ERROR:
        raise ValueError(f"not an error: type {msg.type}")
    return parse_error_bytes(msg.raw)


def multipart_reply_info(msg: Msg) -> tuple[int, int, bytes]:
    """(multipart type, flags, body) of an OFPT_MULTIPART_REPLY."""
    mp_type, flags = struct.unpack_from("!HH", msg.raw, OFP_HEADER_LEN)
    return mp_type, flags, msg.raw[OFP_HEADER_LEN + 8:]


def count_flow_stats(body: bytes) -> int:
    """Number of ofp_flow_stats entries in one OFPMP_FLOW reply body."""
    n = off = 0
    while off + 2 <= len(body):
        (length,) = struct.unpack_from("!H", body, off)
        if length < 56:
            raise ValueError(f"flow_stats entry of length {length} at {off}")
        off += length
        n += 1
    return n


def parse_packet_in(msg: Msg) -> tuple[int, int, int, int, bytes]:
    """(buffer_id, total_len, reason, table_id, frame) of an OFPT_PACKET_IN."""
    buffer_id, total_len, reason, table_id, _cookie = struct.unpack_from("!IHBBQ", msg.raw, 8)
    (mlen,) = struct.unpack_from("!H", msg.raw, 26)
    off = 24 + mlen + pad8(mlen) + 2
    return buffer_id, total_len, reason, table_id, msg.raw[off:]


# ---------------------------------------------------------------------------
# The client
# ---------------------------------------------------------------------------


class ConnectionClosed(ConnectionError):
    """The switch closed the connection."""


def parse_target(target: str) -> tuple[int, object]:
    """'tcp:HOST:PORT' or 'unix:PATH' -> (address family, address)."""
    kind, _, rest = target.partition(":")
    if kind == "tcp":
        host, _, port = rest.rpartition(":")
        return socket.AF_INET, (host or "127.0.0.1", int(port or OFP_TCP_PORT))
    if kind == "unix":
        return socket.AF_UNIX, rest
    raise ValueError(f"unsupported target {target!r} (tcp:HOST:PORT or unix:PATH)")


class Client:
    """A blocking OpenFlow 1.3 connection to a switch's passive listener.

    recv() returns whole messages; messages received while waiting for a
    specific reply (barrier, echo, multipart) are kept in ``self.pending`` in
    order, and recv() returns those first.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.pending: list[Msg] = []
        self.peer_hello: Msg | None = None

    @classmethod
    def connect(cls, target: str, timeout: float = 10.0, handshake: bool = True,
                versions: Iterable[int] = (OFP_VERSION,)) -> Client:
        """Connect to @target (retrying until @timeout), then HELLO unless not @handshake."""
        family, addr = parse_target(target)
        deadline = time.monotonic() + timeout
        while True:
            s = socket.socket(family, socket.SOCK_STREAM)
            try:
                s.settimeout(max(0.1, deadline - time.monotonic()))
                s.connect(addr)  # type: ignore[arg-type]
                break
            except OSError:
                s.close()
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)
        if family == socket.AF_INET:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.settimeout(None)
        c = cls(s)
        if handshake:
            c.handshake(versions, timeout=max(1.0, deadline - time.monotonic()))
        return c

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    def handshake(self, versions: Iterable[int] = (OFP_VERSION,), timeout: float = 5.0) -> Msg:
        """Send our HELLO, wait for the switch's; raise when it shares no version with us."""
        vs = set(versions)
        self.send(hello(vs, xid=next_xid()))
        m = self.recv(timeout)
        if m.type != OFPT_HELLO:
            raise ConnectionError(f"expected HELLO, got type {m.type}")
        self.peer_hello = m
        if not hello_versions(m.raw) & vs:
            raise ConnectionError(f"no common version: peer {sorted(hello_versions(m.raw))}")
        return m

    def send(self, data: bytes) -> None:
        """Send raw bytes (any number of messages, or garbage)."""
        self.sock.sendall(data)

    def _fill(self, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no OpenFlow message before the deadline")
        r, _, _ = select.select([self.sock], [], [], remaining)
        if not r:
            raise TimeoutError("no OpenFlow message before the deadline")
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionClosed("connection closed by the switch")
        self.buf += chunk

    def recv(self, timeout: float = 5.0) -> Msg:
        """Receive one whole message (pending ones first); TimeoutError, ConnectionClosed."""
        if self.pending:
            return self.pending.pop(0)
        return self._recv_wire(time.monotonic() + timeout)

    def _recv_wire(self, deadline: float) -> Msg:
        while len(self.buf) < OFP_HEADER_LEN:
            self._fill(deadline)
        version, mtype, length, xid = _HEADER.unpack_from(self.buf)
        if length < OFP_HEADER_LEN:
            raise ConnectionError(f"switch sent a message of length {length}")
        while len(self.buf) < length:
            self._fill(deadline)
        raw = bytes(self.buf[:length])
        del self.buf[:length]
        return Msg(version, mtype, xid, raw)

    def poll(self) -> Msg | None:
        """A whole message if one has arrived, else None, without waiting: one recv on a
        non-blocking socket (pending messages first)."""
        if self.pending:
            return self.pending.pop(0)
        try:
            chunk = self.sock.recv(1 << 20)
        except BlockingIOError:
            chunk = None
        if chunk == b"":
            raise ConnectionClosed("connection closed by the switch")
        if chunk:
            self.buf += chunk
        if len(self.buf) < OFP_HEADER_LEN:
            return None
        if len(self.buf) < _HEADER.unpack_from(self.buf)[2]:
            return None
        return self._recv_wire(time.monotonic())

    def wait_for(self, pred: Callable[[Msg], bool], timeout: float = 5.0) -> Msg:
        """Receive until a message satisfies @pred; others go to ``pending``.

        Echo requests from the switch are answered on the way.
        """
        deadline = time.monotonic() + timeout
        for i, m in enumerate(self.pending):
            if pred(m):
                return self.pending.pop(i)
        while True:
            m = self._recv_wire(deadline)
            if m.type == OFPT_ECHO_REQUEST and not pred(m):
                self.send(echo_reply(m.body, m.xid))
                continue
            if pred(m):
                return m
            self.pending.append(m)

    def closed(self, timeout: float = 5.0) -> bool:
        """True when the switch closes the connection within @timeout (reads and drops data)."""
        deadline = time.monotonic() + timeout
        try:
            while True:
                self._fill(deadline)
                self.buf.clear()
        except (ConnectionClosed, ConnectionResetError):
            return True
        except TimeoutError:
            return False

    def request(self, data: bytes, timeout: float = 5.0) -> Msg:
        """Send one message and return the first message with the same xid."""
        xid = parse_header(data).xid
        self.send(data)
        return self.wait_for(lambda m: m.xid == xid, timeout)

    def barrier(self, timeout: float = 10.0) -> Msg:
        """Barrier round trip; returns the reply (an OFPT_ERROR reply raises)."""
        xid = next_xid()
        self.send(barrier_request(xid))
        m = self.wait_for(lambda m: m.xid == xid, timeout)
        if m.type != OFPT_BARRIER_REPLY:
            raise ConnectionError(f"barrier {xid}: got type {m.type}, not BARRIER_REPLY")
        return m

    def echo(self, data: bytes = b"sluice", timeout: float = 5.0) -> Msg:
        """Echo round trip; checks the payload comes back."""
        xid = next_xid()
        m = self.request(echo_request(data, xid), timeout)
        if m.type != OFPT_ECHO_REPLY or m.body != data:
            raise ConnectionError(f"bad echo reply: type {m.type}")
        return m

    def multipart(self, mp_type: int, body: bytes = b"", timeout: float = 30.0) -> list[Msg]:
        """Send a multipart request; return every reply up to the one without REPLY_MORE."""
        xid = next_xid()
        self.send(multipart_request(mp_type, body, xid=xid))
        deadline = time.monotonic() + timeout
        out: list[Msg] = []
        while True:
            m = self.wait_for(lambda m: m.xid == xid, max(0.0, deadline - time.monotonic()))
            if m.type == OFPT_ERROR:
                e = parse_error(m)
                raise ConnectionError(f"multipart {mp_type}: error {e.type}/{e.code}")
            out.append(m)
            if not multipart_reply_info(m)[1] & OFPMPF_REPLY_MORE:
                return out

    def errors_since(self, timeout: float = 0.5) -> list[Error]:
        """Drain what arrives within @timeout and return the OFPT_ERRORs among it."""
        out: list[Error] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                m = self.recv(max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                return out
            if m.type == OFPT_ERROR:
                out.append(parse_error(m))


_LL_SET = struct.Struct("!BBHHxxQQ")  # body after exp_type up to the ofp_match: 24 bytes
_FFP_CONFIG = struct.Struct("!BxHI")   # body after exp_type: 8 bytes


def ll_set_data(table_id: int, match_: Sequence[bytes] | bytes = (), *, on: bool = True,
                priority: int = 0x8000, strict: bool = True, cookie: int = 0,
                cookie_mask: int = 0) -> bytes:
    """The SL_OFPX_LL_SET body after ``exp_type``: set (@on) or clear the low-latency mark
    of the flows selected like a flow_mod modify (strict: table, match and priority).
    @match_ is a list of OXM TLVs or an encoded ofp_match.  ValueError for values the
    switch would refuse (table id > 253 unless 255 non-strict, priority > 0xffff)."""
    if not (0 <= table_id <= TABLE_ID_MAX or (table_id == 0xFF and not strict)):
        raise ValueError(f"table id {table_id} out of range (255 = all, non-strict only)")
    if not 0 <= priority <= 0xFFFF:
        raise ValueError(f"priority {priority} out of range")
    m = match_ if isinstance(match_, bytes) else match(match_)
    return _LL_SET.pack(table_id, 1 if on else 0, SL_OFPX_LL_STRICT if strict else 0,
                        priority, cookie, cookie_mask) + m


def ll_set(table_id: int, match_: Sequence[bytes] | bytes = (), *, on: bool = True,
           priority: int = 0x8000, strict: bool = True, cookie: int = 0, cookie_mask: int = 0,
           xid: int = 0) -> bytes:
    """A whole SL_OFPX_LL_SET message (see :func:`ll_set_data`)."""
    return experimenter(SL_EXPERIMENTER_ID, SL_OFPX_LL_SET,
                        ll_set_data(table_id, match_, on=on, priority=priority, strict=strict,
                                    cookie=cookie, cookie_mask=cookie_mask), xid)


def ffp_config_data(enabled: bool = True, *, cost_model: bool = True, auto_pps: int = 0,
                    auto_min_timeout: int = 0) -> bytes:
    """The SL_OFPX_FFP_CONFIG body after ``exp_type``: the fast path on or off, the cost
    model followed or bypassed, auto-promotion at @auto_pps hits per second (0 = off) of
    entries without timeouts or with timeouts of at least @auto_min_timeout seconds."""
    if not 0 <= auto_pps <= 0xFFFFFFFF or not 0 <= auto_min_timeout <= 0xFFFF:
        raise ValueError("auto-promotion threshold out of range")
    flags = (SL_OFPX_FFP_ON if enabled else 0) | (SL_OFPX_FFP_AUTO if auto_pps else 0) | \
        (0 if cost_model else SL_OFPX_FFP_NO_MODEL)
    return _FFP_CONFIG.pack(flags, auto_min_timeout, auto_pps)


def ffp_config(enabled: bool = True, *, cost_model: bool = True, auto_pps: int = 0,
               auto_min_timeout: int = 0, xid: int = 0) -> bytes:
    """A whole SL_OFPX_FFP_CONFIG message (see :func:`ffp_config_data`)."""
    return experimenter(SL_EXPERIMENTER_ID, SL_OFPX_FFP_CONFIG,
                        ffp_config_data(enabled, cost_model=cost_model, auto_pps=auto_pps,
                                        auto_min_timeout=auto_min_timeout), xid)
