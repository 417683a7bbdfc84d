"""A DPDK telemetry client (standard library only) with Sluice's commands typed.

DPDK telemetry v2 is a ``SOCK_SEQPACKET`` Unix socket,
``<runtime dir>/dpdk_telemetry.v2`` where the runtime dir is ``/var/run/dpdk/PREFIX``
for root (``$XDG_RUNTIME_DIR/dpdk/PREFIX`` or ``/tmp/dpdk/PREFIX`` otherwise;
``$RUNTIME_DIRECTORY`` overrides the base) and PREFIX the EAL ``--file-prefix``
(Sluice: its ``--name``, default ``sluice``).  On connect the server sends a JSON
greeting (``version``, ``pid``, ``max_output_len``); each request is one packet
``/command[,params]`` and each reply one JSON object ``{"/command": VALUE}``.
The commands are documented in docs/telemetry.md.

Example::

    from sluice.telemetry import Telemetry
    with Telemetry(file_prefix="sluice") as t:
        for port_no, p in t.ports().items():
            print(port_no, p["rx_packets"], p["tx_packets"])
        t.log_level("sluice.*", "debug")

``python -m sluice.telemetry [-f PREFIX | -s PATH] /sluice/ports`` prints one reply.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, TypedDict, TypeVar, cast

from .ofp import OFPP_LOCAL

#: /sluice/ports names the LOCAL port "LOCAL"; Keyed maps hold it under its OpenFlow number.
LOCAL_PORT = OFPP_LOCAL

SOCKET_NAME = "dpdk_telemetry.v2"
#: Sluice's default name, hence EAL file prefix.
DEFAULT_PREFIX = "sluice"
#: Bytes read per reply at least (DPDK 22.11 announces 16384).
_MIN_RECV = 1 << 16

_T = TypeVar("_T")


class TelemetryError(RuntimeError):
    """A request failed: ``{"error": TEXT}`` from Sluice, or a null reply from DPDK
    (unknown command, or the callback refused its parameters)."""


# ---------------------------------------------------------------------------
# Reply shapes (docs/telemetry.md); total=False: a newer or older switch may add
# or lack keys, and reading a key stays type-checked.
# ---------------------------------------------------------------------------


class Info(TypedDict, total=False):
    name: str
    version: str
    dpdk: str
    pid: int
    datapath_id: str
    uptime_ms: int
    n_ports: int
    n_tables_used: int
    n_flows: int
    n_groups: int
    workers: int
    burst: int
    tsc_hz: int
    fail_mode: str
    mgmt: str
    controllers_configured: int
    controllers_connected: int


class PortSummary(TypedDict, total=False):
    name: str
    link: int
    live: int
    rx_packets: int
    rx_bytes: int
    tx_packets: int
    tx_bytes: int
    tx_dropped: int
    rx_missed: int


class PortDetail(PortSummary, total=False):
    port_no: int | str
    devargs: str
    mac: str
    speed_mbps: int
    dev_ipackets: int
    dev_opackets: int
    dev_ibytes: int
    dev_obytes: int
    dev_imissed: int
    dev_ierrors: int
    dev_oerrors: int
    dev_rx_nombuf: int


class TableSummary(TypedDict, total=False):
    kind: str
    name: str
    flows: int
    lookups: int
    matched: int
    missed: int


class TableDetail(TableSummary, total=False):
    table_id: int
    spec: str  # the declaration in flow-file syntax
    fields: str
    max_entries: int
    entries: int
    mem_bytes: int
    groups: int
    rebuilds: int


class DatapathStats(TypedDict, total=False):
    workers: int
    iterations: int
    busy_rounds: int
    busy_cycles: int
    bursts: int
    packets: int
    copies: int
    tsc_hz: int
    cache_hits: int
    cache_misses: int


class LatencySummary(TypedDict, total=False):
    count: int
    mean_ns: int
    max_ns: int
    p50_ns: int
    p90_ns: int
    p99_ns: int
    p999_ns: int


class CaptureStatus(TypedDict, total=False):
    state: str  # idle | running | done | stopped
    port: int
    dir: str  # rx | tx | both
    file: str
    count: int
    bytes: int
    snaplen: int
    captured: int
    written_bytes: int
    dropped: int


class Keyed(dict[int, _T], Generic[_T]):
    """A reply keyed by number (ports, tables); ``truncated`` when the switch cut the list."""

    truncated: bool = False


# ---------------------------------------------------------------------------
# Paths
# ---------------------------------------------------------------------------


def runtime_dir(file_prefix: str = DEFAULT_PREFIX) -> Path:
    """DPDK's runtime directory for @file_prefix, computed as EAL does."""
    base = os.environ.get("RUNTIME_DIRECTORY")
    if not base:
        base = "/var/run" if os.geteuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return Path(base) / "dpdk" / file_prefix


