/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lpm: longest-prefix match on one field of 1..128 bits.
 *
 * A multibit trie with controlled prefix expansion.  The root consumes the
 * first 16 bits of the field (all of it when the field is narrower), every
 * other level 8 bits, the last level whatever remains.  A node of stride s
 * is an array of 2^s slots; a slot holds the index of a child node and the
 * index of the best rule for that slot among the prefixes that "live" in
 * this node (those whose length ends within the node's stride).  The best
 * rule is not pushed down into children, so a lookup walks from the root and
 * remembers the last best rule it saw: an IPv4 /24 costs two slot reads plus
 * the read of the winner's data.
 *
 * Because nothing is pushed down, add and del touch only the slot range of
 * the one node where the prefix lives (plus the creation or removal of the
 * nodes on its path); the table is never rebuilt.
 *
 * Memory layout, chosen to keep slots at 8 bytes: nodes of level k >= 1 are
 * numbered and stored in 32 KiB chunks, rules are numbered and their data
 * pointers stored in chunks of 1024.  Every chunk pointer array has a fixed
 * size decided at create time, so nothing the fast path reads ever moves.
 * Node and rule index 0 mean "none".
 * Once a trie outgrows a few MiB its chunks come from 2 MiB slabs advised as
 * transparent huge pages (see chunk_alloc).
 *
 * Freed nodes and rules are recycled at once.  That is safe because workers
 * never read a table object while it changes (the pipeline's left-right
 * copies); a table read concurrently would have to defer reuse by a grace
 * period.
 *
 * Control path: create, destroy, add, del, find, iterate, stats_read.
 * Fast path (any worker): lookup_burst, lookup_path.
 */
#include "../table.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#define LPM_ROOT_STRIDE 16
#define LPM_STRIDE 8
#define LPM_LEVELS_MAX 16        /* 1 + (128 - 16) / 8 = 15 levels at most */
#define LPM_CHUNK_SLOTS_SHIFT 12 /* 4096 slots = 32 KiB per node chunk */
#define LPM_RULE_CHUNK_SHIFT 10  /* 1024 rules per rule chunk */
#define LPM_RULE_CHUNK (1u << LPM_RULE_CHUNK_SHIFT)
#define LPM_DEFAULT_MAX_ENTRIES (1u << 20)
#define LPM_SLAB_SIZE (2u << 20)      /* node memory slab: one transparent huge page */
#define LPM_SLAB_THRESHOLD (4u << 20) /* node bytes before switching to slabs */

static_assert(LPM_LEVELS_MAX <= SL_LPM_PATH_MAX, "a path must fit struct sl_lpm_path");

/* One slot of a node: read with a single 8-byte load by the fast path. */
struct lpm_slot {
	uint32_t child; /* node index at the next level, 0 = none */
	uint32_t rule;  /* best rule living in this node for this slot, 0 = none */
};

static_assert(sizeof(struct lpm_slot) == 8, "slots must stay 8 bytes");

/* Per-level constants and node storage: read by the fast path. */
struct lpm_level {
	uint8_t stride;           /* index bits consumed at this level */
	uint8_t word;             /* which 64-bit half of the aligned field holds them */
	uint8_t shift;            /* right shift of that half that yields the index */
	uint8_t chunk_shift;      /* log2 of nodes per chunk */
	uint8_t offset;           /* field bits consumed above this level */
	uint32_t idx_mask;        /* (1 << stride) - 1 */
	uint32_t chunk_mask;      /* nodes per chunk - 1 */
	struct lpm_slot **chunks; /* fixed-size array of node chunks */
};

/* Control-path bookkeeping of one node. */
struct lpm_node_meta {
	uint32_t parent;     /* node index at the level above (unused for the root) */
	uint32_t parent_idx; /* slot of the parent pointing here; free list link when free */
	uint32_t n_prefixes; /* rules living in this node */
	uint32_t n_children; /* non-zero child slots */
};

/* Control-path state of one level. */
struct lpm_level_ctl {
	uint32_t max_chunks;        /* size of lpm_level.chunks */
	uint32_t n_chunks;          /* chunks allocated */
	uint32_t hi;                /* next never-used node index */
	uint32_t free_head;         /* freed node indices, linked through parent_idx */
	uint32_t n_nodes;           /* nodes in use */
	uint32_t meta_cap;          /* entries allocated in meta */
	struct lpm_node_meta *meta; /* indexed by node index */
};

/* Control-path description of a rule, indexed like the data chunks. */
struct lpm_rule {
	uint64_t field[2]; /* the prefix, left-aligned, bits beyond plen zero */
	uint32_t priority; /* stored only; matching ignores it */
	uint32_t node;     /* node the prefix lives in; free list link when free */
	uint8_t plen;      /* prefix length */
	uint8_t level;     /* level of that node */
	uint8_t used;      /* slot holds a rule */
};

/* The table: the fast-path part first. */
struct lpm_table {
	struct lpm_level lv[LPM_LEVELS_MAX]; /* levels, root first */
	void ***data_chunks;                 /* rule index -> data, chunks of LPM_RULE_CHUNK */
	struct lpm_rule **rule_chunks;       /* rule index -> description, same chunking */
	uint8_t n_levels;                    /* levels of the trie */
	uint8_t lead;                        /* unused high bits of the field's first byte */
	uint8_t wide;                        /* the field spans more than 8 bytes */
	uint8_t n_bytes;                     /* ceil(lpm_bits / 8) */
	uint16_t bits;                       /* lpm_bits */
	uint16_t key_size;                   /* bytes */

	/* Control-path part. */
	struct lpm_level_ctl ctl[LPM_LEVELS_MAX]; /* node bookkeeping per level */
	uint32_t max_entries;                     /* capacity in rules */
	uint32_t n_rules;                         /* rules stored */
	uint32_t rule_hi;                         /* next never-used rule index */
	uint32_t rule_free;       /* freed rule indices, linked through lpm_rule.node */
	uint32_t n_rule_chunks;   /* rule chunks allocated */
	uint32_t max_rule_chunks; /* size of data_chunks and rule_chunks */
	uint32_t *hash;           /* (plen, prefix) -> rule index, linear probing */
	uint32_t hash_mask;       /* capacity - 1 */
	uint64_t mem_bytes;       /* bytes allocated */
	uint64_t node_bytes;      /* bytes of node chunks handed out */
	uint8_t *slab;            /* current slab node chunks are carved from */
	size_t slab_used;         /* bytes of it handed out */
	void **allocs;            /* node chunk and slab allocations, for destroy */
	uint32_t n_allocs;        /* entries in allocs */
	uint32_t allocs_cap;      /* capacity of allocs */
};

/*
 * Field helpers, shared by both paths.
 */

static inline uint64_t
load_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/*
 * Left-align the field of @key in u[0] (and u[1] for wide fields): the
 * unused high bits of the first byte are shifted out.  Bits below the field
 * are whatever follows it in the key; no level index ever reaches them.
 */
static inline void
load_field(const struct lpm_table *t, const uint8_t *key, uint64_t u[2])
{
	uint64_t hi = load_be64(key);

	if (!t->wide) {
		u[0] = hi << t->lead;
		return;
	}
	uint64_t lo = load_be64(key + 8);
	/* The double shift keeps the count below 64 when lead is 0. */
	u[0] = (hi << t->lead) | (lo >> 1 >> (63 - t->lead));
	u[1] = lo << t->lead;
}

static inline uint32_t
level_index(const struct lpm_level *lv, const uint64_t u[2])
{
	return (uint32_t)(u[lv->word] >> lv->shift) & lv->idx_mask;
}

static inline struct lpm_slot *
node_slots(const struct lpm_level *lv, uint32_t node)
{
	size_t first = (size_t)(node & lv->chunk_mask) << lv->stride;

	return lv->chunks[node >> lv->chunk_shift] + first;
}

static inline void **
rule_data_ptr(const struct lpm_table *t, uint32_t r)
{
	return &t->data_chunks[r >> LPM_RULE_CHUNK_SHIFT][r & (LPM_RULE_CHUNK - 1)];
}

static inline struct lpm_rule *
rule_get(const struct lpm_table *t, uint32_t r)
{
	return &t->rule_chunks[r >> LPM_RULE_CHUNK_SHIFT][r & (LPM_RULE_CHUNK - 1)];
}

/* Keep the first @plen bits of a left-aligned field. */
static void
field_truncate(uint64_t u[2], unsigned plen)
{
	for (unsigned w = 0; w < 2; w++) {
		unsigned n = plen > 64 * w ? SL_MIN(plen - 64 * w, 64u) : 0;
		u[w] &= n == 0 ? 0 : n == 64 ? UINT64_MAX : ~(UINT64_MAX >> n);
	}
}

/* Level where a prefix of @plen bits lives: offset < plen <= offset + stride (0: root). */
static unsigned
level_of(const struct lpm_table *t, unsigned plen)
{
	unsigned k = 0;

	while (k + 1 < t->n_levels && plen > t->lv[k + 1].offset)
		k++;
	return k;
}

/*
 * Control path: the prefix hash, (plen, prefix) -> rule index.
 */

static uint64_t
prefix_hash(const uint64_t u[2], unsigned plen)
{
	uint64_t h = u[0] * 0x9e3779b97f4a7c15ull ^ u[1] * 0xc2b2ae3d27d4eb4full ^ plen;

	h ^= h >> 31;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 29);
}

