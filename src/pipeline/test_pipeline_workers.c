/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several workers on one pipeline: four threads, each with its
 * own context, run bursts through the same flows and the same select group
 * at once.  With sl_pipeline_set_shared_counters() no hit is lost: the
 * flows' packet counters add up to exactly the packets sent, the group's
 * to the packets that took it, its buckets' to the group's.
 *
 * Also prints (does not assert: this machine is shared) what the atomic
 * adds cost one worker: ns per burst with shared counters off and on.
 */
#include "pipeline.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../core/sl_test.h"

#define N_THREADS 4
#define N_DSTS 5 /* dst 0..3: output flows; dst 4: the group */
#define FRAME_LEN 64

static struct sl_pipeline *pl;
static unsigned long n_bursts;

struct thr {
	struct sl_pipeline_ctx *ctx;
	uint64_t rng;
	uint64_t sent, to_group, bad;
};

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
frame(uint8_t *d, unsigned dst)
{
	memset(d, 0, FRAME_LEN);
	d[12] = 0x08;
	d[14] = 0x45;
	d[17] = FRAME_LEN - 14; /* IP total length */
	d[22] = 64;
	d[23] = 17;
	d[30] = 10;
	d[33] = (uint8_t)dst;
}

/* One burst: runs of equal destinations (the per-run credit path) and singles. */
static void
burst(struct thr *t)
{
	uint8_t frames[32][FRAME_LEN];
	struct sl_pkt pkts[32];
	uint32_t outs[32];
	uint8_t drops[32];
	unsigned dst = 0;

	for (unsigned i = 0; i < 32; i++) {
		if (i == 0 || rnd(&t->rng) % 3 == 0)
			dst = (unsigned)(rnd(&t->rng) % N_DSTS);
		frame(frames[i], dst);
		sl_pkt_init(&pkts[i], frames[i], FRAME_LEN, 0, 1);
		t->to_group += dst == N_DSTS - 1;
	}
	sl_pipeline_run_burst(pl, t->ctx, pkts, 32, NULL, outs, drops);
	for (unsigned i = 0; i < 32; i++)
		t->bad += outs[i] < 2 || outs[i] > 3;
	t->sent += 32;
}

static void *
run(void *arg)
{
	struct thr *t = arg;

	for (unsigned long b = 0; b < n_bursts; b++)
		burst(t);
	return NULL;
}

static int
sum_flow(const struct sl_flow *f, void *arg)
{
	*(uint64_t *)arg += sl_flow_packets(f);
	return 0;
}

static double
ns_per_burst(struct thr *t, unsigned long n)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned long i = 0; i < n; i++)
		burst(t);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
}

