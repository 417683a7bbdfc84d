"""OpenFlow 1.3 conformance gaps found by conformance suites (issue #20).

Whether an undeclared (mask) table accepts a flow must not depend on flows that no
longer exist: its key layout is the union of the fields its flows use, and that union
is rebuilt from the live flows when the kept one would be too wide.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sluice import testing
from sluice.testing import Sluice, SluiceConfig

REPO = Path(__file__).resolve().parent.parent
SLUICECTL = REPO / "build" / "app" / "sluicectl"

WIDE_V4 = ("table=0,priority=10,tcp,in_port=1,dl_src=00:00:00:00:00:01,dl_dst=00:00:00:00:00:02,"
           "nw_src=10.0.0.1,nw_dst=10.0.0.2,ip_dscp=0,tcp_src=1,tcp_dst=2,dl_vlan=5 "
           "actions=output:2")
WIDE_V6 = ("priority=20,ipv6,ipv6_src=::1,ipv6_dst=::2,tcp6,tcp_src=1,tcp_dst=2,"
           "dl_src=00:00:00:00:00:01,dl_dst=00:00:00:00:00:02,ipv6_label=5 actions=output:2")


def test_deleted_flows_do_not_narrow_an_undeclared_table(sluice_bin: Path, tmp_path: Path) -> None:
    """The issue's repro: a wide IPv4 flow added to table 0 and deleted; a wide IPv6
    flow was then refused in the empty table 0 (BAD_FIELD, "the union of match fields
    exceeds a 64-byte key") while table 1 took it."""
    if not SLUICECTL.exists():
        pytest.skip("no sluicectl built")
    mgmt = tmp_path / "sw.mgmt"
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"], mgmt=str(mgmt)),
                binary=sluice_bin, workdir=str(tmp_path))

    def ctl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(SLUICECTL), "-t", f"unix:{mgmt}", *args], capture_output=True,
                              text=True, timeout=30)

    try:
        sw.wait_output("datapath id", 30)
        testing.wait_until(mgmt.exists, 10, "the management socket")
        assert ctl("add-flow", WIDE_V4).returncode == 0
        assert ctl("del-flows", "table=0").returncode == 0
        r = ctl("add-flow", f"table=0,{WIDE_V6}")
        assert r.returncode == 0, r.stderr
        assert "ipv6_label=0x5" in ctl("dump-flows", "table=0").stdout
        # Both together: a 192-byte key holds every field at once, so table 0 takes it too.
        r = ctl("add-flow", WIDE_V4)
        assert r.returncode == 0, r.stderr
        dump = ctl("dump-flows", "table=0").stdout
        assert "ipv6_label=0x5" in dump and "nw_src=10.0.0.1" in dump
    finally:
        sw.stop()


#: A neighbour solicitation matched on everything it has: 109 key bytes, past the 64 that
#: tables held before keys grew to SL_KEY_MAX = 192 (a valid OpenFlow 1.3 match).
WIDE_ND = ("table=0,priority=30,in_port=1,metadata=0,tun_id=0,icmp6,icmpv6_type=135,icmpv6_code=0,"
           "ipv6_src=fe80::1,ipv6_dst=ff02::1:ff00:2,ipv6_label=0,nd_target=fe80::2,"
           "nd_sll=02:00:00:00:00:01,dl_src=02:00:00:00:00:01,dl_dst=33:33:ff:00:00:02,"
           "ip_dscp=0,nw_ecn=0 actions=output:2")