static uint32_t *
hash_find_slot(const struct lpm_table *t, const uint64_t u[2], unsigned plen)
{
	uint32_t i = (uint32_t)prefix_hash(u, plen) & t->hash_mask;

	for (;; i = (i + 1) & t->hash_mask) {
		uint32_t r = t->hash[i];
		const struct lpm_rule *rule;

		if (r == 0)
			return &t->hash[i];
		rule = rule_get(t, r);
		if (rule->plen == plen && rule->field[0] == u[0] && rule->field[1] == u[1])
			return &t->hash[i];
	}
}

static uint32_t
hash_lookup(const struct lpm_table *t, const uint64_t u[2], unsigned plen)
{
	return *hash_find_slot(t, u, plen);
}

static int
hash_resize(struct lpm_table *t, uint32_t cap)
{
	uint32_t *old = t->hash, old_cap = t->hash_mask + 1;

	t->hash = calloc(cap, sizeof(*t->hash));
	if (t->hash == NULL) {
		t->hash = old;
		return -ENOMEM;
	}
	t->hash_mask = cap - 1;
	for (uint32_t i = 0; i < old_cap; i++) {
		if (old[i] != 0) {
			const struct lpm_rule *rule = rule_get(t, old[i]);
			*hash_find_slot(t, rule->field, rule->plen) = old[i];
		}
	}
	free(old);
	t->mem_bytes += (uint64_t)(cap - old_cap) * sizeof(*t->hash);
	return 0;
}

