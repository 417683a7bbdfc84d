/* SPDX-License-Identifier: BSD-3-Clause */
#include "core.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

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
