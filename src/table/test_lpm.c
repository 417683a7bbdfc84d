/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit and differential tests of the lpm table (lpm/lpm.c).
 *
 * Basic cases first (IPv4 nesting, errors, odd widths), then a differential
 * test against the reference classifier: seeded random nested prefixes,
 * interleaved adds and deletes, and lookups through lookup_burst with the
 * standard burst sizes and random lane masks, plus lookup_path.
 */
#include "table.h"

#include <errno.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

static unsigned n_passed, n_failed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (cond) {                                                                        \
			n_passed++;                                                                \
		} else {                                                                           \
			n_failed++;                                                                \
			if (n_failed < 20)                                                         \
				fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,   \
					#cond);                                                    \
		}                                                                                  \
	} while (0)

/* Checks that run millions of times count once per test, not once per call. */
static unsigned long n_mismatches;

#define CHECK_QUIET(cond)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			if (n_mismatches++ < 20)                                                   \
				fprintf(stderr, "%s:%d: mismatch: %s\n", __FILE__, __LINE__,       \
					#cond);                                                    \
		}                                                                                  \
	} while (0)

static uint64_t rng_state = 0x5eed5eed12345678ull;

static uint64_t
rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned
rnd_below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static u128
rnd128(void)
{
	return ((u128)rnd() << 64) | rnd();
}

/* The low @n bits set (n <= 128). */
static u128
low_bits(unsigned n)
{
	return n == 0 ? 0 : n >= 128 ? ~(u128)0 : ((u128)1 << n) - 1;
}

/* Mask of the first @plen bits of a @bits-wide, right-aligned field. */
static u128
prefix_mask(unsigned bits, unsigned plen)
{
	return low_bits(bits) & ~low_bits(bits - plen);
}

