"""FlexForward logic (stdlib only): forwarding-mode messages, hypercube addresses,
KeyFlow keys and route IDs, and the edge/transit rules a controller installs.

The switch side is ``src/fwd`` (docs/flexforward.md).  A tableless packet carries
``[value: 4 bytes][tag: 1 byte][hops: 1 byte]`` in its destination MAC: the
hypercube node address or the KeyFlow route ID, the tag selecting the engine, and a
hop budget every tableless hop decrements.  The ingress edge switch writes it (its
OpenFlow rule also picks the first hop, with the same computation the engines do),
the egress switch's engine delivers the packet locally, and its OpenFlow rule
restores the real MAC.

Lossless switchover (:func:`switchover_plan`): (1) every switch enables the old and
the new engine, (2) the ingress edges encode for the new engine, (3) after a drain
time every switch keeps only the new engine.  Packets in flight carry their own
engine's tag, so each is forwarded by the engine it was encoded for.
"""

from __future__ import annotations

import json
import socket
import struct
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Sluice's experimenter id and the forwarding-mode exp_types (docs/openflow.md 12.9).
SL_EXPERIMENTER_ID = 0x534C5543
SL_OFPX_SET_FWD_MODE = 4
SL_OFPX_FWD_MODE = 5
#: Modes on the wire.
MODES = {"openflow": 0, "hypercube": 1, "keyflow": 2}
MODE_NAMES = {v: k for k, v in MODES.items()}
#: Default tags (dst MAC byte 4) per tableless mode, as the switch's defaults.
DEFAULT_TAGS = {"hypercube": 0xF1, "keyflow": 0xF2}
#: Initial hop budget written by the ingress edge.
DEFAULT_HOPS = 16
#: Experimenter error codes for refused parameters.
FWD_ERRORS = {0x400: "unknown-mode", 0x401: "duplicate-mode", 0x402: "duplicate-tag",
              0x403: "duplicate-neighbor", 0x404: "bad-port", 0x405: "bad-parameter"}


@dataclass(frozen=True)
class ModeParams:
    """One enabled tableless engine (openflow has no parameters)."""

    mode: str
    tag: int
    addr: int = 0                                   # hypercube: own address
    neighbors: tuple[tuple[int, int], ...] = ()     # hypercube: (address, port)
    key: int = 0                                    # keyflow: local key

    def text(self) -> str:
        """The switch's text form (``--fwd-mode``, ``sluicectl set-fwd-mode``)."""
        if self.mode == "hypercube":
            nbrs = "".join(f",nbr={a}@{p}" for a, p in self.neighbors)
            return f"hypercube:tag={self.tag:#x},addr={self.addr}{nbrs}"
        return f"keyflow:tag={self.tag:#x},key={self.key}"


def modes_text(modes: Sequence[ModeParams]) -> str:
    """Text form of a set of engines ("openflow" when empty)."""
    return ";".join(m.text() for m in modes) or "openflow"


def fwd_mode_body(modes: Sequence[ModeParams]) -> bytes:
    """The TLVs of an SL_OFPX_SET_FWD_MODE body (after the experimenter header)."""
    out = b""
    for m in modes:
        code = MODES[m.mode]
        if m.mode == "hypercube":
            body = struct.pack("!IHH", m.addr, len(m.neighbors), 0)
            body += b"".join(struct.pack("!II", a, p) for a, p in m.neighbors)
        elif m.mode == "keyflow":
            body = struct.pack("!II", m.key, 0)
        else:
            body = b""
        out += struct.pack("!HHB3x", code, 8 + len(body), m.tag) + body
    return out


def fwd_mode_msg(modes: Sequence[ModeParams], xid: int = 0,
                 exp_type: int = SL_OFPX_SET_FWD_MODE) -> bytes:
    """A whole SL_OFPX_SET_FWD_MODE (or FWD_MODE) message."""
    body = fwd_mode_body(modes)
    return struct.pack("!BBHIII", 4, 4, 16 + len(body), xid, SL_EXPERIMENTER_ID,
                       exp_type) + body


