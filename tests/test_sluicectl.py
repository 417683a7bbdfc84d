"""sluicectl, the operator CLI, against a real Sluice and a fake telemetry server.

OpenFlow commands run against the real switch (``sluice_bin``: $SLUICE_BIN or
build/app/sluice) on net_pcap ports, listening on a private ``punix:`` socket that
sluicectl reaches with ``--target``; what sluicectl prints is checked against what
was sent through the ports and against ``ovs-ofctl`` (an independent client) where
it is installed.  Telemetry commands are checked against a fake DPDK telemetry
server (AF_UNIX SOCK_SEQPACKET, replies as docs/telemetry.md specifies) and, when
a Sluice with telemetry is available ($SLUICE_TELEMETRY_BIN, else ``sluice_bin``
when it has the commands), against the real switch found by ``--name``.

The sluicectl binary is $SLUICECTL_BIN or build/app/sluicectl (rebuilt with ninja
when a build directory exists, unless SLUICE_NO_BUILD=1).  Every process is
stopped by PID; sockets and DPDK runtime directories are removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from scapy.all import IP, UDP, Ether  # type: ignore[import-untyped]

from sluice import ofp, testing
from sluice.testing import BUILD_DIR, Sluice, SluiceConfig, write_pcap

pytestmark = pytest.mark.openflow

N_FRAMES = 37
CTL_TIMEOUT = 30


# ---------------------------------------------------------------------------
# Fixtures and helpers
# ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def sluicectl_bin() -> Path:
    """$SLUICECTL_BIN, else build/app/sluicectl (built with ninja when possible)."""
    env = os.environ.get("SLUICECTL_BIN")
    if env:
        path = Path(env)
    else:
        path = BUILD_DIR / "app" / "sluicectl"
        ninja = shutil.which("ninja")
        if ninja and os.environ.get("SLUICE_NO_BUILD") != "1" and (
                BUILD_DIR / "build.ninja").exists():
            r = subprocess.run([ninja, "-C", str(BUILD_DIR), "app/sluicectl"],
                               capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                pytest.exit(f"building sluicectl failed:\n{r.stdout}\n{r.stderr}", returncode=3)
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.exit(f"sluicectl not found at {path} (build it or set SLUICECTL_BIN)",
                    returncode=3)
    return path


@dataclass
class Ctl:
    """Runs sluicectl with fixed leading options."""

    binary: Path
    base: list[str] = field(default_factory=list)

    def __call__(self, *args: str, stdin: str | None = None,
                 timeout: float = CTL_TIMEOUT) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.binary), *self.base, *args], input=stdin,
                              capture_output=True, text=True, timeout=timeout)

    def ok(self, *args: str, stdin: str | None = None) -> str:
        """Run; assert exit 0 and an empty stderr; return stdout."""
        r = self(*args, stdin=stdin)
        assert r.returncode == 0, f"{args}: rc {r.returncode}\n{r.stdout}{r.stderr}"
        assert r.stderr == "", r.stderr
        return r.stdout

    def json(self, *args: str) -> Any:
        """Run with --json; the output must be exactly one JSON document."""
        return json.loads(self.ok("--json", *args))


def frames(n: int = N_FRAMES) -> list[bytes]:
    """@n UDP frames of varying sizes from 10.0.0.1 to 10.1.0.X."""
    out = []
    for i in range(n):
        p = (Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
             / IP(src="10.0.0.1", dst=f"10.1.0.{i % 250 + 1}") / UDP(sport=1000, dport=2000)
             / (b"x" * (18 + i)))
        out.append(bytes(p))
    return out


@dataclass
class Env:
    sw: Sluice
    ctl: Ctl
    target: str
    frames: list[bytes]
    tmp: Path


@contextlib.contextmanager
def running_switch(binary: Path, tmp: Path, sluicectl: Path,
                   flows: Sequence[str] = ("priority=10,in_port=1 actions=output:2",),
                   sent: Sequence[bytes] | None = None) -> Iterator[Env]:
    """Sluice with port 1 replaying @sent (rx_pcap), port 2 writing a tx pcap, a startup
    flow file, and a private punix listener; fail mode secure (no learning switch)."""
    sent = frames() if sent is None else list(sent)
    rx = tmp / "in1.pcap"
    write_pcap(rx, sent)
    path = testing.socket_path("sctl")
    ports = [f"net_pcap0,rx_pcap={rx}", f"net_pcap1,tx_pcap={tmp / 'out2.pcap'}"]
    sw = Sluice(SluiceConfig(ports=ports, controllers=(f"punix:{path}",), flows=list(flows),
                             fail_mode="secure"), binary=binary)
    try:
        (target,) = sw.wait_listening()
        yield Env(sw, Ctl(sluicectl, ["--target", target]), target, sent, tmp)
        assert sw.alive(), sw.output
    finally:
        sw.stop()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"/run/sluice/{sw.prefix}.mgmt")


@pytest.fixture
def env(sluice_bin: Path, sluicectl_bin: Path, tmp_path: Path) -> Iterator[Env]:
    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    with running_switch(sluice_bin, tmp_path, sluicectl_bin) as e:
        yield e


def flows_of(ctl: Ctl, *filt: str) -> list[testing.DumpedFlow]:
    return testing.parse_dump_flows(ctl.ok("dump-flows", *filt))


def key(f: testing.DumpedFlow) -> tuple[int, int, str]:
    return (f.int("table"), f.int("priority"), f.actions)


def wait_rx(ctl: Ctl, port: int, n: int, timeout: float = 15.0) -> dict[str, Any]:
    """Poll dump-ports --json until port @port received @n frames."""
    deadline = time.monotonic() + timeout
    while True:
        (p,) = ctl.json("dump-ports", str(port))["ports"]
        if p["rx_packets"] >= n or time.monotonic() > deadline:
            return p
        time.sleep(0.1)


def have_ofctl() -> bool:
    return shutil.which("ovs-ofctl") is not None


# ---------------------------------------------------------------------------
# OpenFlow commands against the real switch
# ---------------------------------------------------------------------------


def test_add_flow_then_dump_flows(env: Env) -> None:
    """add-flow installs a flow that dump-flows shows, as ovs-ofctl sees it too.

    Steps:
        1. add-flow a table-1 flow with a cookie, an idle timeout and a masked match.
        2. dump-flows (text and --json); ovs-ofctl dump-flows when installed.
    Verify:
        Exit 0, nothing on stderr; the line has cookie, duration, table, counters,
        idle_timeout, priority, match and actions in ovs-ofctl's layout; the JSON
        has the same flow; ovs-ofctl lists the same (table, priority) pairs.
    """
    ctl = env.ctl
    assert ctl.ok("add-flow", "table=1,cookie=0x2a,idle_timeout=60,priority=100,ip,"
                  "nw_dst=10.0.0.0/8 actions=dec_ttl,output:2") == ""
    lines = [ln for ln in ctl.ok("dump-flows").splitlines() if ln.strip()]
    assert len(lines) == 2, lines
    new = [ln for ln in lines if "table=1" in ln]
    assert len(new) == 1, lines
    assert re.fullmatch(r" cookie=0x2a, duration=\d+\.\d{3}s, table=1, n_packets=0, "
                        r"n_bytes=0, idle_timeout=60, priority=100,ip,nw_dst=10\.0\.0\.0/8 "
                        r"actions=dec_ttl,output:2", new[0]), new[0]
    js = ctl.json("dump-flows", "table=1")
    (f,) = js["flows"]
    assert (f["table"], f["priority"], f["cookie"], f["idle_timeout"]) == (1, 100, 42, 60)
    assert f["match"] == "ip,nw_dst=10.0.0.0/8" and f["actions"] == "dec_ttl,output:2"
    assert f["flow"].startswith("cookie=0x2a, table=1, idle_timeout=60, priority=100")
    if have_ofctl():
        theirs = testing.parse_dump_flows(testing.ofctl(env.target, "dump-flows"))
        ours = flows_of(ctl)
        assert sorted((f.int("table"), f.int("priority")) for f in theirs) == sorted(
            (f.int("table"), f.int("priority")) for f in ours)


def test_dump_flows_counts_match_traffic(env: Env) -> None:
    """The startup flow's n_packets/n_bytes equal the frames replayed into port 1.

    Steps:
        1. Wait until port 1 received every frame; dump-flows in_port=1.
    Verify:
        n_packets = frames sent, n_bytes = their total length; ovs-ofctl agrees.
    """
    wait_rx(env.ctl, 1, len(env.frames))
    (f,) = flows_of(env.ctl, "in_port=1")
    assert f.int("n_packets") == len(env.frames)
    assert f.int("n_bytes") == sum(len(x) for x in env.frames)
    if have_ofctl():
        (g,) = testing.parse_dump_flows(testing.ofctl(env.target, "dump-flows"))
        assert g.int("n_packets") == f.int("n_packets") and g.int("n_bytes") == f.int(
            "n_bytes")


def test_dump_flows_filters(env: Env) -> None:
    """dump-flows FILTER: table=, cookie=V/M, out_port=, match fields.

    Steps:
        1. Add flows in tables 0 and 1 with different cookies and outputs.
        2. dump-flows with each kind of filter.
    Verify:
        Each filter returns exactly the flows it selects.
    """
    ctl = env.ctl
    for fl in ("table=1,cookie=0x10,priority=5,ip actions=output:1",
               "table=1,cookie=0x11,priority=6,udp actions=output:2",
               "table=0,cookie=0x20,priority=7,arp actions=output:1"):
        ctl.ok("add-flow", fl)
    assert {f.int("priority") for f in flows_of(ctl, "table=1")} == {5, 6}
    assert {f.int("priority") for f in flows_of(ctl, "cookie=0x10/0xfe")} == {5, 6}
    assert {f.int("priority") for f in flows_of(ctl, "cookie=0x20/0xffff")} == {7}
    assert {f.int("priority") for f in flows_of(ctl, "cookie=0x11/-1")} == {6}
    assert {f.int("priority") for f in flows_of(ctl, "out_port=1")} == {5, 7}
    assert {f.int("priority") for f in flows_of(ctl, "udp")} == {6}
    # Filter words may also come as separate arguments.
    assert {f.int("priority") for f in flows_of(ctl, "table=1", "out_port=2")} == {6}


def test_add_flows_file(env: Env) -> None:
    """add-flows FILE: a table declaration and three flows, one barrier.

    Steps:
        1. Write a flow file: table 2 declared lpm named fib, three flows (one with
           a continuation line and comments).
        2. add-flows FILE; dump-flows; dump-tables --all; the same file on stdin ("-").
    Verify:
        Exit 0; all three flows are installed with their actions; table 2 is
        listed with the name fib and one flow.
    """
    ff = env.tmp / "three.flows"
    ff.write_text("# three flows and a table\n"
                  "table=2,kind=lpm,fields=nw_dst,name=fib\n"
                  "table=0,priority=20,ip actions=goto_table:2   # to the FIB\n"
                  "table=2,ip,nw_dst=10.1.0.0/16 \\\n"
                  "    actions=dec_ttl,output:2\n"
                  "\n"
                  "table=1,priority=3,arp actions=output:1\n")
    ctl = env.ctl
    assert ctl.ok("add-flows", str(ff)) == ""
    got = {key(f) for f in flows_of(ctl)}
    assert {(0, 20, "goto_table:2"), (2, 32768, "dec_ttl,output:2"),
            (1, 3, "output:1")} <= got, got
    assert len(got) == 4, got
    tables = {t["table_id"]: t for t in ctl.json("dump-tables", "--all")["tables"]}
    assert tables[2]["name"] == "fib" and tables[2]["active_count"] == 1
    assert tables[1]["active_count"] == 1 and len(tables) == 254
    # Flows on stdin ("-"); re-adding identical flows replaces them.
    flows_only = "".join(ln + "\n" for ln in ff.read_text().splitlines() if "kind=" not in ln)
    assert ctl.ok("add-flows", "-", stdin=flows_only) == ""
    assert {key(f) for f in flows_of(ctl)} == got


def test_add_flows_refused_lines(env: Env) -> None:
    """An OFPT_ERROR for message k names the file and line it came from.

    Steps:
        1. add-flows a file whose line 3 outputs to a group that does not exist and
           whose line 5 declares an lpm table on two fields.
    Verify:
        Exit 1; stderr names FILE:3 with OFPBAC_BAD_OUT_GROUP and FILE:5 with a
        table-mod error; the other flows are installed (OpenFlow goes on after an
        error); --json lists both errors with their origins.
    """
    ff = env.tmp / "bad.flows"
    ff.write_text("table=1,priority=1,ip actions=output:1\n"
                  "# comment\n"
                  "table=1,priority=2,ip actions=group:99\n"
                  "table=1,priority=3,ip actions=output:2\n"
                  "table=4,kind=lpm,fields=nw_dst+nw_src\n")
    r = env.ctl("add-flows", str(ff))
    assert r.returncode == 1, r
    assert f"sluicectl: {ff}:3: the switch refused it: OFPBAC_BAD_OUT_GROUP (type 2, code 9)" \
        in r.stderr, r.stderr
    assert re.search(rf"sluicectl: {re.escape(str(ff))}:5: the switch refused it: OFPTMFC_\w+",
                     r.stderr), r.stderr
    assert {f.int("priority") for f in flows_of(env.ctl, "table=1")} == {1, 3}
    r = env.ctl("--json", "add-flows", str(ff))
    assert r.returncode == 1
    js = json.loads(r.stdout)
    assert js["messages"] == 4
    assert [e["origin"] for e in js["errors"]] == [f"{ff}:3", f"{ff}:5"]
    assert js["errors"][0]["error"] == "OFPBAC_BAD_OUT_GROUP"


def test_syntax_errors_exit_2(env: Env, tmp_path: Path) -> None:
    """Flow syntax errors exit 2 and name the offending token; nothing is sent.

    Steps:
        1. add-flow with a bad address, an unknown field; mod-flows without actions;
           dump-flows/del-flows with a bad filter; add-flows with an error on line 2.
    Verify:
        Exit 2; stderr has the parser's message and "(near 'TOKEN')" (FILE:2 for the
        file); the switch's flows are unchanged.
    """
    ctl = env.ctl
    before = {key(f) for f in flows_of(ctl)}
    cases = [
        (("add-flow", "priority=10,ip,nw_dst=1.2.3.999 actions=output:2"),
         "bad IPv4 address '1.2.3.999' (near 'nw_dst=1.2.3.999')"),
        (("add-flow", "bogus=1 actions=drop"), "(near 'bogus=1')"),
        (("add-flow", "priority=1"), "missing actions="),
        (("mod-flows", "ip"), "missing actions="),
        (("dump-flows", "actions=drop"), "(near 'actions=drop')"),
        (("del-flows", "tcp_dst=80"), "tcp_dst requires"),
        (("dump-flows", "out_port=0"), "(near 'out_port=0')"),
    ]
    for args, msg in cases:
        r = ctl(*args)
        assert r.returncode == 2, (args, r)
        assert msg in r.stderr and r.stderr.startswith("sluicectl: "), (args, r.stderr)
    ff = tmp_path / "syntax.flows"
    ff.write_text("priority=1 actions=drop\nip,nw_src=300.0.0.1 actions=drop\n")
    r = ctl("add-flows", str(ff))
    assert r.returncode == 2 and f"{ff}:2: " in r.stderr and "nw_src=300.0.0.1" in r.stderr, r
    r = ctl("add-flows", "-", stdin="ip,\\\n  nw_src=300.0.0.1 actions=drop\n")
    assert r.returncode == 2 and "-:1: " in r.stderr, r.stderr
    assert {key(f) for f in flows_of(ctl)} == before


def test_usage_errors_exit_2(sluicectl_bin: Path) -> None:
    """Bad options, commands and arguments exit 2 naming what was wrong."""
    ctl = Ctl(sluicectl_bin, ["--target", "unix:/nonexistent/x.sock"])
    cases = [
        (("-O", "OpenFlow10", "show"), "unsupported protocol 'OpenFlow10'"),
        (("frobnicate",), "unknown command 'frobnicate'"),
        (("--bogus", "show"), "unknown option '--bogus'"),
        (("dump-flows", "--strict"), "option --strict does not apply"),
        (("show", "extra"), "unexpected argument 'extra'"),
        (("add-flow",), "add-flow: missing argument"),
        (("--timeout", "abc", "show"), "--timeout: bad value 'abc'"),
        (("-n", "../etc", "stats"), "bad instance name '../etc'"),
        (("stats", "bogus"), "unknown section 'bogus'"),
        (("monitor", "--count", "0"), "bad --count '0'"),
        (("capture", "start", "x,y"), "bad PORT 'x,y'"),
        (("add-port", "net_null0", "bogus=1"), "expected name=NAME or ofport=N"),
        (("del-port",), "del-port: missing argument"),
        (("capture", "start", "1", "--dir", "up"), "bad --dir 'up'"),
        (("capture", "start", "1", "--file", "/tmp/a,b"), "bad --file '/tmp/a,b'"),
        (("capture", "stop", "--dir", "rx"), "belong to 'capture start'"),
        (("log", "x"), "expected no arguments or TYPE LEVEL"),
        (("telemetry", "sluice/ports"), "bad command 'sluice/ports'"),
        ((), "no command given"),
    ]
    for args, msg in cases:
        r = ctl(*args)
        assert r.returncode == 2, (args, r)
        assert msg in r.stderr, (args, r.stderr)
    r = ctl("--help")
    assert r.returncode == 0 and r.stdout.startswith("Usage: sluicectl")
    r = ctl("--version")
    assert r.returncode == 0 and r.stdout.startswith("sluicectl ")
    assert ctl("-O", "OpenFlow13", "show").returncode == 3  # accepted, then unreachable


def test_unreachable_exit_3(sluicectl_bin: Path, tmp_path: Path) -> None:
    """A switch that cannot be reached exits 3, naming the socket, errno and the hint.

    Steps:
        1. show with a missing unix socket, a refused TCP port, a default --name;
           stats with a missing telemetry socket.
    Verify:
        Exit 3; stderr names the target/socket, the errno text and --name/--target
        (--telemetry for telemetry commands).
    """
    ctl = Ctl(sluicectl_bin)
    missing = tmp_path / "nope.sock"
    r = ctl("--target", f"unix:{missing}", "show")
    assert r.returncode == 3, r
    assert f"cannot connect to unix:{missing}: No such file or directory" in r.stderr
    assert "--name NAME" in r.stderr and "--target" in r.stderr
    port = testing.free_tcp_port()
    r = ctl("--target", f"tcp:127.0.0.1:{port}", "dump-flows")
    assert r.returncode == 3 and "Connection refused" in r.stderr, r
    r = ctl("--name", "no-such-switch-x", "dump-ports")
    assert r.returncode == 3 and "/run/sluice/no-such-switch-x.mgmt" in r.stderr, r
    r = ctl("--telemetry", str(missing), "stats")
    assert r.returncode == 3 and f"{missing}: No such file or directory" in r.stderr, r
    assert "--telemetry PATH" in r.stderr
    # A listener that never answers the hello: a timeout, also exit 3.
    path = testing.socket_path("mute")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as srv:
        srv.bind(path)
        srv.listen(1)
        r = ctl("--timeout", "0.5", "--target", f"unix:{path}", "show")
        assert r.returncode == 3 and "no reply from" in r.stderr, r
    os.unlink(path)


def test_openflow_error_exit_1(env: Env) -> None:
    """The switch refusing a flow_mod exits 1 with the specification's error name.

    Steps:
        1. add-flow to a group that does not exist.
        2. mod-flows --strict with the same refused action.
    Verify:
        Exit 1, stderr "the switch refused it: OFPBAC_BAD_OUT_GROUP (type 2, code 9)";
        no flow was added.
    """
    before = {key(f) for f in flows_of(env.ctl)}
    for args in (("add-flow", "table=3,priority=9 actions=group:99"),
                 ("mod-flows", "--strict", "priority=10,in_port=1 actions=group:99")):
        r = env.ctl(*args)
        assert r.returncode == 1, r
        assert "the switch refused it: OFPBAC_BAD_OUT_GROUP (type 2, code 9)" in r.stderr, r
    assert {key(f) for f in flows_of(env.ctl)} == before


def test_mod_and_del_flows(env: Env) -> None:
    """mod-flows and del-flows, strict and not, select flows as OpenFlow says.

    Steps:
        1. Add three table-1 flows (ip priority 5, ip priority 6, arp priority 7).
        2. mod-flows --strict priority=5,ip; mod-flows table=1,arp; del-flows --strict
           priority=6; del-flows table=1; del-flows (everything).
    Verify:
        After each step dump-flows shows exactly the expected flows and actions.
    """
    ctl = env.ctl
    for fl in ("table=1,priority=5,ip actions=output:1",
               "table=1,priority=6,ip actions=output:1",
               "table=1,priority=7,arp actions=output:1"):
        ctl.ok("add-flow", fl)
    ctl.ok("mod-flows", "--strict", "table=1,priority=5,ip actions=output:2")
    got = {f.int("priority"): f.actions for f in flows_of(ctl, "table=1")}
    assert got == {5: "output:2", 6: "output:1", 7: "output:1"}
    ctl.ok("mod-flows", "table=1,arp actions=drop")
    got = {f.int("priority"): f.actions for f in flows_of(ctl, "table=1")}
    assert got == {5: "output:2", 6: "output:1", 7: "drop"}
    ctl.ok("del-flows", "--strict", "table=1,priority=6,ip")
    assert {f.int("priority") for f in flows_of(ctl, "table=1")} == {5, 7}
    ctl.ok("del-flows", "table=1")
    assert flows_of(ctl, "table=1") == [] and len(flows_of(ctl)) == 1
    ctl.ok("del-flows")
    assert flows_of(ctl) == []


def test_show_and_dump_ports(env: Env) -> None:
    """show and dump-ports report the switch's ports and the traffic sent through them.

    Steps:
        1. Wait for port 1 to receive the replayed frames (forwarded to port 2).
        2. show --json, dump-ports (text, --json, one port by number and by name).
    Verify:
        show: 254 tables, ports 1 and 2 named net_pcap0/net_pcap1 with MACs, LIVE;
        the datapath id matches ovs-ofctl show.  dump-ports: port 1 rx packets and
        bytes = what was sent, port 2 tx = the same; the text has ovs-ofctl's
        "port  1 (...): rx pkts=N, bytes=B" layout.
    """
    ctl = env.ctl
    sent_bytes = sum(len(x) for x in env.frames)
    p1 = wait_rx(ctl, 1, len(env.frames))
    assert p1["rx_packets"] == len(env.frames) and p1["rx_bytes"] == sent_bytes, p1
    assert p1["name"] == "net_pcap0" and p1["duration"] > 0
    ports = {p["port_no"]: p for p in ctl.json("dump-ports")["ports"]}
    assert sorted(ports) == [1, 2]
    deadline = time.monotonic() + 10
    while ports[2]["tx_packets"] < len(env.frames) and time.monotonic() < deadline:
        time.sleep(0.1)
        ports = {p["port_no"]: p for p in ctl.json("dump-ports")["ports"]}
    assert ports[2]["tx_packets"] == len(env.frames) and ports[2]["tx_bytes"] == sent_bytes
    assert ports[2]["rx_packets"] == 0
    text = ctl.ok("dump-ports", "1")
    assert f"port  1 (net_pcap0): rx pkts={len(env.frames)}, bytes={sent_bytes}," in text
    assert "port  2" not in text
    by_name = ctl.json("dump-ports", "net_pcap1")["ports"]
    assert [p["port_no"] for p in by_name] == [2]
    r = ctl("dump-ports", "nosuchport")
    assert r.returncode == 2 and "no port 'nosuchport'" in r.stderr

    show = ctl.json("show")
    assert show["n_tables"] == 254 and "FLOW_STATS" in show["capabilities"]
    assert [(p["port_no"], p["name"]) for p in show["ports"]] == [(1, "net_pcap0"),
                                                                  (2, "net_pcap1")]
    assert all(re.fullmatch(r"([0-9a-f]{2}:){5}[0-9a-f]{2}", p["hw_addr"]) for p in
               show["ports"])
    text = ctl.ok("show")
    assert f"datapath_id: {show['datapath_id']}" in text and "net_pcap1" in text
    if have_ofctl():
        theirs = testing.ofctl(env.target, "show")
        assert f"dpid:{show['datapath_id']}" in theirs, theirs
        ofctl_ports = testing.ofctl(env.target, "dump-ports")
        assert re.search(rf"port +1: rx pkts={len(env.frames)}, bytes={sent_bytes},",
                         ofctl_ports), ofctl_ports


def test_dump_tables(env: Env) -> None:
    """dump-tables: lookups and matched of table 0 equal the frames sent.

    Steps:
        1. Wait for the frames; dump-tables (text and --json); dump-tables --all.
    Verify:
        Table 0: active 1, lookups = matched = frames sent; only tables in use are
        listed without --all, all 254 with it.
    """
    ctl = env.ctl
    wait_rx(ctl, 1, len(env.frames))
    deadline = time.monotonic() + 10
    while True:
        tables = ctl.json("dump-tables")["tables"]
        if tables and tables[0]["lookup_count"] >= len(env.frames):
            break
        assert time.monotonic() < deadline, tables
        time.sleep(0.1)
    assert [t["table_id"] for t in tables] == [0]
    t0 = tables[0]
    assert t0["active_count"] == 1
    assert t0["lookup_count"] == t0["matched_count"] == len(env.frames)
    text = ctl.ok("dump-tables")
    assert re.search(rf"^\s+0\s+\S+\s+1\s+{len(env.frames)}\s+{len(env.frames)}$", text,
                     re.M), text
    assert len(ctl.json("dump-tables", "--all")["tables"]) == 254


def _group_mod(group_id: int, gtype: int, buckets: list[tuple[int, list[bytes]]]) -> bytes:
    """OFPT_GROUP_MOD add: buckets of (weight, actions)."""
    body = struct.pack("!HBxI", 0, gtype, group_id)
    for weight, acts in buckets:
        a = b"".join(acts)
        body += struct.pack("!HHII4x", 16 + len(a), weight, 0xFFFFFFFF, 0xFFFFFFFF) + a
    return ofp.message(ofp.OFPT_GROUP_MOD, body, ofp.next_xid())


def test_dump_groups(env: Env) -> None:
    """dump-groups shows a select group added over raw OpenFlow, with its buckets.

    Steps:
        1. Add group 7 (select, two buckets) with the raw client; add a flow using it.
        2. dump-groups (text and --json).
    Verify:
        group_id=7,type=select and both buckets with weight and actions; ref_count 1.
    """
    with ofp.Client.connect(env.target) as c:
        c.send(_group_mod(7, 1, [(3, [ofp.action_output(1)]), (5, [ofp.action_output(2)])]))
        c.barrier()
        assert c.errors_since(0.2) == []
    env.ctl.ok("add-flow", "table=5,priority=1 actions=group:7")
    text = env.ctl.ok("dump-groups")
    assert (" group_id=7,type=select,bucket=weight:3,actions=output:1,"
            "bucket=weight:5,actions=output:2") in text, text
    (g,) = env.ctl.json("dump-groups")["groups"]
    assert g["group_id"] == 7 and g["type"] == "select" and g["ref_count"] == 1
    assert [(b["weight"], b["actions"]) for b in g["buckets"]] == [(3, "output:1"),
                                                                  (5, "output:2")]


def test_json_outputs_parse(env: Env) -> None:
    """Every OpenFlow command's --json output is one JSON document (also on errors)."""
    ctl = env.ctl
    for args in (("show",), ("dump-flows",), ("dump-tables",), ("dump-ports",),
                 ("dump-groups",), ("add-flow", "priority=1 actions=drop"),
                 ("del-flows", "priority=1")):
        r = ctl("--json", *args)
        assert r.returncode == 0, r
        json.loads(r.stdout)
    r = ctl("--json", "add-flow", "actions=group:99")
    assert r.returncode == 1
    assert json.loads(r.stdout)["errors"][0]["error"] == "OFPBAC_BAD_OUT_GROUP"


