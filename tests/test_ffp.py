"""The fast forwarding path end to end (issue 6; docs/ffp.md): marks from a flow file and
from sluicectl, dump-flows showing them, and /sluice/ffp counting classes and LUT hits on
traffic replayed through a real switch."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scapy.layers.inet import IP, UDP  # type: ignore[import-untyped]
from scapy.layers.l2 import Ether  # type: ignore[import-untyped]
from test_sluicectl import Ctl, sluicectl_bin  # noqa: F401 (fixture)

from sluice import telemetry, testing
from sluice.testing import Sluice, SluiceConfig, write_pcap

N = 200


def frames() -> list[bytes]:
    """@N UDP frames over 4 flows to 10.1.0.1..4 (repeated: LUTs fill, then hit)."""
    return [bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
                  / IP(src="10.0.0.1", dst=f"10.1.0.{i % 4 + 1}") / UDP(sport=1000, dport=2000)
                  / (b"x" * 30)) for i in range(N)]


@contextlib.contextmanager
def switch(binary: Path, ctl_bin: Path, tmp: Path, extra: tuple[str, ...],
           two_tables: bool = False) -> Iterator[Ctl]:
    rx = tmp / "in1.pcap"
    write_pcap(rx, frames())
    path = testing.socket_path("sffp")
    flows = ["table=0,kind=mask,fields=nw_dst,name=acl",
             "table=0,priority=10,ip,nw_dst=10.1.0.0/30,low_latency actions=output:2",
             "table=0,priority=5,ip actions=output:2"]
    if two_tables:
        flows = ["table=0,kind=mask,fields=nw_dst,name=acl",
                 "table=1,kind=mask,fields=udp_dst,name=svc",
                 "table=0,priority=10,ip,nw_dst=10.1.0.0/30,low_latency actions=goto_table:1",
                 "table=0,priority=5,ip actions=output:2",
                 "table=1,priority=10,udp,udp_dst=2000,low_latency actions=output:2"]
    sw = Sluice(SluiceConfig(ports=[f"net_pcap0,rx_pcap={rx}",
                                    f"net_pcap1,tx_pcap={tmp / 'out2.pcap'}"],
                             controllers=(f"punix:{path}",), flows=flows, fail_mode="secure",
                             extra=extra), binary=binary)
    try:
        (target,) = sw.wait_listening()
        tel = telemetry.socket_path(sw.prefix)
        yield Ctl(ctl_bin, ["--target", target, "--telemetry", str(tel)])
        assert sw.alive(), sw.output
    finally:
        sw.stop()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"/run/sluice/{sw.prefix}.mgmt")


def ffp_stats(ctl: Ctl, want_packets: int, timeout: float = 15.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        st: dict[str, Any] = ctl.json("stats", "ffp")
        if st["low_latency_packets"] + st["normal_packets"] >= want_packets or \
                time.monotonic() > deadline:
            return st
        time.sleep(0.1)


@pytest.mark.parametrize("model,paths", [(True, True), (False, False), (False, True)])
def test_marks_classes_and_lut(sluice_bin: Path, sluicectl_bin: Path, tmp_path: Path,  # noqa: F811
                               model: bool, paths: bool) -> None:
    """Steps: a switch whose flow file marks 10.1.0.0/30 low_latency replays 200 frames
    (150 to 10.1.0.1..3, 50 to 10.1.0.4); with and without the cost model.
    Verify: dump-flows shows low_latency on that flow only; /sluice/ffp counts 150
    low-latency and 50 normal packets; table 0 has one low-latency entry (also in
    the text form of stats ffp, with its active and adaptive columns); without the cost
    model its LUT filled (3 keys) and answered the rest, with path records on or off (one
    table: no path spec, the LUT is the whole path; /sluice/flow_cache says "one table", or
    "disabled" with --no-flow-cache); sluicectl add-flow ...,low_latency
    marks a new flow (dump-flows shows it)."""
    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    extra: tuple[str, ...] = () if model else ("--ffp-no-cost-model",)
    if not paths:
        extra += ("--no-flow-cache",)
    with switch(sluice_bin, sluicectl_bin, tmp_path, extra) as ctl:
        dump = ctl.ok("dump-flows")
        marked = [ln for ln in dump.splitlines() if "low_latency" in ln]
        assert len(marked) == 1 and "nw_dst=10.1.0.0/30" in marked[0], dump
        st = ffp_stats(ctl, N)
        assert st["low_latency_packets"] == 150 and st["normal_packets"] == 50, st
        t0 = st["table_0"]
        assert t0["eligible"] == 1 and t0["low_latency_entries"] == 1, t0
        ph = st["path"]
        assert ph["tables"] == 0 and ph["hits"] == 0, ph  # one table: no path spec
        fc = ctl.json("stats", "flow_cache")
        assert fc["spec"] == ("one table" if paths else "disabled") and fc["policy"] == "-", fc
        if not model:
            assert t0["active"] == 1 and t0["inserts"] == 3 and t0["entries"] == 3, t0
            # Every packet starts low-latency and probes once the LUT exists (after the
            # first fill): the normal ones miss; at most one burst (32) came before.
            assert t0["hits"] + t0["misses"] <= N and t0["hits"] >= 150 - 3 - 32, t0
            assert t0["misses"] >= 50 - 32, t0
        # The text form: one row per table with the same counters (active, adaptive, ...).
        text = ctl.ok("stats", "ffp")
        heads = next(ln for ln in text.splitlines() if ln.split()[:1] == ["table"]).split()
        assert heads[:3] == ["table", "active", "adaptive"], text
        row = next(ln for ln in text.splitlines() if ln.split()[:1] == ["0"]).split()
        assert row[1] == str(t0["active"]) and row[2] == str(t0.get("adaptive", "-")), text
        assert ctl.ok("add-flow", "table=0,priority=20,ip,nw_dst=10.9.0.0/16,low_latency "
                      "actions=output:2") == ""
        dump = ctl.ok("dump-flows")
        assert sum("low_latency" in ln for ln in dump.splitlines()) == 2, dump
        assert ctl.json("stats", "ffp")["table_0"]["low_latency_entries"] == 2


def test_path_records(sluice_bin: Path, sluicectl_bin: Path, tmp_path: Path) -> None:  # noqa: F811 (fixture)
    """Steps: two tables (nw_dst -> goto 1, udp_dst -> output:2), both low-latency for
    10.1.0.0/30, UDP port 2000; 200 frames replayed (150 low-latency over 3 keys), no cost
    model (path records always probed).
    Verify: /sluice/ffp path covers 2 tables with a 48-byte key (a frame key: bytes 12..37
    under the bits the entries read: nw_dst's /30, udp_dst and the dl_type and nw_proto
    guards, then in_port); 2 records: 10.1.0.1..3 share one (no entry reads the last two
    bits of their address) and the normal flow's way to 10.1.0.4 is the other (the flow
    cache takes every entry), the frames after the first burst answered by them; both
    low-latency entries credited for all 150 low-latency packets (dump-flows n_packets), the
    normal one for 50; the text form's path line; /sluice/flow_cache (sluicectl stats
    flow_cache) shows the spec active, the policy on and the same hits."""
    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    with switch(sluice_bin, sluicectl_bin, tmp_path, ("--ffp-no-cost-model",),
                two_tables=True) as ctl:
        st = ffp_stats(ctl, N)
        assert st["low_latency_packets"] == 150 and st["normal_packets"] == 50, st
        ph = st["path"]
        assert ph["tables"] == 2 and ph["key_bytes"] == 48, ph  # a frame key: 5 words + 1
        assert ph["inserts"] == 2 and ph["entries"] == 2 and ph["probing_workers"] >= 1, ph
        assert ph["hits"] + ph["misses"] <= N and ph["hits"] >= N - 2 - 32, ph
        dump = ctl.ok("dump-flows")
        marked = [ln for ln in dump.splitlines() if "low_latency" in ln]
        assert len(marked) == 2 and all("n_packets=150" in ln for ln in marked), dump
        assert any("priority=5" in ln and "n_packets=50" in ln for ln in dump.splitlines()), dump
        fc = ctl.json("stats", "flow_cache")
        assert fc["spec"] == "active" and fc["policy"] == "on" and fc["tables"] == 2, fc
        assert fc["hits"] == ph["hits"] and fc["workers_on"] == fc["workers"] >= 1, fc
        text = ctl.ok("stats", "ffp")
        line = next(ln for ln in text.splitlines() if ln.startswith("path:"))
        assert f"hits {ph['hits']}" in line and "key_bytes 48" in line, text
