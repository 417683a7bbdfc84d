"""The differential harness: the same rules and packets through Sluice and Open vSwitch, then
per packet the multiset of (output port, bytes) and of packet-ins (reason, table, cookie,
in_port, metadata, total_len, data) compared, drops included (both empty).

Switches:

- OVS: :class:`sluice.oracle.ovs.OvsDummySwitch`, netdev-dummy ports (``tx_pcap``).
- Sluice: ports ``net_pcap{i},rx_iface_in=VETH,tx_pcap=FILE``; frames are written to the
  veth's peer with an AF_PACKET socket (libpcap on the Sluice side puts a VLAN tag the kernel
  took off back in place) and every frame sent comes out byte for byte in the tx pcap.
- Both connect to a :class:`Controller` of their own on a Unix socket and get their rules
  through ``ovs-ofctl -O OpenFlow13 add-groups/add-flows`` from the same text.

Batches: the packets of a batch enter their ports; then a sentinel frame enters every port.
A flow of priority 65535 in table 0 (:data:`SENTINEL_FLOW`; the generator never uses that
priority) sends sentinels to the controller, and each switch handles a port's frames in
order, so when every port's sentinel has come back as a packet-in the batch's packet-ins
have too; the batch is complete when the tx pcaps hold as many frames as the port counters
(``dump-ports``) say were sent, and the rx counters say every frame arrived.

Attribution: outputs and packet-ins are mapped back to their input by the tag
(:func:`sluice.oracle.frames.find_tag`); a packet-in whose data holds no tag (cut short) is
compared per batch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sluice import ofp, testing
from sluice.oracle import frames as fr
from sluice.oracle.ovs import OvsDummySwitch
from sluice.oracle.rules import Packet, RuleSet

N_PORTS = 4
SENTINEL_FLOW = f"table=0,cookie=0xffff,priority=65535,dl_type=0x{fr.ETH_SENTINEL:04x}," \
                "actions=CONTROLLER"
SENTINEL_MAGIC = b"sluice-oracle-sentinel"
#: Longest wait for a batch's sentinels and counters (a healthy switch takes milliseconds).
BATCH_TIMEOUT = 60.0
OFCTL_TIMEOUT = 60


class HarnessError(RuntimeError):
    """The harness could not run a batch (a switch died, lost frames, timed out): not a
    divergence."""


# ---------------------------------------------------------------------------
# Packet-ins and the controller
# ---------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class PacketIn:
    """The parts of an OFPT_PACKET_IN that are compared."""

    reason: int
    table_id: int
    cookie: int
    in_port: int
    metadata: int
    total_len: int
    data: bytes
    buffer_id: int = ofp.OFP_NO_BUFFER

    def render(self) -> str:
        return (f"packet-in reason={self.reason} table={self.table_id} cookie={self.cookie} "
                f"in_port={self.in_port} metadata=0x{self.metadata:x} "
                f"total_len={self.total_len} data({len(self.data)})={self.data.hex()}")


def parse_packet_in(raw: bytes) -> PacketIn:
    """Decode an OpenFlow 1.3 packet-in (OXM match: in_port and metadata are kept)."""
    buffer_id, total_len, reason, table_id, cookie = struct.unpack_from("!IHBBQ", raw, 8)
    mtype, mlen = struct.unpack_from("!HH", raw, 24)
    in_port = metadata = 0
    off, end = 28, 24 + mlen
    while mtype == ofp.OFPMT_OXM and off + 4 <= end:
        (hdr,) = struct.unpack_from("!I", raw, off)
        cls, fld, length = hdr >> 16, (hdr >> 9) & 0x7F, hdr & 0xFF
        if cls == ofp.OFPXMC_OPENFLOW_BASIC and fld == ofp.OFPXMT_IN_PORT and length == 4:
            (in_port,) = struct.unpack_from("!I", raw, off + 4)
        elif cls == ofp.OFPXMC_OPENFLOW_BASIC and fld == ofp.OFPXMT_METADATA and length == 8:
            (metadata,) = struct.unpack_from("!Q", raw, off + 4)
        off += 4 + length
    data_off = 24 + mlen + ofp.pad8(mlen) + 2
    return PacketIn(reason, table_id, cookie, in_port, metadata, total_len, raw[data_off:],
                    buffer_id)


class Controller:
    """A controller on a Unix socket for one switch: answers echoes and keeps every
    packet-in (in arrival order).  Accepts reconnections."""

    def __init__(self, path: str) -> None:
        self.path = path
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(path)
        self.srv.listen(4)
        self.cv = threading.Condition()
        self.pins: list[PacketIn] = []
        self.n_conns = 0
        self.errors: list[str] = []
        self._closed = False
        self._socks: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                s, _ = self.srv.accept()
            except OSError:
                return
            self._socks.append(s)
            threading.Thread(target=self._serve, args=(s,), daemon=True).start()

    def _serve(self, s: socket.socket) -> None:
        c = ofp.Client(s)
        try:
            c.handshake(timeout=10)
            with self.cv:
                self.n_conns += 1
                self.cv.notify_all()
            while True:
                m = c._recv_wire(time.monotonic() + 3600)
                if m.type == ofp.OFPT_ECHO_REQUEST:
                    c.send(ofp.echo_reply(m.body, m.xid))
                elif m.type == ofp.OFPT_PACKET_IN:
                    pin = parse_packet_in(m.raw)
                    with self.cv:
                        self.pins.append(pin)
                        self.cv.notify_all()
                elif m.type == ofp.OFPT_ERROR:
                    with self.cv:
                        self.errors.append(ofp.parse_error(m).name)
        except (ofp.ConnectionClosed, OSError, TimeoutError, ConnectionError):
            pass
        finally:
            with self.cv:
                self.n_conns -= 1
                self.cv.notify_all()
            s.close()

    def wait(self, pred: Callable[[], bool], timeout: float) -> bool:
        """Wait until @pred() (called under the lock) holds; False after @timeout."""
        with self.cv:
            return self.cv.wait_for(pred, timeout)

    def take(self) -> list[PacketIn]:
        with self.cv:
            out, self.pins = self.pins, []
        return out

    def close(self) -> None:
        self.srv.close()
        for s in self._socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)


# ---------------------------------------------------------------------------
# pcap files that grow
# ---------------------------------------------------------------------------


class PcapTail:
    """Reads the records appended to a pcap file since the last call (any of the four
    magic numbers; a record still being written is left for the next call)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.off = 0
        self.endian = ""
        self.count = 0

    def read(self) -> list[bytes]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.off)
                data = f.read()
        except FileNotFoundError:
            return []
        pos = 0
        if not self.endian:
            if len(data) < 24:
                return []
            magic = data[:4]
            if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
                self.endian = "<"
            elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
                self.endian = ">"
            else:
                raise HarnessError(f"{self.path}: not a pcap file ({magic.hex()})")
            pos = 24
        out = []
        while pos + 16 <= len(data):
            caplen, wirelen = struct.unpack_from(self.endian + "II", data, pos + 8)
            if pos + 16 + caplen > len(data):
                break
            out.append(data[pos + 16:pos + 16 + caplen])
            pos += 16 + caplen
        self.off += pos
        self.count += len(out)
        return out


