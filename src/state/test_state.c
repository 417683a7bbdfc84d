/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * State table tests: scopes, timeouts and rollback, capacity and eviction,
 * a differential run against a plain reference model, the dump, and a
 * worker thread racing the control thread's commands and dumps.
 */
#include "state.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "../core/sl_test.h"

/* An Ethernet/IPv4/UDP frame from @src to @dst (host order), udp ports @sp -> @dp. */
static void
frame(uint8_t *f, uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp)
{
	memset(f, 0, 64);
	memcpy(f, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00", 14);
	f[14] = 0x45;
	f[17] = 50;
	f[22] = 64;
	f[23] = 17;
	for (int i = 0; i < 4; i++) {
		f[26 + i] = (uint8_t)(src >> (24 - 8 * i));
		f[30 + i] = (uint8_t)(dst >> (24 - 8 * i));
	}
	f[34] = (uint8_t)(sp >> 8);
	f[35] = (uint8_t)sp;
	f[36] = (uint8_t)(dp >> 8);
	f[37] = (uint8_t)dp;
}

static const struct sl_field F_SRC = {.id = SL_FIELD_IPV4_SRC};
static const struct sl_field F_DST = {.id = SL_FIELD_IPV4_DST};

static struct sl_state *
make(uint32_t capacity, bool symmetric)
{
	struct sl_field lk[2] = {F_SRC, F_DST}, up[2] = {F_DST, F_SRC};
	struct sl_state_params p = {.lookup = lk,
				    .n_lookup = 2,
				    .update = symmetric ? up : NULL,
				    .n_update = symmetric ? 2 : 0,
				    .capacity = capacity,
				    .tsc_hz = 1000 /* one tick per millisecond */};
	struct sl_state *s = NULL;
	char err[128];
	int rc = sl_state_create(&p, &s, err, sizeof(err));

	CHECK(rc == 0, "create: %d %s", rc, err);
	return s;
}

static uint32_t
lookup1(struct sl_state *s, uint32_t src, uint32_t dst, uint64_t now)
{
	static uint8_t keys[SL_BURST_MAX][SL_KEY_MAX];
	uint8_t f[64];
	struct sl_pkt p;

	frame(f, src, dst, 1000, 2000);
	sl_pkt_init(&p, f, 64, 0, 1);
	p.state = 0xdead;
	sl_state_lookup_burst(s, &p, 1, now, keys);
	return p.state;
}

static int
set1(struct sl_state *s, uint32_t src, uint32_t dst, uint32_t state, uint32_t rollback,
     uint32_t idle, uint32_t hard, uint64_t now)
{
	struct sl_state_set a = {
		.state = state, .rollback = rollback, .idle_ms = idle, .hard_ms = hard};
	uint8_t f[64];
	struct sl_pkt p;

	frame(f, src, dst, 1000, 2000);
	sl_pkt_init(&p, f, 64, 0, 1);
	return sl_state_set_pkt(s, &p, &a, now);
}

static void
test_create_errors(void)
{
	struct sl_field lk[2] = {F_SRC, F_DST}, bad[2] = {F_SRC, {.id = SL_FIELD_TCP_DST}};
	struct sl_field st[1] = {{.id = SL_FIELD_STATE}};
	struct sl_state_params p = {.lookup = lk, .n_lookup = 2, .tsc_hz = 1000};
	struct sl_state *s;
	char err[128] = "";

	p.n_lookup = 0;
	CHECK(sl_state_create(&p, &s, err, sizeof(err)) == -EINVAL && s == NULL, "no lookup");
	p.n_lookup = 2;
	p.update = bad;
	p.n_update = 2;
	CHECK(sl_state_create(&p, &s, err, sizeof(err)) == -EINVAL, "widths");
	CHECK(strstr(err, "tcp_dst") != NULL, "error names the field: %s", err);
	p.update = lk;
	p.n_update = 1;
	CHECK(sl_state_create(&p, &s, err, sizeof(err)) == -EINVAL, "counts differ");
	p.n_update = 0;
	p.capacity = SL_STATE_CAPACITY_MAX + 1;
	CHECK(sl_state_create(&p, &s, err, sizeof(err)) == -EINVAL, "capacity");
	CHECK(strstr(err, "16777217") != NULL, "error names the size: %s", err);
	p.capacity = 0;
	p.lookup = st;
	p.n_lookup = 1;
	CHECK(sl_state_create(&p, &s, err, sizeof(err)) == -EINVAL, "state in a scope");
	p.lookup = lk;
	p.n_lookup = 2;
	p.tsc_hz = 0;
	CHECK(sl_state_create(&p, &s, err, sizeof(err)) == -EINVAL, "tsc_hz 0");
}

static void
test_scopes(void)
{
	struct sl_state *s = make(1024, true);
	struct sl_state_stats st;
	uint32_t a = 0x0a000001, b = 0x0a000002;

	CHECK(lookup1(s, a, b, 0) == 0, "unknown flow is state 0");
	/* The reply b -> a updates the request's flow a -> b (update = dst+src). */
	CHECK(set1(s, b, a, 7, 0, 0, 0, 0) == 0, "set");
	CHECK(lookup1(s, a, b, 1) == 7, "request flow sees the reply's update");
	CHECK(lookup1(s, b, a, 1) == 0, "the reply's own flow is untouched");
	CHECK(set1(s, b, a, 9, 0, 0, 0, 2) == 0, "overwrite");
	CHECK(lookup1(s, a, b, 3) == 9, "overwritten");
	CHECK(set1(s, b, a, 0, 0, 0, 0, 4) == 0, "set 0 removes");
	sl_state_stats_get(s, &st);
	CHECK(st.n_entries == 0 && st.inserts == 1 && st.sets == 1 && st.deletes == 1,
	      "counters %u %lu %lu %lu", st.n_entries, (unsigned long)st.inserts,
	      (unsigned long)st.sets, (unsigned long)st.deletes);
	CHECK(st.lookups == 4 && st.hits == 2, "lookups %lu hits %lu", (unsigned long)st.lookups,
	      (unsigned long)st.hits);
	sl_state_destroy(s);

	/* Same scope both ways: set and lookup on the same packet's flow. */
	s = make(16, false);
	CHECK(set1(s, a, b, 3, 0, 0, 0, 0) == 0 && lookup1(s, a, b, 0) == 3, "same scope");
	CHECK(lookup1(s, b, a, 0) == 0, "other direction is another flow");
	sl_state_destroy(s);
}

static void
test_timeouts(void)
{
	struct sl_state *s = make(64, false);
	struct sl_state_stats st;
	uint32_t a = 1, b = 2;

	/* Idle 100 ms, rollback 5: lookups within 100 ms keep it alive. */
	set1(s, a, b, 3, 5, 100, 0, 1000);
	CHECK(lookup1(s, a, b, 1099) == 3, "before idle");
	CHECK(lookup1(s, a, b, 1198) == 3, "refreshed by the lookup at 1099");
	CHECK(lookup1(s, a, b, 1298) == 5, "idle passed: rollback state");
	CHECK(lookup1(s, a, b, 100000) == 5, "rollback state has no timeouts");
	/* Hard 50 ms, rollback 0: lookups do not extend it; afterwards the entry is gone. */
	set1(s, a, b, 4, 0, 0, 50, 2000);
	CHECK(lookup1(s, a, b, 2030) == 4, "before hard");
	CHECK(lookup1(s, a, b, 2049) == 4, "just before hard");
	CHECK(lookup1(s, a, b, 2050) == 0, "hard passed: rollback 0");
	sl_state_stats_get(s, &st);
	CHECK(st.n_entries == 0 && st.expired == 2, "entries %u expired %lu", st.n_entries,
	      (unsigned long)st.expired);
	/* Idle and hard together: whichever comes first. */
	set1(s, a, b, 6, 1, 100, 150, 3000);
	CHECK(lookup1(s, a, b, 3090) == 6 && lookup1(s, a, b, 3140) == 6, "alive");
	CHECK(lookup1(s, a, b, 3150) == 1, "hard first despite lookups");
	/* The housekeeping sweep expires entries without traffic. */
	set1(s, 10, 11, 8, 0, 10, 0, 4000);
	sl_state_stats_get(s, &st);
	uint32_t before = st.n_entries;
	for (int i = 0; i < 8 * 64; i++)
		sl_state_service(s, 5000);
	sl_state_stats_get(s, &st);
	CHECK(st.n_entries == before - 1, "sweep removed the idle entry: %u -> %u", before,
	      st.n_entries);
	sl_state_destroy(s);
}

static int
dump_left(const struct sl_state_entry_info *e, void *arg)
{
	uint32_t *out = arg;

	out[0] = e->state;
	out[1] = e->idle_left_ms;
	out[2] = e->hard_left_ms;
	return 0;
}

/*
 * Deadlines are 32-bit milliseconds: they must hold across the wrap of the
 * 32-bit clock, and timeouts too long for them (or idle and hard together)
 * take the exact 64-bit path.  Both to the millisecond, dumps included.
 */
static void
test_timeouts_wide(void)
{
	struct sl_state *s = make(64, false);
	uint32_t a = 0x0a000001, b = 0x0a000002, d[3];
	uint64_t t = (UINT64_C(1) << 32) - 50; /* 50 ms before the 32-bit wrap */

	CHECK(set1(s, a, b, 7, 0, 100, 0, t) == 0, "set idle 100");
	CHECK(lookup1(s, a, b, t + 99) == 7, "idle across the wrap: alive");
	CHECK(lookup1(s, a, b, t + 198) == 7, "refreshed at +99: alive at +198");
	sl_state_dump(s, t + 200, dump_left, d);
	CHECK(d[0] == 7 && d[1] == 98 && d[2] == 0, "dump idle_left %u (98)", d[1]);
	CHECK(lookup1(s, a, b, t + 298) == 0, "idle passed at +298");
	CHECK(set1(s, a, b, 8, 9, 0, 30, t + 40) == 0, "set hard 30");
	CHECK(lookup1(s, a, b, t + 69) == 8, "before hard");
	sl_state_dump(s, t + 60, dump_left, d);
	CHECK(d[0] == 8 && d[1] == 0 && d[2] == 10, "dump hard_left %u (10)", d[2]);
	CHECK(lookup1(s, a, b, t + 70) == 9, "hard passed: rollback");

	/* Slow entries: an idle timeout past 2^28 ms, the longest hard timeout, both together. */
	t = 1000;
	CHECK(set1(s, a, b, 3, 0, (1u << 28) + 5, 0, t) == 0, "long idle");
	CHECK(lookup1(s, a, b, t + (1u << 28) + 4) == 3, "long idle: alive, refreshed");
	t += (1u << 28) + 4;
	sl_state_dump(s, t + 5, dump_left, d);
	CHECK(d[0] == 3 && d[1] == (1u << 28), "dump long idle_left %u", d[1]);
	CHECK(lookup1(s, a, b, t + (1u << 28) + 4) == 3, "long idle: still alive");
	t += (1u << 28) + 4;
	CHECK(lookup1(s, a, b, t + (1u << 28) + 5) == 0, "long idle passed");
	CHECK(set1(s, a, b, 4, 6, 0, UINT32_MAX, 10) == 0, "longest hard");
	CHECK(lookup1(s, a, b, 10 + (uint64_t)UINT32_MAX - 1) == 4, "before the longest hard");
	CHECK(lookup1(s, a, b, 10 + (uint64_t)UINT32_MAX) == 6, "longest hard passed");
	CHECK(set1(s, a, b, 5, 0, 20, 50, 100) == 0, "idle and hard");
	CHECK(lookup1(s, a, b, 119) == 5 && lookup1(s, a, b, 138) == 5, "idle refreshed");
	CHECK(lookup1(s, a, b, 149) == 5 && lookup1(s, a, b, 150) == 0, "hard first");
	sl_state_destroy(s);
}

/*
 * A tiny table (3 buckets of 3 ways): keys overflow to their second bucket
 * and move; every key stays findable, deletions of keys in either bucket
 * keep the others, and at capacity sets are refused and counted.
 */
static void
test_buckets_full(void)
{
	struct sl_state *s = make(7, false);
	struct sl_state_stats st;
	uint32_t in[64];
	unsigned n = 0, refused = 0;

	for (uint32_t k = 1; k <= 40; k++) {
		int rc = set1(s, k, 0, 100 + k, 0, 0, 0, 1);
		if (rc == 0)
			in[n++] = k;
		else
			refused += rc == -ENOSPC;
	}
	sl_state_stats_get(s, &st);
	CHECK(n == 7 && refused == 33 && st.refused == 33 && st.n_entries == 7,
	      "filled to capacity: %u in, %u refused", n, refused);
	for (unsigned i = 0; i < n; i++)
		CHECK(lookup1(s, in[i], 0, 2) == 100 + in[i], "key %u found", in[i]);
	for (uint32_t k = 41; k < 400; k++)
		CHECK(lookup1(s, k, 0, 2) == 0, "absent key %u", k);
	/* Delete every other key, insert others, in whichever bucket they land. */
	for (unsigned i = 0; i < n; i += 2)
		CHECK(set1(s, in[i], 0, 0, 0, 0, 0, 3) == 0, "delete %u", in[i]);
	for (unsigned i = 0; i < n; i++)
		CHECK(lookup1(s, in[i], 0, 4) == (i % 2 ? 100 + in[i] : 0), "after deletes: %u",
		      in[i]);
	unsigned more = 0;
	for (uint32_t k = 1000; k < 1100 && more < 4; k++)
		if (set1(s, k, 0, k, 0, 0, 0, 5) == 0) {
			more++;
			CHECK(lookup1(s, k, 0, 5) == k, "new key %u", k);
		}
	CHECK(more == 4, "room again after deletes: %u", more);
	for (unsigned i = 1; i < n; i += 2)
		CHECK(lookup1(s, in[i], 0, 6) == 100 + in[i], "kept: %u", in[i]);
	sl_state_clear(s);
	sl_state_stats_get(s, &st);
	CHECK(st.n_entries == 0, "cleared");
	for (uint32_t k = 1; k < 1100; k++)
		if (lookup1(s, k, 0, 7) != 0)
			CHECK(false, "key %u after clear", k);
	sl_state_destroy(s);
}

static void
test_capacity(void)
{
	struct sl_state *s = make(100, false);
	struct sl_state_stats st;
	unsigned ok = 0, refused = 0;

	for (uint32_t i = 0; i < 1000; i++) {
		int rc = set1(s, i, 0, 1, 0, 0, 10, 0); /* hard 10 ms */
		ok += rc == 0;
		refused += rc == -ENOSPC;
	}
	sl_state_stats_get(s, &st);
	CHECK(ok + refused == 1000 && ok <= 100 && ok >= 90, "ok %u refused %u", ok, refused);
	CHECK(st.n_entries == ok && st.refused == refused, "entries %u refused %lu", st.n_entries,
	      (unsigned long)st.refused);
	/* Filling a table to its capacity: two choices and a cuckoo move leave few refusals. */
	{
		struct sl_state *big = make(100000, false);
		unsigned bad = 0;
		for (uint32_t i = 0; i < 100000; i++)
			bad += set1(big, 0x0a000000 + i * 7919, i, 1, 0, 0, 0, 0) != 0;
		sl_state_stats_get(big, &st);
		CHECK(bad < 100 && st.n_entries == 100000 - bad, "full load: %u refused", bad);
		unsigned lost = 0;
		for (uint32_t i = 0; i < 100000; i += 97)
			lost += lookup1(big, 0x0a000000 + i * 7919, i, 0) != 1;
		CHECK(lost <= bad, "entries lost after moves: %u", lost);
		printf("capacity 100000: %u refused at full load, %zu bytes (%.1f per entry)\n",
		       bad, sl_state_footprint(big), (double)sl_state_footprint(big) / 100000);
		sl_state_destroy(big);
	}
	/* Lookups of unknown flows never insert (spoofed traffic cannot grow it). */
	for (uint32_t i = 5000; i < 6000; i++)
		lookup1(s, i, 0, 1);
	sl_state_stats_get(s, &st);
	CHECK(st.n_entries == ok, "lookups do not insert");
	CHECK(sl_state_footprint(s) < 100 * 128 + sizeof(struct sl_state_stats) * 0 + 40000,
	      "footprint bounded: %zu", sl_state_footprint(s));
	/* Once the timeouts passed, new flows evict the expired entries. */
	unsigned ok2 = 0;
	for (uint32_t i = 2000; i < 2050; i++)
		ok2 += set1(s, i, 0, 2, 0, 0, 0, 20) == 0;
	sl_state_stats_get(s, &st);
	CHECK(ok2 >= 40 && st.evicted >= 1, "after expiry %u accepted, %lu evicted", ok2,
	      (unsigned long)st.evicted);
	CHECK(st.n_entries <= 100, "never past capacity: %u", st.n_entries);
	/* Entries without timeouts are never evicted: refused instead. */
	sl_state_clear(s);
	bool kept[100];
	for (uint32_t i = 0; i < 100; i++)
		kept[i] = set1(s, i, 0, 1, 0, 0, 0, 0) == 0;
	sl_state_stats_get(s, &st);
	uint64_t r0 = st.refused, e0 = st.evicted;
	for (uint32_t i = 100; i < 300; i++)
		set1(s, i, 0, 1, 0, 0, 0, 1000000);
	sl_state_stats_get(s, &st);
	CHECK(st.n_entries <= 100 && st.refused >= r0 + 195 && st.evicted == e0,
	      "full table refuses: %u entries, %lu refused", st.n_entries,
	      (unsigned long)(st.refused - r0));
	unsigned lost = 0;
	for (uint32_t i = 0; i < 100; i++)
		lost += kept[i] && lookup1(s, i, 0, 2000000) != 1;
	CHECK(lost == 0, "%u permanent entries lost", lost);
	sl_state_destroy(s);
}

/* Reference model: a plain array with linear search. */
struct ref_ent {
	bool used;
	uint32_t src;
	uint32_t state, rollback;
	uint64_t idle, hard_deadline, last;
};
#define REF_KEYS 300
static struct ref_ent ref[REF_KEYS];

static uint32_t
ref_lookup(uint32_t k, uint64_t now, bool refresh)
{
	struct ref_ent *e = &ref[k];

	if (!e->used)
		return 0;
	if ((e->hard_deadline && now >= e->hard_deadline) ||
	    (e->idle && now - e->last >= e->idle)) {
		e->state = e->rollback;
		e->rollback = 0;
		e->idle = e->hard_deadline = 0;
		if (e->state == 0)
			e->used = false;
		return e->state;
	}
	if (refresh)
		e->last = now;
	return e->state;
}

static void
ref_set(uint32_t k, const struct sl_state_set *a, uint64_t now)
{
	struct ref_ent *e = &ref[k];

	if (a->state == 0 && a->rollback == 0) {
		e->used = false;
		return;
	}
	*e = (struct ref_ent){.used = true,
			      .state = a->state,
			      .rollback = a->rollback,
			      .idle = a->idle_ms,
			      .hard_deadline = a->hard_ms ? now + a->hard_ms : 0,
			      .last = now};
}

static uint64_t rng = 0x12345678;
static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

struct dump_ctx {
	unsigned n;
	unsigned bad;
	uint64_t now;
};

static int
dump_check(const struct sl_state_entry_info *e, void *arg)
{
	struct dump_ctx *d = arg;
	uint32_t k = (uint32_t)e->key[0] << 24 | (uint32_t)e->key[1] << 16 |
		     (uint32_t)e->key[2] << 8 | e->key[3];

	d->n++;
	if (k >= REF_KEYS || !ref[k].used || ref_lookup(k, d->now, false) != e->state)
		d->bad++;
	return 0;
}

/* The lookup-scope key of the test frame from source @k (any layout). */
static void
key_of(const struct sl_state *s, uint32_t k, uint8_t *key)
{
	uint8_t f[64];
	struct sl_pkt p;

	frame(f, k, 0, 1, 2);
	sl_pkt_init(&p, f, 64, 0, 1);
	memset(key, 0, SL_KEY_MAX);
	sl_key_extract(sl_state_layout(s, false), &p, key);
}

/*
 * The table against the model: random sets (long timeouts too), deletes,
 * housekeeping, lookup bursts (and the same bursts read by a non-writer,
 * sl_state_peek_burst) and set_states through the hints.  @capacity near
 * REF_KEYS fills the buckets: keys overflow to their second bucket, move
 * (cuckoo) and leave again.  @wide keys (16 bytes: nw_src + both MACs)
 * take the generic code instead of the 8-byte one.
 */
static void
test_differential_run(uint32_t capacity, bool wide)
{
	struct sl_field lk[3] = {F_SRC, {.id = SL_FIELD_ETH_SRC}, {.id = SL_FIELD_ETH_DST}};
	struct sl_state_params p = {
		.lookup = lk, .n_lookup = wide ? 3 : 1, .capacity = capacity, .tsc_hz = 1000};
	static uint8_t keys[SL_BURST_MAX][SL_KEY_MAX];
	struct sl_pkt peek[SL_BURST_MAX];
	static uint8_t frames[SL_BURST_MAX][64];
	struct sl_pkt pkts[SL_BURST_MAX];
	struct sl_state *s;
	struct sl_state_stats st;
	uint64_t now = 1;
	unsigned mismatches = 0, checks = 0;
	static const unsigned bursts[] = {0, 1, 3, 4, 5, 31, 32, 33, 63, 64};

	CHECK(sl_state_create(&p, &s, NULL, 0) == 0, "create");
	memset(ref, 0, sizeof(ref));
	for (unsigned round = 0; round < 20000; round++) {
		unsigned op = rnd(10);

		now += rnd(4) == 0 ? rnd(60) : 0;
		if (op < 3) {
			struct sl_state_set a = {.state = rnd(4),
						 .rollback = rnd(3),
						 .idle_ms = rnd(3) ? 0 : 1 + rnd(50),
						 .hard_ms = rnd(3) ? 0 : 1 + rnd(100)};
			/* Now and then timeouts too long for the 32-bit deadlines (slow entries). */
			if (rnd(16) == 0)
				a.idle_ms = (1u << 28) + rnd(50);
			if (rnd(16) == 0)
				a.hard_ms = UINT32_MAX - rnd(3);
			uint32_t k = rnd(REF_KEYS);
			ref_lookup(k, now, false); /* the model applies a passed timeout first */
			uint8_t key[SL_KEY_MAX];
			key_of(s, k, key);
			CHECK(sl_state_set_key(s, key, &a, now) == 0, "set");
			ref_set(k, &a, now);
		} else if (op == 3) {
			uint32_t k = rnd(REF_KEYS);
			uint8_t key[SL_KEY_MAX];
			key_of(s, k, key);
			ref_lookup(k, now, false);
			int rc = sl_state_del_key(s, key);
			/* An entry whose timeout passed may still be there to delete. */
			CHECK(rc == 0 || !ref[k].used, "del %u: %d vs %d", k, rc, ref[k].used);
			ref[k].used = false;
		} else if (op == 4) {
			sl_state_service(s, now);
		} else {
			unsigned n = bursts[rnd(SL_ARRAY_SIZE(bursts))];
			uint32_t want[SL_BURST_MAX];
			for (unsigned i = 0; i < n; i++) {
				uint32_t k = rnd(REF_KEYS);
				frame(frames[i], k, 0, 1, 2);
				sl_pkt_init(&pkts[i], frames[i], 64, 0, 1);
				want[i] = ref_lookup(k, now, true);
			}
			sl_state_lookup_burst(s, pkts, sl_lanes_first(n), now, keys);
			memcpy(peek, pkts, sizeof(peek[0]) * n);
			sl_state_peek_burst(s, peek, sl_lanes_first(n), now, keys);
			for (unsigned i = 0; i < n; i++) {
				checks++;
				if (pkts[i].state != want[i] && ++mismatches < 5)
					fprintf(stderr, "round %u lane %u: %u vs model %u\n", round,
						i, pkts[i].state, want[i]);
				if (peek[i].state != want[i] && ++mismatches < 5)
					fprintf(stderr, "round %u lane %u: peek %u vs model %u\n",
						round, i, peek[i].state, want[i]);
			}
			/*
			 * set_state on some lanes, as an XFSM table would: through the
			 * lookup's hints, which earlier sets of the burst (deletes, moves)
			 * and header writes (a quarter rewrite nw_src first) invalidate.
			 */
			for (unsigned i = 0; i < n; i++) {
				if (rnd(2))
					continue;
				uint32_t k = (uint32_t)frames[i][28] << 8 | frames[i][29];
				if (rnd(4) == 0) {
					struct sl_field f = {.id = SL_FIELD_IPV4_SRC};
					uint8_t v[4] = {0, 0, 0, 0};
					k = rnd(REF_KEYS);
					v[2] = (uint8_t)(k >> 8);
					v[3] = (uint8_t)k;
					sl_pkt_field_write(&pkts[i], &f, v);
				}
				struct sl_state_set a = {.state = rnd(3),
							 .rollback = rnd(2),
							 .idle_ms = rnd(2) ? 0 : 1 + rnd(50)};
				ref_lookup(k, now, false);
				CHECK(sl_state_set_pkt(s, &pkts[i], &a, now) == 0, "set_pkt");
				ref_set(k, &a, now);
			}
		}
	}
	CHECK(mismatches == 0, "%u of %u lookups differ from the model", mismatches, checks);
	sl_state_stats_get(s, &st);
	unsigned live = 0;
	for (unsigned k = 0; k < REF_KEYS; k++)
		live += (ref_lookup(k, now, false), ref[k].used);
	struct dump_ctx d = {.now = now};
	sl_state_dump(s, now, dump_check, &d);
	CHECK(d.bad == 0 && d.n == live, "dump: %u entries (%u live in the model), %u wrong", d.n,
	      live, d.bad);
	CHECK(st.refused == 0, "no refusals below capacity");
	sl_state_destroy(s);
}

static void
test_differential(void)
{
	test_differential_run(4096, false);
	test_differential_run(REF_KEYS, false); /* full buckets: overflow and cuckoo moves */
	test_differential_run(4096, true);
	test_differential_run(REF_KEYS, true);
}

/*
 * The same against the model with scopes that differ (lookup nw_src+nw_dst,
 * update nw_dst+nw_src: a reply writes its request's flow), so lookups and
 * set_state hints come from different keys in one burst.
 */
#define SIDE 17
static void
test_differential_scopes(void)
{
	static uint8_t keys[SL_BURST_MAX][SL_KEY_MAX];
	static uint8_t frames[SL_BURST_MAX][64];
	struct sl_pkt pkts[SL_BURST_MAX];
	struct sl_state *s = make(4096, true);
	uint64_t now = 1;
	unsigned mismatches = 0, checks = 0;

	memset(ref, 0, sizeof(ref));
	for (unsigned round = 0; round < 20000; round++) {
		unsigned n = 1 + rnd(SL_BURST_MAX);
		uint32_t want[SL_BURST_MAX], src[SL_BURST_MAX], dst[SL_BURST_MAX];

		now += rnd(4) == 0 ? rnd(60) : 0;
		if (rnd(8) == 0)
			sl_state_service(s, now);
		for (unsigned i = 0; i < n; i++) {
			src[i] = rnd(SIDE);
			dst[i] = rnd(SIDE);
			frame(frames[i], src[i], dst[i], 1, 2);
			sl_pkt_init(&pkts[i], frames[i], 64, 0, 1);
			want[i] = ref_lookup(src[i] * SIDE + dst[i], now, true);
		}
		sl_state_lookup_burst(s, pkts, sl_lanes_first(n), now, keys);
		for (unsigned i = 0; i < n; i++) {
			checks++;
			if (pkts[i].state != want[i] && ++mismatches < 5)
				fprintf(stderr, "scopes round %u lane %u: %u vs model %u\n", round,
					i, pkts[i].state, want[i]);
		}
		for (unsigned i = 0; i < n; i++) {
			if (rnd(3) == 0)
				continue;
			if (rnd(4) == 0) {
				struct sl_field f = {.id = SL_FIELD_IPV4_SRC};
				uint8_t v[4] = {0, 0, 0, 0};
				src[i] = rnd(SIDE);
				v[3] = (uint8_t)src[i];
				sl_pkt_field_write(&pkts[i], &f, v);
			}
			struct sl_state_set a = {.state = rnd(3),
						 .rollback = rnd(2),
						 .idle_ms = rnd(2) ? 0 : 1 + rnd(50)};
			uint32_t k = dst[i] * SIDE + src[i]; /* the update key (dst, src) */
			ref_lookup(k, now, false);
			CHECK(sl_state_set_pkt(s, &pkts[i], &a, now) == 0, "set_pkt");
			ref_set(k, &a, now);
		}
	}
	CHECK(mismatches == 0, "scopes: %u of %u lookups differ from the model", mismatches,
	      checks);
	sl_state_destroy(s);
}

static void
test_commands(void)
{
	struct sl_state *s = make(64, false);
	struct sl_state_cmd c = {.op = SL_STATE_CMD_SET, .set = {.state = 42}};
	uint8_t key[SL_STATE_KEY_MAX] = {0, 0, 0, 9, 0, 0, 0, 8};
	int rc = 0;

	memcpy(c.key, key, sizeof(key));
	CHECK(sl_state_ctl_post(s, &c) == 0 && sl_state_ctl_pending(s), "posted");
	CHECK(sl_state_get_key(s, key, 0) == 0, "not applied before the worker runs");
	sl_state_service(s, 0);
	CHECK(!sl_state_ctl_pending(s) && sl_state_get_key(s, key, 0) == 42, "applied");
	CHECK(lookup1(s, 9, 8, 0) == 42, "lookup sees the controller's state");
	for (unsigned i = 0; i < SL_STATE_RING + 1 && rc == 0; i++)
		rc = sl_state_ctl_post(s, &c);
	CHECK(rc == -ENOBUFS, "ring full: %d", rc);
	sl_state_service(s, 0);
	c.op = SL_STATE_CMD_DEL;
	sl_state_ctl_post(s, &c);
	sl_state_service(s, 0);
	CHECK(sl_state_get_key(s, key, 0) == 0, "deleted");
	c.op = SL_STATE_CMD_CLEAR;
	set1(s, 1, 2, 5, 0, 0, 0, 0);
	sl_state_ctl_post(s, &c);
	sl_state_service(s, 0);
	CHECK(lookup1(s, 1, 2, 0) == 0, "cleared");
	sl_state_destroy(s);
}

/*
 * Concurrency: a worker thread looks up and sets states of keys 0..499
 * (state = key * 1000 + n % 1000) and services the ring, while the control
 * thread posts sets for keys 500..999 (state = key * 1000 + 7) and dumps.
 * Every dumped entry must be consistent (state / 1000 == key); at the end
 * every control key holds its state.
 */
#define CK 500
static struct sl_state *cs;
static volatile bool stop;

static void *
worker(void *arg)
{
	static uint8_t keys[SL_BURST_MAX][SL_KEY_MAX];
	static uint8_t frames[32][64];
	struct sl_pkt pkts[32];
	uint64_t n = 0;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		for (unsigned i = 0; i < 32; i++) {
			uint32_t k = (uint32_t)((n * 32 + i) % (2 * CK));
			frame(frames[i], k, 0, 1, 2);
			sl_pkt_init(&pkts[i], frames[i], 64, 0, 1);
		}
		sl_state_service(cs, n);
		sl_state_lookup_burst(cs, pkts, sl_lanes_first(32), n, keys);
		for (unsigned i = 0; i < 32; i++) {
			uint32_t k = (uint32_t)((n * 32 + i) % (2 * CK));
			if (k < CK) {
				struct sl_state_set a = {.state = k * 1000 + (uint32_t)(n % 1000) +
								  1};
				sl_state_set_pkt(cs, &pkts[i], &a, n);
			}
		}
		n++;
	}
	sl_state_service(cs, n);
	return NULL;
}

