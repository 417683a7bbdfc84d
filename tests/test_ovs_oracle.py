"""Open vSwitch as an oracle: random OpenFlow 1.3 rule sets and packets through Sluice and a
private OVS, compared packet by packet (outputs with their bytes, drops, packet-ins).

The harness is ``sluice.oracle`` (python/src/sluice/oracle/): a private ovs-vswitchd with
netdev-dummy ports in its own run directory and network namespace, Sluice on pcap ports fed
through veths, the same ``ovs-ofctl -O OpenFlow13`` rule text to both, a controller per
switch for packet-ins.  Every mismatch is either one of the documented divergences of
ALLOWLIST below or a failure; each allowlist entry has a hand-written test of its own.

Runs:

- CI (default): 10 rule sets x 300 packets, seed "ci-1" (about 5 s).
- Long: ``SL_OVS_ORACLE_SETS=20 SL_OVS_ORACLE_PKTS=5000 pytest tests/test_ovs_oracle.py -s``
  (100,000 packets); it prints the mismatch count by class and allowlist entry.
- Reproduce: ``SL_OVS_ORACLE_SEED=SEED`` (and the same SETS/PKTS); a failure prints the
  seed, and for each mismatch class the rules cut down to those still needed, the packet
  in hex and both outcomes.

Needs root, iproute2 and Open vSwitch (``openvswitch-switch``: ovs-vswitchd, ovsdb-server,
ovs-vsctl, ovs-appctl, ovs-ofctl); skipped with the reason otherwise.
"""

from __future__ import annotations

import dataclasses
import os
import re
import struct
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from sluice import testing
from sluice.oracle import frames as fr
from sluice.oracle.harness import (
    Batch,
    Case,
    Diagnosis,
    Divergence,
    HarnessError,
    Oracle,
    Outcome,
    PacketIn,
    Tally,
    explained_by,
    minimize,
)
from sluice.oracle.ovs import OVS_PACKAGE, OvsError, ovs_missing
from sluice.oracle.rules import Packet, RuleSet, gen_packets, gen_ruleset

pytestmark = pytest.mark.openflow

SETS = int(os.environ.get("SL_OVS_ORACLE_SETS", "10"))
PKTS = int(os.environ.get("SL_OVS_ORACLE_PKTS", "300"))
SEED = os.environ.get("SL_OVS_ORACLE_SEED", "ci-1")
LONG = "SL_OVS_ORACLE_SETS" in os.environ or "SL_OVS_ORACLE_PKTS" in os.environ
#: Mismatch classes a failure cuts down to a minimal rule set (seconds each).
MINIMIZE_CLASSES, MINIMIZE_BUDGET = 3, 20.0

# ---------------------------------------------------------------------------
# The allowlist: documented divergences, each with its spec section
# ---------------------------------------------------------------------------

_L4_FIELDS = re.compile(r"\b(tcp|udp|sctp)_(src|dst)\b|\bicmp(v6)?_(type|code)\b|\bnd_target\b")
_PROTO_MATCH = re.compile(r"\b(tcp6|udp6|sctp6|icmp6|nw_proto)\b")


def _input(case: Case) -> fr.Parsed:
    return fr.parse(case.packet.frame)


def _frames(o: Outcome) -> list[bytes]:
    return [b for _, b in o.outputs] + [p.data for p in o.pins]


def _restore_frag_bytes(frame: bytes, pkt: Packet) -> bytes:
    span, orig = fr.later_fragment_l4_span(frame), fr.later_fragment_l4_span(pkt.frame)
    if span is None or orig is None or span[1] - span[0] != orig[1] - orig[0]:
        return frame
    return frame[:span[0]] + pkt.frame[orig[0]:orig[1]] + frame[span[1]:]


def _pins_differ_in_table_only(case: Case) -> bool:
    """Outputs agree, packet-ins agree but for table_id and cookie, and every OVS
    packet-in Sluice lacks names table 0 (where OVS runs the action set from)."""
    o, s = case.ovs, case.sluice
    if sorted(o.outputs) != sorted(s.outputs) or len(o.pins) != len(s.pins):
        return False

    def loose(p: PacketIn) -> tuple[int, int, int, int, bytes]:
        return p.reason, p.in_port, p.metadata, p.total_len, p.data

    if sorted(map(loose, o.pins)) != sorted(map(loose, s.pins)):
        return False
    rest = list(s.pins)
    for p in o.pins:
        if p in rest:
            rest.remove(p)
        elif p.table_id != 0:
            return False
    return "write_actions(" in case.rules.text()


def _miss_tables(rules: RuleSet) -> list[int]:
    """Tables a goto_table reaches that have no table-miss flow."""
    targets = {int(t) for f in rules.flows for t in re.findall(r"goto_table:(\d+)", f)}
    have = {int(m.group(1)) for f in rules.flows
            if (m := re.match(r"table=(\d+),cookie=\d+,priority=0,actions=", f))}
    return sorted(targets - have)


def _with_miss_flows(rules: RuleSet) -> RuleSet:
    """@rules plus a table-miss flow that empties the action set in every table a
    goto_table reaches without one: what the specification says a miss does."""
    extra = [f"table={t},cookie=0xfffe,priority=0,actions=clear_actions"
             for t in _miss_tables(rules)]
    return rules.subset(rules.groups, [*rules.flows, *extra])


def map_buckets(rules: RuleSet, fn: Callable[[list[str]], list[str]]) -> RuleSet:
    """@rules with every group bucket's action list passed through @fn."""
    groups = []
    for g in rules.groups:
        head, *buckets = g.split(",bucket=")
        new = []
        for b in buckets:
            pre, acts = b.split("actions=", 1)
            new.append(f"{pre}actions={','.join(fn(acts.split(','))) or 'drop'}")
        groups.append(",bucket=".join([head, *new]))
    return rules.subset(groups, rules.flows)


