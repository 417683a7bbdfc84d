/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Changes under traffic: a worker thread runs bursts without pause while
 * the control thread adds, replaces, modifies and deletes flows and groups
 * and publishes them in random batches (the left-right scheme, pipeline.h).
 * Group 7's first bucket often chains to group 8 (indirect, or fast
 * failover on port 4) or 9 (fast failover watching group 8, else port 3),
 * while group 8 is modified and port 4 goes down and up: bodies are
 * replaced and liveness flags change under the worker's walks.
 *
 * Checks: nothing crashes or reads freed memory (run it under ASan: the
 * fuzz build does), every packet's outcome is one the pipeline could give
 * at some publish, and no hit is lost: the flows' counters, those of flows
 * removed (reported after the grace period) and of replaced flows (passed
 * on) add up to exactly the table's matched-lookup count.
 *
 * Half the flows are low-latency and marks are set and cleared, so the fast
 * forwarding path (ffp.h) fills and verifies its LUT while the tables change
 * under it (its journal lives in the left-right copies).
 *
 * With "deferred" (argv[2]), a quarter of the flows go to table 1 (one
 * low-latency entry, output 2), so path records answer them, and the worker
 * defers their credits as the datapath workers do (worker.c): it reports a
 * quiescent state (here: epoch) only with no credits waiting, flushing when
 * the control thread waits or every 64 bursts.  ASan sees whether a credit
 * ever reaches a freed flow; the counts must still add up in both tables.
 */
#include "pipeline.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../core/sl_test.h"

#define N_DSTS 64
#define FRAME_LEN 64

static struct sl_pipeline *pl;
static struct sl_pipeline_ctx *ctx;
static volatile uint64_t epoch; /* quiescent states the worker reported */
static volatile int stop;
static volatile int waiting; /* the control thread waits for a quiescent state */
static bool deferred;
static uint64_t bad_outcomes;
static uint64_t removed_pkts;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The grace period: the worker finished the burst it was in. */
static void
sync_fn(void *arg)
{
	uint64_t e0 = epoch;
	unsigned spins = 0;

	(void)arg;
	waiting = 1;
	while (epoch == e0 && !stop)
		sl_test_relax(&spins);
	waiting = 0;
}

static void
removed_fn(const struct sl_flow *f, uint8_t reason, void *arg)
{
	(void)reason;
	(void)arg;
	removed_pkts += sl_flow_packets(f);
}

static void
frame(uint8_t *d, unsigned dst)
{
	memset(d, 0, FRAME_LEN);
	d[12] = 0x08; /* IPv4 */
	d[14] = 0x45;
	d[17] = FRAME_LEN - 14; /* IP total length */
	d[22] = 64;
	d[23] = 17;
	d[30] = 10;
	d[33] = (uint8_t)dst;
}

static void
one_burst(void)
{
	static uint8_t frames[32][FRAME_LEN];
	struct sl_pkt pkts[32];
	uint32_t outs[32];
	uint8_t drops[32];

	{
		for (unsigned i = 0; i < 32; i++) {
			frame(frames[i], (unsigned)(rnd() % N_DSTS));
			sl_pkt_init(&pkts[i], frames[i], FRAME_LEN, 0, 1);
		}
		sl_pipeline_run_burst(pl, ctx, pkts, 32, NULL, outs, drops);
		/* Flows output to port 2..4 or the group (port 2/3); a miss drops. */
		for (unsigned i = 0; i < 32; i++)
			if (outs[i] != SL_PORT_DROP && (outs[i] < 2 || outs[i] > 4))
				bad_outcomes++;
	}
}

/* After a burst: a quiescent state, once deferred credits are flushed (worker.c's rule). */
static void
quiescent(unsigned long bursts)
{
	if (sl_pipeline_ctx_credits_pending(ctx) && (waiting || stop || bursts % 64 == 0))
		sl_pipeline_ctx_flush_credits(pl, ctx);
	if (!sl_pipeline_ctx_credits_pending(ctx))
		__atomic_store_n(&epoch, epoch + 1, __ATOMIC_RELEASE);
}

static void *
worker(void *arg)
{
	(void)arg;
	for (unsigned long b = 1; !stop; b++) {
		one_burst();
		quiescent(b);
	}
	sl_pipeline_ctx_flush_credits(pl, ctx);
	return NULL;
}

