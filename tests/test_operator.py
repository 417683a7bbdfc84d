"""Operator commands an Open vSwitch user types (issue #22): groups from the shell.

``sluicectl add-group`` / ``mod-group`` / ``del-groups`` / ``dump-group-stats`` take
ovs-ofctl's add-groups syntax, and what ``dump-groups`` prints can be added back.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from sluice import testing
from sluice.testing import Sluice, SluiceConfig

REPO = Path(__file__).resolve().parent.parent
SLUICECTL = REPO / "build" / "app" / "sluicectl"


def test_group_commands_round_trip(sluice_bin: Path, tmp_path: Path) -> None:
    """add-group, dump-group-stats, mod-group, del-groups; a dumped line adds back."""
    if not SLUICECTL.exists():
        pytest.skip("no sluicectl built")
    mgmt = tmp_path / "sw.mgmt"
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"], mgmt=str(mgmt)),
                binary=sluice_bin, workdir=str(tmp_path))

    def ctl(*args: str, rc: int = 0) -> str:
        r = subprocess.run([str(SLUICECTL), "-t", f"unix:{mgmt}", *args], capture_output=True,
                           text=True, timeout=30)
        assert r.returncode == rc, (args, r.stdout, r.stderr)
        return r.stdout + r.stderr

    try:
        sw.wait_output("datapath id", 30)
        testing.wait_until(mgmt.exists, 10, "the management socket")
        ctl("add-group", "group_id=5,type=select,bucket=weight:3,output:1,bucket=weight:1,output:2")
        ctl("add-group", "group_id=6,type=all,bucket=output:1")
        out = ctl("dump-group-stats")
        line5 = next(ln.strip() for ln in out.splitlines() if "group_id=5" in ln)
        assert line5 == ("group_id=5,type=select,bucket=weight:3,actions=output:1,"
                         "bucket=weight:1,actions=output:2")
        assert "bucket1: n_packets=0" in out
        ctl("mod-group", "group_id=6,type=indirect,bucket=mod_nw_dst:10.0.0.9,output:2")
        assert "group_id=6,type=indirect,bucket=actions=set_field:10.0.0.9->nw_dst,output:2" \
            in ctl("dump-groups")
        ctl("del-groups", "group_id=5")
        assert "group_id=5" not in ctl("dump-groups")
        ctl("add-group", line5)  # what dump-groups printed goes back in as it is
        assert line5 in ctl("dump-groups")
        ctl("del-groups")
        assert "no groups" in ctl("dump-groups")
        assert "bad group type" in ctl("add-group", "group_id=7,type=bogus", rc=2)
        assert "expected group_id=N" in ctl("del-groups", "group_id=x", rc=2)
        assert sw.alive(), sw.output
    finally:
        sw.stop()


def test_dump_flows_sort_and_no_stats(sluice_bin: Path, tmp_path: Path) -> None:
    """dump-flows --sort / --rsort (priority) and --no-stats, as ovs-ofctl prints them."""
    if not SLUICECTL.exists():
        pytest.skip("no sluicectl built")
    mgmt = tmp_path / "sw.mgmt"
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"], mgmt=str(mgmt),
                             flows=["priority=5,ip actions=output:1",
                                    "priority=50,udp actions=output:2",
                                    "cookie=0x7,priority=20 actions=drop"]),
                binary=sluice_bin, workdir=str(tmp_path))

    def ctl(*args: str, rc: int = 0) -> list[str]:
        r = subprocess.run([str(SLUICECTL), "-t", f"unix:{mgmt}", *args], capture_output=True,
                           text=True, timeout=30)
        assert r.returncode == rc, (args, r.stdout, r.stderr)
        return (r.stdout + r.stderr).splitlines()

    try:
        sw.wait_output("datapath id", 30)
        testing.wait_until(mgmt.exists, 10, "the management socket")
        up = ctl("dump-flows", "--sort")
        assert [ln.split("priority=")[1].split(",")[0].split(" ")[0] for ln in up] == \
            ["5", "20", "50"], up
        assert all("n_packets=" in ln for ln in up)
        down = ctl("dump-flows", "--rsort", "--no-stats")
        assert down == [" table=0, priority=50,udp actions=output:2",
                        " cookie=0x7, table=0, priority=20 actions=drop",
                        " table=0, priority=5,ip actions=output:1"], down
        assert "priority only" in ctl("dump-flows", "--sort=cookie", rc=2)[0]
    finally:
        sw.stop()


def test_log_lines_carry_severities(sluice_bin: Path) -> None:
    """Connect, disconnect and fail-mode changes are notices (shown at the default log
    level), each line stamped with time and severity."""
    import re

    from sluice import ofp

    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    port = testing.free_tcp_port()
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1"],
                             controllers=(f"ptcp:{port}:127.0.0.1", "tcp:127.0.0.1:1")),
                binary=sluice_bin)
    try:
        (target,) = sw.wait_listening()
        with ofp.Client.connect(target) as c:
            c.barrier()
        testing.wait_until(lambda: "disconnected" in sw.output, 10, "the disconnect notice")
    finally:
        sw.stop()
    stamp = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z notice sluice\.ofswitch: "
    out = sw.output
    assert re.search(stamp + r"fail mode standalone: learning switch on \(no controller\)$",
                     out, re.M), out
    assert re.search(stamp + r"tcp:127\.0\.0\.1:\d+: connected \(passive\)$", out, re.M), out
    assert re.search(stamp + r"tcp:127\.0\.0\.1:\d+: disconnected$", out, re.M), out


SAVE_BASE = [
    "table=1,kind=lpm,fields=nw_dst,name=fib",
    "table=0,priority=1 actions=goto_table:1",
]
SAVE_RUNTIME = """\
table=2,kind=exact,fields=dl_dst,size=1000
table=3,kind=state,lookup=nw_src,update=nw_src
meter=1,pktps,burst,stats,bands=type=drop,rate=1000,burst_size=10
meter=2,kbps,bands=type=dscp_remark,rate=500,prec_level=2 type=drop,rate=900
group_id=3,type=select,bucket=weight:5,actions=output:1,bucket=weight:1,actions=output:2
group_id=4,type=ff,bucket=watch_port:1,actions=output:1,bucket=watch_port:2,actions=output:2
group_id=7,type=indirect,bucket=actions=output:2
group_id=1,type=select,bucket=weight:1,actions=group:7,bucket=weight:1,actions=group:3
group_id=2,type=ff,bucket=watch_group:7,actions=group:7,bucket=watch_port:1,actions=output:1
cookie=0x5,priority=100,idle_timeout=600,hard_timeout=1200,send_flow_rem,ip,nw_src=10.0.0.0/8 \
actions=meter:1,goto_table:1
low_latency,priority=50,udp,tp_dst=53 actions=CONTROLLER:128
table=1,priority=10,ip,nw_dst=10.1.0.0/16 actions=dec_ttl,group:3
table=1,priority=0 actions=write_actions(output:2),goto_table:2
table=2,priority=5,dl_dst=02:00:00:00:00:01 actions=mod_vlan_vid:5,push_mpls:0x8847,output:1
table=4,priority=9,state=1 actions=meter:2,group:4
"""


def test_save_and_restore(sluice_bin: Path, tmp_path: Path) -> None:
    """sluicectl save writes what was installed at run time (declared tables, meters,
    groups, chained ones after those they chain to, flows with cookies, timeouts, flags and
    low_latency, state-table entries) as a flow file; a new switch
    started with --restore FILE (alone, or after the same --flows: its declarations repeat)
    shows the same dump-flows --no-stats, groups, meters and table declarations."""
    if not SLUICECTL.exists():
        pytest.skip("no sluicectl built")
    runtime = tmp_path / "runtime.flows"
    runtime.write_text(SAVE_RUNTIME)
    saved = tmp_path / "saved.flows"

    def snapshot(flows: list[str] | None, extra: tuple[str, ...]) -> dict[str, object]:
        mgmt = tmp_path / "sw.mgmt"
        sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                                 mgmt=str(mgmt), flows=flows, extra=extra),
                    binary=sluice_bin, workdir=str(tmp_path))

        def ctl(*args: str) -> str:
            r = sw.sluicectl("-t", f"unix:{mgmt}", *args)
            assert r.returncode == 0, (args, r.stdout, r.stderr, sw.output)
            return r.stdout

        try:
            sw.wait_output("datapath id", 30)
            testing.wait_until(mgmt.exists, 10, "the management socket")
            if not extra:
                ctl("add-flows", str(runtime))
                ctl("set-state", "3", "ip,nw_src=10.0.0.1", "5", "idle_ms=600000", "rollback=2")
                out = ctl("save", str(saved))
                assert "saved 2 meters, 5 groups, 7 flows" in out, out
            tables = {t: ctl("telemetry", f"/sluice/table,{t}") for t in range(5)}
            return {
                "flows": ctl("dump-flows", "--no-stats", "--sort"),
                "groups": [ln for ln in ctl("dump-groups").splitlines() if "group_id" in ln],
                "meters": [ln for ln in ctl("dump-meters").splitlines() if "meter=" in ln],
                "specs": [ln for t in tables.values() for ln in t.splitlines()
                          if '"spec"' in ln or '"declared"' in ln],
                "states": [re.sub(r" \(\d+ left\)", "", ln)
                           for ln in ctl("dump-states", "3").splitlines()[1:]],
            }
        finally:
            assert sw.stop() == 0, sw.output

    before = snapshot(SAVE_BASE, ())
    text = saved.read_text()
    assert "table=3,kind=state" in text and "low_latency" in text and "cookie=0x5" in text
    assert "state 3 ip,nw_src=10.0.0.1 5 idle_ms=600000 rollback=2" in text, text
    # Groups come after the groups they chain to or watch (a restore adds them in order).
    order = [int(g) for g in re.findall(r"^group_id=(\d+)", text, re.M)]
    assert sorted(order) == [1, 2, 3, 4, 7] and order.index(7) < order.index(1) and \
        order.index(7) < order.index(2) and order.index(3) < order.index(1), order
    assert before["states"] == [" ip,nw_src=10.0.0.1 state=5 idle_ms=600000 rollback=2"], before
    assert len(before["flows"].splitlines()) == 7, before["flows"]  # type: ignore[union-attr]
    assert snapshot(None, ("--restore", str(saved))) == before
    assert snapshot(SAVE_BASE, ("--restore", str(saved))) == before


def test_trace(sluice_bin: Path, tmp_path: Path) -> None:
    """sluicectl trace runs a packet through the real pipeline and reports each table, the
    entry it won, meters and outputs, the verdict (a forward, a drop with its reason, a
    packet-in), and changes nothing: flow, meter and group counters stay 0."""
    flows = [
        "table=1,kind=lpm,fields=nw_dst,name=fib",
        "meter=1,pktps,burst,bands=type=drop,rate=1,burst_size=1",
        "cookie=0x5,priority=100,ip,nw_src=10.0.0.0/8 actions=meter:1,goto_table:1",
        "priority=50,udp,tp_dst=53 actions=CONTROLLER:128",
        "table=1,priority=10,ip,nw_dst=10.1.0.0/16 actions=dec_ttl,output:2",
    ]
    mgmt = tmp_path / "sw.mgmt"
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"], mgmt=str(mgmt),
                             flows=flows), binary=sluice_bin, workdir=str(tmp_path))
    try:
        sw.wait_output("datapath id", 30)

        def trace(*args: str) -> str:
            r = sw.sluicectl("trace", *args)
            assert r.returncode == 0, (args, r.stdout, r.stderr)
            return r.stdout

        out = trace("in_port=1,ip,nw_src=10.0.0.1,nw_dst=10.1.2.3,udp,tp_dst=7")
        assert "table 0 [table search]: cookie=0x5" in out and "meter 1: not applied" in out, out
        assert "table 1 (fib) [table search]: table=1, priority=10,ip,nw_dst=10.1.0.0/16" in out
        assert "output: port 2" in out and "verdict: 1 output" in out, out
        # A meter before goto_table: no flow-cache record can span table 0's entry.
        assert ("cache tier: per-table lookups (flow cache: no path record spans table 0: its "
                "entry applies actions or a meter before goto_table)") in out, out
        # The meter's bucket holds one packet: a second trace still passes (no tokens taken).
        assert "output: port 2" in trace("in_port=1,ip,nw_src=10.0.0.1,nw_dst=10.1.2.3")
        out = trace("in_port=1,ip,nw_src=10.0.0.1,nw_dst=10.1.2.3,nw_ttl=1")
        assert "verdict: drop: ttl-expired" in out, out
        out = trace("in_port=2,udp,tp_dst=53")
        assert "output: CONTROLLER (packet-in, reason action, table 0" in out, out
        assert ("cache tier: flow cache (one probe answers 1 table; the last entry's "
                "instructions then run") in out, out
        out = trace("in_port=1,arp")
        assert "verdict: drop: table-miss" in out, out
        assert "table 0 [table search]: no entry matched" in out, out
        assert "cache tier: flow cache (one probe answers 1 table; the probe drops it" in out, out
        # The same UDP packet as bytes.
        from scapy.all import IP, UDP, Ether
        frame = bytes(Ether() / IP(src="10.0.0.1", dst="10.1.0.9") / UDP(dport=7))
        out = trace("--hex", frame.hex(), "in_port=1")
        assert "output: port 2" in out, out
        r = sw.sluicectl("trace", "in_port=1,tcp_dst=80")
        assert r.returncode != 0 and "tcp" in r.stderr, r.stderr
        r = sw.sluicectl("trace", "--hex", "0g", "in_port=1")
        assert r.returncode != 0 and "hex" in r.stderr, r.stderr
        stats = sw.sluicectl("-t", f"unix:{mgmt}", "dump-flows", check=True).stdout
        assert stats.count("n_packets=0") == 3, stats
        meters = sw.sluicectl("-t", f"unix:{mgmt}", "dump-meters", check=True).stdout
        assert "n_packets=0" in meters, meters
    finally:
        sw.stop()


def test_trace_cache_tier(sluice_bin: Path, tmp_path: Path) -> None:
    """The trace names the cache tier that serves the packet in the datapath: a goto-only
    chain ending in an output is one flow-cache probe that outputs the packet itself (and
    so is a dec_ttl, output); one table in use leaves the per-table path with the flow
    cache's reason; an entry that applies actions before goto_table stops a record."""
    chain = [
        "table=0,priority=10,ip actions=goto_table:1",
        "table=0,priority=5,arp actions=push_vlan:0x8100,goto_table:1",
        "table=1,priority=10,udp actions=goto_table:2",
        "table=1,priority=1 actions=output:2",
        "table=2,priority=10,ip,nw_dst=10.0.0.0/8 actions=dec_ttl,output:2",
        "table=2,priority=1 actions=CONTROLLER:64",
    ]

    def start(name: str, flows: list[str]) -> Sluice:
        sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                                 mgmt=str(tmp_path / f"{name}.mgmt"), flows=flows),
                    binary=sluice_bin, workdir=str(tmp_path))
        sw.wait_output("datapath id", 30)
        return sw

    def trace(sw: Sluice, flow: str) -> str:
        r = sw.sluicectl("trace", flow)
        assert r.returncode == 0, (flow, r.stdout, r.stderr)
        return r.stdout

    sw = start("chain", chain)
    try:
        out = trace(sw, "in_port=1,udp,nw_dst=10.1.2.3,nw_ttl=9")
        assert "verdict: 1 output" in out, out
        assert ("cache tier: flow cache (one probe answers 3 tables; the probe outputs the "
                "packet itself") in out, out
        out = trace(sw, "in_port=1,tcp,nw_dst=10.1.2.3")
        assert "cache tier: flow cache (one probe answers 2 tables; the probe outputs" in out
        out = trace(sw, "in_port=1,udp,nw_dst=192.168.0.1")
        assert ("cache tier: flow cache (one probe answers 3 tables; the last entry's "
                "instructions then run") in out, out
        out = trace(sw, "in_port=1,arp")
        assert ("no path record spans table 0: its entry applies actions or a meter before "
                "goto_table") in out, out
    finally:
        sw.stop()
    sw = start("one", ["priority=1,in_port=1 actions=output:2"])
    try:
        out = trace(sw, "in_port=1,udp")
        assert "table 0 [" in out and "cache tier: per-table lookups (flow cache: one table)" in out
    finally:
        sw.stop()


