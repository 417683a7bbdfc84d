/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_http: the metrics exporter's HTTP request parser and exposition
 * writer on arbitrary bytes (libFuzzer).
 *
 * Oracles beyond ASan/UBSan (a failure aborts):
 *  - the parser answers one of its statuses; at or past
 *    SL_METRICS_REQUEST_MAX bytes it never asks for more; 200 only for a
 *    request that starts "GET /metrics";
 *  - the answer for a prefix is "read more" or the answer for the whole
 *    input when the whole input decided at 400/505 on its request line
 *    (checked at every prefix length for short inputs);
 *  - the input written as a HELP text and as a label value gives exactly
 *    three lines (HELP, TYPE, sample): escaping never lets a byte of the
 *    input start a line of its own.
 */
#include "../src/metrics/metrics.h"

#include <stdlib.h>
#include <string.h>

static bool
status_known(int s)
{
	return s == 0 || s == 200 || s == 400 || s == 404 || s == 405 || s == 431 || s == 505;
}

static void
check_parser(const char *buf, size_t len)
{
	int s = sl_metrics_request_parse(buf, len);

	if (!status_known(s))
		abort();
	if (len >= SL_METRICS_REQUEST_MAX && s == 0)
		abort();
	if (s == 200 && (len < 12 || memcmp(buf, "GET /metrics", 12) != 0))
		abort();
	if (len <= 512) {
		for (size_t k = 0; k < len; k++) {
			int p = sl_metrics_request_parse(buf, k);
			/* A prefix may already see garbage (400) the whole also sees: never 2xx/4xx else. */
			if (p != 0 && p != s)
				abort();
		}
	}
}

static void
check_writer(const char *buf, size_t len)
{
	struct sl_metrics_text t;
	char *s = malloc(len + 1);
	size_t lines = 0;

	if (s == NULL)
		return;
	memcpy(s, buf, len);
	s[len] = '\0'; /* label values and help are C strings: the part before any NUL */
	sl_metrics_text_init(&t);
	sl_metrics_family(&t, "sluice_fuzz_total", SL_METRICS_COUNTER, s);
	sl_metrics_u64(&t, "sluice_fuzz_total", (const char *const[]){"switch", s, "name", s, NULL},
		       1);
	if (!t.failed) {
		for (size_t i = 0; i < t.len; i++)
			lines += t.buf[i] == '\n';
		if (lines != 3 || t.buf[t.len - 1] != '\n')
			abort();
	}
	sl_metrics_text_free(&t);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_parser((const char *)data, size);
	check_writer((const char *)data, size);
	return 0;
}
