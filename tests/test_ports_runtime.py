"""Ports at run time: sluicectl add-port / del-port, port names, port_status to controllers."""

from __future__ import annotations

import json
import struct
import time
from pathlib import Path

import pytest
from scapy.all import IP, UDP, Ether, Raw  # type: ignore[import-untyped]

from sluice import ofp, testing
from sluice.testing import Sluice, SluiceConfig, read_pcap, write_pcap

OFPT_PORT_STATUS = 12
OFPPR_ADD, OFPPR_DELETE = 0, 1


def frames(n: int, tag: int) -> list[bytes]:
    return [bytes(Ether(src="02:00:00:00:00:0a", dst="02:00:00:00:00:0b")
                  / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=1000 + i, dport=9)
                  / Raw(bytes([tag, i]) * 20)) for i in range(n)]


def ctl_ok(sw: Sluice, *args: str) -> str:
    r = sw.sluicectl(*args)
    assert r.returncode == 0, f"{args}: rc {r.returncode}\n{r.stdout}{r.stderr}"
    return r.stdout


def port_counters(sw: Sluice, port: str) -> dict:
    (p,) = json.loads(ctl_ok(sw, "--json", "dump-ports", port))["ports"]
    return p


def wait_counter(sw: Sluice, port: str, key: str, n: int) -> dict:
    """Poll dump-ports until @port's @key reaches @n (fails on timeout, never on timing)."""
    deadline = time.monotonic() + 20
    while True:
        p = port_counters(sw, port)
        if p[key] >= n or time.monotonic() > deadline:
            return p
        time.sleep(0.05)


def show_ports(sw: Sluice) -> list[tuple[int, str]]:
    return [(p["port_no"], p["name"]) for p in json.loads(ctl_ok(sw, "--json", "show"))["ports"]]


def port_status(c: ofp.Client, timeout: float = 10.0) -> tuple[int, int, str]:
    """The next OFPT_PORT_STATUS: (reason, port_no, name)."""
    m = c.wait_for(lambda m: m.type == OFPT_PORT_STATUS, timeout)
    reason = m.body[0]
    port_no, = struct.unpack_from("!I", m.body, 8)
    name = m.body[8 + 16:8 + 32].rstrip(b"\0").decode()
    return reason, port_no, name


def port_desc(c: ofp.Client) -> list[tuple[int, str]]:
    out = []
    for m in c.multipart(ofp.OFPMP_PORT_DESC):
        body = m.body[8:]
        for off in range(0, len(body), 64):
            port_no, = struct.unpack_from("!I", body, off)
            out.append((port_no, body[off + 16:off + 32].rstrip(b"\0").decode()))
    return out


def final_json(sw: Sluice) -> dict:
    assert sw.stop() == 0, sw.output
    return json.loads(Path(sw.json_path).read_text())


def assert_balanced(j: dict, packet_outs: int = 0) -> None:
    """The conservation law; rx counts the ports, deleted ones and the controller's packet_outs."""
    gone = j["ports_deleted"]
    assert j["rx"] + j["copies"] == j["tx"] + j["tx_drops"] + j["pipeline_drops"], j
    assert j["rx"] == sum(p["rx"] for p in j["ports"]) + gone["rx"] + packet_outs, j
    assert j["tx"] == sum(p["tx"] for p in j["ports"]) + gone["tx"], j


