"""Queues (OpenFlow 1.3 set_queue, queue stats, queue_get_config): a queue is a port's
max-rate policer that the operator sets up (flow file `queue=` lines, sluicectl
set-queue), as Open vSwitch's QoS tables and OVS-DPDK's egress-policer do."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sluice.testing import Sluice, SluiceConfig, assert_balanced, sluicectl_binary


def frames(n: int, dport: int) -> list[bytes]:
    from scapy.all import IP, UDP, Ether, Raw  # type: ignore[import-untyped]
    return [bytes(Ether(dst="02:00:00:00:00:02") / IP(dst="10.0.0.2") / UDP(dport=dport)
                  / Raw(b"q" * 58)) for _ in range(n)]  # 100-byte frames


def test_set_queue_polices_to_max_rate(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """Queue 1 of port 2 lets 8 kbit/s through with an 8 kbit burst: of 60 back-to-back
    100-byte frames about ten pass (the burst), the rest are dropped as queue-rate. A
    set_queue to a queue port 2 does not have leaves the output unpoliced (its default
    queue); outputs without set_queue never meet the queue."""
    res = pcap_switch(4, {1: frames(60, 1) + frames(30, 2) + frames(30, 3)}, [
        "queue=1,port=2,max_rate=8,burst=8",
        "priority=10,udp,tp_dst=1 actions=set_queue:1,output:2",
        "priority=10,udp,tp_dst=2 actions=set_queue:9,output:3",
        "priority=10,udp,tp_dst=3 actions=output:4",
    ])
    passed = len(res.out[2])
    assert 9 <= passed <= 12, passed  # 1000 bytes of burst, each frame 100
    assert res.drops().get("queue-rate", 0) == 60 - passed, res.drops()
    assert len(res.out[3]) == 30 and len(res.out[4]) == 30
    assert_balanced(res)


def test_set_queue_in_the_action_set_polices(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """set_queue written into the action set polices the set's output (OpenFlow 1.3
    section 5.10: QoS after set-field, before output).  It used to be stored and never
    run: all 60 frames passed.  A set_queue later replaced in the set by one naming a
    queue port 3 does not have leaves port 3's frames alone."""
    res = pcap_switch(3, {1: frames(60, 1) + frames(30, 2)}, [
        "queue=1,port=2,max_rate=8,burst=8",
        "queue=1,port=3,max_rate=8,burst=8",
        "table=0,priority=10,udp,tp_dst=1 actions=write_actions(set_queue:1,output:2)",
        "table=0,priority=10,udp,tp_dst=2 actions=write_actions(set_queue:1),goto_table:1",
        "table=1,priority=10 actions=write_actions(set_queue:7,output:3)",
    ])
    passed = len(res.out[2])
    assert 9 <= passed <= 12, passed  # the same burst as above
    assert len(res.out[3]) == 30, len(res.out[3])
    assert res.drops().get("queue-rate", 0) == 60 - passed, res.drops()
    assert_balanced(res)


def test_queue_min_rate_is_refused(run_sluice) -> None:  # type: ignore[no-untyped-def]
    """A min_rate cannot be guaranteed without a scheduler: the flow file is refused
    with the value named, not silently half-honoured."""
    res = run_sluice(["net_null0,no-rx=1", "net_null1,no-rx=1"],
                     flows=["queue=1,port=2,max_rate=1000,min_rate=500"])
    assert res.returncode == 2, res.output
    assert "min_rate=500" in res.output, res.output


