"""Random OpenFlow 1.3 rule sets and packets for the OVS oracle (seeded, reproducible).

A rule set is plain ``ovs-ofctl -O OpenFlow13`` text, group lines for ``add-groups`` and flow
lines for ``add-flows``, so exactly the same bytes reach Sluice and Open vSwitch.  It has
1-5 tables of masked matches with distinct priorities (equal priorities that overlap are
undefined, OpenFlow 1.3.5 section 5.3), apply/write/clear actions, write_metadata and
metadata matches, goto_table, VLAN push/pop, MPLS push/pop (push_mpls, pop_mpls,
set_mpls_ttl, dec_mpls_ttl, set_field on mpls_label and mpls_tc, matches on mpls_label,
mpls_tc and mpls_bos), set_field on L2-L4 fields, dec_ttl and mod_nw_ttl, output to ports,
IN_PORT, ALL, FLOOD and CONTROLLER (with and without max_len), and all, select and indirect
groups, whose buckets may chain to a lower-numbered all or indirect group (group:N last in
the bucket; never to a select group, which OVS would pick by dp_hash and recirculate).

The generator keeps to what both switches must accept:

- set_field, pop_vlan, dec_ttl and mod_nw_ttl only where the match (and the actions before
  them) make the header present, as ``ovs-ofctl`` checks (a set-field whose prerequisites
  the match does not satisfy is MATCH_INCONSISTENT); a VLAN VID is set with OFPVID_PRESENT
  (0x1000 | VID), which OVS requires; no push_vlan past two known tags (OFPBAC_BAD_TAG);
  group buckets, which have no match, may set any field (a switch skips what the packet
  lacks);
- MPLS as ``ovs-ofctl`` checks it: pop_mpls, set_mpls_ttl, dec_mpls_ttl and set_field on
  mpls_label/mpls_tc only where the match (mpls, mplsm) or an earlier push_mpls makes the
  packet MPLS; after a push_mpls nothing of L3 or L4 (set_field, dec_ttl, mod_nw_ttl) in
  the same list, after a pop_mpls only what its EtherType makes present; never a
  set_field on mpls_bos (read-only in OVS) nor a masked mpls_label (OVS cannot mask it).
  A write_actions lists push_mpls after its set-fields now and then (OVS checks the list
  in the order written, the action set runs the push first);
- a flow pops a label only where it knows what the label holds (mpls_bos matched, or a
  push_mpls before it), and pops with an MPLS EtherType exactly when more labels follow:
  OVS cannot represent a non-MPLS EtherType in front of labels (it pops the whole stack,
  allowlisted where it happens anyway) nor the label it would find after popping the
  bottom of the stack with an MPLS EtherType (it reads TTL 0, a difference of two
  malformed packets, not generated).  Buckets, which know nothing, pop to a non-MPLS
  EtherType;
- after a pop_mpls to a non-MPLS EtherType OVS 3.1 recirculates to parse what the label
  held, freezing the translation at the next action that needs it; frozen with a longer
  action set than the actions left, it aborts as above.  So that pop is in apply-actions
  only in table 0 (no action set yet) and in a flow without write_actions (a goto_table
  freezes after them), and a bucket with it has otherwise only pop_vlan, set_field on
  Ethernet and VLAN fields and outputs, which need no recirculation.  In write_actions
  it is safe (OVS empties the action set before it runs it);
- each table's match fields fit Sluice's 64-byte table key (KEY_BYTES), a resource limit
  OpenFlow lets a switch have;
- select groups choose deterministically: every bucket but one has weight 0 (a zero share
  of the traffic, section 5.6.1), or all buckets carry the same actions; an apply-actions
  list names a select group in table 0 only (OVS 3.1 picks a select bucket by dp_hash,
  which freezes the translation and recirculates; frozen with an action set written by an
  earlier table that is longer than the actions left to run, ovs-vswitchd aborts on the
  assertion ``state->action_set_len <= state->ofpacts_len`` in recirc_alloc_id__());
- no masks on fields Sluice does not mask (eth_type, vlan_pcp, ip_dscp, ip_ecn, ip_proto,
  ICMP and ARP opcodes), and at most one action of a type per write_actions.

Packets come from the same small pools of addresses and ports as the rules so that most of
them hit something: IPv4 and IPv6 with TCP, UDP, SCTP, ICMP, GRE and ND, ARP, a raw
EtherType, MPLS (0x8847 and 0x8848, 1-3 labels, TTLs 0, 1, 2, 64, 255, over IPv4, IPv6 or
a raw payload); 0-2 VLAN tags (802.1Q and 802.1ad); IPv4 options, first and later fragments,
IPv6 hop-by-hop and fragment headers, Ethernet padding and trailers, and a few frames with a
wrong IPv4 or L4 checksum or an IP length that does not fit the frame.  Every frame carries
its id twice (frames.tag).
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sluice.oracle import frames as fr
from sluice.oracle.frames import (
    IPPROTO_GRE,
    IPPROTO_ICMP,
    IPPROTO_ICMPV6,
    IPPROTO_SCTP,
    IPPROTO_TCP,
    IPPROTO_UDP,
)

#: Bumped whenever the generator changes what a seed produces.
GENERATOR_VERSION = 3

MACS = ["02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:00:03", "0a:00:00:00:00:04",
        "ff:ff:ff:ff:ff:ff", "01:00:5e:00:00:fb"]
MAC_MASKS = ["ff:ff:ff:00:00:00", "01:00:00:00:00:00", "ff:ff:ff:ff:ff:f0"]
IP4 = ["10.0.0.1", "10.0.0.2", "10.0.1.7", "192.168.1.1", "192.168.1.254", "172.16.5.5"]
IP4_NETS = ["10.0.0.0/24", "10.0.0.0/16", "192.168.1.0/24", "128.0.0.0/1", "10.0.0.2/32",
            "10.0.0.0/255.0.255.0"]
IP6 = ["2001:db8::1", "2001:db8::2", "2001:db8:0:1::5", "fe80::1"]
IP6_NETS = ["2001:db8::/32", "2001:db8::/64", "fe80::/10", "2001:db8::2/128"]
L4_PORTS = [22, 53, 80, 443, 1024, 5001, 65535]
L4_MASKS = [0xFFF0, 0xFF00, 0x8000, 0x0003]
VIDS = [1, 5, 100, 4094]
TTLS = [0, 1, 2, 64, 255]
FLABELS = [0, 0x12345, 0xFFFFF, 0x55]
META_VALUES = [0x1, 0x2, 0xA5, 0xFF00, 0x100000000, 0xFEDCBA9876543210]
META_MASKS = [0xFF, 0xFFFFFFFFFFFFFFFF, 0xF0, 0xFFFF0000FFFF0000, 0x1]
ICMP4 = [(8, 0), (0, 0), (3, 1), (11, 0)]
ICMP6 = [(128, 0), (129, 0), (135, 0), (136, 0), (1, 4)]
#: MPLS labels: 0 and 2 are what push_mpls puts over IPv4 and IPv6 (explicit null).
MPLS_LABELS = [0, 2, 16, 100, 0xFFFFF]

#: Key bytes of each match field in Sluice (ceil(bits / 8)): a table keys on the union of
#: its flows' fields, at most 192 bytes (docs/openflow.md section 14), and refuses a flow
#: that would grow it past that (BAD_MATCH/BAD_FIELD), a resource limit OpenFlow allows.
KEY_BYTES = {"in_port": 4, "metadata": 8, "dl_dst": 6, "dl_src": 6, "dl_type": 2,
             "vlan_vid": 2, "vlan_pcp": 1, "ip_dscp": 1, "nw_ecn": 1, "nw_proto": 1,
             "nw_src": 4, "nw_dst": 4, "tcp_src": 2, "tcp_dst": 2, "udp_src": 2, "udp_dst": 2,
             "sctp_src": 2, "sctp_dst": 2, "icmp_type": 1, "icmp_code": 1, "arp_op": 2,
             "arp_spa": 4, "arp_tpa": 4, "arp_sha": 6, "arp_tha": 6, "ipv6_src": 16,
             "ipv6_dst": 16, "ipv6_label": 3, "icmpv6_type": 1, "icmpv6_code": 1,
             "nd_target": 16, "mpls_label": 3, "mpls_tc": 1, "mpls_bos": 1}
KEY_MAX = 192
_SHORTHANDS = {"ip": ("dl_type",), "ipv6": ("dl_type",), "arp": ("dl_type",),
               "mpls": ("dl_type",), "mplsm": ("dl_type",),
               "tcp": ("dl_type", "nw_proto"), "udp": ("dl_type", "nw_proto"),
               "sctp": ("dl_type", "nw_proto"), "icmp": ("dl_type", "nw_proto"),
               "tcp6": ("dl_type", "nw_proto"), "udp6": ("dl_type", "nw_proto"),
               "sctp6": ("dl_type", "nw_proto"), "icmp6": ("dl_type", "nw_proto"),
               "dl_vlan": ("vlan_vid",), "vlan_tci": ("vlan_vid",),
               "dl_vlan_pcp": ("vlan_vid", "vlan_pcp")}


def key_fields(match: Sequence[str]) -> set[str]:
    """The Sluice key fields a flow's match parts (``k=v`` or shorthands) occupy."""
    out: set[str] = set()
    for part in match:
        name = part.split("=", 1)[0]
        out.update(_SHORTHANDS.get(name, (name,)))
    return out & set(KEY_BYTES)


