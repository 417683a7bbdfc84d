/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fmemopen */
#endif
/* test_core: drop-reason names, the latency histogram, the bounded line reader, sl_vec. */
#include <errno.h>
#include <string.h>

#include "core.h"
#include "sl_test.h"

/* sl_read_line over @text (@n bytes): the results of successive calls, as a string. */
static void
read_lines(const char *text, size_t n, size_t max, char *out, size_t out_size)
{
	FILE *f = fmemopen((void *)text, n, "r");
	char *buf = NULL;
	size_t cap = 0, used = 0;
	long got;

	out[0] = '\0';
	do {
		got = sl_read_line(f, &buf, &cap, max);
		used += (size_t)snprintf(out + used, out_size - used, "%ld%s", got,
					 got > 0 && buf[got - 1] == '\n' ? "n," : ",");
	} while (got > 0 && used < out_size);
	free(buf);
	fclose(f);
}

static void
test_read_line(void)
{
	char out[128];

	read_lines("ab\ncde\n\nlast", 12, 100, out, sizeof(out));
	CHECK(strcmp(out, "3n,4n,1n,4,0,") == 0, "lines: %s", out);
	read_lines("", 0, 100, out, sizeof(out));
	CHECK(strcmp(out, "0,") == 0, "empty file: %s", out);
	read_lines("0123456789\n", 11, 8, out, sizeof(out));
	CHECK(strcmp(out, "-7,") == 0, "too long is -E2BIG: %s", out); /* E2BIG = 7 */
	read_lines("ok\nbad\0tail\n", 13, 100, out, sizeof(out));
	CHECK(strcmp(out, "3n,-84,") == 0, "a NUL is -EILSEQ: %s", out); /* EILSEQ = 84 */
	CHECK(E2BIG == 7 && EILSEQ == 84, "errno values the strings assume");
}

/* sl_vec: pushes keep earlier elements, zero the new one, and grow by doubling. */
static void
test_vec(void)
{
	SL_VEC(uint64_t) a = {0};
	struct {
		char (*v)[100];
		size_t n, cap;
	} big = {0};
	uint64_t *e;

	for (uint64_t i = 0; i < 1000; i++) {
		e = sl_vec_push(&a);
		CHECK(e != NULL && *e == 0, "push %lu", (unsigned long)i);
		*e = i * 3;
	}
	CHECK(a.n == 1000 && a.cap == 1024, "n %zu cap %zu", a.n, a.cap);
	for (size_t i = 0; i < a.n; i++)
		CHECK(a.v[i] == i * 3, "element %zu kept", i);
	CHECK(sl_vec_reserve(&a, 1024) == 0 && a.cap == 1024, "room already there");
	CHECK(sl_vec_reserve(&a, 1025) == 0 && a.cap == 2048 && a.v[999] == 2997, "doubles");
	sl_vec_free(&a);
	CHECK(a.v == NULL && a.n == 0 && a.cap == 0, "freed");
	/* An impossible size fails and leaves the vector as it was. */
	CHECK(sl_vec_push(&big) != NULL && big.cap == 16, "first push");
	CHECK(sl_vec_reserve(&big, SIZE_MAX / 2) == -ENOMEM && big.cap == 16 && big.n == 1,
	      "overflow is -ENOMEM, vector unchanged");
	sl_vec_free(&big);
}

int
main(void)
{
	struct sl_lat_hist h;

	test_read_line();
	test_vec();

	CHECK(strcmp(sl_drop_reason_name(SL_DROP_TABLE_MISS), "table-miss") == 0, "name");
	CHECK(strcmp(sl_drop_reason_name(SL_DROP__MAX), "unknown") == 0, "out of range");

	memset(&h, 0, sizeof(h));
	CHECK(sl_lat_hist_quantile_ns(&h, 0.5) == 0, "empty");
	sl_lat_hist_add(&h, 100, 1);   /* bucket 0: < 256 */
	sl_lat_hist_add(&h, 256, 1);   /* bucket 1: [256, 512) */
	sl_lat_hist_add(&h, 1000, 98); /* bucket 2: [512, 1024) */
	CHECK(h.bucket[0] == 1 && h.bucket[1] == 1 && h.bucket[2] == 98, "%lu %lu %lu",
	      (unsigned long)h.bucket[0], (unsigned long)h.bucket[1], (unsigned long)h.bucket[2]);
	CHECK(h.count == 100 && h.sum_ns == 100 + 256 + 98000 && h.max_ns == 1000, "sums");
	CHECK(sl_lat_hist_quantile_ns(&h, 0.01) == 256, "p1 %lu",
	      (unsigned long)sl_lat_hist_quantile_ns(&h, 0.01));
	CHECK(sl_lat_hist_quantile_ns(&h, 0.02) == 512, "p2");
	CHECK(sl_lat_hist_quantile_ns(&h, 0.99) == 1024, "p99");
	sl_lat_hist_add(&h, 1ull << 40, 1); /* beyond the last edge: last bucket, its max */
	CHECK(h.bucket[SL_LAT_BUCKETS - 1] == 1, "overflow bucket");
	CHECK(sl_lat_hist_quantile_ns(&h, 1.0) == 1ull << 40, "p100 is the max");
	CHECK(sl_lat_bucket_edge_ns(0) == 256 &&
		      sl_lat_bucket_edge_ns(SL_LAT_BUCKETS - 1) == UINT64_MAX,
	      "edges");
	CHECK(sl_cycles_to_ns(2000000000ull, sl_lat_ns_mult(2000000000ull)) >= 999999999ull &&
		      sl_cycles_to_ns(2000000000ull, sl_lat_ns_mult(2000000000ull)) <=
			      1000000000ull,
	      "1 s of cycles");
	return sl_test_summary();
}
