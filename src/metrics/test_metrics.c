/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the exporter's pure parts: the HTTP request head parser
 * (every status it can give, split at every byte) and the exposition
 * writer (escaping, number forms, histogram invariants).
 */
#include "metrics.h"

#include <math.h>

#include "../core/sl_test.h"

static int
parse(const char *s)
{
	return sl_metrics_request_parse(s, strlen(s));
}

static void
test_statuses(void)
{
	static const struct {
		const char *req;
		int status;
	} cases[] = {
		{"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n", 200},
		{"GET /metrics HTTP/1.0\r\n\r\n", 200},
		{"GET /metrics?x=1 HTTP/1.1\n\n", 200}, /* bare LF ends lines too */
		{"GET /metrics HTTP/1.1\r\nUser-Agent: Prometheus/2.42.0\r\n"
		 "Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5\r\n"
		 "Accept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n",
		 200},
		{"GET / HTTP/1.1\r\n\r\n", 404},
		{"GET /metricsX HTTP/1.1\r\n\r\n", 404},
		{"GET /metrics/ HTTP/1.1\r\n\r\n", 404},
		{"GET http://h/metrics HTTP/1.1\r\n\r\n", 404},
		{"POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\n", 405},
		{"HEAD /metrics HTTP/1.1\r\n\r\n", 405},
		{"get /metrics HTTP/1.1\r\n\r\n", 405}, /* methods are case-sensitive */
		{"GET /metrics HTTP/2.0\r\n\r\n", 505},
		{"GET /metrics HTTP/1.2\r\n\r\n", 505},
		{"GET /metrics HTTP/1.1 \r\n\r\n", 400},
		{"GET  /metrics HTTP/1.1\r\n\r\n", 400},
		{"GET /metrics\r\n\r\n", 400}, /* HTTP/0.9 */
		{"GET /metrics HTTP/x.1\r\n\r\n", 400},
		{"\r\n\r\n", 400},
		{"G(T /metrics HTTP/1.1\r\n\r\n", 400},
		{"GET /metrics HTTP/1.1\r\nNoColon\r\n\r\n", 400},
		{"GET /metrics HTTP/1.1\r\n: empty name\r\n\r\n", 400},
		{"GET /metrics HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400},
		{"GET /metrics HTTP/1.1\r\nHost: a\x01\r\n\r\n", 400},
		{"\x16\x03\x01\x02\x00", 400}, /* a TLS ClientHello, answered at once */
		{"GET /metrics HTTP/1.1\r\nHost: x\r\n", 0}, /* incomplete: read more */
		{"GET /metr", 0},
		{"", 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(parse(cases[i].req) == cases[i].status, "case %zu: %d, want %d", i,
		      parse(cases[i].req), cases[i].status);
	/* A NUL byte in the request line (strlen would hide it). */
	CHECK(sl_metrics_request_parse("GET /me\0rics HTTP/1.1\r\n\r\n", 25) == 400, "NUL");
}

/* Every prefix of a complete request is "read more" or the same answer: no early wrong answer. */
static void
test_split_reads(void)
{
	static const char *const reqs[] = {
		"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9464\r\nAccept: */*\r\n\r\n",
		"PUT /x HTTP/1.1\r\nA: b\r\n\r\n",
		"GET /nope HTTP/1.0\r\n\r\n",
	};
	static const int want[] = {200, 405, 404};

	for (size_t r = 0; r < 3; r++) {
		size_t n = strlen(reqs[r]);
		for (size_t k = 0; k < n; k++) {
			int s = sl_metrics_request_parse(reqs[r], k);
			CHECK(s == 0, "request %zu cut at %zu: %d", r, k, s);
		}
		CHECK(sl_metrics_request_parse(reqs[r], n) == want[r], "request %zu whole", r);
	}
}

static void
test_size_limit(void)
{
	size_t n = SL_METRICS_REQUEST_MAX + 100;
	char *big = malloc(n);
	const char *line = "GET /metrics HTTP/1.1\r\n";

	memset(big, 'a', n);
	CHECK(sl_metrics_request_parse(big, SL_METRICS_REQUEST_MAX - 1) == 0,
	      "long line, room left");
	CHECK(sl_metrics_request_parse(big, SL_METRICS_REQUEST_MAX) == 431,
	      "long line at the limit");
	CHECK(sl_metrics_request_parse(big, n) == 431, "past the limit");
	/* Many short, valid headers that never end. */
	memcpy(big, line, strlen(line));
	for (size_t i = strlen(line); i + 6 <= n; i += 6)
		memcpy(big + i, "A: b\r\n", 6);
	CHECK(sl_metrics_request_parse(big, SL_METRICS_REQUEST_MAX) == 431, "endless headers");
	free(big);
}

static bool
contains(const struct sl_metrics_text *t, const char *s)
{
	return t->buf != NULL && strstr(t->buf, s) != NULL;
}

static void
test_writer(void)
{
	struct sl_metrics_text t;
	const char *const labels[] = {"switch", "s1", "name", "a\"b\\c\nd", NULL};
	const double le[] = {256e-9, 512e-9, 1024e-9};
	const uint64_t counts[] = {3, 0, 5, 2};

	sl_metrics_text_init(&t);
	sl_metrics_family(&t, "sluice_x_total", SL_METRICS_COUNTER, "Help with \\ and\nnewline");
	sl_metrics_u64(&t, "sluice_x_total", labels, UINT64_MAX);
	sl_metrics_u64(&t, "sluice_x_total", NULL, 0);
	CHECK(contains(&t, "# HELP sluice_x_total Help with \\\\ and\\nnewline\n"), "%s", t.buf);
	CHECK(contains(&t, "# TYPE sluice_x_total counter\n"), "%s", t.buf);
	CHECK(contains(&t, "sluice_x_total{switch=\"s1\",name=\"a\\\"b\\\\c\\nd\"} "
			   "18446744073709551615\n"),
	      "%s", t.buf);
	CHECK(contains(&t, "\nsluice_x_total 0\n"), "%s", t.buf);
	sl_metrics_text_free(&t);

	sl_metrics_family(&t, "g", SL_METRICS_GAUGE, "");
	sl_metrics_f64(&t, "g", NULL, 0.1);
	sl_metrics_f64(&t, "g", NULL, 1e-9 * 3);
	sl_metrics_f64(&t, "g", NULL, INFINITY);
	sl_metrics_f64(&t, "g", NULL, NAN);
	sl_metrics_f64(&t, "g", NULL, 12345);
	sl_metrics_f64(&t, "g", NULL, 4461440);
	sl_metrics_f64(&t, "g", NULL, -2);
	sl_metrics_f64(&t, "g", NULL, 1e300);
	CHECK(contains(&t, "\ng 0.1\ng 3.0000000000000004e-09\ng +Inf\ng NaN\ng 12345\n"
			   "g 4461440\ng -2\ng 1e+300\n"),
	      "%s", t.buf);
	sl_metrics_text_free(&t);

	sl_metrics_family(&t, "h_seconds", SL_METRICS_HISTOGRAM, "h");
	sl_metrics_histogram(&t, "h_seconds", (const char *const[]){"switch", "s", NULL}, le,
			     counts, 4, 0.5);
	CHECK(contains(&t, "# TYPE h_seconds histogram\n"
			   "h_seconds_bucket{switch=\"s\",le=\"2.56e-07\"} 3\n"
			   "h_seconds_bucket{switch=\"s\",le=\"5.12e-07\"} 3\n"
			   "h_seconds_bucket{switch=\"s\",le=\"1.024e-06\"} 8\n"
			   "h_seconds_bucket{switch=\"s\",le=\"+Inf\"} 10\n"
			   "h_seconds_sum{switch=\"s\"} 0.5\n"
			   "h_seconds_count{switch=\"s\"} 10\n"),
	      "%s", t.buf);
	CHECK(!t.failed, "not failed");
	sl_metrics_text_free(&t);

	/* The size cap: writing past it marks the text failed and keeps it bounded. */
	{
		char big[4096];
		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		for (unsigned i = 0; i < (SL_METRICS_TEXT_MAX / sizeof(big)) + 2 && !t.failed; i++)
			sl_metrics_family(&t, "n", SL_METRICS_GAUGE, big);
		CHECK(t.failed && t.len <= SL_METRICS_TEXT_MAX, "capped at %zu", t.len);
		sl_metrics_text_free(&t);
	}
}

int
main(void)
{
	test_statuses();
	test_split_reads();
	test_size_limit();
	test_writer();
	return sl_test_summary();
}