# ---------------------------------------------------------------------------
# Rule sets
# ---------------------------------------------------------------------------


@dataclass
class RuleSet:
    """One random rule set: ``ovs-ofctl`` group and flow lines (flows carry distinct
    cookies, 1, 2, ..., so a packet-in names the flow that sent it)."""

    seed: str
    n_tables: int
    groups: list[str] = field(default_factory=list)
    flows: list[str] = field(default_factory=list)

    def text(self) -> str:
        """Groups, then flows, one per line (what a report prints)."""
        return "\n".join([*(f"group {g}" for g in self.groups), *self.flows])

    def subset(self, groups: Sequence[str], flows: Sequence[str]) -> RuleSet:
        return RuleSet(self.seed, self.n_tables, list(groups), list(flows))


@dataclass
class _Ctx:
    """What a flow's match (and the actions so far) say the packet has."""

    l3: str | None = None  # "ipv4" | "ipv6" | "arp" | "mpls"
    l4: str | None = None  # "tcp" | "udp" | "sctp" | "icmp" | "icmp6"
    nd: bool = False  # icmpv6_type 135 or 136 matched
    #: VLAN headers known to be there (ovs-ofctl refuses a push past 2, OFPBAC_BAD_TAG).
    tags: int = 0
    #: With l3 "mpls": what the top label holds, when known ("mpls": more labels,
    #: "ipv4", "ipv6", "arp", "payload": no more labels; None: not known, so no pop_mpls).
    inner: str | None = None

    @property
    def tagged(self) -> bool:
        return self.tags > 0

    @property
    def mpls(self) -> bool:
        return self.l3 == "mpls"

    def copy(self) -> _Ctx:
        return _Ctx(self.l3, self.l4, self.nd, self.tags, self.inner)

    def push_mpls(self) -> None:
        """What ovs-ofctl assumes after a push_mpls: MPLS, nothing known of L3/L4."""
        self.inner = "mpls" if self.mpls else self.l3
        self.l3, self.l4, self.nd = "mpls", None, False

    def pop_mpls(self, eth_type: int) -> None:
        """... and after a pop_mpls: what the EtherType names (no L4: ovs-ofctl takes the
        protocol as unknown)."""
        self.l3 = _ETH_L3.get(eth_type)
        self.l4, self.nd, self.inner = None, False, None


