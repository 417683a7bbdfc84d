"""Seed 001's pipeline-decomposition study: its test cases and its analysis procedure.

Test cases (Brockelsby & Dutta, "Performance Implications of Problem Decomposition
Approaches for SDN Pipelines"), as flow files in ovs-ofctl syntax plus Sluice table
declarations (stripped for Open vSwitch), and the sluice-gen streams that exercise them.
Port 1 faces the generator's transmit side, port 2 its receive side (uni-directional).

  tc1        control: one table, in_port=1 -> 2 and in_port=2 -> 1
  tc2_1k     table depth: 1,024 high-priority eth_dst entries the main stream never matches,
             plus the two low-priority forwarding entries; a 1 Mb/s side stream cycles
             through all 1,024 high-priority entries
  tc2_32k    the same with 32,768 entries
  tc3_N      pipeline length: tables 0..N-1 chained by goto_table, the last one forwards
  tc4/5/6    the seed's Pipelines 1, 2 and 3 (single table of 25 rows, two tables, four
             tables) with concrete values: J/K/L = 10.1.1.0/24, 10.2.2.0/24, 10.3.3.0/24;
             M2/M4/M6/M8 = 02:00:00:00:00:02/04/06/08; VLANs 1/2 -> 11/12 (mod_vlan_vid);
             groups 1 and 2 of type all with one bucket output:2 (the "flood" groups of
             the two VLANs on a two-port switch).  24 streams, one per forwarding row, and
             three for the DROP rows (expected dropped, not counted as loss).

Analysis procedure (the seed's section 5):
  * decomposition cost: per table rows x match fields (the declared fields of the table,
    else the union of the fields its flows match), and the total: 200 / 54 / 53 for
    Pipelines 1-3;
  * L, the longest goto chain (tables) of a rule set, from table 0;
  * N, the shortest goto chain that loses packets at a given rate and frame size
    (measured by sluice.bench.decomposition); L < N means no loss from pipeline length.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

# Concrete values of the seed's symbols.
NET = {"J": "10.1.1.0/24", "K": "10.2.2.0/24", "L": "10.3.3.0/24"}
HOST = {"J": "10.1.1.10", "K": "10.2.2.20", "L": "10.3.3.30"}
MAC = {f"M{i}": f"02:00:00:00:00:{i:02x}" for i in (2, 4, 6, 8)}
UNKNOWN_MAC = "02:00:00:00:00:99"
SRC_MAC = "02:00:00:00:01:01"
VLAN_OUT = {1: 11, 2: 12}
#: Groups 1 and 2: the per-VLAN flood groups (type all; one other port on this switch).
GROUPS = ["group_id=1,type=all,bucket=output:2", "group_id=2,type=all,bucket=output:2"]

#: The six ACL services: (source net, destination net, protocol, destination port).
SERVICES = [("J", "K", "tcp", 80), ("J", "K", "tcp", 443), ("K", "L", "tcp", 3306),
            ("K", "L", "udp", 53), ("K", "L", "udp", 123), ("K", "L", "udp", 514)]
#: Known MAC per (VLAN, destination net) in Pipeline 1's first twelve rows.
KNOWN = {(1, "K"): "M2", (1, "L"): "M4", (2, "K"): "M6", (2, "L"): "M8"}

# Declared match fields of each table (Sluice's table declarations join them with '+').
ACL_FIELDS = "dl_type+nw_src+nw_dst+nw_proto+tcp_dst+udp_dst"
P1_FIELDS = "dl_vlan+dl_type+dl_dst+nw_src+nw_dst+nw_proto+tcp_dst+udp_dst"
L2_FIELDS = "dl_vlan+dl_dst"
L4_FIELDS = "dl_type+nw_proto+tcp_dst+udp_dst"


def _svc_match(src: str, dst: str, proto: str, port: int) -> str:
    return f"{proto},nw_src={NET[src]},nw_dst={NET[dst]},{proto}_dst={port}"


def _l2_rows(table: int) -> list[str]:
    rows = []
    for vlan in (1, 2):
        for net in ("K", "L"):
            rows.append(f"table={table},priority=200,dl_vlan={vlan},"
                        f"dl_dst={MAC[KNOWN[(vlan, net)]]}"
                        f" actions=mod_vlan_vid:{VLAN_OUT[vlan]},output:2")
    for vlan in (1, 2):
        rows.append(f"table={table},priority=100,dl_vlan={vlan}"
                    f" actions=mod_vlan_vid:{VLAN_OUT[vlan]},group:{vlan}")
    return rows


def pipeline1() -> list[str]:
    """Seed Pipeline 1: one table, 25 rows x 8 match fields."""
    out = [f"table=0,kind=mask,fields={P1_FIELDS},name=single"]
    for vlan in (1, 2):
        for src, dst, proto, port in SERVICES:
            out.append(f"table=0,priority=200,dl_vlan={vlan},dl_dst={MAC[KNOWN[(vlan, dst)]]},"
                       f"{_svc_match(src, dst, proto, port)}"
                       f" actions=mod_vlan_vid:{VLAN_OUT[vlan]},output:2")
    for vlan in (1, 2):
        for src, dst, proto, port in SERVICES:
            # As in the seed: VLAN 1's first wildcard row uses group 2, the others group 1.
            grp = 2 if vlan == 2 or (src, proto, port) == ("J", "tcp", 80) else 1
            out.append(f"table=0,priority=100,dl_vlan={vlan},{_svc_match(src, dst, proto, port)}"
                       f" actions=mod_vlan_vid:{VLAN_OUT[vlan]},group:{grp}")
    out.append("table=0,priority=0 actions=drop")
    return out


def pipeline2() -> list[str]:
    """Seed Pipeline 2: ACL table (7 x 6) then L2 table (6 x 2)."""
    out = [f"table=0,kind=mask,fields={ACL_FIELDS},name=acl",
           f"table=1,kind=mask,fields={L2_FIELDS},name=l2"]
    for src, dst, proto, port in SERVICES:
        out.append(f"table=0,priority=100,{_svc_match(src, dst, proto, port)}"
                   " actions=goto_table:1")
    out.append("table=0,priority=0 actions=drop")
    return out + _l2_rows(1)


def pipeline3() -> list[str]:
    """Seed Pipeline 3: ACL divide (3 x 3), client L4 (3 x 4), server L4 (5 x 4), L2 (6 x 2)."""
    out = ["table=0,kind=mask,fields=dl_type+nw_src+nw_dst,name=acl_divide",
           f"table=1,kind=mask,fields={L4_FIELDS},name=l4_client",
           f"table=2,kind=mask,fields={L4_FIELDS},name=l4_server",
           f"table=3,kind=mask,fields={L2_FIELDS},name=l2",
           f"table=0,priority=100,ip,nw_src={NET['J']},nw_dst={NET['K']} actions=goto_table:1",
           f"table=0,priority=100,ip,nw_src={NET['K']},nw_dst={NET['L']} actions=goto_table:2",
           "table=0,priority=0 actions=drop"]
    for src, _dst, proto, port in SERVICES:
        t = 1 if src == "J" else 2
        out.append(f"table={t},priority=100,{proto},{proto}_dst={port} actions=goto_table:3")
    out += ["table=1,priority=0 actions=drop", "table=2,priority=0 actions=drop"]
    return out + _l2_rows(3)


def tc1() -> list[str]:
    return ["table=0,priority=1,in_port=1 actions=output:2",
            "table=0,priority=1,in_port=2 actions=output:1"]


def tc2_mac(i: int) -> str:
    """The i-th high-priority MAC of TC2 (never the main stream's destination)."""
    return f"02:10:00:{(i >> 16) & 0xff:02x}:{(i >> 8) & 0xff:02x}:{i & 0xff:02x}"


def tc2(depth: int) -> list[str]:
    rows = [f"table=0,priority=200,dl_dst={tc2_mac(i)} actions=output:2" for i in range(depth)]
    return rows + tc1()


def tc3(n: int) -> list[str]:
    """A goto chain of n tables; the last one holds the forwarding match."""
    if not 1 <= n <= 254:
        raise ValueError(f"chain length {n}: must be 1..254")
    rows = [f"table={t},priority=1 actions=goto_table:{t + 1}" for t in range(n - 1)]
    return rows + [f"table={n - 1},priority=1,in_port=1 actions=output:2",
                   f"table={n - 1},priority=1,in_port=2 actions=output:1"]


def flows(case: str) -> list[str]:
    """Flow-file lines of a test case name (tc1, tc2_1k, tc2_32k, tc3_N, tc4, tc5, tc6)."""
    if case == "tc1":
        return tc1()
    if case == "tc2_1k":
        return tc2(1024)
    if case == "tc2_32k":
        return tc2(32768)
    m = re.fullmatch(r"tc3_(\d+)", case)
    if m:
        return tc3(int(m.group(1)))
    if case in ("tc4", "tc5", "tc6"):
        return {"tc4": pipeline1, "tc5": pipeline2, "tc6": pipeline3}[case]()
    raise ValueError(f"unknown test case '{case}' (tc1, tc2_1k, tc2_32k, tc3_N, tc4, tc5, tc6)")


def groups(case: str) -> list[str]:
    """Groups a test case needs (ovs-ofctl add-group syntax)."""
    return GROUPS if case in ("tc4", "tc5", "tc6") else []


#: Streams of TC4-TC6: 24 forwarding rows and 3 expected-dropped streams.
N_STREAMS_TC456 = 27
N_FORWARD_TC456 = 24


def streams(case: str, gbps: float, size: int) -> list[str]:
    """sluice-gen stream specifications for a test case at a layer-1 rate (Gb/s)."""
    base = f"size={size},eth_src={SRC_MAC}"
    if case == "tc1" or case.startswith("tc3_"):
        return [f"name=main,{base},gbps={gbps:.6g},eth_dst=02:00:00:00:00:02,proto=udp"]
    if case.startswith("tc2_"):
        depth = 1024 if case == "tc2_1k" else 32768
        return [f"name=main,{base},gbps={gbps:.6g},eth_dst=02:00:00:00:00:02,proto=udp",
                f"name=side,{base},mbps=1,eth_dst={tc2_mac(0)}+{depth},proto=udp"]
    if case in ("tc4", "tc5", "tc6"):
        out = []
        share = gbps / N_STREAMS_TC456
        for vlan in (1, 2):
            for known in (True, False):
                for src, dst, proto, port in SERVICES:
                    mac = MAC[KNOWN[(vlan, dst)]] if known else UNKNOWN_MAC
                    out.append(f"name=v{vlan}{'k' if known else 'u'}{port},{base},"
                               f"gbps={share:.6g},vlan={vlan},eth_dst={mac},ip_src={HOST[src]},"
                               f"ip_dst={HOST[dst]},proto={proto},dport={port},sport=40000")
        # The DROP rows: foreign source (every pipeline's first table), and a client and a
        # server service the ACL does not allow (Pipeline 3's tables 1 and 2).
        for name, ip_src, ip_dst, proto, port in (("drop_net", "10.9.9.9", HOST["K"], "tcp", 80),
                                                  ("drop_client", HOST["J"], HOST["K"], "tcp", 22),
                                                  ("drop_server", HOST["K"], HOST["L"], "udp",
                                                   161)):
            out.append(f"name={name},{base},gbps={share:.6g},vlan=1,eth_dst={MAC['M2']},"
                       f"ip_src={ip_src},ip_dst={ip_dst},proto={proto},dport={port},drop=1")
        return out
    raise ValueError(f"unknown test case '{case}'")


# ---- Analysis: decomposition cost and pipeline length ----

#: ovs-ofctl shorthand -> the match fields it implies (seed columns: ET, PRO).
_SHORTHAND = {"ip": ("dl_type",), "tcp": ("dl_type", "nw_proto"), "udp": ("dl_type", "nw_proto"),
              "icmp": ("dl_type", "nw_proto"), "arp": ("dl_type",), "ipv6": ("dl_type",)}
_ALIASES = {"eth_dst": "dl_dst", "eth_src": "dl_src", "eth_type": "dl_type",
            "vlan_vid": "dl_vlan", "ip_proto": "nw_proto", "ipv4_src": "nw_src",
            "ipv4_dst": "nw_dst"}
_NOT_MATCH = {"table", "priority", "cookie", "idle_timeout", "hard_timeout", "kind", "fields",
              "name", "size", "out_port", "out_group", "importance", "send_flow_rem"}


@dataclasses.dataclass
class TableCost:
    table: int
    rows: int
    fields: list[str]
    declared: bool

    @property
    def cost(self) -> int:
        return self.rows * len(self.fields)


@dataclasses.dataclass
class Analysis:
    tables: list[TableCost]
    longest_chain: int  # L: tables on the longest goto path from table 0

    @property
    def total(self) -> int:
        return sum(t.cost for t in self.tables)

    def verdict(self, n: int | None) -> str:
        """The seed's static check against N (None: no loss found up to the longest tested)."""
        if n is None:
            return f"L = {self.longest_chain}: no chain length tested lost packets"
        if self.longest_chain < n:
            return f"L = {self.longest_chain} < N = {n}: no loss expected from pipeline length"
        return (f"L = {self.longest_chain} >= N = {n}: loss possible if packets traverse "
                f"{n} or more tables (watch chain_traversed, sluice --chain-warn {n})")


def _split_flow(line: str) -> tuple[str, str]:
    line = line.strip()
    m = re.search(r"\s+actions=|,actions=", line)
    if m is None:
        return line, ""
    return line[:m.start()], line[m.end():]


def _fields_of(match: str) -> tuple[int, set[str], str | None]:
    """Table id, match fields and (for tp_src/tp_dst) the transport of one flow's match."""
    table, proto = 0, None
    fields: set[str] = set()
    for tok in filter(None, (t.strip() for t in match.split(","))):
        key, _, val = tok.partition("=")
        key = _ALIASES.get(key, key)
        if key == "table":
            table = int(val)
        elif key in _SHORTHAND and not val:
            fields.update(_SHORTHAND[key])
            if key in ("tcp", "udp"):
                proto = key
        elif key not in _NOT_MATCH:
            fields.add(key)
    if proto is not None:
        for f in ("tp_src", "tp_dst"):
            if f in fields:
                fields.discard(f)
                fields.add(f"{proto}_{f[3:]}")
    return table, fields, proto


def analyse(lines: Iterable[str]) -> Analysis:
    """Decomposition cost per table and the longest goto chain of a flow file's lines."""
    declared: dict[int, list[str]] = {}
    rows: dict[int, int] = {}
    used: dict[int, set[str]] = {}
    gotos: dict[int, set[int]] = {}
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match, actions = _split_flow(line)
        if "kind=" in match and not actions:
            m = re.search(r"fields=([^,]*)", match)
            tm = re.search(r"table=(\d+)", match)
            if tm is None:
                raise ValueError(f"table declaration without table=N: {line}")
            declared[int(tm.group(1))] = ([_ALIASES.get(f, f) for f in m.group(1).split("+")]
                                          if m else [])
            continue
        table, fields, _ = _fields_of(match)
        rows[table] = rows.get(table, 0) + 1
        used.setdefault(table, set()).update(fields)
        for g in re.findall(r"goto_table:(\d+)", actions):
            gotos.setdefault(table, set()).add(int(g))
    tables = []
    for t in sorted(rows):
        decl = declared.get(t)
        if decl:
            tables.append(TableCost(t, rows[t], decl, True))
        else:
            tables.append(TableCost(t, rows[t], sorted(used[t]), False))
    return Analysis(tables, longest_chain(gotos, set(rows)))


def longest_chain(gotos: dict[int, set[int]], tables: set[int]) -> int:
    """Tables on the longest goto path from table 0 (goto only moves forward)."""
    if 0 not in tables:
        return 0
    reach = {0: 1}
    for t in sorted(set(gotos) | tables | {g for gs in gotos.values() for g in gs}):
        if t not in reach:
            continue
        for g in gotos.get(t, ()):
            if g > t:
                reach[g] = max(reach.get(g, 0), reach[t] + 1)
    return max(reach.values())


def format_analysis(name: str, a: Analysis) -> list[str]:
    """Markdown lines: the cost table of one rule set."""
    out = [f"**{name}**: L = {a.longest_chain}, total cost {a.total}", "",
           "| table | rows | match fields | rows x fields |", "|---|---|---|---|"]
    for t in a.tables:
        out.append(f"| {t.table} | {t.rows} | {len(t.fields)} ({','.join(t.fields)}"
                   f"{'' if t.declared else '; from the flows'}) | {t.cost} |")
    return out


def strip_declarations(lines: Sequence[str]) -> list[str]:
    """The flow lines without Sluice's table declarations (for ovs-ofctl)."""
    return [ln for ln in lines if not ("kind=" in ln and "actions" not in ln)]


def main(argv: Sequence[str] | None = None) -> int:
    """python -m sluice.decomp FLOWFILE [--n N]: decomposition cost, L, and L < N."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m sluice.decomp", description=main.__doc__)
    ap.add_argument("flowfile", help="flow file (ovs-ofctl syntax + Sluice table declarations)")
    ap.add_argument("--n", type=int, default=None,
                    help="N: the shortest goto chain that lost packets at your rate and frame "
                         "size (bench/run decomposition --only-chain --chain-rate R)")
    a = ap.parse_args(argv)
    try:
        with open(a.flowfile) as f:
            an = analyse(f)
    except (OSError, ValueError) as e:
        print(f"sluice.decomp: {a.flowfile}: {e}")
        return 2
    print("\n".join(format_analysis(a.flowfile, an)))
    print()
    print(an.verdict(a.n) if a.n else f"L = {an.longest_chain} (give --n N for the check)")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
