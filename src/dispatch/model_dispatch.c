/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * model_dispatch: the schedulers of src/dispatch driving simulated workers
 * in virtual time (the dispatch design's experiments, section 4).  Deterministic for a
 * seed; prints one JSON document (bench/dispatch.py turns it into tables
 * and plots).
 *
 *   model_dispatch [--seeds N] [--packets N] [--workers N] [--ring N] [--quick]
 *
 * The model:
 * - Traffic: a trace of flows with heavy-tailed sizes (Pareto mice plus a
 *   few elephants with a fixed share each), sent as trains (a flow's packets
 *   back to back, geometric train length), trains separated by exponential
 *   gaps: bursty and skewed.  The trace is generated once per seed,
 *   independent of the rate; the offered rate only scales time.
 * - I/O core: takes the packets in rx bursts of 32, hashes each flow's
 *   5-tuple (CRC32-C of a synthetic tuple), and runs the SAME
 *   sl_dispatch_burst() as the real I/O lcore; out-buffers flush through the
 *   model's enqueue callback, by size or by a 10 us timer.
 * - Workers: a FIFO ring of ring_size slots and one server each; a packet
 *   costs 1/worker_mpps us, (1 + miss_penalty) times that when its flow is
 *   not in the worker's flow cache (direct mapped, flow_cache entries): the
 *   cache affinity flow-level scheduling keeps and RR loses.  Each packet's
 *   start and completion times are fixed at enqueue (FIFO, deterministic
 *   service), so ring occupancy and the ordered mode's done counter at any
 *   instant follow from them.  A full ring drops (the loss).
 * - Reordering: a packet that completes before an earlier packet of its
 *   flow overtook it; counted per scheduler.
 */
#include "dispatch.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers (xoshiro256**, seeded by splitmix64) ---- */

struct rng {
	uint64_t s[4];
};

static uint64_t
splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void
rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix(&seed);
}

static inline uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t
rng_next(struct rng *r)
{
	uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
	return res;
}

static double
rng_unit(struct rng *r) /* (0, 1] */
{
	return ((double)(rng_next(r) >> 11) + 1.0) / 9007199254740992.0;
}

/* ---- traces ---- */

struct trace_params {
	uint64_t seed;
	unsigned n_flows; /* mice */
	unsigned n_elephants;
	double elephant_share; /* of all packets, each */
	double pareto_alpha;   /* mice sizes */
	double train_mean;     /* packets per train */
	unsigned n_packets;
	unsigned pin_workers; /* > 0: only flows whose crc32 and hrw worker is < pin_workers */
	unsigned n_workers;   /* for pin_workers */
};

struct trace {
	unsigned n_packets, n_flows;
	uint32_t *flow; /* per packet */
	double *gap;    /* per packet: time since the previous one, mean 1 */
	uint32_t *hash; /* per flow: CRC32 of its tuple */
};

