"""Control-path benchmark: OpenFlow flow_mod rate, flow dump time, packet_in round trip.

Figures (medians over --rounds runs, each on a fresh switch):
  flow_mods_per_s_exact  100,000 pre-encoded flow_mod adds (eth_dst exact, output:2) into
                         table 0, declared `kind=exact,fields=dl_dst` in the startup flow
                         file; all written to the socket as fast as it takes them, then
                         one barrier.  Time = first byte sent -> barrier reply received.
  flow_mods_per_s_mask   the same into table 1, a mask table (eth_type, ip_proto,
                         ipv4_dst with 4 prefix lengths, tcp_dst) already holding 10,000
                         entries (loaded over OpenFlow first, not timed).
  dump_100k_s            one OFPMP_FLOW request for table 0 (then holding 100,001 flows)
                         -> the last reply without REPLY_MORE.
  fwd_mpps_during_flow_mods  while the exact-table flow_mods are sent, port 1 (net_pcap,
                         64-byte frames, infinite_rx) is forwarded to port 2 (net_null)
                         by a startup flow; Mpps = port 2 tx_packets delta (OpenFlow
                         port stats just before the first flow_mod byte and just after
                         the barrier reply) / that interval.
  packet_in_rtt_us       a punt round trip through an instant controller: this process
                         listens, the switch (two veth ports, fail-mode secure) connects
                         to it, and it installs one table-miss entry output:CONTROLLER.
                         Per sample: send a frame into port 1, wait for its packet_in,
                         answer at once with a packet_out (output:2, the frame's bytes),
                         and time until the frame comes out of port 2.  The controller
                         adds only a Python recv and send, the same for both switches,
                         so the figure is the switch's: punt, packet_in, packet_out,
                         transmit.  packet_in_us is the first half (frame sent ->
                         packet_in received).  Medians of --pktin-rounds samples after
                         PUNT_WARMUP.
  packet_in_slow_us      a first packet through a reactive controller: the os-ken
                         learning switch (sluice.apps.learning_switch) is the controller
                         of a switch with two veth ports, in fail-mode secure.  Per
                         round: delete the learned in_port=1 flow (own OpenFlow
                         connection, barrier); send frame A (h1 -> h2, both MACs already
                         learned) into port 1 and time until it comes out of port 2:
                         packet_in -> app -> flow_mod + packet_out -> output.
  packet_in_fast_us      then frame B of the same flow: the flow the app just installed.
  packet_in_detour_us    median(slow - fast), what the os-ken app's detour adds.  It
                         holds the app's own time (about 0.4 ms on this machine, seen on
                         the wire), and it subtracts each switch's fast path: OVS's
                         netdev bridge takes an upcall there too, so this is not the
                         switch's packet-in cost; packet_in_rtt_us is.
                         Frames are sent and received on the veth peers with AF_PACKET
                         sockets, timed with perf_counter in this process.
If ovs-vswitchd is installed, the same load runs against an Open vSwitch userspace bridge
(datapath_type=netdev; its own ovsdb-server and run dir in a temp dir, both stopped by PID)
and ovs_ratio_<figure> = Sluice / OVS is added for the flow_mod, dump and packet_in
figures (for *_us and *_s figures below 1 means Sluice is faster).  OVS has no table
kinds: its tables 0 and 1 get the same messages.  Machine: 2 cores, so the client, the
switch's control thread and its datapath core share them; compare runs, not absolutes.

Meter accuracy (python/src/sluice/bench/meter.py has the details): pktps and kbps drop-band
meters at 1, 10, 100 and 1,000 kpps, each offered twice its rate by sluice-gen;
meter_rate_error_<unit>_<rate> = |measured - configured| / configured, and
meter_rate_error_max the largest.  --meters-only runs just these; --no-meters skips them.
--pktin-only runs the packet-in rounds (and the meters unless --no-meters) without the
flow_mod storm; both keep the other figures of an earlier control.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager

from sluice import ofp, testing
from sluice.bench import arg_parser, meter, write_results

EXACT_TABLE, MASK_TABLE = 0, 1
STORM_COOKIE, PREFILL_COOKIE = 0xB0, 0xB1
DST_MAC = "02:00:00:00:00:02"
H1_MAC, H2_MAC = "02:00:00:00:0a:01", "02:00:00:00:0a:02"
#: Punt samples thrown away first (ARP-free veths, but the first frames warm caches).
PUNT_WARMUP = 5
STARTUP_FLOWS = [
    f"table={EXACT_TABLE},kind=exact,fields=dl_dst,size=262144,name=exact",
    f"table={MASK_TABLE},kind=mask,fields=dl_type+nw_proto+nw_dst+tcp_dst,size=262144,name=acl",
    f"table={EXACT_TABLE},priority=100,dl_dst={DST_MAC},actions=output:2",
]


# ---------------------------------------------------------------------------
# Message sets
# ---------------------------------------------------------------------------


def exact_flow_mods(n: int) -> bytes:
    """@n adds into the exact table: eth_dst 02:01:<i> -> output:2."""
    out = ofp.action_output(2)
    return b"".join(
        ofp.flow_mod([ofp.oxm_eth_dst(b"\x02\x01" + struct.pack("!I", i))], [out],
                     table_id=EXACT_TABLE, priority=100, cookie=STORM_COOKIE)
        for i in range(n))


def mask_flow_mods(first: int, n: int, cookie: int) -> bytes:
    """@n distinct adds into the mask table: ipv4_dst 10.a.b.0/{24..27} (4 masks), tcp_dst."""
    out = ofp.action_output(2)
    msgs = []
    for i in range(first, first + n):
        a = i & 0xFFFF
        addr = (10 << 24) | (a << 8)
        msgs.append(ofp.flow_mod(
            [ofp.oxm_eth_type(0x0800), ofp.oxm_ip_proto(6),
             ofp.oxm_ipv4_dst(addr, 24 + (i & 3)), ofp.oxm_tcp_dst(1 + (i >> 16))],
            [out], table_id=MASK_TABLE, priority=100, cookie=cookie))
    return b"".join(msgs)


# ---------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------


def blast(c: ofp.Client, blob: bytes, timeout: float = 300.0) -> tuple[float, int]:
    """Send @blob then a barrier; (seconds from first byte to barrier reply, errors seen)."""
    xid = ofp.next_xid()
    state = {"errors": 0, "done": 0.0}

    def reader() -> None:
        while True:
            m = c.recv(timeout)
            if m.type == ofp.OFPT_ERROR:
                state["errors"] += 1
            elif m.type == ofp.OFPT_ECHO_REQUEST:
                c.send(ofp.echo_reply(m.body, m.xid))
            elif m.type == ofp.OFPT_BARRIER_REPLY and m.xid == xid:
                state["done"] = time.perf_counter()
                return

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    t0 = time.perf_counter()
    c.send(blob + ofp.barrier_request(xid))
    t.join(timeout)
    if not state["done"]:
        raise RuntimeError("no barrier reply")
    return state["done"] - t0, int(state["errors"])


def port_tx_packets(c: ofp.Client, port_no: int) -> int:
    """tx_packets of @port_no from OFPMP_PORT_STATS."""
    for m in c.multipart(ofp.OFPMP_PORT_STATS, struct.pack("!I4x", port_no)):
        body = ofp.multipart_reply_info(m)[2]
        for off in range(0, len(body) - 111, 112):
            pn, _rx, tx = struct.unpack_from("!I4xQQ", body, off)
            if pn == port_no:
                return int(tx)
    raise RuntimeError(f"no stats for port {port_no}")


def dump_seconds(c: ofp.Client, table_id: int, expect: int) -> float:
    """Seconds to dump @table_id (request -> last reply); checks the entry count."""
    t0 = time.perf_counter()
    replies = c.multipart(ofp.OFPMP_FLOW, ofp.flow_stats_request_body(table_id), timeout=300)
    dt = time.perf_counter() - t0
    n = sum(ofp.count_flow_stats(ofp.multipart_reply_info(m)[2]) for m in replies)
    if n < expect:
        raise RuntimeError(f"dump returned {n} flows, expected >= {expect}")
    return dt


def storm_round(target: str, n: int, exact_blob: bytes,
                prefill_blob: bytes, mask_blob: bytes, fwd: bool) -> dict[str, float]:
    """One round of the flow_mod and dump figures on a fresh switch at @target."""
    r: dict[str, float] = {}
    with ofp.Client.connect(target, timeout=30) as c:
        c.barrier()
        tx0 = port_tx_packets(c, 2) if fwd else 0
        t0 = time.perf_counter()
        dt, errs = blast(c, exact_blob)
        if fwd:
            tx1 = port_tx_packets(c, 2)
            r["fwd_mpps_during_flow_mods"] = (tx1 - tx0) / (time.perf_counter() - t0) / 1e6
        if errs:
            raise RuntimeError(f"{errs} errors during the exact flow_mods")
        r["flow_mods_per_s_exact"] = n / dt
        r["dump_100k_s"] = dump_seconds(c, EXACT_TABLE, n)
        _, errs = blast(c, prefill_blob)
        if errs:
            raise RuntimeError(f"{errs} errors during the mask prefill")
        dt, errs = blast(c, mask_blob)
        if errs:
            raise RuntimeError(f"{errs} errors during the mask flow_mods")
        r["flow_mods_per_s_mask"] = n / dt
    return r


def packet_in_rounds(target: str, p1: testing.RawPort, p2: testing.RawPort,
                     rounds: int, after_delete: Callable[[], object] | None = None
                     ) -> dict[str, float]:
    """packet_in slow path vs fast path (see the module docstring).

    @after_delete runs after each flow delete: Open vSwitch keeps forwarding on its
    datapath flow cache until revalidation, so its rounds purge that cache there
    (else the "slow" frame never reaches the controller).
    """

    def frame(tag: bytes) -> bytes:
        return testing.eth_frame(H2_MAC, H1_MAC, b"slbench" + tag, size=64)

    def through(src: testing.RawPort, dst: testing.RawPort, f: bytes,
                timeout: float = 10) -> float:
        t0 = time.perf_counter()
        src.send([f])
        got = dst.recv_until(lambda g: bool(g), timeout, keep=lambda x: x == f)
        if not got:
            raise RuntimeError("frame did not come through")
        return time.perf_counter() - t0

    # Teach the app both MACs: h2 -> h1 floods (h1 unknown), h1 -> h2 installs a flow.
    # The switch may not have reached the app yet (OVS connects with a backoff): the
    # first frames are dropped in fail-mode secure, so the first one is sent again.
    back = testing.eth_frame(H1_MAC, H2_MAC, b"slbench-warm", size=64)
    for attempt in range(40):
        try:
            through(p2, p1, back, timeout=0.5)
            break
        except RuntimeError:
            if attempt == 39:
                raise
    through(p1, p2, frame(b"warm"))
    slow, fast = [], []
    with ofp.Client.connect(target, timeout=30) as c:
        for i in range(rounds):
            c.send(ofp.flow_delete([ofp.oxm_in_port(1)]))
            c.barrier()
            if after_delete is not None:
                after_delete()
            slow.append(through(p1, p2, frame(b"s%d" % i)))
            fast.append(through(p1, p2, frame(b"f%d" % i)))
    return {
        "packet_in_detour_us":
            statistics.median(s - f for s, f in zip(slow, fast, strict=True)) * 1e6,
        "packet_in_slow_us": statistics.median(slow) * 1e6,
        "packet_in_fast_us": statistics.median(fast) * 1e6,
    }


def punt_rounds(srv: socket.socket, p1: testing.RawPort, p2: testing.RawPort,
                rounds: int) -> dict[str, float]:
    """packet_in round trips through an instant controller: this process (see the docstring).

    @srv is the listening socket the switch connects to as its controller.  While a sample
    runs, this process polls its two sockets without blocking (os.sched_yield between
    tries, so a thread sharing its core still runs): a blocked reader's wake-up costs
    about 60 us on a VM's idle core, on both switches alike, and would hide the switch's
    own time.
    """
    srv.settimeout(30)
    conn, _ = srv.accept()
    conn.settimeout(None)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with ofp.Client(conn) as c:
        c.handshake(timeout=30)
        c.send(ofp.flow_mod([], [ofp.action_output(ofp.OFPP_CONTROLLER)], priority=0))
        c.barrier()
        to_ctl, rtt = [], []
        conn.setblocking(False)
        p2.sock.setblocking(False)
        try:
            for i in range(PUNT_WARMUP + rounds):
                f = testing.eth_frame(H2_MAC, H1_MAC, b"slpunt%d" % i, size=64)
                t0 = time.perf_counter()
                p1.send([f])
                spin_packet_in(c, f, t0 + 10)
                t1 = time.perf_counter()
                c.send(ofp.packet_out(f, [ofp.action_output(2)], in_port=1))
                spin_frame(p2, f, t1 + 10)
                t2 = time.perf_counter()
                if i >= PUNT_WARMUP:
                    to_ctl.append(t1 - t0)
                    rtt.append(t2 - t0)
        finally:
            conn.setblocking(True)
            p2.sock.setblocking(True)
    return {"packet_in_rtt_us": statistics.median(rtt) * 1e6,
            "packet_in_us": statistics.median(to_ctl) * 1e6}


def spin_packet_in(c: ofp.Client, frame: bytes, deadline: float) -> None:
    """Poll @c (non-blocking) until the packet_in carrying @frame; answers echo requests."""
    while True:
        m = c.poll()
        if m is None:
            if time.perf_counter() > deadline:
                raise TimeoutError("no packet_in for the punted frame")
            os.sched_yield()
            continue
        if m.type == ofp.OFPT_PACKET_IN and ofp.parse_packet_in(m)[4] == frame:
            return
        if m.type == ofp.OFPT_ECHO_REQUEST:
            c.send(ofp.echo_reply(m.body, m.xid))


def spin_frame(port: testing.RawPort, frame: bytes, deadline: float) -> None:
    """Poll @port (non-blocking) until @frame arrives (frames the host sent are skipped)."""
    while True:
        try:
            data, addr = port.sock.recvfrom(65535)
        except BlockingIOError:
            if time.perf_counter() > deadline:
                raise TimeoutError("the packet_out frame did not come out") from None
            os.sched_yield()
            continue
        if addr[2] != testing.PACKET_OUTGOING and data == frame:
            return


# ---------------------------------------------------------------------------
# Switches under test
# ---------------------------------------------------------------------------


def write_pcap(path: str, frames: list[bytes]) -> None:
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 0, i, len(fr), len(fr)) + fr)


@contextmanager
def sluice_storm_switch(tmp: str) -> Iterator[str]:
    pcap = os.path.join(tmp, "fwd.pcap")
    write_pcap(pcap, [testing.eth_frame(DST_MAC, "02:00:00:00:00:01", b"", 0x0800, 64)] * 64)
    sock = testing.socket_path("slbc")
    sw = testing.Sluice(testing.SluiceConfig(
        ports=[f"net_pcap0,rx_pcap={pcap},infinite_rx=1", "net_null0,no-rx=1"],
        flows=STARTUP_FLOWS, controllers=(f"punix:{sock}",), mem_mb=1024))
    try:
        sw.wait_listening()
        yield f"unix:{sock}"
    finally:
        sw.stop()


@contextmanager
def sluice_pktin_switch(ctl_port: int) -> Iterator[tuple[str, str, str]]:
    """Sluice with two veth ports; yields (our target, peer of port 1, peer of port 2)."""
    with testing.Topology() as topo:
        (a1, b1), (a2, b2) = topo.add_veth("sbc"), topo.add_veth("sbc")
        sock = testing.socket_path("slbp")
        sw = testing.Sluice(testing.SluiceConfig(
            ports=testing.af_packet_ports([a1, a2]), fail_mode="secure",
            controllers=(f"tcp:127.0.0.1:{ctl_port}", f"punix:{sock}")))
        try:
            sw.wait_listening()
            yield f"unix:{sock}", b1, b2
        finally:
            sw.stop()


class Ovs:
    """ovsdb-server + ovs-vswitchd in a private run dir, bridge br0 (netdev, OF1.3)."""

    def __init__(self, tmp: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="ovs-", dir=tmp)
        self.env = dict(os.environ, OVS_RUNDIR=self.dir, OVS_DBDIR=self.dir,
                        OVS_LOGDIR=self.dir, OVS_SYSCONFDIR=self.dir)
        self.db = f"unix:{self.dir}/db.sock"
        self.procs: list[testing.Proc] = []
        schema = "/usr/share/openvswitch/vswitch.ovsschema"
        subprocess.run(["ovsdb-tool", "create", f"{self.dir}/conf.db", schema], check=True,
                       env=self.env)
        self.procs.append(testing.Proc(
            ["ovsdb-server", f"{self.dir}/conf.db", f"--remote=punix:{self.dir}/db.sock",
             f"--unixctl={self.dir}/ovsdb.ctl", "--no-chdir", "-vconsole:off"],
            env=self.env, name="ovsdb-server"))
        testing.wait_until(lambda: os.path.exists(f"{self.dir}/db.sock"), 20, "ovsdb-server")
        self.vsctl("--no-wait", "init")
        self.procs.append(testing.Proc(
            ["ovs-vswitchd", self.db, f"--unixctl={self.dir}/vswitchd.ctl", "--no-chdir",
             "-vconsole:off"], env=self.env, name="ovs-vswitchd"))

    def vsctl(self, *args: str) -> str:
        return subprocess.run(["ovs-vsctl", f"--db={self.db}", "--timeout=30", *args],
                              check=True, capture_output=True, text=True, env=self.env).stdout

    def bridge(self, ports: Sequence[str] = (), controller: str | None = None) -> str:
        """(Re)create br0 with @ports as OpenFlow 1, 2, ...; returns its OpenFlow target."""
        self.vsctl("--if-exists", "del-br", "br0")
        self.vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
                   "protocols=OpenFlow13", "fail_mode=secure")
        for i, p in enumerate(ports):
            self.vsctl("add-port", "br0", p, "--", "set", "interface", p,
                       f"ofport_request={i + 1}")
        if controller:
            self.vsctl("set-controller", "br0", controller)
        mgmt = f"{self.dir}/br0.mgmt"
        testing.wait_until(lambda: os.path.exists(mgmt), 20, "br0.mgmt")
        return f"unix:{mgmt}"

    def close(self) -> None:
        for p in reversed(self.procs):
            p.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


@contextmanager
def learning_app(port: int) -> Iterator[testing.Proc]:
    app = testing.Proc([sys.executable, "-m", "sluice.apps.run",
                        f"--ofp-tcp-listen-port={port}", "learning_switch"],
                       env=dict(os.environ, OSKEN_HUB_TYPE="eventlet"), name="os-ken")
    try:
        testing.wait_until(lambda: testing.tcp_listening(port) or not app.alive(), 30,
                           "the os-ken app")
        if not app.alive():
            raise RuntimeError(app.output)
        yield app
    finally:
        app.stop()


#: A switch for the flow_mod figures: yields its OpenFlow target.
StormSwitch = Callable[[], AbstractContextManager[str]]
#: A switch for the packet_in figures, given the app's port: yields (target, peer 1, peer 2).
PktinSwitch = Callable[[int], AbstractContextManager[tuple[str, str, str]]]


def run_switch(name: str, storm: StormSwitch, pktin: PktinSwitch,
               a: argparse.Namespace, blobs: tuple[bytes, bytes, bytes],
               fwd: bool, after_delete: Callable[[], object] | None = None
               ) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {}
    for rnd in range(a.rounds):
        r: dict[str, float] = {}
        if not a.pktin_only:
            with storm() as target:
                r = storm_round(target, a.n, *blobs, fwd=fwd)
        port = testing.free_tcp_port()
        with learning_app(port), pktin(port) as (target, b1, b2):
            with testing.RawPort(b1) as p1, testing.RawPort(b2) as p2:
                r.update(packet_in_rounds(target, p1, p2, a.pktin_rounds, after_delete))
        port = testing.free_tcp_port()
        with socket.create_server(("127.0.0.1", port)) as srv, pktin(port) as (_, b1, b2):
            with testing.RawPort(b1) as p1, testing.RawPort(b2) as p2:
                r.update(punt_rounds(srv, p1, p2, a.pktin_rounds))
        for k, v in r.items():
            samples.setdefault(k, []).append(v)
        print(f"  {name} round {rnd + 1}/{a.rounds}: "
              + ", ".join(f"{k} {v:,.3f}" for k, v in sorted(r.items())), flush=True)
    return samples


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = arg_parser("control", __doc__)
    ap.add_argument("--rounds", type=int, default=3, help="rounds per switch (default 3)")
    ap.add_argument("--n", type=int, default=100_000, help="timed flow_mods (default 100000)")
    ap.add_argument("--prefill", type=int, default=10_000, help="mask entries before (10000)")
    ap.add_argument("--pktin-rounds", type=int, default=50, help="packet_in samples per round")
    ap.add_argument("--no-ovs", action="store_true", help="skip Open vSwitch even if installed")
    ap.add_argument("--no-meters", action="store_true", help="skip the meter-accuracy trials")
    ap.add_argument("--meters-only", action="store_true", help="only the meter-accuracy trials")
    ap.add_argument("--pktin-only", action="store_true",
                    help="only the packet-in rounds (with OVS when installed), no flow_mod storm")
    ap.add_argument("--meter-seconds", type=float, default=2.0,
                    help="sending time of each meter trial (default 2)")
    return ap.parse_args(argv)


def summary_lines(results: dict[str, float], figures: Iterable[str]) -> list[str]:
    """The final table: one line per figure, with the OVS value and ratio when measured."""
    lines = [f"{'figure':<28} {'sluice':>14} {'ovs':>14} {'ratio':>7}"]
    for k in sorted(figures):
        o = results.get(f"ovs_{k}")
        r = results.get(f"ovs_ratio_{k}")
        lines.append(f"{k:<28} {results[k]:>14,.3f} {'' if o is None else f'{o:14,.3f}':>14} "
                     f"{'' if r is None else f'{r:7.2f}':>7}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    a = parse_args(argv)
    if os.geteuid() != 0:
        print("bench/control: needs root (veth pairs, AF_PACKET)", file=sys.stderr)
        return 2
    if not testing.openflow_supported():
        print(f"bench/control: {testing.sluice_binary()} has no -C/--controller", file=sys.stderr)
        return 2

    if a.meters_only:
        with tempfile.TemporaryDirectory(prefix="slbench-ctl-") as tmp:
            figures = meter.run(tmp, a.rounds, a.meter_seconds)
        # Only the meter figures were measured: the others of an earlier run stay.
        results: dict[str, float] = {}
        if os.path.exists(a.out):
            with open(a.out) as f:
                results = json.load(f)
        results.update(figures)
        return finish(a, results, [])

    t0 = time.perf_counter()
    blobs = (exact_flow_mods(a.n), mask_flow_mods(0, a.prefill, PREFILL_COOKIE),
             mask_flow_mods(a.prefill, a.n, STORM_COOKIE))
    print(f"encoded {a.n:,} exact + {a.prefill + a.n:,} mask flow_mods "
          f"({sum(map(len, blobs)) / 1e6:.1f} MB) in {time.perf_counter() - t0:.2f} s",
          flush=True)
    results = {}
    with tempfile.TemporaryDirectory(prefix="slbench-ctl-") as tmp:
        sl = run_switch("sluice", lambda: sluice_storm_switch(tmp), sluice_pktin_switch, a,
                        blobs, fwd=True)
        for k, v in sl.items():
            results[k] = round(statistics.median(v), 3)
            results[f"{k}_spread"] = round((max(v) - min(v)) / max(abs(statistics.median(v)),
                                                                    1e-12), 3)
        ovs_found = shutil.which("ovs-vswitchd") is not None and not a.no_ovs
        ov: dict[str, list[float]] = {}
        if ovs_found:
            with ExitStack() as stack:
                ovs = Ovs(tmp)
                stack.callback(ovs.close)

                @contextmanager
                def ovs_storm() -> Iterator[str]:
                    yield ovs.bridge()

                @contextmanager
                def ovs_pktin(port: int) -> Iterator[tuple[str, str, str]]:
                    with testing.Topology() as topo:
                        (a1, b1), (a2, b2) = topo.add_veth("sbo"), topo.add_veth("sbo")
                        target = ovs.bridge([a1, a2], f"tcp:127.0.0.1:{port}")
                        try:
                            yield target, b1, b2
                        finally:
                            ovs.vsctl("--if-exists", "del-br", "br0")

                def purge() -> None:
                    subprocess.run(
                        ["ovs-appctl", "-t", f"{ovs.dir}/vswitchd.ctl", "revalidator/purge"],
                        check=True, capture_output=True, env=ovs.env)

                ov = run_switch("ovs", ovs_storm, ovs_pktin, a, blobs, fwd=False,
                                after_delete=purge)
            for k, v in ov.items():
                results[f"ovs_{k}"] = round(statistics.median(v), 3)
                results[f"ovs_ratio_{k}"] = round(statistics.median(sl[k]) /
                                                  statistics.median(v), 3)
        else:
            print("ovs-vswitchd not found (Debian openvswitch-switch): no OVS comparison")
        if not a.no_meters:
            results.update(meter.run(tmp, a.rounds, a.meter_seconds))
    results["rounds"] = a.rounds
    results["n_flow_mods"] = a.n
    if a.pktin_only and os.path.exists(a.out):
        # Only the packet-in figures were measured: the others of an earlier run stay.
        with open(a.out) as f:
            earlier = json.load(f)
        earlier.update(results)
        results = earlier
    return finish(a, results, sl)


def finish(a: argparse.Namespace, results: dict[str, float], figures: Iterable[str]) -> int:
    table = ["", *summary_lines(results, figures)]
    table += [f"{k:<28} {results[k]:>14.4f}"
              for k in sorted(k for k in results if k.startswith("meter_rate_error"))]
    write_results(a.out, results, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
