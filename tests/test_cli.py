"""Command line: exit codes and error messages."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sluice.testing import DPDK_RUN_DIR, RunResult, eal_args, run_sluice_raw, unique_prefix


def test_help_and_version(sluice_bin: Path) -> None:
    """--help and --version print and exit 0.

    Steps:
        1. Run sluice --help, then sluice --version (and -h, -V).
    Verify:
        Exit 0; help shows the usage line and the exit-code text; version
        names sluice and DPDK.
    """
    for opt in ("--help", "-h"):
        rc, out = run_sluice_raw(sluice_bin, [opt])
        assert rc == 0, out
        assert out.startswith("Usage: sluice") and "Exit codes" in out
        for option in ("--name", "--mgmt", "--log-level", "--dumpcap", "--controller",
                       "sluicectl", "dpdk-telemetry.py"):
            assert option in out, option
    for opt in ("--version", "-V"):
        rc, out = run_sluice_raw(sluice_bin, [opt])
        assert rc == 0, out
        assert out.startswith("sluice ") and "DPDK" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--bogus"], "unrecognized option"),
        (["-p", "net_null0", "-d", "abc"], "--duration: invalid value 'abc'"),
        (["-p", "net_null0", "-b", "0"], "--burst: invalid value '0'"),
        (["-p", "net_null0", "-b", "65"], "--burst: invalid value '65'"),
        (["-p", "net_null0", "--agent-awake-us", "100001"],
         "--agent-awake-us: invalid value '100001' (expected 0..100000)"),
        (["-p", "net_null0", "-s", "-1"], "--stats-interval: invalid value"),
        (["-p", "net_null0", "stray"], "unexpected argument 'stray'"),
        (["-d", "1"], "no ports"),
        ([], "no ports"),
        (["-p", "net_null0", "--name", "a/b"], "--name: invalid value 'a/b'"),
        (["-p", "net_null0", "--name", ""], "--name: invalid value ''"),
        (["-p", "net_null0", "--log-level", "sluice.app"], "--log-level: invalid value "
         "'sluice.app'"),
        (["-p", "net_null0", "--log-level", "app:loud"], "--log-level: invalid value 'app:loud'"),
        (["-p", "net_null0", "--name", "x1", "--", "--file-prefix=x2"],
         "--name 'x1' and EAL --file-prefix 'x2' differ"),
    ],
)
def test_usage_errors_exit_2(sluice_bin: Path, args: list[str], message: str) -> None:
    """Bad options and a missing --port exit 2 with a message.

    Steps:
        1. Run sluice with the bad command line.
    Verify:
        Exit code 2; the output names the problem.
    """
    rc, out = run_sluice_raw(sluice_bin, args)
    assert rc == 2, out
    assert message in out


BAD_FLOW_FILES = [
    # (file text, line, message fragment, token fragment)
    ("table=0,priority=1 actions=output:2\ntable=0,nw_bogus=1 actions=output:2\n", 2,
     "unknown field 'nw_bogus'", "nw_bogus=1"),
    ("ip,nw_dst=10.0.0.300 actions=output:2\n", 1, "bad IPv4 address", "nw_dst=10.0.0.300"),
    ("# comment\n\ntable=2,ip actions=goto_table:1\n", 3, "goto_table must go forward",
     "goto_table:1"),
    ("table=1,kind=exact,fields=dl_dst\n"
     "table=1,dl_dst=02:00:00:00:00:01/ff:ff:ff:00:00:00 actions=output:2\n", 2,
     "needs every one of its fields matched exactly", "dl_dst=02:00:00:00:00:01/ff:ff:ff"),
    ("table=1,kind=lpm,fields=nw_dst+nw_src\n", 1, "matches exactly one field", "kind=lpm"),
    ("tp_dst=80 actions=output:2\n", 1, "tp_dst", "tp_dst=80"),
    ("ip actions=frobnicate\n", 1, "frobnicate", "frobnicate"),
    ("table=0,kind=bogus\n", 1, "bogus", "kind=bogus"),
    ("ip,\\\n  nw_dst=1.2.3.4/33 actions=output:2\n", 1, "nw_dst", "nw_dst=1.2.3.4/33"),
]


@pytest.mark.parametrize("text, line, message, token", BAD_FLOW_FILES)
def test_bad_flow_file_check(
    sluice_bin: Path, tmp_path: Path, text: str, line: int, message: str, token: str
) -> None:
    """--check on a bad flow file exits 2 naming file:line and the token.

    Steps:
        1. Write the flow file; run sluice --check -f FILE.
    Verify:
        Exit 2; the message starts with "FILE:LINE:", says what is wrong and
        quotes the offending token after "near".
    """
    ff = tmp_path / "bad.flows"
    ff.write_text(text)
    rc, out = run_sluice_raw(sluice_bin, ["--check", "-f", str(ff)])
    assert rc == 2, out
    assert f"{ff}:{line}:" in out, out
    assert message in out, out
    assert "near '" in out and token in out.split("near '", 1)[1], out


def test_bad_flow_file_at_startup(run_sluice: Callable[..., RunResult]) -> None:
    """A bad flow file on a real run exits 2 before forwarding anything.

    Steps:
        1. Run with a net_null port and a flow file whose 2nd line has an
           unknown field.
    Verify:
        Exit 2; the message names the file and line 2; no JSON is written.
    """
    res = run_sluice(
        ["net_null0,no-rx=1"], flows=["in_port=1 actions=output:1", "nw_bogus=1 actions=drop"]
    )
    assert res.returncode == 2, res.output
    assert ".flows:2: unknown field 'nw_bogus'" in res.output
    assert res.json is None


def test_bad_flow_option(run_sluice: Callable[..., RunResult]) -> None:
    """A bad -F flow exits 2 and quotes the flow and the token.

    Steps:
        1. Run with -F 'ip,nw_dst=1.2.3 actions=output:1'.
    Verify:
        Exit 2; the message quotes the flow and "near 'nw_dst=1.2.3'".
    """
    res = run_sluice(["net_null0,no-rx=1"], extra=["-F", "ip,nw_dst=1.2.3 actions=output:1"])
    assert res.returncode == 2, res.output
    assert "--flow 'ip,nw_dst=1.2.3 actions=output:1'" in res.output
    assert "near 'nw_dst=1.2.3'" in res.output


def test_check_valid_file_without_dpdk(sluice_bin: Path, tmp_path: Path) -> None:
    """--check validates a good file without starting DPDK.

    Steps:
        1. Write a valid file (3 table declarations, 4 flows); run
           sluice --check -f FILE -- --file-prefix=UNIQUE (no --port).
    Verify:
        Exit 0 within a second; it reports "4 flows OK"; no EAL output and no
        DPDK runtime directory for the prefix was created.
    """
    ff = tmp_path / "good.flows"
    ff.write_text(
        "table=0,kind=mask\n"
        "table=1,kind=lpm,fields=nw_dst\n"
        "table=2,kind=exact,fields=dl_dst\n"
        "table=0,ip actions=goto_table:1\n"
        "table=1,ip,nw_dst=10.0.0.0/8 actions=goto_table:2\n"
        "table=2,dl_dst=02:00:00:00:00:02 actions=output:2\n"
        "table=2,dl_dst=02:00:00:00:00:03 actions=dec_ttl,\\\n   output:3  # continued\n"
    )
    prefix = unique_prefix("chk")
    t0 = time.monotonic()
    rc, out = run_sluice_raw(
        sluice_bin, ["--check", "-f", str(ff), "--", f"--file-prefix={prefix}"]
    )
    assert rc == 0, out
    assert time.monotonic() - t0 < 1.0
    assert "4 flows OK" in out
    assert "EAL" not in out and "TELEMETRY" not in out
    assert not (DPDK_RUN_DIR / prefix).exists()


def test_missing_flow_file(sluice_bin: Path, tmp_path: Path) -> None:
    """A flow file that does not exist is a configuration error.

    Steps:
        1. sluice --check -f /nonexistent.
    Verify:
        Exit 2 and the message names the file.
    """
    missing = tmp_path / "missing.flows"
    rc, out = run_sluice_raw(sluice_bin, ["--check", "-f", str(missing)])
    assert rc == 2, out
    assert str(missing) in out and "No such file" in out


def test_nonexistent_pcap_exit_2(sluice_bin: Path, tmp_path: Path) -> None:
    """A port that cannot be probed is a configuration error naming the port and its cause.

    Steps:
        1. Run with -p net_pcap0,rx_pcap=MISSING.pcap.
    Verify:
        Exit 2 (as every bad --port, issue #21); the message quotes the port's devargs
        and names the missing file.
    """
    dev = f"net_pcap0,rx_pcap={tmp_path / 'missing.pcap'}"
    prefix = unique_prefix("np")
    rc, out = run_sluice_raw(
        sluice_bin, ["-p", dev, "-F", "actions=drop", "-d", "1", "--", *eal_args(prefix)],
        prefix=prefix,
    )
    assert rc == 2, out
    assert f"port '{dev}'" in out
    assert f"rx_pcap file '{tmp_path / 'missing.pcap'}': No such file or directory" in out


def test_version_string_names_dpdk_once(sluice_bin: Path) -> None:
    """--version prints "sluice X (DPDK Y)" without repeating "DPDK".

    Steps:
        1. Run sluice --version.
    Verify:
        The word DPDK appears once.
    """
    rc, out = run_sluice_raw(sluice_bin, ["--version"])
    assert rc == 0
    assert out.count("DPDK") == 1, out


def test_log_level_type_checked_after_eal(sluice_bin: Path) -> None:
    """A well-formed --log-level naming no log type exits 2 naming it."""
    prefix = unique_prefix()
    rc, out = run_sluice_raw(sluice_bin, ["-p", "net_null0", "-d", "1", "--log-level",
                                          "sluice.nosuch:debug", "--", *eal_args(prefix)],
                             prefix=prefix)
    assert rc == 2, out
    assert "sluice.nosuch" in out and "no such log type" in out


def test_second_switch_with_the_same_name_refused(
        sluice_bin: Path, start_sluice: Callable[..., Any]) -> None:
    """A name is one switch: a second start with it exits 2 and names the socket."""
    bg = start_sluice(["net_null0,no-rx=1"], ["priority=0 actions=drop"], 20)
    mgmt = Path(f"/run/sluice/{bg.prefix}.mgmt")
    deadline = time.monotonic() + 20
    while not mgmt.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert mgmt.exists()
    rc, out = run_sluice_raw(sluice_bin, ["-p", "net_null1", "-d", "1", "--",
                                          *eal_args(bg.prefix)])
    assert rc == 2, out
    assert f"another Sluice named '{bg.prefix}' is running" in out and str(mgmt) in out
    # A clean stop (SIGTERM) removes the socket; the fixture's SIGKILL would leave it.
    bg.proc.send_signal(signal.SIGTERM)
    assert bg.proc.wait(timeout=20) == 0
    assert not mgmt.exists()


def test_no_dpdk_noise_at_the_default_level(sluice_bin: Path) -> None:
    """A default start (no EAL arguments, LOCAL port on) printed five DPDK lines: the
    telemetry library's "No legacy callbacks" warning and four TAP-driver errors about a
    multiq qdisc the LOCAL port does not use.

    Steps: sluice --name N -p net_null0 -p net_null1 -d 1, nothing after "--"; N fits an
    interface name, so the switch makes its LOCAL port (a name of 16 characters or more
    gets none: with a 5-digit PID the test used to make no TAP at all, and with a 4-digit
    one it failed on the banner's own "net_tap_local" line).
    Verify: exit 0; the banner lists LOCAL; no other line from DPDK (EAL, TELEMETRY, the
    TAP driver)."""
    name = unique_prefix("nz")[-15:]
    rc, out = run_sluice_raw(sluice_bin, ["--name", name, "-p", "net_null0,no-rx=1",
                                          "-p", "net_null1,no-rx=1", "-d", "1"], prefix=name)
    assert rc == 0, out
    assert f"port LOCAL: {name} (net_tap_local,iface={name})" in out, out
    noise = [ln for ln in out.splitlines() if not ln.startswith("  port ")
             and any(k in ln for k in ("EAL:", "TELEMETRY:", "tap_", "eth_dev_tap", "qdisc"))]
    assert noise == [], out
    assert f"sluice: name {name}" in out, out
