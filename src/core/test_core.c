/* SPDX-License-Identifier: BSD-3-Clause */
/* test_core: drop-reason names and the latency histogram. */
#include <string.h>

#include "core.h"
#include "sl_test.h"

int
main(void)
{
	struct sl_lat_hist h;

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
	CHECK(sl_lat_bucket_edge_ns(0) == 256 && sl_lat_bucket_edge_ns(SL_LAT_BUCKETS - 1) == UINT64_MAX,
	      "edges");
	CHECK(sl_cycles_to_ns(2000000000ull, sl_lat_ns_mult(2000000000ull)) >= 999999999ull &&
		      sl_cycles_to_ns(2000000000ull, sl_lat_ns_mult(2000000000ull)) <= 1000000000ull,
	      "1 s of cycles");
	return sl_test_summary();
}
