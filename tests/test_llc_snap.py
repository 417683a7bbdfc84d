"""IEEE 802.3 frames through the real switch: LLC/SNAP carrying IPv4 matches and parses as
IPv4 (dl_type=0x0800, nw_src), any other 802.3 frame matches dl_type=0x05ff (Open vSwitch's
OFP_DL_TYPE_NOT_ETH_TYPE), and actions that rewrite such frames keep them whole.

One Sluice (ports 1-4: af_packet on veths, a ptcp OpenFlow listener) serves the module; the
frames are built with scapy's Dot3/LLC/SNAP layers and sent on port 1.  Which flow matched
is read from the flow counters (ovs-ofctl dump-flows, by cookie) and from the port the
frame left by.  The push_vlan case runs on pcap ports instead: the kernel takes the VLAN
tag out of what an AF_PACKET socket reads.
"""

from __future__ import annotations

import shutil
import struct
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from scapy.all import IP, LLC, SNAP, STP, UDP, Dot1Q, Dot3, Raw  # type: ignore[import-untyped]

from sluice import ofp, testing
from sluice.testing import RawPort, Sluice, SluiceConfig, Topology

SRC = "02:00:00:00:00:aa"
DST = "02:00:00:00:00:02"

#: cookie -> flow; every flow matches SRC so no stray kernel frame counts.
FLOWS = {
    0x1: "priority=30,in_port=1,dl_src={s},ip,nw_src=10.0.0.1 actions=output:2",
    0x2: "priority=20,in_port=1,dl_src={s},dl_type=0x05ff actions=output:3",
    0x3: "priority=10,in_port=1,dl_src={s} actions=output:4",
    0x5: "priority=30,in_port=1,dl_src={s},ip,nw_src=10.0.0.6 actions=push_mpls:0x8847,output:2",
}


@dataclass
class Env:
    sw: Sluice
    target: str
    ports: dict[int, RawPort]


@pytest.fixture(scope="module")
def env(sluice_bin) -> Iterator[Env]:  # type: ignore[no-untyped-def]
    """Sluice with four af_packet ports, the FLOWS and a ptcp listener."""
    if not testing.netns_usable():
        pytest.skip("needs root and iproute2 (veth pairs)")
    if shutil.which("ovs-ofctl") is None:
        pytest.skip("needs ovs-ofctl (openvswitch-common)")
    with Topology() as topo:
        veths = [topo.add_veth("sllc") for _ in range(4)]
        port = testing.free_tcp_port()
        flows = [f"cookie={c:#x},{f.format(s=SRC)}" for c, f in FLOWS.items()]
        sw = Sluice(SluiceConfig(ports=testing.af_packet_ports([a for a, _ in veths]),
                                 flows=flows, controllers=(f"ptcp:{port}:127.0.0.1",)),
                    binary=sluice_bin)
        raws: dict[int, RawPort] = {}
        try:
            (target,) = sw.wait_listening()
            for i, (_, b) in enumerate(veths, 1):
                raws[i] = RawPort(b)
            yield Env(sw, target, raws)
            assert sw.alive(), sw.output
        finally:
            for r in raws.values():
                r.close()
            sw.stop()


def snap_ip(src: str, payload: bytes, oui: int = 0) -> bytes:
    """802.3 + LLC/SNAP (RFC 1042 when @oui is 0) + IPv4/UDP from @src."""
    return bytes(Dot3(dst=DST, src=SRC) / LLC(dsap=0xAA, ssap=0xAA, ctrl=3)
                 / SNAP(OUI=oui, code=0x0800) / IP(src=src, dst="10.0.0.2", ttl=64)
                 / UDP(sport=1000, dport=2000) / Raw(payload))


def packets(target: str) -> dict[int, int]:
    """n_packets of each flow, by cookie."""
    out = testing.ofctl(target, "dump-flows")
    return {f.cookie: f.int("n_packets") for f in testing.parse_dump_flows(out)}


