"""Sluice under Mininet (sluice.mininet.SluiceSwitch), run in a network namespace of its own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap

import pytest

from sluice import testing

SYS_PY = "/usr/bin/python3"

SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {src!r})
    from mininet.log import setLogLevel
    from mininet.net import Mininet
    from mininet.topo import LinearTopo
    from sluice.mininet import SluiceSwitch
    setLogLevel("error")
    net = Mininet(topo=LinearTopo(2, 1), switch=SluiceSwitch, controller=None, autoSetMacs=True)
    for s in net.switches:
        s.flows = ["priority=0,actions=FLOOD"]
    net.start()
    try:
        loss = net.pingAll(timeout=2)
        pids = [s.sluice_pid for s in net.switches]
    finally:
        net.stop()
    print("RESULT " + json.dumps({{"loss": loss, "pids": pids}}))
""")


def test_mininet_linear_topology_pings() -> None:
    """Steps: in a new network namespace, build Mininet's LinearTopo(2, 1) (2 switches, one
    host each) with SluiceSwitch and a FLOOD rule, pingAll, stop.
    Verify: no ping lost; both Sluice processes are gone after net.stop()."""
    ok = shutil.which("mn") and os.path.exists(SYS_PY) and subprocess.run(
        [SYS_PY, "-c", "import mininet.net"], capture_output=True).returncode == 0
    if not ok or not testing.netns_usable():
        pytest.skip("needs Mininet (Debian mininet) and network namespaces")
    src = str(testing.REPO / "python" / "src")
    with testing.Topology() as topo:
        ns = topo.add_netns("mn")
        r = subprocess.run(["ip", "netns", "exec", ns, SYS_PY, "-c", SCRIPT.format(src=src)],
                           capture_output=True, text=True, timeout=180,
                           env=dict(os.environ, SLUICE_ROOT=str(testing.REPO)))
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    assert r.returncode == 0 and lines, r.stdout + r.stderr
    res = json.loads(lines[0][7:])
    assert res["loss"] == 0.0
    assert len(res["pids"]) == 2
    for pid in res["pids"]:
        assert pid is None or not os.path.exists(f"/proc/{pid}")
