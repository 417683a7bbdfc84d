"""sluice.oracle without switches: frames, tags, checksums, the generators, pcap tails,
packet-in decoding, mismatch classes and the allowlist machinery."""

from __future__ import annotations

import re
import struct
from pathlib import Path

from sluice import ofp
from sluice.oracle import frames as fr
from sluice.oracle.harness import (
    SENTINEL_FLOW,
    Case,
    Divergence,
    Outcome,
    PacketIn,
    PcapTail,
    classify,
    explained_by,
    parse_packet_in,
)
from sluice.oracle.rules import (
    KEY_BYTES,
    KEY_MAX,
    Packet,
    RuleSet,
    gen_packets,
    gen_ruleset,
    key_fields,
)


def _udp4(payload: bytes = b"x" * 20, bad_csum: bool = False) -> bytes:
    seg = fr.l4_header(fr.IPPROTO_UDP, 1000, 53, payload)
    pseudo = fr.ip4("10.0.0.1") + fr.ip4("10.0.0.2") + struct.pack("!BBH", 0, 17, len(seg))
    seg = fr.l4_with_csum(fr.IPPROTO_UDP, seg, pseudo)
    hdr = fr.ipv4_header("10.0.0.1", "10.0.0.2", fr.IPPROTO_UDP, len(seg), bad_csum=bad_csum)
    return fr.ethernet("02:00:00:00:00:02", "02:00:00:00:00:01", fr.ETH_IPV4, hdr + seg)


def test_tag_round_trip_and_damage() -> None:
    f = b"\x00" * 10 + fr.tag(123456) + b"\xd1\x5c\x0e" + b"\xff" * 5
    assert fr.find_tag(f) == 123456
    broken = bytearray(fr.tag(7))
    broken[5] ^= 1
    assert fr.find_tag(bytes(broken)) is None
    assert fr.find_tag(fr.tag(7)[:-1]) is None


def test_checksums_match_known_values() -> None:
    # RFC 1071 example words; CRC32c check value of "123456789" (RFC 3720 B.4).
    assert fr.inet_csum(bytes.fromhex("0001f203f4f5f6f7")) == 0x220D
    assert fr.crc32c(b"123456789") == 0xE3069283
    f = _udp4()
    assert fr.parse(f).ipv4_csum_ok and fr.l4_csum_ok(f) is True
    bad = bytearray(f)
    bad[-1] ^= 0xFF
    assert fr.l4_csum_ok(bytes(bad)) is False
    assert fr.fixed_l4(bytes(bad)) != bytes(bad) and fr.l4_csum_ok(fr.fixed_l4(bytes(bad)))
    wrong_ip = _udp4(bad_csum=True)
    assert not fr.parse(wrong_ip).ipv4_csum_ok and fr.parse(fr.fixed_ipv4(wrong_ip)).ipv4_csum_ok


def test_parse_tags_fragments_and_lengths() -> None:
    tags = fr.vlan_tag(fr.ETH_QINQ, 5, 3) + fr.vlan_tag(fr.ETH_VLAN, 7, 1)
    f = fr.ethernet("02:00:00:00:00:02", "02:00:00:00:00:01", fr.ETH_IPV4,
                    fr.ipv4_header("10.0.0.1", "10.0.0.2", 6, 40, frag=10) + bytes(40), tags)
    p = fr.parse(f)
    assert [(tpid, tci) for _, tpid, tci in p.vlans] == [(fr.ETH_QINQ, 0x6005),
                                                         (fr.ETH_VLAN, 0x2007)]
    assert p.l3 == "ipv4" and p.is_later_fragment and p.l4_off is None
    assert fr.later_fragment_l4_span(f) == (p.l3_off + 20, p.l3_off + 40)
    assert fr.parse(fr.strip_vlans(f)).vlans == []
    lying = fr.ethernet("02:00:00:00:00:02", "02:00:00:00:00:01", fr.ETH_IPV4,
                        fr.ipv4_header("10.0.0.1", "10.0.0.2", 17, 8, total_len=200) + bytes(8))
    assert fr.parse(lying).l3 is None and not fr.parse(lying).length_ok
    padded = _udp4(b"") + bytes(10)
    assert fr.parse(padded).ip_end == len(padded) - 10
    assert "pad=10" in fr.describe(padded)


