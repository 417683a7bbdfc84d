#!/usr/bin/env python3
"""No-I/O pipeline cost of the decomposition cases: ``bench/run pipeline_cost`` (the code is python/src/sluice/bench/pipeline_cost.py)."""

import sys

from _entry import run

if __name__ == "__main__":
    sys.exit(run("pipeline_cost"))