static void
trace_free(struct trace *t)
{
	free(t->flow);
	free(t->gap);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

/* A flow id whose tuple lands (crc32 and hrw) on a worker < pin, or any when pin == 0. */
static uint32_t
flow_hash(struct rng *r, const struct trace_params *p)
{
	for (;;) {
		struct sl_dispatch_tuple t = {
			.src = 0x0a000000u | (uint32_t)(rng_next(r) & 0xffffff),
			.dst = 0xc0a80000u | (uint32_t)(rng_next(r) & 0xffff),
			.ports = (uint32_t)rng_next(r),
			.proto = 6,
		};
		uint32_t h = sl_dispatch_crc32(&t);
		if (p->pin_workers == 0)
			return h;
		unsigned c = (unsigned)(((uint64_t)h * p->n_workers) >> 32);
		if (c < p->pin_workers &&
		    sl_dispatch_hrw(h & 0x7fffffff, p->n_workers) < p->pin_workers)
			return h;
	}
}

static int
trace_make(const struct trace_params *p, struct trace *t)
{
	struct rng r;
	unsigned nf = p->n_flows + p->n_elephants;
	double *cum = calloc(nf, sizeof(double)), sum = 0, mice = 0;

	memset(t, 0, sizeof(*t));
	t->flow = calloc(p->n_packets, sizeof(*t->flow));
	t->gap = calloc(p->n_packets, sizeof(*t->gap));
	t->hash = calloc(nf, sizeof(*t->hash));
	if (cum == NULL || t->flow == NULL || t->gap == NULL || t->hash == NULL) {
		free(cum);
		trace_free(t);
		return -ENOMEM;
	}
	t->n_packets = p->n_packets;
	t->n_flows = nf;
	rng_seed(&r, p->seed);
	for (unsigned f = 0; f < nf; f++)
		t->hash[f] = flow_hash(&r, p);
	/* Weights: elephants a fixed share each, mice Pareto(alpha) sharing the rest. */
	double *w = calloc(nf, sizeof(double));
	if (w == NULL) {
		free(cum);
		trace_free(t);
		return -ENOMEM;
	}
	for (unsigned f = p->n_elephants; f < nf; f++)
		mice += w[f] = pow(rng_unit(&r), -1.0 / p->pareto_alpha);
	double rest = 1.0 - p->elephant_share * p->n_elephants;
	for (unsigned f = 0; f < nf; f++) {
		double x = f < p->n_elephants ? p->elephant_share : w[f] / mice * rest;
		sum += x;
		cum[f] = sum;
	}
	free(w);
	/*
	 * Trains: a flow picked by weight sends a geometric number of packets
	 * back to back (gap 0.05); trains are separated by exponential gaps
	 * scaled so the mean gap over all packets is 1.
	 */
	double in_train = 0.05, between = p->train_mean * (1.0 - in_train) + in_train;
	for (unsigned i = 0; i < p->n_packets;) {
		double u = rng_unit(&r) * sum;
		unsigned lo = 0, hi = nf - 1;
		while (lo < hi) {
			unsigned mid = (lo + hi) / 2;
			if (cum[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		unsigned len =
			1 + (unsigned)floor(log(rng_unit(&r)) / log(1.0 - 1.0 / p->train_mean));
		for (unsigned k = 0; k < len && i < p->n_packets; k++, i++) {
			t->flow[i] = lo;
			t->gap[i] = k == 0 ? -log(rng_unit(&r)) * between : in_train;
		}
	}
	free(cum);
	return 0;
}

/* ---- simulated workers ---- */

struct model_params {
	unsigned n_workers;
	double worker_mpps;  /* service rate with flow-cache hits */
	double miss_penalty; /* extra cost of a flow-cache miss, in service times */
	unsigned flow_cache; /* entries per worker (power of two) */
	unsigned ring_size;
	unsigned burst;
	unsigned out_burst;
	double flush_us;
	double threshold;
	enum sl_sched sched;
};

#define THR_BINS 5
static const double thr_bins[THR_BINS] = {0.1, 0.25, 0.5, 0.75, 0.9};

struct worker {
	double *start, *comp; /* circular, per queued packet */
	uint64_t tail, head_start, head_done;
	double last_comp;
	uint32_t *cache;
	uint64_t enqueued, dropped, misses;
};

struct sim {
	const struct model_params *mp;
	const struct trace *tr;
	double now;     /* us */
	double service; /* us per packet (hit) */
	uint64_t fifo_mask;
	struct worker w[SL_DISPATCH_WORKERS_MAX];
	double *flow_maxcomp; /* per flow: latest completion so far */
	uint64_t reordered, dropped, delivered;
	uint64_t above[THR_BINS], above_dropped[THR_BINS]; /* packets seeing tau > bin at enqueue */
};

static unsigned
sim_ring_used(void *arg, unsigned wi)
{
	struct sim *s = arg;
	struct worker *w = &s->w[wi];

	while (w->head_start < w->tail && w->start[w->head_start & s->fifo_mask] <= s->now)
		w->head_start++;
	return (unsigned)(w->tail - w->head_start);
}

static uint64_t
sim_done(void *arg, unsigned wi)
{
	struct sim *s = arg;
	struct worker *w = &s->w[wi];

	while (w->head_done < w->tail && w->comp[w->head_done & s->fifo_mask] <= s->now)
		w->head_done++;
	return w->head_done;
}

static unsigned
sim_enqueue(void *arg, unsigned wi, void *const objs[], unsigned n)
{
	struct sim *s = arg;
	struct worker *w = &s->w[wi];
	unsigned used = sim_ring_used(arg, wi), k;

	sim_done(arg, wi);
	for (k = 0; k < n; k++) {
		uint32_t f = s->tr->flow[(uintptr_t)objs[k] - 1];
		double tau = (double)used / s->mp->ring_size;
		bool drop = used >= s->mp->ring_size;

		for (int b = 0; b < THR_BINS; b++)
			if (tau > thr_bins[b]) {
				s->above[b]++;
				s->above_dropped[b] += drop;
			}
		if (drop)
			break;
		uint32_t *c = &w->cache[f & (s->mp->flow_cache - 1)];
		double cost = s->service;
		if (*c != f + 1) {
			cost *= 1.0 + s->mp->miss_penalty;
			*c = f + 1;
			w->misses++;
		}
		double st = w->last_comp > s->now ? w->last_comp : s->now;
		w->last_comp = st + cost;
		w->start[w->tail & s->fifo_mask] = st;
		w->comp[w->tail & s->fifo_mask] = w->last_comp;
		w->tail++;
		used++;
		w->enqueued++;
		if (w->last_comp < s->flow_maxcomp[f])
			s->reordered++;
		else
			s->flow_maxcomp[f] = w->last_comp;
	}
	/* Once full the ring stays full at this instant: the refused ones are the tail. */
	for (unsigned j = k; j < n; j++)
		for (int b = 0; b < THR_BINS; b++) {
			s->above[b]++;
			s->above_dropped[b]++;
		}
	w->dropped += n - k;
	s->dropped += n - k;
	return k;
}

struct result {
	double loss;
	uint64_t dropped, reordered, adjustments;
	uint64_t per_worker[SL_DISPATCH_WORKERS_MAX];
	double p_drop_above[THR_BINS];
};

/* Reordered and simulated packets per scheduler over every run of this process. */
static uint64_t all_reordered[SL_SCHED__MAX], all_packets[SL_SCHED__MAX], all_runs[SL_SCHED__MAX];

/* Run trace @tr at @mpps through scheduler mp->sched.  Returns 0 or -errno. */
static int
simulate(const struct model_params *mp, const struct trace *tr, double mpps, struct result *res)
{
	static struct sim s;
	struct sl_dispatch *d;
	unsigned fifo = 1;
	int rc;

	memset(&s, 0, sizeof(s));
	memset(res, 0, sizeof(*res));
	s.mp = mp;
	s.tr = tr;
	s.service = 1.0 / mp->worker_mpps;
	while (fifo < 2 * (mp->ring_size + SL_BURST_MAX))
		fifo <<= 1;
	s.fifo_mask = fifo - 1;
	s.flow_maxcomp = calloc(tr->n_flows, sizeof(double));
	for (unsigned i = 0; i < mp->n_workers; i++) {
		s.w[i].start = calloc(fifo, sizeof(double));
		s.w[i].comp = calloc(fifo, sizeof(double));
		s.w[i].cache = calloc(mp->flow_cache, sizeof(uint32_t));
		if (s.w[i].start == NULL || s.w[i].comp == NULL || s.w[i].cache == NULL)
			return -ENOMEM;
	}
	struct sl_dispatch_params dp = {
		.n_workers = mp->n_workers,
		.sched = mp->sched,
		.threshold = mp->threshold,
		.burst = mp->burst,
		.out_burst = mp->out_burst,
		.ring_size = mp->ring_size,
		.ops = {.enqueue = sim_enqueue,
			.ring_used = sim_ring_used,
			.done = sim_done,
			.arg = &s},
	};
	rc = sl_dispatch_create(&dp, &d);
	if (rc < 0)
		return rc;
	double t = 0, last_flush = 0;
	void *objs[SL_BURST_MAX];
	uint32_t hashes[SL_BURST_MAX];
	for (unsigned i = 0; i < tr->n_packets;) {
		unsigned n = 0;
		for (; n < mp->burst && i < tr->n_packets; n++, i++) {
			t += tr->gap[i] / mpps;
			objs[n] = (void *)(uintptr_t)(i + 1);
			hashes[n] = tr->hash[tr->flow[i]];
		}
		s.now = t; /* the burst is received when its last packet arrived */
		if (t - last_flush >= mp->flush_us) {
			sl_dispatch_flush(d);
			last_flush = t;
		}
		sl_dispatch_burst(d, objs, hashes, n, NULL);
	}
	sl_dispatch_flush(d);
	for (unsigned i = 0; i < mp->n_workers; i++) {
		struct sl_dispatch_worker_stats ws;
		sl_dispatch_worker_stats(d, i, &ws);
		res->per_worker[i] = ws.packets;
	}
	res->adjustments = sl_dispatch_adjustments(d);
	res->dropped = s.dropped;
	res->reordered = s.reordered;
	res->loss = (double)s.dropped / tr->n_packets;
	all_reordered[mp->sched] += s.reordered;
	all_packets[mp->sched] += tr->n_packets;
	all_runs[mp->sched]++;
	for (int b = 0; b < THR_BINS; b++)
		res->p_drop_above[b] = s.above[b] ? (double)s.above_dropped[b] / s.above[b] : 0;
	sl_dispatch_destroy(d);
	for (unsigned i = 0; i < mp->n_workers; i++) {
		free(s.w[i].start);
		free(s.w[i].comp);
		free(s.w[i].cache);
	}
	free(s.flow_maxcomp);
	return 0;
}

/* Largest offered rate (Mpps) with loss <= @max_loss, by bisection over [lo, hi]. */
static double
max_rate(const struct model_params *mp, const struct trace *tr, double max_loss, double lo,
	 double hi, unsigned iters)
{
	struct result r;

	for (unsigned k = 0; k < iters; k++) {
		double mid = (lo + hi) / 2;
		if (simulate(mp, tr, mid, &r) < 0)
			return -1;
		if (r.loss <= max_loss)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* ---- experiments ---- */

static const enum sl_sched scheds[] = {SL_SCHED_RR, SL_SCHED_CRC32, SL_SCHED_HRW, SL_SCHED_ADAPTIVE,
				       SL_SCHED_ORDERED};
#define N_SCHEDS (sizeof(scheds) / sizeof(scheds[0]))

static void
json_array_u64(const char *key, const uint64_t *v, unsigned n, bool comma)
{
	printf("\"%s\": [", key);
	for (unsigned i = 0; i < n; i++)
		printf("%s%llu", i ? ", " : "", (unsigned long long)v[i]);
	printf("]%s", comma ? ", " : "");
}

int
main(int argc, char **argv)
{
	struct model_params mp = {
		.n_workers = 8,
		.worker_mpps = 1.0,
		.miss_penalty = 1.0,
		.flow_cache = 1024,
		.ring_size = 1024,
		.burst = 32,
		.out_burst = 32,
		.flush_us = 10,
		.threshold = SL_DISPATCH_THRESHOLD_DEFAULT,
	};
	struct trace_params tp = {
		.n_flows = 20000,
		.n_elephants = 4,
		.elephant_share = 0.06,
		.pareto_alpha = 1.2,
		.train_mean = 8,
		.n_packets = 400000,
	};
	unsigned n_seeds = 4, iters = 14;
	struct trace tr;
	struct result r;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
			n_seeds = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--packets") == 0 && i + 1 < argc)
			tp.n_packets = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
			mp.n_workers = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--ring") == 0 && i + 1 < argc)
			mp.ring_size = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--quick") == 0)
			n_seeds = 2, tp.n_packets = 100000, iters = 10;
		else {
			fprintf(stderr,
				"usage: model_dispatch [--seeds N] [--packets N] [--workers N] "
				"[--ring N] [--quick]\n");
			return 2;
		}
	}
	if (n_seeds < 1 || tp.n_packets < 1000 || mp.n_workers < 2 ||
	    mp.n_workers > SL_DISPATCH_WORKERS_MAX || mp.ring_size < 64) {
		fprintf(stderr, "model_dispatch: bad parameters\n");
		return 2;
	}
	tp.n_workers = mp.n_workers;
	double cap = mp.n_workers * mp.worker_mpps;

	printf("{\"params\": {\"workers\": %u, \"worker_mpps\": %g, \"miss_penalty\": %g, "
	       "\"flow_cache\": %u, \"ring_size\": %u, \"burst\": %u, \"out_burst\": %u, "
	       "\"flush_us\": %g, \"threshold\": %g, \"flows\": %u, \"elephants\": %u, "
	       "\"elephant_share\": %g, \"pareto_alpha\": %g, \"train_mean\": %g, "
	       "\"packets\": %u, \"seeds\": %u, \"capacity_mpps\": %g},\n",
	       mp.n_workers, mp.worker_mpps, mp.miss_penalty, mp.flow_cache, mp.ring_size, mp.burst,
	       mp.out_burst, mp.flush_us, mp.threshold, tp.n_flows, tp.n_elephants,
	       tp.elephant_share, tp.pareto_alpha, tp.train_mean, tp.n_packets, n_seeds, cap);

	/* Fig. 2: packets per worker at 70 % of capacity, first seed. */
	tp.seed = 1;
	if (trace_make(&tp, &tr) < 0)
		return 1;
	printf("\"distribution\": {\"load\": 0.7, ");
	for (unsigned k = 0; k < N_SCHEDS; k++) {
		mp.sched = scheds[k];
		simulate(&mp, &tr, 0.7 * cap, &r);
		json_array_u64(sl_sched_name(scheds[k]), r.per_worker, mp.n_workers,
			       k + 1 < N_SCHEDS);
	}
	printf("},\n");
	trace_free(&tr);

	/* Fig. 3: throughput at zero loss and at <= 1e-4 loss; reordering at adaptive's rate. */
	double thr0[N_SCHEDS][16], thr4[N_SCHEDS][16];
	uint64_t reord[N_SCHEDS][16], adj[N_SCHEDS][16];
	double loss_at[N_SCHEDS][16];
	for (unsigned sd = 0; sd < n_seeds && sd < 16; sd++) {
		tp.seed = 1 + sd;
		if (trace_make(&tp, &tr) < 0)
			return 1;
		for (unsigned k = 0; k < N_SCHEDS; k++) {
			mp.sched = scheds[k];
			thr0[k][sd] = max_rate(&mp, &tr, 0, 0.01 * cap, 1.2 * cap, iters);
			thr4[k][sd] = max_rate(&mp, &tr, 1e-4, 0.01 * cap, 1.2 * cap, iters);
		}
		/* Reordering and loss of every scheduler at 80 % of capacity. */
		for (unsigned k = 0; k < N_SCHEDS; k++) {
			mp.sched = scheds[k];
			simulate(&mp, &tr, 0.8 * cap, &r);
			reord[k][sd] = r.reordered;
			adj[k][sd] = r.adjustments;
			loss_at[k][sd] = r.loss;
		}
		trace_free(&tr);
	}
	printf("\"throughput\": {");
	for (unsigned k = 0; k < N_SCHEDS; k++) {
		printf("%s\"%s\": {\"zero_loss\": [", k ? ", " : "", sl_sched_name(scheds[k]));
		for (unsigned sd = 0; sd < n_seeds; sd++)
			printf("%s%.4f", sd ? ", " : "", thr0[k][sd]);
		printf("], \"loss_1e4\": [");
		for (unsigned sd = 0; sd < n_seeds; sd++)
			printf("%s%.4f", sd ? ", " : "", thr4[k][sd]);
		printf("]}");
	}
	printf("},\n\"at_80pct\": {");
	for (unsigned k = 0; k < N_SCHEDS; k++) {
		printf("%s\"%s\": {", k ? ", " : "", sl_sched_name(scheds[k]));
		json_array_u64("reordered", reord[k], n_seeds, true);
		json_array_u64("adjustments", adj[k], n_seeds, true);
		printf("\"loss\": [");
		for (unsigned sd = 0; sd < n_seeds; sd++)
			printf("%s%.6g", sd ? ", " : "", loss_at[k][sd]);
		printf("]}");
	}
	printf("},\n");

	/* Figs. 4-5: all traffic on one (two) worker(s) under crc32 and hrw; loss vs load. */
	for (unsigned pin = 1; pin <= 2; pin++) {
		struct trace_params tq = tp;
		tq.seed = 100 + pin;
		tq.pin_workers = pin;
		tq.n_flows = 64;
		tq.n_elephants = 0;
		tq.n_packets = tp.n_packets / 2;
		if (trace_make(&tq, &tr) < 0)
			return 1;
		printf("\"%s\": {\"loads_mpps\": [", pin == 1 ? "one_core" : "two_cores");
		static const double mult[] = {0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0};
		const unsigned nm = sizeof(mult) / sizeof(mult[0]);
		for (unsigned i = 0; i < nm; i++)
			printf("%s%g", i ? ", " : "", mult[i] * pin * mp.worker_mpps);
		printf("]");
		for (unsigned k = 0; k < N_SCHEDS; k++) {
			mp.sched = scheds[k];
			printf(", \"%s\": [", sl_sched_name(scheds[k]));
			for (unsigned i = 0; i < nm; i++) {
				simulate(&mp, &tr, mult[i] * pin * mp.worker_mpps, &r);
				printf("%s%.6g", i ? ", " : "", r.loss);
			}
			printf("]");
		}
		printf("},\n");
		trace_free(&tr);
	}

	/* Table 1: P(drop | tau > threshold) under hrw near saturation; adaptive per threshold. */
	tp.seed = 1;
	if (trace_make(&tp, &tr) < 0)
		return 1;
	mp.sched = SL_SCHED_HRW;
	simulate(&mp, &tr, 0.9 * cap, &r);
	printf("\"threshold\": {\"hrw_load\": 0.9, \"rows\": [");
	for (int b = 0; b < THR_BINS; b++) {
		struct result ra;
		struct model_params ma = mp;
		ma.sched = SL_SCHED_ADAPTIVE;
		ma.threshold = thr_bins[b];
		simulate(&ma, &tr, 0.9 * cap, &ra);
		double z = max_rate(&ma, &tr, 0, 0.01 * cap, 1.2 * cap, iters);
		printf("%s{\"threshold\": %g, \"p_drop_hrw\": %.4f, \"adaptive_loss\": %.6g, "
		       "\"adaptive_adjustments\": %llu, \"adaptive_zero_loss_mpps\": %.4f}",
		       b ? ", " : "", thr_bins[b], r.p_drop_above[b], ra.loss,
		       (unsigned long long)ra.adjustments, z);
	}
	printf("]},\n\"all_runs\": {");
	for (unsigned k = 0; k < N_SCHEDS; k++)
		printf("%s\"%s\": {\"runs\": %llu, \"packets\": %llu, \"reordered\": %llu}",
		       k ? ", " : "", sl_sched_name(scheds[k]),
		       (unsigned long long)all_runs[scheds[k]],
		       (unsigned long long)all_packets[scheds[k]],
		       (unsigned long long)all_reordered[scheds[k]]);
	printf("}\n}\n");
	trace_free(&tr);
	return 0;
}