def _without_vlan_vid_sets_in_groups(rules: RuleSet) -> RuleSet:
    return map_buckets(rules, lambda acts: [a for a in acts if not a.endswith("->vlan_vid")])


def _zero_after_push(acts: list[str], action_set: bool = False) -> list[str]:
    """@acts with set_field VID 0 and PCP 0 after each push_vlan (in an action set only
    where no set_field of that field is there already: one per field)."""
    out: list[str] = []
    for a in acts:
        out.append(a)
        if a.startswith("push_vlan"):
            out += [f"set_field:{v}->{f}" for f, v in (("vlan_vid", 0x1000), ("vlan_pcp", 0))
                    if not (action_set and any(x.endswith(f"->{f}") for x in acts))]
    return out


def _zero_pushed_tci(rules: RuleSet) -> RuleSet:
    flows = []
    for f in rules.flows:
        head, acts = f.split(",actions=", 1)
        m = re.search(r"write_actions\(([^)]*)\)", acts)
        if m:
            ws = ",".join(_zero_after_push(m.group(1).split(","), action_set=True))
            acts = acts[:m.start(1)] + ws + acts[m.end(1):]
        parts = re.split(r"(write_actions\([^)]*\))", acts)
        parts = [p if p.startswith("write_actions(") else
                 ",".join(_zero_after_push(p.split(","))) for p in parts]
        flows.append(f"{head},actions={''.join(parts)}")
    return map_buckets(rules.subset(rules.groups, flows), _zero_after_push)


def _without_write_actions(rules: RuleSet) -> RuleSet:
    flows = []
    for f in rules.flows:
        head, acts = f.split(",actions=", 1)
        acts = re.sub(r"write_actions\([^)]*\)", "", acts)
        acts = ",".join(a for a in acts.split(",") if a) or "drop"
        flows.append(f"{head},actions={acts}")
    return rules.subset(rules.groups, flows)


def _ttl_may_expire(case: Case) -> bool:
    """A dec_ttl may meet a TTL (hop limit) of 0 or 1: the input's is at most 2, or a
    rule sets it that low; or a dec_mpls_ttl may: a label's TTL is at most 2, or a rule
    sets it that low, or a push_mpls copies an IP TTL of at most 2 (the IP header under
    labels counts too: a pop uncovers it)."""
    p = _input(case)
    ttl = (case.packet.frame[p.l3_off + 8] if p.l3 == "ipv4"
           else case.packet.frame[p.l3_off + 7] if p.l3 == "ipv6" else 255)
    text = case.rules.text()
    if "dec_ttl" in text and (ttl <= 2 or bool(re.search(r"mod_nw_ttl:[012]\b", text))):
        return True
    mpls_ttls = [lse & 0xFF for _, lse in p.mpls]
    return "dec_mpls_ttl" in text and (
        any(t <= 2 for t in mpls_ttls) or ("push_mpls" in text and ttl <= 2)
        or bool(re.search(r"set_mpls_ttl:[012]\b", text)))


def _mpls_depth_may_pass_three(case: Case) -> bool:
    """The input's labels and the rule set's push_mpls actions add up to four or more."""
    return len(_input(case).mpls) + case.rules.text().count("push_mpls") >= 4


def _ovs_did_less(case: Case) -> bool:
    """OVS's outputs and packet-ins are a part of Sluice's (it dropped the packet, or
    the rest of a bucket)."""
    o, s = case.ovs, case.sluice
    return not (Counter(o.outputs) - Counter(s.outputs)) and not (Counter(o.pins)
                                                                  - Counter(s.pins))


_POP_NON_MPLS = re.compile(r"pop_mpls:0x(?!884[78])[0-9a-f]{4}")


def _without_inner_labels(case: Case) -> Case | None:
    """@case with each of Sluice's frames that is OVS's frame (same port; for packet-ins
    the same reason, in_port and metadata) with a label stack ending at the bottom of
    stack inserted after OVS's non-MPLS EtherType replaced by OVS's frame; None when there
    is no such frame."""
    o, s = case.ovs, case.sluice
    outputs, pins, found = [], [], False
    rest = list(o.outputs)
    for port, b in s.outputs:
        m = next((x for x in rest if x[0] == port and fr.leftover_labels(b, x[1])), None)
        if m is not None:
            rest.remove(m)
            found = True
        outputs.append(m or (port, b))
    pin_rest = list(o.pins)
    for pin in s.pins:
        m2 = next((x for x in pin_rest if (x.reason, x.in_port, x.metadata) == (
            pin.reason, pin.in_port, pin.metadata) and fr.leftover_labels(
                pin.data, x.data, pin.total_len - x.total_len)), None)
        if m2 is not None:
            pin_rest.remove(m2)
            found = True
            pin = dataclasses.replace(pin, data=m2.data, total_len=m2.total_len)
        pins.append(pin)
    return dataclasses.replace(case, sluice=Outcome(outputs, pins)) if found else None


def _pops_to_non_mpls(case: Case) -> bool:
    """A pop_mpls to a non-MPLS EtherType in the rules, and the outcomes agree once
    Sluice's frames lose the labels it left behind it (or then differ only as
    ovs-action-set-packet-in-table allows)."""
    if not _POP_NON_MPLS.search(case.rules.text()):
        return False
    c = _without_inner_labels(case)
    return c is not None and (c.equal or _pins_differ_in_table_only(c))


def _without_dec_mpls_ttl_in_sets(rules: RuleSet) -> RuleSet:
    """@rules without dec_mpls_ttl in write_actions and group buckets."""
    def strip(m: re.Match[str]) -> str:
        inner = [a for a in m.group(1).split(",") if a != "dec_mpls_ttl"]
        return f"write_actions({','.join(inner)})" if inner else ""

    flows = []
    for f in rules.flows:
        head, acts = f.split(",actions=", 1)
        acts = re.sub(r"write_actions\(([^)]*)\)", strip, acts)
        acts = ",".join(a for a in acts.split(",") if a) or "drop"
        flows.append(f"{head},actions={acts}")
    return map_buckets(rules.subset(rules.groups, flows),
                       lambda acts: [a for a in acts if a != "dec_mpls_ttl"])


