"""os-ken OpenFlow 1.3 controller apps; start one with ``python -m sluice.apps.run NAME``."""

#: App names accepted by ``sluice.apps.run`` -> importable os-ken app module.
APPS: dict[str, str] = {
    "learning_switch": "sluice.apps.learning_switch",
    "flexforward": "sluice.apps.flexforward",
    "policer": "sluice.apps.policer",
}
