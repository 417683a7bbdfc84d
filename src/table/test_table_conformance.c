/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance of every table kind against the reference classifier:
 * seeded random rules of the kind's shape, random adds and deletes, lookups
 * at burst sizes 0, 1, 3, 4, 5, 31, 32, 33, 63, 64 with random lane masks.
 * (lpm and mask also have deeper tests of their own: test_lpm, test_mask.)
 */
#include "table.h"
#include "../core/sl_test.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static uint64_t rng = 88172645463325252ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#define N_RULES 400

struct model {
	struct sl_rule rules[N_RULES];
	bool live[N_RULES];
};

static void
make_rule(const struct sl_table_params *p, struct sl_rule *r, unsigned id)
{
	memset(r, 0, sizeof(*r));
	r->priority = 1 + (uint32_t)(rnd() % 1000) * 1000 + id; /* distinct */
	r->data = (void *)(uintptr_t)(id + 1);
	switch (p->kind) {
	case SL_TABLE_DIRECT: {
		uint64_t idx = rnd() % p->max_entries;
		for (unsigned i = 0; i < p->direct_bytes; i++)
			r->value[p->direct_bytes - 1 - i] = (uint8_t)(idx >> (8 * i));
		memset(r->mask, 0xff, p->direct_bytes);
		break;
	}
	case SL_TABLE_EXACT:
		for (unsigned i = 0; i < p->key_size; i++)
			r->value[i] =
				(uint8_t)(rnd() % 3); /* small alphabet: keys collide on purpose */
		memset(r->mask, 0xff, p->key_size);
		break;
	case SL_TABLE_LPM: {
		unsigned size = SL_DIV_ROUND_UP(p->lpm_bits, 8), lead = size * 8 - p->lpm_bits;
		unsigned len = (unsigned)(rnd() % (p->lpm_bits + 1));
		for (unsigned b = 0; b < len; b++)
			r->mask[(lead + b) / 8] |= (uint8_t)(0x80 >> ((lead + b) % 8));
		for (unsigned i = 0; i < size; i++)
			r->value[i] = (uint8_t)rnd() & r->mask[i];
		break;
	}
	case SL_TABLE_MASK:
	default:
		for (unsigned i = 0; i < p->key_size; i++) {
			r->mask[i] = (rnd() % 3 == 0) ? 0xff : (uint8_t)(rnd() & rnd() & 0x0f);
			r->value[i] = (uint8_t)(rnd() % 3) & r->mask[i];
		}
		break;
	}
}

static void
make_key(const struct sl_table_params *p, const struct model *m, uint8_t *key)
{
	unsigned id = (unsigned)(rnd() % N_RULES);

	for (unsigned i = 0; i < p->key_size; i++)
		key[i] = (uint8_t)(rnd() % 3);
	if (p->kind == SL_TABLE_DIRECT) {
		memset(key, 0, p->key_size);
		uint64_t idx = rnd() % (p->max_entries + 4); /* some out of range */
		for (unsigned i = 0; i < p->direct_bytes; i++)
			key[p->direct_bytes - 1 - i] = (uint8_t)(idx >> (8 * i));
		return;
	}
	if (m->live[id] && rnd() % 2)
		for (unsigned i = 0; i < p->key_size; i++)
			key[i] =
				(uint8_t)((key[i] & ~m->rules[id].mask[i]) | m->rules[id].value[i]);
	if (p->kind == SL_TABLE_LPM) {
		unsigned size = SL_DIV_ROUND_UP(p->lpm_bits, 8);
		memset(key + size, 0, p->key_size - size);
	}
}

