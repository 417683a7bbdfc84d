#!/usr/bin/env bash
# Run every test: C unit and differential tests (meson, suites 'fast' and 'stress'), then
# the pytest system tests that start the real binary.  Installs what is missing first.
# The 'perf' suite (bench_* with short arguments) is not run here: tests/README.md.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh || exit 1
status=0
echo "== C tests (meson test --suite fast --suite stress)"
meson test -C build --suite fast --suite stress --print-errorlogs || status=1
echo "== fuzzing (libFuzzer + ASan/UBSan, ${SL_FUZZ_SECONDS:-30} s per target)"
bash fuzz/run.sh "${SL_FUZZ_SECONDS:-30}" || status=1
echo "== sanitizers: the unit tests of suite 'sanitize' (meson.build) on the ASan/UBSan build"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# The suite is the list: build its executables (meson test would build every target), run it.
san_targets=$(meson introspect build-fuzz --tests | python3 -c '
import json, os, sys
paths = {t["cmd"][0] for t in json.load(sys.stdin) if "sluice:sanitize" in t["suite"]}
print(" ".join(sorted(os.path.relpath(p, "build-fuzz") for p in paths)))') &&
	[ -n "$san_targets" ] && ninja -C build-fuzz $san_targets >/dev/null &&
	meson test -C build-fuzz --suite sanitize --no-rebuild --print-errorlogs || status=1
echo "== C style: clang-format --dry-run --Werror (.clang-format) over every C file"
git ls-files -z '*.c' '*.h' | xargs -0 clang-format --dry-run --Werror || status=1
echo "== Python (python/, tests/): ruff check, mypy --strict, unit tests"
.venv/bin/ruff check --config python/pyproject.toml python/src python/tests tests || status=1
.venv/bin/mypy --config-file python/pyproject.toml python/src/sluice || status=1
.venv/bin/python -m pytest python/tests -q -p no:cacheprovider || status=1
echo "== Debian packages (scripts/deb.sh: dpkg-buildpackage from git archive HEAD, lintian)"
# tests/test_package.py then installs these into an overlay root (dpkg -i, start, -r, -P).
DEB_BUILD_OPTIONS=nocheck bash scripts/deb.sh build-deb || status=1
export SLUICE_DEB_DIR="$root/build-deb"
echo "== system tests (pytest)"
.venv/bin/python -m pytest tests -q -p no:cacheprovider || status=1
exit $status
