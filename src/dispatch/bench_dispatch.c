/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_dispatch: what the I/O core spends per packet to distribute it, per
 * scheduler (seed 002, section 4.4: 23.3 / 28.4 / 24.4 / 31.4 ns for RR /
 * CRC32 / HRW / adaptive).
 *
 *   bench_dispatch [--workers N] [--rounds N] [--packets N]
 *
 * Per rx burst of 32 frames: extract the 5-tuple and its CRC32-C (as
 * src/worker/io.c does), run sl_dispatch_burst, whose out-buffers flush into
 * real rte_rings (one per worker, 1024 slots, made with rte_ring_init: no
 * EAL needed).  The bench drains the rings itself between bursts, worker 0
 * slowly (it hovers around the 25 % threshold, so adaptive and ordered take
 * their adjustment paths), the others completely.  Frames (64 B, 60,000 in
 * memory, a skewed mix of 4,000 flows sent in trains) are the same for every
 * scheduler; schedulers are interleaved round by round and the median of
 * the rounds is printed.  Draining is timed apart and subtracted.
 *
 * Output: one JSON object {"<sched>": ns_per_packet, ..., "parse_only": ns}.
 */
#include "dispatch.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_ring.h>

#define FRAME 64
#define RING 1024

struct bench {
	unsigned n_workers;
	struct rte_ring *rings[SL_DISPATCH_WORKERS_MAX];
	uint64_t done[SL_DISPATCH_WORKERS_MAX];
};

static unsigned
b_enqueue(void *arg, unsigned w, void *const objs[], unsigned n)
{
	struct bench *b = arg;

	return rte_ring_sp_enqueue_burst(b->rings[w], objs, n, NULL);
}

static unsigned
b_used(void *arg, unsigned w)
{
	return rte_ring_count(((struct bench *)arg)->rings[w]);
}

