#!/usr/bin/env python3
"""Decomposition benchmark (seed 001): ``bench/run decomposition`` (the code is python/src/sluice/bench/decomposition.py)."""

import sys

from _entry import run

if __name__ == "__main__":
    sys.exit(run("decomposition"))