ALLOWLIST: list[Divergence] = [
    Divergence(
        "push-vlan-copies-outer-tci",
        "OF 1.3.5 §5.12.1 (default field values on push: VLAN ID and priority from the "
        "outer tag)",
        "push_vlan onto a tagged frame: Sluice's new tag copies the outer tag's VID and "
        "PCP; OVS writes VID 0, PCP 0 (the re-run sets 0 explicitly after every push)",
        lambda c: "push_vlan" in c.rules.text(),
        rewrite=_zero_pushed_tci,
        sluice_unchanged=False,
        ovs_unchanged=True,
    ),
    Divergence(
        "ovs-two-vlan-headers",
        "OF 1.3.5 §5.12 (push_vlan adds a header; no limit); OVS keeps two "
        "(FLOW_MAX_VLAN_HEADERS)",
        "a push_vlan onto a double-tagged frame: Sluice keeps all three tags, OVS drops the "
        "innermost (VLAN tags are not compared when the input's tags and the rule set's "
        "push_vlan actions add up to three)",
        lambda c: len(_input(c).vlans) + c.rules.text().count("push_vlan") >= 3,
        normalize=lambda b, pkt: fr.strip_vlans(b),
    ),
    Divergence(
        "ovs-set-vlan-vid-pushes",
        "OF 1.3.5 §5.12 (set-field rewrites a header field; push_vlan adds headers)",
        "set_field vlan_vid in a group bucket on an untagged frame: Sluice does nothing, OVS "
        "pushes a tag",
        lambda c: any("->vlan_vid" in g for g in c.rules.groups),
        rewrite=_without_vlan_vid_sets_in_groups,
    ),
    Divergence(
        "ipv4-csum-recomputed",
        "none (OpenFlow does not say how checksums are updated)",
        "a wrong IPv4 header checksum: Sluice recomputes it when it rewrites the header, OVS "
        "patches it incrementally so it stays wrong",
        lambda c: _input(c).l3 == "ipv4" and not _input(c).ipv4_csum_ok,
        normalize=lambda b, pkt: fr.fixed_ipv4(b),
    ),
    Divergence(
        "l4-csum-recomputed",
        "none (OpenFlow does not say how checksums are updated)",
        "a wrong SCTP CRC32c or an IPv6 UDP checksum of 0: Sluice recomputes it when it "
        "rewrites the packet, OVS keeps the error",
        lambda c: fr.l4_csum_ok(c.packet.frame) is False,
        normalize=lambda b, pkt: fr.fixed_l4(b),
    ),
    Divergence(
        "later-fragment-payload",
        "OF 1.3.5 §7.2.3.7 (L4 fields exist in first fragments only)",
        "set_field on a later IPv4 fragment of a TCP/UDP/SCTP/ICMP datagram: Sluice leaves "
        "the payload alone, OVS patches the bytes where a first fragment's L4 header would "
        "be (the checksum when the addresses change, ICMP type and code)",
        lambda c: fr.later_fragment_l4_span(c.packet.frame) is not None,
        normalize=_restore_frag_bytes,
    ),
    Divergence(
        "first-fragment-l4",
        "OF 1.3.5 §7.3.2 (OFPC_FRAG_NORMAL: no special handling of fragments)",
        "a first fragment: Sluice matches and sets its TCP/UDP/SCTP/ICMP fields, OVS sees "
        "them as 0 in frag mode 'normal'",
        lambda c: _input(c).is_first_fragment and bool(_L4_FIELDS.search(c.rules.text())),
    ),
    Divergence(
        "ipv6-later-fragment-proto",
        "OF 1.3.5 §7.2.3.7 (IP_PROTO; the fragment header names the payload protocol)",
        "an IPv6 later fragment: Sluice's ip_proto is the fragment header's next header, "
        "OVS's is 44 (Fragment)",
        lambda c: _input(c).l3 == "ipv6" and _input(c).is_later_fragment
        and bool(_PROTO_MATCH.search(c.rules.text()) or _L4_FIELDS.search(c.rules.text())),
    ),
    Divergence(
        "ovs-action-set-on-miss",
        "OF 1.3.5 §5.1, §5.4 (no table-miss flow: the packet is dropped, its action set "
        "not executed)",
        "a goto_table into a table the packet misses (no table-miss flow): Sluice drops, "
        "OVS executes the action set written so far",
        lambda c: "write_actions(" in c.rules.text() and bool(_miss_tables(c.rules)),
        rewrite=_with_miss_flows,
    ),
    Divergence(
        "ovs-action-set-after-ttl-expiry",
        "OF 1.3.5 §5.12 and §7.3.2 (a packet whose TTL dec_ttl cannot decrement is dropped, "
        "or sent to the controller when OFPC_INVALID_TTL_TO_CONTROLLER is set)",
        "dec_ttl on TTL 0 or 1 in a later table: Sluice drops the packet, OVS stops the "
        "flow's actions but still executes the action set written by earlier tables",
        lambda c: "write_actions(" in c.rules.text() and _ttl_may_expire(c),
        rewrite=_without_write_actions,
    ),
    Divergence(
        "ovs-three-mpls-labels",
        "OF 1.3.5 §5.12 (push_mpls adds a shim header; no limit); OVS keeps three "
        "(FLOW_MAX_MPLS_LABELS)",
        "a push_mpls onto three labels: Sluice sends four, OVS drops the packet "
        "(XLATE_TOO_MANY_MPLS_LABELS: everything the packet did, or in a group bucket the "
        "rest of that bucket); allowed where the input's labels and the rule set's pushes "
        "add up to four and OVS did a part of what Sluice did",
        lambda c: _mpls_depth_may_pass_three(c) and _ovs_did_less(c),
    ),
    Divergence(
        "ovs-dec-mpls-ttl-without-label",
        "OF 1.3.5 §5.12 (dec_mpls_ttl decrements the TTL of an MPLS shim header; nothing "
        "says it ends the other actions)",
        "dec_mpls_ttl in a group bucket or an action set reaching a packet without a label: "
        "Sluice skips it, OVS stops the bucket's or the action set's remaining actions "
        "(compose_dec_mpls_ttl_action); the re-run takes dec_mpls_ttl out of buckets and "
        "write_actions and must leave Sluice as it was",
        lambda c: "dec_mpls_ttl" in "".join(c.rules.groups)
        or bool(re.search(r"write_actions\([^)]*dec_mpls_ttl", c.rules.text())),
        rewrite=_without_dec_mpls_ttl_in_sets,
        sluice_unchanged=True,
    ),
    Divergence(
        "ovs-pop-mpls-whole-stack",
        "OF 1.3.5 §5.12 (pop_mpls pops the outermost MPLS shim header)",
        "pop_mpls with a non-MPLS EtherType of a label that is not the bottom of the stack "
        "(a bucket or an action set, whose packet has more labels): Sluice removes that one "
        "label and writes the EtherType in front of the others, OVS removes all of them (its "
        "flow cannot have labels behind a non-MPLS EtherType); allowed where Sluice's frames "
        "are exactly OVS's with the rest of a label stack after the EtherType (packet-ins "
        "may also differ as ovs-action-set-packet-in-table allows)",
        _pops_to_non_mpls,
    ),
    Divergence(
        "ovs-mpls-pop-push-keeps-ethertype",
        "OF 1.3.5 §5.12 (push_mpls: the EtherType of the new shim header; pop_mpls: the "
        "EtherType of what follows)",
        "a pop_mpls and a push_mpls on the same packet: Sluice writes each action's EtherType, "
        "OVS turns the pair into a rewrite of the top label and keeps the packet's MPLS "
        "EtherType (0x8847 or 0x8848; frames are compared with 0x8848 read as 0x8847)",
        lambda c: "pop_mpls" in c.rules.text() and "push_mpls" in c.rules.text(),
        normalize=lambda b, pkt: fr.mpls_unicast(b),
    ),
    Divergence(
        "ovs-action-set-packet-in-table",
        "OF 1.3.5 §7.4.1 (packet-in table_id and cookie: the flow entry looked up)",
        "a packet-in from the action set: Sluice names the last table and its flow, OVS "
        "table 0 and the flow matched there",
        _pins_differ_in_table_only,
    ),
]
ALLOW = {d.name: d for d in ALLOWLIST}

