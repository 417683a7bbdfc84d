"""Truncated and malformed frames through a three-table pipeline.

The switch must never crash, must count every frame it receives (forwarded
or dropped with a reason) and must keep its counters balanced.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable

import pytest
from scapy.all import IP, TCP, UDP, Dot1Q, Ether, IPv6, Raw  # type: ignore[import-untyped]
from scapy.layers.inet6 import (  # type: ignore[import-untyped]
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrFragment,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrRouting,
)

from sluice.testing import RunResult, assert_balanced

Switch = Callable[..., RunResult]

MAC2 = "02:00:00:00:00:02"
MAC3 = "02:00:00:00:00:03"
SRC = "02:00:00:00:00:aa"
ETH_IP = bytes.fromhex("020000000002" "0200000000aa" "0800")
ETH_IP6 = bytes.fromhex("020000000002" "0200000000aa" "86dd")

#: mask -> lpm -> exact, with actions that rewrite headers (TTL, ports, VLAN
#: tags, raw bits) so malformed frames reach every writer as well as the parser.
FLOWS = [
    "table=0,kind=mask",
    "table=1,kind=lpm,fields=nw_dst",
    "table=2,kind=exact,fields=dl_dst",
    "table=0,priority=300,udp actions=mod_tp_dst:9,dec_ttl,goto_table:1",
    "table=0,priority=290,tcp actions=mod_tp_src:7,mod_nw_src:10.9.9.9,goto_table:1",
    "table=0,priority=200,ip actions=dec_ttl,goto_table:1",
    "table=0,priority=150,ipv6 actions=dec_ttl,set_field:2001:db8::7->ipv6_dst,output:3",
    "table=0,priority=140,dl_vlan=5 actions=strip_vlan,push_vlan:0x88a8,goto_table:2",
    "table=0,priority=0 actions=goto_table:2",
    "table=1,ip,nw_dst=10.0.0.0/8 actions=goto_table:2",
    "table=1,ip,nw_dst=0.0.0.0/0 actions=mod_dl_dst:02:00:00:00:00:03,output:2",
    f"table=2,dl_dst={MAC2} actions=output:2,set_field:0xbeef->raw(l4,16,16),output:3",
    f"table=2,dl_dst={MAC3} actions=push_vlan:0x8100,mod_vlan_vid:77,FLOOD",
    "table=2,dl_dst=ff:ff:ff:ff:ff:ff actions=pop_vlan,dec_ttl,output:2",
]


def ip4_header(ihl: int = 5, total: int = 40, proto: int = 17, ttl: int = 64,
               frag: int = 0, dst: bytes = b"\x0a\x00\x00\x02") -> bytes:
    """Raw IPv4 header bytes (IHL words of header, options zero-filled)."""
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, total, 1, frag, ttl, proto, 0,
                      b"\x0a\x00\x00\x01", dst)
    return hdr + bytes(max(0, ihl * 4 - 20))


def malformed_frames() -> list[tuple[str, bytes]]:
    """(name, frame bytes) for every malformed or borderline case."""
    f: list[tuple[str, bytes]] = []
    # Runts: shorter than an Ethernet header.
    for n in (1, 6, 12, 13):
        f.append((f"runt{n}", bytes(range(n))))
    f.append(("eth-only-ip", ETH_IP))
    f.append(("eth-only-ip6", ETH_IP6))
    f.append(("eth-only-vlan", bytes.fromhex("020000000002" "0200000000aa" "8100")))
    # Truncated IPv4.
    for n in (1, 10, 19):
        f.append((f"ip4-trunc{n}", ETH_IP + ip4_header()[:n]))
    for ihl in (0, 1, 4):
        f.append((f"ip4-ihl{ihl}", ETH_IP + ip4_header(ihl=ihl) + bytes(20)))
    f.append(("ip4-ihl15-short", ETH_IP + bytes([0x4F]) + ip4_header()[1:]))
    f.append(("ip4-ihl15-udp", ETH_IP + ip4_header(ihl=15) + b"\x00\x01\x00\x02\x00\x08\x12\x34"))
    f.append(("ip4-total-len-huge", ETH_IP + ip4_header(total=65535) + bytes(8)))
    f.append(("ip4-total-len-small", ETH_IP + ip4_header(total=5) + bytes(8)))
    f.append(("ip4-version6-in-0800", ETH_IP + b"\x65" + ip4_header()[1:] + bytes(8)))
    f.append(("ip4-later-fragment", ETH_IP + ip4_header(frag=0x0010) + bytes(8)))
    f.append(("ip4-ttl0", ETH_IP + ip4_header(ttl=0) + bytes(8)))
    # Zero-length and short L4.
    for proto, name in ((6, "tcp"), (17, "udp"), (1, "icmp"), (132, "sctp")):
        f.append((f"{name}-l4-empty", ETH_IP + ip4_header(proto=proto, total=20)))
        f.append(
            (f"{name}-l4-3bytes", ETH_IP + ip4_header(proto=proto, total=23) + b"\x01\x02\x03")
        )
    # Truncated IPv6.
    ip6 = bytes(IPv6(src="2001:db8::1", dst="2001:db8::2", nh=17, plen=8))
    for n in (1, 20, 39):
        f.append((f"ip6-trunc{n}", ETH_IP6 + ip6[:n]))
    f.append(("ip6-udp-empty", ETH_IP6 + ip6))
    # Bad IPv6 extension-header chains.
    base6 = Ether(src=SRC, dst=MAC2) / IPv6(src="2001:db8::1", dst="2001:db8::2")
    f.append(("ip6-hbh-trunc", bytes(base6 / IPv6ExtHdrHopByHop())[:14 + 40 + 4]))
    hbh_long = bytearray(bytes(base6 / IPv6ExtHdrHopByHop() / UDP()))
    hbh_long[14 + 40 + 1] = 255  # header claims 2 KiB
    f.append(("ip6-hbh-len-beyond", bytes(hbh_long)))
    chain = base6
    for _ in range(12):  # longer than any parser bound
        chain = chain / IPv6ExtHdrDestOpt()
    f.append(("ip6-ext-chain12", bytes(chain / UDP(dport=9))))
    f.append(("ip6-frag-later", bytes(base6 / IPv6ExtHdrFragment(offset=100) / UDP())))
    f.append(("ip6-frag-trunc", bytes(base6 / IPv6ExtHdrFragment() / UDP())[:14 + 40 + 5]))
    f.append(("ip6-routing-udp", bytes(base6 / IPv6ExtHdrRouting() / UDP() / Raw(b"x" * 4))))
    ah = bytearray(bytes(base6 / Raw(bytes(12))))
    ah[14 + 6] = 51  # AH with payload length 0
    f.append(("ip6-ah-short", bytes(ah)))
    f.append(("ip6-no-next", bytes(Ether(src=SRC, dst=MAC2) / IPv6(nh=59))))
    # VLAN stacks.
    tags = b"".join(b"\x81\x00" + struct.pack("!H", i % 4096) for i in range(200))
    f.append(("vlan-200-ip", bytes.fromhex("020000000002" "0200000000aa") + tags + b"\x08\x00"
              + ip4_header() + bytes(20)))
    f.append(("vlan-200-only", bytes.fromhex("020000000002" "0200000000aa") + tags))
    f.append(("vlan5-tagged", bytes(Ether(src=SRC, dst=MAC3) / Dot1Q(vlan=5) / IP() / UDP())))
    f.append(("vlan5-trunc", bytes(Ether(src=SRC, dst=MAC3) / Dot1Q(vlan=5))[:16]))
    f.append(("qinq-bcast", bytes(Ether(dst="ff:ff:ff:ff:ff:ff") / Dot1Q(vlan=1) / Dot1Q(vlan=2)
                                  / IP(ttl=1) / UDP())))
    # MPLS without a bottom-of-stack label.
    mpls = bytes.fromhex("020000000002" "0200000000aa" "8847")
    f.append(("mpls-no-bos", mpls + b"\x00\x01\x00\x40" * 3))
    # Valid frames mixed in, so forwarding still happens.
    eth = Ether(src=SRC, dst=MAC2)
    f.append(("valid-udp", bytes(eth / IP(dst="10.0.0.2") / UDP() / Raw(b"valid-ok"))))
    f.append(("valid-tcp", bytes(eth / IP(dst="10.1.0.2") / TCP() / Raw(b"valid-ok"))))
    f.append(("valid-ttl1", bytes(Ether(src=SRC, dst=MAC2) / IP(dst="10.0.0.2", ttl=1) / UDP())))
    # Random bytes, seeded.
    rng = random.Random(20261122)
    for i in range(64):
        n = rng.choice([1, 13, 14, 15, 33, 34, 53, 54, 60, 64, 128, 600, 1514])
        b = bytearray(rng.randbytes(n))
        if i % 3 == 0 and n >= 14:
            b[12:14] = rng.choice([b"\x08\x00", b"\x86\xdd", b"\x81\x00", b"\x88\x47", b"\x08\x06"])
        if i % 4 == 0 and n >= 6:
            b[0:6] = bytes.fromhex(rng.choice(["020000000002", "020000000003", "ffffffffffff"]))
        f.append((f"random{i}", bytes(b)))
    return f


def run_and_check(pcap_switch: Switch, frames: list[bytes], duration: float = 1.5) -> RunResult:
    """Run @frames in on port 1 of a 3-port switch; check nothing is lost or crashes."""
    res = pcap_switch(3, {1: frames}, FLOWS, duration=duration, expect_rc=None)
    assert res.returncode == 0, f"sluice exited {res.returncode}:\n{res.output}"
    assert_balanced(res)
    assert res.json is not None
    assert res.json["rx"] == len(frames), res.output
    assert res.port(1)["rx"] == len(frames)
    sent_out = sum(len(v) for v in res.out.values())
    assert sent_out == res.json["tx"], (sent_out, res.json)
    return res


def test_malformed_frames(pcap_switch: Switch) -> None:
    """Runts, truncated headers, bad IPv6 chains, VLAN stacks, random bytes.

    Steps:
        1. Three pcap ports; a mask -> lpm -> exact pipeline whose actions
           rewrite TTL, L4 ports, addresses, VLAN tags and raw L4 bits.
        2. Send ~140 malformed, borderline and random frames on port 1.
    Verify:
        Exit code 0; rx equals the number of frames sent; rx + copies = tx +
        tx drops + pipeline drops, the check line says OK; the frames written
        to the tx pcaps equal the tx counter; valid frames are forwarded.
    """
    named = malformed_frames()
    res = run_and_check(pcap_switch, [b for _, b in named])
    assert res.json is not None and res.json["tx"] > 0
    valid_out = [bytes(p) for p in res.out[2] if bytes(p).endswith(b"valid-ok")]
    assert len(valid_out) == 2, res.output


GROUPS = {
    "runts": ("runt", "eth-only"),
    "ipv4": ("ip4-",),
    "l4": ("tcp-", "udp-", "icmp-", "sctp-"),
    "ipv6": ("ip6-",),
    "vlan-mpls": ("vlan", "qinq", "mpls"),
}


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_malformed_group_alone(pcap_switch: Switch, group: str) -> None:
    """One family of malformed frames at a time, each frame sent twice.

    Steps:
        1. The same pipeline; send the group's frames (runts, IPv4, L4,
           IPv6 or VLAN/MPLS), each twice, on port 1.
    Verify:
        Exit 0, rx equals the frames sent, counters balanced, check line
        OK; a crash is pinned to one family of frames.
    """
    frames = [b for n, b in malformed_frames() if n.startswith(GROUPS[group])]
    assert frames
    run_and_check(pcap_switch, frames * 2, duration=0.8)


def test_runts_dropped_too_short(pcap_switch: Switch) -> None:
    """Frames shorter than an Ethernet header are dropped as too-short.

    Steps:
        1. Flow in_port=1 actions=output:2.
        2. Send frames of 1, 6 and 13 bytes and one valid 60-byte frame.
    Verify:
        Only the 60-byte frame leaves on port 2; too-short counts 3.
    """
    valid = bytes(Ether(src=SRC, dst=MAC2) / IP() / UDP() / Raw(bytes(18)))
    res = pcap_switch(2, {1: [bytes(1), bytes(6), bytes(13), valid]},
                      ["in_port=1 actions=output:2"])
    assert_balanced(res)
    assert [bytes(p) for p in res.out[2]] == [valid]
    assert res.drops() == {"too-short": 3}


def test_jumbo_frame(pcap_switch: Switch) -> None:
    """A 9000-byte frame (multi-segment mbuf in net_pcap) is forwarded intact.

    Steps:
        1. in_port=1 -> output:2; also a 1514-byte and a 2100-byte frame.
        2. Send the three frames on port 1.
    Verify:
        Exit 0, counters balanced; every frame the switch counts as sent
        appears whole and unchanged in port 2's pcap.
    """
    frames = [
        bytes(Ether(src=SRC, dst=MAC2) / IP(dst="10.0.0.2") / UDP() / Raw(bytes(n - 42)))
        for n in (1514, 2100, 9000)
    ]
    res = pcap_switch(2, {1: frames}, ["in_port=1 actions=dec_ttl,output:2"], expect_rc=None)
    assert res.returncode == 0, res.output
    assert_balanced(res)
    assert res.json is not None and res.json["rx"] == 3
    got = [bytes(p) for p in res.out[2]]
    assert len(got) == res.json["tx"] == 3, res.output
    for g, f in zip(got, frames):
        exp = Ether(f)
        exp[IP].ttl -= 1
        del exp[IP].chksum
        assert len(g) == len(f)
        assert g == bytes(Ether(bytes(exp)))