# ---------------------------------------------------------------------------
# The two switches
# ---------------------------------------------------------------------------


def _port_stats(target: str) -> dict[int, tuple[int, int]]:
    """{port: (rx packets, tx packets)} from ``ovs-ofctl dump-ports`` (ports 1..N)."""
    text = testing.ofctl(target, "dump-ports")
    out: dict[int, tuple[int, int]] = {}
    for m in re.finditer(r"port\s+(\d+): rx pkts=(\d+).*?\n\s+tx pkts=(\d+)", text):
        out[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    return out


class SwitchUnderTest:
    """What the harness needs of a switch; subclasses start and stop the real one."""

    name = "?"

    def __init__(self, workdir: str, n_ports: int, controller: str) -> None:
        self.workdir = workdir
        self.n_ports = n_ports
        self.controller = Controller(controller)
        self.tx_pcaps: dict[int, str] = {}
        self.tails: dict[int, PcapTail] = {}
        self.rx_sent: Counter[int] = Counter()

    @property
    def target(self) -> str:
        raise NotImplementedError

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        self.controller.close()

    def inject(self, port: int, frames: Sequence[bytes]) -> None:
        raise NotImplementedError

    def after_install(self) -> None:
        """Called once a rule set is in place (OVS drops its datapath flows here)."""

    def alive(self) -> bool:
        return True

    def diagnostics(self) -> str:
        return ""

    def ofctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = ["ovs-ofctl", "-O", "OpenFlow13", "--no-names", f"--timeout={OFCTL_TIMEOUT}",
               args[0], self.target, *args[1:]]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=OFCTL_TIMEOUT + 10)

    def wait_connected(self, timeout: float = 30.0) -> None:
        if not self.controller.wait(lambda: self.controller.n_conns > 0, timeout):
            raise HarnessError(f"{self.name} did not connect to its controller within "
                               f"{timeout} s\n{self.diagnostics()}")
        self.tails = {p: PcapTail(path) for p, path in self.tx_pcaps.items()}

    def port_stats(self) -> dict[int, tuple[int, int]]:
        return _port_stats(self.target)