/* Remove the entry at slot @i, shifting later entries of its cluster back. */
static void
hash_remove(struct lpm_table *t, uint32_t i)
{
	uint32_t j = i;

	for (;;) {
		j = (j + 1) & t->hash_mask;
		if (t->hash[j] == 0)
			break;
		const struct lpm_rule *rule = rule_get(t, t->hash[j]);
		uint32_t home = (uint32_t)prefix_hash(rule->field, rule->plen) & t->hash_mask;
		/* Move j into the hole at i unless its home lies cyclically in (i, j]. */
		if (((j - home) & t->hash_mask) >= ((j - i) & t->hash_mask)) {
			t->hash[i] = t->hash[j];
			i = j;
		}
	}
	t->hash[i] = 0;
}

/*
 * Control path: node and rule allocation.
 */

/* Remember an allocation for destroy. */
static int
alloc_track(struct lpm_table *t, void *p)
{
	if (t->n_allocs == t->allocs_cap) {
		uint32_t cap = t->allocs_cap ? t->allocs_cap * 2 : 16;
		void **a = realloc(t->allocs, cap * sizeof(*a));

		if (a == NULL)
			return -ENOMEM;
		t->allocs = a;
		t->allocs_cap = cap;
	}
	t->allocs[t->n_allocs++] = p;
	return 0;
}

/*
 * Zeroed, 64-byte aligned memory for a node chunk.  Small tables get plain
 * allocations; past LPM_SLAB_THRESHOLD, chunks are carved from 2 MiB slabs
 * advised as huge pages, because a big trie is read at random and 4 KiB
 * pages then cost a TLB miss per level (bench_lpm: IPv4 100k prefixes).
 */
