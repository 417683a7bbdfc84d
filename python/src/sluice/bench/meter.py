"""Meter accuracy (part of ``bench/run control``): the rate a meter lets through, measured with
sluice-gen, against the rate it is configured with.

Topology as in the decomposition benchmark: sluice-gen (core 0) --net_memif--> switch port 1,
switch port 2 --net_memif--> sluice-gen; the switch's datapath on core 1.  One switch holds a
meter per trial, each the only instruction before ``output:2`` of the flow matching its
stream's UDP destination port:

  pktps meters at 1, 10, 100 and 1,000 kpps;
  kbps meters at the same packet rates' worth of kilobits (129-byte frames: 125 bytes
  without the FCS, one kilobit each, so R kbps admits R frames a second).

Each band drops; its burst is 10 ms of its rate (at least 10 packets).  Per trial sluice-gen
offers twice the rate for --meter-seconds; the measured rate is the frames received over the
time it took to send them (tx / tx_pps), and

  meter_rate_error_<unit>_<rate> = |measured - configured| / configured  (median over rounds)
  meter_rate_error_max            = the largest of them

The burst adds at most 10 ms of the rate to each trial (0.5 % of 2 s): it is part of the
error reported, not subtracted.  A trial whose generator sent less than 1.5x the rate is an
error (the meter would not be what limits it).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from sluice.bench import decomposition as dc
from sluice.testing import unique

RATES = [1_000, 10_000, 100_000, 1_000_000]
UNITS = ["pktps", "kbps"]
FRAME = 129  # bytes with the FCS: 125 on the wire to the switch, 1 kbit
BASE_PORT = 5000


def _label(rate: int) -> str:
    return f"{rate // 1_000_000}m" if rate >= 1_000_000 else f"{rate // 1000}k"


def trials() -> list[tuple[int, str, int]]:
    """(meter id, unit, packets per second) of every trial."""
    out: list[tuple[int, str, int]] = []
    for u in UNITS:
        for r in RATES:
            out.append((len(out) + 1, u, r))
    return out


def flow_file() -> list[str]:
    lines = []
    for mid, unit, pps in trials():
        burst = max(pps // 100, 10)  # 10 ms, in packets or (one per packet) kilobits
        lines.append(f"meter={mid},{unit},burst,stats,bands=type=drop,rate={pps},"
                     f"burst_size={burst}")
        lines.append(f"priority=10,udp,tp_dst={BASE_PORT + mid},actions=meter:{mid},output:2")
    return lines


class MeterSwitch(dc.SluiceDevice):
    """Sluice with the meters and flows of flow_file() (the decomposition bench's device)."""

    def flow_lines(self) -> list[str]:
        return flow_file()


def stream(mid: int, pps: int) -> str:
    return (f"name=m{mid},size={FRAME},pps={2 * pps},proto=udp,sport=1000,"
            f"dport={BASE_PORT + mid},ip_src=10.0.0.1,ip_dst=10.0.0.2")


def run(tmp: str, rounds: int, seconds: float,
        log: Callable[[str], None] = print) -> dict[str, float]:
    """The meter figures (see the module's doc string)."""
    samples: dict[str, list[float]] = {}
    sw = MeterSwitch("meter", tmp)
    sw.start()
    try:
        gen = sw.open_gen(0.0)
        try:
            for rnd in range(rounds):
                for mid, unit, pps in trials():
                    t = gen.run([stream(mid, pps)], seconds, "meter", FRAME, 0.0)
                    if t.tx_pps < 1.5 * pps:
                        raise RuntimeError(f"meter {mid}: the generator sent {t.tx_pps:,.0f} "
                                           f"frames/s, under 1.5x the rate {pps:,}")
                    send_s = t.tx / t.tx_pps
                    measured = t.rx / send_s
                    key = f"{unit}_{_label(pps)}"
                    samples.setdefault(f"meter_measured_pps_{key}", []).append(measured)
                    samples.setdefault(f"meter_rate_error_{key}", []).append(
                        abs(measured - pps) / pps)
                    log(f"  meter round {rnd + 1}/{rounds}: {unit} {pps:>9,}/s offered "
                        f"{t.tx_pps:>11,.0f}/s -> {measured:>11,.1f}/s "
                        f"(error {abs(measured - pps) / pps * 100:.2f} %)")
        finally:
            sw.close_gen()
    finally:
        sw.stop()
    out = {k: round(statistics.median(v), 4 if "error" in k else 1) for k, v in samples.items()}
    out["meter_rate_error_max"] = max(v for k, v in out.items() if k.startswith("meter_rate_err"))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the meter trials alone: python -m sluice.bench.meter [ROUNDS [SECONDS]]."""
    import sys
    import tempfile
    args = list(argv if argv is not None else sys.argv[1:])
    rounds = int(args[0]) if args else 1
    seconds = float(args[1]) if len(args) > 1 else 2.0
    with tempfile.TemporaryDirectory(prefix=unique("slbench-meter-")) as tmp:
        res = run(tmp, rounds, seconds)
    for k in sorted(res):
        print(f"{k:<36} {res[k]:>14,.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