def parse_fwd_mode_body(data: bytes) -> list[ModeParams]:
    """Decode the TLVs of a FWD_MODE reply (ValueError on malformed data)."""
    out: list[ModeParams] = []
    while data:
        if len(data) < 8:
            raise ValueError("truncated TLV")
        code, tlen, tag = struct.unpack("!HHB", data[:5])
        if tlen < 8 or tlen % 8 or tlen > len(data):
            raise ValueError(f"bad TLV length {tlen}")
        body = data[8:tlen]
        name = MODE_NAMES.get(code)
        if name == "hypercube":
            addr, n = struct.unpack("!IH", body[:6])
            nb = tuple(struct.unpack("!II", body[8 + 8 * i:16 + 8 * i]) for i in range(n))
            out.append(ModeParams("hypercube", tag, addr=addr, neighbors=nb))
        elif name == "keyflow":
            out.append(ModeParams("keyflow", tag, key=struct.unpack("!I", body[:4])[0]))
        elif name is None:
            raise ValueError(f"unknown mode {code}")
        data = data[tlen:]
    return out


# ---------------------------------------------------------------------------
# Topology: links discovered by LLDP, hosts attached to edge ports
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Host:
    name: str
    mac: str
    ip: str
    dpid: int
    port: int


@dataclass
class Topology:
    """Switch-to-switch links (both directions) and hosts."""

    #: dpid -> {port: (peer dpid, peer port)}
    links: dict[int, dict[int, tuple[int, int]]] = field(default_factory=dict)
    #: dpid -> number of ports
    n_ports: dict[int, int] = field(default_factory=dict)
    hosts: list[Host] = field(default_factory=list)

    def add_link(self, a: int, pa: int, b: int, pb: int) -> None:
        self.links.setdefault(a, {})[pa] = (b, pb)
        self.links.setdefault(b, {})[pb] = (a, pa)

    def n_links(self) -> int:
        return sum(len(v) for v in self.links.values()) // 2

    def neighbors(self, dpid: int) -> Iterable[tuple[int, int]]:
        """(port, peer dpid) of a switch."""
        return ((p, peer) for p, (peer, _pp) in sorted(self.links.get(dpid, {}).items()))

    def port_to(self, a: int, b: int) -> int:
        for p, peer in self.neighbors(a):
            if peer == b:
                return p
        raise KeyError(f"no link {a:#x} -> {b:#x}")

    def shortest_path(self, src: int, dst: int) -> list[int]:
        """Switches from @src to @dst (BFS; ties broken by lowest port)."""
        prev: dict[int, int] = {src: src}
        q = deque([src])
        while q:
            u = q.popleft()
            if u == dst:
                break
            for _p, v in self.neighbors(u):
                if v not in prev:
                    prev[v] = u
                    q.append(v)
        if dst not in prev:
            raise ValueError(f"switch {dst:#x} unreachable from {src:#x}")
        path = [dst]
        while path[-1] != src:
            path.append(prev[path[-1]])
        return path[::-1]


def hypercube_addresses(topo: Topology) -> dict[int, int]:
    """Hypercube node addresses: the lowest dpid is 0, its neighbours get one bit each
    (in port order), and every other node the OR of its neighbours one hop closer.
    ValueError when the links do not form a hypercube (an edge whose ends differ in
    other than exactly one bit, or two nodes with one address)."""
    switches = sorted(topo.links)
    if not switches:
        raise ValueError("no links")
    root = switches[0]
    addr = {root: 0}
    dist = {root: 0}
    q = deque([root])
    bit = 0
    while q:
        u = q.popleft()
        for _p, v in topo.neighbors(u):
            if v in dist:
                continue
            dist[v] = dist[u] + 1
            q.append(v)
    for v in sorted(switches, key=lambda s: (dist[s], s)):
        if v == root:
            continue
        if dist[v] == 1:
            addr[v] = 1 << bit
            bit += 1
        else:
            a = 0
            for _p, w in topo.neighbors(v):
                if dist.get(w) == dist[v] - 1:
                    a |= addr[w]
            addr[v] = a
    if len(set(addr.values())) != len(addr):
        raise ValueError("not a hypercube: two switches get the same address")
    for u in switches:
        for _p, v in topo.neighbors(u):
            x = addr[u] ^ addr[v]
            if x == 0 or x & (x - 1):
                raise ValueError(f"not a hypercube: link {u:#x}-{v:#x} joins addresses "
                                 f"{addr[u]} and {addr[v]}")
    return addr