static void *
chunk_alloc(struct lpm_table *t, size_t size)
{
	void *p;

	if (t->node_bytes + size > LPM_SLAB_THRESHOLD && size <= LPM_SLAB_SIZE) {
		if (t->slab == NULL || t->slab_used + size > LPM_SLAB_SIZE) {
			uint8_t *slab = aligned_alloc(LPM_SLAB_SIZE, LPM_SLAB_SIZE);

			if (slab == NULL || alloc_track(t, slab) < 0) {
				free(slab);
				return NULL;
			}
#ifdef MADV_HUGEPAGE
			madvise(slab, LPM_SLAB_SIZE, MADV_HUGEPAGE); /* a hint: failure is fine */
#endif
			memset(slab, 0, LPM_SLAB_SIZE);
			t->slab = slab;
			t->slab_used = 0;
			t->mem_bytes += LPM_SLAB_SIZE;
		}
		p = t->slab + t->slab_used;
		t->slab_used += size;
	} else {
		/* aligned_alloc wants a multiple of the alignment (tiny roots). */
		size_t alloc_size = (size + 63) & ~(size_t)63;

		p = aligned_alloc(64, alloc_size);
		if (p == NULL || alloc_track(t, p) < 0) {
			free(p);
			return NULL;
		}
		memset(p, 0, alloc_size);
		t->mem_bytes += alloc_size;
	}
	t->node_bytes += size;
	return p;
}

static int
node_alloc(struct lpm_table *t, unsigned k, uint32_t *out)
{
	struct lpm_level *lv = &t->lv[k];
	struct lpm_level_ctl *c = &t->ctl[k];
	uint32_t n;

	if (c->free_head != 0) {
		n = c->free_head;
		c->free_head = c->meta[n].parent_idx;
	} else {
		n = c->hi;
		if ((n >> lv->chunk_shift) >= c->n_chunks) {
			size_t size = ((size_t)lv->chunk_mask + 1) * sizeof(struct lpm_slot)
				      << lv->stride;
			struct lpm_slot *chunk;

			if (c->n_chunks == c->max_chunks)
				return -ENOSPC;
			chunk = chunk_alloc(t, size);
			if (chunk == NULL)
				return -ENOMEM;
			lv->chunks[c->n_chunks++] = chunk;
		}
		if (n >= c->meta_cap) {
			uint32_t cap = c->meta_cap ? c->meta_cap * 2 : 64;
			struct lpm_node_meta *m = realloc(c->meta, cap * sizeof(*m));

			if (m == NULL)
				return -ENOMEM;
			t->mem_bytes += (uint64_t)(cap - c->meta_cap) * sizeof(*m);
			c->meta = m;
			c->meta_cap = cap;
		}
		c->hi++;
	}
	memset(&c->meta[n], 0, sizeof(c->meta[n]));
	c->n_nodes++;
	*out = n;
	return 0;
}

/*
 * Free empty nodes from (@k, @n) upward.  A node with no prefix and no child
 * has all its slots zero, which is how a reused node must start.
 */
static void
node_prune(struct lpm_table *t, unsigned k, uint32_t n)
{
	while (k > 0) {
		struct lpm_level_ctl *c = &t->ctl[k];
		struct lpm_node_meta *m = &c->meta[n];
		uint32_t parent = m->parent;

		if (m->n_prefixes != 0 || m->n_children != 0)
			return;
		node_slots(&t->lv[k - 1], parent)[m->parent_idx].child = 0;
		t->ctl[k - 1].meta[parent].n_children--;
		m->parent_idx = c->free_head;
		c->free_head = n;
		c->n_nodes--;
		k--;
		n = parent;
	}
}

