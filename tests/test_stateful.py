"""Stateful forwarding (OpenState, issue #9): the shipped examples in network namespaces.

Each test runs one flow file of examples/stateful/ on a Sluice whose ports are
net_af_packet devices on veths; the hosts are network namespaces with real
sockets (Python's, run with ``ip netns exec``).  The state machines run in the
data plane only: no controller is attached.  ``sluicectl dump-states`` shows
the states the data plane wrote.

Negative checks ("cannot connect") wait for a connection timeout; positive ones
retry until a deadline.  No assertion depends on how fast anything is.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from sluice import testing
from sluice.testing import Sluice, SluiceConfig, Topology

EXAMPLES = testing.REPO / "examples" / "stateful"
#: Deadline for things that must happen (never a timing assertion).
DEADLINE = 20.0

SERVER = """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(64)
print("listening", flush=True)
while True:
    c, _ = s.accept(); c.close()
"""


@dataclass
class Net:
    sw: Sluice
    hosts: dict[str, str]  # name -> netns
    ips: dict[str, str]
    macs: dict[str, str]


@contextlib.contextmanager
def network(flows: str, n_hosts: int = 3) -> Iterator[Net]:
    """Hosts h1..hN (10.0.0.i, 02:00:00:00:00:0i) on Sluice ports 1..N, running @flows."""
    if not testing.netns_usable():
        pytest.skip("network namespaces are not usable here")
    with contextlib.ExitStack() as stack:
        topo = stack.enter_context(Topology())
        hosts, ips, macs, ifaces = {}, {}, {}, []
        for i in range(1, n_hosts + 1):
            name = f"h{i}"
            ns = topo.add_netns(name)
            ips[name], macs[name] = f"10.0.0.{i}", f"02:00:00:00:00:0{i}"
            a, _ = topo.add_veth("sst", peer_netns=ns, peer_name="eth0",
                                 peer_addr=f"{ips[name]}/24", peer_mac=macs[name])
            hosts[name] = ns
            ifaces.append(a)
        sw = Sluice(SluiceConfig(ports=testing.af_packet_ports(ifaces),
                                 flows_file=str(EXAMPLES / flows), name=testing.unique("slst")))
        stack.callback(sw.stop)
        sw.wait_ready()
        yield Net(sw, hosts, ips, macs)


def server(net: Net, host: str, port: int) -> testing.Proc:
    p = testing.ns_popen(net.hosts[host],
                         [sys.executable, "-c", SERVER, net.ips[host], str(port)], name="srv")
    p.wait_output("listening", DEADLINE)
    return p


def connect(net: Net, src: str, dst: str, port: int, timeout: float = 1.5) -> bool:
    """True when a TCP connection from @src to @dst:@port completes within @timeout."""
    code = ("import socket,sys\n"
            "try:\n socket.create_connection((sys.argv[1], int(sys.argv[2])), "
            "timeout=float(sys.argv[3])).close()\n"
            "except OSError:\n sys.exit(1)\n")
    r = testing.run([sys.executable, "-c", code, net.ips[dst], str(port), str(timeout)],
                    check=False, netns=net.hosts[src], timeout=timeout + 20)
    return r.returncode == 0


def knock(net: Net, src: str, dst: str, ports: list[int]) -> None:
    """One UDP datagram to each of @ports, in order (the switch sees them in order)."""
    code = ("import socket,sys,time\n"
            "s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "for p in sys.argv[2:]:\n"
            " s.sendto(b'knock', (sys.argv[1], int(p))); time.sleep(0.05)\n")
    testing.run([sys.executable, "-c", code, net.ips[dst], *map(str, ports)],
                netns=net.hosts[src])


def ping(net: Net, src: str, dst: str, count: int = 1) -> bool:
    r = testing.run(["ping", "-c", str(count), "-i", "0.05", "-W", "2", net.ips[dst]],
                    check=False, netns=net.hosts[src], timeout=60)
    return r.returncode == 0


def states(net: Net, table: int = 0) -> dict[str, dict[str, int]]:
    """sluicectl dump-states TABLE as {key: entry}."""
    r = net.sw.sluicectl("-j", "dump-states", str(table), check=True)
    return {e["key"]: e for e in json.loads(r.stdout)["entries"]}


def test_port_knocking() -> None:
    """Steps: h2 listens on TCP 22; h1 connects; h1 knocks UDP 1111, 2222, 3333 and
    connects; h3 connects; h1 knocks a wrong sequence (1111, 3333) and connects.
    Verify: h1 is refused before knocking, gets through after the sequence, while h3
    (which never knocked) stays out; dump-states shows h1 in state 3 (open) with an
    idle timeout; after the wrong sequence h1 is out again."""
    with network("port_knocking.flows") as net:
        srv = server(net, "h2", 22)
        try:
            assert not connect(net, "h1", "h2", 22), "SSH open before knocking"
            knock(net, "h1", "h2", [1111, 2222, 3333])
            testing.wait_until(lambda: connect(net, "h1", "h2", 22), DEADLINE,
                               "h1 to get through after knocking")
            st = states(net)
            assert st["ip,nw_src=10.0.0.1"]["state"] == 3, st
            assert st["ip,nw_src=10.0.0.1"]["idle_ms"] == 10000, st
            assert not connect(net, "h3", "h2", 22), "h3 got through without knocking"
            knock(net, "h1", "h2", [1111, 3333])
            assert not connect(net, "h1", "h2", 22), "a wrong sequence left SSH open"
            assert "ip,nw_src=10.0.0.1" not in states(net)
        finally:
            srv.stop()


def test_mac_learning() -> None:
    """Steps: three hosts ping each other (no controller, no flows but the example's);
    then h1 pings h2 20 times while port 3's tx counter is watched.
    Verify: every ping answers; dump-states maps each host's MAC to its port
    (dl_dst keys, states 1, 2, 3); the 20 pings after learning are not flooded to
    port 3 (its tx counter moves by at most 2: a stray broadcast)."""
    with network("mac_learning.flows") as net:
        for a, b in (("h1", "h2"), ("h1", "h3"), ("h2", "h3")):
            testing.wait_until(lambda: ping(net, a, b), DEADLINE,  # noqa: B023 (called at once)
                               f"{a} to ping {b}")
        st = states(net)
        for i in (1, 2, 3):
            key = f"dl_dst=02:00:00:00:00:0{i}"
            assert key in st and st[key]["state"] == i, st

        def tx3() -> int:
            r = net.sw.sluicectl("-j", "dump-ports", "3", check=True)
            d = json.loads(r.stdout)
            ports = d["ports"] if isinstance(d, dict) else d
            return int(ports[0]["tx_packets"])

        before = tx3()
        assert ping(net, "h1", "h2", count=20)
        assert tx3() - before <= 2, "unicast between h1 and h2 was flooded to port 3"


def test_syn_flood_detector() -> None:
    """Steps: h2 listens on TCP 8080; h1 opens connections one after another; h3
    connects; wait for h1 to get through again.
    Verify: h1's first 4 connections succeed and the 5th is refused (state 5, blocked,
    with a hard timeout); h3 is unaffected; h1 gets through again once the hard
    timeout returned it to state 0."""
    with network("syn_flood.flows") as net:
        srv = server(net, "h2", 8080)
        try:
            # ARP first (ICMP is not counted), so no SYN waits for an address.
            testing.wait_until(lambda: ping(net, "h1", "h2"), DEADLINE, "h1 to ping h2")
            testing.wait_until(lambda: ping(net, "h3", "h2"), DEADLINE, "h3 to ping h2")
            for n in range(1, 5):
                assert connect(net, "h1", "h2", 8080), f"connection {n} refused"
            assert not connect(net, "h1", "h2", 8080), "5th SYN within 10 s not blocked"
            st = states(net)["ip,nw_src=10.0.0.1"]
            assert st["state"] == 5 and st["hard_ms"] == 5000, st
            assert connect(net, "h3", "h2", 8080), "another client was blocked too"
            testing.wait_until(lambda: connect(net, "h1", "h2", 8080), DEADLINE,
                               "h1 to be unblocked after the hard timeout")
        finally:
            srv.stop()
