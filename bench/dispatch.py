#!/usr/bin/env python3
"""Dispatch benchmark: ``bench/run dispatch`` (the code is python/src/sluice/bench/dispatch.py)."""

import sys

from _entry import run

if __name__ == "__main__":
    sys.exit(run("dispatch"))
