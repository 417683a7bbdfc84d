"""OpenFlow 1.3 meters (issue #20): drop and DSCP-remark bands, pktps and kbps, the meter
instruction in front of the pipeline's caches, meter_mod from sluicectl, ovs-ofctl and an
os-ken app.

The pcap tests read every frame at once at start: a bucket of B packets (or bits) then
passes exactly its burst, whatever the machine's speed, because the rate adds well under one
packet in the milliseconds the frames take to arrive.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sluice import testing
from sluice.testing import RawPort, Sluice, SluiceConfig, Topology

REPO = Path(__file__).resolve().parent.parent
SLUICECTL = REPO / "build" / "app" / "sluicectl"


def _frames(n: int, dscp: int = 0, size: int = 60) -> list[bytes]:
    from scapy.all import IP, UDP, Ether, Raw  # type: ignore[import-untyped]
    out = []
    for i in range(n):
        p = Ether(dst="02:00:00:00:00:02") / IP(dst="10.0.0.1", tos=dscp << 2, id=i) / \
            UDP(dport=7)
        out.append(bytes(p / Raw(b"m" * max(0, size - len(p)))))
    return out


def _dscp_and_checksum_ok(frame: bytes) -> tuple[int, bool]:
    from scapy.all import IP, Ether
    ip = Ether(frame)[IP]
    want = ip.chksum
    del ip.chksum
    return ip.tos >> 2, IP(bytes(ip)).chksum == want


def test_drop_band_passes_its_burst(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """A pktps drop band of burst 10 (rate 1/s): of 100 frames arriving at once, the first
    10 leave port 2 unchanged and 90 are dropped with the reason "meter"; counters balance."""
    from sluice.testing import assert_balanced
    fr = _frames(100)
    res = pcap_switch(2, {1: fr}, [
        "meter=1,pktps,burst,stats,bands=type=drop,rate=1,burst_size=10",
        "priority=5,in_port=1 actions=meter:1,output:2",
    ])
    assert [bytes(p) for p in res.out[2]] == fr[:10]
    assert res.drops().get("meter") == 90, res.drops()
    assert_balanced(res)


def test_kbps_band_counts_bits(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """kbps: a bucket of 8 kilobits holds ten 100-byte frames."""
    fr = _frames(40, size=100)
    res = pcap_switch(2, {1: fr}, [
        "meter=1,kbps,burst,bands=type=drop,rate=1,burst_size=8",
        "priority=5,in_port=1 actions=meter:1,output:2",
    ])
    assert len(res.out[2]) == 10, len(res.out[2])
    assert res.drops().get("meter") == 30, res.drops()


def test_remark_and_drop_bands(pcap_switch) -> None:  # type: ignore[no-untyped-def]
    """Two bands: dscp_remark (rate 1/s, burst 10) and drop (rate 2/s, burst 20).  Of 40
    AF11 frames the first 10 fit both and pass as they are, the next 10 exceed only the
    remark band and leave as AF12 with a valid IPv4 checksum, the last 20 exceed both and
    get the band of the higher rate: dropped."""
    fr = _frames(40, dscp=10)
    res = pcap_switch(2, {1: fr}, [
        "meter=1,pktps,burst,bands=type=dscp_remark,rate=1,burst_size=10,prec_level=1 "
        "type=drop,rate=2,burst_size=20",
        "priority=5,in_port=1 actions=meter:1,output:2",
    ])
    out = [bytes(p) for p in res.out[2]]
    assert len(out) == 20, len(out)
    assert out[:10] == fr[:10]
    for f in out[10:]:
        dscp, ok = _dscp_and_checksum_ok(f)
        assert dscp == 12 and ok, (dscp, ok)
    assert res.drops().get("meter") == 20, res.drops()


@pytest.mark.parametrize("layout", ["meter-then-goto", "goto-then-meter"])
def test_meter_in_multi_table_paths(pcap_switch, layout: str) -> None:  # type: ignore[no-untyped-def]
    """The whole-pipeline cache (path records) must never replay a path past its meter:
    with the meter on the first hop or the last, still exactly the burst passes."""
    fr = _frames(200)
    flows = ["meter=1,pktps,burst,bands=type=drop,rate=1,burst_size=10"]
    if layout == "meter-then-goto":
        flows += ["table=0,priority=5,ip actions=meter:1,goto_table:1",
                  "table=1,priority=5,udp actions=output:2"]
    else:
        flows += ["table=0,priority=5,ip actions=goto_table:1",
                  "table=1,priority=5,udp actions=meter:1,output:2"]
    res = pcap_switch(2, {1: fr}, flows)
    assert len(res.out[2]) == 10, len(res.out[2])
    assert res.drops().get("meter") == 190, res.drops()


def test_meter_flow_errors_and_delete(sluice_bin: Path, tmp_path: Path) -> None:
    """sluicectl add-meter / dump-meters / del-meters against a running switch: a flow naming
    a missing meter is refused with UNKNOWN_METER, a second add with METER_EXISTS, a bad band
    before anything is sent (exit 2, the token named); deleting a meter removes its flows."""
    cfg = SluiceConfig(ports=["net_null0", "net_null1"], controllers=(
        f"punix:{testing.socket_path('slm')}",))
    with Sluice(cfg, binary=sluice_bin) as sw:
        target = sw.wait_listening()[0]

        def ctl(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([str(SLUICECTL), "-t", target, *args], capture_output=True,
                                  text=True, timeout=30)

        r = ctl("add-meter", "meter=4,pktps,burst,stats,bands=type=drop,rate=100,burst_size=5")
        assert r.returncode == 0, r.stderr
        r = ctl("add-meter", "meter=4,pktps,bands=type=drop,rate=100")
        assert r.returncode == 1 and "OFPMMFC_METER_EXISTS" in r.stderr, r.stderr
        r = ctl("add-meter", "meter=5,pktps,bands=type=dscp_remark,rate=1,prec_level=9")
        assert r.returncode == 2 and "prec_level=9" in r.stderr, r.stderr
        r = ctl("add-flow", "priority=7,in_port=1 actions=meter:6,output:2")
        assert r.returncode == 1 and "OFPMMFC_UNKNOWN_METER" in r.stderr, r.stderr
        assert ctl("add-flow", "priority=7,in_port=1 actions=meter:4,output:2").returncode == 0
        flows = ctl("dump-flows").stdout
        assert "actions=meter:4,output:2" in flows, flows
        meters = json.loads(ctl("-j", "dump-meters").stdout)["meters"]
        assert [(m["meter_id"], m["flow_count"]) for m in meters] == [(4, 1)], meters
        assert meters[0]["meter"] == \
            "meter=4,pktps,burst,stats,bands=type=drop,rate=100,burst_size=5"
        r = ctl("mod-meter", "meter=4,kbps,bands=type=drop,rate=300")
        assert r.returncode == 0, r.stderr
        assert "meter=4,kbps,bands=type=drop,rate=300" in ctl("dump-meters").stdout
        assert ctl("del-meters", "meter=4").returncode == 0
        assert "meter:4" not in ctl("dump-flows").stdout
        assert "no meters" in ctl("dump-meters").stdout
        features = json.loads(ctl("-j", "meter-features").stdout)
        assert features["max_meter"] == 65536 and features["max_bands"] == 8, features


def test_ovs_ofctl_meters(sluice_bin: Path) -> None:
    """ovs-ofctl -O OpenFlow13 add-meter, meter-stats, dump-meters, meter-features, del-meters
    against Sluice: Open vSwitch's own encoder and decoder agree with ours."""
    if not shutil.which("ovs-ofctl"):
        pytest.skip("ovs-ofctl not installed (openvswitch-common)")
    cfg = SluiceConfig(ports=["net_null0", "net_null1"], controllers=(
        f"punix:{testing.socket_path('slm')}",))
    with Sluice(cfg, binary=sluice_bin) as sw:
        target = sw.wait_listening()[0]

        def ofctl(*args: str) -> str:
            r = subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", *args], capture_output=True,
                               text=True, timeout=30)
            assert r.returncode == 0, r.stderr
            return r.stdout

        ofctl("add-meter", target, "meter=1,kbps,burst,stats,bands=type=drop,rate=1000,"
              "burst_size=100 type=dscp_remark,rate=500,burst_size=50,prec_level=2")
        ofctl("add-flow", target, "in_port=1,actions=meter:1,output:2")
        conf = ofctl("dump-meters", target)
        assert "meter=1 kbps burst stats bands=" in conf, conf
        assert "type=drop rate=1000 burst_size=100" in conf, conf
        assert "type=dscp_remark rate=500 burst_size=50 prec_level=2" in conf, conf
        stats = ofctl("meter-stats", target)
        assert "meter:1 flow_count:1 packet_in_count:" in stats, stats  # net_null0 sends
        feats = ofctl("meter-features", target)
        assert "max_meter:65536" in feats and "dscp_remark" in feats, feats
        assert "meter:1" in ofctl("dump-flows", target)
        ofctl("del-meters", target)
        assert "meter:1" not in ofctl("dump-flows", target)