/* Write a @bits-wide field right-aligned, big-endian, at the start of @buf. */
static void
put_field(uint8_t *buf, unsigned bits, u128 v)
{
	unsigned n = SL_DIV_ROUND_UP(bits, 8u);

	for (unsigned i = 0; i < n; i++)
		buf[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static void
make_rule(struct sl_rule *r, unsigned bits, u128 value, unsigned plen, uint32_t prio, void *data)
{
	memset(r, 0, sizeof(*r));
	put_field(r->value, bits, value & prefix_mask(bits, plen));
	put_field(r->mask, bits, prefix_mask(bits, plen));
	r->priority = prio;
	r->data = data;
}

static struct sl_table *
make_table(unsigned bits, unsigned key_size, uint32_t max_entries)
{
	struct sl_table_params p = {
		.kind = SL_TABLE_LPM,
		.key_size = (uint16_t)key_size,
		.max_entries = max_entries,
		.lpm_bits = (uint16_t)bits,
	};
	struct sl_table *t = NULL;
	int rc = sl_table_create(&p, &t);

	CHECK(rc == 0 && t != NULL);
	if (rc != 0)
		abort();
	return t;
}

static int
add(struct sl_table *t, unsigned bits, u128 value, unsigned plen, uint32_t prio, uintptr_t data)
{
	struct sl_rule r;

	make_rule(&r, bits, value, plen, prio, (void *)data);
	return sl_table_add(t, &r);
}

static int
del(struct sl_table *t, unsigned bits, u128 value, unsigned plen, uint32_t prio)
{
	struct sl_rule r;

	make_rule(&r, bits, value, plen, prio, NULL);
	return sl_table_del(t, &r, NULL);
}

/* One-key lookup through lookup_burst; also cross-checks lookup_path. */
static uintptr_t
lookup1(struct sl_table *t, unsigned bits, u128 key, unsigned *plen)
{
	uint8_t buf[SL_KEY_MAX];
	const uint8_t *keys[1] = {buf};
	void *hits[1] = {NULL};
	struct sl_lpm_path path;
	uint64_t hit;
	void *d;

	memset(buf, 0, sizeof(buf));
	put_field(buf, bits, key);
	hit = sl_table_lookup_burst(t, keys, 1, hits);
	d = t->ops->lookup_path(t->impl, buf, &path);
	CHECK(path.n_nodes >= 1 && path.match_depth < path.n_nodes);
	CHECK(hit == 0 ? d == NULL : d == hits[0]);
	if (plen != NULL)
		*plen = path.prefix_len;
	return hit ? (uintptr_t)hits[0] : 0;
}

static u128
ip4(unsigned a, unsigned b, unsigned c, unsigned d)
{
	return (u128)(a << 24 | b << 16 | c << 8 | d);
}

static void
test_ipv4_basic(void)
{
	struct sl_table *t = make_table(32, 8, 0);
	struct sl_table_stats st;
	struct sl_rule r;
	unsigned plen;

	CHECK(add(t, 32, 0, 0, 1, 100) == 0);
	CHECK(add(t, 32, ip4(10, 0, 0, 0), 8, 1, 108) == 0);
	CHECK(add(t, 32, ip4(10, 1, 0, 0), 16, 1, 116) == 0);
	CHECK(add(t, 32, ip4(10, 1, 2, 0), 24, 1, 124) == 0);
	CHECK(add(t, 32, ip4(10, 1, 2, 3), 32, 1, 132) == 0);

	CHECK(lookup1(t, 32, ip4(10, 1, 2, 3), &plen) == 132 && plen == 32);
	CHECK(lookup1(t, 32, ip4(10, 1, 2, 4), &plen) == 124 && plen == 24);
	CHECK(lookup1(t, 32, ip4(10, 1, 3, 1), &plen) == 116 && plen == 16);
	CHECK(lookup1(t, 32, ip4(10, 2, 0, 0), &plen) == 108 && plen == 8);
	CHECK(lookup1(t, 32, ip4(11, 0, 0, 0), &plen) == 100 && plen == 0);

	/* One entry per prefix, whatever the priority. */
	CHECK(add(t, 32, ip4(10, 0, 0, 0), 8, 1, 999) == -EEXIST);
	CHECK(add(t, 32, ip4(10, 0, 0, 0), 8, 7, 999) == -EEXIST);
	/* Strict del/find. */
	CHECK(del(t, 32, ip4(10, 0, 0, 0), 8, 7) == -ENOENT);
	make_rule(&r, 32, ip4(10, 0, 0, 0), 8, 7, NULL);
	CHECK(sl_table_find(t, &r) == NULL);
	r.priority = 1;
	CHECK(sl_table_find(t, &r) == (void *)108);

	/* Deleting a prefix restores the shorter one. */
	CHECK(del(t, 32, ip4(10, 1, 2, 0), 24, 1) == 0);
	CHECK(del(t, 32, ip4(10, 1, 2, 0), 24, 1) == -ENOENT);
	CHECK(lookup1(t, 32, ip4(10, 1, 2, 4), &plen) == 116 && plen == 16);
	CHECK(lookup1(t, 32, ip4(10, 1, 2, 3), &plen) == 132 && plen == 32);
	CHECK(del(t, 32, ip4(10, 1, 2, 3), 32, 1) == 0);
	CHECK(lookup1(t, 32, ip4(10, 1, 2, 3), &plen) == 116 && plen == 16);
	CHECK(del(t, 32, ip4(10, 1, 0, 0), 16, 1) == 0);
	CHECK(lookup1(t, 32, ip4(10, 1, 2, 3), &plen) == 108 && plen == 8);
	CHECK(del(t, 32, 0, 0, 1) == 0);
	CHECK(lookup1(t, 32, ip4(11, 0, 0, 0), NULL) == 0);
	CHECK(lookup1(t, 32, ip4(10, 9, 9, 9), NULL) == 108);

	/* A rule whose data is NULL still hits. */
	{
		uint8_t buf[8] = {10, 5, 5, 5, 0xde, 0xad, 0xbe, 0xef}; /* junk past the field */
		const uint8_t *keys[1] = {buf};
		void *hits[1];

		CHECK(add(t, 32, ip4(10, 5, 0, 0), 16, 3, 0) == 0);
		CHECK(sl_table_lookup_burst(t, keys, 1, hits) == 1 && hits[0] == NULL);
		CHECK(sl_table_lookup_burst(t, keys, 0, hits) == 0);
	}

	/* Invalid rules. */
	memset(&r, 0, sizeof(r));
	r.mask[0] = 0xff;
	r.mask[2] = 0xff; /* not a prefix */
	CHECK(sl_table_add(t, &r) == -EINVAL);
	make_rule(&r, 32, ip4(10, 0, 0, 0), 8, 1, NULL);
	r.value[1] = 1; /* value outside the mask */
	CHECK(sl_table_add(t, &r) == -EINVAL);
	make_rule(&r, 32, ip4(12, 0, 0, 0), 8, 1, NULL);
	r.mask[5] = 0x01; /* mask beyond the field */
	CHECK(sl_table_add(t, &r) == -EINVAL);
	CHECK(sl_table_del(t, &r, NULL) == -ENOENT);

	sl_table_stats_read(t, &st);
	CHECK(st.n_entries == 2);
	CHECK(st.n_groups == 1); /* /8 and /16 both live in the root */
	CHECK(st.mem_bytes > 65536 * 8);
	CHECK(add(t, 32, ip4(10, 5, 6, 0), 24, 1, 7) == 0);
	sl_table_stats_read(t, &st);
	CHECK(st.n_groups == 2);
	CHECK(del(t, 32, ip4(10, 5, 6, 0), 24, 1) == 0);
	sl_table_stats_read(t, &st);
	CHECK(st.n_groups == 1);
	sl_table_destroy(t);

	/* Capacity. */
	t = make_table(32, 8, 4);
	for (unsigned i = 0; i < 4; i++)
		CHECK(add(t, 32, ip4(i, 0, 0, 0), 8, 0, 1 + i) == 0);
	CHECK(add(t, 32, ip4(9, 0, 0, 0), 8, 0, 1) == -ENOSPC);
	CHECK(del(t, 32, ip4(2, 0, 0, 0), 8, 0) == 0);
	CHECK(add(t, 32, ip4(9, 9, 9, 9), 32, 0, 1) == 0);
	sl_table_destroy(t);

	sl_table_lpm_ops.destroy(NULL);
	sl_table_destroy(NULL);
}

/* Nested prefixes of one value at several lengths, for any width. */
static void
test_width(unsigned bits)
{
	unsigned key_size = SL_MAX(8u, SL_DIV_ROUND_UP(bits, 64u) * 8);
	struct sl_table *t = make_table(bits, key_size, 1000);
	u128 v = rnd128() & low_bits(bits);
	unsigned lens[] = {0, bits / 4, bits / 2, bits - 1, bits};
	unsigned plen;

	for (unsigned i = 0; i < SL_ARRAY_SIZE(lens); i++) {
		int rc = add(t, bits, v, lens[i], 5, 1000 + lens[i]);
		CHECK(rc == 0 || (rc == -EEXIST && i > 0 && lens[i] == lens[i - 1]));
	}
	CHECK(lookup1(t, bits, v, &plen) == 1000 + bits && plen == bits);
	/* Flip the last bit, then the bit after each shorter prefix. */
	CHECK(lookup1(t, bits, v ^ 1, &plen) == 1000 + bits - 1 && plen == bits - 1);
	for (unsigned i = 1; i < 3; i++) {
		unsigned len = lens[i];
		u128 k = v ^ ((u128)1 << (bits - len - 1));
		unsigned want = 0;

		for (unsigned j = 0; j < SL_ARRAY_SIZE(lens); j++)
			if (lens[j] <= len)
				want = lens[j];
		CHECK(lookup1(t, bits, k, &plen) == 1000 + want && plen == want);
	}
	CHECK(del(t, bits, v, bits, 5) == 0);
	CHECK(lookup1(t, bits, v, &plen) == 1000 + bits - 1 && plen == bits - 1);

	/* Unused high bits of the first byte are ignored in keys, refused in masks. */
	if (bits % 8 != 0) {
		uint8_t buf[SL_KEY_MAX] = {0};
		const uint8_t *keys[1] = {buf};
		void *hits[1];
		struct sl_rule r;

		put_field(buf, bits, v);
		buf[0] |= (uint8_t)(0xff << (bits % 8));
		CHECK(sl_table_lookup_burst(t, keys, 1, hits) == 1 &&
		      hits[0] == (void *)(uintptr_t)(1000 + bits - 1));
		make_rule(&r, bits, 0, 0, 0, NULL);
		r.mask[0] = 0x80;
		CHECK(sl_table_add(t, &r) == -EINVAL);
	}
	sl_table_destroy(t);
}

/*
 * Differential test.
 */

struct shadow_rule {
	u128 value; /* truncated to plen */
	unsigned plen;
	uint32_t prio;
	uintptr_t data;
};

struct diff_ctx {
	unsigned bits, key_size;
	struct sl_table *t;
	struct sl_ref_table *ref;
	struct shadow_rule *rules;
	unsigned n_rules, cap;
	uintptr_t next_data;
	unsigned long n_lookups;
};

static void
shadow_to_rule(const struct diff_ctx *c, const struct shadow_rule *s, struct sl_rule *r)
{
	make_rule(r, c->bits, s->value, s->plen, s->prio, (void *)s->data);
}

static int
shadow_find_prefix(const struct diff_ctx *c, u128 value, unsigned plen)
{
	for (unsigned i = 0; i < c->n_rules; i++)
		if (c->rules[i].plen == plen && c->rules[i].value == value)
			return (int)i;
	return -1;
}

/* A new prefix: mostly an extension or an ancestor of an existing one. */
static void
random_prefix(const struct diff_ctx *c, u128 *value, unsigned *plen)
{
	unsigned bits = c->bits, choice = rnd_below(10);
	u128 v = rnd128() & low_bits(bits);
	unsigned len;

	if (c->n_rules > 0 && choice < 6) {
		const struct shadow_rule *s = &c->rules[rnd_below(c->n_rules)];
		unsigned room = bits - s->plen;

		len = room == 0 ? s->plen : s->plen + 1 + rnd_below(SL_MIN(room, 12u));
		v = (s->value & prefix_mask(bits, s->plen)) | (v & ~prefix_mask(bits, s->plen));
	} else if (c->n_rules > 0 && choice < 8) {
		const struct shadow_rule *s = &c->rules[rnd_below(c->n_rules)];

		len = rnd_below(s->plen + 1);
		v = s->value;
	} else {
		len = rnd_below(bits + 1);
	}
	*plen = len;
	*value = v & prefix_mask(bits, len);
}

static void
diff_add(struct diff_ctx *c)
{
	struct shadow_rule s;
	struct sl_rule r;
	int rc, expect;

	random_prefix(c, &s.value, &s.plen);
	s.prio = rnd_below(4);
	s.data = c->next_data++;
	shadow_to_rule(c, &s, &r);
	expect = shadow_find_prefix(c, s.value, s.plen) >= 0 ? -EEXIST : 0;
	rc = sl_table_add(c->t, &r);
	CHECK_QUIET(rc == expect);
	if (rc != 0)
		return;
	CHECK_QUIET(sl_ref_add(c->ref, &r) == 0);
	if (c->n_rules == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 256;
		c->rules = realloc(c->rules, c->cap * sizeof(*c->rules));
		if (c->rules == NULL)
			abort();
	}
	c->rules[c->n_rules++] = s;
}

static void
diff_del(struct diff_ctx *c)
{
	unsigned i = rnd_below(c->n_rules);
	struct shadow_rule s = c->rules[i];
	struct sl_rule r;
	void *data = NULL;

	shadow_to_rule(c, &s, &r);
	if (rnd_below(4) == 0) {
		r.priority ^= 1; /* a different priority is a different rule */
		CHECK_QUIET(sl_table_del(c->t, &r, NULL) == -ENOENT);
		CHECK_QUIET(sl_table_find(c->t, &r) == NULL);
		r.priority ^= 1;
	}
	CHECK_QUIET(sl_table_find(c->t, &r) == (void *)s.data);
	CHECK_QUIET(sl_table_del(c->t, &r, &data) == 0 && data == (void *)s.data);
	CHECK_QUIET(sl_ref_del(c->ref, &r) == 0);
	c->rules[i] = c->rules[--c->n_rules];
}

/* A key near an existing prefix (usually), with junk where the table must not look. */
static void
random_key(const struct diff_ctx *c, uint8_t *key)
{
	unsigned bits = c->bits;
	u128 v = rnd128() & low_bits(bits);

	if (c->n_rules > 0 && rnd_below(10) != 0) {
		const struct shadow_rule *s = &c->rules[rnd_below(c->n_rules)];
		u128 m = prefix_mask(bits, s->plen);

		v = (s->value & m) | (v & ~m);
	}
	for (unsigned i = 0; i < c->key_size; i += 8) {
		uint64_t junk = rnd();
		memcpy(key + i, &junk, 8);
	}
	put_field(key, bits, v);
	if (bits % 8 != 0)
		key[0] |= (uint8_t)(rnd() & (0xff << (bits % 8)));
}

static const unsigned burst_sizes[] = {0, 1, 3, 4, 5, 31, 32, 33, 63, 64};

static void
diff_lookups(struct diff_ctx *c, unsigned n_bursts)
{
	static uint8_t keybuf[SL_BURST_MAX][SL_KEY_MAX];
	const uint8_t *keys[SL_BURST_MAX];
	void *hits[SL_BURST_MAX];

	for (unsigned b = 0; b < n_bursts; b++) {
		unsigned n = burst_sizes[rnd_below(SL_ARRAY_SIZE(burst_sizes))];
		uint64_t lanes = sl_lanes_first(n), hit;
		bool check_path = rnd_below(4) == 0;

		if (rnd_below(2))
			lanes &= rnd() | rnd(); /* random lane mask, mostly full */
		for (unsigned i = 0; i < n; i++) {
			random_key(c, keybuf[i]);
			keys[i] = keybuf[i];
			hits[i] = (void *)1;
		}
		hit = sl_table_lookup_burst(c->t, keys, lanes, hits);
		CHECK_QUIET((hit & ~lanes) == 0);
		for (unsigned i = 0; i < n; i++) {
			uint32_t prio = 0;
			void *want;

			if (!(lanes & (UINT64_C(1) << i)))
				continue;
			want = sl_ref_lookup(c->ref, keys[i], &prio);
			c->n_lookups++;
			CHECK_QUIET(((hit >> i) & 1) == (want != NULL));
			if (want != NULL)
				CHECK_QUIET(hits[i] == want);
			if (check_path) {
				struct sl_lpm_path path;
				void *d = c->t->ops->lookup_path(c->t->impl, keys[i], &path);

				CHECK_QUIET(d == want);
				CHECK_QUIET(path.n_nodes >= 1 && path.n_nodes <= SL_LPM_PATH_MAX);
				CHECK_QUIET(path.match_depth < path.n_nodes);
				if (want != NULL)
					CHECK_QUIET(path.prefix_len == prio);
			}
		}
	}
}

static int
iter_check(const struct sl_rule *r, void *arg)
{
	struct diff_ctx *c = arg;
	struct sl_rule want;
	int i;

	for (i = 0; i < (int)c->n_rules; i++) {
		shadow_to_rule(c, &c->rules[i], &want);
		if (memcmp(want.value, r->value, c->key_size) == 0 &&
		    memcmp(want.mask, r->mask, c->key_size) == 0)
			break;
	}
	CHECK_QUIET(i < (int)c->n_rules);
	if (i < (int)c->n_rules)
		CHECK_QUIET(r->priority == want.priority && r->data == want.data);
	return 0;
}

static void
diff_check_structure(struct diff_ctx *c)
{
	struct sl_table_stats st;

	sl_table_stats_read(c->t, &st);
	CHECK_QUIET(st.n_entries == c->n_rules);
	CHECK_QUIET(st.n_groups >= 1);
	CHECK_QUIET(sl_table_iterate(c->t, iter_check, c) == 0);
}

static unsigned long
test_differential(unsigned bits, unsigned target, unsigned rounds, unsigned bursts_per_round)
{
	unsigned min_size = SL_MAX(8u, SL_DIV_ROUND_UP(bits, 64u) * 8);
	struct diff_ctx c = {.bits = bits, .next_data = 1};
	struct sl_table_params p;
	struct sl_table_stats st;
	unsigned long before = n_mismatches;

	/* Sometimes a longer key than needed, with junk after the field. */
	c.key_size = min_size + 8 * rnd_below(3);
	c.t = make_table(bits, c.key_size, 0);
	p = c.t->params;
	c.ref = sl_ref_create(&p);
	if (c.ref == NULL)
		abort();

	for (unsigned round = 0; round < rounds; round++) {
		/* Grow towards the target, then churn around it. */
		unsigned n_ops = 1 + rnd_below(target / 4 + 1);

		for (unsigned op = 0; op < n_ops; op++) {
			if (c.n_rules < target / 2 || (c.n_rules < target && rnd_below(3) != 0) ||
			    c.n_rules == 0)
				diff_add(&c);
			else
				diff_del(&c);
		}
		diff_lookups(&c, bursts_per_round);
		if (round % 8 == 0)
			diff_check_structure(&c);
	}
	diff_check_structure(&c);

	/* Delete everything: the trie must shrink back to its root. */
	while (c.n_rules > 0)
		diff_del(&c);
	diff_lookups(&c, 4);
	sl_table_stats_read(c.t, &st);
	CHECK_QUIET(st.n_entries == 0 && st.n_groups == 1);

	sl_ref_destroy(c.ref);
	sl_table_destroy(c.t);
	free(c.rules);
	CHECK(n_mismatches == before);
	if (n_mismatches != before)
		fprintf(stderr, "differential bits=%u: %lu mismatches\n", bits,
			n_mismatches - before);
	return c.n_lookups;
}

int
main(void)
{
	static const unsigned widths[] = {1, 7, 12, 16, 17, 20, 24, 32, 48, 64, 65, 72, 100, 128};
	unsigned long n_lookups = 0;

	test_ipv4_basic();
	for (unsigned i = 0; i < SL_ARRAY_SIZE(widths); i++)
		if (widths[i] >= 4)
			test_width(widths[i]);

	for (unsigned i = 0; i < SL_ARRAY_SIZE(widths); i++)
		n_lookups += test_differential(widths[i], 300, 60, 40);
	/* The common widths again, larger and longer. */
	n_lookups += test_differential(32, 2000, 40, 80);
	n_lookups += test_differential(128, 1000, 40, 80);
	n_lookups += test_differential(20, 600, 40, 80);
	n_lookups += test_differential(48, 600, 40, 80);
	n_lookups += test_differential(64, 600, 40, 80);
	CHECK(n_lookups >= 1000000);

	printf("test_lpm: %lu differential lookups, %lu mismatches\n", n_lookups, n_mismatches);
	printf("test_lpm: %u passed, %u failed\n", n_passed, n_failed);
	return n_failed == 0 && n_mismatches == 0 ? 0 : 1;
}
