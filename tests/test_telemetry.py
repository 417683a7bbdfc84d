"""Sluice's DPDK telemetry commands, read with Debian's stock ``dpdk-telemetry.py``, checked
against the traffic the test sent: per-port and per-table counters, drops by reason,
latency sample counts, pcapng capture contents, run-time log levels, and errors that name
the bad parameter.

Traffic comes from pcap files replayed into port 1 (``net_pcap``), so every count is
exact; deadlines, never timing assertions.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scapy.all import IP, Ether, rdpcap, wrpcap  # type: ignore[attr-defined]

from sluice import testing
from sluice.testing import Sluice, SluiceConfig

TELEMETRY_PY = shutil.which("dpdk-telemetry.py") or "/usr/bin/dpdk-telemetry.py"
N_FWD, N_TTL1, N_ARP = 40, 5, 3


def telemetry(sw: Sluice, *cmds: str) -> list[dict[str, Any]]:
    """Run the stock client non-interactively; one reply (inner object) per command."""
    r = subprocess.run([TELEMETRY_PY, "-f", sw.prefix], input="\n".join(cmds) + "\n",
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    replies = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert len(replies) == len(cmds), r.stdout + r.stderr
    out = []
    for cmd, rep in zip(cmds, replies):
        key = cmd.split(",", 1)[0]
        assert list(rep) == [key], rep
        out.append(rep[key])
    return out


def frames() -> list[Any]:
    return testing.counter_frames(N_FWD, N_TTL1, N_ARP, b"s")


@pytest.fixture
def switch(sluice_bin: Path, tmp_path: Path) -> Iterator[Sluice]:
    """Sluice replaying frames() once into port 1; IPv4 is forwarded to port 2 with dec_ttl,
    anything else misses table 0."""
    if not os.path.exists(TELEMETRY_PY):
        pytest.skip("dpdk-telemetry.py not installed (Debian package dpdk-dev)")
    pcap = tmp_path / "in.pcap"
    wrpcap(str(pcap), frames())
    cfg = SluiceConfig(ports=[f"net_pcap0,rx_pcap={pcap}", "net_null1,no-rx=1"],
                       flows=["table=0,priority=10,ip actions=dec_ttl,output:2"],
                       name=testing.unique("tl"))
    sw = Sluice(cfg, binary=sluice_bin)
    try:
        sw.wait_output(r"sluice: name ", timeout=30)
        testing.wait_until(lambda: telemetry(sw, "/sluice/ports")[0]["1"]["rx_packets"]
                           == N_FWD + N_TTL1 + N_ARP, 30, "all frames received")
        yield sw
    finally:
        sw.stop()


def test_counters_match_sent_traffic(switch: Sluice) -> None:
    info, ports, tables, drops, lat, dp = telemetry(
        switch, "/sluice/info", "/sluice/ports", "/sluice/tables", "/sluice/drops",
        "/sluice/latency", "/sluice/datapath")
    n_rx = N_FWD + N_TTL1 + N_ARP
    assert info["name"] == switch.prefix and info["n_ports"] == 2 and info["n_flows"] == 1
    assert info["pid"] == switch.pid
    assert ports["1"]["rx_packets"] == n_rx and ports["1"]["tx_packets"] == 0
    assert ports["2"]["tx_packets"] == N_FWD and ports["2"]["tx_dropped"] == 0
    assert ports["2"]["tx_bytes"] == N_FWD * len(frames()[0])
    assert tables["0"]["lookups"] == n_rx
    assert tables["0"]["matched"] == N_FWD + N_TTL1 and tables["0"]["missed"] == N_ARP
    assert tables["0"]["flows"] == 1 and tables["0"]["kind"] == "mask"
    assert drops["ttl_expired"] == N_TTL1 and drops["table_miss"] == N_ARP
    assert drops["total"] == N_TTL1 + N_ARP
    assert sum(v for k, v in drops.items() if k != "total") == drops["total"]
    # The identity docs/telemetry.md states, controller port included.
    ctl = telemetry(switch, "/sluice/port,controller")[0]
    assert (ports["1"]["rx_packets"] + ports["2"]["rx_packets"] + ctl["rx_packets"] + dp["copies"]
            == ports["1"]["tx_packets"] + ports["2"]["tx_packets"] + ctl["tx_packets"]
            + drops["total"] + ctl["tx_dropped"])
    assert dp["packets"] == n_rx and dp["bursts"] >= 1
    # Every received packet has one pipeline latency sample; percentiles are ordered.
    pl = lat["pipeline"]
    assert pl["count"] == n_rx and 0 < pl["p50_ns"] <= pl["p99_ns"] <= pl["p999_ns"]
    assert pl["max_ns"] >= pl["mean_ns"] > 0
    hist = telemetry(switch, "/sluice/latency/histogram,pipeline")[0]
    assert sum(hist.values()) == n_rx and "le_inf" in hist and "le_256" in hist


def test_port_and_table_details(switch: Sluice) -> None:
    port, table = telemetry(switch, "/sluice/port,2", "/sluice/table,0")
    assert port["port_no"] == 2 and port["name"] == "net_null1"
    assert port["devargs"] == "net_null1,no-rx=1" and port["tx_packets"] == N_FWD
    assert len(port["mac"]) == 17
    assert table["table_id"] == 0 and table["entries"] == 1 and table["spec"].startswith("table=0")


def test_bad_parameters_name_the_value(switch: Sluice) -> None:
    port, table, hist, cap, lvl = telemetry(
        switch, "/sluice/port,9", "/sluice/table,x", "/sluice/latency/histogram,nope",
        "/sluice/capture/start,port=1,dir=sideways", "/sluice/log/level,sluice.app,loud")
    assert "'9'" in port["error"]
    assert "'x'" in table["error"]
    assert "'nope'" in hist["error"]
    assert "dir=sideways" in cap["error"]
    assert "'loud'" in lvl["error"]
    # The switch keeps serving after errors.
    assert telemetry(switch, "/sluice/info")[0]["n_ports"] == 2


def test_log_levels_at_run_time(switch: Sluice) -> None:
    before = telemetry(switch, "/sluice/log")[0]
    assert before["ofswitch"] == "notice" and set(before) >= {"app", "mgmt", "capture", "port"}
    after = telemetry(switch, "/sluice/log/level,sluice.*,debug")[0]
    assert set(after.values()) == {"debug"}
    one = telemetry(switch, "/sluice/log/level,ofconn,err")[0]
    assert one["ofconn"] == "err" and one["app"] == "debug"
    testing.wait_until(lambda: "log level of sluice.* set to debug" in switch.output, 10,
                       "the change logged with a timestamp")
    line = next(ln for ln in switch.output.splitlines() if "set to debug" in ln)
    # "TIME SEVERITY type: message" (the severity since issue #22)
    assert line[:4].isdigit() and re.search(r"Z (notice|info) sluice\.mgmt:", line), line


def test_capture_rx_and_tx_to_pcapng(sluice_bin: Path, tmp_path: Path) -> None:
    """A looping pcap port: capture 25 received and 25 transmitted frames; the file holds
    exactly what entered (rx) and what left after dec_ttl (tx)."""
    if not os.path.exists(TELEMETRY_PY):
        pytest.skip("dpdk-telemetry.py not installed")
    sent = frames()[:N_FWD]
    pcap = tmp_path / "loop.pcap"
    wrpcap(str(pcap), sent)
    cfg = SluiceConfig(ports=[f"net_pcap0,rx_pcap={pcap},infinite_rx=1", "net_null1,no-rx=1"],
                       flows=["table=0,priority=10,ip actions=dec_ttl,output:2"],
                       name=testing.unique("tc"))
    rx_file, tx_file = tmp_path / "rx.pcapng", tmp_path / "tx.pcapng"
    t_start = time.time()
    with Sluice(cfg, binary=sluice_bin) as sw:
        sw.wait_output(r"sluice: name ", timeout=30)
        idle = telemetry(sw, "/sluice/capture")[0]
        assert idle == {"state": "idle"}
        st = telemetry(sw, f"/sluice/capture/start,port=1,dir=rx,file={rx_file},count=25")[0]
        assert st["port"] == 1 and st["dir"] == "rx" and st["count"] == 25
        testing.wait_until(lambda: telemetry(sw, "/sluice/capture")[0]["state"] == "done", 20,
                           "rx capture reaches its count")
        done = telemetry(sw, "/sluice/capture")[0]
        assert done["captured"] == 25 and done["written_bytes"] == rx_file.stat().st_size
        st = telemetry(sw, f"/sluice/capture/start,port=2,dir=tx,file={tx_file},count=1000,"
                           "bytes=4000")[0]
        assert st["state"] == "running"
        testing.wait_until(lambda: telemetry(sw, "/sluice/capture")[0]["state"] == "done", 20,
                           "tx capture reaches its size limit")
        done = telemetry(sw, "/sluice/capture")[0]
        assert 0 < done["captured"] < 1000 and tx_file.stat().st_size <= 4000
        stopped = telemetry(sw, "/sluice/capture/stop")[0]
        assert stopped["state"] == "done"
    t_end = time.time()
    raw_sent = [bytes(f) for f in sent]
    rx = rdpcap(str(rx_file))
    assert len(rx) == 25
    # Timestamps are wall-clock time (they were in the year 2265, issue #22).
    for p in [*rx, *rdpcap(str(tx_file))]:
        assert t_start - 1 <= float(p.time) <= t_end + 1, (float(p.time), t_start, t_end)
    assert all(bytes(p) in raw_sent for p in rx)
    tx = rdpcap(str(tx_file))
    assert len(tx) == done["captured"]
    for p in tx:
        assert p[IP].ttl == 8  # dec_ttl applied: the frame as it left
        p[IP].ttl = 9
        del p[IP].chksum
        assert bytes(Ether(bytes(p))) in raw_sent


def test_capture_one_at_a_time_and_stop(sluice_bin: Path, tmp_path: Path) -> None:
    """A capture of a port with no traffic stays running: a second start is refused naming
    it; stop ends it and leaves a valid, empty pcapng file."""
    if not os.path.exists(TELEMETRY_PY):
        pytest.skip("dpdk-telemetry.py not installed")
    pcap = tmp_path / "loop.pcap"
    wrpcap(str(pcap), frames()[:4])
    cfg = SluiceConfig(ports=[f"net_pcap0,rx_pcap={pcap},infinite_rx=1", "net_null1,no-rx=1"],
                       flows=["table=0,priority=10,ip actions=output:2"],
                       name=testing.unique("ts"))
    quiet, other = tmp_path / "quiet.pcapng", tmp_path / "other.pcapng"
    with Sluice(cfg, binary=sluice_bin) as sw:
        sw.wait_output(r"sluice: name ", timeout=30)
        st = telemetry(sw, f"/sluice/capture/start,port=2,dir=rx,file={quiet},snaplen=64")[0]
        assert st["state"] == "running" and st["snaplen"] == 64 and st["dir"] == "rx"
        busy = telemetry(sw, f"/sluice/capture/start,port=1,file={other}")[0]
        assert "running" in busy["error"] and str(quiet) in busy["error"]
        assert not other.exists()
        stopped = telemetry(sw, "/sluice/capture/stop")[0]
        assert stopped["state"] == "stopped" and stopped["captured"] == 0
        assert stopped["written_bytes"] == quiet.stat().st_size > 0
        # Forwarding went on meanwhile.
        assert telemetry(sw, "/sluice/ports")[0]["2"]["tx_packets"] > 0
    assert len(rdpcap(str(quiet))) == 0


def pcapng_blocks(path: Path) -> tuple[list[str], list[tuple[int, float, bytes]]]:
    """Interface names (if_name, in order) and packets (interface, time, frame) of a
    little-endian pcapng file whose interfaces count time in nanoseconds."""
    import struct

    data = path.read_bytes()
    names: list[str] = []
    pkts: list[tuple[int, float, bytes]] = []
    off = 0
    while off + 12 <= len(data):
        btype, blen = struct.unpack_from("<II", data, off)
        assert blen >= 12 and off + blen <= len(data), (off, blen)
        if btype == 1:  # interface description block: options after 8 bytes of body
            o, name = off + 16, ""
            while o + 4 <= off + blen - 4:
                code, olen = struct.unpack_from("<HH", data, o)
                if code == 0:
                    break
                if code == 2:
                    name = data[o + 4:o + 4 + olen].decode()
                o += 4 + (olen + 3) // 4 * 4
            names.append(name)
        elif btype == 6:  # enhanced packet block
            ifc, hi, lo, caplen = struct.unpack_from("<IIII", data, off + 8)
            pkts.append((ifc, ((hi << 32) | lo) / 1e9,
                         data[off + 28:off + 28 + caplen]))
        off += blen
    assert off == len(data), "trailing bytes"
    return names, pkts


def test_capture_two_ports_with_a_filter(sluice_bin: Path, tmp_path: Path) -> None:
    """One capture of two ports with --filter 'tcp port 80'.

    Steps: two looping pcap ports, each replaying a mix of TCP to port 80, TCP to port 22,
    UDP to port 80 and ARP; capture both ports' received frames through sluicectl with the
    filter, 24 frames.
    Verify: one interface block per port, named as the port, in order; frames from both
    interfaces; every frame is TCP with port 80 and the port's own; timestamps within 1 s of
    wall time around the capture; the status counts what the filter left out."""
    from scapy.all import ARP, TCP, UDP  # type: ignore[attr-defined]

    if not os.path.exists(TELEMETRY_PY):
        pytest.skip("dpdk-telemetry.py not installed")

    def mix(src: str) -> list[Any]:
        base = Ether(dst="02:00:00:00:00:09", src="02:00:00:00:00:01") / IP(src=src,
                                                                          dst="10.9.9.9")
        return [base / TCP(sport=1234, dport=80), base / TCP(sport=1234, dport=22),
                base / UDP(sport=1234, dport=80),
                Ether(src="02:00:00:00:00:01") / ARP(psrc=src, pdst="10.9.9.9")]

    p1, p2 = tmp_path / "p1.pcap", tmp_path / "p2.pcap"
    wrpcap(str(p1), mix("10.0.0.1"))
    wrpcap(str(p2), mix("10.0.0.2"))
    cfg = SluiceConfig(ports=[f"net_pcap0,rx_pcap={p1},infinite_rx=1",
                              f"net_pcap1,rx_pcap={p2},infinite_rx=1"],
                       flows=["table=0,priority=1 actions=drop"], name=testing.unique("tf"))
    out = tmp_path / "two.pcapng"
    t_start = time.time()
    with Sluice(cfg, binary=sluice_bin) as sw:
        sw.wait_output(r"sluice: name ", timeout=30)
        ports = telemetry(sw, "/sluice/ports")[0]
        names = [ports["1"]["name"], ports["2"]["name"]]
        r = sw.sluicectl("capture", "start", "1", names[1], "--dir", "rx", "--file", str(out),
                         "--count", "24", "--filter", "tcp port 80")
        assert r.returncode == 0, (r.stdout, r.stderr)
        testing.wait_until(lambda: telemetry(sw, "/sluice/capture")[0]["state"] == "done", 20,
                           "the capture reaches its count")
        st = telemetry(sw, "/sluice/capture")[0]
        assert st["ports"] == [1, 2] and st["filter"] == "tcp port 80", st
        assert st["captured"] == 24 and st["filtered"] > 0, st
        bad = sw.sluicectl("capture", "start", "1", "--filter", "tcp prot 80")
        assert bad.returncode == 1 and "tcp prot 80" in bad.stderr, bad.stderr
    t_end = time.time()
    ifnames, pkts = pcapng_blocks(out)
    assert ifnames == names, ifnames
    assert len(pkts) == 24 and {ifc for ifc, _, _ in pkts} == {0, 1}, [p[0] for p in pkts]
    for ifc, ts, frame in pkts:
        e = Ether(frame)
        assert TCP in e and 80 in (e[TCP].sport, e[TCP].dport), e.summary()
        assert e[IP].src == ("10.0.0.1" if ifc == 0 else "10.0.0.2"), (ifc, e.summary())
        assert t_start - 1 <= ts <= t_end + 1, (ts, t_start, t_end)
    # scapy reads the file too (the format is valid pcapng).
    assert len(rdpcap(str(out))) == 24
    # So do the tools an operator uses: tshark's per-frame times and interface names,
    # capinfos' first and last packet times (setup.sh installs them; skipped without).
    if shutil.which("tshark") and shutil.which("capinfos"):
        r = subprocess.run(["tshark", "-r", str(out), "-T", "fields", "-e", "frame.time_epoch",
                            "-e", "frame.interface_name", "-e", "tcp.port"],
                           capture_output=True, text=True, timeout=60, check=True)
        rows = [ln.split("\t") for ln in r.stdout.splitlines()]
        assert len(rows) == 24, r.stdout
        for t, ifname, tports in rows:
            assert t_start - 1 <= float(t) <= t_end + 1, (t, t_start, t_end)
            assert ifname in names and "80" in tports.split(","), (ifname, tports)
        ci = subprocess.run(["capinfos", "-a", "-e", "-S", "-c", str(out)],
                            capture_output=True, text=True, timeout=60, check=True).stdout
        first = float(re.search(r"First packet time:\s+([\d.]+)", ci).group(1))
        last = float(re.search(r"Last packet time:\s+([\d.]+)", ci).group(1))
        assert t_start - 1 <= first <= last <= t_end + 1, ci
        assert re.search(r"Number of packets:\s+24\b", ci), ci
