"""The Prometheus exporter (``sluice --metrics``): the scrape matches the traffic sent and what
``sluicectl`` reports, ``promtool check metrics`` accepts it, the real ``prometheus`` scrapes it
and answers queries over it, the HTTP server refuses what it should and survives garbage, slow
clients and too many connections, and the Grafana dashboard only graphs metrics that exist.

Traffic comes from a pcap file replayed once into port 1 (``net_pcap``), so every count is
exact; deadlines, never timing assertions.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scapy.all import wrpcap  # type: ignore[attr-defined]

from sluice import testing
from sluice.testing import Proc, Sluice, SluiceConfig

REPO = Path(__file__).resolve().parent.parent
DASHBOARD = REPO / "dist" / "grafana-sluice.json"
N_FWD, N_TTL1, N_ARP = 40, 5, 3
N_RX = N_FWD + N_TTL1 + N_ARP
METRICS_RE = re.compile(r"^sluice: metrics on http://(\S+)/metrics", re.M)
SAMPLE_RE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def frames() -> list[Any]:
    return testing.counter_frames(N_FWD, N_TTL1, N_ARP, b"m")


def http_get(addr: str, path: str = "/metrics") -> tuple[int, dict[str, str], str]:
    """GET http://@addr@path; (status, headers, body) whatever the status."""
    try:
        with urllib.request.urlopen(f"http://{addr}{path}", timeout=10) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def raw_request(addr: str, data: bytes) -> bytes:
    """Send @data on a fresh connection and read until the server closes it."""
    host, port = addr.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=15) as s:
        s.sendall(data)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out


def parse(text: str) -> Samples:
    """The samples of an exposition text, keyed by (name, labels)."""
    out: Samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE_RE.match(line)
        assert m, f"not a sample line: {line!r}"
        labels = frozenset(LABEL_RE.findall(m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def value(samples: Samples, metric: str, /, **labels: str) -> float:
    """The one sample of @metric whose labels include @labels."""
    want = set(labels.items())
    found = [v for (n, ls), v in samples.items() if n == metric and want <= ls]
    assert len(found) == 1, (metric, labels, found)
    return found[0]


def metrics_addr(sw: Sluice) -> str:
    """ADDR:PORT from the switch's "sluice: metrics on http://ADDR:PORT/metrics" line."""
    m = METRICS_RE.search(sw.output)
    assert m, sw.output
    return m.group(1)


def scrape(sw: Sluice) -> Samples:
    status, headers, body = http_get(metrics_addr(sw))
    assert status == 200, body
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4"), headers
    return parse(body)


@pytest.fixture
def switch(sluice_bin: Path, tmp_path: Path) -> Iterator[Sluice]:
    """Sluice with --metrics on a free port, replaying frames() once into port 1; IPv4 goes
    to port 2 with dec_ttl, anything else misses table 0."""
    pcap = tmp_path / "in.pcap"
    wrpcap(str(pcap), frames())
    cfg = SluiceConfig(ports=[f"net_pcap0,rx_pcap={pcap}", "net_null1,no-rx=1"],
                       flows=["table=0,priority=10,ip actions=dec_ttl,output:2"],
                       name=testing.unique("mx"), extra=["--metrics", "127.0.0.1:0"])
    sw = Sluice(cfg, binary=sluice_bin)
    try:
        sw.wait_ready(timeout=30)
        sw.wait_output(METRICS_RE, timeout=5)
        testing.wait_until(
            lambda: value(scrape(sw), "sluice_port_rx_packets_total", port="1") == N_RX, 30,
            "all frames received")
        yield sw
    finally:
        sw.stop()


def test_scrape_matches_traffic_and_sluicectl(switch: Sluice) -> None:
    """
    Steps:
        1. Replay 40 forwarded, 5 TTL-expiring and 3 ARP frames into port 1.
        2. Scrape /metrics; read sluicectl --json dump-ports and stats drops, tables, datapath.
    Verify:
        Port, drop, table, datapath and latency figures equal the traffic sent and what
        sluicectl reports; every sample carries switch="NAME"; histogram buckets are
        cumulative and end at _count.
    """
    s = scrape(switch)
    name = switch.prefix
    assert all(dict(ls).get("switch") == name for (_, ls) in s), "switch label on every sample"
    assert value(s, "sluice_port_rx_packets_total", port="1", name="net_pcap0") == N_RX
    assert value(s, "sluice_port_tx_packets_total", port="2", name="net_null1") == N_FWD
    assert value(s, "sluice_port_tx_bytes_total", port="2") == N_FWD * len(frames()[0])
    assert value(s, "sluice_drops_total", reason="ttl_expired") == N_TTL1
    assert value(s, "sluice_drops_total", reason="table_miss") == N_ARP
    assert value(s, "sluice_table_lookups_total", table="0", kind="mask") == N_RX
    assert value(s, "sluice_table_matched_total", table="0") == N_FWD + N_TTL1
    assert value(s, "sluice_table_missed_total", table="0") == N_ARP
    assert value(s, "sluice_table_flows", table="0") == 1
    assert value(s, "sluice_datapath_packets_total") == N_RX
    assert value(s, "sluice_worker_packets_total", worker="0") == N_RX
    assert value(s, "sluice_flows") == 1 and value(s, "sluice_ports") == 2
    # The pipeline latency histogram: one sample per packet, cumulative buckets.
    buckets = sorted((float(dict(ls)["le"]), v) for (n, ls), v in s.items()
                     if n == "sluice_pipeline_latency_seconds_bucket")
    assert buckets[-1][0] == float("inf") and len(buckets) == 18
    assert all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:]))
    assert buckets[-1][1] == value(s, "sluice_pipeline_latency_seconds_count") == N_RX
    assert value(s, "sluice_pipeline_latency_seconds_sum") > 0

    # The same figures through sluicectl: OpenFlow port stats and the telemetry commands.
    ports = {p["port_no"]: p for p in
             json.loads(switch.sluicectl("--json", "dump-ports", check=True).stdout)["ports"]}
    for no in (1, 2):
        for key in ("rx_packets", "tx_packets", "rx_bytes", "tx_bytes"):
            assert value(s, f"sluice_port_{key}_total", port=str(no)) == ports[no][key], key
    st = json.loads(switch.sluicectl("--json", "stats", "drops", check=True).stdout)
    drops = st["drops"] if "drops" in st else st
    assert drops["ttl_expired"] == N_TTL1 and drops["table_miss"] == N_ARP, drops
    for reason, n in drops.items():
        if reason != "total":
            assert value(s, "sluice_drops_total", reason=reason) == n, reason
    assert sum(v for (n, _), v in s.items() if n == "sluice_drops_total") == drops["total"]


