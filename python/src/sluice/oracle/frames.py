"""Frames for the OVS oracle: build Ethernet/VLAN/IPv4/IPv6/ARP frames byte by byte (so a
test can make checksums wrong and lengths lie on purpose), tag them with an id that no
OpenFlow action can rewrite, find that id again in whatever a switch sends, and parse the
headers back (the allowlist and the mismatch classifier look at offsets, not at scapy).

Standard library only.  Checksums: the Internet checksum (RFC 1071) and CRC32c (SCTP,
RFC 3309), both computed from scratch.
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass, field

ETH_IPV4 = 0x0800
ETH_ARP = 0x0806
ETH_IPV6 = 0x86DD
ETH_VLAN = 0x8100
ETH_QINQ = 0x88A8
ETH_MPLS = 0x8847
ETH_MPLS_MC = 0x8848
#: An EtherType no rule of the generator matches by name (local experimental).
ETH_RAW = 0x88B5
#: The sentinel frames' EtherType (local experimental 2); see harness.SENTINEL_FLOW.
ETH_SENTINEL = 0x88B6

IPPROTO_ICMP = 1
IPPROTO_TCP = 6
IPPROTO_UDP = 17
IPPROTO_GRE = 47
IPPROTO_ICMPV6 = 58
IPPROTO_SCTP = 132
IPV6_HOPOPTS = 0
IPV6_FRAGMENT = 44
IPV6_NONXT = 59

#: Frame tags: MAGIC, a 32-bit id, a check byte.  Put at the start of the L4 payload (where
#: a truncated copy still holds it) and at the end of the IP payload (where no fragment
#: quirk reaches it).
TAG_MAGIC = b"\xd1\x5c\x0e"
TAG_LEN = len(TAG_MAGIC) + 5


# ---------------------------------------------------------------------------
# Tags
# ---------------------------------------------------------------------------


def _tag_check(ident: int) -> int:
    return (sum(ident.to_bytes(4, "big")) ^ 0xA5) & 0xFF


def tag(ident: int) -> bytes:
    """The 8-byte tag of packet @ident (0 <= ident < 2**32)."""
    return TAG_MAGIC + ident.to_bytes(4, "big") + bytes([_tag_check(ident)])


def find_tag(data: bytes) -> int | None:
    """The id of the first valid tag in @data (None: none, e.g. a truncated packet-in)."""
    pos = data.find(TAG_MAGIC)
    while pos >= 0:
        end = pos + TAG_LEN
        if end <= len(data):
            ident = int.from_bytes(data[pos + 3:pos + 7], "big")
            if data[pos + 7] == _tag_check(ident):
                return ident
        pos = data.find(TAG_MAGIC, pos + 1)
    return None


# ---------------------------------------------------------------------------
# Checksums
# ---------------------------------------------------------------------------


def inet_csum(data: bytes) -> int:
    """The Internet checksum (ones' complement of the ones' complement sum) of @data."""
    if len(data) % 2:
        data += b"\0"
    s = int(sum(struct.unpack(f"!{len(data) // 2}H", data)))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def _crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC32c (Castagnoli), as SCTP uses it."""
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC32C[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def sctp_csum_bytes(sctp: bytes) -> bytes:
    """The 4 checksum bytes SCTP puts at offset 8 for the packet @sctp (checksum field
    ignored): CRC32c stored little-endian, as RFC 4960 appendix B and Linux do."""
    c = crc32c(sctp[:8] + b"\0\0\0\0" + sctp[12:])
    return c.to_bytes(4, "little")


def ipv4_header_csum(hdr: bytes) -> int:
    """The checksum an IPv4 header @hdr should carry (its own checksum field ignored)."""
    return inet_csum(hdr[:10] + b"\0\0" + hdr[12:])


def _pseudo4(src: bytes, dst: bytes, proto: int, length: int) -> bytes:
    return src + dst + struct.pack("!BBH", 0, proto, length)


def _pseudo6(src: bytes, dst: bytes, proto: int, length: int) -> bytes:
    return src + dst + struct.pack("!I3xB", length, proto)


# ---------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------


def mac(s: str) -> bytes:
    return bytes(int(x, 16) for x in s.split(":"))


def ip4(s: str) -> bytes:
    return ipaddress.IPv4Address(s).packed


def ip6(s: str) -> bytes:
    return ipaddress.IPv6Address(s).packed


def vlan_tag(tpid: int, vid: int, pcp: int = 0, dei: int = 0) -> bytes:
    return struct.pack("!HH", tpid, (pcp << 13) | (dei << 12) | vid)


def ethernet(dst: str, src: str, eth_type: int, body: bytes, tags: bytes = b"") -> bytes:
    return mac(dst) + mac(src) + tags + struct.pack("!H", eth_type) + body


def l4_header(proto: int, sport: int, dport: int, payload: bytes, *, icmp_type: int = 8,
              icmp_code: int = 0, tcp_flags: int = 0x18) -> bytes:
    """A TCP/UDP/SCTP/ICMP/ICMPv6 header followed by @payload, checksum fields zero (fill
    them with l4_with_csum once the pseudo-header is known)."""
    if proto == IPPROTO_TCP:
        return struct.pack("!HHIIBBHHH", sport, dport, 0x01020304, 0x0A0B0C0D, 5 << 4,
                           tcp_flags, 8192, 0, 0) + payload
    if proto == IPPROTO_UDP:
        return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    if proto == IPPROTO_SCTP:
        return struct.pack("!HHII", sport, dport, 0x11223344, 0) + payload
    if proto in (IPPROTO_ICMP, IPPROTO_ICMPV6):
        return struct.pack("!BBHHH", icmp_type, icmp_code, 0, 0x1234, 1) + payload
    return payload


def l4_with_csum(proto: int, seg: bytes, pseudo: bytes, *, udp_zero: bool = False,
                 bad: bool = False) -> bytes:
    """@seg with its checksum filled in (@pseudo: the pseudo-header, unused by ICMPv4 and
    SCTP).  @udp_zero leaves a UDP checksum 0 (IPv4 "no checksum"); @bad stores a wrong
    one."""
    out = bytearray(seg)
    if proto == IPPROTO_SCTP:
        out[8:12] = sctp_csum_bytes(seg)
        if bad:
            out[8] ^= 0x5A
        return bytes(out)
    off = {IPPROTO_TCP: 16, IPPROTO_UDP: 6, IPPROTO_ICMP: 2, IPPROTO_ICMPV6: 2}.get(proto)
    if off is None or len(seg) < off + 2:
        return seg
    if proto == IPPROTO_UDP and udp_zero:
        return seg
    c = inet_csum((b"" if proto == IPPROTO_ICMP else pseudo) + seg)
    if proto == IPPROTO_UDP and c == 0:
        c = 0xFFFF
    if bad:
        c ^= 0x0F0F
    struct.pack_into("!H", out, off, c)
    return bytes(out)


def ipv4_header(src: str, dst: str, proto: int, payload_len: int, *, ttl: int = 64,
                tos: int = 0, ident: int = 0x4242, frag: int = 0, mf: bool = False,
                df: bool = False, options: bytes = b"", total_len: int | None = None,
                bad_csum: bool = False) -> bytes:
    """An IPv4 header (checksum filled, or wrong with @bad_csum); @total_len overrides the
    length field (a header that lies about the frame)."""
    ihl = 5 + len(options) // 4
    tl = ihl * 4 + payload_len if total_len is None else total_len
    flags = (0x4000 if df else 0) | (0x2000 if mf else 0) | (frag & 0x1FFF)
    hdr = bytearray(struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos, tl, ident, flags, ttl,
                                proto, 0, ip4(src), ip4(dst)) + options)
    c = ipv4_header_csum(bytes(hdr))
    if bad_csum:
        c ^= 0x1111
    struct.pack_into("!H", hdr, 10, c)
    return bytes(hdr)