class OvsUnderTest(SwitchUnderTest):
    name = "ovs"

    def __init__(self, workdir: str, n_ports: int) -> None:
        # OVS connects only to Unix sockets in its own run directory.
        ovs = OvsDummySwitch(workdir, n_ports, "ctl.sock")
        super().__init__(workdir, n_ports, ovs.controller)
        self.ovs = ovs
        self.tx_pcaps = dict(self.ovs.tx_pcaps)

    @property
    def target(self) -> str:
        return self.ovs.target

    def start(self) -> None:
        self.ovs.start()
        self.wait_connected()

    def stop(self) -> None:
        self.ovs.stop()
        super().stop()

    def inject(self, port: int, frames: Sequence[bytes]) -> None:
        self.ovs.inject(port, frames)

    def after_install(self) -> None:
        self.ovs.purge()

    def alive(self) -> bool:
        return all(p.alive() for p in self.ovs.procs)

    def diagnostics(self) -> str:
        return self.ovs.log_tail()


class SluiceUnderTest(SwitchUnderTest):
    name = "sluice"

    def __init__(self, workdir: str, n_ports: int, binary: Path | None = None) -> None:
        super().__init__(workdir, n_ports, os.path.join(workdir, "sluice-ctl.sock"))
        self.binary = binary
        self.topo = testing.Topology()
        self.raw: dict[int, testing.RawPort] = {}
        self.sw: testing.Sluice | None = None
        self.mgmt = os.path.join(workdir, "sluice.mgmt")
        self.tx_pcaps = {p: os.path.join(workdir, f"sluice-p{p}-tx.pcap")
                         for p in range(1, n_ports + 1)}

    @property
    def target(self) -> str:
        return f"unix:{self.mgmt}"

    def start(self) -> None:
        pairs = [self.topo.add_veth("sor") for _ in range(self.n_ports)]
        ports = [f"net_pcap{i},rx_iface_in={a},tx_pcap={self.tx_pcaps[i + 1]}"
                 for i, (a, _) in enumerate(pairs)]
        cfg = testing.SluiceConfig(ports=ports, controllers=(f"unix:{self.controller.path}",),
                                   fail_mode="secure", probe_interval=0, packet_in_rate=0,
                                   mgmt=self.mgmt)
        self.sw = testing.Sluice(cfg, binary=self.binary)
        self.raw = {i + 1: testing.RawPort(b) for i, (_, b) in enumerate(pairs)}
        self.wait_connected()
        testing.wait_until(lambda: os.path.exists(self.mgmt), 30, "sluice's mgmt socket")

    def stop(self) -> None:
        for r in self.raw.values():
            r.close()
        if self.sw is not None:
            self.sw.stop()
        self.topo.close()
        super().stop()

    def inject(self, port: int, frames: Sequence[bytes]) -> None:
        self.raw[port].send(frames)

    def alive(self) -> bool:
        return self.sw is not None and self.sw.alive()

    def diagnostics(self) -> str:
        return self.sw.output[-3000:] if self.sw is not None else ""


# ---------------------------------------------------------------------------
# Outcomes and comparison
# ---------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one switch did with one packet."""

    outputs: list[tuple[int, bytes]] = field(default_factory=list)
    pins: list[PacketIn] = field(default_factory=list)

    def key(self) -> tuple[tuple[tuple[int, bytes], ...], tuple[PacketIn, ...]]:
        return tuple(sorted(self.outputs)), tuple(sorted(self.pins))

    def render(self, indent: str = "  ") -> str:
        if not self.outputs and not self.pins:
            return f"{indent}(dropped)"
        lines = [f"{indent}output:{p} {fr.describe(b)}\n{indent}  {b.hex()}"
                 for p, b in sorted(self.outputs)]
        lines += [f"{indent}{pin.render()}" for pin in sorted(self.pins)]
        return "\n".join(lines)


@dataclass
class Case:
    """One packet's outcome on both switches under one rule set."""

    rules: RuleSet
    packet: Packet
    ovs: Outcome
    sluice: Outcome

    @property
    def equal(self) -> bool:
        return self.ovs.key() == self.sluice.key()

    def render(self) -> str:
        return (f"packet {self.packet.summary}\n  in_port={self.packet.in_port} "
                f"hex={self.packet.frame.hex()}\nOVS:\n{self.ovs.render()}\n"
                f"Sluice:\n{self.sluice.render()}")


@dataclass(frozen=True)
class Divergence:
    """A known, documented difference between the switches, one allowlist entry.

    @when is a predicate on the rules, the packet and both outcomes that says the entry
    may explain a mismatching case; then the entry explains it

    - with @normalize: when the outcomes agree once both have had every output frame and
      packet-in (data and total_len) passed through @normalize (all applicable entries'
      normalizers together, if no single one suffices);
    - with @rewrite: when, re-run under ``rewrite(rules)`` (the shape in question taken
      out), both switches agree (up to the other entries) and Sluice (if
      @sluice_unchanged) or OVS (if @ovs_unchanged) does what it did before;
    - with none of them: always (the predicate is the whole check).
    """

    name: str
    spec: str
    why: str
    when: Callable[[Case], bool]
    normalize: Callable[[bytes, Packet], bytes] | None = None
    rewrite: Callable[[RuleSet], RuleSet] | None = None
    sluice_unchanged: bool = True
    ovs_unchanged: bool = False

    def __post_init__(self) -> None:
        if self.reruns and not (self.sluice_unchanged or self.ovs_unchanged):
            raise ValueError(f"{self.name}: a re-run must keep one switch as it was")

    @property
    def reruns(self) -> bool:
        return self.rewrite is not None