def hypercube_next_port(topo: Topology, addr: Mapping[int, int], dpid: int,
                        dst_addr: int) -> int | None:
    """What the hypercube engine of @dpid does for @dst_addr: the port across the
    lowest differing bit, or None for local delivery."""
    x = addr[dpid] ^ dst_addr
    if x == 0:
        return None
    low = x & -x
    for p, peer in topo.neighbors(dpid):
        if addr[peer] == addr[dpid] ^ low:
            return p
    raise ValueError(f"switch {dpid:#x} has no neighbour across bit {low:#x}")


def coprime_keys(n_ports: Mapping[int, int]) -> dict[int, int]:
    """Pairwise co-prime KeyFlow keys (distinct primes), each above its switch's port
    count, smallest first in dpid order."""
    keys: dict[int, int] = {}
    p = 2
    for dpid in sorted(n_ports):
        p = max(p, n_ports[dpid] + 1)
        while any(p % d == 0 for d in range(2, int(p ** 0.5) + 1)) or p in keys.values():
            p += 1
        keys[dpid] = p
        p += 1
    return keys


def crt(residues: Sequence[tuple[int, int]]) -> int:
    """The smallest R >= 0 with R mod m == r for every (r, m) (moduli pairwise co-prime)."""
    r, m = 0, 1
    for ri, mi in residues:
        # R = r + m * t with r + m t == ri (mod mi)
        t = ((ri - r) * pow(m, -1, mi)) % mi
        r, m = r + m * t, m * mi
    return r


def keyflow_route(topo: Topology, keys: Mapping[int, int], path: Sequence[int],
                  egress_port: int | None = None) -> int:
    """Route ID for @path: residue = next port at each switch, 0 (local delivery) at the
    last one (or @egress_port).  ValueError when it does not fit 32 bits."""
    res = [(topo.port_to(a, b), keys[a]) for a, b in zip(path, path[1:])]
    res.append((egress_port or 0, keys[path[-1]]))
    rid = crt(res)
    if rid >= 1 << 32:
        raise ValueError(f"route ID {rid} for path {path} does not fit 32 bits")
    return rid


def encoded_mac(value: int, tag: int, hops: int = DEFAULT_HOPS) -> str:
    b = struct.pack("!IBB", value, tag, hops)
    return ":".join(f"{x:02x}" for x in b)


# ---------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------

#: Rule priorities (table 0).
PRIO_LLDP = 1000
PRIO_EGRESS = 300
PRIO_INGRESS = 200
PRIO_TRANSIT = 100


@dataclass(frozen=True)
class Rule:
    """One flow entry: match fields (os-ken OFPMatch keyword names) and actions:
    ("set_dst", MAC) and ("output", PORT)."""

    dpid: int
    priority: int
    match: tuple[tuple[str, object], ...]
    actions: tuple[tuple[str, object], ...]

    def flow_text(self) -> str:
        """ovs-ofctl syntax (for logs and sluicectl)."""
        names = {"in_port": "in_port", "eth_dst": "dl_dst", "eth_type": "dl_type"}
        m = ",".join(f"{names[k]}={v}" for k, v in self.match)
        acts = ",".join(f"set_field:{v}->dl_dst" if k == "set_dst" else f"output:{v}"
                        for k, v in self.actions)
        return f"priority={self.priority},{m},actions={acts}" if m else \
            f"priority={self.priority},actions={acts}"