def test_trace_live(sluice_bin: Path, tmp_path: Path) -> None:
    """sluicectl trace --live N PORT records the next N packets the datapath receives on
    PORT and prints each one's path as trace does: a forward, a drop and a packet-in,
    named with their entries, outputs and verdicts; a live trace that gets too few packets
    returns after --timeout saying how many arrived.

    Steps: a switch on two veths (af_packet), three entries; arm trace --live 3 on port 1;
    once armed, send a UDP packet (forwarded), a TCP packet (dropped by its entry) and an
    ARP packet (packet-in) into port 1.  Then trace --live 2 on port 2, which gets nothing.
    Verify: three reports in the order sent, each with its entry's cookie and its verdict;
    the packets were still forwarded (port 2's tx counter); the second run exits 1 with
    "0 of 2 packets arrived on port 2"."""
    from scapy.all import ARP, IP, TCP, UDP, Ether  # type: ignore[attr-defined]

    from sluice.testing import RawPort, Topology

    if not testing.netns_usable():
        pytest.skip("needs root and iproute2")
    flows = [
        "cookie=0x11,priority=30,udp actions=output:2",
        "cookie=0x22,priority=20,tcp actions=drop",
        "cookie=0x33,priority=10,arp actions=CONTROLLER:128",
    ]
    with Topology() as topo:
        a1, b1 = topo.add_veth("slv")
        a2, _ = topo.add_veth("slv")
        sw = Sluice(SluiceConfig(ports=testing.af_packet_ports([a1, a2]), flows=flows),
                    binary=sluice_bin, workdir=str(tmp_path))
        try:
            sw.wait_output("datapath id", 30)
            live = subprocess.Popen(sw.sluicectl_cmd("trace", "--live", "3", "1",
                                                     "--timeout", "60"),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                testing.wait_until(
                    lambda: '"armed"' in sw.sluicectl("telemetry", "/sluice/trace/live,1").stdout,
                    20, "the live trace armed")
                mac = "02:00:00:00:00:01"
                frames = [Ether(src=mac, dst="02:00:00:00:00:02") / IP(src="10.0.0.1",
                          dst="10.0.0.2") / UDP(sport=1000, dport=7),
                          Ether(src=mac, dst="02:00:00:00:00:02") / IP(src="10.0.0.1",
                          dst="10.0.0.2") / TCP(sport=1000, dport=80),
                          Ether(src=mac, dst="ff:ff:ff:ff:ff:ff") / ARP(psrc="10.0.0.1",
                                                                         pdst="10.0.0.2")]
                with RawPort(b1) as rp:
                    rp.send([bytes(f) for f in frames])
                out, errs = live.communicate(timeout=60)
            finally:
                if live.poll() is None:
                    live.kill()
                    live.wait()
            assert live.returncode == 0, (out, errs)
            reports = out.split("\npacket ")
            assert len(reports) == 3, out
            udp, tcp, arp = reports
            assert udp.startswith(f"packet 1 (worker 0): in_port 1 ({a1}), 42 bytes: "), out
            assert tcp.startswith(f"2 (worker 0): in_port 1 ({a1}), 54 bytes: "), out
            assert ("table 0 [table search]: cookie=0x11, table=0, priority=30,udp "
                    "actions=output:2") in udp, out
            assert "output: port 2" in udp and "verdict: 1 output" in udp, out
            assert "cookie=0x22, table=0, priority=20,tcp actions=drop" in tcp, out
            assert "verdict: drop: no-output" in tcp and "output: " not in tcp, out
            assert "cookie=0x33, table=0, priority=10,arp actions=CONTROLLER:128" in arp, out
            assert "output: CONTROLLER (packet-in, reason action, table 0, cookie 0x33)" in arp
            assert all("cache tier: " in r for r in reports), out
            # Traced, and still forwarded: the UDP packet left on port 2.
            testing.wait_until(lambda: json.loads(sw.sluicectl(
                "--json", "stats", "ports").stdout or "{}").get("2", {}).get(
                "tx_packets", 0) >= 1, 10, "the UDP packet forwarded")
            # Nothing arrives on port 2: the run ends at --timeout with what it has (none).
            r = sw.sluicectl("trace", "--live", "2", "2", "--timeout", "1")
            assert r.returncode == 1 and r.stdout == "", (r.stdout, r.stderr)
            assert "0 of 2 packets arrived on port 2 within 1 s" in r.stderr, r.stderr
            r = sw.sluicectl("trace", "--live", "65")
            assert r.returncode == 2 and "1..64" in r.stderr, r.stderr
        finally:
            sw.stop()


def test_sighup_does_not_end_the_switch(sluice_bin: Path, tmp_path: Path) -> None:
    """SIGHUP used to end the switch and leave its sockets behind: now it is a reload
    request (reading the command line again: nothing changes without a configuration
    file); the switch keeps running and its management socket keeps answering."""
    import signal

    mgmt = tmp_path / "sw.mgmt"
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"], mgmt=str(mgmt)),
                binary=sluice_bin, workdir=str(tmp_path))
    try:
        sw.wait_output("datapath id", 30)
        testing.wait_until(mgmt.exists, 10, "the management socket")
        sw.proc.send_signal(signal.SIGHUP)
        sw.wait_output("reload: no configuration file", 10)
        assert sw.alive(), sw.output
        assert sw.sluicectl("-t", f"unix:{mgmt}", "show").returncode == 0
    finally:
        assert sw.stop() == 0, sw.output
