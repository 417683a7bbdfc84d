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
echo "== fuzzing (libFuzzer + ASan/UBSan, ${SL_FUZZ_SECONDS:-30} s per target)"
bash fuzz/run.sh "${SL_FUZZ_SECONDS:-30}" || status=1
echo "== sanitizers: pipeline concurrency, codec, channel and sluicectl client tests under ASan/UBSan"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
if ninja -C build-fuzz src/pipeline/test_pipeline_concurrent src/ofp/test_ofp \
	src/ofp/test_ofp_client src/ofconn/test_ofconn src/ctl/test_ctl_json \
	src/ctl/test_ctl_client src/dispatch/test_dispatch src/pipeline/test_pipeline_workers \
	src/state/test_state src/state/test_state_scalar src/flowfile/test_stateful_concurrent src/ofp/test_ofp_state \
	src/pipeline/test_ffp src/pipeline/test_pipeline_diff src/pipeline/test_meter src/ofp/test_ofp_meter \
	src/fwd/test_fwd src/fwd/test_fwd_concurrent src/ofp/test_ofp_fwd src/metrics/test_metrics >/dev/null; then
	build-fuzz/src/pipeline/test_pipeline_concurrent 100000 || status=1
	build-fuzz/src/pipeline/test_pipeline_concurrent 100000 deferred || status=1
	build-fuzz/src/pipeline/test_ffp >/dev/null || status=1
	build-fuzz/src/pipeline/test_pipeline_diff 200000 >/dev/null || status=1
	build-fuzz/src/pipeline/test_meter >/dev/null || status=1
	build-fuzz/src/ofp/test_ofp_meter >/dev/null || status=1
	build-fuzz/src/ofp/test_ofp >/dev/null || status=1
	build-fuzz/src/ofconn/test_ofconn >/dev/null || status=1
	build-fuzz/src/ofp/test_ofp_client >/dev/null || status=1
	build-fuzz/src/ctl/test_ctl_json >/dev/null || status=1
	build-fuzz/src/ctl/test_ctl_client >/dev/null || status=1
	build-fuzz/src/dispatch/test_dispatch >/dev/null || status=1
	build-fuzz/src/pipeline/test_pipeline_workers 5000 >/dev/null || status=1
	build-fuzz/src/state/test_state >/dev/null || status=1
	build-fuzz/src/state/test_state_scalar >/dev/null || status=1
	build-fuzz/src/flowfile/test_stateful_concurrent 300 >/dev/null || status=1
	build-fuzz/src/ofp/test_ofp_state >/dev/null || status=1
	build-fuzz/src/fwd/test_fwd >/dev/null || status=1
	build-fuzz/src/fwd/test_fwd_concurrent 20000 >/dev/null || status=1
	build-fuzz/src/ofp/test_ofp_fwd >/dev/null || status=1
	build-fuzz/src/metrics/test_metrics >/dev/null || status=1
else
	status=1
fi
echo "== Python package (python/): mypy --strict, unit tests"
.venv/bin/mypy --config-file python/pyproject.toml python/src/sluice || status=1
.venv/bin/python -m pytest python/tests -q -p no:cacheprovider || status=1
echo "== system tests (pytest)"
.venv/bin/python -m pytest tests -q -p no:cacheprovider || status=1
exit $status
