/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl: messages and small parsers shared by the commands (control path).
 */
#include "sluicectl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct opts o;
struct sl_ctl_jw jw;

void
errmsg(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("sluicectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("sluicectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'sluicectl --help'.\n", stderr);
	return EXIT_USAGE;
}

/*
 * Small parsers.
 */

/* A decimal or 0x integer in [lo, hi]; false if @s is anything else. */
bool
parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || s[0] == '\0' || s[0] == '-' || s[0] == '+' || s[0] == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end != '\0' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

bool
parse_seconds(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	if (s == NULL || s[0] == '\0')
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end != '\0' || !(v >= lo && v <= hi))
		return false;
	*out = v;
	return true;
}

/* Join argv[from..argc) with spaces (the flow syntax treats blanks like commas). */
char *
join_args(int argc, char **argv, int from)
{
	size_t n = 1;
	char *s;

	for (int i = from; i < argc; i++)
		n += strlen(argv[i]) + 1;
	s = malloc(n);
	if (s == NULL)
		return NULL;
	s[0] = '\0';
	for (int i = from; i < argc; i++) {
		if (i > from)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

double
mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