# ---------------------------------------------------------------------------
# An os-ken app that polices a port with a meter (as Faucet-style controllers do)
# ---------------------------------------------------------------------------


def test_osken_policer(sluice_bin: Path) -> None:
    """sluice.apps.policer installs a drop-band meter (pktps, rate 5, burst 5) and the flows
    port 1 -> meter -> NORMAL, anything else -> NORMAL.  60 frames to an unknown MAC sent at
    once into port 1: NORMAL floods them to port 2, between 5 and 10 of them (the burst, and
    at most a second of the rate), and the meter's counters, read with sluicectl, account
    for every one.  Then a frame back from port 2 to the sender's MAC: NORMAL learned it on
    port 1 and sends it there."""
    pytest.importorskip("os_ken")
    if not testing.netns_usable():
        pytest.skip("needs root and iproute2 (veth pairs)")
    with contextlib.ExitStack() as stack:
        topo = stack.enter_context(Topology())
        (a1, b1), (a2, b2) = topo.add_veth("smt"), topo.add_veth("smt")
        port = testing.free_tcp_port()
        env = dict(os.environ, OSKEN_HUB_TYPE="eventlet")
        app = testing.Proc([sys.executable, "-m", "sluice.apps.run",
                            f"--ofp-tcp-listen-port={port}", "policer"], env=env,
                           name="os-ken")
        stack.callback(app.stop)
        testing.wait_until(lambda: testing.tcp_listening(port) or not app.alive(), 30,
                           "os-ken to listen")
        assert app.alive(), app.output
        sock = testing.socket_path("slm")
        sw = Sluice(SluiceConfig(ports=testing.af_packet_ports([a1, a2]), fail_mode="secure",
                                 controllers=(f"tcp:127.0.0.1:{port}", f"punix:{sock}")),
                    binary=sluice_bin)
        stack.callback(sw.stop)
        sw.wait_listening()
        target = f"unix:{sock}"

        def meters() -> list[dict[str, object]]:
            r = subprocess.run([str(SLUICECTL), "-t", target, "-j", "dump-meters"],
                               capture_output=True, text=True, timeout=30)
            return json.loads(r.stdout)["meters"] if r.returncode == 0 else []

        testing.wait_until(lambda: any(m.get("flow_count") == 1 for m in meters()), 30,
                           "the policer's meter and flow")
        p1 = stack.enter_context(RawPort(b1))
        p2 = stack.enter_context(RawPort(b2))
        tag = b"sluice-meter-test"
        frames = [testing.eth_frame("02:00:00:00:00:02", "02:00:00:00:00:01",
                                    tag + bytes([i]) * 40) for i in range(60)]
        p2.drain()
        p1.send(frames)
        got = p2.recv_until(lambda g: False, 1.5, keep=lambda f: tag in f)
        assert 5 <= len(got) <= 10, len(got)
        m = meters()[0]
        bands = m["bands"]
        assert isinstance(bands, list)
        assert m["n_packets"] == 60 and bands[0]["n_packets"] == 60 - len(got), m
        p1.drain()
        back = testing.eth_frame("02:00:00:00:00:01", "02:00:00:00:00:02", tag + b"back")
        p2.send([back])
        assert p1.recv_until(lambda g: len(g) >= 1, 5, keep=lambda f: tag + b"back" in f)