def test_match_wider_than_64_bytes_forwards(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """A single valid match whose key is wider than 64 bytes is accepted by an undeclared
    table and matches exactly: the solicitation it names goes to port 2, one differing only
    in the source link-layer address (the key's last bytes) takes the fallback."""
    from scapy.all import (  # type: ignore[import-untyped]
        Ether,
        ICMPv6ND_NS,
        ICMPv6NDOptSrcLLAddr,
        IPv6,
    )

    from sluice.testing import assert_balanced

    def ns(sll: str) -> bytes:
        return bytes(Ether(src="02:00:00:00:00:01", dst="33:33:ff:00:00:02")
                     / IPv6(src="fe80::1", dst="ff02::1:ff00:2")
                     / ICMPv6ND_NS(tgt="fe80::2") / ICMPv6NDOptSrcLLAddr(lladdr=sll))

    a, b = ns("02:00:00:00:00:01"), ns("02:00:00:00:00:09")
    res = pcap_switch(3, {1: [a, b]}, [WIDE_ND, "table=0,priority=1 actions=output:3"])
    assert [bytes(p) for p in res.out[2]] == [a]
    assert [bytes(p) for p in res.out[3]] == [b]
    assert_balanced(res)


def test_tunnel_id_match_and_set(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """TUNNEL_ID (OXM 38) is a pipeline field: 0 on ingress (Sluice has no tunnel ports
    yet), set by set_field, matched by later tables, maskable."""
    from scapy.all import IP, UDP, Ether, Raw  # type: ignore[import-untyped]

    from sluice.testing import assert_balanced

    a = bytes(Ether(dst="02:00:00:00:00:02") / IP(dst="10.0.0.1") / UDP(dport=1) / Raw(b"x" * 20))
    b = bytes(Ether(dst="02:00:00:00:00:02") / IP(dst="10.0.0.2") / UDP(dport=2) / Raw(b"y" * 20))
    res = pcap_switch(4, {1: [a, b]}, [
        "table=0,priority=5,tun_id=0,udp,tp_dst=1 actions=set_field:0x1234->tun_id,goto_table:1",
        "table=0,priority=1 actions=goto_table:1",
        "table=1,priority=5,tunnel_id=0x1234/0xffff actions=output:2",
        "table=1,priority=1,tun_id=0 actions=output:3",
    ])
    assert [bytes(p) for p in res.out[2]] == [a]
    assert [bytes(p) for p in res.out[3]] == [b]
    assert_balanced(res)


def test_nd_sll_and_tll(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """IPV6_ND_SLL / IPV6_ND_TLL (OXM 32, 33): the link-layer address options of a
    neighbour solicitation and advertisement are matched and rewritten (the ICMPv6
    checksum follows); a message without the option does not match."""
    from scapy.all import (  # type: ignore[import-untyped]
        Ether,
        ICMPv6ND_NA,
        ICMPv6ND_NS,
        ICMPv6NDOptDstLLAddr,
        ICMPv6NDOptSrcLLAddr,
        IPv6,
    )

    from sluice.testing import assert_balanced

    def nd(msg: object) -> bytes:
        return bytes(Ether(src="02:00:00:00:00:aa", dst="33:33:00:00:00:01")
                     / IPv6(src="fe80::1", dst="ff02::1") / msg)

    ns = nd(ICMPv6ND_NS(tgt="fe80::2") / ICMPv6NDOptSrcLLAddr(lladdr="02:00:00:00:00:11"))
    ns_bare = nd(ICMPv6ND_NS(tgt="fe80::2"))
    na = nd(ICMPv6ND_NA(tgt="fe80::2") / ICMPv6NDOptDstLLAddr(lladdr="02:00:00:00:00:22"))
    res = pcap_switch(4, {1: [ns, ns_bare, na]}, [
        "priority=10,icmp6,icmpv6_type=135,nd_sll=02:00:00:00:00:11 actions=output:2",
        "priority=10,icmp6,icmpv6_type=136,nd_tll=02:00:00:00:00:22 "
        "actions=set_field:02:00:00:00:00:33->nd_tll,output:3",
        "priority=1 actions=output:4",
    ])
    assert [bytes(p) for p in res.out[2]] == [ns]
    assert [bytes(p) for p in res.out[4]] == [ns_bare]
    (out3,) = res.out[3]
    assert out3[ICMPv6NDOptDstLLAddr].lladdr == "02:00:00:00:00:33"
    fresh = out3.copy()
    del fresh[ICMPv6ND_NA].cksum
    assert Ether(bytes(fresh))[ICMPv6ND_NA].cksum == out3[ICMPv6ND_NA].cksum
    assert_balanced(res)


def test_ipv6_exthdr_pseudo_field(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """IPV6_EXTHDR (OXM 39): which extension headers a packet has, and whether they
    repeat (UNREP 0x80) or come out of order (UNSEQ 0x100); maskable."""
    from scapy.all import (  # type: ignore[import-untyped]
        UDP,
        Ether,
        IPv6,
        IPv6ExtHdrDestOpt,
        IPv6ExtHdrHopByHop,
        Raw,
    )

    from sluice.testing import assert_balanced

    def v6(*hdrs: object) -> bytes:
        pkt = Ether(src="02:00:00:00:00:aa", dst="02:00:00:00:00:02") / IPv6(src="::1", dst="::2")
        for h in hdrs:
            pkt = pkt / h
        return bytes(pkt / UDP(sport=1, dport=2) / Raw(b"z" * 8))

    plain = v6()
    hop_dest = v6(IPv6ExtHdrHopByHop(), IPv6ExtHdrDestOpt())   # HOP | DEST = 0x48
    out_of_order = v6(IPv6ExtHdrDestOpt(), IPv6ExtHdrHopByHop())  # hop-by-hop not first
    twice = v6(IPv6ExtHdrDestOpt(), IPv6ExtHdrDestOpt(), IPv6ExtHdrDestOpt())  # a third: repeated
    res = pcap_switch(5, {1: [plain, hop_dest, out_of_order, twice]}, [
        "priority=30,ipv6,ipv6_exthdr=0x100/0x100 actions=output:4",
        "priority=20,ipv6,ipv6_exthdr=0x80/0x80 actions=output:5",
        "priority=10,ipv6,ipv6_exthdr=0x48 actions=output:2",
        "priority=1,ipv6,ipv6_exthdr=0 actions=output:3",
    ])
    assert [bytes(p) for p in res.out[2]] == [hop_dest]
    assert [bytes(p) for p in res.out[3]] == [plain]
    assert [bytes(p) for p in res.out[4]] == [out_of_order]
    assert [bytes(p) for p in res.out[5]] == [twice]
    assert_balanced(res)


def test_tunnel_id_in_packet_in_match(sluice_bin: Path) -> None:
    """A packet-in's match carries the pipeline fields (OF 1.3.5 section 7.4.1): in_port,
    and metadata and tunnel_id when they are set."""
    from scapy.all import IP, UDP, Ether, Raw  # type: ignore[import-untyped]

    from sluice import ofp

    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    port = testing.free_tcp_port()
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                             controllers=(f"ptcp:{port}:127.0.0.1",),
                             flows=["actions=set_field:0x1234->tun_id,CONTROLLER"]),
                binary=sluice_bin)
    try:
        (target,) = sw.wait_listening()
        with ofp.Client.connect(target) as c:
            c.barrier()
            frame = bytes(Ether() / IP(dst="10.0.0.1") / UDP() / Raw(b"t" * 20))
            c.send(ofp.packet_out(frame, [ofp.action_output(ofp.OFPP_TABLE)], in_port=1))
            got = c.wait_for(lambda m: m.type == ofp.OFPT_PACKET_IN, 10)
            assert bytes.fromhex("80004c08 0000000000001234") in got.body, got.body.hex()
    finally:
        sw.stop()


def _mpls(label: int, tc: int, bos: int, ttl: int) -> bytes:
    return (label << 12 | tc << 9 | bos << 8 | ttl).to_bytes(4, "big")


def test_mpls_push_pop_ttl(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """push_mpls / pop_mpls / set_mpls_ttl / dec_mpls_ttl (OF 1.3 section 5.12, as Open
    vSwitch does them): a label goes after the VLAN tags with label 0, TC from the DSCP's low
    bits and the IP TTL; a second push copies the label below (BoS cleared); later tables
    match the new label; pop restores what was under it; dec_mpls_ttl on TTL 1 drops as
    ttl-expired."""
    from scapy.all import IP, UDP, Dot1Q, Ether, Raw

    from sluice.testing import assert_balanced

    ip = IP(src="10.0.0.1", dst="10.0.0.2", ttl=33, tos=0x14 << 2) / UDP(dport=9) / Raw(b"p" * 20)
    plain = bytes(Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01") / ip)
    tagged = bytes(Ether(dst="02:00:00:00:00:03", src="02:00:00:00:00:01") /
                   Dot1Q(vlan=7) / ip)
    # Labelled input: one label (16, TTL 1) over IPv4, for pop and dec.
    lab1 = (bytes(Ether(dst="02:00:00:00:00:04", src="02:00:00:00:00:01"))[:12] +
            b"\x88\x47" + _mpls(16, 0, 1, 1) + bytes(ip))
    lab2 = (bytes(Ether(dst="02:00:00:00:00:05", src="02:00:00:00:00:01"))[:12] +
            b"\x88\x47" + _mpls(16, 0, 1, 9) + bytes(ip))
    res = pcap_switch(5, {1: [plain, tagged, lab1, lab2]}, [
        # push on IPv4 (and on a VLAN-tagged frame), then match the label in table 1
        "table=0,priority=9,dl_dst=02:00:00:00:00:02 actions=push_mpls:0x8847,goto_table:1",
        "table=0,priority=9,dl_dst=02:00:00:00:00:03 actions=push_mpls:0x8847,push_mpls:0x8847,"
        "set_mpls_ttl:5,output:3",
        "table=0,priority=9,dl_dst=02:00:00:00:00:04 actions=dec_mpls_ttl,output:4",
        "table=0,priority=9,dl_dst=02:00:00:00:00:05 actions=dec_mpls_ttl,pop_mpls:0x0800,"
        "goto_table:1",
        "table=1,priority=9,mpls,mpls_label=0,mpls_tc=4,mpls_bos=1 actions=output:2",
        "table=1,priority=8,ip,nw_dst=10.0.0.2 actions=output:5",
    ])
    l0 = _mpls(0, 0x14 & 7, 1, 33)
    assert [bytes(p) for p in res.out[2]] == [plain[:12] + b"\x88\x47" + l0 + plain[14:]]
    # Two pushes over a VLAN tag: the labels sit after the tag; the outer one copies the
    # inner (BoS 0) and then gets TTL 5.
    want3 = (tagged[:16] + b"\x88\x47" + _mpls(0, 4, 0, 5) + l0 + tagged[18:])
    assert [bytes(p) for p in res.out[3]] == [want3]
    assert res.out[4] == [], "dec_mpls_ttl of TTL 1 drops"
    assert res.drops().get("ttl-expired") == 1, res.drops()
    assert [bytes(p) for p in res.out[5]] == [lab2[:12] + b"\x08\x00" + bytes(ip)]
    assert_balanced(res)


def test_mpls_action_set_order(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """In an action set push_mpls runs before push_vlan (section 5.10), whatever the written
    order, and set_mpls_ttl after dec_mpls_ttl."""
    from scapy.all import IP, UDP, Ether

    f = bytes(Ether(dst="02:00:00:00:00:02") / IP(ttl=20) / UDP())
    res = pcap_switch(2, {1: [f]}, [
        "priority=1 actions=write_actions(push_vlan:0x8100,set_mpls_ttl:7,dec_mpls_ttl,"
        "push_mpls:0x8847,output:2)",
    ])
    out = [bytes(p) for p in res.out[2]]
    assert len(out) == 1
    o = out[0]
    assert o[12:14] == b"\x81\x00" and o[16:18] == b"\x88\x47", o[:24].hex()
    assert o[18:22] == _mpls(0, 0, 1, 7), o[18:22].hex()


def test_invalid_ttl_packet_in(sluice_bin: Path) -> None:
    """An expired dec_mpls_ttl or dec_ttl is dropped (ttl-expired); once the controller's
    async configuration asks for OFPR_INVALID_TTL (OpenFlow 1.3's way: SET_ASYNC), a copy
    also comes up as a packet-in of reason INVALID_TTL (2) with the flow's table and cookie."""
    import struct

    from scapy.all import IP, UDP, Ether, Raw

    from sluice import ofp

    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    port = testing.free_tcp_port()
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                             controllers=(f"ptcp:{port}:127.0.0.1",),
                             flows=["cookie=0x77,priority=5,mpls actions=dec_mpls_ttl,output:2",
                                    "cookie=0x78,priority=4,ip actions=dec_ttl,output:2"]),
                binary=sluice_bin)
    mpls = (bytes(Ether(dst="02:00:00:00:00:02"))[:12] + b"\x88\x47" + _mpls(16, 0, 1, 1) +
            bytes(IP(dst="10.0.0.1") / UDP() / Raw(b"m" * 20)))
    ip = bytes(Ether(dst="02:00:00:00:00:02") / IP(dst="10.0.0.1", ttl=1) / UDP() /
               Raw(b"i" * 20))
    try:
        (target,) = sw.wait_listening()
        with ofp.Client.connect(target) as c:
            c.barrier()

            def inject(frame: bytes) -> None:
                c.send(ofp.packet_out(frame, [ofp.action_output(ofp.OFPP_TABLE)], in_port=1))

            inject(mpls)
            with pytest.raises(TimeoutError):
                c.wait_for(lambda m: m.type == ofp.OFPT_PACKET_IN, 1.0)
            # SET_ASYNC (type 28): packet-in masks (master, slave), port status, flow removed.
            pin_mask = (1 << 0) | (1 << 1) | (1 << 2)
            c.send(ofp.message(28, struct.pack("!IIIIII", pin_mask, 0, 7, 7, 15, 0)))
            c.barrier()
            for frame, cookie in ((mpls, 0x77), (ip, 0x78)):
                inject(frame)
                got = c.wait_for(lambda m: m.type == ofp.OFPT_PACKET_IN, 10)
                # ofp_packet_in: buffer_id(4) total_len(2) reason(1) table_id(1) cookie(8)
                reason, table_id, ck = struct.unpack_from("!BBQ", got.body, 6)
                assert (reason, table_id, ck) == (2, 0, cookie), got.body[:16].hex()
                assert got.body.endswith(frame), "the whole packet, before the decrement"
        assert sw.stop() == 0, sw.output
    finally:
        sw.stop()


def test_pbb_push_pop_isid(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """push_pbb / pop_pbb and PBB_ISID (OXM 37, maskable): push puts the frame behind a new
    header with the same MACs, type 0x88e7 and an I-TAG whose I-PCP is the VLAN PCP and
    I-SID 0; later tables match and set the I-SID; pop gives the customer frame back."""
    from scapy.all import IP, UDP, Dot1Q, Ether, Raw

    from sluice.testing import assert_balanced

    inner = bytes(Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01") /
                  Dot1Q(vlan=9, prio=5) / IP(dst="10.0.0.1") / UDP() / Raw(b"b" * 20))
    other = bytes(Ether(dst="02:00:00:00:00:03", src="02:00:00:00:00:01") /
                  IP(dst="10.0.0.2") / UDP() / Raw(b"c" * 20))
    itag = bytes([0, 0xab, 0xcd, 0xef])
    encap = (bytes.fromhex("0200000000b1" "0200000000b2") + b"\x88\xe7" + itag + other)
    res = pcap_switch(4, {1: [inner, encap]}, [
        "table=0,priority=9,dl_dst=02:00:00:00:00:02 actions=push_pbb:0x88e7,goto_table:1",
        "table=0,priority=9,dl_type=0x88e7,pbb_isid=0xabcd00/0xffff00 actions=pop_pbb,output:4",
        "table=1,priority=9,dl_type=0x88e7,pbb_isid=0 "
        "actions=set_field:0x123456->pbb_isid,goto_table:2",
        "table=2,priority=9,dl_type=0x88e7,pbb_isid=0x123456 actions=output:2",
    ])
    want = inner[:12] + b"\x88\xe7" + bytes([5 << 5, 0x12, 0x34, 0x56]) + inner
    assert [bytes(p) for p in res.out[2]] == [want]
    assert [bytes(p) for p in res.out[4]] == [other]
    assert_balanced(res)


def test_output_normal_learns(sluice_bin: Path, tmp_path: Path) -> None:
    """output:NORMAL is an L2 learning switch (per VLAN, every port a trunk): an unknown
    destination floods (not back to in_port), a learned one goes to its port only, a
    broadcast floods, a destination learned on the in_port is dropped (in-port-loop), and
    the same MAC on another VLAN is another address.  Packets come in by packet_out
    (in_port set, OFPP_TABLE) in order, each after a barrier."""
    from scapy.all import Dot1Q, Ether, Raw

    from sluice import ofp
    from sluice.testing import read_pcap

    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    outs = [tmp_path / f"out{i}.pcap" for i in (1, 2, 3)]
    port = testing.free_tcp_port()
    sw = Sluice(SluiceConfig(ports=[f"net_pcap{i},tx_pcap={o}" for i, o in enumerate(outs)],
                             controllers=(f"ptcp:{port}:127.0.0.1",),
                             flows=["priority=1 actions=NORMAL"]), binary=sluice_bin)
    a, b, c_ = "02:00:00:00:00:0a", "02:00:00:00:00:0b", "02:00:00:00:00:0c"

    def fr(dst: str, src: str, tag: bytes, vlan: int | None = None) -> bytes:
        e = Ether(dst=dst, src=src)
        if vlan is not None:
            e = e / Dot1Q(vlan=vlan)
        return bytes(e / Raw(tag * 46))

    sent = [
        (1, fr(b, a, b"1")),               # b unknown: flood to 2, 3; learn a@1
        (2, fr(a, b, b"2")),               # a known: to 1 only; learn b@2
        (1, fr(b, a, b"3")),               # b known: to 2 only
        (3, fr("ff:ff:ff:ff:ff:ff", c_, b"4")),  # broadcast: to 1, 2; learn c@3
        (3, fr(c_, a, b"5")),              # c learned on in_port 3: dropped; a moves to 3
        (2, fr(a, b, b"6")),               # a now on 3
        (2, fr(a, b, b"7", vlan=5)),       # VLAN 5 knows nobody: flood to 1, 3
    ]
    try:
        (target,) = sw.wait_listening()
        with ofp.Client.connect(target) as cl:
            cl.barrier()
            for in_port, frame in sent:
                cl.send(ofp.packet_out(frame, [ofp.action_output(ofp.OFPP_TABLE)],
                                       in_port=in_port))
                cl.barrier()
        # A barrier answers once the agent queued the packet_outs; the worker runs them after.
        def rows() -> list[tuple[str, ...]]:
            fdb = sw.sluicectl("fdb-show", check=True).stdout
            return sorted(tuple(ln.split()[:3]) for ln in fdb.splitlines()[1:])
        want = [("2", "0", b), ("2", "5", b), ("3", "0", a), ("3", "0", c_)]
        try:
            testing.wait_until(lambda: rows() == want, 10, "the learned addresses")
        except TimeoutError:
            assert rows() == want
    finally:
        assert sw.stop() == 0, sw.output
    got = {i + 1: [bytes(p)[14:15] if bytes(p)[12:14] != b"\x81\x00" else bytes(p)[18:19]
                   for p in read_pcap(o)] for i, o in enumerate(outs)}
    assert got == {1: [b"2", b"4", b"7"], 2: [b"1", b"3", b"4"], 3: [b"1", b"6", b"7"]}, got


def test_select_group_spreads_arp_and_ipv6_flow_labels(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """A select group hashed only Ethernet, IPv4 and L4 ports: ARP between many hosts and
    IPv6 flows that differ only in their flow label all went to one bucket. Now ARP's
    sender/target addresses and the IPv6 flow label are hashed too: 64 of each spread over
    both buckets (all on one bucket would be a 2^-63 event), and a flow keeps its bucket."""
    from scapy.all import ARP, UDP, Ether, IPv6  # type: ignore[import-untyped]

    arp = [bytes(Ether(src="02:00:00:00:00:01", dst="ff:ff:ff:ff:ff:ff")
                 / ARP(psrc=f"10.0.{i}.1", pdst="10.0.0.254")) for i in range(64)]
    v6 = [bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
                / IPv6(src="2001:db8::1", dst="2001:db8::2", fl=i + 1) / UDP(sport=5, dport=5))
          for i in range(64)]
    res = pcap_switch(3, {1: arp + v6 + arp[:8]}, [
        "group_id=1,type=select,bucket=weight:1,actions=output:2,bucket=weight:1,actions=output:3",
        "priority=1 actions=group:1",
    ])
    out2 = [bytes(p) for p in res.out[2]]
    out3 = [bytes(p) for p in res.out[3]]
    assert len(out2) + len(out3) == 64 + 64 + 8
    for kind in (arp, v6):
        n2 = sum(1 for f in kind if f in out2)
        assert 0 < n2 < len(kind), (n2, len(kind))
    # The repeated ARP frames took the bucket their first copy took.
    for f in arp[:8]:
        assert (f in out2) != (f in out3)


def test_bucket_weight_outside_a_select_group_is_refused(sluice_bin: Path, tmp_path: Path) -> None:
    """Open vSwitch refuses a weight in a group that is not select (OFPGMFC_INVALID_GROUP);
    Sluice took it and ignored it. Now the group_mod is refused with that error, and a
    select group keeps its weights."""
    if not SLUICECTL.exists():
        pytest.skip("no sluicectl built")
    mgmt = tmp_path / "sw.mgmt"
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"], mgmt=str(mgmt)),
                binary=sluice_bin, workdir=str(tmp_path))
    try:
        sw.wait_output("datapath id", 30)
        r = subprocess.run([str(SLUICECTL), "-t", f"unix:{mgmt}", "add-group",
                            "group_id=1,type=all,bucket=weight:5,actions=output:1"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 1 and "OFPGMFC_INVALID_GROUP" in r.stderr, (r.stdout, r.stderr)
        r = subprocess.run([str(SLUICECTL), "-t", f"unix:{mgmt}", "add-group",
                            "group_id=2,type=select,bucket=weight:5,actions=output:1"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
    finally:
        sw.stop()
    # A flow file says which bucket and weight.
    bad = tmp_path / "bad.flows"
    bad.write_text("group_id=1,type=indirect,bucket=weight:5,actions=output:1\n")
    r = subprocess.run([str(sluice_bin), "--check", "-f", str(bad)], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2 and "weight 5 in a group that is not select" in r.stderr, r.stderr