# ---------------------------------------------------------------------------
# Diagnoses: known differences that still fail, named in the report
# ---------------------------------------------------------------------------


# Empty today.  The last two - a bucket's actions run as a list instead of an action set
# (OF 1.3.5 section 5.6) and the reason of a packet-in from the action set - were fixed in
# Sluice (commit 7a2b21e); a difference found next goes here until it is fixed.
DIAGNOSES: list[Diagnosis] = []


# ---------------------------------------------------------------------------
# Fixtures and helpers
# ---------------------------------------------------------------------------


def _oracle(sluice_bin: Path) -> Iterator[Oracle]:
    if not testing.netns_usable():
        pytest.skip("needs root and iproute2 (veths, network namespaces)")
    missing = ovs_missing()
    if missing:
        pytest.skip(f"Open vSwitch not installed ({missing}): apt-get install {OVS_PACKAGE}")
    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    o = Oracle(sluice_bin)
    try:
        try:
            o.ovs.start()
        except (OvsError, HarnessError, OSError) as e:
            pytest.skip(f"could not start a private Open vSwitch: {e}")
        o.sluice.start()
        yield o
    finally:
        o.stop()


@pytest.fixture(scope="module")
def oracle(sluice_bin: Path) -> Iterator[Oracle]:
    """OVS and Sluice for the hand-written cases."""
    yield from _oracle(sluice_bin)


@pytest.fixture
def fresh_oracle(sluice_bin: Path) -> Iterator[Oracle]:
    """OVS and Sluice of the random run's own (no rules left from other tests)."""
    yield from _oracle(sluice_bin)


SRC4, DST4 = "10.0.0.1", "10.0.0.2"


def udp4(*, tags: bytes = b"", proto: int = fr.IPPROTO_UDP, frag: int = 0, mf: bool = False,
         bad_ip_csum: bool = False, ident: int = 1) -> bytes:
    """An IPv4 frame of @proto (TCP, UDP or SCTP, 40 bytes of payload between two tags);
    @frag > 0 makes it a later fragment (payload only)."""
    payload = fr.tag(ident) + bytes(range(40)) + fr.tag(ident)
    if frag:
        body = payload
    else:
        seg = fr.l4_header(proto, 1000, 443, payload)
        pseudo = fr.ip4(SRC4) + fr.ip4(DST4) + struct.pack("!BBH", 0, proto, len(seg))
        body = fr.l4_with_csum(proto, seg, pseudo)
    hdr = fr.ipv4_header(SRC4, DST4, proto, len(body), frag=frag, mf=mf,
                         bad_csum=bad_ip_csum)
    return fr.ethernet("02:00:00:00:00:02", "02:00:00:00:00:01", fr.ETH_IPV4, hdr + body, tags)


def run_one(o: Oracle, flows: Sequence[str], frame: bytes, groups: Sequence[str] = (),
            in_port: int = 1) -> Case:
    """Install @groups and @flows on both switches, send @frame into @in_port."""
    rules = RuleSet("hand", 2, list(groups), list(flows))
    installed, rejected = o.install(rules)
    assert not rejected, rejected
    (case,) = o.run(installed, [Packet(fr.find_tag(frame) or 0, in_port, frame)]).cases
    return case


