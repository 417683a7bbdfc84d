"""Forwarding, multi-table pipelines and actions, observed through pcap ports.

Each OpenFlow port is its own net_pcap device with its own tx pcap, so every
test checks exactly which frames leave which port, byte for byte where the
switch must not touch them.
"""

from __future__ import annotations

from collections.abc import Callable

from scapy.all import (  # type: ignore[import-untyped]
    ICMP,
    IP,
    TCP,
    UDP,
    Dot1Q,
    Ether,
    IPv6,
    Packet,
    Raw,
)

from sluice.testing import RunResult, assert_balanced

Switch = Callable[..., RunResult]

SRC_MAC = "02:00:00:00:00:aa"
MAC1 = "02:00:00:00:00:01"
MAC2 = "02:00:00:00:00:02"
MAC3 = "02:00:00:00:00:03"


def udp(
    dst: str = "10.0.0.2",
    src: str = "10.0.0.1",
    dport: int = 5001,
    sport: int = 1024,
    ttl: int = 64,
    dst_mac: str = MAC2,
    payload: bytes = b"sluice-test-udp",
) -> Packet:
    """An Ethernet/IPv4/UDP frame with valid checksums."""
    return Ether(
        bytes(
            Ether(src=SRC_MAC, dst=dst_mac)
            / IP(src=src, dst=dst, ttl=ttl)
            / UDP(sport=sport, dport=dport)
            / Raw(payload)
        )
    )


def tcp(dst: str = "10.0.0.2", dport: int = 80, ttl: int = 64) -> Packet:
    """An Ethernet/IPv4/TCP frame with valid checksums."""
    return Ether(
        bytes(
            Ether(src=SRC_MAC, dst=MAC2)
            / IP(src="10.0.0.1", dst=dst, ttl=ttl)
            / TCP(sport=40000, dport=dport, flags="S", seq=1)
            / Raw(b"sluice-test-tcp")
        )
    )


def udp6(dst: str = "2001:db8::2", hlim: int = 64, dport: int = 5001) -> Packet:
    """An Ethernet/IPv6/UDP frame with valid checksums."""
    return Ether(
        bytes(
            Ether(src=SRC_MAC, dst=MAC2)
            / IPv6(src="2001:db8::1", dst=dst, hlim=hlim)
            / UDP(sport=1024, dport=dport)
            / Raw(b"sluice-test-udp6")
        )
    )


def checksums_ok(pkt: Packet) -> bool:
    """True when the IPv4 header and L4 checksums of @pkt are what scapy computes."""
    fresh = pkt.copy()
    for layer in (IP, UDP, TCP, ICMP):
        if layer in fresh:
            if layer is UDP and IP in fresh and pkt[UDP].chksum == 0:
                continue  # IPv4 UDP without a checksum
            del fresh[layer].chksum
    return bytes(Ether(bytes(fresh))) == bytes(pkt)


def assert_drops(res: RunResult, expected: dict[str, int]) -> None:
    """Counters add up and the non-zero drop reasons are exactly @expected."""
    assert_balanced(res)
    assert res.drops() == expected, res.output


def raw_list(pkts: list[Packet]) -> list[bytes]:
    return [bytes(p) for p in pkts]


# --------------------------------------------------------------------------
# Forwarding and multi-table pipelines
# --------------------------------------------------------------------------


def test_in_port_forwarding(pcap_switch: Switch) -> None:
    """TC1: forward by in_port, frames unchanged.

    Steps:
        1. Three pcap ports; flows in_port=1->2, in_port=2->3, in_port=3->1.
        2. Send 4 UDP frames on port 1 and 3 TCP frames on port 2.
    Verify:
        Port 2 writes exactly port 1's frames, port 3 exactly port 2's, in
        order and byte for byte; port 1 writes nothing; rx 7 = tx 7, no drops.
    """
    in1 = [udp(sport=1000 + i) for i in range(4)]
    in2 = [tcp(dport=80 + i) for i in range(3)]
    res = pcap_switch(
        3,
        {1: in1, 2: in2},
        [
            "priority=100,in_port=1 actions=output:2",
            "priority=100,in_port=2 actions=output:3",
            "priority=100,in_port=3 actions=output:1",
        ],
    )
    assert raw_list(res.out[2]) == raw_list(in1)
    assert raw_list(res.out[3]) == raw_list(in2)
    assert res.out[1] == []
    assert_drops(res, {})
    assert res.json is not None
    assert (res.json["rx"], res.json["tx"]) == (7, 7)
    assert (res.port(1)["rx"], res.port(2)["rx"], res.port(2)["tx"], res.port(3)["tx"]) == (
        4,
        3,
        4,
        3,
    )