# ---------------------------------------------------------------------------
# Telemetry commands against a fake telemetry server
# ---------------------------------------------------------------------------

Handler = Callable[[str | None], Any]


class FakeTelemetry:
    """A DPDK telemetry v2 server: greeting, then one JSON reply per request.

    @handlers maps a command to a function of the parameters returning the VALUE
    (wrapped as {"cmd": VALUE}), or to a ``bytes`` reply sent verbatim.  Requests
    are recorded in ``requests``.  Unknown commands get {"cmd": null}, as DPDK does.
    """

    def __init__(self, handlers: dict[str, Handler | bytes], max_output_len: int = 16384) -> None:
        self.path = testing.socket_path("ftel")
        self.handlers = handlers
        self.max_output_len = max_output_len
        self.requests: list[str] = []
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.srv.bind(self.path)
        self.srv.listen(4)
        self._t = threading.Thread(target=self._accept, daemon=True)
        self._t.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.send(json.dumps({"version": "DPDK 22.11.1", "pid": os.getpid(),
                                  "max_output_len": self.max_output_len}).encode())
            while True:
                try:
                    req = conn.recv(1024)
                except OSError:
                    return
                if not req:
                    return
                text = req.decode()
                self.requests.append(text)
                cmd, _, params = text.partition(",")
                h = self.handlers.get(cmd)
                if isinstance(h, bytes):
                    out = h
                elif h is None:
                    out = json.dumps({cmd: None}).encode()
                else:
                    out = json.dumps({cmd: h(params or None)}).encode()
                conn.send(out)

    def close(self) -> None:
        self.srv.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)


