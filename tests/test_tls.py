"""TLS controller channels: ``pssl:``/``ssl:`` targets with --private-key, --certificate, --ca-cert.

A CA and the switch's and controller's certificates are made at test time with the
``openssl`` command in a temporary directory, plus a second CA with a certificate of its
own (a client the switch must refuse).  Sluice runs with a ``net_null`` port: only the
OpenFlow channel matters here.  ``ovs-ofctl`` (openvswitch-common) and an os-ken app
(sluice.apps.run, os-ken's own TLS options) are the peers.  Every process is stopped by PID.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sluice import testing
from sluice.testing import (
    Sluice,
    SluiceConfig,
    eal_args,
    parse_dump_flows,
    run_sluice_raw,
    unique_prefix,
)

pytestmark = pytest.mark.openflow

#: OpenFlow 1.3 HELLO with a version bitmap of 1.3 only.
OF_HELLO = bytes.fromhex("04000010000000010001000800000010")
OFCTL_TIMEOUT = 20


class Pki:
    """PEM files in @d: CAs "ca" and "otherca"; "switch" and "ctl" signed by ca, "rogue"
    by otherca (each NAME-key.pem, NAME-cert.pem)."""

    def __init__(self, d: Path) -> None:
        self.dir = d
        gen = ["openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
               "-nodes", "-days", "2"]
        for ca in ("ca", "otherca"):
            testing.run([*gen, "-x509", "-keyout", self.key(ca), "-out", self.cert(ca),
                         "-subj", f"/CN={ca}"])
        for who, ca in (("switch", "ca"), ("ctl", "ca"), ("rogue", "otherca")):
            csr = str(d / f"{who}.csr")
            testing.run([*gen, "-keyout", self.key(who), "-out", csr, "-subj", f"/CN={who}"])
            testing.run(["openssl", "x509", "-req", "-in", csr, "-CA", self.cert(ca),
                         "-CAkey", self.key(ca), "-CAcreateserial", "-days", "2",
                         "-out", self.cert(who)])

    def key(self, who: str) -> str:
        return str(self.dir / f"{who}-key.pem")

    def cert(self, who: str) -> str:
        return str(self.dir / f"{who}-cert.pem")

    def switch_options(self) -> list[str]:
        """Sluice's TLS options: the switch's key and certificate, the CA."""
        return ["--private-key", self.key("switch"), "--certificate", self.cert("switch"),
                "--ca-cert", self.cert("ca")]


@pytest.fixture
def pki(sluice_bin: Path, tmp_path: Path) -> Pki:
    if not shutil.which("openssl"):
        pytest.skip("openssl command not installed")
    if not testing.openflow_supported(sluice_bin):
        pytest.skip("this sluice has no -C/--controller")
    return Pki(tmp_path)


def ofctl_ssl(pki: Pki, who: str, target: str, *args: str,
              check: bool = True) -> subprocess.CompletedProcess[str]:
    """``ovs-ofctl -O OpenFlow13 -p KEY -c CERT -C CA CMD TARGET ARGS`` as @who."""
    if not shutil.which("ovs-ofctl"):
        pytest.skip("ovs-ofctl not installed (openvswitch-common)")
    cmd = ["ovs-ofctl", "-O", "OpenFlow13", "--no-names", f"--timeout={OFCTL_TIMEOUT}",
           "-p", pki.key(who), "-c", pki.cert(who), "-C", pki.cert("ca"), args[0], target,
           *args[1:]]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=OFCTL_TIMEOUT + 10)
    if check:
        assert r.returncode == 0, f"{' '.join(cmd)}: {r.returncode}\n{r.stdout}{r.stderr}"
    return r


@contextlib.contextmanager
def tls_switch(sluice_bin: Path, pki: Pki, controllers: tuple[str, ...],
               extra: tuple[str, ...] = ()) -> Iterator[Sluice]:
    """Sluice with a null port, @controllers and the switch's TLS files; stopped by PID."""
    sw = Sluice(SluiceConfig(ports=["net_null0,no-rx=1"], controllers=controllers,
                             mgmt="none", extra=[*pki.switch_options(), "-v", *extra]),
                binary=sluice_bin)
    try:
        yield sw
    finally:
        sw.stop()


