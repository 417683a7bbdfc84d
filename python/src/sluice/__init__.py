"""Python side of the Sluice switch.

- :mod:`sluice.ofp`: a raw OpenFlow 1.3 client and ``struct`` message builders
  (no os-ken; fast enough to pre-encode 100,000 flow_mods).
- :mod:`sluice.testing`: start and stop a Sluice process, network namespaces and
  veth pairs with guaranteed cleanup, raw frame injection and capture.
- :mod:`sluice.apps`: os-ken controller apps (``python -m sluice.apps.run NAME``).
"""

__version__ = "0.1.0"
