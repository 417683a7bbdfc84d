/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_state: cycles per packet of a state-table lookup (staged burst) plus
 * one set_state per packet, at 1 and N flows (default 100,000), bursts of
 * 32, keyed on nw_src.  Prints one line per flow count.
 */
#include "state.h"

#include <string.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t
tsc_hz(void)
{
	struct timespec a, b;
	uint64_t t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	t0 = __rdtsc();
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 100000000L);
	t1 = __rdtsc();
	return (t1 - t0) * 10;
}

static void
frame(uint8_t *f, uint32_t src)
{
	memset(f, 0, 64);
	f[12] = 0x08;
	f[14] = 0x45;
	f[23] = 6;
	for (int i = 0; i < 4; i++)
		f[26 + i] = (uint8_t)(src >> (24 - 8 * i));
}

int
main(int argc, char **argv)
{
	unsigned big = argc > 1 ? (unsigned)atoi(argv[1]) : 100000;
	unsigned counts[2] = {1, big};
	uint64_t hz = tsc_hz();

	for (unsigned c = 0; c < 2; c++) {
		unsigned n_flows = counts[c], n_pkts = n_flows < 4096 ? 4096 : n_flows;
		struct sl_field f = {.id = SL_FIELD_IPV4_SRC};
		struct sl_state_params p = {
		    .lookup = &f, .n_lookup = 1, .capacity = n_flows + 1024, .tsc_hz = hz};
		struct sl_state *s;
		static uint8_t keys[SL_BURST_MAX][SL_KEY_MAX];
		uint8_t(*frames)[64] = malloc((size_t)n_pkts * 64);
		struct sl_pkt pkts[32];
		struct sl_state_set a = {.state = 3, .idle_ms = 10000};

		if (frames == NULL || sl_state_create(&p, &s, NULL, 0) != 0)
			return 1;
		for (unsigned i = 0; i < n_pkts; i++)
			frame(frames[i], 0x0a000000u + (uint32_t)((i * 2654435761u) % n_flows));
		uint64_t best = UINT64_MAX;
		for (int rep = 0; rep < 5; rep++) {
			uint64_t t0 = __rdtsc(), n = 0;
			for (unsigned base = 0; base + 32 <= n_pkts; base += 32) {
				for (unsigned i = 0; i < 32; i++)
					sl_pkt_init(&pkts[i], frames[base + i], 64, 0, 1);
				sl_state_lookup_burst(s, pkts, UINT64_C(0xffffffff), t0, keys);
				for (unsigned i = 0; i < 32; i++)
					sl_state_set_pkt(s, &pkts[i], &a, t0);
				n += 32;
			}
			uint64_t cyc = (__rdtsc() - t0) / n;
			if (cyc < best)
				best = cyc;
		}
		printf("flows %7u: %3lu cycles/packet (lookup + set_state), table %zu bytes\n",
		       n_flows, (unsigned long)best, sl_state_footprint(s));
		sl_state_destroy(s);
		free(frames);
	}
	return 0;
}