def normalized(o: Outcome, fn: Callable[[bytes], bytes]) -> Outcome:
    """@o with @fn applied to every output frame and packet-in's data (a packet-in that
    held the whole frame gets the new frame's length as total_len)."""
    pins = []
    for pin in o.pins:
        data = fn(pin.data)
        total = len(data) if len(pin.data) == pin.total_len else pin.total_len
        pins.append(dataclasses.replace(pin, data=data, total_len=total))
    return Outcome([(p, fn(b)) for p, b in o.outputs], pins)


def explained_by(case: Case, entries: Sequence[Divergence]) -> str | None:
    """The name of the entry (or entries, joined with '+') among @entries that explains
    @case: normalisers alone, each then all together, or a predicate-only entry whose
    predicate holds once the applicable normalisers have run; else None (rewrite entries
    are left to Tally.add)."""
    live = [d for d in entries if d.when(case)]
    norms = [d for d in live if d.normalize is not None]
    trials: list[list[Divergence]] = [[], *([d] for d in norms)]
    if len(norms) > 1:
        trials.append(norms)
    for ds in trials:
        def fn(b: bytes, ds: list[Divergence] = ds) -> bytes:
            for d in ds:
                assert d.normalize is not None
                b = d.normalize(b, case.packet)
            return b

        c = dataclasses.replace(case, ovs=normalized(case.ovs, fn),
                                sluice=normalized(case.sluice, fn)) if ds else case
        names = [d.name for d in ds]
        if ds and c.equal:
            return "+".join(names)
        for d in entries:
            if d.normalize is None and not d.reruns and d.when(c):
                return "+".join([*names, d.name])
    return None


def _region(frame: bytes, pos: int) -> str:
    """The header region byte @pos of @frame falls in (for mismatch classes)."""
    p = fr.parse(frame)
    if pos < 12:
        return "eth-addr"
    if pos < p.l3_off:
        return "vlan" if p.vlans and pos < p.l3_off - 2 else "eth-type"
    if p.l3 == "ipv4":
        if pos < p.l3_off + 20:
            o = pos - p.l3_off
            return {10: "ipv4-csum", 11: "ipv4-csum", 8: "ipv4-ttl", 1: "ipv4-tos"}.get(
                o, "ipv4-addr" if o >= 12 else "ipv4-hdr")
    elif p.l3 == "ipv6":
        if pos < p.l3_off + 40:
            o = pos - p.l3_off
            return "ipv6-addr" if o >= 8 else ("ipv6-hlim" if o == 7 else "ipv6-hdr")
    elif p.l3 == "arp":
        return "arp"
    if p.l4_off is not None and pos >= p.l4_off:
        o = pos - p.l4_off
        csum = {fr.IPPROTO_TCP: (16, 18), fr.IPPROTO_UDP: (6, 8), fr.IPPROTO_SCTP: (8, 12),
                fr.IPPROTO_ICMP: (2, 4), fr.IPPROTO_ICMPV6: (2, 4)}.get(p.proto)
        if csum and csum[0] <= o < csum[1]:
            return "l4-csum"
        if o < 8:
            return "l4-hdr"
        return "payload"
    if p.l3 is not None and p.ip_end and pos >= p.ip_end:
        return "padding"
    return "l3-payload" if p.l3 else "payload"


def classify(case: Case) -> str:
    """A short label of how the outcomes differ (the first difference that shows)."""
    o, s = case.ovs, case.sluice
    if not s.outputs and not s.pins:
        return "sluice-drops"
    if not o.outputs and not o.pins:
        return "ovs-drops"
    po, ps = sorted(p for p, _ in o.outputs), sorted(p for p, _ in s.outputs)
    if po != ps:
        return "output-ports"
    if len(o.pins) != len(s.pins):
        return "packet-in-count"
    for (_, bo), (_, bs) in zip(sorted(o.outputs), sorted(s.outputs)):
        if bo != bs:
            return "bytes:" + _byte_diff(bo, bs)
    for a, b in zip(sorted(o.pins), sorted(s.pins)):
        if a == b:
            continue
        for what in ("reason", "table_id", "cookie", "in_port", "metadata", "total_len"):
            if getattr(a, what) != getattr(b, what):
                return f"packet-in-{what}"
        if len(a.data) != len(b.data):
            return "packet-in-data-len"
        return "packet-in-data:" + _byte_diff(a.data, b.data)
    return "multiset"


def _byte_diff(a: bytes, b: bytes) -> str:
    if len(a) != len(b):
        return "length"
    pos = next(i for i in range(len(a)) if a[i] != b[i])
    return _region(a, pos)