def send_and_collect(env: Env, frames: list[bytes], out_port: int, mark: bytes) -> list[bytes]:
    """Send @frames on port 1; the frames holding @mark that leave @out_port."""
    for p in env.ports.values():
        p.drain()
    env.ports[1].send(frames)
    return env.ports[out_port].recv_until(lambda got: len(got) >= len(frames), 5,
                                          keep=lambda f: mark in f)


def ip_checksums_ok(ip: IP) -> bool:
    """The IPv4 header and UDP checksums are what scapy recomputes."""
    again = IP(bytes(ip))
    del again.chksum
    del again[UDP].chksum
    again = IP(bytes(again))
    return again.chksum == ip.chksum and again[UDP].chksum == ip[UDP].chksum


def test_match_and_forward(env: Env) -> None:
    """Steps: send on port 1 three LLC/SNAP IPv4 frames from 10.0.0.1, one Ethernet II IPv4
    frame from 10.0.0.1, two spanning-tree frames (plain LLC), two SNAP frames with
    Cisco's OUI (00:00:0c) and one LLC/SNAP IPv4 frame from 10.0.0.9.
    Verify: the ip,nw_src=10.0.0.1 flow counts 4 and port 2 sends the four frames
    unchanged; the dl_type=0x05ff flow counts the 4 non-SNAP-Ethertype frames, sent
    unchanged on port 3; the catch-all counts only the 10.0.0.9 frame (port 4)."""
    before = packets(env.target)
    snap1 = [snap_ip("10.0.0.1", b"llc-snap-1-%d" % i) for i in range(3)]
    eth1 = bytes(testing.eth_frame(DST, SRC, b"", eth_type=0x0800, size=14)
                 + bytes(IP(src="10.0.0.1", dst="10.0.0.2") / UDP() / Raw(b"llc-snap-1-e")))
    stp = [bytes(Dot3(dst="01:80:c2:00:00:00", src=SRC) / LLC(dsap=0x42, ssap=0x42, ctrl=3)
                 / STP(rootid=i) / Raw(b"llc-snap-2-stp")) for i in range(2)]
    cisco = [snap_ip("10.0.0.1", b"llc-snap-2-cisco%d" % i, oui=0x00000C) for i in range(2)]
    other = snap_ip("10.0.0.9", b"llc-snap-3")

    got2 = send_and_collect(env, snap1 + [eth1], 2, b"llc-snap-1")
    assert sorted(got2) == sorted(snap1 + [eth1])
    got3 = send_and_collect(env, stp + cisco, 3, b"llc-snap-2")
    assert sorted(got3) == sorted(stp + cisco)
    got4 = send_and_collect(env, [other], 4, b"llc-snap-3")
    assert got4 == [other]

    after = packets(env.target)
    assert after[0x1] - before[0x1] == 4, after
    assert after[0x2] - before[0x2] == 4, after
    assert after[0x3] - before[0x3] == 1, after