_ETH_L3 = {fr.ETH_IPV4: "ipv4", fr.ETH_IPV6: "ipv6", fr.ETH_ARP: "arp", fr.ETH_MPLS: "mpls",
           fr.ETH_MPLS_MC: "mpls"}
_L3_ETH = {"ipv4": fr.ETH_IPV4, "ipv6": fr.ETH_IPV6, "arp": fr.ETH_ARP, "mpls": fr.ETH_MPLS}


_RESERVED_OUT = ("IN_PORT", "ALL", "FLOOD")


def _pops_to_l3(action: str) -> bool:
    """@action is a pop_mpls to a non-MPLS EtherType."""
    return action.startswith("pop_mpls:") and action[9:] not in ("0x8847", "0x8848")


_CLASSES: list[tuple[str, int]] = [
    ("any", 8), ("eth", 8), ("raw", 2), ("ip", 12), ("tcp", 10), ("udp", 10), ("sctp", 4),
    ("icmp", 5), ("arp", 6), ("ipv6", 8), ("tcp6", 5), ("udp6", 5), ("sctp6", 2),
    ("icmp6", 5), ("mpls", 10), ("mplsm", 4)]


class RuleGen:
    """Draws rule sets from @rng for a switch of @n_ports ports."""

    def __init__(self, rng: random.Random, n_ports: int = 4) -> None:
        self.rng = rng
        self.n_ports = n_ports
        self.group_ids: list[int] = []
        #: The groups an apply-actions list may name: all in table 0, no select group
        #: after it (see the module doc: an OVS crash).
        self.apply_group_ids: list[int] = []
        self.select_ids: set[int] = set()
        self.table = 0  # the table of the flow being made

    # -- values ---------------------------------------------------------------

    def _p(self, prob: float) -> bool:
        return self.rng.random() < prob

    def _set_field(self, ctx: _Ctx | None) -> str:
        """One set_field action for a packet described by @ctx (None: a group bucket, where
        nothing is known; the switch must skip fields the packet lacks)."""
        r = self.rng
        cands: list[tuple[str, str]] = [("eth_src", r.choice(MACS[:4])),
                                         ("eth_dst", r.choice(MACS))]
        any_ctx = ctx is None
        c = ctx or _Ctx()
        if any_ctx or c.tagged:
            cands += [("vlan_vid", str(0x1000 | r.choice(VIDS))),
                      ("vlan_pcp", str(r.randrange(8)))]
        if any_ctx or c.l3 in ("ipv4", "ipv6"):
            cands += [("ip_dscp", str(r.randrange(64))), ("ip_ecn", str(r.randrange(4)))]
        if any_ctx or c.l3 == "ipv4":
            cands += [("ip_src", r.choice(IP4)), ("ip_dst", r.choice(IP4))]
        if any_ctx or c.l3 == "ipv6":
            cands += [("ipv6_src", r.choice(IP6)), ("ipv6_dst", r.choice(IP6)),
                      ("ipv6_label", hex(r.choice(FLABELS)))]
        if any_ctx or c.l3 == "arp":
            cands += [("arp_op", str(r.choice((1, 2)))), ("arp_spa", r.choice(IP4)),
                      ("arp_tpa", r.choice(IP4)), ("arp_sha", r.choice(MACS[:4])),
                      ("arp_tha", r.choice(MACS))]
        for l4 in ("tcp", "udp", "sctp"):
            if any_ctx or c.l4 == l4:
                cands += [(f"{l4}_src", str(r.choice(L4_PORTS))),
                          (f"{l4}_dst", str(r.choice(L4_PORTS)))]
        if any_ctx or c.l4 == "icmp":
            t, code = r.choice(ICMP4)
            cands += [("icmp_type", str(t)), ("icmp_code", str(code))]
        if any_ctx or c.l4 == "icmp6":
            t, code = r.choice(ICMP6)
            cands += [("icmpv6_type", str(t)), ("icmpv6_code", str(code))]
        if any_ctx or c.nd:
            cands.append(("nd_target", r.choice(IP6)))
        if any_ctx or c.mpls:
            cands += [("mpls_label", str(r.choice(MPLS_LABELS))),
                      ("mpls_tc", str(r.randrange(8)))] * (1 if any_ctx else 2)
        name, value = r.choice(cands)
        return f"set_field:{value}->{name}"

    def _output(self) -> str:
        r = self.rng
        return r.choices(
            [f"output:{r.randint(1, self.n_ports)}", "IN_PORT", "ALL", "FLOOD",
             f"output:{self.n_ports + 1}", "CONTROLLER", "CONTROLLER:64", "CONTROLLER:128"],
            [40, 6, 4, 3, 1, 8, 3, 2])[0]

    def _pop_ok(self, ctx: _Ctx | None) -> bool:
        """Whether a flow (@ctx, in table self.table) or a bucket (None) may pop here: the
        label's content known, and a pop to a non-MPLS EtherType in table 0 only (see the
        module doc)."""
        if ctx is None:
            return True
        return ctx.mpls and (ctx.inner == "mpls" or (ctx.inner is not None
                                                     and self.table == 0))

    def _pop_mpls(self, ctx: _Ctx | None) -> str:
        """A pop_mpls (@ctx: None, or one that knows what the label holds): an MPLS
        EtherType over more labels, else mostly the EtherType of what is under it."""
        r = self.rng
        if ctx is not None and ctx.inner == "mpls":
            et = r.choice((fr.ETH_MPLS, fr.ETH_MPLS, fr.ETH_MPLS_MC))
        elif ctx is not None and ctx.inner in _L3_ETH and self._p(0.85):
            et = _L3_ETH[ctx.inner]
        else:
            et = r.choice((fr.ETH_IPV4, fr.ETH_IPV4, fr.ETH_IPV6, fr.ETH_RAW))
        if ctx is not None:
            ctx.pop_mpls(et)
        return f"pop_mpls:0x{et:04x}"

    def _push_mpls(self, ctx: _Ctx | None) -> str:
        if ctx is not None:
            ctx.push_mpls()
        return f"push_mpls:0x{self.rng.choice((fr.ETH_MPLS, fr.ETH_MPLS, fr.ETH_MPLS_MC)):04x}"

    def _actions(self, ctx: _Ctx | None, n: int, allow_group: bool) -> list[str]:
        """@n apply (or bucket) actions; updates @ctx as pushes and pops happen."""
        r = self.rng
        out: list[str] = []
        pushes = 0
        for _ in range(n):
            ip = ctx is None or ctx.l3 in ("ipv4", "ipv6")
            mpls = ctx is None or ctx.mpls
            can_push = ctx.tags < 2 if ctx is not None else pushes < 2
            pop = 3 if ctx is None else 16 if self._pop_ok(ctx) else 0
            kinds = [("output", 30), ("set_field", 30), ("push_vlan", 6 if can_push else 0),
                     ("pop_vlan", 5 if ctx is None or ctx.tagged else 0),
                     ("dec_ttl", 6 if ip else 0), ("mod_nw_ttl", 3 if ip else 0),
                     ("group", 8 if allow_group and self.apply_group_ids else 0),
                     ("push_mpls", 3), ("pop_mpls", pop),
                     ("dec_mpls_ttl", 6 if mpls else 0), ("set_mpls_ttl", 3 if mpls else 0)]
            kind = r.choices([k for k, _ in kinds], [w for _, w in kinds])[0]
            if kind == "output":
                out.append(self._output())
            elif kind == "set_field":
                out.append(self._set_field(ctx))
            elif kind == "push_vlan":
                out.append(f"push_vlan:0x{r.choice((0x8100, 0x8100, 0x88A8)):04x}")
                pushes += 1
                if ctx is not None:
                    ctx.tags += 1
            elif kind == "pop_vlan":
                out.append("pop_vlan")
                if ctx is not None:
                    ctx.tags -= 1
            elif kind == "dec_ttl":
                out.append("dec_ttl")
            elif kind == "mod_nw_ttl":
                out.append(f"mod_nw_ttl:{r.choice(TTLS)}")
            elif kind == "push_mpls":
                out.append(self._push_mpls(ctx))
            elif kind == "pop_mpls":
                out.append(self._pop_mpls(ctx))
            elif kind == "dec_mpls_ttl":
                out.append("dec_mpls_ttl")
            elif kind == "set_mpls_ttl":
                out.append(f"set_mpls_ttl:{r.choice(TTLS)}")
            else:
                out.append(f"group:{r.choice(self.apply_group_ids)}")
        return out

    def _write_actions(self, ctx: _Ctx) -> list[str]:
        """An action set fragment in the order the action set runs it (section 5.10):
        pop (VLAN, MPLS), push (MPLS, VLAN), dec TTL (IP, MPLS), set TTL (IP, MPLS),
        set-fields, then a group or an output; now and then a push_mpls comes after the
        set-fields instead (ovs-ofctl checks the set-fields as written, before the push;
        the action set still pushes first)."""
        r = self.rng
        ctx = ctx.copy()
        acts: list[str] = []
        if ctx.tagged and self._p(0.1):
            acts.append("pop_vlan")
            ctx.tags -= 1
        if ctx.mpls and ctx.inner is not None and self._p(0.3):
            acts.append(self._pop_mpls(ctx))
        late_push = None
        if self._p(0.06):
            if self._p(0.3):
                late_push = self._push_mpls(None)
            else:
                acts.append(self._push_mpls(ctx))
        if ctx.tags < 2 and self._p(0.1):
            acts.append(f"push_vlan:0x{r.choice((0x8100, 0x88A8)):04x}")
            ctx.tags += 1
        ip = ctx.l3 in ("ipv4", "ipv6")
        if ip and self._p(0.15):
            acts.append("dec_ttl")
        if ctx.mpls and self._p(0.15):
            acts.append("dec_mpls_ttl")
        if ip and self._p(0.05):
            acts.append(f"mod_nw_ttl:{r.choice(TTLS)}")
        if ctx.mpls and self._p(0.08):
            acts.append(f"set_mpls_ttl:{r.choice(TTLS)}")
        seen: set[str] = set()
        for _ in range(r.choice((0, 0, 1, 1, 2))):
            sf = self._set_field(ctx)
            name = sf.rsplit(">", 1)[1]
            if name not in seen:
                seen.add(name)
                acts.append(sf)
        if late_push is not None:
            acts.append(late_push)
        if self._p(0.75):
            if self.group_ids and self._p(0.25):
                acts.append(f"group:{r.choice(self.group_ids)}")
            else:
                acts.append(self._output())
        return acts

    def _match(self, table: int, cls: str) -> tuple[list[str], _Ctx]:
        r = self.rng
        m: list[str] = []
        ctx = _Ctx()
        if self._p(0.25):
            m.append(f"in_port={r.randint(1, self.n_ports)}")
        for f in ("dl_src", "dl_dst"):
            if self._p(0.15):
                v = r.choice(MACS)
                m.append(f"{f}={v}/{r.choice(MAC_MASKS)}" if self._p(0.3) else f"{f}={v}")
        if self._p(0.3):
            kind = r.choice(("vid", "vid", "untagged", "tagged", "pcp"))
            if kind == "vid":
                m.append(f"dl_vlan={r.choice(VIDS)}")
            elif kind == "untagged":
                m.append("vlan_tci=0x0000/0x1fff")
            elif kind == "tagged":
                m.append("vlan_tci=0x1000/0x1000")
            else:
                m.append(f"dl_vlan_pcp={r.randrange(8)}")
            ctx.tags = 0 if kind == "untagged" else 1
        if table > 0 and self._p(0.35):
            meta, mask = r.choice(META_VALUES), r.choice(META_MASKS)
            m.append(f"metadata=0x{meta & mask:x}/0x{mask:x}" if mask != (1 << 64) - 1
                     else f"metadata=0x{meta:x}")
        v6 = cls in ("ipv6", "tcp6", "udp6", "sctp6", "icmp6")
        v4 = cls in ("ip", "tcp", "udp", "sctp", "icmp")
        if cls == "raw":
            m.append(f"dl_type=0x{fr.ETH_RAW:04x}")
        elif cls in ("mpls", "mplsm"):
            m.append(cls)
            ctx.l3 = "mpls"
            if self._p(0.35):
                m.append(f"mpls_label={r.choice(MPLS_LABELS)}")
            if self._p(0.2):
                m.append(f"mpls_tc={r.randrange(8)}")
            if self._p(0.6):
                bos = r.randrange(2)
                m.append(f"mpls_bos={bos}")
                ctx.inner = "payload" if bos else "mpls"
        elif cls == "arp":
            m.append("arp")
            ctx.l3 = "arp"
            if self._p(0.3):
                m.append(f"arp_op={r.choice((1, 2))}")
            for f in ("arp_spa", "arp_tpa"):
                if self._p(0.3):
                    m.append(f"{f}={r.choice(IP4_NETS if self._p(0.4) else IP4)}")
            for f in ("arp_sha", "arp_tha"):
                if self._p(0.15):
                    m.append(f"{f}={r.choice(MACS)}")
        elif v4 or v6:
            m.append(cls)
            ctx.l3 = "ipv6" if v6 else "ipv4"
            if v4:
                for f in ("nw_src", "nw_dst"):
                    if self._p(0.3):
                        m.append(f"{f}={r.choice(IP4_NETS if self._p(0.5) else IP4)}")
                if cls == "ip" and self._p(0.1):
                    m.append(f"nw_proto={IPPROTO_GRE}")
            else:
                for f in ("ipv6_src", "ipv6_dst"):
                    if self._p(0.3):
                        m.append(f"{f}={r.choice(IP6_NETS if self._p(0.5) else IP6)}")
                if self._p(0.15):
                    lab = r.choice(FLABELS)
                    m.append(f"ipv6_label=0x{lab & 0xFF:x}/0xff" if self._p(0.5)
                             else f"ipv6_label=0x{lab:x}")
            if self._p(0.1):
                m.append(f"ip_dscp={r.randrange(64)}")
            if self._p(0.1):
                m.append(f"nw_ecn={r.randrange(4)}")
            l4 = {"tcp": "tcp", "udp": "udp", "sctp": "sctp", "icmp": "icmp", "tcp6": "tcp",
                  "udp6": "udp", "sctp6": "sctp", "icmp6": "icmp6"}.get(cls)
            ctx.l4 = l4
            if l4 in ("tcp", "udp", "sctp"):
                for f in ("src", "dst"):
                    if self._p(0.35):
                        port = r.choice(L4_PORTS)
                        if self._p(0.3):
                            mask = r.choice(L4_MASKS)
                            m.append(f"{l4}_{f}=0x{port & mask:x}/0x{mask:x}")
                        else:
                            m.append(f"{l4}_{f}={port}")
            elif l4 == "icmp":
                t, code = r.choice(ICMP4)
                if self._p(0.5):
                    m.append(f"icmp_type={t}")
                if self._p(0.3):
                    m.append(f"icmp_code={code}")
            elif l4 == "icmp6":
                t, code = r.choice(ICMP6)
                if self._p(0.5):
                    m.append(f"icmpv6_type={t}")
                    if t in (135, 136):
                        ctx.nd = True
                        if self._p(0.5):
                            m.append(f"nd_target={r.choice(IP6)}")
                if self._p(0.2):
                    m.append(f"icmpv6_code={code}")
        return m, ctx

    def _instructions(self, table: int, n_tables: int, ctx: _Ctx) -> str:
        r = self.rng
        parts: list[str] = []
        self.table = table
        self.apply_group_ids = self.group_ids if table == 0 else [
            g for g in self.group_ids if g not in self.select_ids]
        if self._pop_ok(ctx) and self._p(0.4):
            parts.append(self._pop_mpls(ctx))  # most MPLS flows are where labels go
        if self._p(0.65):
            parts += self._actions(ctx, r.randint(1, 4), allow_group=True)
        if self._p(0.08):
            parts.append("clear_actions")
        if self._p(0.3) and not any(map(_pops_to_l3, parts)):
            acts = self._write_actions(ctx)
            if acts:
                parts.append(f"write_actions({','.join(acts)})")
        if n_tables > 1 and self._p(0.25):
            v, mask = r.choice(META_VALUES), r.choice(META_MASKS)
            parts.append(f"write_metadata:0x{v:x}/0x{mask:x}")
        if table < n_tables - 1 and self._p(0.55):
            parts.append(f"goto_table:{r.randint(table + 1, n_tables - 1)}")
        return ",".join(parts) if parts else "drop"

    def _bucket(self, gid: int = 0) -> str:
        acts = self._actions(None, self.rng.randint(1, 3), allow_group=False)
        if any(map(_pops_to_l3, acts)):  # nothing after it that OVS recirculates for
            acts = [a for a in acts if _pops_to_l3(a) or a == "pop_vlan"
                    or a.endswith(("->eth_src", "->eth_dst", "->vlan_vid", "->vlan_pcp"))
                    or a.startswith(("output:", "CONTROLLER")) or a in _RESERVED_OUT]
        # Chaining: a group made before this one, so the chain ends and has no loop.
        chained = [g for g in self.group_ids if g < gid and g not in self.select_ids]
        if chained and self._p(0.35):
            acts.append(f"group:{self.rng.choice(chained)}")
        return ",".join(acts)

    def _group(self, gid: int) -> str:
        r = self.rng
        kind = r.choices(("all", "select", "indirect"), (5, 4, 3))[0]
        if kind == "indirect":
            return f"group_id={gid},type=indirect,bucket=actions={self._bucket(gid)}"
        if kind == "all":
            buckets = [f"bucket=actions={self._bucket(gid)}" for _ in range(r.randint(1, 3))]
            return f"group_id={gid},type=all,{','.join(buckets)}"
        n = r.randint(1, 3)
        if self._p(0.5):
            same = self._bucket()
            buckets = [f"bucket=weight:{r.randint(1, 100)},actions={same}" for _ in range(n)]
        else:
            live = r.randrange(n)
            buckets = [f"bucket=weight:{r.randint(1, 100) if i == live else 0},"
                       f"actions={self._bucket()}" for i in range(n)]
        self.select_ids.add(gid)
        return f"group_id={gid},type=select,{','.join(buckets)}"

    def ruleset(self, seed: str) -> RuleSet:
        r = self.rng
        rs = RuleSet(seed=seed, n_tables=r.randint(1, 5))
        self.group_ids = list(range(1, r.choice((0, 1, 2, 3)) + 1))
        self.select_ids = set()
        rs.groups = [self._group(g) for g in self.group_ids]
        cookie = 1
        for t in range(rs.n_tables):
            n = r.randint(2, 10)
            key: set[str] = set()
            for prio in r.sample(range(1, 1000), n):
                for _ in range(20):
                    cls = r.choices([c for c, _ in _CLASSES], [w for _, w in _CLASSES])[0]
                    match, ctx = self._match(t, cls)
                    union = key | key_fields(match)
                    if sum(KEY_BYTES[f] for f in union) <= KEY_MAX:
                        break
                else:
                    continue
                key = union
                acts = self._instructions(t, rs.n_tables, ctx)
                head = ",".join([f"table={t}", f"cookie={cookie}", f"priority={prio}", *match])
                rs.flows.append(f"{head},actions={acts}")
                cookie += 1
            if self._p(0.5):
                miss = r.choices(["CONTROLLER", "drop", f"output:{r.randint(1, self.n_ports)}",
                                  f"goto_table:{min(t + 1, rs.n_tables - 1)}"],
                                 [3, 2, 2, 3 if t < rs.n_tables - 1 else 0])[0]
                rs.flows.append(f"table={t},cookie={cookie},priority=0,actions={miss}")
                cookie += 1
        return rs


