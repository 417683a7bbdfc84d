#!/usr/bin/env python3
"""Forwarding benchmark: ``bench/run forwarding`` (the code is python/src/sluice/bench/forwarding.py)."""

import sys

from _entry import run

if __name__ == "__main__":
    sys.exit(run("forwarding"))