@pytest.mark.parametrize("opts,lcores", [
    ((), "0,1"),
    (("-w", "2"), "0@0,1@1,2@1"),
    (("-w", "2", "--dispatch", "io", "--worker-ring", "4096"), "0@0,1@1,2@1,3@1"),
], ids=["one-worker", "rss-two-workers", "io-core"])
def test_add_del_under_traffic_loses_nothing(sluice_bin: Path, tmp_path: Path,
                                             opts: tuple[str, ...], lcores: str) -> None:
    """Adding and removing a port several times does not drop a packet between the others.

    With one worker, two RSS workers, and the I/O core with two workers.

    Steps:
        1. Port src replays a pcap forever (net_pcap infinite_rx), port sink (net_null)
           counts; the flow floods src's packets.
        2. Six times: add-port net_null1 name=extra ofport=3 (it gets flood copies while it
           is there), check show lists it, then del-port extra and check it is gone.
        3. Stop the switch.
    Verify: sink transmitted every packet src received (no loss, no drop of any reason,
    no tx drop; with the I/O core, but for its dispatch-full drops at rx: see below),
    traffic flowed during the changes (sink's counter grew, the deleted port
    transmitted copies: the JSON's ports_deleted), and the counters balance.
    """
    rx = tmp_path / "in.pcap"
    write_pcap(rx, frames(32, 1))
    # A pcap port has one queue per rx_pcap/tx_pcap: as many as the workers use.
    n_rx = 1 if "io" in opts else (2 if "-w" in opts else 1)
    n_tx = 2 if "-w" in opts else 1
    src = ("net_pcap0," + f"rx_pcap={rx}," * n_rx + "tx_pcap=/dev/null," * n_tx
           + "infinite_rx=1,name=src")
    sw = Sluice(SluiceConfig(ports=[src,
                                    "net_null0,no-rx=1,name=sink"],
                             flows=["in_port=1,actions=FLOOD"], extra=opts, lcores=lcores),
                binary=sluice_bin, workdir=str(tmp_path))
    try:
        sw.wait_ready()
        before = wait_counter(sw, "sink", "tx_packets", 1000)["tx_packets"]
        for _ in range(6):
            out = ctl_ok(sw, "add-port", "net_null1,no-rx=1", "name=extra", "ofport=3")
            assert out.strip() == "port 3 (extra) added", out
            assert (3, "extra") in show_ports(sw)
            wait_counter(sw, "extra", "tx_packets", 1)
            assert ctl_ok(sw, "del-port", "extra").strip() == "port 3 (extra) deleted"
            assert [n for n, _ in show_ports(sw)] == [1, 2]
        assert port_counters(sw, "sink")["tx_packets"] > before
    finally:
        j = final_json(sw)
    ports = {p["name"]: p for p in j["ports"]}
    # The I/O core outruns its workers on an endless source (three lcores share a CPU): its
    # full rings drop with reason dispatch-full, at the I/O core, before any port is chosen.
    # No other reason may appear, and everything else reaches the sink.
    full = j["drops"]["dispatch-full"] if "io" in opts else 0
    assert ports["src"]["rx"] > 0, j["ports"]
    assert ports["sink"]["tx"] + full == ports["src"]["rx"], (j["ports"], j["drops"])
    assert j["pipeline_drops"] == full and j["tx_drops"] == 0, j["drops"]
    assert j["ports_deleted"]["tx"] > 0 and j["ports_deleted"]["tx_drops"] == 0, j
    assert_balanced(j)


def test_add_forward_del_with_port_status(sluice_bin: Path, tmp_path: Path) -> None:
    """A port added at run time forwards both ways, controllers hear of it, then it goes.

    Steps:
        1. Switch with port 1 (net_null0, name a) and the flow in_port=3 -> output:1; a
           controller connects.
        2. add-port net_pcap1 (rx_pcap of 5 frames, tx_pcap) name=newp ofport=3.
        3. A packet_out of 4 frames to port 3.
        4. del-port newp; then del-port newp again, dump-ports newp.
    Verify: port_status ADD (port 3, newp) and DELETE (port 3) reach the controller;
    port_desc and show list port 3 between the two, not after; port a transmits the 5
    frames received on newp; newp's pcap holds exactly the 4 packet_out frames; the
    second del-port and dump-ports newp fail with a message naming newp; the switch
    carries on (show works) and its counters balance.
    """
    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    rx, tx = tmp_path / "newp-in.pcap", tmp_path / "newp-out.pcap"
    ins, outs = frames(5, 2), frames(4, 3)
    write_pcap(rx, ins)
    tcp = testing.free_tcp_port()
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1,name=a"],
                             controllers=(f"ptcp:{tcp}:127.0.0.1",),
                             flows=["in_port=3,actions=output:1"]),
                binary=sluice_bin, workdir=str(tmp_path))
    try:
        (target,) = sw.wait_listening()
        with ofp.Client.connect(target) as c:
            c.barrier()
            assert port_desc(c) == [(1, "a")]
            ctl_ok(sw, "add-port", f"net_pcap1,rx_pcap={rx},tx_pcap={tx}", "name=newp",
                   "ofport=3")
            assert port_status(c) == (OFPPR_ADD, 3, "newp")
            assert port_desc(c) == [(1, "a"), (3, "newp")]
            assert wait_counter(sw, "a", "tx_packets", 5)["tx_packets"] == 5
            for f in outs:
                c.send(ofp.packet_out(f, [ofp.action_output(3)]))
            c.barrier()
            assert wait_counter(sw, "newp", "tx_packets", 4)["tx_packets"] == 4
            assert ctl_ok(sw, "del-port", "newp").strip() == "port 3 (newp) deleted"
            reason, no, _ = port_status(c)
            assert (reason, no) == (OFPPR_DELETE, 3)
            assert port_desc(c) == [(1, "a")]
        assert show_ports(sw) == [(1, "a")]
        r = sw.sluicectl("del-port", "newp")
        assert r.returncode == 1 and "no port 'newp'" in r.stderr, r
        r = sw.sluicectl("dump-ports", "newp")
        assert r.returncode == 2 and "newp" in r.stderr, r
        assert sw.alive(), sw.output
    finally:
        j = final_json(sw)
    assert [bytes(p) for p in read_pcap(tx)] == outs
    assert j["pipeline_drops"] == 0, j["drops"]
    assert j["ports_deleted"]["rx"] == 5 and j["ports_deleted"]["tx"] == 4, j
    assert_balanced(j, packet_outs=len(outs))