class Counters:
    """Sluice-like counters that grow by a fixed step at every read (for rates)."""

    def __init__(self) -> None:
        self.reads = 0

    def ports(self, _p: str | None) -> dict[str, Any]:
        self.reads += 1
        n = self.reads
        return {"1": {"name": "net_pcap0", "link": 1, "live": 1, "rx_packets": 1000 * n,
                      "rx_bytes": 64000 * n, "tx_packets": 0, "tx_bytes": 0, "tx_dropped": 0,
                      "rx_missed": 0},
                "2": {"name": "net_null0", "link": 0, "live": 1, "rx_packets": 0,
                      "rx_bytes": 0, "tx_packets": 990 * n, "tx_bytes": 63360 * n,
                      "tx_dropped": 10 * n, "rx_missed": 0}}

    def tables(self, _p: str | None) -> dict[str, Any]:
        n = self.reads
        return {"0": {"kind": "mask", "name": "eth", "flows": 8, "lookups": 1000 * n,
                      "matched": 995 * n, "missed": 5 * n},
                "2": {"kind": "lpm", "name": "fib", "flows": 1000, "lookups": 995 * n,
                      "matched": 990 * n, "missed": 5 * n}}

    def drops(self, _p: str | None) -> dict[str, Any]:
        n = self.reads
        return {"table-miss": 5 * n, "no-output": 0, "ttl-expired": 3 * n, "tx-full": 0,
                "total": 8 * n}

    def datapath(self, _p: str | None) -> dict[str, Any]:
        n = self.reads
        return {"workers": 1, "iterations": 100000 * n, "busy_rounds": 40 * n,
                "busy_cycles": 45000 * n, "bursts": 40 * n, "packets": 1000 * n, "copies": 0,
                "tsc_hz": 2100000000, "cache_hits": 0, "cache_misses": 0,
                "rcu_grace_periods": 0}


