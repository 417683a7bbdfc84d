"""FlexForward system tests: the 8-switch emulated hypercube driven by the controller app,
and the forwarding-mode control surface of one switch (sluicectl, --fwd-mode, errors)."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from sluice import testing
from sluice.hypercube import Hypercube
from sluice.telemetry import runtime_dir

pytestmark = pytest.mark.openflow


@pytest.fixture(scope="module")
def hc() -> Iterator[Hypercube]:
    if not testing.netns_usable() or not shutil.which("ping"):
        pytest.skip("needs network namespaces and ping")
    with Hypercube(mode="hypercube", idle_sleep_max=200) as h:
        yield h


def _totals(stats: dict[int, dict[str, Any]]) -> dict[str, int]:
    keys = ("openflow_packets", "hypercube_packets", "keyflow_packets", "hypercube_drops",
            "keyflow_drops", "hypercube_local", "keyflow_local")
    return {k: sum(int(s.get(k, 0)) for s in stats.values()) for k in keys}


@pytest.mark.parametrize("mode", ["hypercube", "keyflow", "openflow"])
def test_ping_each_mode(hc: Hypercube, mode: str) -> None:
    """Steps: switch the whole network to @mode (two-phase), ping A -> B 5 times.
    Verify: every ping answered; every switch reports @mode as its only engine; the
    tableless engines forwarded the pings (3 engine hops per direction: 2 transit
    switches and the egress switch's local delivery) and dropped nothing; in openflow
    mode no engine saw a packet."""
    hc.set_mode(mode)
    assert hc.status()["mode"] == mode
    for i, s in hc.fwd_stats().items():
        want = "openflow" if mode == "openflow" else f"openflow+{mode}"
        assert s["modes"] == want, f"switch {i}: {s['modes']}"
    before = _totals(hc.fwd_stats())
    sent, recv, rtts = hc.ping("A", "B", count=5, interval=0.05)
    after = _totals(hc.fwd_stats())
    assert (sent, recv) == (5, 5), hc.log("ctl")[-2000:]
    assert len(rtts) == 5
    d = {k: after[k] - before[k] for k in after}
    if mode == "openflow":
        assert d["hypercube_packets"] == d["keyflow_packets"] == 0
        assert d["openflow_packets"] >= 2 * 4 * 5  # 4 switches per direction
    else:
        assert d[f"{mode}_packets"] >= 2 * 3 * 5, d
        assert d[f"{mode}_local"] >= 2 * 5, d       # the egress switch, per direction
        assert d[f"{mode}_drops"] == 0, d
        other = "keyflow" if mode == "hypercube" else "hypercube"
        assert d[f"{other}_packets"] == 0, d


def test_two_switchovers_under_traffic_lose_nothing(hc: Hypercube) -> None:
    """Steps: from hypercube mode, ping A -> B every 5 ms for 3 s; after 0.7 s switch to
    keyflow, after 1.7 s to openflow (both two-phase).
    Verify: both switchovers completed while the pings ran; every ping was answered; no
    switch dropped a packet in an engine."""
    hc.set_mode("hypercube")
    before = _totals(hc.fwd_stats())
    p = hc.popen("A", ["ping", "-n", "-q", "-i", "0.005", "-c", "600", "-W", "2", "10.0.0.2"])
    try:
        time.sleep(0.7)
        r1 = hc.set_mode("keyflow")
        time.sleep(1.0)
        r2 = hc.set_mode("openflow")
        out, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    from sluice.hypercube import parse_ping

    sent, recv, _ = parse_ping(out)
    assert r1["to"] == "keyflow" and r2["to"] == "openflow"
    assert p.returncode == 0 and sent == 600 and recv == 600, out
    after = _totals(hc.fwd_stats())
    assert after["hypercube_drops"] == before["hypercube_drops"]
    assert after["keyflow_drops"] == before["keyflow_drops"]
    assert after["keyflow_packets"] > before["keyflow_packets"]


def test_controller_discovered_the_hypercube(hc: Hypercube) -> None:
    """Steps: read the controller's status.
    Verify: 8 switches, 12 links, addresses 0..7 with every link joining addresses one bit
    apart (checked by the controller; here: all distinct and in range), 8 distinct keys
    above the switches' port counts, no errors."""
    st = hc.status()
    assert st["switches"] == 8 and st["links"] == 12 and not st["errors"]
    assert sorted(st["addresses"].values()) == list(range(8))
    keys = list(st["keys"].values())
    assert len(set(keys)) == 8 and min(keys) > 4


def test_fwd_mode_control_one_switch() -> None:
    """Steps: start a switch with two null ports and --fwd-mode; read it with sluicectl;
    set modes that are valid and invalid; give --fwd-mode values that are wrong.
    Verify: fwd-mode prints what was set; refused parameters exit 1 naming the
    experimenter error (SLFWD_BAD_PARAM, SLFWD_DUP_NEIGHBOR, SLFWD_BAD_PORT) and leave
    the previous modes; a syntax error exits 2; bad --fwd-mode values exit 2 with the
    offending value named."""
    name = testing.unique("ff")
    cfg = testing.SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"], name=name,
                               extra=["--fwd-mode", "keyflow:key=5"], lcores="0,1",
                               mem_mb=256)
    with testing.sluice(cfg) as sw:
        sw.wait_ready()

        def ctl(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(sw.sluicectl_cmd(*args), capture_output=True, text=True,
                                  timeout=30)

        r = ctl("fwd-mode")
        assert r.returncode == 0 and r.stdout.strip() == "keyflow:tag=0xf2,key=5"
        r = ctl("set-fwd-mode", "hypercube:addr=2,nbr=3@1,nbr=0@2")
        assert r.returncode == 0, r.stderr
        assert ctl("fwd-mode").stdout.strip() == "hypercube:tag=0xf1,addr=0x2,nbr=0x3@1,nbr=0x0@2"
        for text, err in [("keyflow:key=2", "SLFWD_BAD_PARAM"),
                          ("hypercube:addr=0,nbr=1@1,nbr=1@2", "SLFWD_DUP_NEIGHBOR"),
                          ("hypercube:addr=0,nbr=1@3", "SLFWD_BAD_PORT"),
                          ("hypercube:addr=0,nbr=3@1", "SLFWD_BAD_PARAM")]:
            r = ctl("set-fwd-mode", text)
            assert r.returncode == 1 and err in r.stderr, (text, r.stderr)
        r = ctl("set-fwd-mode", "bcube:x=1")
        assert r.returncode == 2 and "bcube" in r.stderr
        assert ctl("fwd-mode").stdout.strip().startswith("hypercube:tag=0xf1,addr=0x2")
        fwd = sw.telemetry.call("/sluice/fwd")
        assert fwd["modes"] == "openflow+hypercube" and fwd["hypercube_addr"] == 2
    for bad, word in [("keyflow:key=1", "key 1"), ("mesh", "mesh"),
                      ("hypercube:addr=0,nbr=1@9", "port 9"), ("hypercube:", "missing addr=")]:
        r = subprocess.run([str(testing.sluice_binary()), "-p", "net_null0,no-rx=1",
                            "--mgmt", "none", "-d", "1", "--fwd-mode", bad, "--",
                            *testing.eal_args(testing.unique("ffb"), "0,1", 256)],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and word in r.stderr, (bad, r.stderr)


def test_fwd_mode_in_flow_file_and_add_flows(tmp_path: Any) -> None:
    """Steps: start a switch whose flow file has a fwd-mode= line; start one with the same
    file plus --fwd-mode; send a file with another fwd-mode= line with sluicectl add-flows;
    start one with an invalid fwd-mode= line.
    Verify: the file's modes are in force; --fwd-mode overrides the file; add-flows sets the
    new modes; the invalid line exits 2 naming the file and line."""
    flows = tmp_path / "ff.flows"
    flows.write_text("priority=1,actions=drop\nfwd-mode=keyflow:key=7,tag=0xc2\n")
    ports = ["net_null0,no-rx=1", "net_null1,no-rx=1"]
    for extra, want in [([], "keyflow:tag=0xc2,key=7"),
                        (["--fwd-mode", "openflow"], "openflow")]:
        cfg = testing.SluiceConfig(ports=ports, name=testing.unique("ff"), mem_mb=256,
                                   flows_file=str(flows), extra=extra)
        with testing.sluice(cfg) as sw:
            sw.wait_ready()
            r = sw.sluicectl("fwd-mode")
            assert r.returncode == 0 and r.stdout.strip() == want, (extra, r.stdout, r.stderr)
            if not extra:
                more = tmp_path / "more.flows"
                more.write_text("fwd-mode=hypercube:addr=1,nbr=0@2\n")
                r = sw.sluicectl("add-flows", str(more))
                assert r.returncode == 0, r.stderr
                assert sw.sluicectl("fwd-mode").stdout.strip() == \
                    "hypercube:tag=0xf1,addr=0x1,nbr=0x0@2"
                more.write_text("priority=2,actions=drop\nfwd-mode=hypercube:addr=1,nbr=0@9\n")
                r = sw.sluicectl("add-flows", str(more))
                assert r.returncode == 1 and "SLFWD_BAD_PORT" in r.stderr and ":2" in r.stderr, \
                    r.stderr
    flows.write_text("priority=1,actions=drop\nfwd-mode=keyflow:key=zz\n")
    prefix = testing.unique("ffc")
    try:
        r = subprocess.run([str(testing.sluice_binary()), "-p", ports[0], "--mgmt", "none",
                            "-d", "1", "-f", str(flows), "--",
                            *testing.eal_args(prefix, "0,1", 256)],
                           capture_output=True, text=True, timeout=60)
    finally:  # EAL leaves its runtime directory behind when the switch refuses to start
        shutil.rmtree(runtime_dir(prefix), ignore_errors=True)
    assert r.returncode == 2 and f"{flows}:2" in r.stderr and "zz" in r.stderr, r.stderr


def test_fwd_mode_messages_over_openflow() -> None:
    """Steps: on a 2-port switch, over its management socket, send SET_FWD_MODE messages that
    are malformed (TLV length 12, unknown mode) or refused (key 2, a neighbour on port 3), a
    valid one, a FWD_MODE request with and without a TLV; become SLAVE and set again.
    Verify: each bad message gets its OFPT_ERROR (BAD_LEN, experimenter 0x400 / 0x405 /
    0x404 with experimenter id SLUC) with the request's xid; the valid one is read back by
    FWD_MODE byte for byte; a SLAVE may read but gets IS_SLAVE when setting; the connection
    and the switch survive (echo)."""
    import struct

    from sluice import flexforward as ff
    from sluice import ofp

    cfg = testing.SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                               name=testing.unique("ff"), mem_mb=256)
    with testing.sluice(cfg) as sw:
        sw.wait_ready()
        target = sw.openflow_target
        assert target is not None
        with ofp.Client.connect(target) as c:
            def error_of(data: bytes) -> ofp.Error:
                m = c.request(data)
                assert m.type == ofp.OFPT_ERROR, m.type
                return ofp.parse_error(m)

            hdr = struct.pack("!II", ff.SL_EXPERIMENTER_ID, ff.SL_OFPX_SET_FWD_MODE)
            # An openflow TLV claiming 12 bytes (not a multiple of 8).
            e = error_of(ofp.message(ofp.OFPT_EXPERIMENTER,
                                     hdr + bytes.fromhex("0000000c0000000000000000"), xid=11))
            assert (e.type, e.code) == (ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_LEN)
            e = error_of(ofp.message(ofp.OFPT_EXPERIMENTER,
                                     hdr + bytes.fromhex("0007000800000000"), xid=12))
            assert (e.type, e.code, e.experimenter) == (0xFFFF, 0x400, ff.SL_EXPERIMENTER_ID)
            e = error_of(ff.fwd_mode_msg([ff.ModeParams("keyflow", 0xF2, key=2)], xid=13))
            assert (e.type, e.code) == (0xFFFF, 0x405)
            e = error_of(ff.fwd_mode_msg([ff.ModeParams("hypercube", 0xF1, addr=0,
                                                        neighbors=((1, 3),))], xid=14))
            assert (e.type, e.code) == (0xFFFF, 0x404)
            good = [ff.ModeParams("hypercube", 0xF1, addr=2, neighbors=((3, 1), (0, 2))),
                    ff.ModeParams("keyflow", 0xC2, key=5)]
            c.send(ff.fwd_mode_msg(good, xid=15))
            c.barrier()
            rep = c.request(ff.fwd_mode_msg([], xid=16, exp_type=ff.SL_OFPX_FWD_MODE))
            assert rep.type == ofp.OFPT_EXPERIMENTER
            assert rep.raw[16:] == ff.fwd_mode_body(good)
            assert ff.parse_fwd_mode_body(rep.raw[16:]) == good
            e = error_of(ff.fwd_mode_msg(good, xid=17, exp_type=ff.SL_OFPX_FWD_MODE))
            assert (e.type, e.code) == (ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_LEN)
            role = c.request(ofp.message(24, struct.pack("!I4xQ", 3, 0), xid=18))  # SLAVE
            assert role.type == 25
            e = error_of(ff.fwd_mode_msg([], xid=19))
            assert (e.type, e.code) == (ofp.OFPET_BAD_REQUEST, 10)  # IS_SLAVE
            rep = c.request(ff.fwd_mode_msg([], xid=20, exp_type=ff.SL_OFPX_FWD_MODE))
            assert ff.parse_fwd_mode_body(rep.raw[16:]) == good
            c.echo()
        assert sw.alive()