def test_goto_metadata_direct_table(pcap_switch: Switch) -> None:
    """goto_table with write_metadata, then a direct table indexed by metadata.

    Steps:
        1. Four ports.  Table 0 (mask): in_port=1 -> metadata 5, in_port=2 ->
           metadata 7, in_port=3 -> metadata 9, all goto_table:1.
        2. Table 1: kind=direct,fields=metadata,size=16 with metadata=5 ->
           output:3 and metadata=7 -> output:4 (no entry for 9).
        3. Send 2 frames on port 1, 3 on port 2, 1 on port 3.
    Verify:
        Port 3 gets port 1's frames, port 4 gets port 2's; port 3's frame is a
        table-miss drop in table 1; table 1 counts 6 lookups, 5 matched.
    """
    in1 = [udp(sport=1 + i) for i in range(2)]
    in2 = [udp(sport=10 + i) for i in range(3)]
    in3 = [udp(sport=20)]
    res = pcap_switch(
        4,
        {1: in1, 2: in2, 3: in3},
        [
            "table=1,kind=direct,fields=metadata,size=16",
            "table=0,in_port=1 actions=write_metadata:5,goto_table:1",
            "table=0,in_port=2 actions=write_metadata:7,goto_table:1",
            "table=0,in_port=3 actions=write_metadata:9,goto_table:1",
            "table=1,metadata=5 actions=output:3",
            "table=1,metadata=7 actions=output:4",
        ],
    )
    assert raw_list(res.out[3]) == raw_list(in1)
    assert raw_list(res.out[4]) == raw_list(in2)
    assert res.out[1] == [] and res.out[2] == []
    assert_drops(res, {"table-miss": 1})
    assert res.table(0)["lookups"] == 6 and res.table(0)["matched"] == 6
    assert res.table(1)["lookups"] == 6 and res.table(1)["matched"] == 5


def test_exact_table_dl_dst(pcap_switch: Switch) -> None:
    """An exact-match table on in_port+dl_dst behind a goto from table 0.

    Steps:
        1. Table 0: every frame goto_table:1.  Table 1: kind=exact,
           fields=in_port+dl_dst; (1, MAC2) -> 2, (1, MAC3) -> 3,
           (2, MAC3) -> 1.
        2. Send on port 1 frames to MAC2, MAC3 and MAC1; on port 2 frames to
           MAC3 and MAC2.
    Verify:
        Each frame leaves on the port of its (in_port, dl_dst) entry; the
        frames to MAC1 from port 1 and MAC2 from port 2 are table misses.
    """
    a, b, c = udp(dst_mac=MAC2), udp(dst_mac=MAC3), udp(dst_mac=MAC1)
    d, e = udp(dst_mac=MAC3, sport=7), udp(dst_mac=MAC2, sport=8)
    res = pcap_switch(
        3,
        {1: [a, b, c], 2: [d, e]},
        [
            "table=1,kind=exact,fields=in_port+dl_dst",
            "table=0,priority=0 actions=goto_table:1",
            f"table=1,in_port=1,dl_dst={MAC2} actions=output:2",
            f"table=1,in_port=1,dl_dst={MAC3} actions=output:3",
            f"table=1,in_port=2,dl_dst={MAC3} actions=output:1",
        ],
    )
    assert raw_list(res.out[2]) == [bytes(a)]
    assert raw_list(res.out[3]) == [bytes(b)]
    assert raw_list(res.out[1]) == [bytes(d)]
    assert_drops(res, {"table-miss": 2})