INFO = {"name": "fake", "version": "0.1.0", "dpdk": "DPDK 22.11.1", "pid": 1,
        "datapath_id": "0000020000000001", "uptime_ms": 3723000, "n_ports": 2,
        "n_tables_used": 2, "n_flows": 1008, "n_groups": 0, "workers": 1, "burst": 32,
        "tsc_hz": 2100000000, "fail_mode": "standalone", "mgmt": "/run/sluice/fake.mgmt",
        "controllers_configured": 0, "controllers_connected": 0}
LATENCY = {"pipeline": {"count": 147000, "mean_ns": 1830, "max_ns": 41000, "p50_ns": 2048,
                        "p90_ns": 4096, "p99_ns": 8192, "p999_ns": 16384},
           "packet_in": {"count": 0, "mean_ns": 0, "max_ns": 0, "p50_ns": 0, "p90_ns": 0,
                         "p99_ns": 0, "p999_ns": 0}}
CONTROLLER = {"packet_outs": 2, "packet_ins_queued": 5, "connections": 1,
              "conn_0": "punix:/run/sluice/fake.mgmt service"}
FLOW_CACHE = {"spec": "active", "policy": "stepped aside", "workers": 1, "workers_on": 0,
              "tables": 3, "key_bytes": 48, "entries": 32768, "capacity": 32768, "hits": 32,
              "misses": 933504, "hit_permille": 0, "inserts": 933504, "stale": 0,
              "evictions": 900736}
