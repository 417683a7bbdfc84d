"""Sluice under Mininet (sluice.mininet.SluiceSwitch), run in a network namespace of its own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from sluice import testing

SYS_PY = "/usr/bin/python3"

SCRIPT = textwrap.dedent("""
    import json
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
    print("RESULT " + json.dumps({"loss": loss, "pids": pids}))
""")


def _mininet_ok() -> bool:
    return bool(shutil.which("mn")) and os.path.exists(SYS_PY) and subprocess.run(
        [SYS_PY, "-c", "import mininet.net"], capture_output=True).returncode == 0


def _run_in_netns(script: str, ns_prefix: str, timeout: int) -> dict[str, Any]:
    """Run @script under the system Python in a new network namespace; return the JSON
    of its "RESULT " line (asserting it exited 0 and printed one)."""
    if not _mininet_ok() or not testing.netns_usable():
        pytest.skip("needs Mininet (Debian mininet) and network namespaces")
    src = str(testing.REPO / "python" / "src")
    with testing.Topology() as topo:
        ns = topo.add_netns(ns_prefix)
        r = subprocess.run(["ip", "netns", "exec", ns, SYS_PY, "-c", script],
                           capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, SLUICE_ROOT=str(testing.REPO), PYTHONPATH=src))
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    assert r.returncode == 0 and lines, r.stdout + r.stderr
    result: dict[str, Any] = json.loads(lines[0][7:])
    return result


HYPERCUBE = textwrap.dedent("""
    import json, os, signal, socket, subprocess, time
    from mininet.log import setLogLevel
    from mininet.net import Mininet
    from mininet.node import RemoteController
    from sluice.flexforward import control_request
    from sluice.mininet import HypercubeTopo, SluiceSwitch, flexforward_config
    setLogLevel("error")
    port, ctl_sock, cfg_path = {port}, {ctl!r}, {cfg!r}
    net = Mininet(topo=HypercubeTopo(3), switch=SluiceSwitch, controller=None,
                  autoSetMacs=True, build=False)
    net.addController(RemoteController("c0", ip="127.0.0.1", port=port))
    net.build()
    with open(cfg_path, "w") as f:
        json.dump(flexforward_config(net, "hypercube", ctl_sock), f)
    ctl = subprocess.Popen([{venv_py!r}, "-m", "sluice.apps.run", "--ofp-tcp-listen-port",
                            str(port), "flexforward"], start_new_session=True,
                           stdout=open(cfg_path + ".log", "w"), stderr=subprocess.STDOUT,
                           env=dict(os.environ, SLUICE_FF_CONFIG=cfg_path))
    res = {{}}
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        net.start()
        net.staticArp()
        for _ in range(600):
            try:
                st = control_request(ctl_sock, {{"cmd": "status"}})
                if st.get("ready"):
                    break
            except OSError:
                pass
            time.sleep(0.1)
        res["status"] = st
        h1, h2 = net.get("h1", "h2")
        for mode in ["hypercube", "keyflow", "openflow", "hypercube"]:
            res["switch_" + mode] = control_request(ctl_sock, {{"cmd": "mode", "mode": mode}})
            out = h1.cmd("ping -n -c 3 -i 0.2 -W 1 " + h2.IP())
            res[mode] = out.count("bytes from")
    finally:
        net.stop()
        os.killpg(ctl.pid, signal.SIGTERM)
        try:
            ctl.wait(2)
        except subprocess.TimeoutExpired:  # os-ken does not always exit on SIGTERM
            os.killpg(ctl.pid, signal.SIGKILL)
            ctl.wait(10)
    print("RESULT " + json.dumps(res))
