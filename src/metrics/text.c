/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics: the Prometheus text exposition writer (format 0.0.4).  Control
 * path; pure.  Counters print as exact integers (a double would round
 * above 2^53); seconds print with the fewest digits that read back as the
 * same double (2.56e-07, not 2.5599999999999999e-07).
 */
#include "metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
sl_metrics_text_init(struct sl_metrics_text *t)
{
	memset(t, 0, sizeof(*t));
}

void
sl_metrics_text_free(struct sl_metrics_text *t)
{
	free(t->buf);
	sl_metrics_text_init(t);
}

/* Room for @n more bytes plus a NUL; false (and failed set) when there is none. */
static bool
reserve(struct sl_metrics_text *t, size_t n)
{
	size_t cap;
	char *b;

	if (t->failed)
		return false;
	if (t->len + n + 1 <= t->cap)
		return true;
	if (t->len + n + 1 > SL_METRICS_TEXT_MAX) {
		t->failed = true;
		return false;
	}
	cap = t->cap ? t->cap : 16384;
	while (cap < t->len + n + 1)
		cap *= 2;
	if (cap > SL_METRICS_TEXT_MAX)
		cap = SL_METRICS_TEXT_MAX;
	b = realloc(t->buf, cap);
	if (b == NULL) {
		t->failed = true;
		return false;
	}
	t->buf = b;
	t->cap = cap;
	return true;
}

static void
put(struct sl_metrics_text *t, const char *s, size_t n)
{
	if (!reserve(t, n))
		return;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

static void
puts_(struct sl_metrics_text *t, const char *s)
{
	put(t, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3)))
putf(struct sl_metrics_text *t, const char *fmt, ...)
{
	char small[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	put(t, small, (size_t)n < sizeof(small) ? (size_t)n : sizeof(small) - 1);
}

/* Escape @s: label values escape \, " and newline; HELP text only \ and newline. */
static void
put_escaped(struct sl_metrics_text *t, const char *s, bool quote)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\')
			puts_(t, "\\\\");
		else if (*s == '\n')
			puts_(t, "\\n");
		else if (*s == '"' && quote)
			puts_(t, "\\\"");
		else
			put(t, s, 1);
	}
}

void
sl_metrics_family(struct sl_metrics_text *t, const char *name, enum sl_metrics_type type,
		  const char *help)
{
	static const char *const types[] = {"counter", "gauge", "histogram"};

	puts_(t, "# HELP ");
	puts_(t, name);
	puts_(t, " ");
	put_escaped(t, help, false);
	puts_(t, "\n# TYPE ");
	puts_(t, name);
	puts_(t, " ");
	puts_(t, types[type]);
	puts_(t, "\n");
}

/* name{k="v",...[,le="E"]} -- @le NULL: no le label. */
static void
put_series(struct sl_metrics_text *t, const char *name, const char *suffix,
	   const char *const labels[], const char *le)
{
	bool first = true;

	puts_(t, name);
	puts_(t, suffix);
	if ((labels == NULL || labels[0] == NULL) && le == NULL)
		return;
	puts_(t, "{");
	for (unsigned i = 0; labels != NULL && labels[i] != NULL; i += 2) {
		if (!first)
			puts_(t, ",");
		puts_(t, labels[i]);
		puts_(t, "=\"");
		put_escaped(t, labels[i + 1] != NULL ? labels[i + 1] : "", true);
		puts_(t, "\"");
		first = false;
	}
	if (le != NULL) {
		if (!first)
			puts_(t, ",");
		puts_(t, "le=\"");
		puts_(t, le);
		puts_(t, "\"");
	}
	puts_(t, "}");
}

/* @v in the shortest %g form that round-trips (at most 17 digits do). */
static void
fmt_f64(char *buf, size_t size, double v)
{
	if (isnan(v)) {
		snprintf(buf, size, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, size, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (fabs(v) < 9007199254740992.0 && v == (double)(int64_t)v) { /* whole, exact: 4461440 */
		snprintf(buf, size, "%" PRId64, (int64_t)v);
		return;
	}
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

static void
put_f64(struct sl_metrics_text *t, double v)
{
	char buf[40];

	fmt_f64(buf, sizeof(buf), v);
	puts_(t, buf);
}

void
sl_metrics_u64(struct sl_metrics_text *t, const char *name, const char *const labels[],
	       uint64_t value)
{
	put_series(t, name, "", labels, NULL);
	putf(t, " %" PRIu64 "\n", value);
}

void
sl_metrics_f64(struct sl_metrics_text *t, const char *name, const char *const labels[],
	       double value)
{
	put_series(t, name, "", labels, NULL);
	puts_(t, " ");
	put_f64(t, value);
	puts_(t, "\n");
}

void
sl_metrics_histogram(struct sl_metrics_text *t, const char *name, const char *const labels[],
		     const double le[], const uint64_t counts[], unsigned n, double sum)
{
	uint64_t cum = 0;
	char edge[40];

	for (unsigned b = 0; b < n; b++) {
		cum += counts[b];
		if (b + 1 < n)
			fmt_f64(edge, sizeof(edge), le[b]);
		else
			snprintf(edge, sizeof(edge), "+Inf");
		put_series(t, name, "_bucket", labels, edge);
		putf(t, " %" PRIu64 "\n", cum);
	}
	put_series(t, name, "_sum", labels, NULL);
	puts_(t, " ");
	put_f64(t, sum);
	puts_(t, "\n");
	put_series(t, name, "_count", labels, NULL);
	putf(t, " %" PRIu64 "\n", cum);
}