def socket_path(file_prefix: str = DEFAULT_PREFIX) -> Path:
    """The telemetry v2 socket of the DPDK process started with ``--file-prefix=PREFIX``."""
    return runtime_dir(file_prefix) / SOCKET_NAME


def format_params(params: str | int | Sequence[object] | Mapping[str, object] | None) -> str:
    """Request parameters as telemetry takes them: ``"3"``, ``"a,b"``, ``"k=v,k2=v2"``
    (None values of a mapping are left out)."""
    if params is None:
        return ""
    if isinstance(params, str):
        return params
    if isinstance(params, int):
        return str(params)
    if isinstance(params, Mapping):
        return ",".join(f"{k}={v}" for k, v in params.items() if v is not None)
    return ",".join(str(p) for p in params)


# ---------------------------------------------------------------------------
# The client
# ---------------------------------------------------------------------------


class Telemetry:
    """One connection to a DPDK process's telemetry socket.

    ``Telemetry(target)``: @target is a socket path (contains ``/``) or an EAL
    file prefix (Sluice's ``--name``); ``Telemetry(file_prefix=NAME)`` and
    ``Telemetry(path=PATH)`` say which.  With @connect_timeout, connecting is
    retried until the socket accepts (a switch still starting).  @timeout bounds
    each request.  Requests are serialized (one lock), so a client may be shared
    between threads.
    """

    def __init__(self, target: str | os.PathLike[str] | None = None, *,
                 path: str | os.PathLike[str] | None = None, file_prefix: str | None = None,
                 timeout: float = 5.0, connect_timeout: float = 0.0) -> None:
        if sum(x is not None for x in (target, path, file_prefix)) > 1:
            raise ValueError("give one of target, path, file_prefix")
        if target is not None:
            t = os.fspath(target)
            if "/" in t:
                path = t
            else:
                file_prefix = t
        self.path = Path(path) if path is not None else socket_path(
            file_prefix or DEFAULT_PREFIX)
        self.timeout = timeout
        self._lock = threading.Lock()
        self._sock = self._connect(connect_timeout)
        try:
            greeting = self._recv(_MIN_RECV)
        except BaseException:
            self._sock.close()
            raise
        if not isinstance(greeting, dict):
            self._sock.close()
            raise TelemetryError(f"{self.path}: unexpected greeting {greeting!r}")
        #: The server's greeting: ``version``, ``pid``, ``max_output_len``.
        self.greeting: dict[str, Any] = greeting
        self.max_output_len = int(greeting.get("max_output_len", 16384))

    def _connect(self, connect_timeout: float) -> socket.socket:
        deadline = time.monotonic() + connect_timeout
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.settimeout(self.timeout)
            try:
                s.connect(str(self.path))
                return s
            except OSError as e:
                s.close()
                if time.monotonic() >= deadline:
                    raise TelemetryError(f"cannot connect to telemetry at {self.path}: "
                                         f"{e}") from e
                time.sleep(0.05)

    def _recv(self, size: int) -> Any:
        try:
            data = self._sock.recv(size)
        except TimeoutError:
            raise TelemetryError(f"{self.path}: no reply within {self.timeout} s") from None
        if not data:
            raise TelemetryError(f"{self.path}: connection closed (too many clients, "
                                 "or the process exited)")
        try:
            return json.loads(data)
        except ValueError as e:
            raise TelemetryError(f"{self.path}: bad JSON reply {data[:200]!r}") from e

    @property
    def version(self) -> str:
        """The DPDK version string of the greeting."""
        return str(self.greeting.get("version", ""))

    @property
    def pid(self) -> int:
        return int(self.greeting.get("pid", 0))

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> Telemetry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, cmd: str, params: str | int | Sequence[object] | Mapping[str, object]
                | None = None) -> dict[str, Any]:
        """Send ``cmd[,params]`` and return the whole reply object, unchecked."""
        if not cmd.startswith("/"):
            raise ValueError(f"telemetry commands start with '/': {cmd!r}")
        p = format_params(params)
        text = f"{cmd},{p}" if p else cmd
        with self._lock:
            self._sock.send(text.encode())
            reply = self._recv(max(self.max_output_len, _MIN_RECV))
        if not isinstance(reply, dict):
            raise TelemetryError(f"{cmd}: reply is not an object: {reply!r}")
        return reply

    def call_any(self, cmd: str, params: str | int | Sequence[object] | Mapping[str, object]
                 | None = None) -> Any:
        """The reply's value for @cmd, of any JSON type (DPDK's own commands return
        lists, numbers...).  TelemetryError for a null reply or ``{"error": TEXT}``."""
        reply = self.request(cmd, params)
        if set(reply) == {"error"}:
            raise TelemetryError(f"{cmd}: {reply['error']}")
        if cmd not in reply:
            raise TelemetryError(f"{cmd}: reply for another command: {reply!r}")
        value = reply[cmd]
        if value is None:
            raise TelemetryError(f"{cmd}: null reply (unknown command or bad parameters)")
        if isinstance(value, dict) and isinstance(value.get("error"), str) and len(value) == 1:
            raise TelemetryError(f"{cmd}: {value['error']}")
        return value

    def call(self, cmd: str, params: str | int | Sequence[object] | Mapping[str, object]
             | None = None) -> dict[str, Any]:
        """The reply's inner object for @cmd (``{"/sluice/drops": {...}}`` -> ``{...}``).

        TelemetryError when the request fails (see call_any) or the value is not an object.
        """
        value = self.call_any(cmd, params)
        if not isinstance(value, dict):
            raise TelemetryError(f"{cmd}: reply value is not an object: {value!r}")
        return value

    def commands(self) -> list[str]:
        """Every command the process registered (DPDK's ``/``)."""
        return [str(c) for c in self.call_any("/")]

    # -- Sluice's commands (docs/telemetry.md) -------------------------------

    @staticmethod
    def _keyed(value: dict[str, Any]) -> Keyed[Any]:
        out: Keyed[Any] = Keyed()
        for k, v in value.items():
            if k == "truncated":
                out.truncated = bool(v)
            elif k == "LOCAL":  # the LOCAL port, by its OpenFlow number (OFPP_LOCAL)
                out[LOCAL_PORT] = v
            else:
                out[int(k)] = v
        return out

    def info(self) -> Info:
        """Switch identity and configuration (``/sluice/info``)."""
        return cast(Info, self.call("/sluice/info"))

    def ports(self) -> Keyed[PortSummary]:
        """Per-port summary by OpenFlow port number (``/sluice/ports``)."""
        return self._keyed(self.call("/sluice/ports"))

    def port(self, port_no: int | str) -> PortDetail:
        """One port in full; @port_no may be ``"controller"`` (``/sluice/port,N``)."""
        return cast(PortDetail, self.call("/sluice/port", port_no))

    def tables(self) -> Keyed[TableSummary]:
        """Per-table summary by table id, tables in use (``/sluice/tables``)."""
        return self._keyed(self.call("/sluice/tables"))

    def table(self, table_id: int) -> TableDetail:
        """One table in full (``/sluice/table,N``)."""
        return cast(TableDetail, self.call("/sluice/table", table_id))

    def drops(self) -> dict[str, int]:
        """Pipeline and transmit drops by reason, plus ``total`` (``/sluice/drops``)."""
        return {k: int(v) for k, v in self.call("/sluice/drops").items()}

    def datapath(self) -> DatapathStats:
        """Datapath loop counters (``/sluice/datapath``)."""
        return cast(DatapathStats, self.call("/sluice/datapath"))

    def latency(self) -> dict[str, LatencySummary]:
        """Latency percentiles by class: pipeline, packet_in, ... (``/sluice/latency``)."""
        return cast(dict[str, LatencySummary], self.call("/sluice/latency"))

    def latency_histogram(self, cls: str) -> dict[str, int]:
        """One class's histogram: ``le_256`` ... ``le_inf`` -> packets."""
        return {k: int(v) for k, v in self.call("/sluice/latency/histogram", cls).items()}

    def controller(self) -> dict[str, int | str]:
        """OpenFlow agent counters and connections (``conn_N`` strings)."""
        return cast(dict[str, "int | str"], self.call("/sluice/controller"))

    def capture(self) -> CaptureStatus:
        """Capture status (``/sluice/capture``)."""
        return cast(CaptureStatus, self.call("/sluice/capture"))

    def capture_start(self, port: int, dir: str | None = None, file: str | None = None,
                      count: int | None = None, bytes: int | None = None,
                      snaplen: int | None = None) -> CaptureStatus:
        """Start mirroring @port into a pcapng file (``/sluice/capture/start``);
        @dir ``rx | tx | both``; unset options take the switch's defaults."""
        params = {"port": port, "dir": dir, "file": file, "count": count, "bytes": bytes,
                  "snaplen": snaplen}
        return cast(CaptureStatus, self.call("/sluice/capture/start", params))

    def capture_stop(self) -> CaptureStatus:
        """Stop the capture; its final status."""
        return cast(CaptureStatus, self.call("/sluice/capture/stop"))

    def log(self) -> dict[str, str]:
        """Sluice's log levels by component (``app``, ``ofswitch``...; ``/sluice/log``)."""
        return {k: str(v) for k, v in self.call("/sluice/log").items()}

    def log_level(self, log_type: str, level: str) -> dict[str, str]:
        """Set @log_type (``sluice.*``, a component such as ``ofswitch``, or a DPDK type
        such as ``lib.eal``) to @level (emerg ... debug); returns the new table."""
        return {k: str(v) for k, v in self.call("/sluice/log/level", (log_type, level)).items()}

    def workers(self) -> dict[str, Any]:
        """Dispatch scalars plus one object per worker keyed "0", "1"... (``/sluice/workers``)."""
        return self.call("/sluice/workers")

    def dispatch(self, scheduler: str | None = None,
                 threshold: float | None = None) -> dict[str, Any]:
        """Show, or change at run time, the I/O core's scheduler and load threshold
        (``/sluice/dispatch``; needs ``--dispatch io``)."""
        params = []
        if scheduler is not None:
            params.append(f"scheduler={scheduler}")
        if threshold is not None:
            params.append(f"threshold={threshold}")
        return self.call("/sluice/dispatch", ",".join(params) if params else None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sluice.telemetry",
                                 description="Send one DPDK telemetry request, print the reply.")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("-f", "--file-prefix", default=None,
                   help=f"EAL file prefix / Sluice name (default {DEFAULT_PREFIX})")
    g.add_argument("-s", "--socket", default=None, help="telemetry socket path")
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("cmd", help="command, e.g. /sluice/ports")
    ap.add_argument("params", nargs="?", default=None, help="parameters, e.g. 1 or port=1,dir=rx")
    a = ap.parse_args(argv)
    try:
        with Telemetry(path=a.socket, file_prefix=None if a.socket else a.file_prefix,
                       timeout=a.timeout) as t:
            print(json.dumps(t.request(a.cmd, a.params), indent=1))
    except (TelemetryError, ValueError) as e:
        print(f"sluice.telemetry: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