def gen_ruleset(seed: str, n_ports: int = 4) -> RuleSet:
    """The rule set of @seed (any string; the same seed always gives the same rules)."""
    return RuleGen(random.Random(f"rules:{GENERATOR_VERSION}:{seed}"), n_ports).ruleset(seed)


# ---------------------------------------------------------------------------
# Packets
# ---------------------------------------------------------------------------


@dataclass
class Packet:
    """One input: the OpenFlow port it enters and its bytes (tagged with ``ident``)."""

    ident: int
    in_port: int
    frame: bytes

    @property
    def summary(self) -> str:
        return f"#{self.ident} in_port={self.in_port} {fr.describe(self.frame)}"


class PacketGen:
    """Draws packets from @rng (pools shared with RuleGen)."""

    def __init__(self, rng: random.Random, n_ports: int = 4) -> None:
        self.rng = rng
        self.n_ports = n_ports

    def _p(self, prob: float) -> bool:
        return self.rng.random() < prob

    def _payload(self, ident: int, min_len: int = 0) -> bytes:
        r = self.rng
        mid = bytes(r.randrange(256) for _ in range(max(r.randint(0, 24), min_len - 16)))
        return fr.tag(ident) + mid + fr.tag(ident)

    def _l4(self, proto: int, ident: int, pseudo_fn: Callable[[int, int], bytes]) -> bytes:
        """An L4 segment of @proto with payload, checksum filled (sometimes wrong)."""
        r = self.rng
        if proto in (IPPROTO_TCP, IPPROTO_UDP, IPPROTO_SCTP):
            seg = fr.l4_header(proto, r.choice(L4_PORTS), r.choice(L4_PORTS),
                               self._payload(ident))
        elif proto in (IPPROTO_ICMP, IPPROTO_ICMPV6):
            t, code = r.choice(ICMP4 if proto == IPPROTO_ICMP else ICMP6)
            if proto == IPPROTO_ICMPV6 and t in (135, 136):
                # A well-formed NS/NA: target, a link-layer address option and the tag in an
                # option of an unknown type (skipped by parsers; nothing to misread as ND).
                lla = struct.pack("!BB6s", 1 if t == 135 else 2, 1, fr.mac(r.choice(MACS[:4])))
                opt = struct.pack("!BB", 253, 2) + fr.tag(ident) + bytes(6)
                body = (struct.pack("!BBHI", t, 0, 0, 0 if t == 135 else 0x60000000)
                        + fr.ip6(r.choice(IP6)) + lla + opt)
                seg = body
            else:
                seg = fr.l4_header(proto, 0, 0, self._payload(ident), icmp_type=t,
                                   icmp_code=code)
        else:
            seg = self._payload(ident)
        pseudo = pseudo_fn(proto, len(seg))
        return fr.l4_with_csum(proto, seg, pseudo, udp_zero=self._p(0.2),
                               bad=self._p(0.03))

    def _ipv4(self, ident: int) -> bytes:
        r = self.rng
        proto = r.choices([IPPROTO_TCP, IPPROTO_UDP, IPPROTO_SCTP, IPPROTO_ICMP, IPPROTO_GRE],
                          [30, 30, 12, 15, 5])[0]
        src, dst = r.choice(IP4), r.choice(IP4)
        shape = r.choices(["plain", "options", "first", "later", "bad_csum", "long", "short"],
                          [70, 4, 6, 6, 5, 3, 2])[0]

        def pseudo(p: int, n: int) -> bytes:
            return fr.ip4(src) + fr.ip4(dst) + struct.pack("!BBH", 0, p, n)

        if shape == "later":
            body = self._payload(ident, min_len=40)
            frag, mf = r.randint(1, 185), self._p(0.5)
        else:
            body = self._l4(proto, ident, pseudo)
            frag, mf = 0, shape == "first"
        options = b"\x01\x01\x01\x00" if shape == "options" else b""
        total = None
        if shape == "long":
            total = 20 + len(body) + r.randint(1, 40)
        elif shape == "short":
            total = r.choice((0, 12, 19))
        tos = (r.randrange(64) << 2) | r.randrange(4)
        hdr = fr.ipv4_header(src, dst, proto, len(body), ttl=r.choice(TTLS), tos=tos,
                             ident=ident & 0xFFFF, frag=frag, mf=mf, options=options,
                             total_len=total, bad_csum=shape == "bad_csum")
        return hdr + body

    def _ipv6(self, ident: int) -> bytes:
        r = self.rng
        proto = r.choices([IPPROTO_TCP, IPPROTO_UDP, IPPROTO_SCTP, IPPROTO_ICMPV6],
                          [30, 30, 10, 25])[0]
        src, dst = r.choice(IP6), r.choice(IP6)
        shape = r.choices(["plain", "hopopts", "first", "later", "long"], [82, 4, 5, 5, 4])[0]

        def pseudo(p: int, n: int) -> bytes:
            return fr.ip6(src) + fr.ip6(dst) + struct.pack("!I3xB", n, p)

        ext = b""
        nh = proto
        if shape == "later":
            body = self._payload(ident, min_len=40)
            ext = struct.pack("!BBHI", proto, 0, (r.randint(1, 185) << 3) | r.randrange(2),
                              ident)
            nh = fr.IPV6_FRAGMENT
        else:
            body = self._l4(proto, ident, pseudo)
            if shape == "first":
                ext = struct.pack("!BBHI", proto, 0, 1, ident)
                nh = fr.IPV6_FRAGMENT
            elif shape == "hopopts":
                ext = struct.pack("!BB", proto, 0) + b"\x01\x04\x00\x00\x00\x00"
                nh = fr.IPV6_HOPOPTS
        plen = len(ext) + len(body) + (r.randint(1, 40) if shape == "long" else 0)
        hdr = fr.ipv6_header(src, dst, nh, plen, hlim=r.choice(TTLS),
                             tclass=r.randrange(256), flabel=r.choice(FLABELS))
        return hdr + ext + body

    def _mpls(self, ident: int) -> tuple[int, bytes]:
        """An MPLS EtherType and body: 1-3 labels (bottom of stack on the last) over IPv4,
        IPv6 or a raw payload."""
        r = self.rng
        inner = r.choices(["ipv4", "ipv6", "raw"], [45, 30, 25])[0]
        if inner == "ipv4":
            body = self._ipv4(ident)
        elif inner == "ipv6":
            body = self._ipv6(ident)
        else:
            body = self._payload(ident, min_len=8)
        n = r.choices((1, 2, 3), (60, 30, 10))[0]
        labels = b"".join(
            fr.mpls_lse(r.choice(MPLS_LABELS) if self._p(0.9) else r.randrange(1 << 20),
                        r.randrange(8), i == n - 1, r.choice(TTLS))
            for i in range(n))
        return fr.ETH_MPLS if self._p(0.85) else fr.ETH_MPLS_MC, labels + body

    def packet(self, ident: int) -> Packet:
        r = self.rng
        tags = b""
        n_tags = r.choices((0, 1, 2), (60, 30, 10))[0]
        for i in range(n_tags):
            tpid = fr.ETH_QINQ if i == 0 and n_tags == 2 and self._p(0.5) else fr.ETH_VLAN
            tags += fr.vlan_tag(tpid, r.choice([*VIDS, 0]) if self._p(0.9) else 0,
                                r.randrange(8))
        kind = r.choices(["ipv4", "ipv6", "arp", "raw", "mpls"], [55, 28, 10, 7, 13])[0]
        if kind == "mpls":
            et, body = self._mpls(ident)
        elif kind == "ipv4":
            et, body = fr.ETH_IPV4, self._ipv4(ident)
        elif kind == "ipv6":
            et, body = fr.ETH_IPV6, self._ipv6(ident)
        elif kind == "arp":
            et = fr.ETH_ARP
            body = fr.arp_body(r.choice((1, 2)), r.choice(MACS[:4]), r.choice(IP4),
                               r.choice(MACS), r.choice(IP4)) + self._payload(ident)
        else:
            et, body = fr.ETH_RAW, self._payload(ident, min_len=8)
        frame = fr.ethernet(r.choice(MACS), r.choice(MACS[:4]), et, body, tags)
        if len(frame) < 60 and self._p(0.7):
            frame += bytes(60 - len(frame))
        elif self._p(0.04):
            frame += bytes(r.randrange(256) for _ in range(r.randint(1, 8)))
        return Packet(ident, r.randint(1, self.n_ports), frame)


def gen_packets(seed: str, n: int, first_ident: int = 0, n_ports: int = 4) -> list[Packet]:
    """@n packets of @seed, idents first_ident, first_ident + 1, ..."""
    g = PacketGen(random.Random(f"packets:{GENERATOR_VERSION}:{seed}"), n_ports)
    return [g.packet(first_ident + i) for i in range(n)]