def test_rewrite_keeps_snap(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """Steps: two pcap ports (the kernel would strip a VLAN tag from what an AF_PACKET
    socket reads); an LLC/SNAP IPv4/UDP frame from 10.0.0.5 hits mod_nw_src:10.9.9.9,
    dec_ttl, push_vlan, mod_vlan_vid:100, output:2.
    Verify: port 2 sends 802.1Q (VID 100) + the same 802.3 length and LLC/SNAP header +
    IPv4 from 10.9.9.9 with TTL 63, both checksums right, the payload unchanged."""
    frame = snap_ip("10.0.0.5", b"llc-snap-rewrite")
    flows = ["in_port=1,ip,nw_src=10.0.0.5 "
             "actions=mod_nw_src:10.9.9.9,dec_ttl,push_vlan:0x8100,mod_vlan_vid:100,output:2"]
    res = pcap_switch(2, {1: [frame]}, flows)
    (out,) = [bytes(p) for p in res.out[2]]
    assert out[:12] == frame[:12]
    assert out[12:14] == b"\x81\x00" and struct.unpack("!H", out[14:16])[0] & 0xFFF == 100
    assert out[16:26] == frame[12:22], "the 802.3 length and LLC/SNAP header move unchanged"
    ip = Dot1Q(out[14:])[IP]  # Dot1Q starts at the TCI: the TPID is read above
    assert (ip.src, ip.dst, ip.ttl) == ("10.9.9.9", "10.0.0.2", 63)
    assert ip_checksums_ok(ip)
    assert bytes(ip[UDP].payload) == b"llc-snap-rewrite"
    assert len(out) == len(frame) + 4


def test_push_mpls_behind_snap(env: Env) -> None:
    """Steps: an LLC/SNAP IPv4 frame from 10.0.0.6 hits push_mpls:0x8847, output:2.
    Verify: the label sits after the SNAP header, whose type is now 0x8847; the 802.3
    length grew by 4 (the label), so the frame is still well-formed 802.3; the label is
    bottom of stack with the IP TTL, and the IP packet after it is unchanged."""
    frame = snap_ip("10.0.0.6", b"llc-snap-mpls")
    (out,) = send_and_collect(env, [frame], 2, b"llc-snap-mpls")
    (old_len,) = struct.unpack("!H", frame[12:14])
    (new_len,) = struct.unpack("!H", out[12:14])
    assert new_len == old_len + 4 == len(out) - 14
    assert out[14:20] == b"\xaa\xaa\x03\x00\x00\x00" and out[20:22] == b"\x88\x47"
    (lse,) = struct.unpack("!I", out[22:26])
    assert lse >> 12 == 0 and lse & 0x100 and lse & 0xFF == 64
    assert out[26:] == frame[22:]


def test_packet_out_set_field(env: Env) -> None:
    """Steps: OFPT_PACKET_OUT of an LLC/SNAP IPv4/UDP frame with set_field ipv4_src
    10.7.7.7 and output:3.
    Verify: port 3 sends the frame with only the source address and the two checksums
    changed: the 802.3 length, LLC/SNAP header and payload are intact."""
    frame = snap_ip("10.0.0.1", b"llc-snap-pkt-out")
    for p in env.ports.values():
        p.drain()
    with ofp.Client.connect(env.target) as c:
        c.send(ofp.packet_out(frame, [ofp.action_set_field(ofp.oxm_ipv4_src("10.7.7.7")),
                                      ofp.action_output(3)]))
        c.barrier()
        assert c.errors_since() == []
    (out,) = env.ports[3].recv_until(lambda got: len(got) >= 1, 5,
                                     keep=lambda f: b"llc-snap-pkt-out" in f)
    assert len(out) == len(frame) and out[:22] == frame[:22]
    ip = Dot3(out)[IP]
    assert ip.src == "10.7.7.7" and ip_checksums_ok(ip)
    changed = [i for i in range(len(frame)) if out[i] != frame[i]]
    # IP checksum (22+10, 22+11), source address (22+12..15), UDP checksum (22+26, 22+27).
    assert set(changed) <= {32, 33, 34, 35, 36, 37, 48, 49}, changed


def test_mpls_round_trip_and_length_bound(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """Steps: two pcap ports; an LLC/SNAP IPv4 frame from 10.0.0.7 hits push_mpls:0x8847,
    pop_mpls:0x0800, output:2; one from 10.0.0.8 whose 802.3 length field says 0x5fe hits
    push_mpls:0x8847, output:2.
    Verify: the first leaves port 2 byte for byte as it came (the length went up by 4 and
    back); the second is dropped as bad-action (a length of 0x602 would read as an
    Ethertype), nothing else is dropped and nothing else leaves."""
    back = snap_ip("10.0.0.7", b"llc-snap-mpls-back")
    near = bytearray(snap_ip("10.0.0.8", b"llc-snap-mpls-near"))
    near[12:14] = b"\x05\xfe"
    flows = ["in_port=1,ip,nw_src=10.0.0.7 actions=push_mpls:0x8847,pop_mpls:0x0800,output:2",
             "in_port=1,ip,nw_src=10.0.0.8 actions=push_mpls:0x8847,output:2"]
    res = pcap_switch(2, {1: [back, bytes(near)]}, flows)
    assert [bytes(p) for p in res.out[2]] == [back]
    assert res.drops() == {"bad-action": 1}