def only_output(o: Outcome, port: int) -> bytes:
    assert [p for p, _ in o.outputs] == [port], o.render()
    return o.outputs[0][1]


# ---------------------------------------------------------------------------
# The random run
# ---------------------------------------------------------------------------


def test_random_rule_sets(fresh_oracle: Oracle, capsys: pytest.CaptureFixture[str]) -> None:
    """Steps: SL_OVS_ORACLE_SETS random rule sets (default 10, seed SL_OVS_ORACLE_SEED),
    each installed on both switches with ovs-ofctl, then SL_OVS_ORACLE_PKTS random packets
    (default 300) through both.
    Verify: every rule is accepted by both; per packet, OVS and Sluice send the same
    frames out of the same ports and the same packet-ins (or both drop), except for the
    ALLOWLIST divergences; no output or packet-in goes unattributed.  A failure names the
    seed, counts mismatches by class and prints a minimal rule set for each class."""
    o = fresh_oracle
    tally = Tally()
    started = time.monotonic()
    for i in range(SETS):
        seed = f"{SEED}/{i}"
        installed, rejected = o.install(gen_ruleset(seed))
        tally.rejections += rejected
        batch = o.run(installed, gen_packets(seed, PKTS, first_ident=i * 1_000_000))
        tally.rulesets += 1
        tally.add(batch, ALLOWLIST, o, DIAGNOSES)
    elapsed = time.monotonic() - started
    report = f"seed {SEED!r}, {elapsed:.1f} s\n{tally.summary()}"
    if LONG:
        with capsys.disabled():
            print(f"\nOVS oracle: {report}")
    if tally.findings or tally.rejections or tally.stray:
        shown = []
        for label, _ in tally.by_label().most_common(MINIMIZE_CLASSES):
            f = next(f for f in tally.findings if f.label == label)
            m = minimize(o, f, ALLOWLIST, DIAGNOSES, budget=MINIMIZE_BUDGET)
            shown.append(f"=== {label} (rule set seed {f.case.rules.seed!r}), rules cut down "
                         f"to those still needed:\n{m.rules.text()}\n{m.render()}")
        pytest.fail(f"OVS oracle mismatches; reproduce with SL_OVS_ORACLE_SEED={SEED} "
                    f"SL_OVS_ORACLE_SETS={SETS} SL_OVS_ORACLE_PKTS={PKTS}\n{report}\n"
                    + "\n".join(shown), pytrace=False)


def test_agreement_on_plain_rules(oracle: Oracle) -> None:
    """Steps: two tables (set_field, goto_table, write_actions, an all group, a packet-in
    with max_len 64) and one UDP frame.
    Verify: both switches send the same bytes out of ports 2 and 3 and the same
    packet-in (the whole frame), so the harness itself compares like with like."""
    case = run_one(oracle, [
        "table=0,cookie=1,priority=10,udp,actions=set_field:10.9.9.9->ip_src,goto_table:1",
        "table=1,cookie=2,priority=10,ip,actions=CONTROLLER:64,write_actions(group:1)",
    ], udp4(), groups=["group_id=1,type=all,bucket=actions=output:2,bucket=actions=output:3"])
    assert case.equal, case.render()
    assert sorted(p for p, _ in case.ovs.outputs) == [2, 3]
    (pin,) = case.sluice.pins
    assert (pin.table_id, pin.cookie, len(pin.data)) == (1, 2, len(udp4()))


# ---------------------------------------------------------------------------
# One hand-written case per allowlist entry: the divergence, seen on both switches
# ---------------------------------------------------------------------------


def _assert_allowed(case: Case, name: str) -> None:
    assert not case.equal, case.render()
    assert explained_by(case, [ALLOW[name]]) == name, case.render()


def _assert_rewrite_allowed(o: Oracle, case: Case, name: str) -> None:
    """The rewrite entry @name alone explains @case (it re-runs the packet)."""
    assert not case.equal, case.render()
    assert explained_by(case, ALLOWLIST) is None, case.render()
    tally = Tally()
    tally.add(Batch(case.rules, [case]), [ALLOW[name]], o)
    assert (dict(tally.allowed), tally.findings) == ({name: 1}, []), case.render()


def test_allow_push_vlan_copies_outer_tci(oracle: Oracle) -> None:
    """Steps: push_vlan:0x8100 onto a frame tagged VID 5 PCP 3.
    Verify: Sluice's new outer tag is VID 5 PCP 3 (copied), OVS's VID 0 PCP 0; the
    frames are otherwise the same."""
    case = run_one(oracle, ["table=0,priority=5,actions=push_vlan:0x8100,output:2"],
                   udp4(tags=fr.vlan_tag(fr.ETH_VLAN, 5, 3)))
    s, o = only_output(case.sluice, 2), only_output(case.ovs, 2)
    assert [tci for _, _, tci in fr.parse(s).vlans] == [0x6005, 0x6005]
    assert [tci for _, _, tci in fr.parse(o).vlans] == [0x0000, 0x6005]
    _assert_rewrite_allowed(oracle, case, "push-vlan-copies-outer-tci")


def test_allow_ovs_two_vlan_headers(oracle: Oracle) -> None:
    """Steps: push_vlan onto a frame with an 802.1ad and an 802.1Q tag; then push_vlan,
    pop_vlan.
    Verify: Sluice sends three tags, OVS two (the 802.1Q tag is gone); after push and pop
    Sluice sends the frame unchanged, OVS without its 802.1Q tag."""
    frame = udp4(tags=fr.vlan_tag(fr.ETH_QINQ, 5, 3) + fr.vlan_tag(fr.ETH_VLAN, 7, 1))
    case = run_one(oracle, ["table=0,priority=5,actions=push_vlan:0x8100,output:2"], frame)
    s, o = only_output(case.sluice, 2), only_output(case.ovs, 2)
    assert [tpid for _, tpid, _ in fr.parse(s).vlans] == [fr.ETH_VLAN, fr.ETH_QINQ, fr.ETH_VLAN]
    assert [tpid for _, tpid, _ in fr.parse(o).vlans] == [fr.ETH_VLAN, fr.ETH_QINQ]
    assert len(s) == len(o) + 4
    _assert_allowed(case, "ovs-two-vlan-headers")
    case = run_one(oracle, ["table=0,priority=5,actions=push_vlan:0x8100,pop_vlan,output:2"],
                   frame)
    assert only_output(case.sluice, 2) == frame
    assert [tpid for _, tpid, _ in fr.parse(only_output(case.ovs, 2)).vlans] == [fr.ETH_QINQ]
    _assert_allowed(case, "ovs-two-vlan-headers")


