/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exact-match table: a bucketised two-choice hash (8 slots a bucket, a 32-bit
 * signature per slot) over the whole key.  A burst lookup is staged as in
 * rte_hash bulk lookup: hash every lane and prefetch its primary bucket,
 * then compare signatures, then keys.  The table doubles (rehash, control
 * path) at 75 % load or when both buckets of a key are full.
 */
#include "../table.h"

#include <errno.h>
#include <string.h>
#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

#define EXACT_SLOTS 8

struct exact_node {
	void *data;
	uint32_t priority;
	uint8_t key[]; /* key_size bytes */
};

struct exact_bucket {
	uint32_t sig[EXACT_SLOTS];
	struct exact_node *node[EXACT_SLOTS];
} __attribute__((aligned(64)));

struct exact {
	struct sl_table_params p;
	uint32_t n;
	uint32_t bucket_mask;
	struct exact_bucket *buckets;
};

/* CRC32C over 8-byte words where the CPU has it; a multiply-xorshift mix otherwise. */
static inline uint64_t
exact_hash(const uint8_t *key, unsigned size)
{
	uint64_t h1 = 0x9e3779b9, h2 = 0x7f4a7c15;

	for (unsigned i = 0; i < size; i += 8) {
		uint64_t w;
		memcpy(&w, key + i, 8);
#if defined(__SSE4_2__)
		h1 = _mm_crc32_u64(h1, w);
		h2 = _mm_crc32_u64(h2, w ^ 0x5bd1e9955bd1e995ull);
#else
		h1 = (h1 ^ w) * 0xff51afd7ed558ccdull;
		h1 ^= h1 >> 33;
		h2 = (h2 ^ w) * 0xc4ceb9fe1a85ec53ull;
		h2 ^= h2 >> 29;
#endif
	}
	return (h1 & 0xffffffff) | h2 << 32;
}

static inline uint32_t
sig_of(uint64_t h)
{
	return (uint32_t)h | 1; /* never 0: 0 marks an empty slot */
}

static inline uint32_t
alt_index(uint64_t h)
{
	return (uint32_t)(h >> 32);
}

static int
exact_alloc(struct exact *t, uint32_t n_buckets)
{
	t->buckets = aligned_alloc(64, n_buckets * sizeof(struct exact_bucket));
	if (t->buckets == NULL)
		return -ENOMEM;
	memset(t->buckets, 0, n_buckets * sizeof(struct exact_bucket));
	t->bucket_mask = n_buckets - 1;
	return 0;
}

static int
exact_create(const struct sl_table_params *p, void **tbl)
{
	struct exact *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -ENOMEM;
	t->p = *p;
	if (t->p.max_entries == 0)
		t->p.max_entries = 1u << 24;
	if (exact_alloc(t, 16) < 0) {
		free(t);
		return -ENOMEM;
	}
	*tbl = t;
	return 0;
}

static void
exact_destroy(void *tbl)
{
	struct exact *t = tbl;

	if (t == NULL)
		return;
	for (uint32_t b = 0; b <= t->bucket_mask; b++)
		for (int s = 0; s < EXACT_SLOTS; s++)
			free(t->buckets[b].node[s]);
	free(t->buckets);
	free(t);
}

static struct exact_node *
exact_find_node(const struct exact *t, const uint8_t *key, uint64_t h, struct exact_bucket **bkt,
		int *slot)
{
	uint32_t sig = sig_of(h);
	uint32_t idx[2] = {(uint32_t)h & t->bucket_mask, alt_index(h) & t->bucket_mask};

	for (int k = 0; k < 2; k++) {
		struct exact_bucket *b = &t->buckets[idx[k]];
		for (int s = 0; s < EXACT_SLOTS; s++) {
			if (b->sig[s] == sig && memcmp(b->node[s]->key, key, t->p.key_size) == 0) {
				if (bkt != NULL) {
					*bkt = b;
					*slot = s;
				}
				return b->node[s];
			}
		}
	}
	return NULL;
}

/* Place a node in one of its two buckets; -ENOSPC when both are full. */
static int
exact_place(struct exact *t, struct exact_node *node, uint64_t h)
{
	uint32_t idx[2] = {(uint32_t)h & t->bucket_mask, alt_index(h) & t->bucket_mask};

	for (int k = 0; k < 2; k++) {
		struct exact_bucket *b = &t->buckets[idx[k]];
		for (int s = 0; s < EXACT_SLOTS; s++) {
			if (b->node[s] == NULL) {
				b->node[s] = node;
				b->sig[s] = sig_of(h);
				return 0;
			}
		}
	}
	return -ENOSPC;
}

