#!/usr/bin/env python3
"""Decomposition benchmark (seed 001): a thin wrapper around ``python -m sluice.bench.decomposition``
(python/src/sluice/bench/decomposition.py has the code)."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".venv")
os.environ.setdefault("SLUICE_ROOT", ROOT)

try:
    from sluice.bench import decomposition
except ImportError:
    # bench/run uses the system python3: re-run under the project venv if there is one,
    # else import the package from the source tree (children inherit PYTHONPATH).
    venv_py = os.path.join(VENV, "bin", "python")
    if os.path.exists(venv_py) and os.path.realpath(sys.prefix) != os.path.realpath(VENV):
        os.execv(venv_py, [venv_py, *sys.argv])
    src = os.path.join(ROOT, "python", "src")
    sys.path.insert(0, src)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))
    from sluice.bench import decomposition

if __name__ == "__main__":
    sys.exit(decomposition.main())