CAPTURE = {"state": "running", "port": 1, "dir": "rx", "file": "/tmp/x.pcapng", "count": 10,
           "bytes": 67108864, "snaplen": 65535, "captured": 0, "written_bytes": 0, "dropped": 0}
LOG = {"app": "notice", "ofswitch": "info"}


@pytest.fixture
def fake_tel(sluicectl_bin: Path) -> Iterator[tuple[FakeTelemetry, Ctl, Counters]]:
    cnt = Counters()
    handlers: dict[str, Handler | bytes] = {
        "/sluice/info": lambda p: INFO,
        "/sluice/ports": cnt.ports,
        "/sluice/tables": cnt.tables,
        "/sluice/drops": cnt.drops,
        "/sluice/datapath": cnt.datapath,
        "/sluice/latency": lambda p: LATENCY,
        "/sluice/controller": lambda p: CONTROLLER,
        "/sluice/flow_cache": lambda p: FLOW_CACHE,
        "/sluice/capture": lambda p: CAPTURE,
        "/sluice/capture/start": lambda p: CAPTURE,
        "/sluice/capture/stop": lambda p: {"error": "no capture to stop"},
        "/sluice/log": lambda p: LOG,
        "/sluice/log/level": lambda p: dict(LOG, app=p.split(",")[1]) if p else {"error": "x"},
        "/sluice/port": lambda p: {"error": f"no port '{p}'"},
        "/top/error": b'{"error": "control thread busy"}',
        "/garbage": b"{not json",
    }
    srv = FakeTelemetry(handlers)
    try:
        yield srv, Ctl(sluicectl_bin, ["--telemetry", srv.path]), cnt
    finally:
        srv.close()


