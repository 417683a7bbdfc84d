"""sluice.testing: the Sluice fixture's command line, paths and helpers; one short run of
the real switch (net_null ports, when the binary is built and we are root)."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from sluice import ofp, testing
from sluice.testing import Sluice, SluiceConfig


def flag_value(args: list[str], flag: str) -> str | None:
    return args[args.index(flag) + 1] if flag in args else None


def test_eal_args() -> None:
    assert testing.eal_args("p1") == ["--no-huge", "-m", "512", "--no-pci", "--file-prefix=p1",
                                      "-l", "0,1", "--log-level=lib.eal:error"]
    assert "--file-prefix" not in " ".join(testing.eal_args(None, "0", 256))
    assert testing.eal_args(None, "0", 256)[:3] == ["--no-huge", "-m", "256"]


def test_sluice_args_default() -> None:
    cfg = SluiceConfig(ports=["net_null0", "net_null1"], controllers=["ptcp:0", "punix:/tmp/x"],
                       flows=["in_port=1,actions=output:2"], dpid=0xAB, fail_mode="secure",
                       probe_interval=0.5, packet_in_rate=0, duration=2.0, extra=["-v"])
    args = testing.sluice_args(cfg, "pfx", "/w/s.json", "/w/startup.flows")
    assert args == ["-p", "net_null0", "-p", "net_null1", "-f", "/w/startup.flows",
                    "-C", "ptcp:0", "-C", "punix:/tmp/x", "--dpid", "ab",
                    "--fail-mode", "secure", "--probe-interval", "0.5", "--packet-in-rate", "0",
                    "-d", "2.0", "--no-local", "-s", "0", "-q", "-j", "/w/s.json", "-v",
                    "--", *testing.eal_args("pfx")]
    assert "--name" not in args and "--mgmt" not in args
    # A LOCAL port only when asked for (its TAP would be named after the prefix).
    assert "--no-local" not in testing.sluice_args(
        SluiceConfig(ports=["net_null0"], local=True), "pfx", "/w/s.json", "/w/f")


def test_sluice_args_name_and_mgmt() -> None:
    cfg = SluiceConfig(ports=["net_null0"], name="sw1", mgmt="none", flows_file="/f.flows",
                       lcores="0", mem_mb=256)
    args = testing.sluice_args(cfg, "ignored", "/j")
    assert args[:4] == ["--name", "sw1", "--mgmt", "none"]
    assert flag_value(args, "-f") == "/f.flows"
    eal = args[args.index("--") + 1:]
    assert eal == testing.eal_args(None, "0", 256)  # the switch derives --file-prefix=sw1
    with pytest.raises(ValueError):
        testing.sluice_args(SluiceConfig(ports=[], flows=["x"]), "p", "/j")


def test_client_target() -> None:
    assert testing._client_target("punix:/tmp/a.sock") == "unix:/tmp/a.sock"
    assert testing._client_target("ptcp:6653") == "tcp:127.0.0.1:6653"
    assert testing._client_target("ptcp:6653:10.0.0.1") == "tcp:10.0.0.1:6653"
    assert testing._client_target("ptcp:6653:0.0.0.0") == "tcp:127.0.0.1:6653"
    assert testing._client_target("pssl:6653") == "ssl:127.0.0.1:6653"
    assert testing._client_target("pssl:6653:10.0.0.1") == "ssl:10.0.0.1:6653"


def test_unique_names_fit_an_interface_name() -> None:
    names = {testing.unique("sag") for _ in range(100)}
    assert len(names) == 100 and max(len(n) for n in names) <= 14  # + "a"/"b" <= 15


def test_binaries_and_repo_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SLUICE_BIN", "/opt/x/sluice")
    assert testing.sluice_binary() == Path("/opt/x/sluice")
    assert testing.sluicectl_binary() == Path("/opt/x/sluicectl")
    monkeypatch.setenv("SLUICECTL_BIN", "/usr/local/bin/sluicectl")
    assert testing.sluicectl_binary(Path("/b/sluice")) == Path("/usr/local/bin/sluicectl")
    monkeypatch.setenv("SLUICE_ROOT", str(tmp_path))
    assert testing.repo_root() == tmp_path
    monkeypatch.delenv("SLUICE_ROOT")
    assert (testing.repo_root() / "python" / "pyproject.toml").is_file()


@pytest.fixture
def dummy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Sluice]:
    """A "Sluice" whose binary is /bin/true (exits at once): paths and helpers only."""
    ctl = tmp_path / "sluicectl"
    ctl.write_text('#!/bin/sh\necho "$@"\nexit 3\n')
    ctl.chmod(ctl.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("SLUICECTL_BIN", str(ctl))
    sw = Sluice(SluiceConfig(ports=["net_null0"], name=testing.unique("tst")),
                binary=Path("/bin/true"))
    yield sw
    sw.stop()


def test_named_instance_paths(dummy: Sluice) -> None:
    name = dummy.cfg.name
    assert name is not None and dummy.prefix == name
    assert dummy.args[:2] == ["--name", name]
    assert dummy.telemetry_path.parts[-2:] == (name, "dpdk_telemetry.v2")
    assert dummy.mgmt_path == testing.mgmt_dir() / f"{name}.mgmt"
    assert dummy.openflow_target == f"unix:{dummy.mgmt_path}"
    # A binary without a management socket: the -C listener is the target.
    dummy.listen_targets = ["tcp:127.0.0.1:6653"]
    assert dummy.openflow_target == "tcp:127.0.0.1:6653"


def test_sluicectl(dummy: Sluice) -> None:
    r = dummy.sluicectl("stats", "--json")
    assert isinstance(r, subprocess.CompletedProcess) and r.returncode == 3
    assert r.stdout.split() == ["--telemetry", str(dummy.telemetry_path),
                                "--target", f"unix:{dummy.mgmt_path}", "stats", "--json"]
    with pytest.raises(RuntimeError, match="failed"):
        dummy.sluicectl("stats", check=True)


def test_unnamed_instance_without_mgmt(monkeypatch: pytest.MonkeyPatch) -> None:
    sw = Sluice(SluiceConfig(ports=[], mgmt="none"), binary=Path("/bin/true"))
    try:
        assert sw.cfg.name is None and f"--file-prefix={sw.prefix}" in sw.args
        assert sw.mgmt_path is None and sw.openflow_target is None
        sw.listen_targets = ["tcp:127.0.0.1:6653"]
        assert sw.openflow_target == "tcp:127.0.0.1:6653"
        assert "--target" in sw.sluicectl_cmd("dump-flows")
    finally:
        sw.stop()


def test_parse_dump_flows() -> None:
    text = ("OFPST_FLOW reply (OF1.3) (xid=0x2):\n"
            " cookie=0x11, duration=1.5s, table=0, n_packets=3, priority=5,ip,nw_dst=10.0.0.0/8"
            " actions=output:2\n")
    (f,) = testing.parse_dump_flows(text)
    assert f.cookie == 0x11 and f.int("n_packets") == 3 and "ip" in f.words
    assert f.fields["duration"] == "1.5" and f.actions == "output:2"


def _runnable_switch() -> Path | None:
    b = testing.sluice_binary()
    if os.geteuid() != 0 or not os.access(b, os.X_OK):
        return None
    r = subprocess.run([str(b), "--help"], capture_output=True, text=True, timeout=20)
    return b if "--name" in r.stdout + r.stderr else None


@pytest.mark.skipif(_runnable_switch() is None,
                    reason="needs root and a built sluice with --name (build/app/sluice)")
def test_real_switch_telemetry_and_table_declare() -> None:
    cfg = SluiceConfig(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                       flows=["table=2,kind=lpm,fields=nw_dst,name=fib",
                              "in_port=1,actions=output:2"],
                       name=testing.unique("tpk"), lcores="0,1", mem_mb=256)
    sw = Sluice(cfg)
    try:
        assert sw.wait_ready() == cfg.name
        t = sw.telemetry
        assert t.info()["name"] == cfg.name and t.pid == sw.pid
        assert set(t.ports()) == {1, 2}
        assert t.tables()[2]["name"] == "fib"
        assert sw.openflow_target is not None
        with ofp.Client.connect(sw.openflow_target) as c:
            c.send(ofp.table_declare(3, "exact", ["dl_dst"], 100, "macs", xid=5))
            c.barrier()
            c.send(ofp.table_declare(4, "lpm", ["nw_dst", "tcp_dst"], xid=6))
            (err,) = c.errors_since(1.0)
            assert err.name == "OFPET_TABLE_MOD_FAILED/OFPTMFC_BAD_CONFIG"
            assert err.declared_table == 4
        detail = t.table(3)
        assert detail["kind"] == "exact" and detail["max_entries"] == 100
    finally:
        assert sw.stop() == 0, sw.output
    assert not sw.telemetry_path.parent.exists()
    assert sw.mgmt_path is not None and not sw.mgmt_path.exists()