def test_generators_are_deterministic_and_valid() -> None:
    a, b = gen_ruleset("unit/1"), gen_ruleset("unit/1")
    assert a == b and a != gen_ruleset("unit/2")
    pa, pb = gen_packets("unit/1", 200), gen_packets("unit/1", 200)
    assert [p.frame for p in pa] == [p.frame for p in pb]
    assert all(fr.find_tag(p.frame) == p.ident for p in pa)
    for seed in range(30):
        rs = gen_ruleset(f"unit/{seed}")
        assert 1 <= rs.n_tables <= 5
        cookies = re.findall(r"\bcookie=(\d+)", "\n".join(rs.flows))
        assert len(set(cookies)) == len(cookies)
        for t in range(rs.n_tables):
            flows = [f for f in rs.flows if f.startswith(f"table={t},")]
            prios = re.findall(r"\bpriority=(\d+)", "\n".join(flows))
            assert len(set(prios)) == len(prios), flows
            union: set[str] = set()
            for f in flows:
                union |= key_fields(f.split(",actions=")[0].split(",")[3:])
            assert sum(KEY_BYTES[k] for k in union) <= KEY_MAX
        for f in rs.flows:
            assert "priority=65535" not in f
            table = int(f.split(",", 1)[0].removeprefix("table="))
            assert all(int(t) > table for t in re.findall(r"goto_table:(\d+)", f)), f
    assert "priority=65535" in SENTINEL_FLOW


def test_generated_checksums_mostly_right() -> None:
    pkts = gen_packets("unit/csum", 400)
    verdicts = [fr.l4_csum_ok(p.frame) for p in pkts]
    assert verdicts.count(True) > 10 * verdicts.count(False) > 0


def test_pcap_tail_reads_only_whole_records(tmp_path: Path) -> None:
    path = tmp_path / "t.pcap"
    head = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    rec = struct.pack("<IIII", 0, 0, 3, 3) + b"abc"
    path.write_bytes(head + rec + rec[:10])
    t = PcapTail(str(path))
    assert t.read() == [b"abc"]
    path.write_bytes(head + rec + rec)
    assert t.read() == [b"abc"] and t.count == 2
    assert PcapTail(str(tmp_path / "missing.pcap")).read() == []


def test_parse_packet_in() -> None:
    m = ofp.match([ofp.oxm_in_port(3), ofp.oxm(ofp.OFPXMT_METADATA, (5).to_bytes(8, "big"))])
    body = struct.pack("!IHBBQ", ofp.OFP_NO_BUFFER, 4, 1, 2, 9) + m + b"\0\0" + b"data"
    pin = parse_packet_in(ofp.message(ofp.OFPT_PACKET_IN, body))
    assert pin == PacketIn(1, 2, 9, 3, 5, 4, b"data")


def test_classify_and_explained_by() -> None:
    f = _udp4()
    rules = RuleSet("u", 1, [], ["table=0,priority=1,actions=output:2"])
    pkt = Packet(1, 1, f)
    ttl = bytearray(f)
    ttl[22] -= 1
    assert classify(Case(rules, pkt, Outcome([(2, f)]), Outcome())) == "sluice-drops"
    assert classify(Case(rules, pkt, Outcome([(2, f)]), Outcome([(3, f)]))) == "output-ports"
    case = Case(rules, pkt, Outcome([(2, f)]), Outcome([(2, bytes(ttl))]))
    assert classify(case) == "bytes:ipv4-ttl"
    ttl_entry = Divergence("ttl", "-", "-", lambda c: True,
                           normalize=lambda b, p: b[:22] + b"\0" + b[23:])
    never = Divergence("never", "-", "-", lambda c: False)
    assert explained_by(case, [never]) is None
    assert explained_by(case, [never, ttl_entry]) == "ttl"
    pins = Case(rules, pkt, Outcome(pins=[PacketIn(1, 0, 1, 1, 0, len(f), f)]),
                Outcome(pins=[PacketIn(1, 2, 1, 1, 0, len(f), f)]))
    assert classify(pins) == "packet-in-table_id"