# ---------------------------------------------------------------------------
# The oracle
# ---------------------------------------------------------------------------


@dataclass
class Rejection:
    switch: str
    line: str
    error: str


@dataclass
class Batch:
    """Both switches' outcomes for a list of packets under one rule set."""

    rules: RuleSet
    cases: list[Case]
    #: Packet-ins without a tag, per switch (compared as multisets).
    stray_pins: dict[str, list[PacketIn]] = field(default_factory=dict)
    #: Output frames without a tag, per switch.
    stray_outputs: dict[str, list[tuple[int, bytes]]] = field(default_factory=dict)


def is_sentinel(frame: bytes) -> bool:
    return frame[12:14] == fr.ETH_SENTINEL.to_bytes(2, "big") and frame[14:].startswith(
        SENTINEL_MAGIC)


def sentinel_frame(batch_no: int, port: int) -> bytes:
    return fr.ethernet("ff:ff:ff:ff:ff:ff", "02:00:00:00:00:ee", fr.ETH_SENTINEL,
                       SENTINEL_MAGIC + struct.pack("!IH", batch_no, port) + bytes(20))


def _ofctl_error(stderr: str) -> str:
    """The line of ovs-ofctl's stderr that names the error."""
    lines = stderr.strip().splitlines()
    for ln in lines:
        if "OFPT_ERROR" in ln or ln.startswith("ovs-ofctl:"):
            return ln.strip()
    return lines[0] if lines else "(no message)"


