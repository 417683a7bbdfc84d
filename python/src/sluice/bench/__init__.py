"""Benchmark drivers (``bench/run NAME`` calls them; or ``python -m sluice.bench.NAME``).

- :mod:`sluice.bench.forwarding`: dpdk-testpmd io-forwarding vs Sluice (whole-pipeline cache
  on and off) vs Open vSwitch-DPDK on the same vdevs, pcaps and rules.
- :mod:`sluice.bench.control`: OpenFlow control path (flow_mod rates, flow dump,
  packet_in round trip), vs Open vSwitch when installed.
- :mod:`sluice.bench.dispatch`: the I/O core's schedulers, real ns/packet and the
  seed-002 model (throughput, loss, reordering), with PNG plots.
- :mod:`sluice.bench.stateful`: the OpenState examples (MAC learning, port knocking) vs a
  stateless pipeline of the same length, 1 and 100,000 flows.
- :mod:`sluice.bench.ffp`: the fast forwarding path vs the pipeline alone (seed 000).
- :mod:`sluice.bench.flexforward`: FlexForward's forwarding modes (seed 003).
- :mod:`sluice.bench.decomposition`: the seed-001 study with sluice-gen over memif.
- :mod:`sluice.bench.pipeline_cost`: the same test cases through the pipeline alone (no I/O).
- :mod:`sluice.bench.ovs`: Open vSwitch-DPDK as a contender (install, private instance),
  shared by forwarding and decomposition.

Each prints a table and writes ``bench/results/NAME.json`` (``--out`` elsewhere).
They find the source tree (tools/, build/) with :func:`sluice.testing.repo_root`.
"""

#: Benchmark name -> module.
BENCHES: dict[str, str] = {
    "control": "sluice.bench.control",
    "dispatch": "sluice.bench.dispatch",
    "forwarding": "sluice.bench.forwarding",
    "stateful": "sluice.bench.stateful",
    "ffp": "sluice.bench.ffp",
    "flexforward": "sluice.bench.flexforward",
    "decomposition": "sluice.bench.decomposition",
    "pipeline_cost": "sluice.bench.pipeline_cost",
}
