"""Benchmark drivers: ``bench/run NAME`` (or ``python -m sluice.bench NAME``) runs one.

:data:`BENCHES` is the one list of them: ``bench/run``, ``bench/run --list`` and
``python -m sluice.bench`` read it.  Helpers that are not benchmarks themselves:
:mod:`sluice.bench.ovs` (Open vSwitch-DPDK as a contender, shared by forwarding and
decomposition) and :mod:`sluice.bench.meter` (control's meter-accuracy trials).

Each benchmark prints a table and writes ``bench/results/NAME.json``, one flat JSON object
(``--out`` elsewhere), with :func:`arg_parser` and :func:`write_results`.  They find the
source tree (tools/, build/) with :func:`sluice.testing.repo_root`.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Bench:
    """One benchmark: its name (``bench/run NAME``, ``bench/results/NAME.json``) and what
    it measures."""

    name: str
    summary: str

    @property
    def module(self) -> str:
        """The driver module; its ``main(argv)`` runs the benchmark."""
        return f"sluice.bench.{self.name}"


#: Benchmark name -> benchmark, in the order ``bench/run --list`` shows them.
BENCHES: dict[str, Bench] = {b.name: b for b in (
    Bench("forwarding", "testpmd io-forwarding vs Sluice (cache on/off) vs OVS-DPDK: one in_port "
          "entry (TC1), 8-table chain, 32k-entry table, three-stage pipeline; 1, 10k, 1M flows"),
    Bench("io_floor", "the worker loop with no pipeline (bench/io_floor.patch) vs testpmd io "
          "and TC1: the highest ratio any pipeline can reach in Sluice's loop"),
    Bench("dispatch", "I/O-core schedulers: real ns/packet (rr, crc32, hrw, adaptive, ordered) "
          "and a simulation of them (throughput, loss, reordering), markdown + PNG"),
    Bench("stateful", "OpenState examples (MAC learning, port knocking) vs a stateless "
          "pipeline, 1 and 100,000 flows"),
    Bench("ffp", "fast forwarding path vs pipeline only: server/video/iov scenarios, "
          "throughput, per-class latency, long differential run"),
    Bench("flexforward", "FlexForward modes: ns/packet per mode, 8-switch hypercube "
          "RTT/jitter/TCP, lossless switchover, idle CPU"),
    Bench("decomposition", "the pipeline-decomposition study (Brockelsby and Dutta) with "
          "sluice-gen over memif: cases TC1-TC6 zero-loss throughput, rate sweep (latency, "
          "loss), longest loss-free goto chain; vs testpmd I/O limit"),
    Bench("pipeline_cost", "the pipeline alone (no I/O) on the decomposition cases TC1-TC6: "
          "ns/packet, ratios to TC1, TC4-TC6 spread"),
    Bench("attack", "mask attack: benign throughput under a tuple-space explosion over a "
          "2,000-distinct-mask ACL; distinct-mask flow_mod/barrier/telemetry latency, RSS and "
          "startup while the classifier rebuilds"),
    Bench("control", "OpenFlow control path: flow_mod rates (exact, mask), 100k-flow dump, "
          "packet_in round trip; vs OVS when installed"),
)}


def results_path(name: str) -> str:
    """Where benchmark @name writes its figures: bench/results/NAME.json of the source tree."""
    from sluice.testing import REPO

    return str(REPO / "bench" / "results" / f"{name}.json")


def arg_parser(name: str, doc: str | None, out: bool = True) -> argparse.ArgumentParser:
    """The argument parser of benchmark @name: @doc as its help and, with @out, ``--out``
    (default bench/results/NAME.json).  The benchmark adds its own options."""
    ap = argparse.ArgumentParser(prog=f"bench/run {name}", description=doc,
                                 formatter_class=argparse.RawTextHelpFormatter)
    if out:
        ap.add_argument("--out", default=results_path(name),
                        help=f"the JSON figures (default bench/results/{name}.json)")
    return ap


def write_results(out: str, results: Mapping[str, Any], table: Iterable[str] = (),
                  sort_keys: bool = True) -> None:
    """Print @table (the benchmark's summary lines), then write @results to @out as one flat
    JSON object and say so."""
    for line in table:
        print(line)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(results, f, indent=1, sort_keys=sort_keys)
        f.write("\n")
    print(f"\nwrote {out}")
