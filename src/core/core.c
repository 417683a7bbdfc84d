/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getc_unlocked under -std=c11 */
#endif
#include "core.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

void
sl_set_err(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || size == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
}

static const char *const drop_names[] = {
#define SL_DROP_NAME_(n, s) s,
	SL_FOREACH_DROP_REASON(SL_DROP_NAME_)
#undef SL_DROP_NAME_
};

const char *
sl_drop_reason_name(enum sl_drop_reason r)
{
	return (unsigned)r < SL_ARRAY_SIZE(drop_names) ? drop_names[r] : "unknown";
}

uint64_t
sl_lat_bucket_edge_ns(unsigned b)
{
	return b + 1 >= SL_LAT_BUCKETS ? UINT64_MAX : 1ull << (b + 8);
}

uint64_t
sl_lat_hist_quantile_ns(const struct sl_lat_hist *h, double q)
{
	uint64_t total = 0, need, seen = 0;

	for (unsigned b = 0; b < SL_LAT_BUCKETS; b++)
		total += h->bucket[b];
	if (total == 0)
		return 0;
	need = (uint64_t)(q * (double)total);
	if (need == 0)
		need = 1;
	for (unsigned b = 0; b < SL_LAT_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= need)
			return b + 1 >= SL_LAT_BUCKETS ? h->max_ns : sl_lat_bucket_edge_ns(b);
	}
	return h->max_ns;
}

long
sl_read_line(FILE *f, char **buf, size_t *cap, size_t max)
{
	size_t n = 0;
	int c;

	errno = 0;
	for (;;) {
		c = getc_unlocked(f);
		if (c == EOF)
			break;
		if (c == '\0')
			return -EILSEQ;
		if (n == max)
			return -E2BIG;
		if (n + 2 > *cap) {
			size_t ncap = *cap < 256 ? 256 : *cap * 2;
			char *nb;

			if (ncap > max + 2)
				ncap = max + 2;
			if ((nb = realloc(*buf, ncap)) == NULL)
				return -ENOMEM;
			*buf = nb;
			*cap = ncap;
		}
		(*buf)[n++] = (char)c;
		if (c == '\n')
			break;
	}
	if (c == EOF && ferror(f))
		return errno ? -errno : -EIO;
	if (n > 0)
		(*buf)[n] = '\0';
	return (long)n;
}

void *
sl_vec_grow_(void *v, size_t *cap, size_t want, size_t size)
{
	size_t ncap = *cap ? *cap : 16;
	void *nv;

	if (want <= *cap)
		return v;
	while (ncap < want && ncap <= SIZE_MAX / 2)
		ncap *= 2;
	if (ncap < want || ncap > SIZE_MAX / size || (nv = realloc(v, ncap * size)) == NULL)
		return v;
	*cap = ncap;
	return nv;
}

void *
sl_vec_zero_(void *elem, size_t size)
{
	return memset(elem, 0, size);
}

int
sl_dir_remove(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char file[4096];

	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		unlink(file);
	}
	closedir(d);
	return rmdir(path) == 0 ? 0 : -errno;
}
