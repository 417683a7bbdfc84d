/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_dispatch: what the I/O core spends per packet to distribute it, per
 * scheduler (the dispatch design, section 4.4: 23.3 / 28.4 / 24.4 / 31.4 ns for RR /
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
 * scheduler.  A sample is 4,096 consecutive frames (about 40 us: short, so
 * few samples contain a preemption), timed with the TSC, the drain time
 * excluded; schedulers interleave sample by sample (each with its own
 * rings); the median over rounds x 100 samples
 * is printed with the minimum and the 90th percentile (the tail is the
 * preemptions of a shared machine).  TSC ticks become ns by the run's wall
 * time.
 *
 * Output: one JSON object {"<sched>": ns_per_packet, "<sched>_min": ...,
 * "<sched>_p90": ..., ..., "parse_only": ns (tuple and CRC alone)}.
 */
#include "dispatch.h"
#include "../core/sl_bench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_ring.h>
#include <x86intrin.h>

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

int
main(int argc, char **argv)
{
	unsigned n_workers = 8, rounds = 9, n_frames = 60000, passes = 100, chunk = 4096;

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
	    n_frames < 2 * chunk) {
		fprintf(stderr, "bench_dispatch: bad parameters\n");
		return 2;
	}
	n_frames -= n_frames % 32;
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

	/*
	 * Samples: one pass over the frames (about a millisecond), timed with the
	 * TSC, drain time excluded; kinds interleave pass by pass, each with its
	 * own rings and dispatcher.  The median over all passes of all rounds is
	 * robust to the preemptions of a shared machine; min and max show the spread.
	 */
	enum { N_KINDS = SL_SCHED__MAX + 1 }; /* + tuple and CRC only */
	static struct bench kb[N_KINDS];
	struct sl_dispatch *ds[N_KINDS];
	unsigned n_samples = rounds * passes;
	double *res[N_KINDS];
	double t_all0 = now_ns();
	uint64_t tsc_all0 = __rdtsc();

	for (int k = 0; k < N_KINDS; k++) {
		kb[k].n_workers = n_workers;
		for (unsigned w = 0; w < n_workers; w++) {
			ssize_t sz = rte_ring_get_memsize(RING);
			kb[k].rings[w] = aligned_alloc(64, (size_t)RTE_ALIGN(sz, 64));
			if (kb[k].rings[w] == NULL ||
			    rte_ring_init(kb[k].rings[w], "bench", RING,
					  RING_F_SP_ENQ | RING_F_SC_DEQ) < 0)
				return 1;
		}
		struct sl_dispatch_params dp = {
			.n_workers = n_workers,
			.sched = k < SL_SCHED__MAX ? (enum sl_sched)k : SL_SCHED_RR,
			.threshold = SL_DISPATCH_THRESHOLD_DEFAULT,
			.burst = 32,
			.out_burst = 32,
			.ring_size = RING,
			.ops = {.enqueue = b_enqueue,
				.ring_used = b_used,
				.done = b_done,
				.arg = &kb[k]},
		};
		res[k] = calloc(n_samples, sizeof(double));
		if (res[k] == NULL || sl_dispatch_create(&dp, &ds[k]) < 0)
			return 1;
	}
	volatile uint32_t sink = 0;
	for (unsigned smp = 0; smp < n_samples; smp++) {
		for (int k = 0; k < N_KINDS; k++) {
			uint64_t c_drain = 0, c0 = __rdtsc();
			unsigned first = (smp * chunk) % (n_frames - chunk + 1) & ~31u;
			for (unsigned i = first; i < first + chunk; i += 32) {
				uint32_t hashes[32];
				for (unsigned j = 0; j < 32; j++) {
					struct sl_dispatch_tuple t;
					sl_dispatch_tuple_extract(objs[i + j], FRAME, &t);
					hashes[j] = sl_dispatch_crc32(&t);
				}
				if (k < SL_SCHED__MAX) {
					sl_dispatch_burst(ds[k], &objs[i], hashes, 32, NULL);
					uint64_t c1 = __rdtsc();
					drain(&kb[k]);
					c_drain += __rdtsc() - c1;
				} else {
					sink += hashes[0] ^ hashes[31];
				}
			}
			uint64_t c = __rdtsc() - c0;
			res[k][smp] = (double)(c - c_drain) / chunk; /* cycles; scaled below */
		}
	}
	/* TSC cycles -> ns: the TSC ticks at a constant rate, so the whole run calibrates it. */
	double ns_per_cycle = (now_ns() - t_all0) / (double)(__rdtsc() - tsc_all0);
	(void)sink;
	for (int k = 0; k < N_KINDS; k++) {
		sl_dispatch_flush(ds[k]);
		drain(&kb[k]);
		sl_dispatch_destroy(ds[k]);
	}
	printf("{\"workers\": %u, \"rounds\": %u, \"samples\": %u, \"packets_per_sample\": %u",
	       n_workers, rounds, n_samples, chunk);
	for (int k = 0; k < N_KINDS; k++) {
		const char *name =
			k < SL_SCHED__MAX ? sl_sched_name((enum sl_sched)k) : "parse_only";
		qsort(res[k], n_samples, sizeof(double), sl_bench_cmp_double);
		printf(", \"%s\": %.2f, \"%s_min\": %.2f, \"%s_p90\": %.2f", name,
		       res[k][n_samples / 2] * ns_per_cycle, name, res[k][0] * ns_per_cycle, name,
		       res[k][n_samples * 9 / 10] * ns_per_cycle);
	}
	printf(", \"ns_per_tsc_cycle\": %.4f", ns_per_cycle);
	printf("}\n");
	return 0;
}