def test_allow_ovs_set_vlan_vid_pushes(oracle: Oracle) -> None:
    """Steps: an indirect group whose bucket sets vlan_vid 100 (0x1000 | 100) and outputs
    to port 2; an untagged frame.
    Verify: Sluice sends the frame unchanged, OVS with a new tag of VID 100; without the
    set_field both send it unchanged (the entry's re-run)."""
    frame = udp4()
    case = run_one(oracle, ["table=0,priority=5,actions=group:1"], frame,
                   groups=["group_id=1,type=indirect,bucket=actions=set_field:4196->vlan_vid,"
                           "output:2"])
    assert only_output(case.sluice, 2) == frame
    assert [tci for _, _, tci in fr.parse(only_output(case.ovs, 2)).vlans] == [100]
    _assert_rewrite_allowed(oracle, case, "ovs-set-vlan-vid-pushes")


def test_allow_ipv4_csum_recomputed(oracle: Oracle) -> None:
    """Steps: set_field ip_dscp on a frame whose IPv4 header checksum is wrong.
    Verify: Sluice's output has the right checksum, OVS's is still wrong; nothing else
    differs."""
    case = run_one(oracle, ["table=0,priority=5,ip,actions=set_field:10->ip_dscp,output:2"],
                   udp4(bad_ip_csum=True))
    s, o = only_output(case.sluice, 2), only_output(case.ovs, 2)
    assert fr.parse(s).ipv4_csum_ok and not fr.parse(o).ipv4_csum_ok
    _assert_allowed(case, "ipv4-csum-recomputed")


def test_allow_l4_csum_recomputed(oracle: Oracle) -> None:
    """Steps: set_field sctp_dst on an SCTP frame whose CRC32c is wrong.
    Verify: Sluice's CRC is right, OVS's still wrong."""
    frame = bytearray(udp4(proto=fr.IPPROTO_SCTP))
    p = fr.parse(bytes(frame))
    assert p.l4_off is not None
    frame[p.l4_off + 8] ^= 0x5A
    case = run_one(oracle, ["table=0,priority=5,sctp,actions=set_field:80->sctp_dst,output:2"],
                   bytes(frame))
    s, o = only_output(case.sluice, 2), only_output(case.ovs, 2)
    assert fr.l4_csum_ok(s) is True and fr.l4_csum_ok(o) is False
    _assert_allowed(case, "l4-csum-recomputed")


def test_allow_later_fragment_payload(oracle: Oracle) -> None:
    """Steps: set_field ip_src on a later fragment (offset 80) of a TCP datagram; then
    set_field icmp_type on a later fragment of an ICMP datagram.
    Verify: both rewrite the address; Sluice leaves the payload alone, OVS changes bytes
    16-17 of it (where a TCP checksum would be); OVS writes the ICMP type into the second
    fragment's payload, Sluice forwards it unchanged."""
    frame = udp4(proto=fr.IPPROTO_TCP, frag=10)
    case = run_one(oracle, ["table=0,priority=5,ip,actions=set_field:10.9.9.9->ip_src,output:2"],
                   frame)
    s, o = only_output(case.sluice, 2), only_output(case.ovs, 2)
    payload = fr.parse(frame).l3_off + 20
    assert s[payload:] == frame[payload:]
    assert o[payload + 16:payload + 18] != frame[payload + 16:payload + 18]
    assert s[:payload] == o[:payload]
    _assert_allowed(case, "later-fragment-payload")
    frame = udp4(proto=fr.IPPROTO_ICMP, frag=10)
    case = run_one(oracle, ["table=0,priority=5,icmp,actions=set_field:3->icmp_type,output:2"],
                   frame)
    s, o = only_output(case.sluice, 2), only_output(case.ovs, 2)
    assert s == frame and o[payload] == 3
    _assert_allowed(case, "later-fragment-payload")


def test_allow_first_fragment_l4(oracle: Oracle) -> None:
    """Steps: tcp,tcp_dst=443 -> output:2 over a catch-all -> output:3; a first fragment
    (MF set, offset 0) of a TCP segment to port 443.
    Verify: Sluice matches the port (port 2), OVS does not (port 3)."""
    case = run_one(oracle, ["table=0,priority=5,tcp,tcp_dst=443,actions=output:2",
                            "table=0,priority=1,actions=output:3"],
                   udp4(proto=fr.IPPROTO_TCP, mf=True))
    only_output(case.sluice, 2)
    only_output(case.ovs, 3)
    _assert_allowed(case, "first-fragment-l4")


def test_allow_ipv6_later_fragment_proto(oracle: Oracle) -> None:
    """Steps: udp6 -> output:2 over a catch-all -> output:3; an IPv6 later fragment whose
    fragment header names UDP.
    Verify: Sluice matches udp6 (port 2), OVS does not (port 3)."""
    payload = fr.tag(1) + bytes(range(40)) + fr.tag(1)
    ext = struct.pack("!BBHI", fr.IPPROTO_UDP, 0, 10 << 3, 99)
    frame = fr.ethernet("02:00:00:00:00:02", "02:00:00:00:00:01", fr.ETH_IPV6,
                        fr.ipv6_header("2001:db8::1", "2001:db8::2", fr.IPV6_FRAGMENT,
                                       len(ext) + len(payload)) + ext + payload)
    case = run_one(oracle, ["table=0,priority=5,udp6,actions=output:2",
                            "table=0,priority=1,actions=output:3"], frame)
    only_output(case.sluice, 2)
    only_output(case.ovs, 3)
    _assert_allowed(case, "ipv6-later-fragment-proto")


