/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The search budget (pipeline.h: struct sl_search_budget): a per-worker
 * token bucket, in TSC cycles, for the searches that decision-cache misses
 * cause in expensive tables.
 *
 * Why a budget and not a faster classifier.  Measured with bench/run attack
 * (2,000 deny rules, each with its own random bit masks on nw_src/nw_dst,
 * which rte_acl cannot take in bounds, so the tuple space search serves):
 * a cached packet costs ~270 cycles of a worker, rx included; a packet that
 * misses the cache ~42,000 (2,000 subtable probes, ~16 us at 2.6 GHz).  A
 * 1.9 % miss rate cut benign throughput to 0.22 of normal; fresh headers on
 * every attack frame would leave nothing.  Any classifier has a table that
 * makes its misses costly; bounding what misses may take bounds every
 * attack of this kind, as Open vSwitch's bounded upcall queues do.
 *
 * Cost per table: each worker measures every search of a budgeted table
 * (pl_dtable.budgeted: decision cache on and at least PL_BUDGET_MIN_MASKS
 * masks) and keeps a moving average of the cycles per key.  Searches of a
 * table below the cost threshold are measured but never charged or
 * refused, so tables served by an rte_acl snapshot (~50-200 ns a key) are
 * untouched.
 *
 * Admission: the bucket refills at share/1024 of the elapsed cycles, up to
 * 50 ms of refill (at 5 %: 2.5 ms of searching, enough to refill the cache
 * entries of ~150 flows at 16 us after a table change; with 10 ms, a fresh
 * switch under full load refused some of the 64 benign flows' first
 * packets).  While the caller keeps up with its input every search runs
 * (and is charged: the bucket may owe up to its size, so a worker that
 * falls behind after a burst of searches refuses at once).  Behind,
 * a burst's misses get as many lanes as the tokens cover at the table's
 * cost (at least one while any token is left), lowest lanes first; the
 * rest are refused.  The tokens are then charged with the cycles measured,
 * so the long-run share holds whatever the estimate says.
 */
#include "pipeline_priv.h"

#include <errno.h>
#include <string.h>

#define BUDGET_DEPTH_DIV 20 /* bucket size: 50 ms of refill */
#define COST_SHIFT 3        /* moving average: 1/8 of each new sample */

int
sl_pipeline_search_budget_set(struct sl_pipeline *pl, const struct sl_search_budget *b)
{
	struct pl_accel *a = &pl->accel;
	uint64_t hz = sl_pipeline_tsc_hz();

	if (b->share_pct > 100)
		return -EINVAL;
	a->budget = *b;
	__atomic_store_n(&a->budget_cost_cyc, (uint64_t)b->cost_ns * hz / 1000000000u,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&a->budget_depth_cyc, hz / BUDGET_DEPTH_DIV * b->share_pct / 100,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&a->budget_share, b->share_pct * 1024u / 100, __ATOMIC_RELAXED);
	return 0;
}

void
sl_pipeline_search_budget_get(const struct sl_pipeline *pl, struct sl_search_budget *b)
{
	*b = pl->accel.budget;
}

void
sl_pipeline_search_budget_stats(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
				struct sl_search_budget_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned c = 0; c < n_ctxs; c++) {
		st->searches += ctxs[c]->budget.searches;
		st->cycles += ctxs[c]->budget.cycles;
		st->refused += ctxs[c]->drops[SL_DROP_SEARCH_BUDGET];
	}
}

uint64_t
sl_pipeline_search_cost(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
			unsigned table_id)
{
	uint64_t cost = 0;

	for (unsigned c = 0; table_id < SL_TABLES_MAX && c < n_ctxs; c++)
		cost = SL_MAX(cost, (uint64_t)ctxs[c]->budget.cost[table_id]);
	return cost;
}

/* The rest of this file runs on the workers, once per burst with misses in a budgeted table. */

/* The lowest @n lanes of @lanes. */
static uint64_t
lanes_lowest(uint64_t lanes, uint64_t n)
{
	uint64_t out = 0;

	while (lanes != 0 && n-- > 0) {
		out |= lanes & -lanes;
		lanes &= lanes - 1;
	}
	return out;
}

uint64_t
pl_budget_lookup(const struct sl_pipeline *pl, const struct pl_dtable *pt,
		 struct sl_pipeline_ctx *ctx, unsigned table_id, bool keeping_up, uint64_t *todo,
		 uint64_t *found)
{
	struct pl_budget *bg = &ctx->budget;
	uint32_t share = __atomic_load_n(&pl->accel.budget_share, __ATOMIC_RELAXED);
	int64_t depth = (int64_t)__atomic_load_n(&pl->accel.budget_depth_cyc, __ATOMIC_RELAXED);
	uint64_t cost_min = __atomic_load_n(&pl->accel.budget_cost_cyc, __ATOMIC_RELAXED);
	uint64_t cost = bg->cost[table_id], now = ctx->now, admit = *todo, refused = 0;
	bool charged = cost >= cost_min && cost != 0;

	if (share == 0) { /* off: not even measured */
		*found = sl_table_lookup_burst(pt->tbl, ctx->keyp, admit, ctx->hits);
		return 0;
	}
	/* Refill for the time since the last burst that came here (capped: no overflow). */
	uint64_t dt = SL_MIN(now - bg->last, (uint64_t)1 << 40);
	bg->tokens = SL_MIN(bg->tokens + (int64_t)(dt * share >> 10), depth);
	bg->last = now;
	/* Behind: only what the tokens cover (a lane at least while there are any). */
	if (charged && !keeping_up) {
		uint64_t n = bg->tokens > 0 ? (uint64_t)bg->tokens / cost + 1 : 0;
		admit = lanes_lowest(*todo, n);
		refused = *todo & ~admit;
		*todo = admit;
	}
	if (admit == 0) {
		*found = 0;
		return refused;
	}
	uint64_t t0 = sl_pipeline_tsc();
	*found = sl_table_lookup_burst(pt->tbl, ctx->keyp, admit, ctx->hits);
	uint64_t cyc = sl_pipeline_tsc() - t0;
	unsigned n_keys = (unsigned)__builtin_popcountll(admit);
	uint64_t per_key = cyc / n_keys;

	/*
	 * A sample counts for at most twice the average: a worker preempted or
	 * interrupted mid-search (a shared core) must not make a table look
	 * expensive, nor empty the bucket.  A table that grows costly gets
	 * there in a few dozen samples (+1/8 each).  The first sample sets the
	 * average: a table starts expensive or cheap, not in between.
	 */
	if (cost != 0) {
		per_key = SL_MIN(per_key, 2 * cost);
		cyc = SL_MIN(cyc, per_key * n_keys);
	}
	per_key = SL_MIN(per_key, (uint64_t)UINT32_MAX);
	bg->cost[table_id] =
		cost == 0 ? (uint32_t)per_key
			  : (uint32_t)(cost - (cost >> COST_SHIFT) + (per_key >> COST_SHIFT));
	bg->searches += n_keys;
	bg->cycles += cyc;
	if (charged)
		bg->tokens = SL_MAX(bg->tokens - (int64_t)cyc, -depth);
	return refused;
}
