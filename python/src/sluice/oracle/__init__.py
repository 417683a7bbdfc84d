"""A differential oracle: the same random OpenFlow 1.3 rules and packets through Sluice and
a private Open vSwitch, outcomes compared packet by packet (tests/test_ovs_oracle.py).

- :mod:`sluice.oracle.frames`: frames built byte by byte, tags that map outputs back to
  inputs, a header parser for the classifier and the allowlist.
- :mod:`sluice.oracle.rules`: the seeded rule-set and packet generators.
- :mod:`sluice.oracle.ovs`: ovs-vswitchd with netdev-dummy ports in a private run dir and
  network namespace.
- :mod:`sluice.oracle.harness`: both switches, batches, comparison, mismatch classes,
  reports and rule-set minimisation.

Standard library only; needs root, iproute2 and Open vSwitch (``openvswitch-switch``).
"""