def test_allow_ovs_action_set_on_miss(oracle: Oracle) -> None:
    """Steps: table 0 writes output:2 to the action set and goes to table 1, which has no
    flows.
    Verify: Sluice drops the frame, OVS sends it out of port 2; with a table-miss flow
    (clear_actions) in table 1 both drop, which the entry's re-run checks."""
    flows = ["table=0,priority=5,actions=write_actions(output:2),goto_table:1"]
    case = run_one(oracle, flows, udp4())
    assert case.sluice.key() == ((), ())
    only_output(case.ovs, 2)
    _assert_rewrite_allowed(oracle, case, "ovs-action-set-on-miss")


def test_allow_ovs_action_set_after_ttl_expiry(oracle: Oracle) -> None:
    """Steps: table 0 writes output:2 to the action set and goes to table 1, whose flow
    does dec_ttl, output:3; a frame with TTL 1.
    Verify: Sluice drops it; OVS sends it out of port 2 (the action set), not port 3;
    without the write_actions both drop it (the entry's re-run)."""
    frame = bytearray(udp4())
    ip = fr.parse(bytes(frame)).l3_off
    frame[ip + 8] = 1
    frame = bytearray(fr.fixed_ipv4(bytes(frame)))
    case = run_one(oracle, ["table=0,priority=5,ip,actions=write_actions(output:2),goto_table:1",
                            "table=1,priority=5,ip,actions=dec_ttl,output:3"], bytes(frame))
    assert case.sluice.key() == ((), ())
    only_output(case.ovs, 2)
    _assert_rewrite_allowed(oracle, case, "ovs-action-set-after-ttl-expiry")


def test_allow_ovs_action_set_packet_in_table(oracle: Oracle) -> None:
    """Steps: table 0 (cookie 1) goes to table 1 (cookie 2), which writes CONTROLLER to the
    action set.
    Verify: the same packet-in from both, but Sluice says table 1, cookie 2 and OVS
    table 0, cookie 1."""
    case = run_one(oracle, ["table=0,cookie=1,priority=5,actions=goto_table:1",
                            "table=1,cookie=2,priority=5,actions=write_actions(CONTROLLER)"],
                   udp4())
    (s,), (o,) = case.sluice.pins, case.ovs.pins
    assert (s.table_id, s.cookie, o.table_id, o.cookie) == (1, 2, 0, 1)
    assert s.data == o.data == udp4()
    _assert_allowed(case, "ovs-action-set-packet-in-table")


def mpls_frame(labels: Sequence[tuple[int, int]], inner: bytes | None = None,
               eth_type: int = fr.ETH_MPLS, ident: int = 1) -> bytes:
    """An MPLS frame: @labels (label, TTL) outermost first, TC 1, bottom of stack on the
    last, over @inner (an IPv4 UDP packet by default)."""
    if inner is None:
        inner = udp4(ident=ident)[14:]
    stack = b"".join(fr.mpls_lse(label, 1, i == len(labels) - 1, ttl)
                     for i, (label, ttl) in enumerate(labels))
    return fr.ethernet("02:00:00:00:00:02", "02:00:00:00:00:01", eth_type, stack + inner)


def test_allow_ovs_three_mpls_labels(oracle: Oracle) -> None:
    """Steps: push_mpls:0x8847 onto a frame with three labels, then output:2; then an all
    group whose first bucket pushes and sends to port 2, the second sends to port 3.
    Verify: Sluice sends four labels (the new one a copy of the top with BoS 0), OVS drops
    the frame; with the group OVS sends only the second bucket's copy."""
    frame = mpls_frame([(100, 64), (16, 63), (2, 62)])
    case = run_one(oracle, ["table=0,priority=5,actions=push_mpls:0x8847,output:2"], frame)
    s = only_output(case.sluice, 2)
    assert [lse >> 12 for _, lse in fr.parse(s).mpls] == [100, 100, 16, 2]
    assert case.ovs.key() == ((), ())
    _assert_allowed(case, "ovs-three-mpls-labels")
    case = run_one(oracle, ["table=0,priority=5,actions=group:1"], frame, groups=[
        "group_id=1,type=all,bucket=actions=push_mpls:0x8847,output:2,"
        "bucket=actions=output:3"])
    assert sorted(p for p, _ in case.sluice.outputs) == [2, 3]
    assert only_output(case.ovs, 3) == frame
    _assert_allowed(case, "ovs-three-mpls-labels")


def test_allow_ovs_dec_mpls_ttl_without_label(oracle: Oracle) -> None:
    """Steps: an indirect group whose bucket does dec_mpls_ttl and output:2; an IPv4
    frame (no label).
    Verify: Sluice sends the frame unchanged (no label, nothing to decrement), OVS drops
    it (the bucket stops at dec_mpls_ttl); without the dec_mpls_ttl both send it (the
    entry's re-run)."""
    frame = udp4()
    case = run_one(oracle, ["table=0,priority=5,actions=group:1"], frame,
                   groups=["group_id=1,type=indirect,bucket=actions=dec_mpls_ttl,output:2"])
    assert only_output(case.sluice, 2) == frame
    assert case.ovs.key() == ((), ())
    _assert_rewrite_allowed(oracle, case, "ovs-dec-mpls-ttl-without-label")


