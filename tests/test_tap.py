"""Forwarding between two Linux TAP interfaces (net_tap ports), with scapy."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from scapy.all import IP, UDP, AsyncSniffer, Ether, Raw, sendp  # type: ignore[import-untyped]

from sluice.testing import BackgroundSluice, assert_balanced

pytestmark = [
    pytest.mark.skipif(not os.path.exists("/dev/net/tun"), reason="/dev/net/tun missing"),
    pytest.mark.skipif(os.geteuid() != 0, reason="TAP interfaces need root"),
]

#: Interface names: sltapA/sltapB plus a PID suffix so parallel runs do not collide.
SUFFIX = str(os.getpid() % 10000)
TAP_A = f"sltapA{SUFFIX}"
TAP_B = f"sltapB{SUFFIX}"
N_PACKETS = 5
#: Upper bound of the run; the test stops sluice with SIGINT once done.
RUN_SECONDS = 20.0


def wait_for_iface(name: str, bg: BackgroundSluice, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not Path(f"/sys/class/net/{name}").exists():
        if not bg.alive():
            pytest.fail(f"sluice exited before creating {name}:\n{bg.stop().output}")
        if time.monotonic() > deadline:
            pytest.fail(f"interface {name} did not appear")
        time.sleep(0.05)


def quiet_up(name: str) -> None:
    """Disable IPv6 (no RS/MLD noise) and bring the interface up."""
    subprocess.run(["sysctl", "-q", "-w", f"net.ipv6.conf.{name}.disable_ipv6=1"], check=False)
    subprocess.run(["ip", "link", "set", "dev", name, "up"], check=True)


def send_and_sniff(src: str, dst: str, tag: bytes) -> list[bytes]:
    """Send N_PACKETS frames tagged @tag on @src; return the tagged frames seen on @dst."""
    frames = [
        Ether(src="02:00:00:00:00:0a", dst="02:00:00:00:00:0b")
        / IP(src="192.0.2.1", dst="192.0.2.2")
        / UDP(sport=1000 + i, dport=9)
        / Raw(tag + bytes([i]))
        for i in range(N_PACKETS)
    ]
    seen: list[bytes] = []
    sniffer = AsyncSniffer(
        iface=dst,
        store=False,
        lfilter=lambda p: tag in bytes(p),
        prn=lambda p: seen.append(bytes(p)),
    )
    sniffer.start()
    time.sleep(0.3)  # the sniffer socket is bound
    sendp(frames, iface=src, verbose=False)
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline and len(seen) < N_PACKETS:
        time.sleep(0.05)
    time.sleep(0.1)  # anything extra (duplicates) shows up too
    sniffer.stop()
    got = sorted(seen)
    assert got == sorted(bytes(f) for f in frames), (src, dst, len(got))
    return got


def test_tap_bidirectional(start_sluice: Callable[..., BackgroundSluice]) -> None:
    """Two TAP ports forward to each other.

    Steps:
        1. Start sluice with net_tap ports on TAP_A (port 1) and TAP_B (port 2)
           and flows in_port=1 -> 2, in_port=2 -> 1.
        2. Disable IPv6 on both interfaces and bring them up.
        3. Start a sniffer on TAP_B, send 5 UDP frames with a unique payload on
           TAP_A; then the same from TAP_B to TAP_A.
    Verify:
        Each side sniffs exactly the 5 tagged frames, byte for byte; after
        SIGINT, exit 0, port 1 and port 2 each received at least 5 frames,
        counters balanced and the check line says OK.
    """
    bg = start_sluice(
        [f"net_tap0,iface={TAP_A}", f"net_tap1,iface={TAP_B}"],
        ["in_port=1 actions=output:2", "in_port=2 actions=output:1"],
        RUN_SECONDS,
    )
    wait_for_iface(TAP_A, bg)
    wait_for_iface(TAP_B, bg)
    quiet_up(TAP_A)
    quiet_up(TAP_B)
    tag = f"sluice-tap-{os.getpid()}-{time.time_ns()}-".encode()
    send_and_sniff(TAP_A, TAP_B, tag + b"ab")
    send_and_sniff(TAP_B, TAP_A, tag + b"ba")
    res = bg.stop(interrupt=True)
    assert res.returncode == 0, res.output
    assert_balanced(res)
    assert res.port(1)["rx"] >= N_PACKETS and res.port(2)["rx"] >= N_PACKETS
    assert res.port(1)["tx"] >= N_PACKETS and res.port(2)["tx"] >= N_PACKETS
    assert not Path(f"/sys/class/net/{TAP_A}").exists(), "TAP interface left behind"