def test_stats_fake(fake_tel: tuple[FakeTelemetry, Ctl, Counters]) -> None:
    """stats prints each section as a table, and --json the replies' inner objects.

    Steps:
        1. stats (all), stats ports, stats --json, stats drops --json against the fake.
    Verify:
        Every section heading (flow_cache included, its policy shown) and its values
        appear; ports show name and state; the
        latency percentiles are printed with units; uptime 3723 s is "1h02m03s";
        --json all has one member per section equal to the served values.
    """
    srv, ctl, _ = fake_tel
    text = ctl.ok("stats")
    for sec in ("info", "ports", "tables", "drops", "datapath", "latency", "controller",
                "flow_cache"):
        assert f"== {sec} ==" in text, text
    assert re.search(r"^policy:\s+stepped aside$", text, re.M), text
    assert re.search(r"^uptime:\s+1h02m03s$", text, re.M), text
    assert re.search(r"^\s+1\s+net_pcap0\s+up\s+1000\s+64000\s+0\s+0\s+0\s+0$", text,
                     re.M), text
    assert re.search(r"^\s+2\s+net_null0\s+down\s", text, re.M), text
    assert re.search(r"^pipeline\s+147000\s+1\.83us\s+2\.05us\s+4\.10us\s+8\.19us\s+16\.38us"
                     r"\s+41\.00us$", text, re.M), text
    assert re.search(r"^\s+2\s+fib\s+lpm\s+1000\s", text, re.M), text
    assert re.search(r"^cycles/packet:\s+45\.0$", text, re.M), text
    assert "conn_0:" in text and "service" in text
    js = ctl.json("stats")
    assert set(js) == {"info", "ports", "tables", "drops", "datapath", "latency", "controller",
                       "flow_cache"}
    assert js["info"] == INFO and js["latency"] == LATENCY and js["flow_cache"] == FLOW_CACHE
    assert ctl.json("stats", "drops")["ttl-expired"] % 3 == 0
    assert "/sluice/ports" in srv.requests


