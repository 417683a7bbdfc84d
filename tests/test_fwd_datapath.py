"""Forwarding modes in the datapath, with pcap ports: each engine's decisions, the hops byte,
drops by named reason, and the counters' balance (no packet unaccounted for)."""

from __future__ import annotations

from collections.abc import Callable

from conftest import RunResult, assert_balanced
from scapy.all import IP, UDP, Ether, Raw  # type: ignore[import-untyped]


def enc(value: int, tag: int, hops: int) -> str:
    b = value.to_bytes(4, "big") + bytes([tag, hops])
    return ":".join(f"{x:02x}" for x in b)


def frame(dst: str) -> Ether:
    return Ether(dst=dst, src="02:00:00:00:00:01") / IP(dst="10.0.0.2") / UDP() / Raw(b"x" * 20)


def test_engines_in_the_datapath(pcap_switch: Callable[..., RunResult]) -> None:
    """Steps: a 4-port switch with hypercube (own address 0, neighbours 1@2 2@3 4@4) and
    keyflow (key 7) enabled, and one OpenFlow rule restoring the real MAC of locally delivered
    packets to port 4; port 1 receives: hypercube frames to 1, 3, 2, 4 (ports 2, 2, 3, 4), 8
    (no neighbour), 0 (local), 2 with hops 0; keyflow frames with route IDs 9 (port 2), 14
    (local), 13 (residue 6: no port), 8 (residue 1 = the ingress port); an untagged frame.
    Verify: each frame leaves where the engine says with its hops byte decremented; the local
    ones leave port 4 with the real MAC; drops are fwd-no-route 2, fwd-hop-limit 1, fwd-loop
    1, table-miss 1 (the untagged frame); the counters balance."""
    inputs = [
        (enc(1, 0xF1, 5), 2), (enc(3, 0xF1, 5), 2), (enc(2, 0xF1, 5), 3), (enc(4, 0xF1, 5), 4),
        (enc(8, 0xF1, 5), None), (enc(0, 0xF1, 5), 4), (enc(2, 0xF1, 0), None),
        (enc(9, 0xF2, 5), 2), (enc(14, 0xF2, 5), 4), (enc(13, 0xF2, 5), None),
        (enc(8, 0xF2, 5), None), ("02:00:00:00:00:99", None),
    ]
    res = pcap_switch(
        4, {1: [frame(d) for d, _ in inputs]},
        ["priority=10,dl_dst=00:00:00:00:f1:00/00:00:00:00:ff:00,"
         "actions=set_field:02:00:00:00:00:0b->dl_dst,output:4",
         "priority=10,dl_dst=00:00:00:00:f2:00/00:00:00:00:ff:00,"
         "actions=set_field:02:00:00:00:00:0c->dl_dst,output:4"],
        extra=["--fwd-mode", "hypercube:addr=0,nbr=1@2,nbr=2@3,nbr=4@4;keyflow:key=7"])
    assert_balanced(res)
    got = {p: [f.dst for f in res.out[p]] for p in (2, 3, 4)}
    assert got[2] == [enc(1, 0xF1, 4), enc(3, 0xF1, 4), enc(9, 0xF2, 4)], got
    assert got[3] == [enc(2, 0xF1, 4)], got
    assert got[4] == [enc(4, 0xF1, 4), "02:00:00:00:00:0b", "02:00:00:00:00:0c"], got
    assert res.drops() == {"fwd-no-route": 2, "fwd-hop-limit": 1, "fwd-loop": 1,
                           "table-miss": 1}, res.drops()