def test_promtool_accepts_the_scrape(switch: Sluice, tmp_path: Path) -> None:
    """
    Steps:
        1. Scrape /metrics; pipe it into `promtool check metrics`.
    Verify:
        promtool exits 0 and prints nothing (no format error, no lint finding).
    """
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian package prometheus; scripts/setup.sh)")
    status, _, body = http_get(metrics_addr(switch))
    assert status == 200
    r = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r.stdout + r.stderr


def test_http_refusals_and_hostile_clients(switch: Sluice) -> None:
    """
    Steps:
        1. GET another path, POST /metrics, HTTP/2.0, garbage bytes, a head over 4 KB.
        2. Hold 8 silent connections and open 4 more; scrape while they are open.
        3. Wait for the server to close the silent ones.
    Verify:
        404, 405 (Allow: GET), 505, 400, 431; every answer closes the connection; the
        extra connections are closed at once and counted; the switch keeps serving, and
        counts the timeouts and errors.
    """
    addr = metrics_addr(switch)
    assert http_get(addr, "/")[0] == 404
    assert http_get(addr, "/metrics/x")[0] == 404
    r = raw_request(addr, b"POST /metrics HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody")
    assert r.startswith(b"HTTP/1.1 405 ") and b"\r\nAllow: GET\r\n" in r
    assert raw_request(addr, b"GET /metrics HTTP/2.0\r\n\r\n").startswith(b"HTTP/1.1 505 ")
    assert raw_request(addr, b"\x16\x03\x01\x00\xa5\x01\x00").startswith(b"HTTP/1.1 400 ")
    assert raw_request(addr, b"GET /metrics HTTP/1.1\r\nX: \x00\r\n\r\n").startswith(
        b"HTTP/1.1 400 ")
    big = b"GET /metrics HTTP/1.1\r\n" + b"X-Pad: " + b"a" * 5000 + b"\r\n\r\n"
    assert raw_request(addr, big).startswith(b"HTTP/1.1 431 ")

    host, port = addr.rsplit(":", 1)
    silent = [socket.create_connection((host, int(port)), timeout=20) for _ in range(8)]
    try:
        silent[0].sendall(b"GET /metr")  # a partial request, never finished
        extra = [socket.create_connection((host, int(port)), timeout=20) for _ in range(4)]
        for s in extra:  # every slot is busy: closed on accept, nothing answered
            assert s.recv(100) == b""
            s.close()
        for s in silent:  # the silent ones are closed at their deadline, unanswered
            assert s.recv(100) == b""
    finally:
        for s in silent:
            s.close()
    after = scrape(switch)
    # A slot may still be closing the previous client: then a silent one was refused instead.
    refused = value(after, "sluice_metrics_refused_total")
    timeouts = value(after, "sluice_metrics_timeouts_total")
    assert refused >= 4 and refused + timeouts == 12, (refused, timeouts)
    assert value(after, "sluice_metrics_http_errors_total") == 7
    assert value(after, "sluice_port_rx_packets_total", port="1") == N_RX