static uint64_t
b_done(void *arg, unsigned w)
{
	return __atomic_load_n(&((struct bench *)arg)->done[w], __ATOMIC_ACQUIRE);
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint64_t rs = 0x243f6a8885a308d3ull;
static uint64_t
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* Drain the rings: worker 0 only when above 600 slots (it hovers around the threshold). */
static void
drain(struct bench *b)
{
	void *objs[256];

	for (unsigned w = 0; w < b->n_workers; w++) {
		if (w == 0 && rte_ring_count(b->rings[w]) < 600)
			continue;
		unsigned n;
		while ((n = rte_ring_sc_dequeue_burst(b->rings[w], objs, 256, NULL)) > 0)
			b->done[w] += n;
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	unsigned n_workers = 8, rounds = 9, n_frames = 60000, passes = 20;
	static struct bench b;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
			n_workers = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--packets") == 0 && i + 1 < argc)
			n_frames = (unsigned)atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_dispatch [--workers N] [--rounds N] "
					"[--packets N]\n");
			return 2;
		}
	}
	if (n_workers < 1 || n_workers > SL_DISPATCH_WORKERS_MAX || rounds < 1 || rounds > 99 ||
	    n_frames < 64) {
		fprintf(stderr, "bench_dispatch: bad parameters\n");
		return 2;
	}
	n_frames -= n_frames % 32;
	b.n_workers = n_workers;
	for (unsigned w = 0; w < n_workers; w++) {
		ssize_t sz = rte_ring_get_memsize(RING);
		b.rings[w] = aligned_alloc(64, (size_t)RTE_ALIGN(sz, 64));
		if (b.rings[w] == NULL ||
		    rte_ring_init(b.rings[w], "bench", RING, RING_F_SP_ENQ | RING_F_SC_DEQ) < 0) {
			fprintf(stderr, "bench_dispatch: ring init failed\n");
			return 1;
		}
	}

	/* Frames: Ethernet/IPv4/UDP, 4,000 flows of Zipf-like weight, trains of 1..15. */
	uint8_t *frames = aligned_alloc(64, (size_t)n_frames * FRAME);
	void **objs = calloc(n_frames, sizeof(void *));
	if (frames == NULL || objs == NULL)
		return 1;
	memset(frames, 0, (size_t)n_frames * FRAME);
	for (unsigned i = 0; i < n_frames;) {
		unsigned f = (unsigned)(4000.0 * pow((double)(rnd() % 1000000 + 1) / 1e6, 3.0));
		unsigned len = 1 + (unsigned)(rnd() % 15);
		for (unsigned k = 0; k < len && i < n_frames; k++, i++) {
			uint8_t *p = frames + (size_t)i * FRAME;
			p[12] = 0x08, p[13] = 0x00;
			p[14] = 0x45, p[23] = 17;
			p[26] = 10, p[27] = (uint8_t)(f >> 8), p[28] = (uint8_t)f, p[29] = 1;
			p[30] = 192, p[31] = 168, p[33] = 2;
			p[34] = (uint8_t)(f >> 8), p[35] = (uint8_t)f, p[36] = 0x13, p[37] = 0x89;
			objs[i] = p;
		}
	}

	const int n_kinds = SL_SCHED__MAX + 1; /* + parse only */
	double res[SL_SCHED__MAX + 1][99];
	for (unsigned r = 0; r < rounds; r++) {
		for (int k = 0; k < n_kinds; k++) {
			struct sl_dispatch *d = NULL;
			struct sl_dispatch_params dp = {
				.n_workers = n_workers,
				.sched = k < SL_SCHED__MAX ? (enum sl_sched)k : SL_SCHED_RR,
				.threshold = SL_DISPATCH_THRESHOLD_DEFAULT,
				.burst = 32,
				.out_burst = 32,
				.ring_size = RING,
				.ops = {.enqueue = b_enqueue, .ring_used = b_used, .done = b_done,
					.arg = &b},
			};
			if (sl_dispatch_create(&dp, &d) < 0)
				return 1;
			double t_total = 0, t_drain = 0;
			volatile uint32_t sink = 0;
			for (unsigned pass = 0; pass < passes; pass++) {
				double t0 = now_ns();
				for (unsigned i = 0; i < n_frames; i += 32) {
					uint32_t hashes[32];
					for (unsigned j = 0; j < 32; j++) {
						struct sl_dispatch_tuple t;
						sl_dispatch_tuple_extract(objs[i + j], FRAME, &t);
						hashes[j] = sl_dispatch_crc32(&t);
					}
					if (k < SL_SCHED__MAX) {
						sl_dispatch_burst(d, &objs[i], hashes, 32, NULL);
						double t1 = now_ns();
						drain(&b);
						t_drain += now_ns() - t1;
					} else {
						sink += hashes[0] ^ hashes[31];
					}
				}
				t_total += now_ns() - t0;
			}
			sl_dispatch_flush(d);
			drain(&b);
			/* Clock reads around drain() are part of t_drain's measured overhead. */
			res[k][r] = (t_total - t_drain) / ((double)n_frames * passes);
			sl_dispatch_destroy(d);
			(void)sink;
		}
	}
	printf("{\"workers\": %u, \"rounds\": %u, \"packets_per_round\": %u", n_workers, rounds,
	       n_frames * passes);
	for (int k = 0; k < n_kinds; k++) {
		qsort(res[k], rounds, sizeof(double), cmp_double);
		printf(", \"%s\": %.2f, \"%s_min\": %.2f, \"%s_max\": %.2f",
		       k < SL_SCHED__MAX ? sl_sched_name((enum sl_sched)k) : "parse_only",
		       res[k][rounds / 2],
		       k < SL_SCHED__MAX ? sl_sched_name((enum sl_sched)k) : "parse_only", res[k][0],
		       k < SL_SCHED__MAX ? sl_sched_name((enum sl_sched)k) : "parse_only",
		       res[k][rounds - 1]);
	}
	printf("}\n");
	return 0;
}