def ipv6_header(src: str, dst: str, next_header: int, payload_len: int, *, hlim: int = 64,
                tclass: int = 0, flabel: int = 0) -> bytes:
    return struct.pack("!IHBB16s16s", (6 << 28) | (tclass << 20) | flabel, payload_len,
                       next_header, hlim, ip6(src), ip6(dst))


def mpls_lse(label: int, tc: int = 0, bos: bool = True, ttl: int = 64) -> bytes:
    """One MPLS label stack entry (RFC 3032): label 20 bits, TC 3, bottom of stack 1,
    TTL 8."""
    return struct.pack("!I", (label << 12) | (tc << 9) | (int(bos) << 8) | ttl)


def arp_body(op: int, sha: str, spa: str, tha: str, tpa: str) -> bytes:
    return struct.pack("!HHBBH6s4s6s4s", 1, ETH_IPV4, 6, 4, op, mac(sha), ip4(spa), mac(tha),
                       ip4(tpa))


# ---------------------------------------------------------------------------
# Parsing (what the allowlist and the classifier need)
# ---------------------------------------------------------------------------


@dataclass
class Parsed:
    """Header offsets of one frame.  ``l3`` is None for a frame without a (valid) IPv4, IPv6
    or ARP header; ``l4`` is None for later fragments and unknown protocols.

    An MPLS frame (EtherType 0x8847 or 0x8848) lists its label stack entries in ``mpls``;
    ``l3`` and the offsets after it describe what follows the bottom-of-stack label when it
    reads as IPv4 or IPv6 (version nibble 4 or 6), the header a pop_mpls would uncover
    (the normalisers then reach an IP header under labels, as a switch that pops does)."""

    vlans: list[tuple[int, int, int]] = field(default_factory=list)  # (offset, tpid, tci)
    eth_type: int = 0
    eth_type_off: int = 12  # offset of the EtherType after the VLAN tags
    mpls: list[tuple[int, int]] = field(default_factory=list)  # (offset, label stack entry)
    l3_off: int = 0
    l3: str | None = None  # "ipv4" | "ipv6" | "arp"
    proto: int = -1  # IP protocol (IPv6: after extension headers)
    frag_off: int = 0  # fragment offset in 8-byte units
    more_frags: bool = False
    ip_end: int = 0  # end of the IP packet (frame length minus padding)
    l4_off: int | None = None
    ipv4_csum_ok: bool = True
    length_ok: bool = True  # the IP length field fits the frame

    @property
    def is_fragment(self) -> bool:
        return self.frag_off != 0 or self.more_frags

    @property
    def is_later_fragment(self) -> bool:
        return self.frag_off != 0

    @property
    def is_first_fragment(self) -> bool:
        return self.frag_off == 0 and self.more_frags


