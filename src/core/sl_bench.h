/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_bench: the clock and sorting helpers the bench_*.c micro-benchmarks
 * share.  Include it from bench_*.c only (x86, TSC-based); not part of
 * any component's interface.
 */
#ifndef SL_BENCH_H
#define SL_BENCH_H

#include <stdint.h>
#include <time.h>
#include <x86intrin.h>

/** Monotonic wall time in seconds. */
static inline double
sl_bench_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/** TSC ticks per second, measured against the monotonic clock over 0.2 s. */
static inline double
sl_bench_tsc_hz(void)
{
	double t0 = sl_bench_now_s();
	uint64_t c0 = __rdtsc();
	while (sl_bench_now_s() - t0 < 0.2)
		;
	return (double)(__rdtsc() - c0) / (sl_bench_now_s() - t0);
}

/** qsort comparators, ascending. */
static inline int
sl_bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static inline int
sl_bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

#endif /* SL_BENCH_H */