class Oracle:
    """Sluice and OVS side by side: start(), then install() a rule set and run() packets
    (any number of times), stop() at the end (also after errors)."""

    def __init__(self, sluice_bin: Path | None = None, n_ports: int = N_PORTS,
                 batch_size: int = 250) -> None:
        self.n_ports = n_ports
        self.batch_size = batch_size
        self.workdir = tempfile.mkdtemp(prefix="sloracle-")
        self.ovs = OvsUnderTest(self.workdir, n_ports)
        self.sluice = SluiceUnderTest(self.workdir, n_ports, sluice_bin)
        self.switches: list[SwitchUnderTest] = [self.ovs, self.sluice]
        self.batch_no = 0

    def start(self) -> None:
        for sw in self.switches:
            sw.start()

    def stop(self) -> None:
        for sw in self.switches:
            with contextlib.suppress(Exception):
                sw.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Oracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- rules --------------------------------------------------------------------

    def _load(self, sw: SwitchUnderTest, groups: Sequence[str], flows: Sequence[str],
              one_by_one: bool) -> list[Rejection]:
        """Replace @sw's groups and flows; returns the lines it refused (one_by_one:
        line per line, else a file at once, raising on any refusal)."""
        for cmd in ("del-flows", "del-groups"):
            r = sw.ofctl(cmd)
            if r.returncode != 0:
                raise HarnessError(f"{sw.name}: {cmd} failed: {r.stderr}")
        out: list[Rejection] = []
        for kind, lines in (("group", groups), ("flow", [SENTINEL_FLOW, *flows])):
            if one_by_one:
                for ln in lines:
                    r = sw.ofctl(f"add-{kind}", ln)
                    if r.returncode != 0:
                        out.append(Rejection(sw.name, ln, _ofctl_error(r.stderr)))
            elif lines:
                path = os.path.join(self.workdir, f"{sw.name}.{kind}s")
                Path(path).write_text("\n".join(lines) + "\n")
                r = sw.ofctl(f"add-{kind}s", path)
                if r.returncode != 0:
                    raise HarnessError(f"{sw.name}: add-{kind}s: {r.stderr.strip()}")
        return out

    def install(self, rules: RuleSet) -> tuple[RuleSet, list[Rejection]]:
        """Put @rules on both switches.  Lines either switch refuses are reported and left
        out on both (again until no switch refuses anything: a flow may need a group that
        went); returns the rule set actually installed and the refusals."""
        rejected: list[Rejection] = []
        try:
            for sw in self.switches:
                self._load(sw, rules.groups, rules.flows, one_by_one=False)
            installed = rules
        except HarnessError:
            bad: set[str] = set()
            for _ in range(5):
                installed = rules.subset([g for g in rules.groups if g not in bad],
                                         [f for f in rules.flows if f not in bad])
                new = [r for sw in self.switches
                       for r in self._load(sw, installed.groups, installed.flows,
                                           one_by_one=True)]
                if not new:
                    break
                rejected += new
                bad |= {r.line for r in new}
            else:
                raise HarnessError(f"rule set {rules.seed!r}: refusals do not settle")
        for sw in self.switches:
            sw.after_install()
        return installed, rejected

    # -- packets ------------------------------------------------------------------

    def _run_batch(self, sw: SwitchUnderTest, packets: Sequence[Packet], batch_no: int,
                   ) -> None:
        by_port: dict[int, list[bytes]] = {}
        for p in packets:
            by_port.setdefault(p.in_port, []).append(p.frame)
        for port, frames in by_port.items():
            sw.inject(port, frames)
            sw.rx_sent[port] += len(frames)
        for port in range(1, self.n_ports + 1):
            sw.inject(port, [sentinel_frame(batch_no, port)])
            sw.rx_sent[port] += 1

    def _collect(self, sw: SwitchUnderTest, batch_no: int, deadline: float,
                 ) -> tuple[list[tuple[int, bytes]], list[PacketIn]]:
        want = {sentinel_frame(batch_no, p) for p in range(1, self.n_ports + 1)}

        def sentinels_in() -> bool:
            return want <= {pin.data for pin in sw.controller.pins}

        if not sw.controller.wait(sentinels_in, max(0.0, deadline - time.monotonic())):
            raise HarnessError(f"{sw.name}: batch {batch_no}: sentinels missing after "
                               f"{BATCH_TIMEOUT} s (alive: {sw.alive()})\n{sw.diagnostics()}")
        # Each switch counts a frame before it handles the next one, so once the sentinels
        # are back the rx counters are final; tx frames may still sit in a tx buffer.
        deadline = min(deadline, time.monotonic() + 5.0)
        outputs: list[tuple[int, bytes]] = []
        while True:
            for port, tail in sw.tails.items():
                outputs += [(port, b) for b in tail.read()]
            stats = sw.port_stats()
            rx = {p: stats.get(p, (0, 0))[0] for p in range(1, self.n_ports + 1)}
            tx = sum(stats.get(p, (0, 0))[1] for p in range(1, self.n_ports + 1))
            seen = sum(t.count for t in sw.tails.values())
            if rx == {p: sw.rx_sent[p] for p in rx} and tx == seen:
                break
            if any(rx[p] > sw.rx_sent[p] for p in rx) or time.monotonic() > deadline:
                raise HarnessError(f"{sw.name}: batch {batch_no}: rx counters {rx} (sent "
                                   f"{dict(sw.rx_sent)}), tx counters {tx}, tx pcap frames "
                                   f"{seen}\n{sw.diagnostics()}")
            time.sleep(0.01)
        pins = [p for p in sw.controller.take() if not is_sentinel(p.data)]
        return outputs, pins

    def run(self, rules: RuleSet, packets: Sequence[Packet]) -> Batch:
        """Send @packets (in batches) through both switches; @rules must be installed."""
        result = Batch(rules, [], {sw.name: [] for sw in self.switches},
                       {sw.name: [] for sw in self.switches})
        for i in range(0, len(packets), self.batch_size):
            chunk = packets[i:i + self.batch_size]
            self.batch_no += 1
            for sw in self.switches:
                self._run_batch(sw, chunk, self.batch_no)
            outcomes: dict[str, dict[int, Outcome]] = {}
            deadline = time.monotonic() + BATCH_TIMEOUT
            for sw in self.switches:
                outputs, pins = self._collect(sw, self.batch_no, deadline)
                per = outcomes[sw.name] = {p.ident: Outcome() for p in chunk}
                for port, frame in outputs:
                    ident = fr.find_tag(frame)
                    if ident in per:
                        per[ident].outputs.append((port, frame))
                    else:
                        result.stray_outputs[sw.name].append((port, frame))
                for pin in pins:
                    ident = fr.find_tag(pin.data)
                    if ident in per:
                        per[ident].pins.append(pin)
                    else:
                        result.stray_pins[sw.name].append(pin)
            result.cases += [Case(rules, p, outcomes["ovs"][p.ident],
                                  outcomes["sluice"][p.ident]) for p in chunk]
        return result


# ---------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Diagnosis:
    """A known difference that is *not* allowed (a bug, or a decision still open): a
    mismatch that disappears when its rule set is re-run as ``rewrite(rules)`` is labelled
    @name in reports, and still fails."""

    name: str
    why: str
    rewrite: Callable[[RuleSet], RuleSet]


@dataclass
class Finding:
    """A mismatch the allowlist does not cover: its class (a diagnosis name, else
    classify()'s label) and the case."""

    label: str
    case: Case


def _rewritten(rules: RuleSet, entries: Sequence[Divergence]) -> RuleSet:
    for d in entries:
        if d.rewrite is not None:
            rules = d.rewrite(rules)
    return rules


