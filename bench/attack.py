#!/usr/bin/env python3
"""Mask-attack benchmark: ``bench/run attack`` (the code is python/src/sluice/bench/attack.py)."""

import sys

from _entry import run

if __name__ == "__main__":
    sys.exit(run("attack"))