static int
rule_alloc(struct lpm_table *t, uint32_t *out)
{
	uint32_t r;

	if (t->rule_free != 0) {
		r = t->rule_free;
		t->rule_free = rule_get(t, r)->node;
	} else {
		r = t->rule_hi;
		if ((r >> LPM_RULE_CHUNK_SHIFT) >= t->n_rule_chunks) {
			uint32_t i = t->n_rule_chunks;

			if (i == t->max_rule_chunks)
				return -ENOSPC;
			t->data_chunks[i] = calloc(LPM_RULE_CHUNK, sizeof(void *));
			t->rule_chunks[i] = calloc(LPM_RULE_CHUNK, sizeof(struct lpm_rule));
			if (t->data_chunks[i] == NULL || t->rule_chunks[i] == NULL) {
				free(t->data_chunks[i]);
				free(t->rule_chunks[i]);
				t->data_chunks[i] = NULL;
				t->rule_chunks[i] = NULL;
				return -ENOMEM;
			}
			t->n_rule_chunks++;
			t->mem_bytes += LPM_RULE_CHUNK * (sizeof(void *) + sizeof(struct lpm_rule));
		}
		t->rule_hi++;
	}
	*out = r;
	return 0;
}

static void
rule_free(struct lpm_table *t, uint32_t r)
{
	struct lpm_rule *rule = rule_get(t, r);

	memset(rule, 0, sizeof(*rule));
	*rule_data_ptr(t, r) = NULL;
	rule->node = t->rule_free;
	t->rule_free = r;
}

/*
 * Control path: create and destroy.
 */

static void lpm_destroy(void *tbl);

static int
lpm_create(const struct sl_table_params *p, void **out)
{
	unsigned bits = p->lpm_bits, n_bytes = SL_DIV_ROUND_UP(bits, 8u);
	uint64_t max = p->max_entries ? p->max_entries : LPM_DEFAULT_MAX_ENTRIES;
	struct lpm_table *t;
	unsigned off = 0;

	if (bits == 0 || bits > 128 || p->key_size == 0 || p->key_size % 8 != 0 ||
	    p->key_size > SL_KEY_MAX || p->key_size < n_bytes)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	t->mem_bytes = sizeof(*t);
	t->bits = bits;
	t->n_bytes = n_bytes;
	t->key_size = p->key_size;
	t->lead = n_bytes * 8 - bits;
	t->wide = n_bytes > 8;
	t->max_entries = (uint32_t)max;

	/* Strides: 16 bits at the root (or the whole field), then 8 at a time. */
	while (off < bits) {
		unsigned k = t->n_levels++;
		struct lpm_level *lv = &t->lv[k];
		unsigned s = SL_MIN(bits - off, k == 0 ? LPM_ROOT_STRIDE : LPM_STRIDE);
		uint64_t max_nodes;

		lv->stride = s;
		lv->offset = off;
		lv->word = off >= 64;
		lv->shift = 64 - (off - 64 * lv->word) - s;
		lv->idx_mask = (1u << s) - 1;
		SL_VERIFY(off >= 64 || off + s <= 64); /* no level straddles the halves */
		if (k == 0) {
			/* The root is node 0 of level 0, alone in its chunk. */
			lv->chunk_shift = 0;
			lv->chunk_mask = 0;
			t->ctl[0].max_chunks = 1;
		} else {
			lv->chunk_shift = LPM_CHUNK_SLOTS_SHIFT - s;
			lv->chunk_mask = (1u << lv->chunk_shift) - 1;
			/* Each node holds a rule at or below it; a level has <= 2^off nodes. */
			max_nodes = max;
			if (off < 32 && (UINT64_C(1) << off) < max_nodes)
				max_nodes = UINT64_C(1) << off;
			t->ctl[k].max_chunks =
				(uint32_t)((max_nodes + 1 + lv->chunk_mask) >> lv->chunk_shift);
			t->ctl[k].hi = 1; /* index 0 means "no child" */
		}
		lv->chunks = calloc(t->ctl[k].max_chunks, sizeof(*lv->chunks));
		if (lv->chunks == NULL)
			goto free_table;
		t->mem_bytes += t->ctl[k].max_chunks * sizeof(*lv->chunks);
		off += s;
	}

	t->max_rule_chunks = (uint32_t)((max + LPM_RULE_CHUNK) >> LPM_RULE_CHUNK_SHIFT);
	t->data_chunks = calloc(t->max_rule_chunks, sizeof(*t->data_chunks));
	t->rule_chunks = calloc(t->max_rule_chunks, sizeof(*t->rule_chunks));
	if (t->data_chunks == NULL || t->rule_chunks == NULL)
		goto free_table;
	t->mem_bytes += 2 * t->max_rule_chunks * sizeof(void *);
	t->rule_hi = 1; /* index 0 means "no rule" */

	t->hash_mask = 63;
	t->hash = calloc(t->hash_mask + 1, sizeof(*t->hash));
	if (t->hash == NULL)
		goto free_table;
	t->mem_bytes += (t->hash_mask + 1) * sizeof(*t->hash);

	uint32_t root;
	if (node_alloc(t, 0, &root) < 0)
		goto free_table;
	SL_VERIFY(root == 0);
	*out = t;
	return 0;

free_table:
	lpm_destroy(t);
	return -ENOMEM;
}

