/* SPDX-License-Identifier: BSD-3-Clause */
/* log: rte_log types and a timestamping stream.  Control path only. */
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../core/core.h"
#include "log.h"

#define SL_LOG_REGISTER_(c) RTE_LOG_REGISTER(sl_logtype_##c, sluice.c, NOTICE);
SL_FOREACH_LOG_TYPE(SL_LOG_REGISTER_)
#undef SL_LOG_REGISTER_

static const struct {
	const char *name;
	int *type;
} log_types[] = {
#define SL_LOG_ENTRY_(c) {"sluice." #c, &sl_logtype_##c},
	SL_FOREACH_LOG_TYPE(SL_LOG_ENTRY_)
#undef SL_LOG_ENTRY_
};

static const char *const level_names[] = {
	[RTE_LOG_EMERG] = "emerg", [RTE_LOG_ALERT] = "alert",     [RTE_LOG_CRIT] = "crit",
	[RTE_LOG_ERR] = "err",     [RTE_LOG_WARNING] = "warning", [RTE_LOG_NOTICE] = "notice",
	[RTE_LOG_INFO] = "info",   [RTE_LOG_DEBUG] = "debug",
};

int
sl_log_level_parse(const char *name)
{
	char *end;
	long v;

	if (name == NULL || *name == '\0')
		return -EINVAL;
	for (int l = (int)RTE_LOG_EMERG; l <= (int)RTE_LOG_DEBUG; l++)
		if (strcasecmp(name, level_names[l]) == 0)
			return l;
	if (strcasecmp(name, "error") == 0)
		return RTE_LOG_ERR;
	if (strcasecmp(name, "warn") == 0)
		return RTE_LOG_WARNING;
	v = strtol(name, &end, 10);
	if (*end == 0 && v >= (long)RTE_LOG_EMERG && v <= (long)RTE_LOG_DEBUG)
		return (int)v;
	return -EINVAL;
}

const char *
sl_log_level_name(int level)
{
	return level >= (int)RTE_LOG_EMERG && level <= (int)RTE_LOG_DEBUG ? level_names[level]
									  : "?";
}

int
sl_log_set(const char *pattern, const char *level, char *err, size_t err_size)
{
	char pat[128], full[136];
	const char *colon;
	int lvl, n = 0;

	if (level == NULL) {
		colon = pattern != NULL ? strrchr(pattern, ':') : NULL;
		if (colon == NULL || (size_t)(colon - pattern) >= sizeof(pat)) {
			snprintf(err, err_size, "'%s': expected TYPE:LEVEL",
				 pattern ? pattern : "");
			return -EINVAL;
		}
		memcpy(pat, pattern, (size_t)(colon - pattern));
		pat[colon - pattern] = '\0';
		level = colon + 1;
	} else {
		snprintf(pat, sizeof(pat), "%s", pattern);
	}
	lvl = sl_log_level_parse(level);
	if (lvl < 0) {
		snprintf(err, err_size,
			 "'%s': not a log level (emerg, alert, crit, err, warning, notice, info, "
			 "debug or 1..8)",
			 level);
		return -EINVAL;
	}
	/* A bare component name means its sluice.* type. */
	if (strchr(pat, '.') == NULL && strchr(pat, '*') == NULL)
		snprintf(full, sizeof(full), "sluice.%s", pat);
	else
		snprintf(full, sizeof(full), "%s", pat);
	for (size_t i = 0; i < SL_ARRAY_SIZE(log_types); i++)
		if (fnmatch(full, log_types[i].name, 0) == 0 &&
		    rte_log_set_level(*log_types[i].type, (uint32_t)lvl) == 0)
			n++;
	if (strncmp(full, "sluice.", 7) != 0) {
		/* DPDK's own types (lib.eal, pmd.net.*): rte_log decides what matches. */
		if (rte_log_set_level_pattern(full, (uint32_t)lvl) == 0)
			n++;
	}
	if (n == 0) {
		snprintf(err, err_size, "'%s': no such log type (sluice.* types: see /sluice/log)",
			 pat);
		return -EINVAL;
	}
	return n;
}

void
sl_log_types(void (*fn)(void *arg, const char *name, int level), void *arg)
{
	for (size_t i = 0; i < SL_ARRAY_SIZE(log_types); i++)
		fn(arg, log_types[i].name, rte_log_get_level(*log_types[i].type));
}

/*
 * The stream: rte_vlog() writes one message and flushes, so each write
 * call carries whole lines; a timestamp goes in front of every line start.
 */
static bool at_line_start = true;

static ssize_t
stamp_write(void *cookie, const char *buf, size_t size)
{
	(void)cookie;
	size_t done = 0;

	while (done < size) {
		if (at_line_start) {
			struct timeval tv;
			struct tm tm;
			char ts[40];
			int n;

			gettimeofday(&tv, NULL);
			gmtime_r(&tv.tv_sec, &tm);
			n = (int)strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
			/* The message's severity after the time, as syslog readers expect. */
			n += snprintf(ts + n, sizeof(ts) - (size_t)n, ".%06ldZ %s ",
				      (long)tv.tv_usec,
				      sl_log_level_name(rte_log_cur_msg_loglevel()));
			if (write(STDERR_FILENO, ts, (size_t)n) < 0)
				return -1;
			at_line_start = false;
		}
		const char *nl = memchr(buf + done, '\n', size - done);
		size_t len = nl != NULL ? (size_t)(nl - (buf + done)) + 1 : size - done;
		if (write(STDERR_FILENO, buf + done, len) < 0)
			return -1;
		done += len;
		if (nl != NULL)
			at_line_start = true;
	}
	return (ssize_t)size;
}

int
sl_log_init(void)
{
	static const cookie_io_functions_t io = {.write = stamp_write};
	FILE *f = fopencookie(NULL, "w", io);

	if (f == NULL)
		return -errno;
	/* Fully buffered: rte_vlog flushes after each message, so lines reach stamp_write whole. */
	setvbuf(f, NULL, _IOFBF, 4096);
	return rte_openlog_stream(f);
}