def parse(frame: bytes) -> Parsed:
    """Parse Ethernet, any number of 802.1Q/802.1ad tags, IPv4/IPv6 (hop-by-hop, routing,
    destination-options and fragment headers) or ARP."""
    p = Parsed()
    if len(frame) < 14:
        return p
    off = 12
    (et,) = struct.unpack_from("!H", frame, off)
    while et in (ETH_VLAN, ETH_QINQ) and off + 6 <= len(frame):
        (tci,) = struct.unpack_from("!H", frame, off + 2)
        p.vlans.append((off, et, tci))
        off += 4
        (et,) = struct.unpack_from("!H", frame, off)
    p.eth_type = et
    p.eth_type_off = off
    p.l3_off = off + 2
    if et in (ETH_MPLS, ETH_MPLS_MC):
        o = p.l3_off
        while o + 4 <= len(frame):
            (lse,) = struct.unpack_from("!I", frame, o)
            p.mpls.append((o, lse))
            o += 4
            if lse & 0x100:
                p.l3_off = o
                if o < len(frame):
                    et = {4: ETH_IPV4, 6: ETH_IPV6}.get(frame[o] >> 4, et)
                break
        else:
            return p
    l3 = p.l3_off
    if et == ETH_IPV4 and len(frame) >= l3 + 20 and frame[l3] >> 4 == 4:
        ihl = (frame[l3] & 0xF) * 4
        (tl,) = struct.unpack_from("!H", frame, l3 + 2)
        if ihl < 20 or tl < ihl or l3 + tl > len(frame):
            p.length_ok = False
            return p
        p.l3 = "ipv4"
        hdr = frame[l3:l3 + ihl]
        p.ipv4_csum_ok = struct.unpack_from("!H", hdr, 10)[0] == ipv4_header_csum(hdr)
        (flags,) = struct.unpack_from("!H", frame, l3 + 6)
        p.frag_off, p.more_frags = flags & 0x1FFF, bool(flags & 0x2000)
        p.proto = frame[l3 + 9]
        p.ip_end = l3 + tl
        if p.frag_off == 0:
            p.l4_off = l3 + ihl
    elif et == ETH_IPV6 and len(frame) >= l3 + 40:
        (plen,) = struct.unpack_from("!H", frame, l3 + 4)
        if l3 + 40 + plen > len(frame):
            p.length_ok = False
            return p
        p.l3 = "ipv6"
        p.ip_end = l3 + 40 + plen
        nh, o = frame[l3 + 6], l3 + 40
        while nh in (IPV6_HOPOPTS, 43, 60, IPV6_FRAGMENT) and o + 8 <= p.ip_end:
            if nh == IPV6_FRAGMENT:
                (fo,) = struct.unpack_from("!H", frame, o + 2)
                p.frag_off, p.more_frags = fo >> 3, bool(fo & 1)
                nh, o = frame[o], o + 8
            else:
                nh, o = frame[o], o + (frame[o + 1] + 1) * 8
        p.proto = nh
        if p.frag_off == 0:
            p.l4_off = o
    elif et == ETH_ARP and len(frame) >= l3 + 28:
        p.l3 = "arp"
        p.ip_end = l3 + 28
    return p


