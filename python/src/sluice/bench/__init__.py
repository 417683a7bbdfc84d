"""Benchmark drivers (``bench/run NAME`` calls them; or ``python -m sluice.bench.NAME``).

- :mod:`sluice.bench.forwarding`: dpdk-testpmd io-forwarding vs Sluice on the same vdevs.
- :mod:`sluice.bench.control`: OpenFlow control path (flow_mod rates, flow dump,
  packet_in round trip), vs Open vSwitch when installed.
- :mod:`sluice.bench.dispatch`: the I/O core's schedulers, real ns/packet and the
  seed-002 model (throughput, loss, reordering), with PNG plots.
- :mod:`sluice.bench.stateful`: the OpenState examples (MAC learning, port knocking) vs a
  stateless pipeline of the same length, 1 and 100,000 flows.

Each prints a table and writes ``bench/results/NAME.json`` (``--out`` elsewhere).
They find the source tree (tools/, build/) with :func:`sluice.testing.repo_root`.
"""

#: Benchmark name -> module.
BENCHES: dict[str, str] = {
    "control": "sluice.bench.control",
    "dispatch": "sluice.bench.dispatch",
    "forwarding": "sluice.bench.forwarding",
    "stateful": "sluice.bench.stateful",
}