""")


def test_mininet_hypercube_with_flexforward_controller(tmp_path: object) -> None:
    """Steps: in a new network namespace, Mininet builds HypercubeTopo(3) (8 SluiceSwitches,
    h1 and h2 three links apart) with a RemoteController: the FlexForward app; once it has
    discovered the fabric, ping h1 -> h2 three times in hypercube, keyflow, openflow and
    hypercube mode again.
    Verify: the controller saw 8 switches and 12 links; every ping in every mode answered."""
    d = str(tmp_path)
    script = HYPERCUBE.format(port=testing.free_tcp_port(), ctl=f"{d}/ctl.sock",
                              cfg=f"{d}/ff.json", venv_py=sys.executable)
    res = _run_in_netns(script, "mnh", 300)
    assert res["status"]["switches"] == 8 and res["status"]["links"] == 12, res["status"]
    for mode in ["hypercube", "keyflow", "openflow"]:
        assert res[mode] == 3, (mode, res)
        assert res[f"switch_{mode}"].get("ok"), res[f"switch_{mode}"]


def test_mininet_linear_topology_pings() -> None:
    """Steps: in a new network namespace, build Mininet's LinearTopo(2, 1) (2 switches, one
    host each) with SluiceSwitch and a FLOOD rule, pingAll, stop.
    Verify: no ping lost; both Sluice processes are gone after net.stop()."""
    res = _run_in_netns(SCRIPT, "mn", 180)
    assert res["loss"] == 0.0
    assert len(res["pids"]) == 2
    for pid in res["pids"]:
        assert pid is None or not os.path.exists(f"/proc/{pid}")


DPCTL = textwrap.dedent("""
    import json, socket, threading, time
    from mininet.log import setLogLevel
    from mininet.net import Mininet
    from mininet.node import RemoteController
    from mininet.topo import Topo
    from sluice import ofp
    from sluice.mininet import SluiceSwitch
    setLogLevel("error")

    class Two(Topo):
        def build(self):
            s1 = self.addSwitch("s1")
            s2 = self.addSwitch("s2", fail_mode="standalone")
            self.addLink(self.addHost("h1"), s1)
            self.addLink(self.addHost("h2"), s1)
            self.addLink(s1, s2)

    def controller(srv, conns):
        # Just enough of a controller: HELLO, then echo replies.
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            conns.append(c)
            c.sendall(ofp.hello())
            threading.Thread(target=serve, args=(c,), daemon=True).start()

    def serve(c):
        buf = b""
        while True:
            try:
                data = c.recv(65536)
            except OSError:
                return
            if not data:
                return
            buf += data
            while len(buf) >= 8 and len(buf) >= int.from_bytes(buf[2:4], "big"):
                n = int.from_bytes(buf[2:4], "big")
                msg, buf = buf[:n], buf[n:]
                if msg[1] == 2:  # ECHO_REQUEST
                    c.sendall(ofp.echo_reply(msg[8:], int.from_bytes(msg[4:8], "big")))

    port = {port}
    net = Mininet(topo=Two(), switch=SluiceSwitch, controller=None, build=False)
    net.addController(RemoteController("c0", ip="127.0.0.1", port=port))
    net.build()
    res = {{}}
    srv = socket.socket()
    conns = []
    try:
        net.start()
        s1, s2 = net.get("s1", "s2")
        res["s1_before"], res["s2_before"] = s1.connected(), s2.connected()
        res["empty"] = s1.dpctl("dump-flows")
        res["add"] = s1.dpctl("add-flow", "priority=7,in_port=1,actions=output:2")
        res["bad"] = s1.dpctl("add-flow", "priority=7,in_port=1,actions=nosuch")
        res["dump"] = s1.dpctl("-O", "OpenFlow13", "dump-flows", "--no-stats")
        res["ports"] = s1.dpctl("dump-ports-desc")
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", port))
        srv.listen(8)
        threading.Thread(target=controller, args=(srv, conns), daemon=True).start()
        res["waited"] = net.waitConnected(timeout=60)
        res["s1_after"], res["s2_after"] = s1.connected(), s2.connected()
        res["del"] = s1.dpctl("del-flows")
        res["dump_after_del"] = s1.dpctl("dump-flows")
    finally:
        net.stop()
        srv.close()
        for c in conns:
            c.close()
    res["s1_stopped"] = s1.connected()
    print("RESULT " + json.dumps(res))
""")


def test_mininet_dpctl_and_connected() -> None:
    """Steps: in a new network namespace, Mininet with SluiceSwitch s1 (fail mode secure,
    h1 and h2 on ports 1 and 2) and s2 (standalone) and a RemoteController that is not up
    yet; read connected(); dpctl dump-flows, add-flow (a good and a bad one), dump-flows
    with ovs-ofctl's -O OpenFlow13, dump-ports-desc; then start a minimal controller
    (HELLO, echo replies) and net.waitConnected(); connected() again; dpctl del-flows.
    Verify: before the controller s1 is not connected and s2 (standalone) is; dump-flows
    is empty, then shows the added flow and not the bad one, whose error dpctl returns;
    dump-ports-desc lists s1's interfaces; waitConnected succeeds and both are connected;
    del-flows empties the table; after net.stop() s1 is not connected."""
    script = DPCTL.format(port=testing.free_tcp_port())
    res = _run_in_netns(script, "mnd", 240)
    assert (res["s1_before"], res["s2_before"]) == (False, True), res
    assert "priority=" not in res["empty"], res["empty"]
    assert res["add"].strip() == "", res["add"]
    assert "nosuch" in res["bad"] and "sluicectl:" in res["bad"], res["bad"]
    flows = [ln.strip() for ln in res["dump"].splitlines() if "priority=" in ln]
    assert flows == ["table=0, priority=7,in_port=1 actions=output:2"], res["dump"]
    assert "s1-eth1" in res["ports"] and "s1-eth3" in res["ports"], res["ports"]
    assert res["waited"] is True, res
    assert (res["s1_after"], res["s2_after"]) == (True, True), res
    assert res["del"].strip() == "" and "priority=" not in res["dump_after_del"], res
    assert res["s1_stopped"] is False


STANDALONE = textwrap.dedent("""
    import json
    from functools import partial
    from mininet.log import setLogLevel
    from mininet.net import Mininet
    from mininet.topo import SingleSwitchTopo
    from sluice.mininet import SluiceSwitch
    setLogLevel("error")
    net = Mininet(topo=SingleSwitchTopo(2), switch=partial(SluiceSwitch, fail_mode="standalone"),
                  controller=None, waitConnected=True)
    net.start()
    try:
        res = {"connected": net.switches[0].connected(), "loss": net.pingAll(timeout=2),
               "flows": net.switches[0].dpctl("dump-flows", "--no-stats")}
    finally:
        net.stop()
    print("RESULT " + json.dumps(res))
""")


def test_mininet_standalone_without_controller() -> None:
    """Steps: in a new network namespace, Mininet's SingleSwitchTopo(2) with SluiceSwitch in
    fail mode standalone and no controller at all (waitConnected=True); pingAll.
    Verify: the switch counts as connected (as OVSSwitch in standalone); no ping lost (a
    learning switch: the table-miss flow goes to NORMAL)."""
    res = _run_in_netns(STANDALONE, "mns", 180)
    assert res["connected"] is True
    assert res["loss"] == 0.0, res
    assert "priority=0 actions=NORMAL" in res["flows"], res["flows"]