def test_monitor_fake(fake_tel: tuple[FakeTelemetry, Ctl, Counters]) -> None:
    """monitor --count N prints N blocks of per-second rates and exits 0.

    Steps:
        1. monitor --interval 0.2 --count 2 (not a tty); monitor --json --count 1.
    Verify:
        Two blocks with the header line (name, dpid, uptime); port 1 rx pps about
        1000/0.2 s = 5.00k; drops/s list only non-zero reasons; the lines fit 80
        columns; no ANSI escapes when not on a tty; --json gives an array of one
        sample with rates.
    """
    _, ctl, _ = fake_tel
    out = ctl.ok("monitor", "--interval", "0.2", "--count", "2")
    assert out.count("fake  dpid 0000020000000001  up 1h02m03s") == 2, out
    assert "\033" not in out
    assert all(len(ln) <= 80 for ln in out.splitlines()), out
    m = re.search(r"^\s+1 net_pcap0\s+(\S+)\s+(\S+)\s", out, re.M)
    assert m, out
    assert m.group(1).endswith("k") and 3.0 < float(m.group(1)[:-1]) < 5.5, m.group(1)
    assert re.search(r"^DROPS/s: table-miss \S+ ttl-expired \S+$", out, re.M), out
    assert "no-output" not in out
    assert re.search(r"^DATAPATH: .* 45\.0 cycles/pkt, burst 25\.0$", out, re.M), out
    js = ctl.json("monitor", "--interval", "0.2", "--count", "1")
    assert isinstance(js, list) and len(js) == 1
    s = js[0]
    assert s["name"] == "fake" and 3000 < s["ports"]["1"]["rx_pps"] < 5500
    assert s["tables"]["2"]["name"] == "fib" and s["drops_per_sec"]["no-output"] == 0
    assert abs(s["datapath"]["cycles_per_packet"] - 45.0) < 1e-6


def _monitor_on_pty(ctl: Ctl, stop: str) -> tuple[int, bytes, bool]:
    """Run monitor on a pseudo-terminal until the first refresh, then stop it with
    SIGINT or the 'q' key; returns (exit code, output, terminal mode restored)."""
    master, slave = os.openpty()
    before = termios.tcgetattr(slave)
    p = subprocess.Popen([str(ctl.binary), *ctl.base, "monitor", "--interval", "0.2"],
                         stdin=slave, stdout=slave, stderr=subprocess.PIPE,
                         start_new_session=True)
    out = b""
    try:
        deadline = time.monotonic() + 15
        while b"DATAPATH" not in out and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                out += os.read(master, 65536)
        if stop == "sigint":
            os.kill(p.pid, signal.SIGINT)
        else:
            os.write(master, b"q")
        rc = p.wait(timeout=10)
        while True:
            ready, _, _ = select.select([master], [], [], 0.2)
            if not ready:
                break
            chunk = os.read(master, 65536)
            if not chunk:
                break
            out += chunk
        restored = termios.tcgetattr(slave)[3] == before[3]
        return rc, out, restored
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)
        os.close(master)
        os.close(slave)


def test_monitor_tty_fake(fake_tel: tuple[FakeTelemetry, Ctl, Counters]) -> None:
    """On a terminal monitor redraws in place and restores the terminal on exit.

    Steps:
        1. monitor on a pseudo-terminal; after the first refresh send SIGINT.
        2. Again, and stop it with the 'q' key.
    Verify:
        Exit 0; the cursor is hidden, each refresh starts with home + clear to the
        end of screen, the cursor is shown again last, and the terminal's local
        modes (echo, line editing) are as before.
    """
    _, ctl, _ = fake_tel
    for stop in ("sigint", "q"):
        rc, out, restored = _monitor_on_pty(ctl, stop)
        assert rc == 0, (stop, out)
        assert out.startswith(b"\x1b[?25l\x1b[H\x1b[J"), out[:40]
        assert b"net_pcap0" in out and b"(q: quit)" in out
        assert out.rstrip(b"\r\n").endswith(b"\x1b[?25h"), out[-40:]
        assert restored, stop


def test_capture_log_telemetry_fake(fake_tel: tuple[FakeTelemetry, Ctl, Counters]) -> None:
    """capture, log and telemetry send the documented requests and print the replies.

    Steps:
        1. capture start 1 with every option; capture status; capture stop (refused).
        2. log; log sluice.* debug.
        3. telemetry /sluice/port,7 (error), /nope (null), /top/error, /garbage,
           /sluice/info.
    Verify:
        The server saw "/sluice/capture/start,port=1,dir=rx,file=...,count=10,
        bytes=1000,snaplen=128" and "/sluice/log/level,sluice.*,debug"; errors exit 1
        naming the switch's text; telemetry prints the reply JSON.
    """
    srv, ctl, _ = fake_tel
    out = ctl.ok("capture", "start", "1", "--dir", "rx", "--file", "/tmp/x.pcapng",
                 "--count", "10", "--bytes", "1000", "--snaplen", "128")
    assert re.search(r"^state:\s+running$", out, re.M), out
    assert ("/sluice/capture/start,port=1,dir=rx,file=/tmp/x.pcapng,count=10,bytes=1000,"
            "snaplen=128") in srv.requests, srv.requests
    assert ctl.json("capture", "status") == CAPTURE
    r = ctl("capture", "stop")
    assert r.returncode == 1 and "the switch refused: no capture to stop" in r.stderr, r
    assert re.search(r"^app\s+notice$", ctl.ok("log"), re.M)
    assert re.search(r"^app\s+debug$", ctl.ok("log", "sluice.*", "debug"), re.M)
    assert "/sluice/log/level,sluice.*,debug" in srv.requests
    r = ctl("telemetry", "/sluice/port,7")
    assert r.returncode == 1 and json.loads(r.stdout) == {"/sluice/port": {"error":
                                                                            "no port '7'"}}
    assert "no port '7'" in r.stderr
    r = ctl("telemetry", "/nope")
    assert r.returncode == 1 and "null" in r.stderr, r
    r = ctl("stats", "info", "--telemetry", srv.path)
    assert r.returncode == 0
    r = ctl("telemetry", "/top/error")
    assert r.returncode == 1 and "control thread busy" in r.stderr
    r = ctl("telemetry", "/garbage")
    assert r.returncode == 1 and "not JSON" in r.stderr
    assert json.loads(ctl.ok("telemetry", "/sluice/info")) == {"/sluice/info": INFO}