def describe(frame: bytes) -> str:
    """A one-line summary of @frame for reports: tags, L3, protocol, fragment, length."""
    p = parse(frame)
    parts = [f"{len(frame)}B"]
    for _, tpid, tci in p.vlans:
        parts.append(f"{'qinq' if tpid == ETH_QINQ else 'vlan'}(vid={tci & 0xFFF},"
                     f"pcp={tci >> 13}{',dei' if tci & 0x1000 else ''})")
    for _, lse in p.mpls:
        parts.append(f"{'mpls' if p.eth_type == ETH_MPLS else 'mplsm'}(label={lse >> 12},"
                     f"tc={(lse >> 9) & 7},{'bos,' if lse & 0x100 else ''}ttl={lse & 0xFF})")
    if p.l3 is None and p.mpls:
        parts.append("payload" if p.mpls[-1][1] & 0x100 else "no-bos")
    elif p.l3 is None:
        parts.append(f"type=0x{p.eth_type:04x}{'' if p.length_ok else ' bad-length'}")
    else:
        parts.append(p.l3)
        if p.l3 != "arp":
            parts.append({IPPROTO_TCP: "tcp", IPPROTO_UDP: "udp", IPPROTO_SCTP: "sctp",
                          IPPROTO_ICMP: "icmp", IPPROTO_ICMPV6: "icmp6"}.get(
                              p.proto, f"proto={p.proto}"))
        if p.is_fragment:
            parts.append("later-frag" if p.is_later_fragment else "first-frag")
        if not p.ipv4_csum_ok:
            parts.append("bad-ip-csum")
        if p.ip_end and p.ip_end < len(frame):
            parts.append(f"pad={len(frame) - p.ip_end}")
    return " ".join(parts)


# ---------------------------------------------------------------------------
# Normalisers (the allowlist compares frames after one of these)
# ---------------------------------------------------------------------------

#: Offset of the checksum in each L4 header (SCTP: 4 bytes, the others 2).
L4_CSUM_OFF = {IPPROTO_TCP: 16, IPPROTO_UDP: 6, IPPROTO_SCTP: 8, IPPROTO_ICMP: 2,
               IPPROTO_ICMPV6: 2}


def _pseudo(frame: bytes, p: Parsed, n: int) -> bytes:
    l3 = p.l3_off
    if p.l3 == "ipv4":
        return _pseudo4(frame[l3 + 12:l3 + 16], frame[l3 + 16:l3 + 20], p.proto, n)
    return _pseudo6(frame[l3 + 8:l3 + 24], frame[l3 + 24:l3 + 40], p.proto, n)


def _l4_checksummed(frame: bytes) -> tuple[Parsed, int, bytes, int] | None:
    """(parse, the L4 offset, the L4 segment up to the IP length, its checksum's offset)
    when @frame has
    an L4 checksum that fits (not a fragment, a known protocol), else None."""
    p = parse(frame)
    if p.l4_off is None or p.is_fragment or p.proto not in L4_CSUM_OFF:
        return None
    seg = frame[p.l4_off:p.ip_end]
    off = L4_CSUM_OFF[p.proto]
    if len(seg) < off + (4 if p.proto == IPPROTO_SCTP else 2):
        return None
    return p, p.l4_off, seg, off


