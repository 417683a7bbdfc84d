/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_test: the check macro C unit tests share.  Include it from test_*.c
 * only (it defines the pass/fail counters of its translation unit).
 * A test's main() ends with `return sl_test_summary();`, which prints the
 * "N passed, M failed" line test runners read.
 */
#ifndef SL_TEST_H
#define SL_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <unistd.h>

static unsigned n_pass, n_fail;

/** Count a check; the first 20 failures print location, condition and a printf-style message. */
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			n_pass++;                                                                  \
		} else if (++n_fail <= 20) {                                                       \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

/** Print the summary line; returns the process exit code (0 when nothing failed). */
static inline int
sl_test_summary(void)
{
	printf("%u passed, %u failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

/** Spins of sl_test_relax before it sleeps: a few times a test worker's burst (2-10 us). */
#define SL_TEST_SPINS 1024

/**
 * One round of waiting for another thread (a concurrent test's grace period);
 * @spins counts the rounds, start it at 0.  Spins with pause at first, then
 * sleeps 10 us a round, as worker.c's sl_worker_sync does: when the thread
 * waited for shares this CPU (a loaded 2-core runner), spinning on keeps it
 * off until the time slice ends, some ms per wait.  sched_yield did not help
 * (Linux 6.18): the scheduler ran the yielder again, the other thread not.
 */
static inline void
sl_test_relax(unsigned *spins)
{
	if (*spins < SL_TEST_SPINS) {
		(*spins)++;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	} else {
		usleep(10);
	}
}

/**
 * Parse hex digits (either case) into @out, skipping any other characters
 * (spaces, '|', newlines), so golden vectors can be written as in the docs.
 * Aborts when more than @max bytes result.  Returns the byte count.
 */
static inline size_t
sl_test_hex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;
	int hi = -1;

	for (; *s; s++) {
		int v;
		if (*s >= '0' && *s <= '9')
			v = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			v = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			v = *s - 'A' + 10;
		else
			continue;
		if (hi < 0) {
			hi = v;
		} else {
			if (n >= max)
				abort();
			out[n++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	return n;
}

static inline void
sl_test_dump(const char *what, const uint8_t *p, size_t n)
{
	fprintf(stderr, "  %s (%zu bytes):", what, n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%02x", i % 16 ? " " : "\n    ", p[i]);
	fputc('\n', stderr);
}

/** Check encoder output against golden hex (sl_test_hex); on a difference, print both. */
static inline void
sl_test_check_bytes(const char *name, const uint8_t *got, size_t n_got, const char *want_hex)
{
	static uint8_t want[70000];
	size_t n = sl_test_hex(want_hex, want, sizeof(want));
	bool ok = n == n_got && memcmp(want, got, n) == 0;

	CHECK(ok, "%s: encoding differs from the golden bytes", name);
	if (!ok) {
		sl_test_dump("want", want, n);
		sl_test_dump("got", got, n_got);
	}
}

#endif /* SL_TEST_H */
