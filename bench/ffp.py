#!/usr/bin/env python3
"""FFP benchmark: ``bench/run ffp`` (the code is python/src/sluice/bench/ffp.py)."""

import sys

from _entry import run

if __name__ == "__main__":
    sys.exit(run("ffp"))
