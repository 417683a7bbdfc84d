#!/usr/bin/env python3
"""Control-path benchmark: ``bench/run control`` (the code is python/src/sluice/bench/control.py)."""

import sys

from _entry import run

if __name__ == "__main__":
    sys.exit(run("control"))
