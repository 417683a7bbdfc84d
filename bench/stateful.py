#!/usr/bin/env python3
"""Stateful forwarding benchmark: ``bench/run stateful`` (the code is python/src/sluice/bench/stateful.py)."""

import sys

from _entry import run

if __name__ == "__main__":
    sys.exit(run("stateful"))