@dataclass
class Plan:
    """What the controller computed from the topology."""

    topo: Topology
    addr: dict[int, int]
    keys: dict[int, int]
    tags: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_TAGS))
    hops: int = DEFAULT_HOPS

    def engine(self, mode: str, dpid: int) -> ModeParams:
        """The parameters of @mode's engine on @dpid."""
        if mode == "hypercube":
            nbrs = tuple((self.addr[peer], p) for p, peer in self.topo.neighbors(dpid))
            return ModeParams("hypercube", self.tags[mode], addr=self.addr[dpid],
                              neighbors=nbrs)
        if mode == "keyflow":
            return ModeParams("keyflow", self.tags[mode], key=self.keys[dpid])
        raise ValueError(f"no engine for mode {mode}")

    def engines(self, modes: Iterable[str], dpid: int) -> list[ModeParams]:
        return [self.engine(m, dpid) for m in sorted(set(modes)) if m != "openflow"]

    def static_rules(self) -> list[Rule]:
        """Rules present in every mode: OpenFlow shortest paths on real MACs (transit and
        egress), and the egress rules that restore the real MAC of tableless packets."""
        rules: list[Rule] = []
        for h in self.topo.hosts:
            for dpid in self.topo.links:
                if dpid == h.dpid:
                    port = h.port
                else:
                    path = self.topo.shortest_path(dpid, h.dpid)
                    port = self.topo.port_to(path[0], path[1])
                rules.append(Rule(dpid, PRIO_TRANSIT, (("eth_dst", h.mac),),
                                  (("output", port),)))
            for mode, tag in sorted(self.tags.items()):
                rules.append(Rule(h.dpid, PRIO_EGRESS,
                                  (("eth_dst", (encoded_mac(0, tag, 0), "00:00:00:00:ff:00")),),
                                  (("set_dst", h.mac), ("output", h.port))))
        return rules

    def ingress_rules(self, mode: str) -> list[Rule]:
        """Rules on each host's edge switch for traffic from that host to every other
        host, encoding for @mode (openflow: plain shortest-path output)."""
        rules: list[Rule] = []
        for src in self.topo.hosts:
            for dst in self.topo.hosts:
                if dst is src:
                    continue
                match = (("in_port", src.port), ("eth_dst", dst.mac))
                acts: tuple[tuple[str, object], ...]
                if src.dpid == dst.dpid:
                    acts = (("output", dst.port),)
                elif mode == "openflow":
                    path = self.topo.shortest_path(src.dpid, dst.dpid)
                    acts = (("output", self.topo.port_to(path[0], path[1])),)
                elif mode == "hypercube":
                    port = hypercube_next_port(self.topo, self.addr, src.dpid,
                                               self.addr[dst.dpid])
                    assert port is not None
                    acts = (("set_dst", encoded_mac(self.addr[dst.dpid], self.tags[mode],
                                                    self.hops)), ("output", port))
                elif mode == "keyflow":
                    path = self.topo.shortest_path(src.dpid, dst.dpid)
                    rid = keyflow_route(self.topo, self.keys, path)
                    first = rid % self.keys[src.dpid]
                    acts = (("set_dst", encoded_mac(rid, self.tags[mode], self.hops)),
                            ("output", first))
                else:
                    raise ValueError(f"unknown mode {mode}")
                rules.append(Rule(src.dpid, PRIO_INGRESS, match, acts))
        return rules


def make_plan(topo: Topology, tags: Mapping[str, int] | None = None) -> Plan:
    """Addresses, keys and tags for @topo.  ValueError when a host MAC could be taken for
    a tableless encoding (its byte 4 equals a tag)."""
    plan = Plan(topo, hypercube_addresses(topo), coprime_keys(topo.n_ports))
    if tags:
        plan.tags.update(tags)
    for h in topo.hosts:
        b4 = int(h.mac.split(":")[4], 16)
        if b4 in plan.tags.values():
            raise ValueError(f"host {h.name} MAC {h.mac}: byte 4 equals a mode tag")
    return plan


def switchover_plan(old: str, new: str) -> list[tuple[str, frozenset[str]]]:
    """The steps of a lossless change from mode @old to @new:
    ("engines", modes every switch enables), ("ingress", mode the edges encode for),
    ("drain", {}), ("engines", final modes)."""
    return [("engines", frozenset({old, new})), ("ingress", frozenset({new})),
            ("drain", frozenset()), ("engines", frozenset({new}))]


def control_request(path: str, req: Mapping[str, Any], timeout: float = 60.0) -> dict[str, Any]:
    """One request to the FlexForward controller's control socket (a unix stream socket,
    one JSON line each way): ``{"cmd": "status"}`` or ``{"cmd": "mode", "mode": M}``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall((json.dumps(dict(req)) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    rep: dict[str, Any] = json.loads(buf)
    return rep
