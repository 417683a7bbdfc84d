"""LOCAL: the port to the host stack, a TAP interface named after the switch."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from test_tap import quiet_up, send_and_sniff

from sluice import testing
from sluice.testing import Sluice, SluiceConfig

pytestmark = [
    pytest.mark.skipif(not os.path.exists("/dev/net/tun"), reason="/dev/net/tun missing"),
    pytest.mark.skipif(os.geteuid() != 0, reason="TAP interfaces need root"),
]

SUFFIX = str(os.getpid() % 100000)
LOCAL_NAME = f"sllocal{SUFFIX}"  # the switch's name, hence LOCAL's interface (<= 15)
TAP_1 = f"sllp1{SUFFIX}"
OFPP_LOCAL = 0xFFFFFFFE


def wait_iface(name: str, sw: Sluice) -> None:
    testing.wait_until(lambda: Path(f"/sys/class/net/{name}").exists() or not sw.alive(), 10,
                       f"interface {name}")
    assert sw.alive(), sw.output


def local_state(sw: Sluice) -> list[str]:
    r = sw.sluicectl("--json", "show")
    assert r.returncode == 0, r.stderr
    (p,) = [p for p in json.loads(r.stdout)["ports"] if p["port_no"] == OFPP_LOCAL]
    assert p["name"] == LOCAL_NAME, p
    return p["state"]


def datapath_live(sw: Sluice) -> bool:
    r = sw.sluicectl("telemetry", "/sluice/port,LOCAL")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["/sluice/port"]["live"] == 1


def test_local_port_output_and_in_port(sluice_bin: Path, tmp_path: Path) -> None:
    """output:LOCAL reaches the host stack's TAP; frames from it enter with in_port=LOCAL.

    Steps:
        1. Start a switch named LOCAL_NAME with LOCAL on, port 1 a TAP (TAP_1), and flows
           in_port=1 -> output:LOCAL, in_port=LOCAL -> output:1.
        2. show: LOCAL is listed (port_no 0xfffffffe, the switch's name), LINK_DOWN: the
           interface starts down, as Open vSwitch's bridge port.
        3. Bring both interfaces up (IPv6 off); wait until show says LOCAL is LIVE.
        4. Send 5 tagged frames into TAP_1, sniff on LOCAL_NAME; then the other way.
        5. dump-ports LOCAL.
    Verify: each direction delivers exactly the 5 frames; dump-ports LOCAL counts them
    (tx 5 towards the host, rx from it at least 5); the switch stays up.
    """
    sw = Sluice(SluiceConfig(name=LOCAL_NAME, local=True,
                             ports=[f"net_tap0,iface={TAP_1}"],
                             flows=["in_port=1,actions=output:LOCAL",
                                    "in_port=LOCAL,actions=output:1"]),
                binary=sluice_bin, workdir=str(tmp_path))
    try:
        sw.wait_ready()
        wait_iface(LOCAL_NAME, sw)
        wait_iface(TAP_1, sw)
        assert "LINK_DOWN" in local_state(sw)
        quiet_up(TAP_1)
        quiet_up(LOCAL_NAME)
        testing.wait_until(lambda: "LIVE" in local_state(sw), 10, "LOCAL's link up")
        # The datapath takes the link change at its next link check (once a second).
        testing.wait_until(lambda: datapath_live(sw), 10, "LOCAL live in the datapath")
        send_and_sniff(TAP_1, LOCAL_NAME, b"to-local")
        send_and_sniff(LOCAL_NAME, TAP_1, b"from-local")
        r = sw.sluicectl("--json", "dump-ports", "LOCAL")
        assert r.returncode == 0, r.stderr
        (p,) = json.loads(r.stdout)["ports"]
        assert p["port_no"] == OFPP_LOCAL and p["tx_packets"] >= 5 and p["rx_packets"] >= 5, p
        assert sw.alive(), sw.output
    finally:
        sw.stop()
        subprocess.run(["ip", "link", "del", TAP_1], check=False, capture_output=True)


def test_local_skipped_with_a_warning_when_name_too_long(sluice_bin: Path,
                                                         tmp_path: Path) -> None:
    """A switch whose name cannot be an interface name runs without LOCAL, and says so.

    Steps: start a switch named with 20 characters, LOCAL on; show.
    Verify: the log has a warning naming the reason; show lists port 1 only; the switch runs.
    """
    name = f"sllongname{SUFFIX}xxxxxxxxxx"[:20]
    sw = Sluice(SluiceConfig(name=name, local=True, ports=["net_null0,no-rx=1"]),
                binary=sluice_bin, workdir=str(tmp_path))
    try:
        sw.wait_ready()
        deadline = time.monotonic() + 10
        while "no LOCAL port" not in sw.output and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "no LOCAL port: the switch name" in sw.output, sw.output
        r = sw.sluicectl("--json", "show")
        assert [p["port_no"] for p in json.loads(r.stdout)["ports"]] == [1], r.stdout
    finally:
        sw.stop()