int
main(int argc, char **argv)
{
	struct thr thr[N_THREADS];
	pthread_t th[N_THREADS];
	struct sl_flow_spec fs;
	struct sl_group_spec gs;
	struct sl_group_stats gst;
	char err[256];
	bool up[4] = {true, true, true, true};

	n_bursts = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	SL_VERIFY(sl_pipeline_create(&pl) == 0);
	sl_pipeline_ports_set(pl, 4, up);
	memset(&gs, 0, sizeof(gs));
	gs.group_id = 7;
	gs.type = SL_GROUP_SELECT;
	gs.n_buckets = 2;
	for (unsigned b = 0; b < 2; b++) {
		gs.buckets[b].weight = 1;
		gs.buckets[b].watch_port = SL_PORT_ANY;
		gs.buckets[b].watch_group = SL_GROUP_ID_ANY;
		gs.buckets[b].n_actions = 1;
		gs.buckets[b].actions[0].type = SL_ACT_OUTPUT;
		gs.buckets[b].actions[0].output.port = 2 + b;
	}
	SL_VERIFY(sl_pipeline_group_add(pl, &gs, err, sizeof(err)) == 0);
	for (unsigned dst = 0; dst < N_DSTS; dst++) {
		struct sl_field ft = {.id = SL_FIELD_ETH_TYPE}, fd = {.id = SL_FIELD_IPV4_DST};
		uint8_t et[2] = {0x08, 0x00}, m2[2] = {0xff, 0xff};
		uint8_t ip[4] = {10, 0, 0, (uint8_t)dst}, m4[4] = {0xff, 0xff, 0xff, 0xff};

		sl_flow_spec_init(&fs);
		fs.priority = 100;
		sl_match_set(&fs.match, &ft, et, m2);
		sl_match_set(&fs.match, &fd, ip, m4);
		fs.insns.n_apply = 1;
		fs.insns.has_apply = true;
		if (dst == N_DSTS - 1) {
			fs.insns.apply[0].type = SL_ACT_GROUP;
			fs.insns.apply[0].group_id = 7;
		} else {
			fs.insns.apply[0].type = SL_ACT_OUTPUT;
			fs.insns.apply[0].output.port = 2;
		}
		CHECK(sl_pipeline_flow_add(pl, &fs, err, sizeof(err)) == 0, "%s", err);
	}
	sl_pipeline_publish(pl);

	/* Cost of the atomic adds for one worker (printed, not asserted). */
	{
		struct thr t1 = {.ctx = sl_pipeline_ctx_create(pl), .rng = 99};
		SL_VERIFY(t1.ctx != NULL);
		double off = 0, on = 0;
		for (int rep = 0; rep < 3; rep++) {
			sl_pipeline_set_shared_counters(pl, false);
			off += ns_per_burst(&t1, n_bursts / 4 + 1);
			sl_pipeline_set_shared_counters(pl, true);
			on += ns_per_burst(&t1, n_bursts / 4 + 1);
		}
		printf("one worker: %.1f ns/burst with plain counters, %.1f with atomic adds "
		       "(%.2f ns/packet more)\n",
		       off / 3, on / 3, (on - off) / 3 / 32);
		sl_pipeline_ctx_destroy(t1.ctx);
	}

	/* Start counting from zero: replace every flow (fresh counters) and the group. */
	sl_pipeline_group_del(pl, 7);
	SL_VERIFY(sl_pipeline_group_add(pl, &gs, err, sizeof(err)) == 0);
	for (unsigned dst = 0; dst < N_DSTS; dst++) {
		struct sl_flow_filter flt;
		sl_flow_filter_init(&flt);
		sl_pipeline_flow_del(pl, &flt, SL_FLOW_REMOVED_DELETE);
	}
	SL_VERIFY(sl_pipeline_flow_count(pl, 255) == 0);
	for (unsigned dst = 0; dst < N_DSTS; dst++) {
		struct sl_field ft = {.id = SL_FIELD_ETH_TYPE}, fd = {.id = SL_FIELD_IPV4_DST};
		uint8_t et[2] = {0x08, 0x00}, m2[2] = {0xff, 0xff};
		uint8_t ip[4] = {10, 0, 0, (uint8_t)dst}, m4[4] = {0xff, 0xff, 0xff, 0xff};

		sl_flow_spec_init(&fs);
		fs.priority = 100;
		sl_match_set(&fs.match, &ft, et, m2);
		sl_match_set(&fs.match, &fd, ip, m4);
		fs.insns.n_apply = 1;
		fs.insns.has_apply = true;
		if (dst == N_DSTS - 1) {
			fs.insns.apply[0].type = SL_ACT_GROUP;
			fs.insns.apply[0].group_id = 7;
		} else {
			fs.insns.apply[0].type = SL_ACT_OUTPUT;
			fs.insns.apply[0].output.port = 2;
		}
		CHECK(sl_pipeline_flow_add(pl, &fs, err, sizeof(err)) == 0, "%s", err);
	}
	sl_pipeline_publish(pl);

	sl_pipeline_set_shared_counters(pl, true);
	for (unsigned i = 0; i < N_THREADS; i++) {
		thr[i] = (struct thr){.ctx = sl_pipeline_ctx_create(pl), .rng = 1 + i * 7919};
		SL_VERIFY(thr[i].ctx != NULL);
	}
	for (unsigned i = 0; i < N_THREADS; i++)
		SL_VERIFY(pthread_create(&th[i], NULL, run, &thr[i]) == 0);
	for (unsigned i = 0; i < N_THREADS; i++)
		pthread_join(th[i], NULL);

	uint64_t sent = 0, to_group = 0, bad = 0, flows = 0;
	const struct sl_pipeline_ctx *ctxs[N_THREADS];
	struct sl_pipeline_table_stats ts;
	for (unsigned i = 0; i < N_THREADS; i++) {
		sent += thr[i].sent;
		to_group += thr[i].to_group;
		bad += thr[i].bad;
		ctxs[i] = thr[i].ctx;
	}
	sl_pipeline_flow_iterate(pl, 255, sum_flow, &flows);
	sl_pipeline_table_stats(ctxs, N_THREADS, 0, &ts);
	SL_VERIFY(sl_pipeline_group_get(pl, 7, &gs, &gst) == 0);
	printf("%u workers: %lu packets, flows counted %lu, table matched %lu, group %lu "
	       "(buckets %lu + %lu)\n",
	       N_THREADS, (unsigned long)sent, (unsigned long)flows, (unsigned long)ts.matched,
	       (unsigned long)gst.n_packets, (unsigned long)gst.bucket_packets[0],
	       (unsigned long)gst.bucket_packets[1]);
	CHECK(bad == 0, "%lu bad outcomes", (unsigned long)bad);
	CHECK(ts.matched == sent, "per-context table counters: %lu of %lu",
	      (unsigned long)ts.matched, (unsigned long)sent);
	CHECK(flows == sent, "flow counters lost %ld hits", (long)(sent - flows));
	CHECK(gst.n_packets == to_group, "group counter lost %ld",
	      (long)(to_group - gst.n_packets));
	CHECK(gst.bucket_packets[0] + gst.bucket_packets[1] == gst.n_packets, "bucket counters");
	for (unsigned i = 0; i < N_THREADS; i++)
		sl_pipeline_ctx_destroy(thr[i].ctx);
	sl_pipeline_destroy(pl);
	return sl_test_summary();
}