static void
lpm_destroy(void *tbl)
{
	struct lpm_table *t = tbl;

	if (t == NULL)
		return;
	for (uint32_t i = 0; i < t->n_allocs; i++)
		free(t->allocs[i]);
	free(t->allocs);
	for (unsigned k = 0; k < t->n_levels; k++) {
		free(t->lv[k].chunks);
		free(t->ctl[k].meta);
	}
	for (uint32_t i = 0; i < t->n_rule_chunks; i++) {
		free(t->data_chunks[i]);
		free(t->rule_chunks[i]);
	}
	free(t->data_chunks);
	free(t->rule_chunks);
	free(t->hash);
	free(t);
}

/*
 * Control path: add, del, find.
 */

/* Validate a rule; on success fill its left-aligned, truncated prefix and length. */
static int
rule_parse(const struct lpm_table *t, const struct sl_rule *r, uint64_t u[2], unsigned *plen)
{
	int len = sl_mask_prefix_len(r->mask, t->bits);

	if (len < 0)
		return -EINVAL;
	for (unsigned i = t->n_bytes; i < t->key_size; i++)
		if (r->mask[i] != 0)
			return -EINVAL;
	for (unsigned i = 0; i < t->key_size; i++)
		if (r->value[i] & ~r->mask[i])
			return -EINVAL;
	u[1] = 0;
	load_field(t, r->value, u);
	field_truncate(u, (unsigned)len);
	*plen = (unsigned)len;
	return 0;
}

/* Slot range [*first, *first + *n) a prefix covers in the node it lives in. */
static void
prefix_range(const struct lpm_table *t, unsigned k, const uint64_t u[2], unsigned plen,
	     uint32_t *first, uint32_t *n)
{
	const struct lpm_level *lv = &t->lv[k];
	unsigned free_bits = lv->stride - (plen - lv->offset);

	*first = level_index(lv, u) & ~((1u << free_bits) - 1);
	*n = 1u << free_bits;
}

static int
lpm_add(void *tbl, const struct sl_rule *r)
{
	struct lpm_table *t = tbl;
	uint32_t path[LPM_LEVELS_MAX];
	uint32_t idx, first, n, ri;
	struct lpm_rule *rule;
	struct lpm_slot *slots;
	uint64_t u[2];
	unsigned plen, k;
	int rc;

	rc = rule_parse(t, r, u, &plen);
	if (rc < 0)
		return rc;
	if (hash_lookup(t, u, plen) != 0)
		return -EEXIST;
	if (t->n_rules >= t->max_entries)
		return -ENOSPC;
	if ((t->n_rules + 1) * 2 > t->hash_mask + 1) {
		rc = hash_resize(t, (t->hash_mask + 1) * 2);
		if (rc < 0)
			return rc;
	}
	rc = rule_alloc(t, &ri);
	if (rc < 0)
		return rc;

	/* Walk down to the prefix's node, creating the missing ones. */
	k = level_of(t, plen);
	path[0] = 0;
	for (unsigned j = 0; j < k; j++) {
		slots = node_slots(&t->lv[j], path[j]);
		idx = level_index(&t->lv[j], u);
		if (slots[idx].child == 0) {
			uint32_t child;

			rc = node_alloc(t, j + 1, &child);
			if (rc < 0) {
				node_prune(t, j, path[j]);
				rule_free(t, ri);
				return rc == -ENOSPC ? -ENOMEM : rc;
			}
			t->ctl[j + 1].meta[child].parent = path[j];
			t->ctl[j + 1].meta[child].parent_idx = idx;
			t->ctl[j].meta[path[j]].n_children++;
			slots[idx].child = child;
		}
		path[j + 1] = slots[idx].child;
	}

	rule = rule_get(t, ri);
	rule->field[0] = u[0];
	rule->field[1] = u[1];
	rule->priority = r->priority;
	rule->node = path[k];
	rule->plen = plen;
	rule->level = k;
	rule->used = 1;
	*rule_data_ptr(t, ri) = r->data;
	*hash_find_slot(t, u, plen) = ri;
	t->ctl[k].meta[path[k]].n_prefixes++;
	t->n_rules++;

	/* Expand into the covered slots where it is longer than the current best. */
	slots = node_slots(&t->lv[k], path[k]);
	prefix_range(t, k, u, plen, &first, &n);
	for (uint32_t i = first; i < first + n; i++)
		if (slots[i].rule == 0 || rule_get(t, slots[i].rule)->plen < plen)
			slots[i].rule = ri;
	return 0;
}