@dataclass
class Tally:
    """Counts over a run: packets, allowlisted divergences by name, findings by label."""

    packets: int = 0
    rulesets: int = 0
    allowed: Counter[str] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    stray: list[str] = field(default_factory=list)

    def by_label(self) -> Counter[str]:
        return Counter(f.label for f in self.findings)

    @staticmethod
    def _rerun(oracle: Oracle, rules: RuleSet, cases: Sequence[Case]) -> list[Case | None]:
        """@cases' packets again under @rules (None each when a rule is refused)."""
        _, rejected = oracle.install(rules)
        if rejected:
            return [None] * len(cases)
        return list(oracle.run(rules, [c.packet for c in cases]).cases)

    def _judge_reruns(self, oracle: Oracle, rules: RuleSet, cases: Sequence[Case],
                      allow: Sequence[Divergence]) -> list[str | None]:
        """Per case of @cases (all mismatches under @rules), the name of the re-running
        entries of @allow that explain it, else None.

        The entries whose predicate holds are tried alone, then in pairs, then all
        together.  Alone, an entry explains a case when its re-run keeps the switch(es) it
        must not change as they were (its invariant) and the switches agree (up to the
        other entries).  Together, every entry must have kept its invariant alone and the
        switches must agree under all their changes at once."""
        out: list[str | None] = [None] * len(cases)
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, c in enumerate(cases):
            names = tuple(d.name for d in allow if d.reruns and d.when(c))
            if names:
                groups.setdefault(names, []).append(i)
        for names, members in groups.items():
            cands = [d for d in allow if d.name in names]
            kept: dict[int, dict[str, bool]] = {i: {} for i in members}
            left = list(members)
            trials = [[d] for d in cands] + [list(p) for p in itertools.combinations(cands, 2)]
            if len(cands) > 2:
                trials.append(cands)
            for ds in trials:
                idx = [i for i in left if len(ds) == 1 or all(kept[i].get(d.name) for d in ds)]
                if not idx:
                    continue
                again = self._rerun(oracle, _rewritten(rules, ds), [cases[i] for i in idx])
                others = [d for d in allow if d not in ds]
                for i, after in zip(idx, again):
                    before = cases[i]
                    if after is None:
                        continue
                    if len(ds) == 1:
                        d = ds[0]
                        kept[i][d.name] = (
                            (not d.sluice_unchanged or after.sluice.key() == before.sluice.key())
                            and (not d.ovs_unchanged or after.ovs.key() == before.ovs.key()))
                        if not kept[i][d.name]:
                            continue
                    extra = None if after.equal else explained_by(after, others)
                    if after.equal or extra is not None:
                        out[i] = "+".join([d.name for d in ds] + ([extra] if extra else []))
                        left.remove(i)
        return out

    def add(self, batch: Batch, allowlist: Iterable[Divergence],
            oracle: Oracle | None = None, diagnoses: Sequence[Diagnosis] = ()) -> None:
        """Count @batch: each mismatch is allowlisted (by name) or a finding, labelled by
        the first of @diagnoses under whose rewrite it goes away (or is allowlisted), else
        by classify().  With @oracle, re-running entries and diagnoses re-run their cases
        (the oracle's rule set changes)."""
        allow = list(allowlist)
        self.packets += len(batch.cases)
        new: list[Case] = []  # not explained so far
        for case in batch.cases:
            if case.equal:
                continue
            name = explained_by(case, allow)
            if name is not None:
                self.allowed[name] += 1
            else:
                new.append(case)
        if oracle is not None and new:
            labels = self._judge_reruns(oracle, batch.rules, new, allow)
            for label in labels:
                if label is not None:
                    self.allowed[label] += 1
            new = [c for c, label in zip(new, labels) if label is None]
        for diag in diagnoses:
            if not new or oracle is None:
                break
            rules = diag.rewrite(batch.rules)
            again = self._rerun(oracle, rules, new)
            agree = [a is not None and (a.equal or explained_by(a, allow) is not None)
                     for a in again]
            rest = [(i, a) for i, a in enumerate(again) if a is not None and not agree[i]]
            for (i, _), label in zip(rest, self._judge_reruns(oracle, rules,
                                                               [a for _, a in rest], allow)):
                agree[i] = label is not None
            self.findings += [Finding(diag.name, c) for c, ok in zip(new, agree) if ok]
            new = [c for c, ok in zip(new, agree) if not ok]
        self.findings += [Finding(classify(c), c) for c in new]
        o, s = (Counter(batch.stray_pins.get(k, [])) for k in ("ovs", "sluice"))
        if o != s:
            self.stray.append(f"untagged packet-ins differ (rules seed {batch.rules.seed}):\n"
                              f"  OVS only: {[p.render() for p in (o - s)]}\n"
                              f"  Sluice only: {[p.render() for p in (s - o)]}")
        for name, outs in batch.stray_outputs.items():
            if outs:
                self.stray.append(f"{name}: {len(outs)} output frames without a tag, e.g. "
                                  f"port {outs[0][0]} {outs[0][1].hex()}")

    def summary(self) -> str:
        lines = [f"{self.packets} packets over {self.rulesets} rule sets: "
                 f"{len(self.findings)} mismatches, {sum(self.allowed.values())} allowlisted"]
        for name, n in self.allowed.most_common():
            lines.append(f"  allowlisted {name}: {n}")
        for label, n in self.by_label().most_common():
            lines.append(f"  MISMATCH {label}: {n}")
        for r in self.rejections:
            lines.append(f"  REJECTED by {r.switch}: {r.line}  ({r.error})")
        lines += [f"  {s}" for s in self.stray]
        return "\n".join(lines)

    def examples(self, per_label: int = 1) -> str:
        """The first mismatch of each label: rules, packet hex, both outcomes."""
        out: list[str] = []
        shown: Counter[str] = Counter()
        for f in self.findings:
            if shown[f.label] >= per_label:
                continue
            shown[f.label] += 1
            out.append(f"=== {f.label} (rules seed {f.case.rules.seed!r})\n"
                       f"rules:\n{f.case.rules.text()}\n{f.case.render()}")
        return "\n".join(out)