static void
run_kind(const struct sl_table_params *p, unsigned n_lookups)
{
	static const unsigned bursts[] = {0, 1, 3, 4, 5, 31, 32, 33, 63, 64};
	static struct model m;
	struct sl_table *t;
	struct sl_ref_table *ref = sl_ref_create(p);
	unsigned done = 0, mism = 0;

	memset(&m, 0, sizeof(m));
	CHECK(sl_table_create(p, &t) == 0, "create %s", sl_table_kind_name(p->kind));
	while (done < n_lookups) {
		/* A few random updates. */
		for (int u = 0; u < 4; u++) {
			unsigned id = (unsigned)(rnd() % N_RULES);
			if (m.live[id]) {
				void *data = NULL;
				int rc = sl_table_del(t, &m.rules[id], &data);
				CHECK(rc == 0 && data == m.rules[id].data, "del %s rc %d",
				      sl_table_kind_name(p->kind), rc);
				sl_ref_del(ref, &m.rules[id]);
				m.live[id] = false;
			} else {
				make_rule(p, &m.rules[id], id);
				int rc = sl_table_add(t, &m.rules[id]);
				if (rc == 0) {
					CHECK(sl_ref_add(ref, &m.rules[id]) == 0, "ref add");
					m.live[id] = true;
					CHECK(sl_table_find(t, &m.rules[id]) == m.rules[id].data,
					      "find after add");
				} else {
					/* Only key clashes may fail, and only for one-entry-per-key kinds. */
					CHECK(rc == -EEXIST && p->kind != SL_TABLE_MASK,
					      "add %s rc %d", sl_table_kind_name(p->kind), rc);
				}
			}
		}
		/* A burst of lookups. */
		unsigned n = bursts[rnd() % SL_ARRAY_SIZE(bursts)];
		uint8_t keys[SL_BURST_MAX][SL_KEY_MAX];
		const uint8_t *kp[SL_BURST_MAX];
		void *hits[SL_BURST_MAX];
		uint64_t lanes = sl_lanes_first(n) & (rnd() % 4 ? UINT64_MAX : rnd());
		for (unsigned i = 0; i < n; i++) {
			make_key(p, &m, keys[i]);
			kp[i] = keys[i];
		}
		uint64_t hit = sl_table_lookup_burst(t, kp, lanes, hits);
		CHECK((hit & ~lanes) == 0, "hit outside lanes");
		for (unsigned i = 0; i < n; i++) {
			if (!(lanes >> i & 1))
				continue;
			void *want = sl_ref_lookup(ref, keys[i], NULL);
			void *got = (hit >> i & 1) ? hits[i] : NULL;
			if (want != got && mism++ < 5)
				fprintf(stderr, "%s: lane %u want %p got %p\n",
					sl_table_kind_name(p->kind), i, want, got);
			done++;
		}
	}
	CHECK(mism == 0, "%s: %u mismatches in %u lookups", sl_table_kind_name(p->kind), mism,
	      done);
	unsigned n_iter = 0, n_live = 0;
	for (unsigned i = 0; i < N_RULES; i++)
		n_live += m.live[i];
	struct sl_table_stats st;
	sl_table_stats_read(t, &st);
	CHECK(st.n_entries == n_live, "%s: n_entries %u vs %u", sl_table_kind_name(p->kind),
	      st.n_entries, n_live);
	int count_fn(const struct sl_rule *r, void *arg);
	sl_table_iterate(t, count_fn, &n_iter);
	CHECK(n_iter == n_live, "%s: iterate %u vs %u", sl_table_kind_name(p->kind), n_iter,
	      n_live);
	printf("%-6s key %2u: %u lookups, %u mismatches, %u rules live\n",
	       sl_table_kind_name(p->kind), p->key_size, done, mism, n_live);
	sl_table_destroy(t);
	sl_ref_destroy(ref);
}

int
count_fn(const struct sl_rule *r, void *arg)
{
	(void)r;
	(*(unsigned *)arg)++;
	return 0;
}

int
main(void)
{
	struct sl_table_params ps[] = {
		{.kind = SL_TABLE_DIRECT, .key_size = 8, .direct_bytes = 8, .max_entries = 300},
		{.kind = SL_TABLE_DIRECT, .key_size = 8, .direct_bytes = 2, .max_entries = 1000},
		{.kind = SL_TABLE_EXACT, .key_size = 8},
		{.kind = SL_TABLE_EXACT, .key_size = 40},
		{.kind = SL_TABLE_EXACT, .key_size = 64},
		{.kind = SL_TABLE_LPM, .key_size = 8, .lpm_bits = 32},
		{.kind = SL_TABLE_LPM, .key_size = 16, .lpm_bits = 128},
		{.kind = SL_TABLE_LPM, .key_size = 8, .lpm_bits = 20},
		{.kind = SL_TABLE_MASK, .key_size = 8},
		{.kind = SL_TABLE_MASK, .key_size = 40},
	};
	struct sl_table_params bad[] = {
		{.kind = SL_TABLE_EXACT, .key_size = 12},
		{.kind = SL_TABLE_LPM, .key_size = 8, .lpm_bits = 0},
		{.kind = SL_TABLE_DIRECT, .key_size = 8, .direct_bytes = 9, .max_entries = 4},
	};
	struct sl_table *t;

	for (unsigned i = 0; i < SL_ARRAY_SIZE(ps); i++)
		run_kind(&ps[i], 150000);
	for (unsigned i = 0; i < SL_ARRAY_SIZE(bad); i++)
		CHECK(sl_table_create(&bad[i], &t) == -EINVAL, "bad params %u accepted", i);
	/* Kind-specific rejections. */
	struct sl_rule r = {.priority = 1};
	CHECK(sl_table_create(&ps[2], &t) == 0, "create exact");
	r.mask[0] = 0xf0;
	CHECK(sl_table_add(t, &r) == -EINVAL, "exact accepted a partial mask");
	sl_table_destroy(t);
	CHECK(sl_table_create(&ps[0], &t) == 0, "create direct");
	memset(r.mask, 0xff, 8);
	r.value[0] = 0xff; /* index far beyond max_entries */
	CHECK(sl_table_add(t, &r) == -EINVAL, "direct accepted an index out of range");
	sl_table_destroy(t);
	sl_table_destroy(NULL);
	return sl_test_summary();
}