/* Strict lookup of a rule (value, mask, priority); 0 when absent. */
static uint32_t
rule_find(const struct lpm_table *t, const struct sl_rule *r)
{
	uint64_t u[2];
	unsigned plen;
	uint32_t ri;

	if (rule_parse(t, r, u, &plen) < 0)
		return 0;
	ri = hash_lookup(t, u, plen);
	if (ri == 0 || rule_get(t, ri)->priority != r->priority)
		return 0;
	return ri;
}

static int
lpm_del(void *tbl, const struct sl_rule *r, void **data)
{
	struct lpm_table *t = tbl;
	uint32_t ri = rule_find(t, r), repl = 0, first, n;
	struct lpm_rule *rule;
	struct lpm_slot *slots;
	unsigned k, plen, min_len;

	if (ri == 0)
		return -ENOENT;
	rule = rule_get(t, ri);
	k = rule->level;
	plen = rule->plen;

	/*
	 * The longest shorter prefix living in the same node covers the whole
	 * range of this one, so it replaces it wherever it was the best.
	 */
	min_len = k == 0 ? 0 : t->lv[k].offset + 1;
	for (unsigned len = plen; len-- > min_len && repl == 0;) {
		uint64_t v[2] = {rule->field[0], rule->field[1]};

		field_truncate(v, len);
		repl = hash_lookup(t, v, len);
	}
	slots = node_slots(&t->lv[k], rule->node);
	prefix_range(t, k, rule->field, plen, &first, &n);
	for (uint32_t i = first; i < first + n; i++)
		if (slots[i].rule == ri)
			slots[i].rule = repl;

	hash_remove(t, (uint32_t)(hash_find_slot(t, rule->field, plen) - t->hash));
	if (data != NULL)
		*data = *rule_data_ptr(t, ri);
	t->ctl[k].meta[rule->node].n_prefixes--;
	node_prune(t, k, rule->node);
	rule_free(t, ri);
	t->n_rules--;
	return 0;
}

static void *
lpm_find(const void *tbl, const struct sl_rule *r)
{
	const struct lpm_table *t = tbl;
	uint32_t ri = rule_find(t, r);

	return ri ? *rule_data_ptr(t, ri) : NULL;
}

/*
 * Fast path.
 */

