"""sluice.telemetry against a fake DPDK telemetry server (a SOCK_SEQPACKET thread)."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sluice import telemetry
from sluice.telemetry import Telemetry, TelemetryError

Handler = Callable[[str, str], Any]
#: A handler's answer that makes the server close the connection.
CLOSE = object()


class FakeTelemetry:
    """Greets like DPDK 22.11, then answers each request packet with ``handler(cmd, params)``
    (sent as ``{cmd: value}``, None as null like DPDK for unknown commands; bytes are sent
    verbatim; CLOSE closes the connection).  Every request text is kept in ``requests``."""

    def __init__(self, path: Path, handler: Handler, greeting: dict[str, Any] | None = None,
                 bind_after: float = 0.0) -> None:
        self.path = path
        self.handler = handler
        self.greeting = greeting or {"version": "DPDK 22.11.11", "pid": 4242,
                                     "max_output_len": 16384}
        self.requests: list[str] = []
        self.srv: socket.socket | None = None
        self._stop = threading.Event()
        self._bound = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(bind_after,), daemon=True)
        self._thread.start()
        if not bind_after:
            self._bound.wait(5)

    def _run(self, bind_after: float) -> None:
        time.sleep(bind_after)
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        srv.bind(str(self.path))
        srv.listen(4)
        srv.settimeout(0.1)
        self.srv = srv
        self._bound.set()
        while not self._stop.is_set():
            try:
                conn, _ = srv.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.send(json.dumps(self.greeting).encode())
            while True:
                try:
                    data = conn.recv(1024)
                except OSError:
                    return
                if not data:
                    return
                text = data.decode()
                self.requests.append(text)
                cmd, _, params = text.partition(",")
                value = self.handler(cmd, params)
                if value is CLOSE:
                    return
                out = value if isinstance(value, bytes) else json.dumps({cmd: value}).encode()
                try:
                    conn.send(out)
                except OSError:  # the client gave up (timeout test)
                    return

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        if self.srv is not None:
            self.srv.close()


SLUICE_REPLIES: dict[str, Any] = {
    "/": ["/", "/info", "/sluice/info", "/sluice/ports"],
    "/sluice/info": {"name": "sw1", "version": "0.1.0", "pid": 4242, "n_ports": 2},
    "/sluice/ports": {"1": {"name": "net_pcap0", "rx_packets": 48, "tx_packets": 0},
                      "2": {"name": "net_null1", "rx_packets": 0, "tx_packets": 40},
                      "LOCAL": {"name": "sw1", "rx_packets": 0, "tx_packets": 0}},
    "/sluice/tables": {"0": {"kind": "mask", "flows": 1}, "7": {"kind": "lpm", "flows": 3},
                       "truncated": 1},
    "/sluice/drops": {"table_miss": 3, "ttl_expired": 5, "total": 8},
    "/sluice/datapath": {"workers": 1, "packets": 48, "bursts": 2},
    "/sluice/latency": {"pipeline": {"count": 48, "p50_ns": 2048}},
    "/sluice/controller": {"packet_outs": 0, "connections": 1, "conn_0": "punix:/x service"},
    "/sluice/capture": {"state": "idle"},
    "/sluice/capture/stop": {"state": "stopped", "captured": 10},
    "/sluice/log": {"app": "notice", "ofswitch": "notice"},
}


def sluice_handler(cmd: str, params: str) -> Any:
    if cmd == "/sluice/port":
        if params == "9":
            return {"error": "no port '9' (ports are 1..2, or 'controller')"}
        return {"port_no": int(params) if params.isdigit() else params, "tx_packets": 40}
    if cmd == "/sluice/table":
        return {"table_id": int(params), "spec": f"table={params},kind=mask"}
    if cmd == "/sluice/latency/histogram":
        return {"le_256": 0, "le_512": 48, "le_inf": 0}
    if cmd == "/sluice/capture/start":
        return {"state": "running", "echo": params}
    if cmd == "/sluice/log/level":
        t, level = params.split(",")
        return {"app": level, "ofswitch": level}
    if cmd == "/big":
        return {f"k{i}": "x" * 100 for i in range(300)}  # ~33 KB, above max_output_len
    if cmd == "/list":
        return [1, 2, 3]
    if cmd == "/close":
        return CLOSE
    if cmd == "/garbage":
        return b"{not json"
    if cmd == "/toplevel-error":
        return json.dumps({"error": "busy"}).encode()
    return SLUICE_REPLIES.get(cmd)


@pytest.fixture
def sock_path() -> Iterator[Path]:
    # sun_path holds 107 bytes: pytest's tmp_path can be longer.
    p = Path(f"/tmp/sltel{os.getpid()}x{time.monotonic_ns() % 10**9}.sock")
    yield p
    if p.exists():
        p.unlink()


@pytest.fixture
def server(sock_path: Path) -> Iterator[FakeTelemetry]:
    srv = FakeTelemetry(sock_path, sluice_handler)
    yield srv
    srv.close()


def test_greeting_and_call(server: FakeTelemetry) -> None:
    with Telemetry(server.path) as t:
        assert t.greeting["pid"] == 4242 and t.pid == 4242
        assert t.version == "DPDK 22.11.11" and t.max_output_len == 16384
        assert t.call("/sluice/info") == SLUICE_REPLIES["/sluice/info"]
        assert t.request("/sluice/drops") == {"/sluice/drops": SLUICE_REPLIES["/sluice/drops"]}
        assert t.commands() == SLUICE_REPLIES["/"]
        assert t.call_any("/list") == [1, 2, 3]
    assert server.requests == ["/sluice/info", "/sluice/drops", "/", "/list"]


def test_typed_helpers(server: FakeTelemetry) -> None:
    with Telemetry(path=server.path) as t:
        assert t.info()["name"] == "sw1"
        ports = t.ports()
        # The LOCAL port is keyed "LOCAL" (bench/run ffp failed on int("LOCAL")).
        assert set(ports) == {1, 2, telemetry.LOCAL_PORT} and ports[2]["tx_packets"] == 40
        assert ports[telemetry.LOCAL_PORT]["name"] == "sw1" and not ports.truncated
        tables = t.tables()
        assert set(tables) == {0, 7} and tables[7]["kind"] == "lpm" and tables.truncated
        assert t.port(2)["port_no"] == 2
        assert t.port("controller")["port_no"] == "controller"
        assert t.table(7)["spec"] == "table=7,kind=mask"
        assert t.drops() == {"table_miss": 3, "ttl_expired": 5, "total": 8}
        assert t.datapath()["packets"] == 48
        assert t.latency()["pipeline"]["p50_ns"] == 2048
        assert t.latency_histogram("pipeline")["le_512"] == 48
        assert t.controller()["conn_0"] == "punix:/x service"
        assert t.capture()["state"] == "idle"
        started = t.capture_start(1, dir="rx", count=5)
        assert started["state"] == "running"
        assert t.capture_stop()["state"] == "stopped"
        assert t.log() == {"app": "notice", "ofswitch": "notice"}
        assert t.log_level("sluice.*", "debug") == {"app": "debug", "ofswitch": "debug"}
    assert "/sluice/capture/start,port=1,dir=rx,count=5" in server.requests
    assert "/sluice/log/level,sluice.*,debug" in server.requests
    assert "/sluice/port,2" in server.requests and "/sluice/table,7" in server.requests
    assert "/sluice/latency/histogram,pipeline" in server.requests


def test_errors(server: FakeTelemetry) -> None:
    with Telemetry(server.path) as t:
        with pytest.raises(TelemetryError, match="no port '9'"):
            t.port(9)
        with pytest.raises(TelemetryError, match="null reply"):
            t.call("/nope")
        with pytest.raises(TelemetryError, match="not an object"):
            t.call("/list")
        with pytest.raises(TelemetryError, match="busy"):
            t.call("/toplevel-error")
        with pytest.raises(TelemetryError, match="bad JSON"):
            t.call("/garbage")
        with pytest.raises(ValueError):
            t.call("sluice/info")
        with pytest.raises(TelemetryError, match="connection closed"):
            t.call("/close")


def test_reply_larger_than_max_output_len(server: FakeTelemetry) -> None:
    with Telemetry(server.path) as t:
        assert len(t.call("/big")) == 300


def test_timeout(sock_path: Path) -> None:
    srv = FakeTelemetry(sock_path, lambda c, p: time.sleep(0.5) or {})
    try:
        with Telemetry(sock_path, timeout=0.2) as t:
            with pytest.raises(TelemetryError, match="no reply"):
                t.call("/slow")
    finally:
        srv.close()


def test_connect_timeout_waits_for_the_socket(sock_path: Path) -> None:
    srv = FakeTelemetry(sock_path, sluice_handler, bind_after=0.3)
    try:
        with pytest.raises(TelemetryError, match="cannot connect"):
            Telemetry(sock_path)
        with Telemetry(sock_path, connect_timeout=10) as t:
            assert t.drops()["total"] == 8
    finally:
        srv.close()


def test_shared_between_threads(server: FakeTelemetry) -> None:
    with Telemetry(server.path) as t:
        errors: list[BaseException] = []

        def worker() -> None:
            try:
                for _ in range(20):
                    assert t.ports()[1]["rx_packets"] == 48
                    assert t.drops()["total"] == 8
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors


def test_socket_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNTIME_DIRECTORY", "/rt")
    assert telemetry.socket_path("sw1") == Path("/rt/dpdk/sw1/dpdk_telemetry.v2")
    monkeypatch.delenv("RUNTIME_DIRECTORY")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/xdg")
    want = "/var/run" if os.geteuid() == 0 else "/xdg"
    assert telemetry.runtime_dir("sw1") == Path(want) / "dpdk" / "sw1"
    assert telemetry.socket_path().parent.name == "sluice"


def test_target_is_a_path_or_a_prefix(monkeypatch: pytest.MonkeyPatch, sock_path: Path) -> None:
    monkeypatch.setenv("RUNTIME_DIRECTORY", "/nonexistent-sluice-test")
    with pytest.raises(TelemetryError, match="/nonexistent-sluice-test/dpdk/sw9/"):
        Telemetry("sw9")
    with pytest.raises(TelemetryError, match="/nonexistent-sluice-test/dpdk/sw8/"):
        Telemetry(file_prefix="sw8")
    with pytest.raises(TelemetryError, match=str(sock_path)):
        Telemetry(str(sock_path))
    with pytest.raises(ValueError):
        Telemetry("a", file_prefix="b")


def test_format_params() -> None:
    assert telemetry.format_params(None) == ""
    assert telemetry.format_params(3) == "3"
    assert telemetry.format_params("controller") == "controller"
    assert telemetry.format_params(("sluice.*", "debug")) == "sluice.*,debug"
    assert telemetry.format_params({"port": 1, "dir": None, "file": "/tmp/x"}) == \
        "port=1,file=/tmp/x"


def test_cli(server: FakeTelemetry, capsys: pytest.CaptureFixture[str]) -> None:
    assert telemetry.main(["-s", str(server.path), "/sluice/port", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == {"/sluice/port": {"port_no": 2,
                                                                    "tx_packets": 40}}
    assert telemetry.main(["-s", str(server.path) + ".missing", "/sluice/info"]) == 1
