"""Python side of the Sluice switch (one import path: ``sluice``).

- :mod:`sluice.ofp`: a raw OpenFlow 1.3 client and ``struct`` message builders, Sluice's
  experimenter extensions (table declarations, raw-field and nw_ttl OXMs) and error
  names (no os-ken; fast enough to pre-encode 100,000 flow_mods).
- :mod:`sluice.osken`: os-ken helpers for the experimenter messages (needs the
  ``apps`` extra).
- :mod:`sluice.telemetry`: a DPDK telemetry client with Sluice's commands typed.
- :mod:`sluice.testing`: start and stop a Sluice process, network namespaces and
  veth pairs with guaranteed cleanup, raw frame injection and capture.
- :mod:`sluice.apps`: os-ken controller apps (``python -m sluice.apps.run NAME``).
- :mod:`sluice.bench`: benchmark drivers, listed in ``sluice.bench.BENCHES`` (``bench/run NAME``
  or ``python -m sluice.bench NAME``).

Everything but :mod:`sluice.osken` and :mod:`sluice.apps` uses the standard library only.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