static uint64_t
lpm_lookup_burst(const void *tbl, const uint8_t *const keys[], uint64_t lanes, void *hits[])
{
	const struct lpm_table *t = tbl;
	const struct lpm_slot *cur[SL_BURST_MAX];
	uint64_t fields[SL_BURST_MAX][2];
	uint32_t best[SL_BURST_MAX];
	uint64_t active = lanes, found = 0;
	unsigned i;

	/* Stage 1: align every lane's field and prefetch its root slot. */
	SL_FOR_EACH_LANE (i, lanes) {
		load_field(t, keys[i], fields[i]);
		cur[i] = node_slots(&t->lv[0], 0) + level_index(&t->lv[0], fields[i]);
		sl_prefetch0(cur[i]);
	}

	/*
	 * Stage 2, one pass per level: read the slot prefetched by the previous
	 * pass, remember its rule, and prefetch the slot of the next level.  A
	 * whole pass separates a prefetch from its use, which hides the misses
	 * of large tables behind each other.
	 */
	for (unsigned k = 1; active != 0; k++) {
		const struct lpm_level *lv = &t->lv[k];

		SL_FOR_EACH_LANE (i, active) {
			struct lpm_slot s = *cur[i];

			if (s.rule != 0) {
				best[i] = s.rule;
				found |= UINT64_C(1) << i;
			}
			if (s.child != 0) {
				/* A child exists only above the last level, so lv is valid. */
				cur[i] = node_slots(lv, s.child) + level_index(lv, fields[i]);
				sl_prefetch0(cur[i]);
			} else {
				active &= ~(UINT64_C(1) << i);
			}
		}
	}

	/* Stage 3: fetch the winners' data. */
	SL_FOR_EACH_LANE (i, found) {
		hits[i] = *rule_data_ptr(t, best[i]);
	}
	return found;
}

static void *
lpm_lookup_path(const void *tbl, const uint8_t *key, struct sl_lpm_path *path)
{
	const struct lpm_table *t = tbl;
	uint32_t node = 0, best = 0;
	unsigned k, depth = 0;
	uint64_t u[2];

	load_field(t, key, u);
	for (k = 0; k < t->n_levels; k++) {
		const struct lpm_slot *slots = node_slots(&t->lv[k], node);
		struct lpm_slot s = slots[level_index(&t->lv[k], u)];

		path->nodes[k] = slots;
		if (s.rule != 0) {
			best = s.rule;
			depth = k;
		}
		node = s.child;
		if (node == 0) {
			k++;
			break;
		}
	}
	path->n_nodes = (uint8_t)k;
	path->match_depth = (uint8_t)depth;
	path->prefix_len = best ? rule_get(t, best)->plen : 0;
	return best ? *rule_data_ptr(t, best) : NULL;
}

/*
 * Control path: iterate and stats.
 */

static int
lpm_iterate(const void *tbl, sl_table_iter_fn fn, void *arg)
{
	const struct lpm_table *t = tbl;
	struct sl_rule r;

	for (uint32_t ri = 1; ri < t->rule_hi; ri++) {
		const struct lpm_rule *rule = rule_get(t, ri);
		uint64_t m[2] = {UINT64_MAX, UINT64_MAX};
		int rc;

		if (!rule->used)
			continue;
		field_truncate(m, rule->plen);
		memset(&r, 0, sizeof(r));
		/* Undo load_field: byte b holds bits [8b - lead, 8b - lead + 8) of the field. */
		for (unsigned b = 0; b < t->n_bytes; b++) {
			int pos = 8 * (int)b - t->lead; /* field bit of the byte's top bit */
			uint8_t vb = 0, mb = 0;

			for (unsigned bit = 0; bit < 8; bit++) {
				int fb = pos + (int)bit;

				if (fb < 0)
					continue;
				unsigned w = (unsigned)fb / 64, sh = 63 - (unsigned)fb % 64;
				vb |= ((rule->field[w] >> sh) & 1) << (7 - bit);
				mb |= ((m[w] >> sh) & 1) << (7 - bit);
			}
			r.value[b] = vb;
			r.mask[b] = mb;
		}
		r.priority = rule->priority;
		r.data = *rule_data_ptr(t, ri);
		rc = fn(&r, arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static void
lpm_stats_read(const void *tbl, struct sl_table_stats *st)
{
	const struct lpm_table *t = tbl;

	memset(st, 0, sizeof(*st));
	st->n_entries = t->n_rules;
	for (unsigned k = 0; k < t->n_levels; k++)
		st->n_groups += t->ctl[k].n_nodes;
	st->mem_bytes = t->mem_bytes;
}

const struct sl_table_ops sl_table_lpm_ops = {
	.name = "lpm",
	.create = lpm_create,
	.destroy = lpm_destroy,
	.add = lpm_add,
	.del = lpm_del,
	.find = lpm_find,
	.lookup_burst = lpm_lookup_burst,
	.iterate = lpm_iterate,
	.stats_read = lpm_stats_read,
	.lookup_path = lpm_lookup_path,
};
