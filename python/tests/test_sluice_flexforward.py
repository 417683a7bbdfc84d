"""sluice.flexforward: CRT, keys, hypercube addresses, the engines' decisions along every
path of a shuffled 3-cube, and the wire bytes (the same golden vector as src/ofp/test_ofp_fwd.c)."""

from __future__ import annotations

import math
import random

import pytest

from sluice import flexforward as ff


def cube(dim: int = 3, seed: int = 1) -> ff.Topology:
    """A hypercube with shuffled port numbers; host A on switch 1, B on the opposite one."""
    rng = random.Random(seed)
    n = 1 << dim
    ports: dict[int, list[int]] = {i + 1: [] for i in range(n)}
    for i in range(n):
        for b in range(dim):
            if i < i ^ (1 << b):
                ports[i + 1].append((i ^ (1 << b)) + 1)
                ports[(i ^ (1 << b)) + 1].append(i + 1)
    topo = ff.Topology()
    for sw in ports:
        rng.shuffle(ports[sw])
    for a in ports:
        for pa, b in enumerate(ports[a], 1):
            if a < b:
                topo.add_link(a, pa, b, ports[b].index(a) + 1)
    for sw in ports:
        topo.n_ports[sw] = dim + (1 if sw in (1, n) else 0)
    topo.hosts = [ff.Host("A", "02:00:00:00:aa:01", "10.0.0.1", 1, dim + 1),
                  ff.Host("B", "02:00:00:00:bb:02", "10.0.0.2", n, dim + 1)]
    return topo


def test_crt_and_keys() -> None:
    keys = ff.coprime_keys({1: 4, 2: 3, 3: 3, 4: 10})
    assert all(keys[d] > p for d, p in {1: 4, 2: 3, 3: 3, 4: 10}.items())
    vals = list(keys.values())
    assert all(math.gcd(a, b) == 1 for i, a in enumerate(vals) for b in vals[i + 1:])
    res = [(3, 5), (0, 7), (10, 11)]
    r = ff.crt(res)
    assert all(r % m == x for x, m in res) and r < 5 * 7 * 11


@pytest.mark.parametrize("dim,seed", [(2, 3), (3, 1), (3, 7), (4, 2)])
def test_engines_reach_every_switch(dim: int, seed: int) -> None:
    """Walk every ordered pair of switches the way the switch engines would."""
    topo = cube(dim, seed)
    plan = ff.make_plan(topo)
    addr, keys = plan.addr, plan.keys
    assert sorted(addr.values()) == list(range(1 << dim))
    for src in topo.links:
        for dst in topo.links:
            hops = len(topo.shortest_path(src, dst)) - 1
            # Hypercube: lowest differing bit until equal.
            cur, n = src, 0
            while (x := addr[cur] ^ addr[dst]) != 0:
                port = ff.hypercube_next_port(topo, addr, cur, addr[dst])
                assert port is not None
                nxt = topo.links[cur][port][0]
                assert bin(addr[nxt] ^ addr[dst]).count("1") == bin(x).count("1") - 1
                cur, n = nxt, n + 1
            assert cur == dst and n == hops
            # KeyFlow: route ID mod key, 0 = local delivery.
            if src == dst:
                continue
            rid = ff.keyflow_route(topo, keys, topo.shortest_path(src, dst))
            cur, n = src, 0
            while (r := rid % keys[cur]) != 0:
                assert 1 <= r <= topo.n_ports[cur]
                cur, n = topo.links[cur][r][0], n + 1
            assert cur == dst and n == hops


def test_not_a_hypercube() -> None:
    ring = ff.Topology()
    for i in range(5):
        ring.add_link(i + 1, 1, (i + 1) % 5 + 1, 2)
    with pytest.raises(ValueError, match="not a hypercube"):
        ff.hypercube_addresses(ring)


def test_rules_and_tag_collision() -> None:
    topo = cube()
    plan = ff.make_plan(topo)
    ing = {r.match: r for r in plan.ingress_rules("hypercube")}
    a_to_b = ing[(("in_port", 4), ("eth_dst", "02:00:00:00:bb:02"))]
    assert a_to_b.actions[0] == ("set_dst", ff.encoded_mac(plan.addr[8], 0xF1))
    assert a_to_b.actions[1][1] == ff.hypercube_next_port(topo, plan.addr, 1, plan.addr[8])
    kf = {r.match: r for r in plan.ingress_rules("keyflow")}
    mac = str(kf[a_to_b.match].actions[0][1])
    rid = int(mac.replace(":", "")[:8], 16)
    assert kf[a_to_b.match].actions[1] == ("output", rid % plan.keys[1])
    egress = [r for r in plan.static_rules() if r.priority == ff.PRIO_EGRESS]
    assert len(egress) == 2 * 2  # two hosts, two tableless modes
    topo.hosts[0] = ff.Host("A", "02:00:00:00:f1:01", "10.0.0.1", 1, 4)
    with pytest.raises(ValueError, match="byte 4"):
        ff.make_plan(topo)


def test_wire_bytes_match_the_switch_codec() -> None:
    m = ff.ModeParams("hypercube", 0xF1, addr=5, neighbors=((4, 1), (7, 2), (1, 3)))
    golden = bytes.fromhex(
        "04 04 00 38 00 00 00 07 53 4c 55 43 00 00 00 04"
        "00 01 00 28 f1 00 00 00 00 00 00 05 00 03 00 00"
        "00 00 00 04 00 00 00 01 00 00 00 07 00 00 00 02"
        "00 00 00 01 00 00 00 03")
    assert ff.fwd_mode_msg([m], xid=7) == golden
    assert ff.parse_fwd_mode_body(golden[16:]) == [m]
    k = ff.ModeParams("keyflow", 0xC2, key=7)
    assert ff.parse_fwd_mode_body(ff.fwd_mode_body([m, k])) == [m, k]
    assert ff.modes_text([m, k]) == ("hypercube:tag=0xf1,addr=5,nbr=4@1,nbr=7@2,nbr=1@3;"
                                     "keyflow:tag=0xc2,key=7")
    assert ff.modes_text([]) == "openflow"
    with pytest.raises(ValueError):
        ff.parse_fwd_mode_body(b"\x00\x01\x00\x04")