def test_ofctl_over_ssl(sluice_bin: Path, pki: Pki) -> None:
    """Steps: Sluice with -C pssl:0 and the switch's key, certificate and CA; ovs-ofctl
    -p/-c/-C with the controller's certificate: add-flow, then dump-flows over
    ssl:127.0.0.1:PORT; sluicectl dump-flows over the same target with the same options.
    Verify: both tools succeed and list the flow; Sluice logged the TLS session with the
    client's certificate subject (CN=ctl)."""
    with tls_switch(sluice_bin, pki, ("pssl:0",)) as sw:
        (target,) = sw.wait_listening()
        assert target.startswith("ssl:127.0.0.1:"), target
        ofctl_ssl(pki, "ctl", target, "add-flow", "priority=7,in_port=1,actions=drop")
        flows = parse_dump_flows(ofctl_ssl(pki, "ctl", target, "dump-flows").stdout)
        assert [(f.int("priority"), f.fields.get("in_port"), f.actions) for f in flows] == \
            [(7, "1", "drop")], [f.line for f in flows]

        r = subprocess.run([str(testing.sluicectl_binary(sluice_bin)), "--target", target,
                            "-p", pki.key("ctl"), "-c", pki.cert("ctl"), "-C", pki.cert("ca"),
                            "dump-flows"], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "priority=7,in_port=1 actions=drop" in r.stdout, r.stdout
        assert "session with peer certificate 'CN=ctl'" in sw.output, sw.output
        assert sw.alive()


def test_osken_app_over_ssl(sluice_bin: Path, pki: Pki) -> None:
    """Steps: Sluice with -C ssl:127.0.0.1:PORT (nobody listens yet: it retries with
    backoff) and a punix: listener, --fail-mode secure; then the os-ken learning switch
    with --ctl-privkey/--ctl-cert/--ca-certs on PORT; dump-flows on the punix: socket until
    the app's table-miss entry appears.
    Verify: the app installed priority=0 actions=CONTROLLER:65535 (it sent it after the
    switch's features reply) and logged the switch's datapath id; Sluice logged the TLS
    session with the controller's certificate (CN=ctl) and counts it as a controller."""
    pytest.importorskip("os_ken")
    port = testing.free_tcp_port()
    sock = testing.socket_path("sltls")
    with contextlib.ExitStack() as stack:
        sw = stack.enter_context(tls_switch(
            sluice_bin, pki, (f"ssl:127.0.0.1:{port}", f"punix:{sock}"),
            extra=("--fail-mode", "secure", "--dpid", "5c1e")))
        sw.wait_listening()
        env = dict(os.environ, OSKEN_HUB_TYPE="eventlet")
        ctl = testing.Proc([sys.executable, "-m", "sluice.apps.run", "--ofp-listen-host",
                            "127.0.0.1", f"--ofp-ssl-listen-port={port}",
                            f"--ctl-privkey={pki.key('ctl')}", f"--ctl-cert={pki.cert('ctl')}",
                            f"--ca-certs={pki.cert('ca')}", "learning_switch"],
                           env=env, name="os-ken")
        stack.callback(ctl.stop)
        ctl.wait_output(rf"listening on ssl:127\.0\.0\.1:{port}", 60)

        def table_miss() -> bool:
            flows = parse_dump_flows(testing.ofctl(f"unix:{sock}", "dump-flows"))
            return any(f.int("priority") == 0 and f.actions == "CONTROLLER:65535"
                       for f in flows)

        try:
            testing.wait_until(table_miss, 60, "the os-ken app's table-miss flow")
        except TimeoutError:
            pytest.fail(f"no table-miss flow\n--- sluice:\n{sw.output}\n--- os-ken:\n"
                        f"{ctl.output}")
        ctl.wait_output(r"datapath 0000000000005c1e connected", 30)
        assert f"ssl:127.0.0.1:{port}: TLSv1." in sw.output, sw.output
        assert "session with peer certificate 'CN=ctl'" in sw.output, sw.output
        shown = testing.run([str(testing.sluicectl_binary(sluice_bin)), "--target",
                             f"unix:{sock}", "show"], check=False)
        assert sw.alive() and ctl.alive(), sw.output + ctl.output
        assert shown.returncode == 0, shown.stdout + shown.stderr


def _no_cert_client(port: int, ca: str) -> bytes:
    """A TLS client without a certificate sends a HELLO; returns what it read ('' when
    the switch refused the handshake or closed)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.load_verify_locations(ca)
    with socket.create_connection(("127.0.0.1", port), timeout=20) as raw:
        try:
            with ctx.wrap_socket(raw) as s:
                s.sendall(OF_HELLO)
                return s.recv(64)
        except (ssl.SSLError, ConnectionError):
            return b""


def _plain_client(port: int) -> bytes:
    """A plain TCP client sends an OpenFlow HELLO; returns everything it read until EOF."""
    got = b""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(OF_HELLO)
        try:
            while chunk := s.recv(4096):
                got += chunk
        except ConnectionResetError:
            pass
    return got


def test_untrusted_and_plain_clients_refused(sluice_bin: Path, pki: Pki) -> None:
    """Steps: Sluice with -C pssl:0; ovs-ofctl dump-flows with a certificate from another
    CA; a TLS client with no certificate; a plain TCP client sending an OpenFlow HELLO to the
    pssl: port; then ovs-ofctl with the controller's certificate.
    Verify: the first three get no OpenFlow message (ovs-ofctl fails, the others read no
    HELLO and see the connection end); Sluice logged each refusal with TLS's reason
    (certificate verify failed, peer did not return a certificate, wrong version number),
    is still running, and serves the trusted client afterwards."""
    with tls_switch(sluice_bin, pki, ("pssl:0",)) as sw:
        (target,) = sw.wait_listening()
        port = int(target.rsplit(":", 1)[1])

        r = ofctl_ssl(pki, "rogue", target, "dump-flows", check=False)
        assert r.returncode != 0 and "OFPST_FLOW" not in r.stdout, r.stdout + r.stderr
        sw.wait_output(r"TLS handshake failed: certificate verify failed", 30)

        assert _no_cert_client(port, pki.cert("ca")) == b""
        sw.wait_output(r"TLS handshake failed: peer did not return a certificate", 30)

        got = _plain_client(port)
        assert not got.startswith(OF_HELLO[:2]), got.hex()
        assert got == b"" or got[0] == 0x15, got.hex()  # nothing, or a TLS alert record
        sw.wait_output(r"TLS handshake failed: wrong version number", 30)

        assert sw.alive(), sw.output
        flows = parse_dump_flows(ofctl_ssl(pki, "ctl", target, "dump-flows").stdout)
        assert flows == [], [f.line for f in flows]
        assert sw.alive(), sw.output


@pytest.mark.parametrize("case", ["missing-key", "mismatch", "no-options", "partial"])
def test_tls_configuration_errors(sluice_bin: Path, pki: Pki, tmp_path: Path,
                                  case: str) -> None:
    """Steps: start Sluice with -C pssl:0 and a broken TLS configuration: a key file that
    does not exist, the controller's certificate with the switch's key, no TLS options,
    or --private-key alone.
    Verify: exit code 2 (configuration error) before the switch starts, with a message
    naming the file or the missing option."""
    opts = {
        "missing-key": (["--private-key", str(tmp_path / "none.pem"), "--certificate",
                         pki.cert("switch"), "--ca-cert", pki.cert("ca")],
                        f"private key {tmp_path / 'none.pem'}: No such file or directory"),
        "mismatch": (["--private-key", pki.key("switch"), "--certificate", pki.cert("ctl"),
                      "--ca-cert", pki.cert("ca")],
                     f"private key {pki.key('switch')} does not match certificate "
                     f"{pki.cert('ctl')}"),
        "no-options": ([], "pssl:0: TLS needs --private-key, --certificate and --ca-cert"),
        "partial": (["--private-key", pki.key("switch")], "--certificate is missing"),
    }
    args, message = opts[case]
    prefix = unique_prefix("tls")
    rc, out = run_sluice_raw(sluice_bin, ["-p", "net_null0", "-C", "pssl:0", "--mgmt", "none",
                                          *args, "--", *eal_args(prefix)], prefix=prefix)
    assert rc == 2, out
    assert message in out, out