static int
dump_consistent(const struct sl_state_entry_info *e, void *arg)
{
	unsigned *bad = arg;
	uint32_t k = (uint32_t)e->key[2] << 8 | e->key[3];

	if (e->state / 1000 != k)
		(*bad)++;
	return 0;
}

static void
test_concurrent(void)
{
	struct sl_field lk[1] = {F_SRC};
	struct sl_state_params p = {.lookup = lk, .n_lookup = 1, .capacity = 4096, .tsc_hz = 1000};
	pthread_t th;
	unsigned bad = 0, posted = 0, dumps = 0;

	CHECK(sl_state_create(&p, &cs, NULL, 0) == 0, "create");
	stop = false;
	pthread_create(&th, NULL, worker, NULL);
	for (unsigned round = 0; round < 200; round++) {
		for (uint32_t k = CK; k < 2 * CK; k++) {
			struct sl_state_cmd c = {.op = SL_STATE_CMD_SET,
						 .set = {.state = k * 1000 + 7}};
			c.key[2] = (uint8_t)(k >> 8);
			c.key[3] = (uint8_t)k;
			while (sl_state_ctl_post(cs, &c) == -ENOBUFS)
				;
			posted++;
		}
		sl_state_dump(cs, 0, dump_consistent, &bad);
		dumps++;
	}
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	CHECK(bad == 0, "%u inconsistent entries in %u dumps", bad, dumps);
	CHECK(!sl_state_ctl_pending(cs), "worker drained the ring");
	unsigned wrong = 0;
	for (uint32_t k = CK; k < 2 * CK; k++) {
		uint8_t key[SL_KEY_MAX] = {0};
		key[2] = (uint8_t)(k >> 8);
		key[3] = (uint8_t)k;
		wrong += sl_state_get_key(cs, key, 0) != k * 1000 + 7;
	}
	CHECK(wrong == 0, "%u control keys without their state (%u commands)", wrong, posted);
	struct sl_state_stats st;
	sl_state_stats_get(cs, &st);
	CHECK(st.commands == posted, "commands %lu vs %u", (unsigned long)st.commands, posted);
	sl_state_destroy(cs);
}

int
main(void)
{
	test_create_errors();
	test_scopes();
	test_timeouts();
	test_timeouts_wide();
	test_buckets_full();
	test_capacity();
	test_differential();
	test_differential_scopes();
	test_commands();
	test_concurrent();
	return sl_test_summary();
}
