"""Forwarding semantics where Sluice once differed from Open vSwitch (issue #24).

Each test pins one rule of OpenFlow 1.3 that an independent oracle (Open
vSwitch, tests/test_ovs_oracle.py) showed Sluice getting wrong:

- a group bucket works on its own clone of the packet (OF 1.3.5 section 5.6.1);
- an unbuffered packet-in carries the entire packet (section 7.4.1);
- the SCTP checksum covers the SCTP packet, never the Ethernet padding;
- an IP header whose lengths do not fit the frame is not IP (docs/openflow.md
  "Packets that lie"), and the frame is never read or written past its end.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from scapy.all import (  # type: ignore[import-untyped]
    IP,
    SCTP,
    TCP,
    UDP,
    Dot1Q,
    Ether,
    IPv6,
    Raw,
)
from scapy.layers.sctp import crc32c  # type: ignore[import-untyped]

from sluice import ofp, testing
from sluice.testing import RunResult, Sluice, SluiceConfig, assert_balanced

Switch = Callable[..., RunResult]

SRC = "02:00:00:00:00:aa"
DST = "02:00:00:00:00:02"


def tcp_frame(dport: int = 80) -> bytes:
    return bytes(Ether(src=SRC, dst=DST) / IP(src="10.0.0.1", dst="10.0.0.2")
                 / TCP(sport=40000, dport=dport, flags="S") / Raw(b"sluice-semantics"))


def udp_frame(tos: int = 0, payload: bytes = b"sluice-semantics-udp") -> bytes:
    return bytes(Ether(src=SRC, dst=DST) / IP(src="10.0.0.1", dst="10.0.0.2", tos=tos)
                 / UDP(sport=1024, dport=5001) / Raw(payload))


def checksums_ok(frame: bytes) -> bool:
    """The IPv4 header and TCP/UDP checksums are what scapy computes afresh."""
    pkt = Ether(frame)
    fresh = pkt.copy()
    del fresh[IP].chksum
    layer = TCP if TCP in fresh else UDP
    del fresh[layer].chksum
    fresh = Ether(bytes(fresh))
    return bool(fresh[IP].chksum == pkt[IP].chksum and fresh[layer].chksum == pkt[layer].chksum)


def _is_packet_in(m: ofp.Msg) -> bool:
    return m.type == ofp.OFPT_PACKET_IN


def drops(res: RunResult) -> dict[str, int]:
    assert_balanced(res)
    return res.drops()


# --------------------------------------------------------------------------
# Group buckets work on clones
# --------------------------------------------------------------------------


def test_indirect_bucket_changes_do_not_reach_the_action_set(pcap_switch: Switch) -> None:
    """The issue's case: table 0 writes output:2, table 1 applies an indirect group
    that rewrites tcp_dst and eth_dst and outputs to 3.

    Verify: port 3 gets the rewritten frame (valid checksums), port 2 the frame as
    it entered, byte for byte.
    """
    frame = tcp_frame()
    res = pcap_switch(3, {1: [frame]}, [
        "group_id=10,type=indirect,bucket=set_field:8443->tcp_dst,"
        "set_field:00:00:00:00:00:10->eth_dst,output:3",
        "table=0,tcp actions=write_actions(output:2),goto_table:1",
        "table=1,tcp actions=group:10",
    ])
    assert [bytes(p) for p in res.out[2]] == [frame]
    (out3,) = [bytes(p) for p in res.out[3]]
    assert Ether(out3)[TCP].dport == 8443 and Ether(out3).dst == "00:00:00:00:00:10"
    assert checksums_ok(out3)
    assert drops(res) == {}


def test_all_group_vlan_push_does_not_reach_the_action_set(pcap_switch: Switch) -> None:
    """An all group whose first bucket pushes a VLAN tag, applied before the action
    set's output:2.

    Verify: port 3 gets the tagged frame, port 4 and port 2 the untagged one.
    """
    frame = udp_frame()
    res = pcap_switch(4, {1: [frame]}, [
        "group_id=11,type=all,bucket=push_vlan:0x8100,set_field:4101->vlan_vid,output:3,"
        "bucket=output:4",
        "udp actions=group:11,write_actions(output:2)",
    ])
    assert [bytes(p) for p in res.out[2]] == [frame]
    assert [bytes(p) for p in res.out[4]] == [frame]
    (out3,) = res.out[3]
    assert Dot1Q in out3 and out3[Dot1Q].vlan == 5
    assert drops(res) == {}


def test_apply_actions_after_a_group_see_the_packet_unchanged(pcap_switch: Switch) -> None:
    """apply group (rewrite nw_dst, output:3) then output:2 in the same list.

    Verify: port 2 gets the frame unchanged; port 3 the rewritten one.
    """
    frame = udp_frame()
    res = pcap_switch(3, {1: [frame]}, [
        "group_id=12,type=indirect,bucket=set_field:10.9.9.9->nw_dst,output:3",
        "udp actions=group:12,output:2",
    ])
    assert [bytes(p) for p in res.out[2]] == [frame]
    (out3,) = [bytes(p) for p in res.out[3]]
    assert Ether(out3)[IP].dst == "10.9.9.9" and checksums_ok(out3)


def test_group_last_in_the_pipeline_changes_the_packet_itself(pcap_switch: Switch) -> None:
    """When nothing follows the group, its bucket may change the packet in place:
    no copy is made (the common case stays zero-copy).

    Verify: port 3 gets the rewritten frame and the run made no copies.
    """
    frame = udp_frame()
    res = pcap_switch(3, {1: [frame]}, [
        "group_id=12,type=indirect,bucket=set_field:10.9.9.9->nw_dst,output:3",
        "udp actions=group:12",
    ])
    (out3,) = [bytes(p) for p in res.out[3]]
    assert Ether(out3)[IP].dst == "10.9.9.9" and checksums_ok(out3)
    assert res.out[2] == []
    assert res.json is not None and res.json["copies"] == 0
    assert drops(res) == {}


def test_bucket_dec_ttl_drops_only_its_clone(pcap_switch: Switch) -> None:
    """A bucket whose dec_ttl expires drops its clone; the packet's own output
    (the action set) still happens.
    """
    frame = bytes(Ether(src=SRC, dst=DST) / IP(src="10.0.0.1", dst="10.0.0.2", ttl=1)
                  / UDP(sport=1, dport=2) / Raw(b"x" * 20))
    res = pcap_switch(3, {1: [frame]}, [
        "group_id=13,type=indirect,bucket=dec_ttl,output:3",
        "udp actions=group:13,write_actions(output:2)",
    ])
    assert [bytes(p) for p in res.out[2]] == [frame]
    assert res.out[3] == []
    assert drops(res) == {"ttl-expired": 1}


def test_bucket_actions_are_an_action_set(pcap_switch: Switch) -> None:
    """A bucket's actions are applied as an action set (OF 1.3.5 section 5.6, as Open
    vSwitch does): set_field runs before output whatever the order written, and a
    second output replaces the first.

    Verify: "output:3,mod_nw_dst:10.9.9.9,output:2" sends the rewritten frame to
    port 2 only.
    """
    frame = udp_frame()
    res = pcap_switch(3, {1: [frame]}, [
        "group_id=14,type=all,bucket=output:3,mod_nw_dst:10.9.9.9,output:2",
        "udp actions=group:14",
    ])
    assert res.out[3] == []
    (out2,) = [bytes(p) for p in res.out[2]]
    assert Ether(out2)[IP].dst == "10.9.9.9" and checksums_ok(out2)
    assert drops(res) == {}


# --------------------------------------------------------------------------
# SCTP checksum over the datagram
# --------------------------------------------------------------------------


def test_sctp_checksum_excludes_ethernet_padding(pcap_switch: Switch) -> None:
    """An SCTP packet padded to 60 bytes; set_field on sctp_dst.

    Verify: the CRC32c in the output is computed over the SCTP packet as the IP
    total length delimits it, and the padding is untouched.
    """
    ip = IP(src="10.0.0.1", dst="10.0.0.2") / SCTP(sport=1, dport=2)
    frame = bytes(Ether(src=SRC, dst=DST) / ip)
    assert len(frame) < 60
    padded = frame + b"\xee" * (60 - len(frame))
    res = pcap_switch(2, {1: [padded]}, ["sctp actions=set_field:80->sctp_dst,output:2"])
    (out,) = [bytes(p) for p in res.out[2]]
    tot = struct.unpack_from("!H", out, 16)[0]
    sctp = bytearray(out[34:14 + tot])
    assert struct.unpack_from("!H", sctp, 2)[0] == 80
    stored = struct.unpack_from("!I", sctp, 8)[0]  # scapy's crc32c is in wire order
    sctp[8:12] = b"\0\0\0\0"
    assert stored == crc32c(bytes(sctp))
    assert out[14 + tot:] == b"\xee" * (60 - 14 - tot)


# --------------------------------------------------------------------------
# IP headers that lie about their length
# --------------------------------------------------------------------------


def lying_frames() -> dict[str, bytes]:
    """IPv4/IPv6 frames with DSCP 46 whose header lengths do not fit the frame."""
    good = udp_frame(tos=46 << 2)
    longer = bytearray(good)
    struct.pack_into("!H", longer, 16, len(good) - 14 + 40)  # total length past the frame
    shorter = bytearray(good)
    struct.pack_into("!H", shorter, 16, 12)  # below the header's 20 bytes
    short_ihl = bytearray(good)
    short_ihl[14] = 0x44  # IHL 16 bytes
    v6 = bytearray(bytes(Ether(src=SRC, dst=DST) / IPv6(src="2001:db8::1", dst="2001:db8::2",
                                                         tc=46 << 2) / UDP() / Raw(b"v6")))
    struct.pack_into("!H", v6, 18, 200)  # payload length past the frame
    return {"total-length-long": bytes(longer), "total-length-short": bytes(shorter),
            "ihl-short": bytes(short_ihl), "ipv6-payload-long": bytes(v6)}


def test_ip_header_lies_make_a_packet_not_ip(pcap_switch: Switch) -> None:
    """Rules on IP fields do not match a frame whose IP lengths lie; its Ethertype
    still matches, and nothing rewrites it.

    Steps: priority 300 "ip,ip_dscp=46 -> 3" and "ipv6,ip_dscp=46 -> 3";
    priority 200 "ip,nw_src=0.0.0.0 -> set nw_dst, 2" (a lying header reads
    nw_src 0); priority 100 "ip -> 2", "ipv6 -> 2".
    Verify: the truthful frame goes to 3; every lying frame leaves port 2
    byte for byte as it came.
    """
    lies = lying_frames()
    good = udp_frame(tos=46 << 2)
    res = pcap_switch(3, {1: [good, *lies.values()]}, [
        "priority=300,ip,ip_dscp=46 actions=output:3",
        "priority=300,ipv6,ip_dscp=46 actions=output:3",
        "priority=200,ip,nw_src=0.0.0.0 actions=set_field:10.9.9.9->nw_dst,output:2",
        "priority=100,ip actions=output:2",
        "priority=100,ipv6 actions=output:2",
    ])
    assert [bytes(p) for p in res.out[3]] == [good]
    assert sorted(bytes(p) for p in res.out[2]) == sorted(lies.values())
    assert drops(res) == {}


def test_dec_ttl_on_a_lying_header_drops(pcap_switch: Switch) -> None:
    """dec_ttl on a lying IPv4 header: there is no TTL to decrement (it reads as 0), so
    the packet is dropped (as Open vSwitch does), counted as bad-action, never
    decremented in place.
    """
    lies = lying_frames()
    res = pcap_switch(2, {1: [lies["total-length-long"], udp_frame()]},
                      ["ip actions=dec_ttl,output:2"])
    (out,) = res.out[2]
    assert out[IP].ttl == 63
    assert drops(res) == {"bad-action": 1}


def test_ethernet_padding_is_not_l4(pcap_switch: Switch) -> None:
    """A UDP datagram shorter than its frame: the rewrite fixes the checksum over the
    datagram only and leaves the padding alone.
    """
    frame = udp_frame(payload=b"ab")
    padded = frame + b"\x55" * (64 - len(frame))
    res = pcap_switch(2, {1: [padded]}, ["udp actions=set_field:53->udp_dst,output:2"])
    (out,) = [bytes(p) for p in res.out[2]]
    assert out[len(frame):] == padded[len(frame):]
    assert Ether(out[:len(frame)])[UDP].dport == 53 and checksums_ok(out[:len(frame)])


# --------------------------------------------------------------------------
# Packet-in: the entire packet when unbuffered
# --------------------------------------------------------------------------


def test_unbuffered_packet_in_carries_the_whole_packet(sluice_bin: Path) -> None:
    """output:CONTROLLER with max_len 64 on a 100-byte and a 1,500-byte frame:
    Sluice buffers nothing, so each packet-in has buffer_id NO_BUFFER and the
    entire frame (OF 1.3.5 section 7.4.1).
    """
    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    port = testing.free_tcp_port()
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                             controllers=(f"ptcp:{port}:127.0.0.1",)), binary=sluice_bin)
    try:
        (target,) = sw.wait_listening()
        with ofp.Client.connect(target) as c:
            c.send(ofp.flow_mod(actions=[ofp.action_output(ofp.OFPP_CONTROLLER, 64)],
                                priority=1))
            c.barrier()
            frames = [udp_frame(payload=b"p" * (100 - 42)), udp_frame(payload=b"q" * 1458)]
            for fr in frames:
                c.send(ofp.packet_out(fr, [ofp.action_output(ofp.OFPP_TABLE)], in_port=1))
            got = [ofp.parse_packet_in(c.wait_for(_is_packet_in, 10)) for _ in frames]
            for (buffer_id, total_len, _reason, _table, data), fr in zip(got, frames):
                assert buffer_id == ofp.OFP_NO_BUFFER
                assert total_len == len(fr) and data == fr
        assert sw.alive(), sw.output
    finally:
        sw.stop()


def test_packet_in_from_the_action_set_is_the_writers(sluice_bin: Path) -> None:
    """An output to the controller written to the action set by an ordinary entry and
    run at the end of a later table's table-miss entry: reason ACTION (not NO_MATCH),
    with the writing entry's table and cookie (what Open vSwitch reports too)."""
    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    port = testing.free_tcp_port()
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                             controllers=(f"ptcp:{port}:127.0.0.1",)), binary=sluice_bin)
    try:
        (target,) = sw.wait_listening()
        with ofp.Client.connect(target) as c:
            c.send(ofp.flow_mod(instructions=[
                ofp.inst_actions([ofp.action_output(ofp.OFPP_CONTROLLER)],
                                 kind=ofp.OFPIT_WRITE_ACTIONS),
                ofp.inst_goto_table(1)], priority=5, cookie=0x11))
            c.send(ofp.flow_mod(actions=[ofp.action_output(2)], table_id=1, priority=0,
                                cookie=0x22))
            c.barrier()
            c.send(ofp.packet_out(udp_frame(), [ofp.action_output(ofp.OFPP_TABLE)], in_port=1))
            got = c.wait_for(_is_packet_in, 10)
            _buf, _total, reason, table_id, _data = ofp.parse_packet_in(got)
            cookie = struct.unpack_from("!Q", got.body, 8)[0]
            assert (reason, table_id, cookie) == (1, 0, 0x11)  # OFPR_ACTION, table 0
    finally:
        sw.stop()
