"""Forwarding modes in the datapath, with pcap ports: each engine's decisions, the hops byte,
drops by named reason, and the counters' balance (no packet unaccounted for)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from scapy.all import IP, UDP, Ether, Raw  # type: ignore[import-untyped]

from sluice.testing import (
    RunResult,
    assert_balanced,
    read_pcap,
    run_sluice_raw,
    unique_prefix,
    write_pcap,
)


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


def test_engines_with_two_workers(sluice_bin: Path, tmp_path: Path) -> None:
    """Steps: 600 hypercube frames (to addresses 1, 2, 4, 8 in turn) into port 1 of a switch
    with two workers fed by an I/O core (--workers 2 --dispatch io, lcores mapped onto the two
    CPUs), hypercube enabled (own address 0, neighbours 1@2 2@3 4@4).
    Verify: 150 frames leave each of ports 2, 3, 4 with the hops byte spent; 150 are dropped
    as fwd-no-route (address 8) although each worker has its own forwarding context; the
    counters balance."""
    prefix = unique_prefix("fw")
    rx = tmp_path / "in.pcap"
    # 16 source addresses: the I/O core spreads the flows over both workers.
    write_pcap(rx, [Ether(dst=enc(1 << (i % 4), 0xF1, 9), src="02:00:00:00:00:01")
                    / IP(src=f"10.1.0.{i % 16}", dst="10.0.0.2") / UDP() / Raw(b"x" * 20)
                    for i in range(600)])
    outs = {n: [tmp_path / f"out{n}-q{q}.pcap" for q in range(2)] for n in (1, 2, 3, 4)}
    args: list[str] = []
    for n in (1, 2, 3, 4):
        dev = f"net_pcap{n - 1}" + (f",rx_pcap={rx}" if n == 1 else "")
        args += ["-p", dev + "".join(f",tx_pcap={o}" for o in outs[n])]
    js_path = tmp_path / "r.json"
    args += ["--workers", "2", "--dispatch", "io", "--fwd-mode",
             "hypercube:addr=0,nbr=1@2,nbr=2@3,nbr=4@4", "-d", "2", "-s", "0", "-q",
             "-j", str(js_path), "--", "--no-huge", "-m", "512", "--no-pci",
             f"--file-prefix={prefix}", "--lcores", "0@0,1@1,2@1,3@0",
             "--log-level=lib.eal:error"]
    rc, out = run_sluice_raw(sluice_bin, args, timeout=60, prefix=prefix)
    assert rc == 0, out
    js = json.loads(js_path.read_text())
    assert js["rx"] + js["copies"] == js["tx"] + js["tx_drops"] + js["pipeline_drops"], js
    assert {k: v for k, v in js["drops"].items() if v} == {"fwd-no-route": 150}, js["drops"]
    assert sum(1 for w in js["workers"] if w["packets"] > 0) == 2, js["workers"]
    for n, addr in ((2, 1), (3, 2), (4, 4)):
        got = [f.dst for o in outs[n] if o.exists() for f in read_pcap(o)]
        assert got == [enc(addr, 0xF1, 8)] * 150, (n, got[:3], len(got))
