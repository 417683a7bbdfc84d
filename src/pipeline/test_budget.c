/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The search budget (pipeline.h: struct sl_search_budget), against the
 * same pipeline without it.  A mask table holds 400 deny rules, each with
 * its own random bit masks on nw_src/nw_dst (the tuple space search probes
 * every mask for a key that matches nothing), and a low-priority permit
 * for 10.0.0.0/16.  Benign packets come from 64 keys (decision-cache hits
 * once seen), attack packets have fresh random addresses (a miss each).
 *
 * Every packet's fate is compared with the budget-free pipeline's: the same
 * output or drop reason, or dropped with reason search-budget.  Checked:
 *   - a budget that never runs out (100 %) refuses nothing;
 *   - an exhausted budget (1 %) refuses attack lanes, each counted under
 *     search-budget, in the budget's own counter and in no table's lookups;
 *     cached benign lanes go on;
 *   - nothing is refused while the caller keeps up, below the cost
 *     threshold, with the budget off, or for a trace.
 */
#include "pipeline.h"
#include "../core/sl_test.h"

#include <string.h>

#define LEN 64
#define N_DENY 400
#define N_BENIGN 64

static struct sl_pipeline *pl_b, *pl_r; /* with the budget, the reference without */
static struct sl_pipeline_ctx *ctx_b, *ctx_r;
static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t
rnd32(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static void
be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

/* Priority @prio, ip, nw_src=@s/@sm, nw_dst=@d/@dm: output @port, or drop (port 0). */
static void
add(struct sl_pipeline *pl, uint16_t prio, uint32_t s, uint32_t sm, uint32_t d, uint32_t dm,
    uint32_t port)
{
	struct sl_field eth = {.id = SL_FIELD_ETH_TYPE}, fs_ = {.id = SL_FIELD_IPV4_SRC},
			fd = {.id = SL_FIELD_IPV4_DST};
	uint8_t et[2] = {0x08, 0x00}, full[2] = {0xff, 0xff}, v[4], m[4];
	struct sl_flow_spec fs;
	char err[256];

	sl_flow_spec_init(&fs);
	fs.table_id = 0;
	fs.priority = prio;
	sl_match_set(&fs.match, &eth, et, full);
	if (sm) {
		be32(v, s & sm);
		be32(m, sm);
		sl_match_set(&fs.match, &fs_, v, m);
	}
	if (dm) {
		be32(v, d & dm);
		be32(m, dm);
		sl_match_set(&fs.match, &fd, v, m);
	}
	if (port) {
		fs.insns.apply[0].type = SL_ACT_OUTPUT;
		fs.insns.apply[0].output.port = port;
		fs.insns.n_apply = 1;
		fs.insns.has_apply = true;
	}
	SL_VERIFY(sl_pipeline_flow_add(pl, &fs, err, sizeof(err)) == 0);
}

static struct sl_pipeline *
build(void)
{
	struct sl_table_spec ts = {.table_id = 0, .kind = SL_TABLE_MASK, .n_fields = 3};
	bool up[2] = {true, true};
	struct sl_pipeline *pl;
	char err[256];

	SL_VERIFY(sl_pipeline_create(&pl) == 0);
	ts.fields[0] = (struct sl_field){.id = SL_FIELD_ETH_TYPE};
	ts.fields[1] = (struct sl_field){.id = SL_FIELD_IPV4_SRC};
	ts.fields[2] = (struct sl_field){.id = SL_FIELD_IPV4_DST};
	SL_VERIFY(sl_pipeline_table_declare(pl, &ts, err, sizeof(err)) == 0);
	sl_pipeline_ports_set(pl, 2, up);
	rng = 0x2545f4914f6cdd1dull; /* both pipelines get the same rules */
	add(pl, 1, 0x0a000000, 0xffff0000, 0, 0, 2);
	for (unsigned i = 0; i < N_DENY; i++) {
		uint32_t sm = rnd32() | 1, dm = rnd32();
		add(pl, (uint16_t)(100 + i), rnd32(), sm, rnd32(), dm, 0);
	}
	sl_pipeline_publish(pl);
	return pl;
}

static void
frame(uint8_t *f, uint32_t src, uint32_t dst)
{
	memset(f, 0, LEN);
	f[12] = 0x08;
	f[14] = 0x45;
	f[17] = 46;
	f[22] = 64;
	f[23] = 17;
	be32(f + 26, src);
	be32(f + 30, dst);
}

struct tally {
	unsigned long lanes, refused, benign_refused, benign;
};

/*
 * One burst of @n lanes through both pipelines; a lane is benign with
 * probability @benign_pct %.  Each lane must fare as in the reference, or be
 * refused (search-budget).
 */
static void
burst(unsigned n, unsigned benign_pct, bool keeping_up, struct tally *t)
{
	static uint8_t fb[SL_BURST_MAX][LEN], fr[SL_BURST_MAX][LEN];
	struct sl_pkt pb[SL_BURST_MAX], pr[SL_BURST_MAX];
	uint32_t ob[SL_BURST_MAX], or_[SL_BURST_MAX];
	uint8_t db[SL_BURST_MAX], dr[SL_BURST_MAX];
	bool benign[SL_BURST_MAX];
	const struct sl_pipeline_hooks hooks = {.keeping_up = keeping_up};
	unsigned out_b, out_r, dropped = 0;

	for (unsigned i = 0; i < n; i++) {
		unsigned k = rnd32() % N_BENIGN;
		benign[i] = rnd32() % 100 < benign_pct;
		if (benign[i])
			frame(fb[i], 0x0a000001 + k, 0x0a010001 + k);
		else
			frame(fb[i], rnd32() | 0x80000000u, rnd32()); /* outside 10.0.0.0/16 */
		memcpy(fr[i], fb[i], LEN);
		sl_pkt_init(&pb[i], fb[i], LEN, 0, 1);
		sl_pkt_init(&pr[i], fr[i], LEN, 0, 1);
	}
	out_b = sl_pipeline_run_burst(pl_b, ctx_b, pb, n, &hooks, ob, db);
	out_r = sl_pipeline_run_burst(pl_r, ctx_r, pr, n, NULL, or_, dr);
	for (unsigned i = 0; i < n; i++) {
		bool refused = ob[i] == SL_PORT_DROP && db[i] == SL_DROP_SEARCH_BUDGET;
		t->lanes++;
		t->benign += benign[i];
		if (refused) {
			t->refused++;
			t->benign_refused += benign[i];
		} else {
			CHECK(ob[i] == or_[i] && (ob[i] != SL_PORT_DROP || db[i] == dr[i]),
			      "lane %u: out %u/%u drop %u/%u", i, ob[i], or_[i], db[i], dr[i]);
		}
		CHECK(dr[i] != SL_DROP_SEARCH_BUDGET || or_[i] != SL_PORT_DROP,
		      "the reference refused");
		dropped += ob[i] == SL_PORT_DROP;
	}
	CHECK(out_b + dropped == n, "burst of %u: %u out + %u dropped", n, out_b, dropped);
	CHECK(out_b <= out_r, "more out with the budget (%u > %u)", out_b, out_r);
}

static uint64_t
drops_of(const struct sl_pipeline_ctx *c, enum sl_drop_reason r)
{
	const struct sl_pipeline_ctx *cs[1] = {c};
	uint64_t d[SL_DROP__MAX];

	sl_pipeline_drop_stats(cs, 1, d);
	return d[r];
}

static struct sl_search_budget_stats
budget_stats(void)
{
	const struct sl_pipeline_ctx *cs[1] = {ctx_b};
	struct sl_search_budget_stats st;

	sl_pipeline_search_budget_stats(cs, 1, &st);
	return st;
}

static void
budget(unsigned pct, unsigned cost_ns)
{
	struct sl_search_budget b = {.share_pct = pct, .cost_ns = cost_ns}, got;

	CHECK(sl_pipeline_search_budget_set(pl_b, &b) == 0, "set %u %u", pct, cost_ns);
	sl_pipeline_search_budget_get(pl_b, &got);
	CHECK(got.share_pct == pct && got.cost_ns == cost_ns, "get");
}

/* A fresh context for the budget pipeline (empty cache, full bucket), its benign keys cached. */
static void
fresh_ctx(void)
{
	struct tally warm = {0};

	sl_pipeline_ctx_destroy(ctx_b);
	ctx_b = sl_pipeline_ctx_create(pl_b);
	SL_VERIFY(ctx_b != NULL);
	for (unsigned k = 0; k < 64; k++)
		burst(32, 100, true, &warm);
	CHECK(warm.refused == 0, "warm-up refused %lu", warm.refused);
}

int
main(void)
{
	static const unsigned sizes[] = {0, 1, 3, 4, 5, 31, 32, 33, 63, 64};
	struct sl_search_budget b = {.share_pct = 101};
	struct tally t;

	pl_b = build();
	pl_r = build();
	ctx_r = sl_pipeline_ctx_create(pl_r);
	SL_VERIFY(ctx_r != NULL);
	CHECK(sl_pipeline_search_budget_set(pl_b, &b) == -EINVAL, "share above 100");

	/* Off (the library's default): nothing refused. */
	fresh_ctx();
	memset(&t, 0, sizeof(t));
	for (unsigned k = 0; k < 300; k++)
		burst(sizes[k % 10], 50, false, &t);
	CHECK(t.refused == 0 && budget_stats().searches == 0, "off: %lu refused", t.refused);

	/* A budget that never runs out: the same decisions, every search measured. */
	budget(100, 0);
	fresh_ctx();
	memset(&t, 0, sizeof(t));
	for (unsigned k = 0; k < 2000; k++)
		burst(sizes[k % 10], 50, false, &t);
	CHECK(t.refused == 0, "100 %%: %lu refused", t.refused);
	CHECK(budget_stats().searches > 0 && budget_stats().cycles > 0, "no search measured");
	{
		const struct sl_pipeline_ctx *cs[1] = {ctx_b};
		CHECK(sl_pipeline_search_cost(cs, 1, 0) > 0, "no cost measured");
		CHECK(sl_pipeline_search_cost(cs, 1, 7) == 0, "cost for an empty table");
	}

	/*
	 * Exhausted: 1 % of the cycles.  The attack lanes searched can take no
	 * more than the bucket (0.5 ms) plus 1 % of the time the loop runs,
	 * while the reference searches every one of them (400 probes): most
	 * are refused.  Cached benign lanes are refused only if an admitted
	 * attack key took their cache entry (a few at most).
	 */
	budget(1, 0);
	fresh_ctx();
	memset(&t, 0, sizeof(t));
	uint64_t lookups_r0, lookups_b0;
	{
		struct sl_pipeline_table_stats st;
		const struct sl_pipeline_ctx *cb[1] = {ctx_b}, *cr[1] = {ctx_r};
		sl_pipeline_table_stats(cb, 1, 0, &st);
		lookups_b0 = st.lookups;
		sl_pipeline_table_stats(cr, 1, 0, &st);
		lookups_r0 = st.lookups;
	}
	for (unsigned k = 0; k < 20000; k++)
		burst(sizes[k % 10], 90, false, &t);
	printf("exhausted: %lu lanes, %lu refused (%lu of %lu benign), %lu searched\n", t.lanes,
	       t.refused, t.benign_refused, t.benign, (unsigned long)budget_stats().searches);
	CHECK(t.refused > (t.lanes - t.benign) / 2, "1 %%: only %lu of %lu attack lanes refused",
	      t.refused, t.lanes - t.benign);
	CHECK(t.benign_refused <= t.benign / 100, "benign refused: %lu of %lu", t.benign_refused,
	      t.benign);
	CHECK(drops_of(ctx_b, SL_DROP_SEARCH_BUDGET) == t.refused, "counted %lu, seen %lu",
	      (unsigned long)drops_of(ctx_b, SL_DROP_SEARCH_BUDGET), t.refused);
	CHECK(budget_stats().refused == t.refused, "budget stats");
	CHECK(drops_of(ctx_r, SL_DROP_SEARCH_BUDGET) == 0, "reference refused");
	{
		/* Refused lanes were not looked up: they are in no table's lookups. */
		struct sl_pipeline_table_stats sb, sr;
		const struct sl_pipeline_ctx *cb[1] = {ctx_b}, *cr[1] = {ctx_r};
		sl_pipeline_table_stats(cb, 1, 0, &sb);
		sl_pipeline_table_stats(cr, 1, 0, &sr);
		CHECK(sb.lookups - lookups_b0 + t.refused == sr.lookups - lookups_r0,
		      "lookups %lu + refused %lu vs %lu", (unsigned long)(sb.lookups - lookups_b0),
		      t.refused, (unsigned long)(sr.lookups - lookups_r0));
	}

	/* Still exhausted, but the caller keeps up: every search runs. */
	memset(&t, 0, sizeof(t));
	for (unsigned k = 0; k < 300; k++)
		burst(32, 0, true, &t);
	CHECK(t.refused == 0, "keeping up: %lu refused", t.refused);

	/* A trace is never refused (ctx_b is nobody's worker context: it may trace). */
	{
		uint8_t f[LEN];
		struct sl_pkt p;
		struct sl_trace tr;
		frame(f, 0xc0000001u, 0x01020304u);
		sl_pkt_init(&p, f, LEN, 0, 1);
		sl_pipeline_trace(pl_b, ctx_b, &p, &tr);
		CHECK(tr.dropped && tr.drop != SL_DROP_SEARCH_BUDGET, "trace: drop %u", tr.drop);
	}

	/* Tables cheaper than the threshold are never refused. */
	budget(1, 1000000000);
	memset(&t, 0, sizeof(t));
	for (unsigned k = 0; k < 300; k++)
		burst(32, 0, false, &t);
	CHECK(t.refused == 0, "below the threshold: %lu refused", t.refused);

	/* Off again. */
	budget(0, 0);
	memset(&t, 0, sizeof(t));
	for (unsigned k = 0; k < 300; k++)
		burst(32, 0, false, &t);
	CHECK(t.refused == 0, "off: %lu refused", t.refused);

	sl_pipeline_ctx_destroy(ctx_b);
	sl_pipeline_ctx_destroy(ctx_r);
	sl_pipeline_destroy(pl_b);
	sl_pipeline_destroy(pl_r);
	return sl_test_summary();
}
