#!/usr/bin/env python3
"""FlexForward benchmark: ``bench/run flexforward`` (the code is python/src/sluice/bench/flexforward.py)."""

import sys

from _entry import run

if __name__ == "__main__":
    sys.exit(run("flexforward"))