def _split_top(text: str) -> list[str]:
    """@text split at the commas outside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    return [*out, cur] if cur or out else []


def _simpler_lines(line: str, is_group: bool) -> list[str]:
    """Variants of one flow or group line with one part fewer: a match field, an action
    (also inside write_actions), a bucket or a bucket's action."""
    out: list[str] = []
    if is_group:
        head, *buckets = line.split(",bucket=")
        for i, b in enumerate(buckets):
            if len(buckets) > 1:
                out.append(",bucket=".join([head, *buckets[:i], *buckets[i + 1:]]))
            pre, acts = b.split("actions=", 1)
            parts = acts.split(",")
            for j in range(len(parts)):
                nb = f"{pre}actions={','.join(parts[:j] + parts[j + 1:]) or 'drop'}"
                out.append(",bucket=".join([head, *buckets[:i], nb, *buckets[i + 1:]]))
        return out
    head, acts = line.split(",actions=", 1)
    fields = head.split(",")
    for i in range(3, len(fields)):  # table, cookie, priority stay
        out.append(",".join(fields[:i] + fields[i + 1:]) + f",actions={acts}")
    parts = _split_top(acts)
    for i, part in enumerate(parts):
        rest = parts[:i] + parts[i + 1:]
        out.append(f"{head},actions={','.join(rest) or 'drop'}")
        if part.startswith("write_actions(") and "," in part:
            inner = part[len("write_actions("):-1].split(",")
            for j in range(len(inner)):
                w = f"write_actions({','.join(inner[:j] + inner[j + 1:])})"
                out.append(f"{head},actions={','.join(parts[:i] + [w] + parts[i + 1:])}")
    return out


def minimize(oracle: Oracle, finding: Finding, allowlist: Sequence[Divergence] = (),
             diagnoses: Sequence[Diagnosis] = (), budget: float = 60.0) -> Case:
    """Cut @finding's rule set down while its packet still makes a finding of the same
    class (judged as Tally.add judges, rewrites and diagnoses included): first whole
    groups and flows, then match fields, actions, buckets; greedy, one change at a time,
    within @budget seconds.  Returns the smallest case found; the oracle's rules are left
    changed."""
    best = finding.case
    deadline = time.monotonic() + budget

    def still_fails(rules: RuleSet) -> Case | None:
        try:
            installed, rejected = oracle.install(rules)
            if rejected or installed.flows != rules.flows or installed.groups != rules.groups:
                return None
            (c,) = oracle.run(rules, [finding.case.packet]).cases
            if c.equal:
                return None
            t = Tally()
            t.add(Batch(rules, [c]), allowlist, oracle, diagnoses)
        except HarnessError:
            return None
        return c if [f.label for f in t.findings] == [finding.label] else None

    def referenced(group: str, flows: Sequence[str]) -> bool:
        m = re.match(r"group_id=(\d+)", group)
        return m is not None and any(re.search(rf"group:{m.group(1)}\b", f) for f in flows)

    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        for kind in ("flows", "groups"):
            i = 0
            items = list(getattr(best.rules, kind))
            while i < len(items) and time.monotonic() < deadline:
                trial = items[:i] + items[i + 1:]
                if kind == "groups" and referenced(items[i], best.rules.flows):
                    i += 1
                    continue
                rules = (best.rules.subset(best.rules.groups, trial) if kind == "flows"
                         else best.rules.subset(trial, best.rules.flows))
                c = still_fails(rules)
                if c is not None:
                    best, items, changed = c, trial, True
                else:
                    i += 1
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        for kind in ("flows", "groups"):
            for i in range(len(getattr(best.rules, kind))):
                items = list(getattr(best.rules, kind))
                for variant in _simpler_lines(items[i], kind == "groups"):
                    if time.monotonic() > deadline:
                        return best
                    trial = items[:i] + [variant] + items[i + 1:]
                    rules = (best.rules.subset(best.rules.groups, trial) if kind == "flows"
                             else best.rules.subset(trial, best.rules.flows))
                    c = still_fails(rules)
                    if c is not None:
                        best, changed = c, True
                        break
    return best
