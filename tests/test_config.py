"""The configuration file, SIGHUP reload, sd_notify readiness and the systemd unit's
save/restore path (dist/sluice@.service, dist/sluice-service).

systemd itself does not run here: the unit's commands (sluice-service start, started,
save) run directly, with a fake $NOTIFY_SOCKET where the unit's Type=notify would
have systemd's, and ``systemd-analyze verify`` checks the unit file.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from sluice import testing
from sluice.testing import Proc

REPO = Path(__file__).resolve().parent.parent
SLUICECTL = REPO / "build" / "app" / "sluicectl"
SERVICE = REPO / "build" / "dist" / "sluice-service"
UNIT = REPO / "build" / "dist" / "sluice@.service"
EAL = "--no-huge -m 512 --no-pci -l 0,1 --log-level=lib.eal:error"


class Notify:
    """A fake $NOTIFY_SOCKET: the unix datagram socket systemd would bind."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(30)

    def next(self) -> dict[str, str]:
        """The next datagram, as its KEY=VALUE lines."""
        data = self.sock.recv(4096).decode()
        return dict(line.split("=", 1) for line in data.splitlines())

    def close(self) -> None:
        self.sock.close()
        self.path.unlink(missing_ok=True)


def ctl(mgmt: Path, *args: str) -> str:
    r = subprocess.run([str(SLUICECTL), "-t", f"unix:{mgmt}", *args], capture_output=True,
                       text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout


def show_ports(mgmt: Path) -> list[tuple[int, str]]:
    return [(p["port_no"], p["name"])
            for p in json.loads(ctl(mgmt, "--json", "show"))["ports"]]


def info(name: str) -> dict:
    r = subprocess.run([str(SLUICECTL), "-n", name, "telemetry", "/sluice/info"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout)["/sluice/info"]


def hello_from(listener: socket.socket) -> socket.socket:
    """Accept the switch's connection on @listener, check its OpenFlow 1.3 HELLO, answer it."""
    conn, _ = listener.accept()
    conn.settimeout(30)
    hdr = conn.recv(8, socket.MSG_WAITALL)
    assert len(hdr) == 8 and hdr[0] == 4 and hdr[1] == 0, hdr
    conn.recv(int.from_bytes(hdr[2:4], "big") - 8, socket.MSG_WAITALL)
    conn.sendall(bytes([4, 0, 0, 8, 0, 0, 0, 1]))
    return conn


def read_to_eof(conn: socket.socket) -> None:
    """Read until the peer closes (fails on the 30 s timeout, never on timing)."""
    while conn.recv(65536):
        pass


def tcp_listener() -> tuple[socket.socket, int]:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(4)
    s.settimeout(30)
    return s, s.getsockname()[1]


def write_conf(path: Path, body: str) -> Path:
    path.write_text(body)
    return path


@pytest.mark.parametrize("body, line, message", [
    ("[switch]\nworkers = 0\n", 2, "--workers: invalid value '0'"),
    ("# a comment\n[switch]\nno-such-key = 1\n", 3, "unknown key 'no-such-key' in [switch]"),
    ("[switch]\ndpid = 1\n\ndpid = 2\n", 4, "'dpid' is set twice (first at line 2)"),
    ("[switch]\nthis line has no equals sign\n", 2, "syntax error"),
    ("[switch]\nquiet = maybe\n", 2, "quiet: invalid value 'maybe'"),
    ("[switch]\nhelp = true\n", 2, "'help' is a command-line option"),
    ("\n[port.p1]\nofport = 1\n", 2, "[port.p1]: no devargs"),
    ("[port.p1]\ndevargs = net_null0\nofport = 99999\n", 1, "bad ofport"),
    ("[port.p1]\ndevargs = net_null0\n[port.p1]\ndevargs = net_null1\n", 3,
     "[port.p1] is given twice (first at line 1)"),
    ("[port.1]\ndevargs = net_null0\n", 1, "invalid port name '1'"),
    ("[table.2]\nkind = nosuchkind\n", 1, "unknown table kind 'nosuchkind'"),
    ("[table.x]\nkind = lpm\n", 1, "expected [table.N]"),
    ("[bridge]\na = b\n", 1, "unknown section [bridge]"),
    ("top = 1\n", 1, "outside any section"),
])
def test_parse_errors_name_file_and_line(sluice_bin: Path, tmp_path: Path, body: str,
                                          line: int, message: str) -> None:
    """A configuration error names FILE:LINE and exits 2 before anything starts.

    Steps: write a file with one mistake; start sluice --config FILE.
    Verify: exit status 2; the message is "sluice: FILE:LINE: ..." with the right line.
    """
    conf = write_conf(tmp_path / "bad.conf", body)
    r = subprocess.run([str(sluice_bin), "--config", str(conf)], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"sluice: {conf}:{line}: " in r.stderr and message in r.stderr, r.stderr


def test_missing_file_and_missing_interface_exit_2(sluice_bin: Path, tmp_path: Path) -> None:
    """A configuration that cannot work is exit status 2 (which the unit does not restart).

    Steps: --config a file that does not exist; then a file whose port names an interface
    that does not exist.
    Verify: both exit 2, the first naming the file, the second the interface.
    """
    r = subprocess.run([str(sluice_bin), "--config", str(tmp_path / "none.conf")],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "none.conf: No such file" in r.stderr, r.stderr
    name = testing.unique("cf")
    conf = write_conf(tmp_path / "x.conf", f"""
[switch]
name = {name}
mgmt = none
no-local = true
[port.eth9]
devargs = net_af_packet0,iface=nosuchif{os.getpid() % 1000}
[eal]
args = {EAL}
""")
    rc, out = run_raw(sluice_bin, ["--config", str(conf)])
    assert rc == 2, out
    assert "nosuchif" in out, out


def run_raw(binary: Path, args: list[str]) -> tuple[int, str]:
    r = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def test_command_line_overrides_file(sluice_bin: Path, tmp_path: Path) -> None:
    """Options on the command line win over the file; a repeatable one given there
    replaces the file's whole list; EAL options come from [eal] unless '--' gives some.

    Steps: a file with dpid, fail-mode, two ports, a table declaration and [eal] args;
    start with --dpid and one -p on the command line, no EAL options.
    Verify: the command line's dpid and only its port; the file's fail mode and table
    declaration; the file's EAL args (the switch runs without hugepages).
    """
    name = testing.unique("cf")
    mgmt = tmp_path / "sw.mgmt"
    conf = write_conf(tmp_path / "sw.conf", f"""
# The file.
[switch]
mgmt = {mgmt}
dpid = a1
fail-mode = secure
quiet = yes
no-local = true

[port.f1]
devargs = net_null0,no-rx=1
[port.f2]
devargs = net_null1,no-rx=1

[table.2]
kind = lpm
fields = nw_dst
name = fib

[eal]
args = {EAL}
""")
    sw = Proc([str(sluice_bin), "--config", str(conf), "--name", name, "--dpid", "b2",
               "-p", "net_null7,no-rx=1,name=cli"], name="sluice")
    try:
        sw.wait_output(r"^sluice: name ", 30)
        testing.wait_until(mgmt.exists, 10, "the management socket")
        assert show_ports(mgmt) == [(1, "cli")]
        assert "datapath_id: 00000000000000b2" in ctl(mgmt, "show")
        i = info(name)
        assert i["fail_mode"] == "secure" and i["datapath_id"] == "00000000000000b2", i
        table = ctl(mgmt, "-n", name, "telemetry", "/sluice/table,2")
        assert "lpm" in table and "fib" in table, table
    finally:
        assert sw.stop() == 0, sw.output


def test_sighup_reload(sluice_bin: Path, tmp_path: Path) -> None:
    """SIGHUP applies the file's port, controller and fail-mode changes without a restart,
    reports other changes as needing a restart, and leaves the switch alone when the file
    has an error; systemd hears READY=1 once up and RELOADING=1, READY=1 around a reload.

    Steps: start from a file (ports a and b, a controller the test listens for, fail
    mode secure) under a fake NOTIFY_SOCKET; edit the file: b removed, c added, the
    controller moved to a second listener, fail mode standalone, burst changed; SIGHUP.
    Then break the file and SIGHUP again; then stop.
    Verify: READY=1 arrives and the switch answers; the first controller sees the
    connection and its HELLO; after the reload show lists a and c, the second
    controller is connected and the first sees EOF, /sluice/info says standalone,
    the burst change is logged at warning as needing a restart; RELOADING=1 then
    READY=1 came; the broken file is logged with file:line and nothing changes; the
    switch stops with STOPPING=1 and exit 0.
    """
    name = testing.unique("cf")
    mgmt = tmp_path / "sw.mgmt"
    l1, p1 = tcp_listener()
    l2, p2 = tcp_listener()
    notify = Notify(tmp_path / "notify.sock")
    conf = tmp_path / "sw.conf"

    def body(ports: dict[str, str], controller: int, fail_mode: str, extra: str = "") -> str:
        text = (f"[switch]\nname = {name}\nmgmt = {mgmt}\ncontroller = tcp:127.0.0.1:{controller}\n"
                f"fail-mode = {fail_mode}\nquiet = true\nno-local = true\n{extra}\n")
        for pname, dev in ports.items():
            text += f"[port.{pname}]\ndevargs = {dev}\n"
        return text + f"[eal]\nargs = {EAL}\n"

    write_conf(conf, body({"a": "net_null0,no-rx=1", "b": "net_null1,no-rx=1"}, p1, "secure"))
    env = dict(os.environ, NOTIFY_SOCKET=str(notify.path))
    sw = Proc([str(sluice_bin), "--config", str(conf)], env=env, name="sluice")
    c1 = c2 = None
    try:
        ready = notify.next()
        assert ready.get("READY") == "1", ready
        assert show_ports(mgmt) == [(1, "a"), (2, "b")]
        c1 = hello_from(l1)
        testing.wait_until(lambda: info(name)["controllers_connected"] == 1, 20,
                           "the controller connected")
        assert info(name)["fail_mode"] == "secure"

        write_conf(conf, body({"a": "net_null0,no-rx=1", "c": "net_null2,no-rx=1"}, p2,
                              "standalone", "burst = 16"))
        sw.proc.send_signal(signal.SIGHUP)
        assert notify.next().get("RELOADING") == "1"
        assert notify.next().get("READY") == "1"
        sw.wait_output(r"reload: done: 1 ports added, 1 deleted", 10)
        assert show_ports(mgmt) == [(1, "a"), (2, "c")]
        c2 = hello_from(l2)
        read_to_eof(c1)  # the old controller is dropped (after any port_status)
        testing.wait_until(lambda: info(name)["controllers_connected"] == 1, 20,
                           "the new controller connected")
        assert info(name)["fail_mode"] == "standalone"
        out = sw.output
        assert "warning sluice.app: reload: burst changed: needs a restart" in out, out
        assert f"reload: controller tcp:127.0.0.1:{p1} removed" in out, out
        assert f"reload: controller tcp:127.0.0.1:{p2} added" in out, out
        assert "port 2 (b) deleted" in out and "port 2 (c) added" in out, out

        conf.write_text(conf.read_text() + "[port.d]\nofport = 3\n")
        sw.proc.send_signal(signal.SIGHUP)
        assert notify.next().get("RELOADING") == "1"
        assert notify.next().get("READY") == "1"
        sw.wait_output(r"has errors; nothing changed", 10)
        assert f"err sluice.app: {conf}:" in sw.output and "[port.d]: no devargs" in sw.output
        assert show_ports(mgmt) == [(1, "a"), (2, "c")]
        assert sw.alive()
    finally:
        rc = sw.stop()
        for s in (c1, c2, l1, l2):
            if s is not None:
                s.close()
    assert rc == 0, sw.output
    assert notify.next().get("STOPPING") == "1"
    notify.close()


def test_sighup_without_a_file_changes_nothing(sluice_bin: Path, tmp_path: Path) -> None:
    """Without a configuration file SIGHUP reads the command line again: nothing changes.

    Steps: start with ports on the command line; SIGHUP.
    Verify: the notice says there is no file; the switch keeps its ports and runs on.
    """
    mgmt = tmp_path / "sw.mgmt"
    sw = Proc([str(sluice_bin), "--no-config", "--mgmt", str(mgmt), "-q", "--no-local",
               "-p", "net_null0,no-rx=1,name=x", "--", *EAL.split(),
               f"--file-prefix={testing.unique('cf')}"], name="sluice")
    try:
        sw.wait_output(r"^sluice: name ", 30)
        testing.wait_until(mgmt.exists, 10, "the management socket")
        sw.proc.send_signal(signal.SIGHUP)
        sw.wait_output(r"reload: no configuration file", 10)
        sw.wait_output(r"reload: done: 0 ports added, 0 deleted", 10)
        assert show_ports(mgmt) == [(1, "x")]
    finally:
        assert sw.stop() == 0, sw.output


SAVE_FLOWS = """\
table=1,kind=lpm,fields=nw_dst,name=fib
meter=1,pktps,bands=type=drop,rate=1000
group_id=4,type=select,bucket=actions=output:1,bucket=actions=output:2
table=0,priority=5,cookie=0x7,ip actions=meter:1,goto_table:1
table=0,priority=1,idle_timeout=600,in_port=2 actions=group:4
table=1,priority=10,ip,nw_dst=10.0.0.0/8 actions=output:2
"""


def service(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(SERVICE), *args], capture_output=True, text=True,
                          env=env, timeout=60, stdin=subprocess.DEVNULL)


def test_unit_save_restart_restore(sluice_bin: Path, tmp_path: Path) -> None:
    """The unit's stop/start path keeps the flows: ExecStop (sluice-service save) writes
    them while the switch runs, ExecStart (sluice-service start) restores them, and
    ExecStartPost (started) sets the file aside; a file that does not load is moved
    aside instead of keeping the switch down.

    Steps: start the instance through sluice-service start with a configuration in a
    temporary CONFDIR; add tables, a meter, a group and flows with sluicectl; save;
    stop; start again; started.  Then corrupt a saved file and start once more.
    Verify: the saved file has the flows; dump-flows, dump-groups and dump-meters after
    the restart equal those before; started renames the file; a corrupt file is
    reported, moved to NAME.flows.rejected, and the switch starts with its configuration.
    """
    if not SERVICE.exists():
        pytest.skip("no build/dist/sluice-service")
    name = testing.unique("cf")
    confdir, statedir = tmp_path / "etc", tmp_path / "state"
    confdir.mkdir()
    write_conf(confdir / f"{name}.conf", f"""
[switch]
quiet = true
no-local = true
[port.p1]
devargs = net_null0,no-rx=1
[port.p2]
devargs = net_null1,no-rx=1
[eal]
args = {EAL}
""")
    env = dict(os.environ, SLUICE=str(sluice_bin), SLUICECTL=str(SLUICECTL),
               SLUICE_CONFDIR=str(confdir), SLUICE_STATEDIR=str(statedir))
    flows = tmp_path / "add.flows"
    flows.write_text(SAVE_FLOWS)
    state = statedir / f"{name}.flows"
    mgmt = testing.mgmt_dir() / f"{name}.mgmt"

    def start() -> Proc:
        sw = Proc(["sh", str(SERVICE), "start", name], env=env, name="sluice")
        sw.wait_output(r"^sluice: name ", 30)
        testing.wait_until(mgmt.exists, 10, "the management socket")
        return sw

    def dumps() -> dict[str, object]:
        """Flows, groups, meters and table 1's declaration, without counters."""
        return {
            "flows": ctl(mgmt, "dump-flows", "--no-stats", "--sort"),
            "groups": [ln for ln in ctl(mgmt, "dump-groups").splitlines() if "group_id" in ln],
            "meters": [ln for ln in ctl(mgmt, "dump-meters").splitlines() if "meter=" in ln],
            "table1": [ln for ln in ctl(mgmt, "-n", name, "telemetry", "/sluice/table,1")
                       .splitlines() if '"spec"' in ln or '"kind"' in ln],
        }

    sw = start()
    try:
        ctl(mgmt, "add-flows", str(flows))
        before = dumps()
        assert len(str(before["flows"]).splitlines()) == 3, before
        assert before["groups"] and before["meters"] and before["table1"], before
        r = service("save", name, env=env)
        assert r.returncode == 0 and state.exists(), r.stdout + r.stderr
        assert "table=1,kind=lpm" in state.read_text() and "cookie=0x7" in state.read_text()
    finally:
        assert sw.stop() == 0, sw.output

    sw = start()
    try:
        assert dumps() == before
        r = service("started", name, env=env)
        assert r.returncode == 0 and not state.exists(), r.stdout + r.stderr
        assert (statedir / f"{name}.flows.restored").exists()
    finally:
        assert sw.stop() == 0, sw.output

    state.write_text("table=0,priority=1 actions=no_such_action\n")
    sw = start()
    try:
        assert "does not load" in sw.output and "rejected" in sw.output, sw.output
        assert (statedir / f"{name}.flows.rejected").exists() and not state.exists()
        assert ctl(mgmt, "dump-flows", "--no-stats").strip() == "", "configuration only"
    finally:
        assert sw.stop() == 0, sw.output

    # Saving when the switch is gone does not fail the stop.
    r = service("save", name, env=env)
    assert r.returncode == 0 and "not saved" in r.stderr, r.stdout + r.stderr


def test_unit_file(tmp_path: Path) -> None:
    """The unit asks for what the service needs and systemd accepts it.

    Steps: read build/dist/sluice@.service; run systemd-analyze verify on a copy whose
    helper path points at the built one (when systemd-analyze is installed).
    Verify: Type=notify, ExecReload, the save on stop, restart prevention on exit 2,
    Before=network-pre.target; systemd-analyze reports nothing.
    """
    if not UNIT.exists():
        pytest.skip("no build/dist/sluice@.service")
    text = UNIT.read_text()
    for line in ("Type=notify", "ExecReload=/bin/kill -HUP $MAINPID",
                 "RestartPreventExitStatus=2", "Before=network-pre.target",
                 "Wants=network-pre.target", "NoNewPrivileges=yes", "PrivateTmp=yes",
                 "ProtectHome=yes", "ProtectSystem=strict", "UMask=0007"):
        assert f"\n{line}\n" in text, line
    assert "sluice-service save %i" in text and "sluice-service start %i" in text
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("no systemd-analyze")
    helper = next(ln.split("=", 1)[1].split()[0] for ln in text.splitlines()
                  if ln.startswith("ExecStart="))
    unit = tmp_path / "sluice@t1.service"
    unit.write_text(text.replace(helper, str(SERVICE)))
    r = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert str(unit) not in r.stdout + r.stderr, r.stdout + r.stderr


def test_shipped_example_parses(sluice_bin: Path) -> None:
    """The example configuration installed with the unit is a valid file.

    Steps: sluice --config dist/sluice.conf.example --check (parses, starts nothing).
    Verify: exit 0.
    """
    r = subprocess.run([str(sluice_bin), "--config", str(REPO / "dist" / "sluice.conf.example"),
                        "--check"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
