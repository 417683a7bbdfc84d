#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# fuzz/run.sh SECONDS: build the libFuzzer targets (if needed), seed their
# corpora and run each target for SECONDS; print executions and crashes per
# target and exit non-zero when any target crashed.
#
#   build dir   build-fuzz (CC=clang, -Dfuzz=true, ASan + UBSan everywhere)
#   corpora     build-fuzz/fuzz-corpus/<target>/ (kept between runs; seeded
#               from fuzz/corpus/ and from make_corpus)
#   targets     every fuzz/fuzz_*.c (fuzz/meson.build builds each); a target
#               fuzz_NAME whose inputs are not OpenFlow messages has its seeds
#               in fuzz/corpus-NAME/
#   crashes     build-fuzz/fuzz-artifacts/<target>/crash-* (also leak-,
#               oom-, timeout-); add each as a regression case to
#               src/ofp/test_ofp.c (fuzz_regressions[]) once fixed.
#   env         JOBS=N runs N parallel fuzzing jobs per target (default 1).
set -eu

secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
jobs=${JOBS:-1}

if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" "$root" -Dfuzz=true -Db_sanitize=address,undefined \
		-Db_lundef=false
fi
targets=$(cd "$root/fuzz" && ls fuzz_*.c | sed 's/\.c$//')
ninja -C "$build" $(for t in $targets; do printf 'fuzz/%s ' "$t"; done) fuzz/make_corpus

seeds=$build/fuzz-seeds
rm -rf "$seeds"
mkdir -p "$seeds"
"$build/fuzz/make_corpus" "$seeds" >/dev/null
cp "$root"/fuzz/corpus/* "$seeds"/ 2>/dev/null || true

# UBSan findings are fatal, except known ones in other components (ubsan.supp).
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$root/fuzz/ubsan.supp"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"

status=0
for t in $targets; do
	corpus=$build/fuzz-corpus/$t
	art=$build/fuzz-artifacts/$t
	log=$build/fuzz-$t.log
	mkdir -p "$corpus" "$art"
	own=$root/fuzz/corpus-${t#fuzz_} # e.g. corpus-json: telemetry replies, not OpenFlow
	if [ -d "$own" ]; then
		cp "$own"/* "$corpus"/
	else
		cp "$seeds"/* "$corpus"/
	fi
	before=$(ls "$art" | wc -l)
	rc=0
	if [ "$jobs" -gt 1 ]; then
		"$build/fuzz/$t" -max_total_time="$secs" -print_final_stats=1 \
			-artifact_prefix="$art/" -jobs="$jobs" -workers="$jobs" \
			"$corpus" >"$log" 2>&1 || rc=$?
		cat fuzz-*.log >>"$log" 2>/dev/null && rm -f fuzz-*.log
	else
		"$build/fuzz/$t" -max_total_time="$secs" -print_final_stats=1 \
			-artifact_prefix="$art/" "$corpus" >"$log" 2>&1 || rc=$?
	fi
	execs=$(grep -h 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
	after=$(ls "$art" | wc -l)
	crashes=$((after - before))
	printf '%-16s %12s executions in %ss, %d new crash file(s), exit %d, corpus %d\n' \
		"$t" "$execs" "$secs" "$crashes" "$rc" "$(ls "$corpus" | wc -l)"
	if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
		status=1
		grep -h -m5 -E 'ERROR|SUMMARY|runtime error' "$log" || true
		ls "$art" | tail -5
	fi
done
exit $status