def test_allow_ovs_pop_mpls_whole_stack(oracle: Oracle) -> None:
    """Steps: an indirect group whose bucket does pop_mpls:0x0800 and output:2; a frame
    with two labels over IPv4.
    Verify: Sluice removes the top label and writes 0x0800 in front of the second; OVS
    removes both (the IPv4 header right after 0x0800)."""
    frame = mpls_frame([(100, 64), (16, 63)])
    case = run_one(oracle, ["table=0,priority=5,actions=group:1"], frame,
                   groups=["group_id=1,type=indirect,bucket=actions=pop_mpls:0x0800,output:2"])
    s, o = only_output(case.sluice, 2), only_output(case.ovs, 2)
    assert s == frame[:12] + b"\x08\x00" + frame[18:]
    assert o == udp4()
    assert fr.leftover_labels(s, o) == 1
    _assert_allowed(case, "ovs-pop-mpls-whole-stack")


def test_allow_ovs_mpls_pop_push_keeps_ethertype(oracle: Oracle) -> None:
    """Steps: pop_mpls:0x8848 then push_mpls:0x8847 on an 0x8848 frame with two labels.
    Verify: the same labels from both (the second label, and a copy of it with BoS 0 on
    top), Sluice under EtherType 0x8847, OVS under 0x8848."""
    frame = mpls_frame([(100, 64), (16, 63)], eth_type=fr.ETH_MPLS_MC)
    case = run_one(oracle, ["table=0,priority=5,mplsm,actions=pop_mpls:0x8848,"
                            "push_mpls:0x8847,output:2"], frame)
    s, o = only_output(case.sluice, 2), only_output(case.ovs, 2)
    assert (fr.parse(s).eth_type, fr.parse(o).eth_type) == (fr.ETH_MPLS, fr.ETH_MPLS_MC)
    assert s[14:] == o[14:] and [lse >> 12 for _, lse in fr.parse(s).mpls] == [16, 16]
    _assert_allowed(case, "ovs-mpls-pop-push-keeps-ethertype")


def test_allow_ovs_action_set_after_mpls_ttl_expiry(oracle: Oracle) -> None:
    """Steps: table 0 writes output:2 to the action set and goes to table 1, whose flow
    (mpls) does dec_mpls_ttl, output:3; a frame whose label has TTL 1.
    Verify: Sluice drops it; OVS sends it out of port 2 (the action set); without the
    write_actions both drop it (the re-run of ovs-action-set-after-ttl-expiry)."""
    case = run_one(oracle, ["table=0,priority=5,actions=write_actions(output:2),goto_table:1",
                            "table=1,priority=5,mpls,actions=dec_mpls_ttl,output:3"],
                   mpls_frame([(100, 1)]))
    assert case.sluice.key() == ((), ())
    only_output(case.ovs, 2)
    _assert_rewrite_allowed(oracle, case, "ovs-action-set-after-ttl-expiry")


# ---------------------------------------------------------------------------
# The allowlist does not swallow other differences (no switches needed)
# ---------------------------------------------------------------------------


def test_allowlist_is_narrow() -> None:
    """Steps: synthetic cases where an entry's packet shape holds but the outcomes differ
    in something else (a TTL, a port, an inner VLAN ID, a payload byte).
    Verify: no allowlist entry explains them."""
    bad = udp4(bad_ip_csum=True)
    ttl = bytearray(bad)
    ttl[14 + 8] -= 1
    rules = RuleSet("synthetic", 1, [], ["table=0,priority=5,actions=push_vlan:0x8100,output:2"])
    pkt = Packet(1, 1, bad)
    cases = [
        Case(rules, pkt, Outcome([(2, bad)]), Outcome([(2, fr.fixed_ipv4(bytes(ttl)))])),
        Case(rules, pkt, Outcome([(2, bad)]), Outcome([(3, bad)])),
    ]
    tagged = udp4(tags=fr.vlan_tag(fr.ETH_VLAN, 5, 3))
    pushed = fr.vlan_tag(fr.ETH_VLAN, 0, 0)
    ovs = tagged[:12] + pushed + tagged[12:]
    wrong_inner = tagged[:12] + fr.vlan_tag(fr.ETH_VLAN, 5, 3) + fr.vlan_tag(fr.ETH_VLAN, 6, 3) \
        + tagged[16:]
    cases.append(Case(rules, Packet(1, 1, tagged), Outcome([(2, ovs)]),
                      Outcome([(2, wrong_inner)])))
    later = udp4(proto=fr.IPPROTO_TCP, frag=10)
    changed = bytearray(later)
    changed[-12] ^= 0xFF
    cases.append(Case(rules, Packet(1, 1, later), Outcome([(2, later)]),
                      Outcome([(2, bytes(changed))])))
    mpls_rules = RuleSet("synthetic", 1, [], [
        "table=0,priority=5,actions=push_mpls:0x8847,pop_mpls:0x0800,output:2"])
    two = mpls_frame([(100, 64), (16, 63)])
    popped = two[:12] + b"\x08\x00" + two[18:]
    not_bos = bytearray(popped)
    not_bos[16] &= 0xFE  # the label left behind without its bottom-of-stack bit
    three = mpls_frame([(100, 64), (16, 63), (2, 62)])
    cases += [
        # labels after the EtherType that are no label stack
        Case(mpls_rules, Packet(1, 1, two), Outcome([(2, udp4())]),
             Outcome([(2, bytes(not_bos))])),
        # the leftover label on another port
        Case(mpls_rules, Packet(1, 1, two), Outcome([(2, udp4())]), Outcome([(3, popped)])),
        # OVS sends what Sluice does not, past three labels
        Case(mpls_rules, Packet(1, 1, three), Outcome([(2, three), (3, three)]),
             Outcome([(2, three)])),
        # another MPLS difference than the EtherType's multicast bit
        Case(mpls_rules, Packet(1, 1, two), Outcome([(2, two)]),
             Outcome([(2, two[:14] + b"\x00\x07" + two[16:])])),
    ]
    for case in cases:
        assert explained_by(case, ALLOWLIST) is None, case.render()
