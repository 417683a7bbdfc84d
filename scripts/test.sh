#!/usr/bin/env bash
# Run every test: C unit and differential tests (meson, suite 'fast'), then the
# pytest system tests that start the real binary.  Installs what is missing first.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh || exit 1
status=0
echo "== C tests (meson test --suite fast)"
meson test -C build --suite fast --print-errorlogs || status=1
echo "== system tests (pytest)"
.venv/bin/python -m pytest tests -q -p no:cacheprovider || status=1
exit $status