def l4_csum_ok(frame: bytes) -> bool | None:
    """Whether the L4 checksum of @frame is right (None: no L4 checksum to check: not
    IP, a fragment, an IP length that does not fit, an unknown protocol, IPv4 UDP
    without a checksum).  An IPv6 UDP checksum of 0 is wrong (RFC 8200 section 8.1)."""
    found = _l4_checksummed(frame)
    if found is None:
        return None
    p, l4, seg, off = found
    if p.proto == IPPROTO_SCTP:
        return seg[8:12] == sctp_csum_bytes(seg)
    if p.proto == IPPROTO_UDP and seg[6:8] == b"\0\0":
        return None if p.l3 == "ipv4" else False
    return fixed_l4(frame)[l4 + off:l4 + off + 2] == seg[off:off + 2]


def fixed_l4(frame: bytes) -> bytes:
    """@frame with its L4 checksum recomputed (unchanged where l4_csum_ok has nothing to
    check, and an IPv4 UDP checksum of 0 stays 0)."""
    found = _l4_checksummed(frame)
    if found is None:
        return frame
    p, l4, seg, off = found
    if p.proto == IPPROTO_UDP and p.l3 == "ipv4" and seg[6:8] == b"\0\0":
        return frame
    if p.proto == IPPROTO_SCTP:
        new = sctp_csum_bytes(seg)
        return frame[:l4 + 8] + new + frame[l4 + 12:]
    z = seg[:off] + b"\0\0" + seg[off + 2:]
    c = inet_csum((b"" if p.proto == IPPROTO_ICMP else _pseudo(frame, p, len(seg))) + z)
    if p.proto == IPPROTO_UDP and c == 0:
        c = 0xFFFF
    return frame[:l4 + off] + struct.pack("!H", c) + frame[l4 + off + 2:]


def fixed_ipv4(frame: bytes) -> bytes:
    """@frame with its IPv4 header checksum recomputed (other frames unchanged)."""
    p = parse(frame)
    if p.l3 != "ipv4":
        return frame
    ihl = (frame[p.l3_off] & 0xF) * 4
    c = ipv4_header_csum(frame[p.l3_off:p.l3_off + ihl])
    return frame[:p.l3_off + 10] + struct.pack("!H", c) + frame[p.l3_off + 12:]


def strip_vlans(frame: bytes) -> bytes:
    """@frame without any VLAN tag."""
    p = parse(frame)
    if not p.vlans:
        return frame
    return frame[:12] + frame[p.eth_type_off:]


def mpls_unicast(frame: bytes) -> bytes:
    """@frame with an MPLS multicast EtherType (0x8848) written as unicast (0x8847)."""
    p = parse(frame)
    if p.eth_type != ETH_MPLS_MC:
        return frame
    e = p.eth_type_off
    return frame[:e] + struct.pack("!H", ETH_MPLS) + frame[e + 2:]


def later_fragment_l4_span(frame: bytes) -> tuple[int, int] | None:
    """The first 20 bytes of the payload of an IPv4 later fragment of a TCP, UDP, SCTP or
    ICMP datagram: where a first fragment would have its L4 header."""
    p = parse(frame)
    if p.l3 != "ipv4" or not p.is_later_fragment or p.proto not in L4_CSUM_OFF:
        return None
    start = p.l3_off + (frame[p.l3_off] & 0xF) * 4
    return start, min(start + 20, p.ip_end)



def leftover_labels(longer: bytes, shorter: bytes, inserted: int | None = None) -> int:
    """How many MPLS label stack entries @longer has right after the (non-MPLS) EtherType
    of @shorter, being @shorter with them inserted there: a stack of one or more entries
    whose last, and only the last, has the bottom-of-stack bit (what a pop_mpls to a
    non-MPLS EtherType leaves of a deeper stack).  0 when the frames are not of that shape.
    @inserted: the bytes inserted (default: the difference in length; give it for frames
    cut short, packet-in data, from the total lengths)."""
    p = parse(shorter)
    e = p.eth_type_off + 2
    d = len(longer) - len(shorter) if inserted is None else inserted
    if (p.eth_type in (ETH_MPLS, ETH_MPLS_MC) or d <= 0 or d % 4 or len(longer) < e + d
            or longer[:e] != shorter[:e]
            or longer[e + d:] != shorter[e:e + len(longer) - e - d]):
        return 0
    bos = [longer[o + 2] & 1 for o in range(e, e + d, 4)]
    return d // 4 if bos[-1] and not any(bos[:-1]) else 0
