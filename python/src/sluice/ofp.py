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

import itertools
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
OFPET_BAD_ACTION = 2
OFPBAC_BAD_TYPE = 0
OFPBAC_BAD_LEN = 1
OFPBAC_BAD_OUT_PORT = 4
OFPBAC_BAD_OUT_GROUP = 9
OFPET_BAD_INSTRUCTION = 3
OFPBIC_UNKNOWN_INST = 0
OFPBIC_BAD_TABLE_ID = 2
OFPET_BAD_MATCH = 4
OFPBMC_BAD_LEN = 1
OFPBMC_BAD_FIELD = 6
OFPBMC_BAD_PREREQ = 9
OFPET_FLOW_MOD_FAILED = 5
OFPET_GROUP_MOD_FAILED = 6

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
    """A decoded OFPT_ERROR."""

    type: int
    code: int
    data: bytes


def parse_error(msg: Msg) -> Error:
    """Decode an OFPT_ERROR message (raises ValueError for other types)."""
    if msg.type != OFPT_ERROR:
        raise ValueError(f"not an error: type {msg.type}")
    etype, code = struct.unpack_from("!HH", msg.raw, OFP_HEADER_LEN)
    return Error(etype, code, msg.raw[OFP_HEADER_LEN + 4:])


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
        out = []
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
        out = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                m = self.recv(max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                return out
            if m.type == OFPT_ERROR:
                out.append(parse_error(m))