def test_queues_through_sluicectl_and_openflow(sluice_bin: Path, tmp_path: Path) -> None:
    """sluicectl set-queue / dump-queues / del-queue, save keeps queues, and the OpenFlow
    view: ovs-ofctl queue-get-config shows the queue with its max rate, queue-stats its
    counters."""
    mgmt = tmp_path / "q.mgmt"
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"], mgmt=str(mgmt),
                             controllers=["ptcp:0"]),
                binary=sluice_bin, workdir=str(tmp_path))
    try:
        sw.wait_output("datapath id", 30)
        target = sw.wait_listening()[0]

        def ctl(*args: str) -> subprocess.CompletedProcess[str]:
            return sw.sluicectl(*args)

        r = ctl("set-queue", "2", "5", "max_rate=100000", "burst=2000")
        assert r.returncode == 0 and "port 2 queue 5 set" in r.stdout, (r.stdout, r.stderr)
        out = ctl("dump-queues").stdout
        assert "port 2 queue 5: max_rate=100000 kbit/s burst=2000 kbit tx_packets=0" in out, out
        r = ctl("set-queue", "2", "6", "max_rate=1000", "min_rate=5")
        assert r.returncode == 2 and "max_rate=KBPS" in r.stderr, r.stderr
        r = ctl("set-queue", "2", "6", "max_rate=0")
        assert r.returncode == 1 and "max_rate" in r.stderr, r.stderr
        saved = tmp_path / "saved.flows"
        assert ctl("save", str(saved)).returncode == 0
        assert "queue=5,port=2,max_rate=100000,burst=2000" in saved.read_text()
        if shutil.which("ovs-ofctl"):
            cfg = subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "queue-get-config", target,
                                  "2"], capture_output=True, text=True, timeout=30)
            assert cfg.returncode == 0, cfg.stderr
            assert re.search(r"queue 5:.*max_rate", cfg.stdout), cfg.stdout
            st = subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "queue-stats", target],
                                capture_output=True, text=True, timeout=30)
            assert st.returncode == 0, st.stderr
            assert re.search(r"port\s*\"?2\"?\s*queue 5: bytes=0, pkts=0, errors=0", st.stdout), \
                st.stdout
        r = ctl("del-queue", "2", "5")
        assert r.returncode == 0 and "deleted" in r.stdout
        assert ctl("dump-queues").stdout.strip() == ""
        r = ctl("del-queue", "2", "5")
        assert r.returncode == 1 and "no queue 5" in r.stderr, r.stderr
    finally:
        sw.stop()


@pytest.mark.parametrize("bad,message", [
    ("queue=1,port=0,max_rate=5", "bad port"),
    ("queue=1,port=2", "max_rate"),
    ("queue=0xffffffff,port=2,max_rate=5", "bad queue id"),
    ("queue=1,port=2,max_rate=5,color=red", "unknown queue item"),
])
def test_bad_queue_lines_name_the_value(run_sluice, bad: str, message: str) -> None:  # type: ignore[no-untyped-def]
    res = run_sluice(["net_null0,no-rx=1"], flows=[bad])
    assert res.returncode == 2 and message in res.output, res.output


def test_add_flows_sets_queues_with_name_only(sluice_bin: Path, tmp_path: Path) -> None:
    """add-flows sets a file's queue lines over telemetry: with --name and no --telemetry
    the socket is the instance's default one (it used to be left unresolved, and the
    command crashed once the flows were sent).

    Steps:
        1. Start sluice; write a flow file with a queue line and a flow.
        2. sluicectl --name PREFIX --target unix:MGMT add-flows FILE (no --telemetry).
    Verify:
        Exit 0; dump-queues lists the queue with its rate.
    """
    mgmt = tmp_path / "q.mgmt"
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"], mgmt=str(mgmt)),
                binary=sluice_bin, workdir=str(tmp_path))
    try:
        sw.wait_output("datapath id", 30)
        flows = tmp_path / "q.flows"
        flows.write_text("queue=3,port=2,max_rate=500\npriority=1 actions=output:2\n")
        r = subprocess.run([str(sluicectl_binary(sluice_bin)), "--name", sw.prefix, "--target",
                            f"unix:{mgmt}", "add-flows", str(flows)],
                           capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
        out = sw.sluicectl("dump-queues").stdout
        assert "port 2 queue 3: max_rate=500 kbit/s" in out, out
    finally:
        sw.stop()
