"""``python -m sluice.bench NAME [ARGS...]`` runs one benchmark (what ``bench/run`` does);
``--list`` lists them (:data:`sluice.bench.BENCHES`)."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

from sluice.bench import BENCHES
from sluice.testing import REPO


def usage() -> str:
    """The usage line and one line per benchmark."""
    lines = ["usage: bench/run NAME [ARGS...]   (bench/run NAME --help: its options)"]
    lines += [f"  {b.name:<14} {b.summary}" for b in BENCHES.values()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark @argv[0] with the rest of @argv; returns its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("--list", "-h", "--help"):
        print(usage())
        return 2 if not args else 0
    bench = BENCHES.get(args[0])
    if bench is None:
        print(f"bench/run: unknown benchmark '{args[0]}' (see bench/run --list)", file=sys.stderr)
        return 2
    # Children (switches, generators, helper scripts) find the same source tree.
    os.environ.setdefault("SLUICE_ROOT", str(REPO))
    return int(importlib.import_module(bench.module).main(args[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main())
