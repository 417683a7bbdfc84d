/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_state: TSC cycles per packet of a state-table lookup (staged burst)
 * plus one set_state per packet, bursts of 32, as the two benchmarked
 * examples use it:
 *   portknock  lookup = update = nw_src; every flow's entry exists (hit),
 *              set_state(3, idle 10 s) refreshes it;
 *   maclearn   lookup dl_dst, update dl_src; every destination was learned
 *              (hit), set_state(1, idle 300 s) refreshes the source's entry
 *              (2 entries per flow);
 * at 1 and N flows (default 100,000).  The frames are spread over
 * N * 64 bytes, as received packets are, so the packet data misses too.
 * Prints one line per (example, flows): the best of 7 passes over all
 * packets, and the median.
 *
 * usage: bench_state [N [ROUNDS]]
 */
#include "state.h"
#include "../core/sl_bench.h"

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

/* Flow i: source MAC 02:01:i, destination MAC 02:02:i, IPv4 source 10.0.0.0 + i. */
static void
frame(uint8_t *f, uint32_t i)
{
	memset(f, 0, 64);
	f[0] = 0x02, f[1] = 0x02;
	f[6] = 0x02, f[7] = 0x01;
	for (int k = 0; k < 4; k++)
		f[2 + k] = f[8 + k] = (uint8_t)(i >> (24 - 8 * k));
	f[12] = 0x08;
	f[14] = 0x45;
	f[17] = 50; /* IP total length: the 64-byte frame */
	f[23] = 6;
	f[46] = 0x50; /* TCP data offset: 20 bytes */
	for (int k = 0; k < 4; k++)
		f[26 + k] = (uint8_t)((0x0a000000u + i) >> (24 - 8 * k));
}

static int
run(bool mac, unsigned n_flows, uint64_t hz)
{
	unsigned n_pkts = n_flows < 4096 ? 4096 : n_flows;
	struct sl_field nw = {.id = SL_FIELD_IPV4_SRC};
	struct sl_field dst = {.id = SL_FIELD_ETH_DST}, src = {.id = SL_FIELD_ETH_SRC};
	struct sl_state_params p = {.lookup = mac ? &dst : &nw,
				    .n_lookup = 1,
				    .update = mac ? &src : NULL,
				    .n_update = mac ? 1 : 0,
				    .capacity = (mac ? 2 : 1) * n_flows + 1024,
				    .tsc_hz = hz};
	struct sl_state_set a = {.state = mac ? 1 : 3, .idle_ms = mac ? 300000 : 10000};
	struct sl_state_set pre = {.state = mac ? 2 : 3};
	static uint8_t keys[SL_BURST_MAX][SL_KEY_MAX];
	uint8_t(*frames)[64] = malloc((size_t)n_pkts * 64);
	struct sl_pkt pkts[32];
	struct sl_state *s;
	uint64_t cyc[7];

	if (frames == NULL || sl_state_create(&p, &s, NULL, 0) != 0)
		return 1;
	/* Packets in a scattered order; the destinations (or sources) known beforehand. */
	for (unsigned i = 0; i < n_pkts; i++)
		frame(frames[i], (uint32_t)(((uint64_t)i * 2654435761u) % n_flows));
	for (unsigned i = 0; i < n_flows; i++) {
		uint8_t f[64], key[SL_KEY_MAX] = {0};
		struct sl_pkt q;
		frame(f, i);
		sl_pkt_init(&q, f, 64, 0, 1);
		sl_key_extract(sl_state_layout(s, false), &q, key);
		if (sl_state_set_key(s, key, &pre, 1) != 0)
			return 1;
	}
	for (int rep = 0; rep < 7; rep++) {
		uint64_t t0 = __rdtsc(), n = 0;
		for (unsigned base = 0; base + 32 <= n_pkts; base += 32) {
			uint64_t now = __rdtsc();
			for (unsigned i = 0; i < 32; i++)
				sl_pkt_init(&pkts[i], frames[base + i], 64, 0, 1);
			sl_state_lookup_burst(s, pkts, UINT64_C(0xffffffff), now, keys);
			for (unsigned i = 0; i < 32; i++)
				sl_state_set_pkt(s, &pkts[i], &a, now);
			n += 32;
		}
		cyc[rep] = (__rdtsc() - t0) / n;
	}
	qsort(cyc, 7, sizeof(cyc[0]), sl_bench_cmp_u64);
	printf("%-9s flows %7u: best %3lu median %3lu cycles/packet (lookup + set_state), "
	       "%zu bytes, %.1f per entry\n",
	       mac ? "maclearn" : "portknock", n_flows, (unsigned long)cyc[0],
	       (unsigned long)cyc[3], sl_state_footprint(s),
	       (double)sl_state_footprint(s) / ((mac ? 2.0 : 1.0) * n_flows));
	sl_state_destroy(s);
	free(frames);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned big = argc > 1 ? (unsigned)atoi(argv[1]) : 100000;
	unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
	uint64_t hz = tsc_hz();

	for (unsigned r = 0; r < rounds; r++)
		for (int mac = 0; mac < 2; mac++)
			if (run(mac, 1, hz) != 0 || run(mac, big, hz) != 0)
				return 1;
	return 0;
}