def test_prometheus_scrapes_sluice(switch: Sluice, tmp_path: Path) -> None:
    """
    Steps:
        1. Start the real prometheus (Debian package) with a temporary storage directory and
           a config scraping Sluice every second.
        2. Query its HTTP API (/api/v1/query).
    Verify:
        up{job="sluice"} is 1; sluice_port_rx_packets_total{port="1"} holds the frames
        sent, labelled with the switch name; histogram_quantile over the pipeline latency
        buckets gives a positive number of seconds; every query of the Grafana dashboard
        is accepted.  prometheus is killed by PID.
    """
    prom = shutil.which("prometheus")
    if prom is None:
        pytest.skip("prometheus not installed (Debian package prometheus; scripts/setup.sh "
                    "installs it)")
    web = f"127.0.0.1:{testing.free_tcp_port()}"
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                   "scrape_configs:\n  - job_name: sluice\n    static_configs:\n"
                   f"      - targets: ['{metrics_addr(switch)}']\n")
    proc = Proc([prom, f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                 f"--web.listen-address={web}", "--log.level=warn"], name="prometheus")

    def query(q: str) -> list[dict[str, Any]]:
        url = f"http://{web}/api/v1/query?" + urllib.parse.urlencode({"query": q})
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                js = json.loads(r.read())
        except (urllib.error.URLError, ConnectionError):
            return []
        assert js["status"] == "success", js
        return list(js["data"]["result"])

    try:
        testing.wait_until(lambda: bool(query('up{job="sluice"} == 1')), 60,
                           "prometheus scraping sluice")
        rx: list[dict[str, Any]] = []

        def have_rx() -> bool:
            rx[:] = query('sluice_port_rx_packets_total{port="1"}')
            return bool(rx)

        testing.wait_until(have_rx, 30, "a Sluice series in prometheus")
        assert rx[0]["metric"]["switch"] == switch.prefix
        assert rx[0]["metric"]["name"] == "net_pcap0"
        assert float(rx[0]["value"][1]) == N_RX
        q = query("histogram_quantile(0.5, sluice_pipeline_latency_seconds_bucket)")
        assert q and 0 < float(q[0]["value"][1]) < 1, q
        drops = query('sluice_drops_total{reason="ttl_expired"}')
        assert drops and float(drops[0]["value"][1]) == N_TTL1
        # Every query of the Grafana dashboard is valid PromQL over these series.
        for expr in dashboard_exprs():
            promql = expr.replace("$__rate_interval", "1m").replace("$switch", ".*")
            url = f"http://{web}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
            with urllib.request.urlopen(url, timeout=5) as r:
                assert json.loads(r.read())["status"] == "success", expr
    finally:
        proc.stop()  # SIGTERM by PID, SIGKILL after a timeout
        assert not proc.alive()


def dashboard_exprs() -> list[str]:
    """The query of every target of every panel of dist/grafana-sluice.json."""
    dash = json.loads(DASHBOARD.read_text())
    return [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]


def test_grafana_dashboard_uses_emitted_metrics(switch: Sluice) -> None:
    """
    Steps:
        1. Load dist/grafana-sluice.json; collect the metric names of every panel query.
    Verify:
        It is a dashboard with panels; every sluice_* name in an expr is a family the
        exporter emits (a histogram's _bucket/_sum/_count included).
    """
    dash = json.loads(DASHBOARD.read_text())
    panels = [p for p in dash["panels"] if p.get("type") != "row"]
    assert dash["title"] and len(panels) >= 8
    status, _, body = http_get(metrics_addr(switch))
    emitted = {line.split()[2] for line in body.splitlines() if line.startswith("# TYPE ")}
    hist = {line.split()[2] for line in body.splitlines()
            if line.startswith("# TYPE ") and line.endswith(" histogram")}
    emitted |= {f"{h}_{s}" for h in hist for s in ("bucket", "sum", "count")}
    used: set[str] = set()
    for p in panels:
        assert p.get("targets"), p["title"]
        for t in p["targets"]:
            used |= set(re.findall(r"\bsluice_[a-z0-9_]+", t["expr"]))
    assert used and used <= emitted, sorted(used - emitted)


def test_metrics_option_checked(sluice_bin: Path) -> None:
    """
    Steps:
        1. Start sluice with malformed --metrics values.
    Verify:
        Each exits 2 naming the expected forms, before EAL starts.
    """
    for bad in ("", "70000", "host:", ":9100", "::1:9100", "[::1]9100", "9100x"):
        r = subprocess.run([str(sluice_bin), "-p", "net_null0", "--metrics", bad],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 2, (bad, r.stdout, r.stderr)
        assert "--metrics" in r.stderr and "PORT" in r.stderr, (bad, r.stderr)