static void
spec_for(struct sl_flow_spec *fs, unsigned dst, unsigned prio, uint32_t out, bool group)
{
	struct sl_field ft = {.id = SL_FIELD_ETH_TYPE}, fd = {.id = SL_FIELD_IPV4_DST};
	uint8_t et[2] = {0x08, 0x00}, m2[2] = {0xff, 0xff};
	uint8_t ip[4] = {10, 0, 0, (uint8_t)dst}, m4[4] = {0xff, 0xff, 0xff, 0xff};

	sl_flow_spec_init(fs);
	fs->priority = (uint16_t)prio;
	fs->cookie = dst;
	if (dst % 2 == 0)
		fs->flags |= SL_FF_LOW_LATENCY;
	sl_match_set(&fs->match, &ft, et, m2);
	if (dst < N_DSTS)
		sl_match_set(&fs->match, &fd, ip, m4);
	if (deferred && dst % 4 == 1) { /* to table 1: a path of two low-latency entries */
		fs->insns.goto_table = 1;
		return;
	}
	fs->insns.n_apply = 1;
	fs->insns.has_apply = true;
	if (group) {
		fs->insns.apply[0].type = SL_ACT_GROUP;
		fs->insns.apply[0].group_id = 7;
	} else {
		fs->insns.apply[0].type = SL_ACT_OUTPUT;
		fs->insns.apply[0].output.port = out;
	}
}

static struct sl_group_spec gs;

static void
group_spec(uint8_t type)
{
	memset(&gs, 0, sizeof(gs));
	gs.group_id = 7;
	gs.type = type;
	gs.n_buckets = type == SL_GROUP_INDIRECT ? 1 : 2;
	for (unsigned b = 0; b < gs.n_buckets; b++) {
		gs.buckets[b].weight = type == SL_GROUP_SELECT; /* only select groups weigh */
		gs.buckets[b].watch_port = 2 + b;
		gs.buckets[b].watch_group = SL_GROUP_ID_ANY;
		gs.buckets[b].n_actions = 1;
		gs.buckets[b].actions[0].type = SL_ACT_OUTPUT;
		gs.buckets[b].actions[0].output.port = 2 + b;
	}
	if (rnd() % 2) { /* chain to group 8 or 9 */
		gs.buckets[0].actions[0].type = SL_ACT_GROUP;
		gs.buckets[0].actions[0].group_id = 8 + (uint32_t)(rnd() % 2);
	}
}

/* Group 8: indirect to port 4, or fast failover watching port 4 (out 4 or 2). */
static void
group8_spec(struct sl_group_spec *g)
{
	memset(g, 0, sizeof(*g));
	g->group_id = 8;
	g->type = rnd() % 2 ? SL_GROUP_INDIRECT : SL_GROUP_FF;
	g->n_buckets = 1;
	g->buckets[0].watch_port = g->type == SL_GROUP_FF ? 4 : SL_PORT_ANY;
	g->buckets[0].watch_group = SL_GROUP_ID_ANY;
	g->buckets[0].n_actions = 1;
	g->buckets[0].actions[0].type = SL_ACT_OUTPUT;
	g->buckets[0].actions[0].output.port = rnd() % 2 ? 4 : 2;
}