def test_telemetry_server_gone(sluicectl_bin: Path) -> None:
    """A telemetry server that closes without a greeting exits 3 and says so."""
    path = testing.socket_path("tclo")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(1)

    def close_all() -> None:
        with contextlib.suppress(OSError):
            conn, _ = srv.accept()
            conn.close()

    t = threading.Thread(target=close_all, daemon=True)
    t.start()
    try:
        r = Ctl(sluicectl_bin)("--telemetry", path, "stats", "ports")
        assert r.returncode == 3 and "before its greeting" in r.stderr, r
    finally:
        srv.close()
        os.unlink(path)
        t.join(5)


# ---------------------------------------------------------------------------
# Telemetry commands against the real switch (when it has them)
# ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def telemetry_bin(sluice_bin: Path) -> Path:
    """$SLUICE_TELEMETRY_BIN, else sluice_bin; skip when it has no /sluice/ commands."""
    path = Path(os.environ.get("SLUICE_TELEMETRY_BIN", str(sluice_bin)))
    if not path.is_file() or b"/sluice/ports" not in path.read_bytes():
        pytest.skip(f"{path} has no telemetry commands (set SLUICE_TELEMETRY_BIN)")
    return path


@pytest.fixture
def tel_env(telemetry_bin: Path, sluicectl_bin: Path, tmp_path: Path) -> Iterator[Env]:
    with running_switch(telemetry_bin, tmp_path, sluicectl_bin) as e:
        yield e


def test_stats_real_switch(tel_env: Env) -> None:
    """stats via --name (the EAL file prefix) agrees with OpenFlow's dump-ports.

    Steps:
        1. Wait for the replayed frames; stats --json; stats ports (text).
    Verify:
        info names the instance; /sluice/ports rx_packets of port 1 and tx of port 2
        equal the frames sent and dump-ports' counters; table 0 lookups = frames;
        drops total 0; show over /run/sluice/NAME.mgmt works too.
    """
    name = tel_env.sw.prefix
    ctl = Ctl(tel_env.ctl.binary, ["--name", name])
    n = len(tel_env.frames)
    wait_rx(tel_env.ctl, 1, n)
    deadline = time.monotonic() + 10
    while True:
        js = ctl.json("stats")
        if js["ports"]["2"]["tx_packets"] >= n or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert js["info"]["name"] == name
    assert js["ports"]["1"]["rx_packets"] == n and js["ports"]["2"]["tx_packets"] == n
    assert js["ports"]["1"]["rx_bytes"] == sum(len(x) for x in tel_env.frames)
    assert js["tables"]["0"]["lookups"] == n and js["tables"]["0"]["flows"] == 1
    assert js["drops"]["total"] == 0
    of_ports = {p["port_no"]: p for p in tel_env.ctl.json("dump-ports")["ports"]}
    assert of_ports[1]["rx_packets"] == js["ports"]["1"]["rx_packets"]
    text = ctl.ok("stats", "ports")
    assert re.search(rf"^\s+1\s+net_pcap0\s+up\s+{n}\s", text, re.M), text
    if Path(f"/run/sluice/{name}.mgmt").exists():
        assert ctl.json("show")["ports"][0]["name"] == "net_pcap0"


def test_monitor_capture_log_real_switch(tel_env: Env, tmp_path: Path) -> None:
    """monitor, capture and log work against the real switch.

    Steps:
        1. monitor --count 1 --interval 0.2; capture start 2 --file F --count 5;
           capture status; capture stop; log; log sluice.app debug; telemetry
           /sluice/port,9 (no such port).
    Verify:
        Exit codes 0 (1 for the bad port, with the switch's message); the capture
        names the file; the log table lists app at debug afterwards.
    """
    ctl = Ctl(tel_env.ctl.binary, ["--name", tel_env.sw.prefix])
    out = ctl.ok("monitor", "--count", "1", "--interval", "0.2")
    assert f"{tel_env.sw.prefix}  dpid " in out and "net_pcap0" in out, out
    pcap = tmp_path / "cap.pcapng"
    st = ctl.json("capture", "start", "2", "--file", str(pcap), "--count", "5")
    assert st["file"] == str(pcap) and st["port"] == 2, st
    assert ctl.json("capture", "status")["state"] in ("running", "done")
    ctl.ok("capture", "stop")
    assert ctl.json("log").get("app")
    assert ctl.json("log", "sluice.app", "debug")["app"] == "debug"
    r = ctl("telemetry", "/sluice/port,9")
    assert r.returncode == 1 and "no port" in r.stderr, r


def test_sluicectl_links_no_dpdk() -> None:
    """sluicectl is DPDK-free (issue #23): ``ldd`` shows no librte_* library, so the tool
    runs on a machine without DPDK's shared libraries' dependencies loaded."""
    binary = Path(__file__).resolve().parent.parent / "build" / "app" / "sluicectl"
    if not binary.exists():
        pytest.skip("no sluicectl built")
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, timeout=30).stdout
    assert "librte_" not in out, out
