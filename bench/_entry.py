"""What every bench/NAME.py wrapper does: find the ``sluice`` package (the project venv, else
python/src), then run ``sluice.bench.NAME.main()`` (python/src/sluice/bench/NAME.py has the
code)."""

import importlib
import os
import sys
from types import ModuleType

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".venv")


def _module(name: str) -> ModuleType:
    try:
        return importlib.import_module(f"sluice.bench.{name}")
    except ImportError:
        pass
    # bench/run uses the system python3: re-run under the project venv if there is one,
    # else import the package from the source tree (children inherit PYTHONPATH).
    venv_py = os.path.join(VENV, "bin", "python")
    if os.path.exists(venv_py) and os.path.realpath(sys.prefix) != os.path.realpath(VENV):
        os.execv(venv_py, [venv_py, *sys.argv])
    src = os.path.join(ROOT, "python", "src")
    sys.path.insert(0, src)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))
    return importlib.import_module(f"sluice.bench.{name}")


def run(name: str) -> int:
    """Run benchmark @name with this process's arguments; returns its exit code."""
    os.environ.setdefault("SLUICE_ROOT", ROOT)
    return int(_module(name).main() or 0)
