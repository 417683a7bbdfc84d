/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwd under concurrent change: a reader thread forwards bursts while the
 * main thread swaps between two configurations that send the same packets
 * to different ports (and one that enables only KeyFlow).  Every burst must
 * be decided by one configuration: all its lanes agree.  The sync hook is
 * a minimal quiescent-state scheme: the reader bumps a counter after each
 * burst and the writer waits until it moved twice (or the reader is done),
 * so every configuration published is live for at least one whole burst.
 */
#include "fwd.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../core/sl_test.h"

#define N 32

static struct sl_fwd *f;
static struct sl_pipeline *pl;
static volatile uint64_t epoch;
static volatile bool done;
static volatile unsigned long changes;
#define MIN_CHANGES 30
static unsigned long n_bursts, n_mixed, by_port[8];

static void
sync_reader(void *arg)
{
	uint64_t e = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE);
	unsigned spins = 0;

	(void)arg;
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&epoch, __ATOMIC_ACQUIRE) < e + 2)
		sl_test_relax(&spins);
}

static void *
reader(void *arg)
{
	unsigned long bursts = (unsigned long)(uintptr_t)arg;
	struct sl_pipeline_ctx *pctx = sl_pipeline_ctx_create(pl);
	struct sl_fwd_ctx *c = sl_fwd_ctx_create(f);
	struct sl_pipeline_hooks hooks = {0};
	static uint8_t bufs[N][64];

	/* At least @bursts bursts, and on until the writer made MIN_CHANGES changes. */
	for (unsigned long b = 0;
	     b < bursts || __atomic_load_n(&changes, __ATOMIC_ACQUIRE) < MIN_CHANGES; b++) {
		struct sl_pkt pkts[N];
		uint32_t out[N];
		uint8_t dr[N];

		for (unsigned i = 0; i < N; i++) {
			memset(bufs[i], 0, 64);
			bufs[i][3] = 3;    /* hypercube address 3 / route ID 3 */
			bufs[i][4] = 0xf1; /* hypercube tag */
			bufs[i][5] = 9;
			sl_pkt_init(&pkts[i], bufs[i], 64, 0, 4);
		}
		sl_fwd_run_burst(c, pl, pctx, pkts, N, &hooks, out, dr);
		for (unsigned i = 1; i < N; i++)
			if (out[i] != out[0]) {
				n_mixed++;
				break;
			}
		by_port[out[0] < 8 ? out[0] : 7]++;
		n_bursts++;
		__atomic_store_n(&epoch, epoch + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&done, true, __ATOMIC_RELEASE);
	sl_fwd_ctx_destroy(c);
	sl_pipeline_ctx_destroy(pctx);
	return NULL;
}

int
main(int argc, char **argv)
{
	unsigned long bursts = argc > 1 ? strtoul(argv[1], NULL, 0) : 200000;
	/* Address 3 from node 0 leaves on port 1 (bit 0); from node 2 also bit 0 -> port 2;
	 * with hypercube off the pipeline drops it (table-miss): port 0. */
	static const char *const confs[] = {"hypercube:addr=0,nbr=1@1,nbr=2@2",
					    "hypercube:addr=2,nbr=3@2,nbr=0@1", "keyflow:key=5"};
	struct sl_fwd_params p[3];
	bool up[4] = {true, true, true, true};
	char err[256];
	pthread_t th;

	SL_VERIFY(sl_pipeline_create(&pl) == 0);
	sl_pipeline_ports_set(pl, 4, up);
	SL_VERIFY(sl_fwd_create(4, &f) == 0);
	sl_fwd_set_sync(f, sync_reader, NULL);
	for (unsigned k = 0; k < 3; k++)
		SL_VERIFY(sl_fwd_params_parse(confs[k], &p[k], err, sizeof(err)) == 0);
	SL_VERIFY(pthread_create(&th, NULL, reader, (void *)(uintptr_t)bursts) == 0);
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		CHECK(sl_fwd_set(f, &p[changes % 3], NULL, err, sizeof(err)) == 0, "%s", err);
		__atomic_store_n(&changes, changes + 1, __ATOMIC_RELEASE);
	}
	pthread_join(th, NULL);
	CHECK(n_bursts >= bursts, "every burst ran");
	CHECK(n_mixed == 0, "%lu bursts saw two configurations", n_mixed);
	CHECK(changes >= MIN_CHANGES, "the configuration changed under traffic (%lu changes)",
	      changes);
	CHECK(by_port[1] > 0 && by_port[2] > 0 && by_port[0] > 0,
	      "all three configurations forwarded bursts (%lu/%lu/%lu)", by_port[1], by_port[2],
	      by_port[0]);
	printf("%lu bursts, %lu changes\n", n_bursts, changes);
	sl_fwd_destroy(f);
	sl_pipeline_destroy(pl);
	return sl_test_summary();
}