/* Double the bucket array until every node fits. */
static int
exact_grow(struct exact *t)
{
	struct exact_bucket *old = t->buckets;
	uint32_t old_n = t->bucket_mask + 1, n = old_n * 2;

	for (;;) {
		bool ok = true;
		if (exact_alloc(t, n) < 0) {
			t->buckets = old;
			t->bucket_mask = old_n - 1;
			return -ENOMEM;
		}
		for (uint32_t b = 0; b < old_n && ok; b++)
			for (int s = 0; s < EXACT_SLOTS && ok; s++)
				if (old[b].node[s] != NULL)
					ok = exact_place(t, old[b].node[s],
							 exact_hash(old[b].node[s]->key,
								    t->p.key_size)) == 0;
		if (ok)
			break;
		free(t->buckets);
		n *= 2;
	}
	free(old);
	return 0;
}

static int
exact_add(void *tbl, const struct sl_rule *r)
{
	struct exact *t = tbl;
	struct exact_node *node;
	uint64_t h;

	if (!sl_mask_is_full(r->mask, t->p.key_size))
		return -EINVAL;
	h = exact_hash(r->value, t->p.key_size);
	if (exact_find_node(t, r->value, h, NULL, NULL) != NULL)
		return -EEXIST;
	if (t->n >= t->p.max_entries)
		return -ENOSPC;
	node = malloc(sizeof(*node) + t->p.key_size);
	if (node == NULL)
		return -ENOMEM;
	node->data = r->data;
	node->priority = r->priority;
	memcpy(node->key, r->value, t->p.key_size);
	if ((t->n + 1) * 4 > (t->bucket_mask + 1) * EXACT_SLOTS * 3 && exact_grow(t) < 0)
		goto free_node;
	while (exact_place(t, node, h) < 0)
		if (exact_grow(t) < 0)
			goto free_node;
	t->n++;
	return 0;

free_node:
	free(node);
	return -ENOMEM;
}

static int
exact_del(void *tbl, const struct sl_rule *r, void **data)
{
	struct exact *t = tbl;
	struct exact_bucket *b;
	struct exact_node *node;
	int s;

	if (!sl_mask_is_full(r->mask, t->p.key_size))
		return -ENOENT;
	node = exact_find_node(t, r->value, exact_hash(r->value, t->p.key_size), &b, &s);
	if (node == NULL || node->priority != r->priority)
		return -ENOENT;
	if (data != NULL)
		*data = node->data;
	b->sig[s] = 0;
	b->node[s] = NULL;
	free(node);
	t->n--;
	return 0;
}

static void *
exact_find(const void *tbl, const struct sl_rule *r)
{
	const struct exact *t = tbl;
	struct exact_node *node;

	if (!sl_mask_is_full(r->mask, t->p.key_size))
		return NULL;
	node = exact_find_node(t, r->value, exact_hash(r->value, t->p.key_size), NULL, NULL);
	return node != NULL && node->priority == r->priority ? node->data : NULL;
}

static uint64_t
exact_lookup_burst(const void *tbl, const uint8_t *const keys[], uint64_t lanes, void *hits[])
{
	const struct exact *t = tbl;
	uint64_t hashes[SL_BURST_MAX];
	uint64_t hit = 0;
	unsigned i;

	/* Stage 1: hash every lane and prefetch its primary bucket. */
	SL_FOR_EACH_LANE (i, lanes) {
		hashes[i] = exact_hash(keys[i], t->p.key_size);
		sl_prefetch0(&t->buckets[(uint32_t)hashes[i] & t->bucket_mask]);
	}
	/* Stage 2: signatures, then the key, primary bucket first. */
	SL_FOR_EACH_LANE (i, lanes) {
		struct exact_node *node = exact_find_node(t, keys[i], hashes[i], NULL, NULL);
		if (node != NULL) {
			hits[i] = node->data;
			hit |= UINT64_C(1) << i;
		}
	}
	return hit;
}

static int
exact_iterate(const void *tbl, sl_table_iter_fn fn, void *arg)
{
	const struct exact *t = tbl;
	struct sl_rule r;

	memset(r.mask, 0xff, sizeof(r.mask));
	for (uint32_t b = 0; b <= t->bucket_mask; b++) {
		for (int s = 0; s < EXACT_SLOTS; s++) {
			struct exact_node *node = t->buckets[b].node[s];
			if (node == NULL)
				continue;
			memset(r.value, 0, sizeof(r.value));
			memcpy(r.value, node->key, t->p.key_size);
			r.priority = node->priority;
			r.data = node->data;
			int rc = fn(&r, arg);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static void
exact_stats_read(const void *tbl, struct sl_table_stats *st)
{
	const struct exact *t = tbl;

	memset(st, 0, sizeof(*st));
	st->n_entries = t->n;
	st->mem_bytes = (uint64_t)(t->bucket_mask + 1) * sizeof(struct exact_bucket) +
			(uint64_t)t->n * (sizeof(struct exact_node) + t->p.key_size);
}

const struct sl_table_ops sl_table_exact_ops = {
	.name = "exact",
	.create = exact_create,
	.destroy = exact_destroy,
	.add = exact_add,
	.del = exact_del,
	.find = exact_find,
	.lookup_burst = exact_lookup_burst,
	.iterate = exact_iterate,
	.stats_read = exact_stats_read,
};