def test_port_errors_name_the_value(sluice_bin: Path, tmp_path: Path) -> None:
    """Refused port changes say what was wrong, exit 1, and leave the switch running.

    Steps: a switch with ports a (1) and b (2); add-port with a device DPDK cannot attach,
    with ofport=1, with name=a, with net_null0 (port a's device), with a bad name; del-port
    of an unknown name and number, and of LOCAL.
    Verify: each exits 1 with a message naming the value; show still lists a and b only.
    """
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1,name=a", "net_null1,no-rx=1,name=b"]),
                binary=sluice_bin, workdir=str(tmp_path))
    try:
        sw.wait_ready()
        cases = [
            (("add-port", "net_bogus7"), "net_bogus7"),
            (("add-port", "net_null5,no-rx=1", "ofport=1"), "ofport=1 is port 'a'"),
            (("add-port", "net_null5,no-rx=1", "name=a"), "name=a"),
            (("add-port", "net_null0"), "'net_null0' is port 1 (a)"),
            (("add-port", "net_null5", "name=12"), "bad name '12'"),
            (("del-port", "nosuch"), "no port 'nosuch'"),
            (("del-port", "9"), "no port '9'"),
        ]
        for args, msg in cases:
            r = sw.sluicectl(*args)
            assert r.returncode == 1 and msg in r.stderr, (args, r.returncode, r.stderr)
        assert show_ports(sw) == [(1, "a"), (2, "b")]
        assert sw.alive(), sw.output
    finally:
        final_json(sw)


def test_ports_named_at_start(sluice_bin: Path, tmp_path: Path) -> None:
    """-p DEVARGS,name=NAME,ofport=N names and numbers ports; names default to the device.

    Steps: start with net_null0,name=up,ofport=5 and net_null1 (no name, no number);
    then start with two ports named alike, and with a repeated ofport.
    Verify: show lists (1, net_null1) and (5, up) (the unnumbered port takes the lowest free
    number), telemetry /sluice/port,up answers for port 5; the bad starts exit 2 naming
    the repeated value.
    """
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1,name=up,ofport=5", "net_null1,no-rx=1"]),
                binary=sluice_bin, workdir=str(tmp_path))
    try:
        sw.wait_ready()
        assert show_ports(sw) == [(1, "net_null1"), (5, "up")]
        p = json.loads(ctl_ok(sw, "telemetry", "/sluice/port,up"))["/sluice/port"]
        assert p["port_no"] == 5 and p["devargs"] == "net_null0,no-rx=1", p
    finally:
        final_json(sw)
    for ports, msg in ((["net_null0,name=x", "net_null1,name=x"], "name=x is given twice"),
                       (["net_null0,ofport=2", "net_null1,ofport=2"], "ofport=2 is given twice")):
        r = testing.run([str(sluice_bin), *sum((["-p", p] for p in ports), []), "--check"],
                        check=False)
        assert r.returncode == 2 and msg in r.stdout + r.stderr, r
