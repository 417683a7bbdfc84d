/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics: the HTTP/1.x request head parser (RFC 9112 sections 2-5, the
 * subset a scraper sends).  Control path; pure: it reads @buf[0..len) and
 * nothing else, so the fuzz target runs it on any bytes.
 *
 * It only decides the answer: the exporter serves one resource and closes
 * every connection, so no header value matters (a body, if any, is never
 * read).  Header lines are still checked for shape so that garbage gets a
 * 400 instead of a scrape.
 */
#include "metrics.h"

#include <string.h>

#define METHOD_MAX 16

/* RFC 9110 tchar: the characters of a method or a header name. */
static bool
is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* The line starting at @p (before @end): its length without CR LF, or -1 without LF. */
static long
line_len(const char *p, const char *end, const char **next)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	size_t n;

	if (nl == NULL)
		return -1;
	*next = nl + 1;
	n = (size_t)(nl - p);
	if (n > 0 && p[n - 1] == '\r')
		n--;
	return (long)n;
}

/*
 * The request line: METHOD SP TARGET SP HTTP/x.y.  Returns 0 when it is a
 * GET or another method well formed (*@get, *@metrics set), else 400/505.
 */
static int
request_line(const char *p, size_t n, bool *get, bool *metrics)
{
	const char *sp1 = memchr(p, ' ', n), *sp2, *target, *ver;
	size_t n_method, n_target, n_ver;

	if (sp1 == NULL)
		return 400;
	n_method = (size_t)(sp1 - p);
	if (n_method == 0 || n_method > METHOD_MAX)
		return 400;
	for (size_t i = 0; i < n_method; i++)
		if (!is_tchar((unsigned char)p[i]))
			return 400;
	target = sp1 + 1;
	sp2 = memchr(target, ' ', n - n_method - 1);
	if (sp2 == NULL)
		return 400;
	n_target = (size_t)(sp2 - target);
	if (n_target == 0)
		return 400;
	for (size_t i = 0; i < n_target; i++)
		if ((unsigned char)target[i] <= 0x20 || (unsigned char)target[i] >= 0x7f)
			return 400;
	ver = sp2 + 1;
	n_ver = n - (size_t)(ver - p);
	if (n_ver != 8 || memcmp(ver, "HTTP/", 5) != 0 || ver[6] != '.' || ver[5] < '0' ||
	    ver[5] > '9' || ver[7] < '0' || ver[7] > '9')
		return 400;
	if (ver[5] != '1' || (ver[7] != '0' && ver[7] != '1'))
		return 505;
	*get = n_method == 3 && memcmp(p, "GET", 3) == 0;
	*metrics = (n_target == 8 && memcmp(target, "/metrics", 8) == 0) ||
		   (n_target > 8 && memcmp(target, "/metrics?", 9) == 0);
	return 0;
}

/* A header field line: NAME ":" VALUE, NAME a token, VALUE visible text, SP or HTAB. */
static bool
header_line_ok(const char *p, size_t n)
{
	const char *colon = memchr(p, ':', n);

	if (colon == NULL || colon == p)
		return false;
	for (const char *c = p; c < colon; c++)
		if (!is_tchar((unsigned char)*c))
			return false; /* also refuses obsolete line folding (a leading SP) */
	for (const char *c = colon + 1; c < p + n; c++)
		if (((unsigned char)*c < 0x20 && *c != '\t') || (unsigned char)*c == 0x7f)
			return false;
	return true;
}

int
sl_metrics_request_parse(const char *buf, size_t len)
{
	const char *end, *p = buf, *next = NULL;
	bool get = false, metrics = false;
	long n;
	int rc;

	if (len > SL_METRICS_REQUEST_MAX)
		len = SL_METRICS_REQUEST_MAX; /* never look further than the limit */
	end = buf + len;
	n = line_len(p, end, &next);
	if (n < 0) {
		/* Incomplete request line: control bytes already make it garbage. */
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)buf[i] < 0x20 && buf[i] != '\r')
				return 400;
		return len == SL_METRICS_REQUEST_MAX ? 431 : 0;
	}
	rc = request_line(p, (size_t)n, &get, &metrics);
	if (rc != 0)
		return rc;
	for (p = next;; p = next) {
		n = line_len(p, end, &next);
		if (n < 0)
			return len == SL_METRICS_REQUEST_MAX ? 431 : 0;
		if (n == 0)
			break; /* the empty line: the head is complete */
		if (!header_line_ok(p, (size_t)n))
			return 400;
	}
	if (!get)
		return 405;
	return metrics ? 200 : 404;
}