def test_lpm_longest_prefix(pcap_switch: Switch) -> None:
    """LPM table on nw_dst: the longest matching prefix wins.

    Steps:
        1. Table 0: kind=lpm,fields=nw_dst with 10.0.0.0/8 -> 2,
           10.1.2.0/24 -> 3, 10.1.2.128/25 -> 4.
        2. Send on port 1 to 10.9.9.9, 10.1.2.5, 10.1.2.200, 10.1.3.1,
           11.0.0.1, and one ARP frame.
    Verify:
        10.9.9.9 and 10.1.3.1 leave on 2, 10.1.2.5 on 3, 10.1.2.200 on 4;
        11.0.0.1 and the ARP frame are table misses.
    """
    from scapy.all import ARP  # type: ignore[import-untyped]

    dsts = ["10.9.9.9", "10.1.2.5", "10.1.2.200", "10.1.3.1", "11.0.0.1"]
    pkts = [udp(dst=d) for d in dsts]
    arp = Ether(bytes(Ether(src=SRC_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(pdst="10.1.2.5")))
    res = pcap_switch(
        4,
        {1: pkts + [arp]},
        [
            "table=0,kind=lpm,fields=nw_dst",
            "table=0,ip,nw_dst=10.0.0.0/8 actions=output:2",
            "table=0,ip,nw_dst=10.1.2.0/24 actions=output:3",
            "table=0,ip,nw_dst=10.1.2.128/25 actions=output:4",
        ],
    )
    assert raw_list(res.out[2]) == [bytes(pkts[0]), bytes(pkts[3])]
    assert raw_list(res.out[3]) == [bytes(pkts[1])]
    assert raw_list(res.out[4]) == [bytes(pkts[2])]
    assert_drops(res, {"table-miss": 2})


def test_mask_table_priorities(pcap_switch: Switch) -> None:
    """Mask table: among overlapping entries the highest priority wins.

    Steps:
        1. Table 0 (mask): priority 10 ip -> 2; priority 20 ip,nw_dst=10/8 ->
           3; priority 30 ip,nw_dst=10.1/16,nw_src=192.168/16 -> 4;
           priority 5 (catch-all) -> drop.
        2. Send: 10.1.0.1 from 192.168.0.1; 10.1.0.1 from 172.16.0.1;
           20.0.0.1; and an IPv6 frame.
    Verify:
        They leave on 4, 3, 2; the IPv6 frame hits the priority-5 drop
        entry (counted as no-output, not table-miss).
    """
    p4 = udp(dst="10.1.0.1", src="192.168.0.1")
    p3 = udp(dst="10.1.0.1", src="172.16.0.1")
    p2 = udp(dst="20.0.0.1")
    res = pcap_switch(
        4,
        {1: [p4, p3, p2, udp6()]},
        [
            "table=0,kind=mask",
            "table=0,priority=10,ip actions=output:2",
            "table=0,priority=20,ip,nw_dst=10.0.0.0/8 actions=output:3",
            "table=0,priority=30,ip,nw_dst=10.1.0.0/16,nw_src=192.168.0.0/16 actions=output:4",
            "table=0,priority=5 actions=drop",
        ],
    )
    assert raw_list(res.out[4]) == [bytes(p4)]
    assert raw_list(res.out[3]) == [bytes(p3)]
    assert raw_list(res.out[2]) == [bytes(p2)]
    assert_drops(res, {"no-output": 1})


def test_three_table_chain(pcap_switch: Switch) -> None:
    """A mask -> lpm -> exact chain, as in the three-stage example.

    Steps:
        1. Table 0 (mask): udp -> metadata 1, goto 1.  Table 1 (lpm on
           nw_dst): 10.0.0.0/8 goto 2.  Table 2 (exact dl_dst): MAC2 -> 2,
           MAC3 -> 3.
        2. Send UDP to (10.0.0.5, MAC2), (10.0.0.6, MAC3), (10.0.0.7, MAC1),
           (11.0.0.1, MAC2), and one TCP frame.
    Verify:
        The first two leave on 2 and 3; the other three are table misses
        (in tables 2, 1 and 0); per-table lookups are 5, 4, 3.
    """
    a = udp(dst="10.0.0.5", dst_mac=MAC2)
    b = udp(dst="10.0.0.6", dst_mac=MAC3)
    c = udp(dst="10.0.0.7", dst_mac=MAC1)
    d = udp(dst="11.0.0.1", dst_mac=MAC2)
    res = pcap_switch(
        3,
        {1: [a, b, c, d, tcp()]},
        [
            "table=0,kind=mask",
            "table=1,kind=lpm,fields=nw_dst",
            "table=2,kind=exact,fields=dl_dst",
            "table=0,udp actions=write_metadata:1,goto_table:1",
            "table=1,ip,nw_dst=10.0.0.0/8 actions=goto_table:2",
            f"table=2,dl_dst={MAC2} actions=output:2",
            f"table=2,dl_dst={MAC3} actions=output:3",
        ],
    )
    assert raw_list(res.out[2]) == [bytes(a)]
    assert raw_list(res.out[3]) == [bytes(b)]
    assert_drops(res, {"table-miss": 3})
    assert [res.table(t)["lookups"] for t in (0, 1, 2)] == [5, 4, 3]
    assert [res.table(t)["matched"] for t in (0, 1, 2)] == [4, 3, 2]


# --------------------------------------------------------------------------
# Actions
# --------------------------------------------------------------------------


def test_dec_ttl(pcap_switch: Switch) -> None:
    """dec_ttl decrements IPv4 TTL / IPv6 hop limit and drops at expiry.

    Steps:
        1. Flow in_port=1 actions=dec_ttl,output:2.
        2. Send IPv4 UDP with TTL 64, 2, 1, 0 and IPv6 with hop limit 9, 1.
    Verify:
        TTL 64 -> 63, 2 -> 1, hop limit 9 -> 8 leave on port 2 with a valid
        IPv4 header checksum and otherwise unchanged; TTL 1, TTL 0 and hop
        limit 1 are dropped as ttl-expired (3).
    """
    sent = [udp(ttl=64), udp(ttl=2), udp(ttl=1), udp(ttl=0), udp6(hlim=9), udp6(hlim=1)]
    res = pcap_switch(2, {1: sent}, ["in_port=1 actions=dec_ttl,output:2"])
    out = res.out[2]
    assert len(out) == 3, res.output
    assert [p[IP].ttl for p in out[:2]] == [63, 1]
    assert out[2][IPv6].hlim == 8
    for got, orig in zip(out, [sent[0], sent[1], sent[4]]):
        assert checksums_ok(got), got.show2(dump=True)
        exp = orig.copy()
        if IP in exp:
            exp[IP].ttl -= 1
            del exp[IP].chksum
        else:
            exp[IPv6].hlim -= 1
        assert bytes(got) == bytes(Ether(bytes(exp)))
    assert_drops(res, {"ttl-expired": 3})


def test_set_field_checksums(pcap_switch: Switch) -> None:
    """set_field / mod_* rewrite headers and keep IPv4 and L4 checksums valid.

    Steps:
        1. udp,in_port=1: mod_dl_dst, mod_nw_dst, mod_tp_dst, set_field
           nw_src, output:2.  tcp,in_port=1: mod_nw_dst, mod_tp_dst:8080,
           output:3.  udp6: set_field ipv6_dst, udp_dst, output:4.
        2. Send one UDP, one TCP, one IPv4 UDP frame with checksum 0, one
           UDP/IPv6 frame.
    Verify:
        Rewritten fields have their new values, other bytes are unchanged,
        and every IPv4/UDP/TCP checksum is valid (scapy recomputes the same
        value); the checksum-0 UDP frame keeps checksum 0.
    """
    u = udp()
    u0 = udp(dport=5001, sport=999)
    u0[UDP].chksum = 0
    u0 = Ether(bytes(u0))
    t = tcp()
    u6 = udp6()
    res = pcap_switch(
        4,
        {1: [u, t, u0, u6]},
        [
            "udp,in_port=1 actions=mod_dl_dst:02:11:22:33:44:55,mod_nw_dst:192.0.2.9,"
            "mod_tp_dst:7777,set_field:198.51.100.1->nw_src,output:2",
            "tcp,in_port=1 actions=mod_nw_dst:203.0.113.7,mod_tp_dst:8080,output:3",
            "udp6,in_port=1 actions=set_field:2001:db8::99->ipv6_dst,"
            "set_field:53->udp_dst,output:4",
        ],
    )
    assert len(res.out[2]) == 2 and len(res.out[3]) == 1 and len(res.out[4]) == 1, res.output
    for got, orig in zip(res.out[2], [u, u0]):
        assert got[Ether].dst == "02:11:22:33:44:55"
        assert (got[IP].src, got[IP].dst, got[UDP].dport) == ("198.51.100.1", "192.0.2.9", 7777)
        assert got[UDP].sport == orig[UDP].sport and got[Raw].load == orig[Raw].load
        assert checksums_ok(got), got.show2(dump=True)
    assert res.out[2][1][UDP].chksum == 0
    gt = res.out[3][0]
    assert (gt[IP].dst, gt[TCP].dport) == ("203.0.113.7", 8080)
    assert checksums_ok(gt), gt.show2(dump=True)
    g6 = res.out[4][0]
    assert (g6[IPv6].dst, g6[UDP].dport) == ("2001:db8::99", 53)
    fresh = g6.copy()
    del fresh[UDP].chksum
    assert bytes(Ether(bytes(fresh))) == bytes(g6), "UDP/IPv6 checksum wrong"
    assert_drops(res, {})


def udp_dport_for_ffff(make: Callable[[int], Packet]) -> int:
    """The UDP destination port that makes the correct checksum of make(port) 0xffff.

    With dport 0 the one's-complement sum is S and the checksum ~S; choosing
    dport = ~S makes the sum 0xffff, whose complement 0 UDP must send as 0xffff.
    """
    port = make(0)[UDP].chksum
    assert make(port)[UDP].chksum == 0xFFFF
    return port


def test_udp_checksum_update_never_zero(pcap_switch: Switch) -> None:
    """A rewritten UDP checksum that computes to zero is sent as 0xffff.

    Steps:
        1. udp: mod_tp_dst:P4, output:2; udp6: mod_tp_dst:P6, output:2, with
           P4/P6 chosen so the correct new checksum is 0xffff.
        2. Send one UDP/IPv4 and one UDP/IPv6 frame with dport 1.
    Verify:
        Both leave with checksum 0xffff (0 means "no checksum" for IPv4 and
        is invalid for IPv6).
    """
    p4 = udp_dport_for_ffff(lambda d: udp(dport=d))
    p6 = udp_dport_for_ffff(lambda d: udp6(dport=d))
    res = pcap_switch(
        2,
        {1: [udp(dport=1), udp6(dport=1)]},
        [f"udp actions=mod_tp_dst:{p4},output:2", f"udp6 actions=mod_tp_dst:{p6},output:2"],
    )
    assert_drops(res, {})
    assert [p[UDP].dport for p in res.out[2]] == [p4, p6]
    assert [hex(p[UDP].chksum) for p in res.out[2]] == ["0xffff", "0xffff"]


def test_vlan_push_set_strip(pcap_switch: Switch) -> None:
    """push_vlan + mod_vlan_vid tags a frame; strip_vlan removes the tag.

    Steps:
        1. in_port=1: push_vlan:0x8100, mod_vlan_vid:100, output:2.
           in_port=2: strip_vlan, output:3.
           in_port=3: mod_vlan_vid:7, output:1 (set_field never pushes).
        2. Send an untagged UDP frame on 1, a frame tagged VLAN 42 on 2, an
           untagged frame on 3.
    Verify:
        Port 2 gets the frame with one 802.1Q tag VID 100 (PCP 0) and the
        original payload behind it; port 3 gets the untagged inner frame;
        port 1 gets port 3's frame unchanged.
    """
    plain = udp()
    tagged = Ether(bytes(Ether(src=SRC_MAC, dst=MAC3) / Dot1Q(vlan=42, prio=3) / plain[IP]))
    plain3 = udp(sport=3333)
    res = pcap_switch(
        3,
        {1: [plain], 2: [tagged], 3: [plain3]},
        [
            "in_port=1 actions=push_vlan:0x8100,mod_vlan_vid:100,output:2",
            "in_port=2 actions=strip_vlan,output:3",
            "in_port=3 actions=mod_vlan_vid:7,output:1",
        ],
    )
    assert len(res.out[2]) == 1, res.output
    g = res.out[2][0]
    assert g[Ether].type == 0x8100 and g[Dot1Q].vlan == 100 and g[Dot1Q].prio == 0
    assert g[Dot1Q].type == 0x0800 and Dot1Q not in g[Dot1Q].payload
    assert bytes(g[IP]) == bytes(plain[IP])
    assert (g[Ether].src, g[Ether].dst) == (plain[Ether].src, plain[Ether].dst)
    assert raw_list(res.out[3]) == [bytes(Ether(src=SRC_MAC, dst=MAC3, type=0x0800) / plain[IP])]
    assert raw_list(res.out[1]) == [bytes(plain3)]
    assert_drops(res, {})


def test_push_vlan_on_tagged_frame(pcap_switch: Switch) -> None:
    """push_vlan on a tagged frame adds an outer tag copying the inner TCI.

    Steps:
        1. in_port=1: push_vlan:0x88a8, output:2.
        2. Send a frame tagged VLAN 42 PCP 5.
    Verify:
        Port 2 gets an 0x88a8 tag with VID 42 PCP 5 in front of the original
        0x8100 tag (OpenFlow 1.3 section 7.2.5).
    """
    tagged = Ether(bytes(Ether(src=SRC_MAC, dst=MAC2) / Dot1Q(vlan=42, prio=5) / udp()[IP]))
    res = pcap_switch(2, {1: [tagged]}, ["in_port=1 actions=push_vlan:0x88a8,output:2"])
    assert len(res.out[2]) == 1, res.output
    raw = bytes(res.out[2][0])
    assert raw[12:14] == b"\x88\xa8"
    assert raw[14:16] == bytes(tagged)[14:16]
    assert raw[:12] + raw[16:] == bytes(tagged)
    assert_drops(res, {})


def test_multiple_outputs_and_flood(pcap_switch: Switch) -> None:
    """Several outputs make copies; FLOOD and ALL skip the ingress port.

    Steps:
        1. Four ports.  udp,tp_dst=1: output:2,output:3,output:4.
           udp,tp_dst=2: FLOOD.  udp,tp_dst=3: ALL.
           udp,tp_dst=4: output:2, mod_nw_dst:10.9.9.9, output:3.
        2. Send one frame of each kind on port 1 and one tp_dst=2 frame on 3.
    Verify:
        Ports 2, 3, 4 each get the first three frames unchanged (port 3 not
        the one it sent); port 1 gets only port 3's flooded frame; the
        tp_dst=4 frame reaches port 2 unchanged and port 3 rewritten.
        copies = 2 + 2 + 2 + 2 + 1 and nothing is dropped.
    """
    f1, f2, f3, f4 = (udp(dport=d) for d in (1, 2, 3, 4))
    g2 = udp(dport=2, sport=4444)
    res = pcap_switch(
        4,
        {1: [f1, f2, f3, f4], 3: [g2]},
        [
            "udp,tp_dst=1 actions=output:2,output:3,output:4",
            "udp,tp_dst=2 actions=FLOOD",
            "udp,tp_dst=3 actions=ALL",
            "udp,tp_dst=4 actions=output:2,mod_nw_dst:10.9.9.9,output:3",
        ],
    )
    out = {n: raw_list(v) for n, v in res.out.items()}
    assert sorted(out[1]) == [bytes(g2)]
    assert sorted(out[2]) == sorted(map(bytes, [f1, f2, f3, f4, g2]))
    assert len(out[3]) == 4
    assert sorted(b for b in out[3] if Ether(b)[UDP].dport != 4) == sorted(
        map(bytes, [f1, f2, f3])
    )
    mod = [Ether(b) for b in out[3] if Ether(b)[UDP].dport == 4]
    assert len(mod) == 1 and mod[0][IP].dst == "10.9.9.9" and checksums_ok(mod[0])
    assert sorted(out[4]) == sorted(map(bytes, [f1, f2, f3, g2]))
    assert_drops(res, {})
    assert res.json is not None and res.json["copies"] == 9


def test_in_port_output(pcap_switch: Switch) -> None:
    """IN_PORT sends a frame back; a plain output to the ingress port is dropped.

    Steps:
        1. udp,tp_dst=1: IN_PORT.  udp,tp_dst=2: output:1 (the ingress port).
           udp,tp_dst=3: output:9 (no such port).
        2. Send one frame of each on port 1.
    Verify:
        Port 1 gets the IN_PORT frame back; the others are dropped as
        in-port-loop and bad-port.
    """
    f1, f2, f3 = (udp(dport=d) for d in (1, 2, 3))
    res = pcap_switch(
        2,
        {1: [f1, f2, f3]},
        [
            "udp,tp_dst=1 actions=IN_PORT",
            "udp,tp_dst=2 actions=output:1",
            "udp,tp_dst=3 actions=output:9",
        ],
    )
    assert raw_list(res.out[1]) == [bytes(f1)]
    assert res.out[2] == []
    assert_drops(res, {"in-port-loop": 1, "bad-port": 1})


def test_write_actions_order(pcap_switch: Switch) -> None:
    """write_actions builds an action set executed at the end in spec order.

    Steps:
        1. Table 0: in_port=1: write_actions(output:2, mod_vlan_vid:5, dec_ttl,
           push_vlan:0x8100), goto_table:1.
        2. Table 1: udp,tp_dst=1: write_metadata only (keeps the set);
           udp,tp_dst=2: write_actions(output:3) (replaces the output);
           udp,tp_dst=3: clear_actions; udp,tp_dst=4: output:4 applied now.
        3. Send one frame per tp_dst, TTL 10.
    Verify:
        tp_dst=1 leaves on 2, tagged VID 5 (push before set_field), TTL 9;
        tp_dst=2 the same on port 3 only; tp_dst=3 is dropped as no-output;
        tp_dst=4 leaves on 4 unchanged (apply) and on 2 tagged (action set).
    """
    f = [udp(dport=d, ttl=10) for d in (1, 2, 3, 4)]
    res = pcap_switch(
        4,
        {1: f},
        [
            "table=0,in_port=1 actions=write_actions(output:2,mod_vlan_vid:5,dec_ttl,"
            "push_vlan:0x8100),goto_table:1",
            "table=1,udp,tp_dst=1 actions=write_metadata:0x1",
            "table=1,udp,tp_dst=2 actions=write_actions(output:3)",
            "table=1,udp,tp_dst=3 actions=clear_actions",
            "table=1,udp,tp_dst=4 actions=output:4",
        ],
    )

    def tagged(p: Packet) -> bytes:
        ip = p[IP].copy()
        ip.ttl -= 1
        del ip.chksum
        return bytes(Ether(src=SRC_MAC, dst=MAC2) / Dot1Q(vlan=5) / ip)

    assert raw_list(res.out[2]) == [tagged(f[0]), tagged(f[3])]
    assert raw_list(res.out[3]) == [tagged(f[1])]
    assert raw_list(res.out[4]) == [bytes(f[3])]
    assert_drops(res, {"no-output": 1})
    assert res.json is not None and res.json["copies"] == 1


def test_table_miss_drop(pcap_switch: Switch) -> None:
    """Frames matching no entry are dropped and counted as table-miss.

    Steps:
        1. One flow: udp,tp_dst=53 -> output:2.
        2. Send 3 frames to port 53 and 5 to port 54.
    Verify:
        3 leave on port 2; table-miss counts 5; table 0 lookups 8, matched 3.
    """
    hit = [udp(dport=53, sport=i + 1) for i in range(3)]
    miss = [udp(dport=54, sport=i + 1) for i in range(5)]
    res = pcap_switch(2, {1: hit + miss}, ["udp,tp_dst=53 actions=output:2"])
    assert raw_list(res.out[2]) == raw_list(hit)
    assert_drops(res, {"table-miss": 5})
    assert (res.table(0)["lookups"], res.table(0)["matched"]) == (8, 3)


# --------------------------------------------------------------------------
# Protocol-oblivious raw fields
# --------------------------------------------------------------------------


def test_raw_l4_match_and_set(pcap_switch: Switch) -> None:
    """raw(l4,...) matches and rewrites bytes of an unknown IP protocol.

    Steps:
        1. Table 0 (mask): ip,nw_proto=253,raw(l4,0,16)=0x1234 ->
           set_field:0xbeef->raw(l4,16,16), output:2.
        2. Send IPv4 proto-253 frames whose payload starts 12 34 00 00 and
           56 78 00 00.
    Verify:
        The first leaves on port 2 with payload 12 34 be ef ..., IPv4 header
        unchanged; the second is a table miss.
    """
    body = b"\x12\x34\x00\x00" + b"payload-raw"
    hit = Ether(bytes(Ether(src=SRC_MAC, dst=MAC2) / IP(dst="10.0.0.2", proto=253) / Raw(body)))
    miss_body = b"\x56\x78" + body[2:]
    miss = Ether(
        bytes(Ether(src=SRC_MAC, dst=MAC2) / IP(dst="10.0.0.2", proto=253) / Raw(miss_body))
    )
    res = pcap_switch(
        2,
        {1: [hit, miss]},
        [
            "table=0,kind=mask",
            "table=0,ip,nw_proto=253,raw(l4,0,16)=0x1234 "
            "actions=set_field:0xbeef->raw(l4,16,16),output:2",
        ],
    )
    assert len(res.out[2]) == 1, res.output
    g = bytes(res.out[2][0])
    exp = bytes(hit)[:34] + b"\x12\x34\xbe\xef" + body[4:]
    assert g == exp
    assert_drops(res, {"table-miss": 1})


def test_raw_l3_ethertype_88dc(pcap_switch: Switch) -> None:
    """A WSMP-like EtherType 0x88dc frame matched on a raw L3 field.

    Steps:
        1. dl_type=0x88dc,raw(l3,0,8)=0x03 -> output:2;
           dl_type=0x88dc,raw(l3,8,16)=0xabcd/0xff00 -> output:3 (lower prio).
        2. Send 0x88dc frames with L3 bytes 03 .., 02 ab 12 .., 02 ac ...
    Verify:
        The version-3 frame leaves on 2, the 0xab.. frame on 3, the third
        misses; frames are unchanged.
    """

    def wsm(l3: bytes) -> Packet:
        return Ether(bytes(Ether(src=SRC_MAC, dst="ff:ff:ff:ff:ff:ff", type=0x88DC) / Raw(l3)))

    a = wsm(b"\x03\x80\x20" + b"wsm-body" * 4)
    b = wsm(b"\x02\xab\x12" + b"wsm-body" * 4)
    c = wsm(b"\x02\xac\x12" + b"wsm-body" * 4)
    res = pcap_switch(
        3,
        {1: [a, b, c]},
        [
            "table=0,kind=mask",
            "table=0,priority=20,dl_type=0x88dc,raw(l3,0,8)=0x03 actions=output:2",
            "table=0,priority=10,dl_type=0x88dc,raw(l3,8,16)=0xabcd/0xff00 actions=output:3",
        ],
    )
    assert raw_list(res.out[2]) == [bytes(a)]
    assert raw_list(res.out[3]) == [bytes(b)]
    assert_drops(res, {"table-miss": 1})