static int
sum_flow(const struct sl_flow *f, void *arg)
{
	*(uint64_t *)arg += sl_flow_packets(f);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned long n_ops = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
	struct sl_flow_spec fs;
	struct sl_flow_filter flt;
	char err[256];
	pthread_t th;
	unsigned long ops = 0, publishes = 0;
	bool up[4] = {true, true, true, true};

	deferred = argc > 2 && strcmp(argv[2], "deferred") == 0;
	SL_VERIFY(sl_pipeline_create(&pl) == 0);
	sl_pipeline_ports_set(pl, 4, up);
	sl_pipeline_ffp_cost_model(pl, false); /* a LUT however small the table (before sync) */
	if (deferred) {                        /* table 1: one low-latency entry, output 2 */
		sl_flow_spec_init(&fs);
		fs.table_id = 1;
		fs.priority = 1;
		fs.cookie = 1000;
		fs.flags = SL_FF_LOW_LATENCY;
		fs.insns.n_apply = 1;
		fs.insns.has_apply = true;
		fs.insns.apply[0].type = SL_ACT_OUTPUT;
		fs.insns.apply[0].output.port = 2;
		SL_VERIFY(sl_pipeline_flow_add(pl, &fs, err, sizeof(err)) == 0);
		sl_pipeline_publish(pl);
	}
	sl_pipeline_set_sync(pl, sync_fn, NULL);
	sl_pipeline_set_removed(pl, removed_fn, NULL);
	struct sl_group_spec g8, g9;
	group8_spec(&g8);
	SL_VERIFY(sl_pipeline_group_add(pl, &g8, err, sizeof(err)) == 0);
	memset(&g9, 0, sizeof(g9));
	g9.group_id = 9;
	g9.type = SL_GROUP_FF;
	g9.n_buckets = 2;
	g9.buckets[0] = (struct sl_bucket_spec){
		.watch_port = SL_PORT_ANY, .watch_group = 8, .n_actions = 1};
	g9.buckets[0].actions[0] = (struct sl_action){.type = SL_ACT_GROUP, .group_id = 8};
	g9.buckets[1] = (struct sl_bucket_spec){
		.watch_port = 3, .watch_group = SL_GROUP_ID_ANY, .n_actions = 1};
	g9.buckets[1].actions[0] = (struct sl_action){.type = SL_ACT_OUTPUT, .output.port = 3};
	SL_VERIFY(sl_pipeline_group_add(pl, &g9, err, sizeof(err)) == 0);
	group_spec(SL_GROUP_SELECT);
	SL_VERIFY(sl_pipeline_group_add(pl, &gs, err, sizeof(err)) == 0);
	ctx = sl_pipeline_ctx_create(pl);
	SL_VERIFY(ctx != NULL);
	sl_pipeline_ctx_defer_credits(ctx, deferred);
	bool inline_mode = argc > 2 && strcmp(argv[2], "inline") == 0;
	if (inline_mode)
		sl_pipeline_set_sync(pl, NULL, NULL);
	else
		SL_VERIFY(pthread_create(&th, NULL, worker, NULL) == 0);

	while (ops < n_ops) {
		unsigned batch = 1 + (unsigned)(rnd() % 16);
		for (unsigned k = 0; k < batch; k++, ops++) {
			unsigned dst = (unsigned)(rnd() % (N_DSTS + 1)); /* N_DSTS: no nw_dst */
			unsigned prio = 100 + (unsigned)(rnd() % 3);
			switch (rnd() % 8) {
			case 0:
			case 1:
			case 2: /* add or replace */
				spec_for(&fs, dst, prio, 2 + (uint32_t)(rnd() % 3), rnd() % 4 == 0);
				CHECK(sl_pipeline_flow_add(pl, &fs, err, sizeof(err)) == 0, "%s",
				      err);
				break;
			case 3:
			case 4: { /* delete strict */
				unsigned n;
				spec_for(&fs, dst, prio, 2, false);
				sl_flow_filter_init(&flt);
				flt.strict = true;
				flt.priority = fs.priority;
				flt.match = &fs.match;
				n = sl_pipeline_flow_del(pl, &flt, SL_FLOW_REMOVED_DELETE);
				CHECK(n <= 1, "deleted %u", n);
				break;
			}
			case 5: { /* modify non-strict by cookie */
				unsigned n;
				spec_for(&fs, dst, prio, 2 + (uint32_t)(rnd() % 3), false);
				sl_flow_filter_init(&flt);
				flt.cookie = dst;
				flt.cookie_mask = UINT64_MAX;
				CHECK(sl_pipeline_flow_modify(pl, &flt, &fs, &n, err,
							      sizeof(err)) == 0,
				      "%s", err);
				break;
			}
			case 7: { /* low-latency mark set or cleared, by cookie */
				sl_flow_filter_init(&flt);
				flt.cookie = dst;
				flt.cookie_mask = UINT64_MAX;
				sl_pipeline_flow_set_ll(pl, &flt, rnd() % 2);
				if (rnd() % 64 ==
				    0) { /* group delete (removes its flows) and re-add */
					sl_pipeline_group_del(pl, 7);
					group_spec(SL_GROUP_INDIRECT);
					CHECK(sl_pipeline_group_add(pl, &gs, err, sizeof(err)) == 0,
					      "%s", err);
				}
				break;
			}
			case 6: /* group modify; the chained group 8 too, and port 4 down or up */
				group_spec(rnd() % 2 ? SL_GROUP_ALL : SL_GROUP_FF);
				CHECK(sl_pipeline_group_modify(pl, &gs, err, sizeof(err)) == 0,
				      "%s", err);
				if (rnd() % 4 == 0) {
					group8_spec(&g8);
					CHECK(sl_pipeline_group_modify(pl, &g8, err, sizeof(err)) ==
						      0,
					      "%s", err);
				}
				if (rnd() % 4 == 0)
					sl_pipeline_port_set_live(pl, 4, rnd() % 2);
				break;
			default:
				if (rnd() % 64 ==
				    0) { /* group delete (removes its flows) and re-add */
					sl_pipeline_group_del(pl, 7);
					group_spec(SL_GROUP_INDIRECT);
					CHECK(sl_pipeline_group_add(pl, &gs, err, sizeof(err)) == 0,
					      "%s", err);
				}
				break;
			}
		}
		sl_pipeline_publish(pl);
		publishes++;
		if (inline_mode) {
			one_burst();
			quiescent(publishes);
		}
	}
	/* Quiesce, then count: nothing may be lost. */
	stop = 1;
	if (!inline_mode)
		pthread_join(th, NULL);
	sl_pipeline_publish(pl);
	uint64_t live_pkts = 0;
	struct sl_pipeline_table_stats ts;
	const struct sl_pipeline_ctx *ctxs[1] = {ctx};
	sl_pipeline_flow_iterate(pl, 0, sum_flow, &live_pkts);
	sl_pipeline_table_stats(ctxs, 1, 0, &ts);
	printf("concurrent: %lu ops in %lu publishes, %lu bursts, %lu hits (live %lu + removed "
	       "%lu)\n",
	       ops, publishes, (unsigned long)epoch, (unsigned long)ts.matched,
	       (unsigned long)live_pkts, (unsigned long)removed_pkts);
	CHECK(bad_outcomes == 0, "%lu bad outcomes", (unsigned long)bad_outcomes);
	CHECK(epoch > publishes / 100, "worker ran %lu bursts", (unsigned long)epoch);
	CHECK(live_pkts + removed_pkts == ts.matched, "lost %ld hits",
	      (long)(ts.matched - live_pkts - removed_pkts));
	if (deferred) {
		struct sl_pipeline_table_stats t1;
		struct sl_ffp_path_stats ps;
		uint64_t t1_pkts = 0;
		sl_pipeline_table_stats(ctxs, 1, 1, &t1);
		sl_pipeline_flow_iterate(pl, 1, sum_flow, &t1_pkts);
		sl_pipeline_ffp_path_stats(pl, ctxs, 1, &ps);
		printf("deferred credits: %lu path hits, %lu stale; table 1 %lu hits, entry %lu\n",
		       (unsigned long)ps.hits, (unsigned long)ps.stale, (unsigned long)t1.matched,
		       (unsigned long)t1_pkts);
		CHECK(t1_pkts == t1.matched, "table 1: entry %lu, table %lu",
		      (unsigned long)t1_pkts, (unsigned long)t1.matched);
		CHECK(n_ops < 10000 || ps.hits > 0, "path records answered");
	}
	struct sl_ffp_lut_stats ls;
	sl_pipeline_ffp_lut_stats(ctxs, 1, 0, &ls);
	printf("ffp: %lu lut hits, %lu verifications, %lu invalidations\n", (unsigned long)ls.hits,
	       (unsigned long)ls.verifications, (unsigned long)ls.invalidations);
	CHECK(n_ops < 10000 || (ls.hits > 0 && ls.verifications > 0), "the fast path was used");
	struct sl_group_stats g8s, g9s;
	SL_VERIFY(sl_pipeline_group_get(pl, 8, NULL, &g8s) == 0 &&
		  sl_pipeline_group_get(pl, 9, NULL, &g9s) == 0);
	printf("chained groups: 8 ran %lu times, 9 %lu\n", (unsigned long)g8s.n_packets,
	       (unsigned long)g9s.n_packets);
	CHECK(n_ops < 10000 || (g8s.n_packets > 0 && g9s.n_packets > 0), "chains were taken");
	sl_pipeline_ctx_destroy(ctx);
	sl_pipeline_destroy(pl);
	return sl_test_summary();
}
