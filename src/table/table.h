/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * table: match-action tables of four kinds behind one interface.
 *
 * Kinds (the composite-pipeline design, section 4.2.1):
 *   direct  - linear table; the key is an index (e.g. metadata); O(1).
 *   exact   - hash on the whole key; every rule has a full mask.
 *   lpm     - longest-prefix match on one field of up to 128 bits; the
 *             match exposes the trie path (for the fast path's verify flag).
 *   mask    - arbitrary value/mask with priorities ("ternary" is accepted as its name too).
 *
 * Tables see flat byte keys (see pkt.h: sl_key_extract), never packets.  A
 * rule is a value/mask pair over the key plus a priority and an opaque
 * pointer (the pipeline's flow entry), which is what a lookup returns.
 *
 * Semantics every kind shares, and that the reference classifier
 * (sl_ref_*) implements by a linear scan:
 *   - a rule matches a key when (key & mask) == value (value bits outside the
 *     mask must be zero; add() rejects them with -EINVAL);
 *   - among matching rules the highest priority wins; for lpm the priority
 *     is the prefix length (longest prefix wins) and a rule's own priority is
 *     only stored;
 *   - two rules with the same value, mask and priority are the same rule
 *     (add returns -EEXIST); overlapping rules of equal priority are allowed
 *     and either may win (OpenFlow leaves this undefined).
 *
 * lookup_burst contract (rte_table / OVS dpcls): at most SL_BURST_MAX keys;
 * @lanes marks the valid ones; returns the hit mask; hits[i] is defined only
 * for lanes that hit.  lookup_burst never locks, allocates or logs.
 *
 * Concurrency: one writer (the control thread) calls create/add/del/destroy,
 * and never on a table object that workers are reading: the pipeline keeps
 * two copies of each table (left-right, pipeline_priv.h) and changes only the
 * standby one.  Kinds therefore need no reader synchronisation of their own.
 */
#ifndef SL_TABLE_H
#define SL_TABLE_H

#include "../core/core.h"
#include "../flow/flow.h"
#include "../pkt/pkt.h"

/* enum sl_table_kind and its names (a table declaration names a kind): src/flow/flow.h. */

/** Creation parameters. */
struct sl_table_params {
	enum sl_table_kind kind;
	uint16_t key_size;    /* bytes, multiple of 8, <= SL_KEY_MAX */
	uint32_t max_entries; /* capacity; direct: number of indices */
	/*
	 * lpm: the prefix field is the first key byte onward, lpm_bits wide,
	 * right-aligned in ceil(lpm_bits / 8) bytes (pkt.h encoding).
	 * direct: the index is the key's first direct_bytes bytes, big-endian
	 * (e.g. 8 for the metadata field).
	 */
	uint16_t lpm_bits;
	uint16_t direct_bytes;
	const char *name; /* for logs and stats; may be NULL */
};

/** A rule as tables store it. */
struct sl_rule {
	uint8_t value[SL_KEY_MAX]; /* key bits to match; zero outside mask */
	uint8_t mask[SL_KEY_MAX];  /* 1 = bit must equal value */
	uint32_t priority;         /* higher wins; lpm: ignored for matching */
	void *data;                /* returned by lookups (the flow entry) */
};

/** Read-only statistics of a table's structure (not traffic: the pipeline counts that). */
struct sl_table_stats {
	uint32_t n_entries;   /* rules stored */
	uint32_t n_groups;    /* mask: subtables/masks; lpm: trie nodes; else 0 */
	uint64_t mem_bytes;   /* approximate memory footprint */
	uint64_t n_rebuilds;  /* mask: accelerator rebuilds; else 0 */
	bool rebuild_pending; /* mask: an accelerator build is in flight (sl_table_poll) */
};

/** Maximum trie nodes an lpm path reports. */
#define SL_LPM_PATH_MAX 20

/** The trie path of an lpm match (the composite-pipeline design: verify flag + subtree node). */
struct sl_lpm_path {
	uint8_t n_nodes;                    /* nodes visited, root first */
	const void *nodes[SL_LPM_PATH_MAX]; /* opaque node identities */
	uint8_t match_depth;                /* index in nodes[] where the winner was found */
	uint8_t prefix_len;                 /* length of the winning prefix */
};

/** Callback for sl_table_iterate; return non-zero to stop. */
typedef int (*sl_table_iter_fn)(const struct sl_rule *r, void *arg);

/** The vtable each kind implements.  Optional ops may be NULL, as noted. */
struct sl_table_ops {
	const char *name;
	int (*create)(const struct sl_table_params *p, void **tbl);
	void (*destroy)(void *tbl); /* NULL-safe */
	int (*add)(void *tbl, const struct sl_rule *r);
	/* Remove the rule with this value, mask and priority; *data gets its data. */
	int (*del)(void *tbl, const struct sl_rule *r, void **data);
	/* Strict find (value, mask, priority); returns data or NULL. */
	void *(*find)(const void *tbl, const struct sl_rule *r);
	uint64_t (*lookup_burst)(const void *tbl, const uint8_t *const keys[], uint64_t lanes,
				 void *hits[]);
	int (*iterate)(const void *tbl, sl_table_iter_fn fn, void *arg);
	void (*stats_read)(const void *tbl, struct sl_table_stats *st);
	/* lpm only: single lookup reporting the trie path; NULL for other kinds. */
	void *(*lookup_path)(const void *tbl, const uint8_t *key, struct sl_lpm_path *path);
	/* Install what a background build finished: 1 if it did, else 0.  NULL: no builds. */
	int (*poll)(void *tbl);
};

/** A table: its ops, its parameters and the implementation's state. */
struct sl_table {
	const struct sl_table_ops *ops;
	struct sl_table_params params;
	void *impl;
	char name[32];
};

/**
 * Create a table.
 *
 * @param p    Parameters; p->kind selects the implementation.
 * @param out  Out: the table.
 * @return 0, -EINVAL for bad parameters (key_size, lpm_bits, direct_bytes),
 *         -ENOMEM.  Control thread.
 */
int sl_table_create(const struct sl_table_params *p, struct sl_table **out);

/** Destroy a table (NULL-safe).  Rule data pointers are not freed.  Control thread. */
void sl_table_destroy(struct sl_table *t);

/**
 * Add a rule.
 *
 * @return 0; -EEXIST (same value, mask and priority present, or an exact /
 *         direct / lpm key already taken); -ENOSPC (full); -EINVAL (the kind
 *         cannot hold this rule: exact needs a full mask, lpm a prefix mask on
 *         its field, direct a full mask and an index below max_entries; or
 *         value bits outside the mask).  Control thread.
 */
static inline int
sl_table_add(struct sl_table *t, const struct sl_rule *r)
{
	return t->ops->add(t->impl, r);
}

/**
 * Delete a rule (matched strictly: value, mask, priority).
 *
 * @param data  Out, may be NULL: the deleted rule's data.
 * @return 0 or -ENOENT.  Control thread.
 */
static inline int
sl_table_del(struct sl_table *t, const struct sl_rule *r, void **data)
{
	return t->ops->del(t->impl, r, data);
}

/** Strict find; returns the rule's data or NULL.  Control thread. */
static inline void *
sl_table_find(const struct sl_table *t, const struct sl_rule *r)
{
	return t->ops->find(t->impl, r);
}

/**
 * Look up a burst of keys.
 *
 * @param keys   keys[i] for each lane in @lanes, params.key_size bytes each.
 * @param lanes  Valid lanes (bit i = keys[i]).
 * @param hits   Out: data of the winning rule per hit lane.
 * @return the mask of lanes that hit.  Any worker.
 */
static inline uint64_t
sl_table_lookup_burst(const struct sl_table *t, const uint8_t *const keys[], uint64_t lanes,
		      void *hits[])
{
	return t->ops->lookup_burst(t->impl, keys, lanes, hits);
}

/** Visit every rule (order unspecified).  Control thread. */
static inline int
sl_table_iterate(const struct sl_table *t, sl_table_iter_fn fn, void *arg)
{
	return t->ops->iterate(t->impl, fn, arg);
}

/** Structure statistics.  Control thread. */
static inline void
sl_table_stats_read(const struct sl_table *t, struct sl_table_stats *st)
{
	t->ops->stats_read(t->impl, st);
}

/**
 * Finish a batch of changes: let the table rebuild what it keeps beside its
 * incremental structure (mask tables: fold rules added or deleted since the
 * last rte_acl snapshot into a new one, so lookups stop probing the delta).
 * Lookups are correct without it, only slower.  Mask tables build on a
 * background thread: the result lands through sl_table_poll().
 *
 * @return 0, or -errno from a failed synchronous rebuild (the table stays
 *         correct).  Control thread.
 */
int sl_table_commit(struct sl_table *t);

/**
 * Install what the table's background build finished, if it has (mask
 * tables build their rte_acl snapshot on a builder thread; lookups use the
 * tuple-space delta meanwhile).  Call it on a table no worker reads, e.g.
 * the pipeline's standby copy; a table that changed must be published.
 *
 * @return 1 when the table changed, else 0.  Control thread.
 */
static inline int
sl_table_poll(struct sl_table *t)
{
	return t->ops->poll != NULL ? t->ops->poll(t->impl) : 0;
}

/** Implementation ops of each kind (for tests that call them directly). */
extern const struct sl_table_ops sl_table_direct_ops;
extern const struct sl_table_ops sl_table_exact_ops;
extern const struct sl_table_ops sl_table_lpm_ops;
extern const struct sl_table_ops sl_table_mask_ops;

/*
 * Helpers shared by the implementations.
 */

/** True when every byte of the first @n bytes of @mask is 0xff. */
bool sl_mask_is_full(const uint8_t *mask, unsigned n);
/** Prefix length of a mask over @n_bits right-aligned in the first bytes, or -1 if not a prefix. */
int sl_mask_prefix_len(const uint8_t *mask, unsigned n_bits);
/** True when (key & mask) == value over @size bytes (multiple of 8). */
static inline bool
sl_rule_matches(const struct sl_rule *r, const uint8_t *key, unsigned size)
{
	uint64_t diff = 0;
	for (unsigned i = 0; i < size; i += 8) {
		uint64_t k, m, v;
		__builtin_memcpy(&k, key + i, 8);
		__builtin_memcpy(&m, r->mask + i, 8);
		__builtin_memcpy(&v, r->value + i, 8);
		diff |= (k & m) ^ v;
	}
	return diff == 0;
}

/*
 * Reference classifier: a plain linear scan with the semantics above, used
 * by the differential tests.  Deliberately simple; never use it for traffic.
 */
struct sl_ref_table;

/** Create a reference table for the same parameters.  Returns NULL on ENOMEM. */
struct sl_ref_table *sl_ref_create(const struct sl_table_params *p);
void sl_ref_destroy(struct sl_ref_table *r);
/** Add (no kind-specific checks beyond duplicates): 0 or -EEXIST / -ENOMEM. */
int sl_ref_add(struct sl_ref_table *r, const struct sl_rule *rule);
/** Delete strictly: 0 or -ENOENT. */
int sl_ref_del(struct sl_ref_table *r, const struct sl_rule *rule);
/**
 * Look up one key.
 *
 * @param prio  Out, may be NULL: the winner's effective priority (lpm: prefix length).
 * @return the winner's data, or NULL on a miss.
 */
void *sl_ref_lookup(const struct sl_ref_table *r, const uint8_t *key, uint32_t *prio);

#endif /* SL_TABLE_H */
