/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mask table: arbitrary value/mask rules with priorities.
 *
 * Two structures, one authoritative and one accelerator.
 *
 * 1. Tuple space search (TSS), authoritative.  One hash subtable per distinct
 *    mask, keyed on the masked key (CRC32C over the mask's non-zero 64-bit
 *    words; 64-byte buckets of 7 signatures + 7 rule indices, linear probing
 *    between buckets with F14-style overflow counters, so deletes need no
 *    tombstones).  Rules with the same mask and value form a chain sorted by
 *    priority; the bucket points at the chain head.  Subtables are kept
 *    sorted by their highest priority (a lazy-deletion max-heap per subtable
 *    tracks it), and a lane stops probing as soon as its best match so far
 *    has a priority >= the next subtable's maximum (the OVS classifier's
 *    early exit).  Each subtable pass is staged over the burst: hash all
 *    lanes and prefetch their buckets, then compare; a pass specialised for
 *    the mask's word count (1-4) is chosen per subtable, and a subtable
 *    holding one value skips hashing (see "Fast path").  Add and delete are
 *    O(1) amortised (a subtable's bucket array doubles when 75 % full).
 *
 * 2. Snapshot + delta, the accelerator.  When there are many masks the TSS
 *    cost is one probe per subtable for every lane that matches a low
 *    priority rule or nothing.  The snapshot is an rte_acl multi-trie built
 *    over all rules, classified with SIMD over the whole burst; its cost
 *    does not grow with the number of masks.  Rules added since the build
 *    go into a second, small TSS (the delta) as well, and a lookup takes the
 *    better of the two.  A rule deleted since the build is marked dead in
 *    the snapshot's entry array; a lane whose snapshot winner is dead falls
 *    back to the full TSS.  That is exact: the snapshot's winner is the best
 *    snapshot rule for the key, so if it is alive it beats every other
 *    surviving snapshot rule, and any rule not in the snapshot is in the
 *    delta.  rte_acl sees the key as byte 0 (the 1-byte first field it
 *    requires) plus 4-byte big-endian BITMASK windows covering every byte
 *    some rule's mask touches (windows may overlap at the key's end, so
 *    rte_acl never reads past key_size and the caller's key pointers are
 *    passed as they are).  Priorities are mapped to dense ranks, since
 *    rte_acl's are int32 <= 2^29 - 1; userdata is the snapshot position + 1.
 *
 * Policy, measured with bench_mask.c (16-byte 5-tuple keys, bursts of 32,
 * traffic that mostly hits the lowest-priority rules or nothing, so early
 * exit rarely helps; ns per key, noisy shared machine, +-30 %):
 *
 *   masks (1000 rules)     1    2    4    8   16   32   64   1000  (10K: 6127)
 *   TSS only               8   13   25   49   82  155  306   8700   67000
 *   snapshot (rte_acl)    55   48   48   47   48   48   48     52      66
 *
 *   (TSS row after the specialised passes; before them 14 27 50 98 184 362
 *   718.  The 1000- and 6127-mask columns are the old, unspecialised runs.)
 *
 *   - A subtable probe costs ~5-6 ns per key and rte_acl ~50 ns (~200 ns at
 *     100K rules), so the TSS alone serves tables of up to
 *     SNAP_MIN_SUBS_DEFAULT (8) masks; from there on, and only when EAL was
 *     initialised before create (rte_acl allocates with rte_malloc), the
 *     snapshot is built and used.  It is dropped again below 4 masks.
 *   - Each delta mask adds a subtable probe (~5 ns), and a build costs
 *     ~40-65 us per rule (10K rules: 0.41 s, 100K: 6.6 s).  Builds run on a
 *     builder thread (one per process, one job at a time, SCHED_IDLE): add/
 *     del copy the rules into a job and return; the delta serves lookups
 *     until the control thread installs the result (mask_poll, on the
 *     standby copy), marking entries whose rule went away since the copy
 *     (serials) dead and putting rules added since into the new delta.
 *     Hard trigger: the delta holds more than max(64, n/8) rules, or more
 *     than max(64, n/8) snapshot rules are dead.  Soft trigger: more than 16
 *     delta masks or dead rules, and the time since the last build landed
 *     is at least that build's duration (the builder's duty cycle).  A
 *     trigger while a build is in flight waits for it to land.
 *   - No build for masks rte_acl cannot take in bounds (snap_suitable():
 *     2,000 rules with random bit masks on two IPv4 fields took 20-45 s and
 *     1.4-1.6 GB): TSS alone, one subtable insert per add.
 *   - A failed build (rte_acl cannot fit the rules in 8 tries or in
 *     snap_max_bytes, e.g. many arbitrary-bit masks over wide keys) leaves
 *     the table correct on what it had and retries after max(64, n) more
 *     changes.
 *
 * Fast path: lookup_burst() and what it calls (the "fast path" section).
 * Everything else is control path.
 */
#include "mask_priv.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include <rte_acl.h>
#include <rte_lcore.h>
#include <rte_memory.h>

#define NIL UINT32_MAX
#define KEY_WORDS (SL_KEY_MAX / 8)
#define CHUNK_SHIFT 10 /* rules live in chunks of 1024 and never move */
#define CHUNK_SIZE (1u << CHUNK_SHIFT)
#define BUCKET_SLOTS 7
#define SIG_BIT 0x80000000u /* forces a used signature non-zero */
#define HASH_SEED 0x9e3779b9u
#define DEFAULT_MAX_ENTRIES (1u << 20)

#define SNAP_MIN_SUBS_DEFAULT 8
#define REBUILD_MIN_DEFAULT 64
#define REBUILD_DIV_DEFAULT 8
#define SOFT_MAX_DEFAULT 16
#define SOFT_DUTY_DEFAULT 100
#define SNAP_MAX_ODD_DEFAULT 32
#define SNAP_MAX_BYTES_DEFAULT (128u << 20)

/*
 * A stored rule: this header, then the value's and the mask's key_words words
 * each, then a word whose low byte says the slot holds a live rule (else it is
 * on the free list) and the rule's serial (rule_serial).  Sized by the table's
 * key (rule_size), not by SL_KEY_MAX: an 8-byte key takes 56 bytes a rule, a
 * 192-byte key 424.  The
 * lookup reads the first 64 bytes for keys up to 40 bytes.
 */
struct mask_rule {
	uint32_t priority;
	uint32_t next[2];  /* next rule of the same mask+value chain, per TSS; NIL */
	uint32_t snap_pos; /* position in the snapshot, NIL if not in it */
	void *data;        /* returned by lookups */
	uint64_t value[];  /* masked value (key_words), then the mask (rule_mask) */
};

/* 64 bytes: sig[7] + overflow count, idx[7] + pad, so an AVX2 load compares all signatures. */
struct mask_bucket {
	uint32_t sig[BUCKET_SLOTS]; /* hash | SIG_BIT, 0 = free */
	uint32_t ovf;               /* entries whose probe passed this bucket full */
	uint32_t idx[BUCKET_SLOTS]; /* chain-head rule index */
	uint32_t pad;
};
static_assert(sizeof(struct mask_bucket) == 64, "bucket is one cache line");

/* Max-heap of priorities with duplicates. */
struct prio_heap {
	uint32_t *v;
	uint32_t n, cap;
};

struct mask_table;
struct mask_sub;

/* One pass of a burst over one subtable (see "Fast path"). */
typedef void (*sub_pass_fn)(const struct mask_table *t, const struct mask_sub *s,
			    const uint8_t *const keys[], uint64_t lanes, uint32_t best_prio[],
			    void *best_data[], uint64_t *hitp);

/* One subtable: all rules with one mask. */
struct mask_sub {
	sub_pass_fn pass;       /* lookup pass for lanes that may already have hit */
	sub_pass_fn pass_first; /* ... for lanes that have not (no priority compare) */
	uint64_t mask[KEY_WORDS];
	uint8_t words[KEY_WORDS]; /* indices of the non-zero mask words */
	uint8_t n_words;
	uint32_t max_prio;    /* highest rule priority in here */
	uint32_t pos;         /* index in tss->subs */
	uint32_t n_rules;     /* rules, chains counted in full */
	uint32_t n_heads;     /* bucket entries (distinct values) */
	uint32_t bucket_mask; /* n_buckets - 1 */
	struct mask_bucket *buckets;
	struct prio_heap live;     /* priorities added ... */
	struct prio_heap gone;     /* ... and deleted: max_prio = top of live not in gone */
	struct mask_sub *map_next; /* mask map chain */
};

/* A tuple space: the full one (id 0) or the delta (id 1). */
struct tss {
	unsigned id; /* selects mask_rule.next[] */
	uint32_t n_subs, cap_subs;
	struct mask_sub **subs; /* sorted by max_prio, highest first */
	uint32_t n_rules;
	struct mask_sub **map; /* mask -> subtable, chained */
	uint32_t map_mask;
};

/* One snapshot entry, so a hit needs no access to the rule itself. */
struct snap_ent {
	void *data;
	uint32_t prio;
	uint32_t idx; /* rule index, NIL once the rule is deleted */
};

struct mask_snap {
	struct rte_acl_ctx *ctx;
	uint32_t n;      /* rules compiled in */
	uint32_t n_dead; /* deleted since */
	uint32_t n_fields;
	struct snap_ent *ent; /* by rte_acl userdata - 1 */
};

/*
 * A snapshot build handed to the builder thread.  The control thread fills
 * the inputs (a copy of the rules: the table goes on changing), the builder
 * compiles them and sets done; the control thread installs the result.
 */
struct snap_job {
	struct snap_job *next; /* builder queue */
	uint16_t key_size;
	uint64_t max_bytes; /* rte_acl max_size */
	uint32_t n;
	uint64_t *serials;    /* per entry: the rule's serial when copied */
	uint64_t *words;      /* per entry: value then mask, key_size / 8 words each */
	struct mask_snap *sn; /* ent[] filled by the control thread; ctx by the builder */
	double cost;          /* seconds the compile took */
	int rc;               /* builder's result */
	bool done;            /* atomic: the builder is finished with the job */
	bool orphan;          /* atomic: the table gave it up, the builder frees the job */
	uint32_t *orphans;    /* with orphan: the table's count of them (builder.lock) */
};

struct mask_table {
	uint16_t key_size;
	uint8_t key_words;
	uint32_t max_entries;
	uint32_t n_rules;
	uint32_t rule_size; /* bytes a rule takes in its chunk (struct mask_rule) */
	uint8_t **chunks;   /* max_entries / CHUNK_SIZE + 1 pointers to rule_size rules */
	uint32_t n_slots;   /* slots ever handed out */
	uint32_t free_head; /* free slot list through next[0] */
	struct tss full;
	struct tss delta; /* only used while snap != NULL */
	struct mask_snap *snap;
	struct snap_job *job; /* build in flight (builder thread), NULL if none */
	uint32_t orphans;     /* jobs given up that the builder has not freed (builder.lock) */
	uint64_t next_serial; /* serial of the next rule added */
	bool eal;
	struct sl_mask_tuning tune;
	uint32_t backoff; /* changes to wait before retrying a failed build */
	uint64_t n_rebuilds;
	uint64_t n_build_fail;
	uint64_t n_build_skip;  /* builds not tried: masks rte_acl cannot take in bounds */
	double last_build_end;  /* monotonic seconds */
	double last_build_cost; /* seconds the last build took */
};

static inline struct mask_rule *
rule_at(const struct mask_table *t, uint32_t idx)
{
	return (struct mask_rule *)(t->chunks[idx >> CHUNK_SHIFT] +
				    (size_t)(idx & (CHUNK_SIZE - 1)) * t->rule_size);
}

static inline uint64_t *
rule_mask(const struct mask_table *t, const struct mask_rule *r)
{
	return (uint64_t *)r->value + t->key_words;
}

static inline bool
rule_in_use(const struct mask_table *t, const struct mask_rule *r)
{
	return rule_mask(t, r)[t->key_words] != 0;
}

static inline void
rule_set_in_use(const struct mask_table *t, struct mask_rule *r, bool in_use)
{
	rule_mask(t, r)[t->key_words] = in_use;
}

/* When the rule was added: a snapshot build tells a reused slot by it. */
static inline uint64_t *
rule_serial(const struct mask_table *t, const struct mask_rule *r)
{
	return &rule_mask(t, r)[t->key_words + 1];
}

static inline uint64_t
load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t
crc64_step(uint64_t h, uint64_t v)
{
#if defined(__SSE4_2__)
	return _mm_crc32_u64(h, v);
#else
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29) ^ (h >> 47);
#endif
}

static inline uint32_t
hash_fold(uint64_t h)
{
#if defined(__SSE4_2__)
	return (uint32_t)h;
#else
	return (uint32_t)(h ^ (h >> 32));
#endif
}

/*
 * Fast path.
 */

/* Hash of a key under the subtable's mask; the same for a rule's value. */
static inline uint32_t
sub_hash(const struct mask_sub *s, const uint8_t *key)
{
	uint64_t h = HASH_SEED;

	for (unsigned j = 0; j < s->n_words; j++) {
		unsigned w = s->words[j];
		h = crc64_step(h, load64(key + 8 * w) & s->mask[w]);
	}
	return hash_fold(h);
}

static inline bool
sub_match(const struct mask_sub *s, const uint8_t *key, const struct mask_rule *r)
{
	uint64_t diff = 0;

	for (unsigned j = 0; j < s->n_words; j++) {
		unsigned w = s->words[j];
		diff |= (load64(key + 8 * w) & s->mask[w]) ^ r->value[w];
	}
	return diff == 0;
}

/* Slots of @b whose signature is @sig. */
static inline unsigned
bucket_sig_match(const struct mask_bucket *b, uint32_t sig)
{
#if defined(__AVX2__)
	__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)b->sig);
	__m256i eq = _mm256_cmpeq_epi32(v, _mm256_set1_epi32((int)sig));
	return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(eq)) & 0x7f;
#elif defined(__SSE2__)
	/* Two 16-byte compares (the build's -march may stop short of AVX2). */
	__m128i s = _mm_set1_epi32((int)sig);
	__m128i lo = _mm_cmpeq_epi32(_mm_load_si128((const __m128i *)(const void *)b->sig), s);
	__m128i hi = _mm_cmpeq_epi32(_mm_load_si128((const __m128i *)(const void *)&b->sig[4]), s);
	unsigned m = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(lo)) |
		     (unsigned)_mm_movemask_ps(_mm_castsi128_ps(hi)) << 4;

	return m & 0x7f;
#else
	unsigned m = 0;
	for (unsigned k = 0; k < BUCKET_SLOTS; k++)
		m |= (unsigned)(b->sig[k] == sig) << k;
	return m;
#endif
}

/* Chain-head rule index matching @key in @s, or NIL; @bp/@sp get its place. */
static inline uint32_t
sub_probe(const struct mask_table *t, const struct mask_sub *s, const uint8_t *key, uint32_t h,
	  uint32_t *bp, unsigned *sp)
{
	uint32_t sig = h | SIG_BIT;
	uint32_t b = h & s->bucket_mask;

	for (;;) {
		const struct mask_bucket *bk = &s->buckets[b];
		unsigned m = bucket_sig_match(bk, sig);

		while (m != 0) {
			unsigned k = (unsigned)__builtin_ctz(m);
			uint32_t idx = bk->idx[k];

			m &= m - 1;
			if (sub_match(s, key, rule_at(t, idx))) {
				*bp = b;
				*sp = k;
				return idx;
			}
		}
		if (bk->ovf == 0)
			return NIL;
		b = (b + 1) & s->bucket_mask;
	}
}

/*
 * Generic pass: any number of mask words, the loop bounds read from the
 * subtable.  Always built; tuning.generic_lookup forces it (tests run it side
 * by side with the specialised passes).  Stage 1 hashes every lane and
 * prefetches its home bucket; stage 2 compares signatures, then the masked key.
 */
static void
sub_pass_generic(const struct mask_table *t, const struct mask_sub *sub,
		 const uint8_t *const keys[], uint64_t lanes, uint32_t best_prio[],
		 void *best_data[], uint64_t *hitp)
{
	uint32_t hashes[SL_BURST_MAX];
	uint64_t hit = *hitp;
	unsigned i;

	SL_FOR_EACH_LANE (i, lanes) {
		uint32_t h = sub_hash(sub, keys[i]);

		hashes[i] = h;
		sl_prefetch0(&sub->buckets[h & sub->bucket_mask]);
	}
	SL_FOR_EACH_LANE (i, lanes) {
		uint32_t b, idx;
		unsigned k;
		const struct mask_rule *r;
		uint64_t bit = UINT64_C(1) << i;

		idx = sub_probe(t, sub, keys[i], hashes[i], &b, &k);
		if (idx == NIL)
			continue;
		r = rule_at(t, idx);
		if (!(hit & bit) || r->priority > best_prio[i]) {
			best_prio[i] = r->priority;
			best_data[i] = r->data;
			hit |= bit;
		}
	}
	*hitp = hit;
}

/*
 * Specialised passes for masks of 1..SPEC_WORDS_MAX non-zero words (every
 * 8/16/24/32-byte key, and sparse masks over wider ones): the word count is
 * a compile-time constant, so the hash and compare loops unroll, and the
 * word offsets and masks sit in registers for the whole burst.
 */
#define SPEC_WORDS_MAX 4

static SL_ALWAYS_INLINE uint32_t
hash_nw(const uint8_t *key, const unsigned *off, const uint64_t *mask, unsigned nw)
{
	uint64_t h = HASH_SEED;

	for (unsigned j = 0; j < nw; j++)
		h = crc64_step(h, load64(key + off[j]) & mask[j]);
	return hash_fold(h);
}

static SL_ALWAYS_INLINE bool
match_nw(const uint8_t *key, const unsigned *off, const uint64_t *mask, unsigned nw,
	 const struct mask_rule *r)
{
	const uint8_t *v = (const uint8_t *)r->value;
	uint64_t diff = 0;

	for (unsigned j = 0; j < nw; j++)
		diff |= (load64(key + off[j]) & mask[j]) ^ load64(v + off[j]);
	return diff == 0;
}

/*
 * A key whose home bucket overflowed: the generic probe.  Out of line and
 * cold, so the passes' lane loops keep their registers (5.7 -> 5.6 ns/key on
 * bench_mask (f) before the one-value pass; with the probe written as one
 * loop instead of this early-return helper, gcc spilled so much that the
 * 1-word pass took 14.8).
 */
static __attribute__((noinline, cold)) const struct mask_rule *
probe_overflow(const struct mask_table *t, const struct mask_sub *sub, const uint8_t *key,
	       uint32_t h)
{
	uint32_t b, idx;
	unsigned k;

	idx = sub_probe(t, sub, key, h, &b, &k);
	return idx == NIL ? NULL : rule_at(t, idx);
}

/* The rule matching @key in @sub, or NULL: home bucket inline, beyond it the generic way. */
static SL_ALWAYS_INLINE const struct mask_rule *
probe_nw(const struct mask_table *t, const struct mask_sub *sub, const struct mask_bucket *buckets,
	 uint32_t bucket_mask, const uint8_t *key, uint32_t h, const unsigned *off,
	 const uint64_t *mask, unsigned nw)
{
	const struct mask_bucket *bk = &buckets[h & bucket_mask];
	unsigned m = bucket_sig_match(bk, h | SIG_BIT);

	while (m != 0) {
		const struct mask_rule *c = rule_at(t, bk->idx[__builtin_ctz(m)]);

		if (match_nw(key, off, mask, nw, c))
			return c;
		m &= m - 1;
	}
	if (bk->ovf == 0)
		return NULL;
	return probe_overflow(t, sub, key, h);
}

/*
 * A subtable with one distinct value (one rule, e.g. a table matching only
 * in_port, or rules differing only in priority): no hashing, each lane
 * compares its masked key with that value.  1 rule on in_port, 8-byte key:
 * 5.6 -> 1.9 ns/key (bench_mask (f)).  Comparing against up to 8 values
 * the same way did not beat hashing (8 rules on dl_dst/40 + dl_type: 5.9
 * either way), so it is not done.
 */
static SL_ALWAYS_INLINE void
sub_pass_single(const struct mask_table *t, const struct mask_sub *sub, const uint8_t *const keys[],
		uint64_t lanes, uint32_t best_prio[], void *best_data[], uint64_t *hitp,
		const unsigned *off, const uint64_t *mask, unsigned nw, bool first)
{
	const struct mask_rule *r = NULL;
	uint64_t val[SPEC_WORDS_MAX];
	uint64_t hit = *hitp;
	unsigned i;

	for (uint32_t b = 0; b <= sub->bucket_mask && r == NULL; b++)
		for (unsigned k = 0; k < BUCKET_SLOTS && r == NULL; k++)
			if (sub->buckets[b].sig[k] != 0)
				r = rule_at(t, sub->buckets[b].idx[k]);
	for (unsigned j = 0; j < nw; j++)
		val[j] = load64((const uint8_t *)r->value + off[j]);
	SL_FOR_EACH_LANE (i, lanes) {
		uint64_t bit = UINT64_C(1) << i;
		uint64_t diff = 0;

		for (unsigned j = 0; j < nw; j++)
			diff |= (load64(keys[i] + off[j]) & mask[j]) ^ val[j];
		if (diff != 0)
			continue;
		if (first || !(hit & bit) || r->priority > best_prio[i]) {
			best_prio[i] = r->priority;
			best_data[i] = r->data;
			hit |= bit;
		}
	}
	*hitp = hit;
}

/*
 * SL_ALWAYS_INLINE: @nw and @first must fold away.  @first: no lane of
 * @lanes has hit yet (the first subtable of a full-TSS lookup), so a match
 * is the lane's best without comparing priorities.
 */
static SL_ALWAYS_INLINE void
sub_pass_nw(const struct mask_table *t, const struct mask_sub *sub, const uint8_t *const keys[],
	    uint64_t lanes, uint32_t best_prio[], void *best_data[], uint64_t *hitp, unsigned nw,
	    bool first)
{
	const struct mask_bucket *buckets = sub->buckets;
	uint32_t bucket_mask = sub->bucket_mask;
	uint32_t hashes[SL_BURST_MAX];
	unsigned off[SPEC_WORDS_MAX];
	uint64_t mask[SPEC_WORDS_MAX];
	uint64_t hit = *hitp;
	unsigned i;

	for (unsigned j = 0; j < nw; j++) {
		off[j] = 8u * sub->words[j];
		mask[j] = sub->mask[sub->words[j]];
	}
	if (sub->n_heads == 1) {
		sub_pass_single(t, sub, keys, lanes, best_prio, best_data, hitp, off, mask, nw,
				first);
		return;
	}

	/* Stage 1: hash every lane, prefetch its home bucket. */
	SL_FOR_EACH_LANE (i, lanes) {
		uint32_t h = hash_nw(keys[i], off, mask, nw);

		hashes[i] = h;
		sl_prefetch0(&buckets[h & bucket_mask]);
	}

	/* Stage 2: compare signatures, then the masked key. */
	SL_FOR_EACH_LANE (i, lanes) {
		const struct mask_rule *r =
			probe_nw(t, sub, buckets, bucket_mask, keys[i], hashes[i], off, mask, nw);
		uint64_t bit = UINT64_C(1) << i;

		if (r == NULL)
			continue;
		if (first || !(hit & bit) || r->priority > best_prio[i]) {
			best_prio[i] = r->priority;
			best_data[i] = r->data;
			hit |= bit;
		}
	}
	*hitp = hit;
}

#define SUB_PASS_DEFINE(nw)                                                                        \
	static void sub_pass_##nw(const struct mask_table *t, const struct mask_sub *s,            \
				  const uint8_t *const keys[], uint64_t lanes,                     \
				  uint32_t best_prio[], void *best_data[], uint64_t *hitp)         \
	{                                                                                          \
		sub_pass_nw(t, s, keys, lanes, best_prio, best_data, hitp, nw, false);             \
	}                                                                                          \
	static void sub_pass_##nw##_first(const struct mask_table *t, const struct mask_sub *s,    \
					  const uint8_t *const keys[], uint64_t lanes,             \
					  uint32_t best_prio[], void *best_data[], uint64_t *hitp) \
	{                                                                                          \
		sub_pass_nw(t, s, keys, lanes, best_prio, best_data, hitp, nw, true);              \
	}
SUB_PASS_DEFINE(1)
SUB_PASS_DEFINE(2)
SUB_PASS_DEFINE(3)
SUB_PASS_DEFINE(4)

/*
 * Look @lanes up in tuple space @s, improving best_prio/best_data of lanes
 * already in *@hitp.  Subtables come highest max_prio first, so a lane whose
 * best so far reaches a subtable's max_prio is done for good.
 */
static void
tss_lookup(const struct mask_table *t, const struct tss *s, const uint8_t *const keys[],
	   uint64_t lanes, uint32_t best_prio[], void *best_data[], uint64_t *hitp)
{
	uint64_t hit = *hitp;
	unsigned i;

	for (uint32_t si = 0; si < s->n_subs; si++) {
		const struct mask_sub *sub = s->subs[si];
		uint32_t mp = sub->max_prio;

		/* Early exit: drop lanes nothing from here on can beat. */
		SL_FOR_EACH_LANE (i, lanes & hit) {
			lanes &= ~((uint64_t)(best_prio[i] >= mp) << i);
		}
		if (lanes == 0)
			break;
		if ((lanes & hit) == 0)
			sub->pass_first(t, sub, keys, lanes, best_prio, best_data, &hit);
		else
			sub->pass(t, sub, keys, lanes, best_prio, best_data, &hit);
	}
	*hitp = hit;
}

static uint64_t
mask_lookup_burst(const void *tbl, const uint8_t *const keys[], uint64_t lanes, void *hits[])
{
	const struct mask_table *t = tbl;
	const struct mask_snap *snap = t->snap;
	uint32_t best_prio[SL_BURST_MAX];
	const uint8_t *data[SL_BURST_MAX];
	uint32_t res[SL_BURST_MAX];
	uint8_t lane_of[SL_BURST_MAX];
	uint64_t hit = 0, fallback = 0;
	unsigned i, n = 0;

	if (lanes == 0)
		return 0;
	if (snap == NULL) {
		tss_lookup(t, &t->full, keys, lanes, best_prio, hits, &hit);
		return hit;
	}

	/* Snapshot: one SIMD classify over the compacted burst. */
	SL_FOR_EACH_LANE (i, lanes) {
		data[n] = keys[i];
		lane_of[n++] = (uint8_t)i;
	}
	rte_acl_classify(snap->ctx, data, res, n, 1);
	for (unsigned j = 0; j < n; j++) {
		const struct snap_ent *e;
		uint64_t bit = UINT64_C(1) << lane_of[j];

		if (res[j] == 0)
			continue;
		e = &snap->ent[res[j] - 1];
		if (sl_unlikely(e->idx == NIL)) {
			fallback |= bit;
			continue;
		}
		best_prio[lane_of[j]] = e->prio;
		hits[lane_of[j]] = e->data;
		hit |= bit;
	}

	/* Delta: rules added since the build may beat the snapshot's winner. */
	if (t->delta.n_subs != 0 && (lanes & ~fallback) != 0)
		tss_lookup(t, &t->delta, keys, lanes & ~fallback, best_prio, hits, &hit);
	/* Lanes whose snapshot winner was deleted: the authoritative TSS. */
	if (fallback != 0)
		tss_lookup(t, &t->full, keys, fallback, best_prio, hits, &hit);
	return hit;
}

/*
 * Control path: priority heaps.
 */

static int
heap_reserve(struct prio_heap *hp)
{
	uint32_t cap;
	uint32_t *v;

	if (hp->n < hp->cap)
		return 0;
	cap = hp->cap ? hp->cap * 2 : 4;
	v = realloc(hp->v, cap * sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	hp->v = v;
	hp->cap = cap;
	return 0;
}

/* Caller reserved room. */
static void
heap_push(struct prio_heap *hp, uint32_t p)
{
	uint32_t i = hp->n++;

	while (i > 0 && hp->v[(i - 1) / 2] < p) {
		hp->v[i] = hp->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	hp->v[i] = p;
}

static void
heap_pop(struct prio_heap *hp)
{
	uint32_t p = hp->v[--hp->n];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= hp->n)
			break;
		if (c + 1 < hp->n && hp->v[c + 1] > hp->v[c])
			c++;
		if (hp->v[c] <= p)
			break;
		hp->v[i] = hp->v[c];
		i = c;
	}
	if (hp->n > 0)
		hp->v[i] = p;
}

/* Highest live priority of @s (0 when empty); drops matched live/gone tops. */
static uint32_t
sub_top_prio(struct mask_sub *s)
{
	while (s->gone.n != 0 && s->live.n != 0 && s->gone.v[0] == s->live.v[0]) {
		heap_pop(&s->gone);
		heap_pop(&s->live);
	}
	return s->live.n != 0 ? s->live.v[0] : 0;
}

/*
 * Control path: subtable buckets.
 */

static void
bucket_put(struct mask_sub *s, uint32_t h, uint32_t idx)
{
	uint32_t b = h & s->bucket_mask;

	for (;;) {
		struct mask_bucket *bk = &s->buckets[b];

		for (unsigned k = 0; k < BUCKET_SLOTS; k++) {
			if (bk->sig[k] == 0) {
				bk->sig[k] = h | SIG_BIT;
				bk->idx[k] = idx;
				return;
			}
		}
		bk->ovf++;
		b = (b + 1) & s->bucket_mask;
	}
}

static int
sub_resize(struct mask_sub *s, uint32_t n_buckets)
{
	struct mask_bucket *old = s->buckets;
	uint32_t old_n = s->buckets ? s->bucket_mask + 1 : 0;
	struct mask_bucket *nb;

	nb = aligned_alloc(64, (size_t)n_buckets * sizeof(*nb));
	if (nb == NULL)
		return -ENOMEM;
	memset(nb, 0, (size_t)n_buckets * sizeof(*nb));
	s->buckets = nb;
	s->bucket_mask = n_buckets - 1;
	for (uint32_t b = 0; b < old_n; b++) {
		for (unsigned k = 0; k < BUCKET_SLOTS; k++) {
			if (old[b].sig[k] == 0)
				continue;
			bucket_put(s, old[b].sig[k] & ~SIG_BIT, old[b].idx[k]);
		}
	}
	free(old);
	return 0;
}

/* Find the chain head with @value (a masked value) in @s: its index or NIL. */
static uint32_t
sub_find_head(const struct mask_table *t, const struct mask_sub *s, const uint64_t *value,
	      uint32_t *bp, unsigned *sp)
{
	const uint8_t *v = (const uint8_t *)value;

	return sub_probe(t, s, v, sub_hash(s, v), bp, sp);
}

/* Remove the entry at bucket @b slot @k, whose hash is @h. */
static void
bucket_clear(struct mask_sub *s, uint32_t h, uint32_t b, unsigned k)
{
	uint32_t home = h & s->bucket_mask;

	s->buckets[b].sig[k] = 0;
	s->buckets[b].idx[k] = NIL;
	while (home != b) {
		s->buckets[home].ovf--;
		home = (home + 1) & s->bucket_mask;
	}
}

/*
 * Control path: tuple spaces.
 */

static uint32_t
mask_hash(const struct mask_table *t, const uint64_t *mask)
{
	uint64_t h = HASH_SEED;

	for (unsigned w = 0; w < t->key_words; w++)
		h = crc64_step(h, mask[w]);
	return hash_fold(h);
}

static struct mask_sub *
tss_find_sub(const struct mask_table *t, const struct tss *s, const uint64_t *mask)
{
	struct mask_sub *sub;

	if (s->map == NULL)
		return NULL;
	for (sub = s->map[mask_hash(t, mask) & s->map_mask]; sub != NULL; sub = sub->map_next)
		if (memcmp(sub->mask, mask, t->key_size) == 0)
			return sub;
	return NULL;
}

static int
tss_map_grow(const struct mask_table *t, struct tss *s)
{
	uint32_t n = s->map ? (s->map_mask + 1) * 2 : 16;
	struct mask_sub **map = calloc(n, sizeof(*map));

	if (map == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n_subs; i++) {
		struct mask_sub *sub = s->subs[i];
		uint32_t b = mask_hash(t, sub->mask) & (n - 1);

		sub->map_next = map[b];
		map[b] = sub;
	}
	free(s->map);
	s->map = map;
	s->map_mask = n - 1;
	return 0;
}

static void
sub_free(struct mask_sub *sub)
{
	if (sub == NULL)
		return;
	free(sub->buckets);
	free(sub->live.v);
	free(sub->gone.v);
	free(sub);
}

/* Choose @sub's lookup passes: the specialised ones unless tuning says generic. */
static void
sub_pass_select(const struct mask_table *t, struct mask_sub *sub)
{
	static const sub_pass_fn pass[SPEC_WORDS_MAX + 1] = {sub_pass_generic, sub_pass_1,
							     sub_pass_2, sub_pass_3, sub_pass_4};
	static const sub_pass_fn pass_first[SPEC_WORDS_MAX + 1] = {
		sub_pass_generic, sub_pass_1_first, sub_pass_2_first, sub_pass_3_first,
		sub_pass_4_first};
	unsigned nw = sub->n_words;

	if (t->tune.generic_lookup || nw > SPEC_WORDS_MAX)
		nw = 0;
	sub->pass = pass[nw];
	sub->pass_first = pass_first[nw];
}

static void
tss_pass_select(const struct mask_table *t, struct tss *s)
{
	for (uint32_t i = 0; i < s->n_subs; i++)
		sub_pass_select(t, s->subs[i]);
}

/* Create an empty subtable for @mask and register it (max_prio 0, last place). */
static struct mask_sub *
tss_add_sub(const struct mask_table *t, struct tss *s, const uint64_t *mask)
{
	struct mask_sub *sub;
	uint32_t b;

	if (s->n_subs == s->cap_subs) {
		uint32_t cap = s->cap_subs ? s->cap_subs * 2 : 16;
		struct mask_sub **subs = realloc(s->subs, cap * sizeof(*subs));

		if (subs == NULL)
			return NULL;
		s->subs = subs;
		s->cap_subs = cap;
	}
	if ((s->map == NULL || s->n_subs + 1 > s->map_mask + 1) && tss_map_grow(t, s) < 0)
		return NULL;
	sub = calloc(1, sizeof(*sub));
	if (sub == NULL)
		return NULL;
	memcpy(sub->mask, mask, t->key_size); /* zero past key_size (calloc) */
	for (unsigned w = 0; w < t->key_words; w++)
		if (mask[w] != 0)
			sub->words[sub->n_words++] = (uint8_t)w;
	if (sub_resize(sub, 1) < 0) {
		free(sub);
		return NULL;
	}
	sub_pass_select(t, sub);
	sub->pos = s->n_subs;
	s->subs[s->n_subs++] = sub;
	b = mask_hash(t, mask) & s->map_mask;
	sub->map_next = s->map[b];
	s->map[b] = sub;
	return sub;
}

static void
tss_del_sub(const struct mask_table *t, struct tss *s, struct mask_sub *sub)
{
	struct mask_sub **pp = &s->map[mask_hash(t, sub->mask) & s->map_mask];

	while (*pp != sub)
		pp = &(*pp)->map_next;
	*pp = sub->map_next;
	memmove(&s->subs[sub->pos], &s->subs[sub->pos + 1],
		(s->n_subs - sub->pos - 1) * sizeof(s->subs[0]));
	s->n_subs--;
	for (uint32_t i = sub->pos; i < s->n_subs; i++)
		s->subs[i]->pos = i;
	sub_free(sub);
}

/* Move @sub to its place after its max_prio changed. */
static void
tss_reposition(struct tss *s, struct mask_sub *sub)
{
	uint32_t i = sub->pos;

	while (i > 0 && s->subs[i - 1]->max_prio < sub->max_prio) {
		s->subs[i] = s->subs[i - 1];
		s->subs[i]->pos = i;
		i--;
	}
	while (i + 1 < s->n_subs && s->subs[i + 1]->max_prio > sub->max_prio) {
		s->subs[i] = s->subs[i + 1];
		s->subs[i]->pos = i;
		i++;
	}
	s->subs[i] = sub;
	sub->pos = i;
}

/*
 * Insert rule @idx into @s.  The full TSS rejects a duplicate with -EEXIST
 * (@check_dup).  On error nothing changed.
 */
static int
tss_insert(struct mask_table *t, struct tss *s, uint32_t idx, bool check_dup)
{
	struct mask_rule *r = rule_at(t, idx);
	unsigned id = s->id;
	struct mask_sub *sub;
	bool created = false;
	uint32_t head, b;
	unsigned k;
	int rc;

	sub = tss_find_sub(t, s, rule_mask(t, r));
	if (sub == NULL) {
		sub = tss_add_sub(t, s, rule_mask(t, r));
		if (sub == NULL)
			return -ENOMEM;
		created = true;
	}
	head = sub_find_head(t, sub, r->value, &b, &k);
	if (check_dup && head != NIL) {
		for (uint32_t c = head; c != NIL; c = rule_at(t, c)->next[id])
			if (rule_at(t, c)->priority == r->priority)
				return -EEXIST;
	}
	rc = heap_reserve(&sub->live);
	if (rc == 0 && head == NIL &&
	    (uint64_t)(sub->n_heads + 1) * 4 > (uint64_t)(sub->bucket_mask + 1) * BUCKET_SLOTS * 3)
		rc = sub_resize(sub, (sub->bucket_mask + 1) * 2);
	if (rc < 0) {
		if (created)
			tss_del_sub(t, s, sub);
		return rc;
	}

	if (head == NIL) {
		r->next[id] = NIL;
		bucket_put(sub, sub_hash(sub, (const uint8_t *)r->value), idx);
		sub->n_heads++;
	} else if (r->priority > rule_at(t, head)->priority) {
		r->next[id] = head;
		sub->buckets[b].idx[k] = idx;
	} else {
		struct mask_rule *prev = rule_at(t, head);

		while (prev->next[id] != NIL && rule_at(t, prev->next[id])->priority >= r->priority)
			prev = rule_at(t, prev->next[id]);
		r->next[id] = prev->next[id];
		prev->next[id] = idx;
	}
	heap_push(&sub->live, r->priority);
	sub->n_rules++;
	s->n_rules++;
	if (created || r->priority > sub->max_prio) {
		sub->max_prio = r->priority;
		tss_reposition(s, sub);
	}
	return 0;
}

/*
 * Find rule (mask, value, priority) in @s: its index or NIL.  @subp, @prevp
 * (chain predecessor or NIL), @bp, @sp locate it for removal.
 */
static uint32_t
tss_locate(const struct mask_table *t, const struct tss *s, const uint64_t *value,
	   const uint64_t *mask, uint32_t prio, struct mask_sub **subp, uint32_t *prevp,
	   uint32_t *bp, unsigned *sp)
{
	struct mask_sub *sub = tss_find_sub(t, s, mask);
	uint32_t c, prev = NIL;

	if (sub == NULL)
		return NIL;
	c = sub_find_head(t, sub, value, bp, sp);
	for (; c != NIL; prev = c, c = rule_at(t, c)->next[s->id])
		if (rule_at(t, c)->priority == prio)
			break;
	*subp = sub;
	*prevp = prev;
	return c;
}

/* Refill @sub's live heap from its chains, empty its gone heap. */
static void
sub_heap_rebuild(const struct mask_table *t, unsigned id, struct mask_sub *sub)
{
	/* live.cap >= live.n >= n_rules: every live rule was pushed once. */
	sub->live.n = 0;
	sub->gone.n = 0;
	for (uint32_t b = 0; b <= sub->bucket_mask; b++)
		for (unsigned k = 0; k < BUCKET_SLOTS; k++)
			if (sub->buckets[b].sig[k] != 0)
				for (uint32_t c = sub->buckets[b].idx[k]; c != NIL;
				     c = rule_at(t, c)->next[id])
					heap_push(&sub->live, rule_at(t, c)->priority);
}

/* Remove rule @idx, which @s holds.  Never fails. */
static void
tss_remove(struct mask_table *t, struct tss *s, uint32_t idx)
{
	struct mask_rule *r = rule_at(t, idx);
	struct mask_sub *sub;
	uint32_t prev, b, c;
	unsigned k;

	c = tss_locate(t, s, r->value, rule_mask(t, r), r->priority, &sub, &prev, &b, &k);
	SL_VERIFY(c == idx);
	if (prev != NIL) {
		rule_at(t, prev)->next[s->id] = r->next[s->id];
	} else if (r->next[s->id] != NIL) {
		sub->buckets[b].idx[k] = r->next[s->id];
	} else {
		bucket_clear(sub, sub_hash(sub, (const uint8_t *)r->value), b, k);
		sub->n_heads--;
	}
	sub->n_rules--;
	s->n_rules--;
	if (sub->n_rules == 0) {
		tss_del_sub(t, s, sub);
		return;
	}
	/*
	 * Lazy deletion from the priority heap.  Rebuild it from the chains
	 * when the deleted entries pile up (amortised O(1)) or on ENOMEM.
	 */
	if (heap_reserve(&sub->gone) == 0)
		heap_push(&sub->gone, r->priority);
	else
		sub_heap_rebuild(t, s->id, sub);
	if (sub->gone.n > 16 && sub->gone.n * 2 > sub->live.n)
		sub_heap_rebuild(t, s->id, sub);
	if (r->priority == sub->max_prio) {
		sub->max_prio = sub_top_prio(sub);
		tss_reposition(s, sub);
	}
}

static void
tss_clear(struct tss *s)
{
	unsigned id = s->id;

	for (uint32_t i = 0; i < s->n_subs; i++)
		sub_free(s->subs[i]);
	free(s->subs);
	free(s->map);
	memset(s, 0, sizeof(*s));
	s->id = id;
}

/*
 * Control path: the rte_acl snapshot.
 */

static void
snap_free(struct mask_snap *sn)
{
	if (sn == NULL)
		return;
	rte_acl_free(sn->ctx);
	free(sn->ent);
	free(sn);
}

/* Forget the snapshot: every rule lives in the full TSS only. */
static void
snap_drop(struct mask_table *t)
{
	struct mask_snap *sn = t->snap;

	if (sn == NULL)
		return;
	for (uint32_t i = 0; i < t->n_slots; i++)
		rule_at(t, i)->snap_pos = NIL;
	t->snap = NULL;
	tss_clear(&t->delta);
	snap_free(sn);
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static uint32_t
be_load(const uint8_t *p, unsigned size)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < size; i++)
		v = (v << 8) | p[i];
	return v;
}

/* Lay out rte_acl fields over the key bytes some rule's mask touches. */
static unsigned
snap_fields(unsigned key_size, const uint8_t *touched, struct rte_acl_field_def *defs)
{
	bool covered[SL_KEY_MAX] = {false};
	unsigned nf = 1;

	defs[0] = (struct rte_acl_field_def){.type = RTE_ACL_FIELD_TYPE_BITMASK,
					     .size = 1,
					     .field_index = 0,
					     .input_index = 0,
					     .offset = 0};
	for (unsigned b = 1; b < key_size; b++) {
		unsigned o;

		if (!touched[b] || covered[b])
			continue;
		o = b + 4 <= key_size ? b : key_size - 4u;
		defs[nf] = (struct rte_acl_field_def){.type = RTE_ACL_FIELD_TYPE_BITMASK,
						      .size = 4,
						      .field_index = (uint8_t)nf,
						      .input_index = (uint8_t)nf,
						      .offset = o};
		nf++;
		for (unsigned j = o; j < o + 4; j++)
			covered[j] = true;
	}
	return nf;
}

static void
job_free(struct snap_job *j)
{
	if (j == NULL)
		return;
	snap_free(j->sn);
	free(j->serials);
	free(j->words);
	free(j);
}

/*
 * Would rte_acl take these rules within bounds?  Its tries grow with every
 * distinct byte mask that is not a prefix of its byte: 2,000 rules with
 * random bit masks on two IPv4 fields took 20-45 s and 1.4-1.6 GB to build
 * (and failed in -m 1024), while prefixes and whole-byte masks (port masks
 * such as 0xff00) stay cheap at 100K rules.  So more than @max_odd distinct
 * (byte, mask) pairs of other shapes means no snapshot.
 */
static bool
snap_suitable(const struct mask_table *t, uint32_t max_odd)
{
	uint16_t odd[64];
	unsigned n_odd = 0;

	if (max_odd == 0)
		return true;
	max_odd = SL_MIN(max_odd, (uint32_t)SL_ARRAY_SIZE(odd));
	for (uint32_t i = 0; i < t->n_slots; i++) {
		const struct mask_rule *r = rule_at(t, i);
		const uint8_t *m = (const uint8_t *)rule_mask(t, r);

		if (!rule_in_use(t, r))
			continue;
		for (unsigned b = 0; b < t->key_size; b++) {
			uint8_t inv = (uint8_t)~m[b];
			uint16_t key = (uint16_t)(b << 8 | m[b]);
			unsigned k;

			if ((inv & (uint8_t)(inv + 1)) == 0)
				continue; /* 0x00, 0x80, 0xc0, ... 0xff */
			for (k = 0; k < n_odd && odd[k] != key; k++)
				;
			if (k < n_odd)
				continue;
			if (n_odd == max_odd)
				return false;
			odd[n_odd++] = key;
		}
	}
	return true;
}

/* Entry @p's value and mask in job @j's copy. */
static inline uint64_t *
job_value(const struct snap_job *j, uint32_t p)
{
	return &j->words[(size_t)p * 2 * (j->key_size / 8u)];
}

static inline uint64_t *
job_mask(const struct snap_job *j, uint32_t p)
{
	return job_value(j, p) + j->key_size / 8u;
}

/* Copy every live rule into a new job (control thread); NULL on ENOMEM. */
static struct snap_job *
job_prepare(const struct mask_table *t)
{
	struct snap_job *j = calloc(1, sizeof(*j));
	uint32_t n = 0, cap = SL_MAX(t->n_rules, 1u);

	if (j == NULL)
		return NULL;
	j->key_size = t->key_size;
	j->max_bytes = t->tune.snap_max_bytes;
	j->sn = calloc(1, sizeof(*j->sn));
	j->serials = malloc((size_t)cap * sizeof(*j->serials));
	j->words = malloc((size_t)cap * 2 * t->key_size);
	if (j->sn == NULL || j->serials == NULL || j->words == NULL)
		goto free_job;
	j->sn->ent = malloc((size_t)cap * sizeof(*j->sn->ent));
	if (j->sn->ent == NULL)
		goto free_job;
	for (uint32_t i = 0; i < t->n_slots; i++) {
		const struct mask_rule *r = rule_at(t, i);

		if (!rule_in_use(t, r))
			continue;
		j->sn->ent[n] = (struct snap_ent){.data = r->data, .prio = r->priority, .idx = i};
		j->serials[n] = *rule_serial(t, r);
		memcpy(job_value(j, n), r->value, t->key_size);
		memcpy(job_mask(j, n), rule_mask(t, r), t->key_size);
		n++;
	}
	j->n = n;
	j->sn->n = n;
	return j;

free_job:
	job_free(j);
	return NULL;
}

/*
 * Compile a job's rules into an rte_acl context: the builder thread (or the
 * control thread for a synchronous build).  Touches nothing but the job.
 */
static int
job_compile(struct snap_job *j)
{
	static atomic_uint serial;
	struct rte_acl_config cfg = {.num_categories = 1, .max_size = j->max_bytes};
	uint8_t touched[SL_KEY_MAX] = {0};
	struct rte_acl_param prm = {0};
	struct mask_snap *sn = j->sn;
	uint32_t *prios = NULL, n_prios = 0, n = j->n;
	size_t rule_size;
	uint8_t *buf = NULL;
	char name[RTE_ACL_NAMESIZE];
	int rc = -ENOMEM;

	prios = malloc((size_t)SL_MAX(n, 1u) * sizeof(*prios));
	if (prios == NULL)
		return -ENOMEM;
	for (uint32_t p = 0; p < n; p++) {
		const uint8_t *m = (const uint8_t *)job_mask(j, p);

		prios[p] = sn->ent[p].prio;
		for (unsigned b = 0; b < j->key_size; b++)
			touched[b] |= m[b];
	}
	qsort(prios, n, sizeof(*prios), cmp_u32);
	for (uint32_t i = 0; i < n; i++)
		if (n_prios == 0 || prios[n_prios - 1] != prios[i])
			prios[n_prios++] = prios[i];

	cfg.num_fields = snap_fields(j->key_size, touched, cfg.defs);
	sn->n_fields = cfg.num_fields;
	rule_size = RTE_ACL_RULE_SZ(cfg.num_fields);
	buf = calloc(SL_MAX(n, 1u), rule_size);
	if (buf == NULL)
		goto free_all;
	for (uint32_t p = 0; p < n; p++) {
		struct rte_acl_rule *ar = (struct rte_acl_rule *)(void *)(buf + p * rule_size);
		const uint8_t *v = (const uint8_t *)job_value(j, p);
		const uint8_t *m = (const uint8_t *)job_mask(j, p);
		const uint32_t *rank =
			bsearch(&sn->ent[p].prio, prios, n_prios, sizeof(*prios), cmp_u32);

		ar->data.category_mask = 1;
		ar->data.priority = (int32_t)(rank - prios) + RTE_ACL_MIN_PRIORITY;
		ar->data.userdata = p + 1;
		ar->field[0].value.u8 = v[0];
		ar->field[0].mask_range.u8 = m[0];
		for (unsigned f = 1; f < cfg.num_fields; f++) {
			unsigned o = cfg.defs[f].offset;

			ar->field[f].value.u32 = be_load(v + o, 4);
			ar->field[f].mask_range.u32 = be_load(m + o, 4);
		}
	}

	snprintf(name, sizeof(name), "sl_tern_%u", atomic_fetch_add(&serial, 1));
	prm.name = name;
	prm.socket_id = SOCKET_ID_ANY;
	prm.rule_size = (uint32_t)rule_size;
	prm.max_rule_num = SL_MAX(n, 1u);
	sn->ctx = rte_acl_create(&prm);
	if (sn->ctx == NULL)
		goto free_all;
	rc = rte_acl_add_rules(sn->ctx, (const struct rte_acl_rule *)(void *)buf, n);
	if (rc == 0)
		rc = rte_acl_build(sn->ctx, &cfg);

free_all:
	free(buf);
	free(prios);
	return rc;
}

static double
mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * The builder thread: one per process, builds one job at a time (so at most
 * one rte_acl build's memory at once), at idle priority so the control
 * thread it shares a core with comes first.  Jobs are handed over under
 * builder.lock; done is also read without it (atomic).
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a job was queued */
	pthread_cond_t idle; /* the job being compiled is finished */
	struct snap_job *head, *tail;
	struct snap_job *current; /* being compiled, NULL if none */
	bool started;
} builder = {.lock = PTHREAD_MUTEX_INITIALIZER,
	     .cond = PTHREAD_COND_INITIALIZER,
	     .idle = PTHREAD_COND_INITIALIZER};

static void *
builder_main(void *arg)
{
	(void)arg;
#ifdef SCHED_IDLE
	struct sched_param sp = {0};
	pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
#endif
	for (;;) {
		struct snap_job *j;
		bool orphan;

		pthread_mutex_lock(&builder.lock);
		while (builder.head == NULL)
			pthread_cond_wait(&builder.cond, &builder.lock);
		j = builder.head;
		builder.head = j->next;
		if (builder.head == NULL)
			builder.tail = NULL;
		orphan = j->orphan;
		builder.current = orphan ? NULL : j;
		pthread_mutex_unlock(&builder.lock);

		if (!orphan) {
			double t0 = mono_now();

			j->rc = job_compile(j);
			j->cost = mono_now() - t0;
		}
		pthread_mutex_lock(&builder.lock);
		orphan = j->orphan;
		__atomic_store_n(&j->done, true, __ATOMIC_RELEASE);
		/*
		 * Freed before a waiter resumes (mask_destroy): at exit, EAL is
		 * torn down next, and rte_acl_free after that crashed.
		 */
		if (orphan) {
			(*j->orphans)--;
			job_free(j);
		}
		builder.current = NULL;
		pthread_cond_broadcast(&builder.idle);
		pthread_mutex_unlock(&builder.lock);
	}
	return NULL;
}

/* Queue @j for the builder thread (started on first use). */
static int
job_submit(struct snap_job *j)
{
	int rc = 0;

	pthread_mutex_lock(&builder.lock);
	if (!builder.started) {
		pthread_t th;

		rc = -pthread_create(&th, NULL, builder_main, NULL);
		if (rc == 0) {
			pthread_detach(th);
			builder.started = true;
		}
	}
	if (rc == 0) {
		if (builder.tail != NULL)
			builder.tail->next = j;
		else
			builder.head = j;
		builder.tail = j;
		pthread_cond_signal(&builder.cond);
	}
	pthread_mutex_unlock(&builder.lock);
	return rc;
}

/*
 * Give up @t's job in flight: the builder frees it (or it is freed now if
 * done).  @wait: until the builder is out of every job @t gave up (the
 * table, or EAL, is going away: a queued job is skipped, a running one
 * finishes; rte_acl must not outlive EAL).
 */
static void
job_abandon_wait(struct mask_table *t, bool wait)
{
	struct snap_job *j = t->job;
	bool done = false;

	t->job = NULL;
	pthread_mutex_lock(&builder.lock);
	if (j != NULL) {
		/* Done: ours to free; else the builder's (j is not touched again). */
		done = j->done;
		if (!done) {
			j->orphan = true;
			j->orphans = &t->orphans;
			t->orphans++;
		}
	}
	while (wait && t->orphans > 0)
		pthread_cond_wait(&builder.idle, &builder.lock);
	pthread_mutex_unlock(&builder.lock);
	if (done)
		job_free(j);
}

static void
job_abandon(struct mask_table *t)
{
	job_abandon_wait(t, false);
}

/* A build failed (or was refused): retry after max(64, n) more changes. */
static void
build_failed(struct mask_table *t)
{
	t->n_build_fail++;
	t->backoff = SL_MAX(REBUILD_MIN_DEFAULT, t->n_rules);
}

/*
 * Switch to a compiled snapshot (control thread, on a copy no worker
 * reads).  Rules changed since the job copied them: an entry whose slot no
 * longer holds the same rule (serial) is dead, and every live rule the
 * snapshot lacks goes into the new delta.  Frees the job.
 */
static void
job_install(struct mask_table *t, struct snap_job *j)
{
	struct mask_snap *sn = j->sn;

	t->last_build_end = mono_now();
	t->last_build_cost = j->cost;
	if (j->rc < 0) {
		build_failed(t);
		job_free(j);
		return;
	}
	snap_drop(t);
	for (uint32_t p = 0; p < sn->n; p++) {
		uint32_t idx = sn->ent[p].idx;
		struct mask_rule *r = rule_at(t, idx);

		if (rule_in_use(t, r) && *rule_serial(t, r) == j->serials[p]) {
			r->snap_pos = p;
		} else {
			sn->ent[p].idx = NIL;
			sn->n_dead++;
		}
	}
	j->sn = NULL;
	t->snap = sn;
	t->n_rebuilds++;
	job_free(j);
	for (uint32_t i = 0; i < t->n_slots; i++) {
		struct mask_rule *r = rule_at(t, i);

		if (rule_in_use(t, r) && r->snap_pos == NIL &&
		    tss_insert(t, &t->delta, i, false) < 0) {
			snap_drop(t); /* out of memory: the full TSS alone is exact */
			return;
		}
	}
}

/* Build a snapshot of every live rule now, in this thread, and switch to it. */
static int
snap_rebuild(struct mask_table *t)
{
	struct snap_job *j;
	double t0 = mono_now();
	int rc;

	job_abandon(t);
	j = job_prepare(t);
	if (j == NULL) {
		build_failed(t);
		return -ENOMEM;
	}
	rc = j->rc = job_compile(j);
	j->cost = mono_now() - t0;
	job_install(t, j);
	return rc;
}

/*
 * A snapshot of the current rules is due: start a build, unless one is in
 * flight (the policy runs again when it lands) or the masks do not suit
 * rte_acl.  tune.build_sync builds here and now instead.
 */
static void
snap_request(struct mask_table *t)
{
	struct snap_job *j;

	if (t->job != NULL)
		return;
	if (!snap_suitable(t, t->tune.snap_max_odd)) {
		t->n_build_skip++;
		snap_drop(t);
		t->backoff = SL_MAX(REBUILD_MIN_DEFAULT, t->n_rules);
		return;
	}
	if (t->tune.build_sync) {
		snap_rebuild(t);
		return;
	}
	j = job_prepare(t);
	if (j == NULL || job_submit(j) < 0) {
		job_free(j);
		build_failed(t);
		return;
	}
	t->job = j;
}

/*
 * Widest key an rte_acl snapshot is built for.  Builds on 64-byte keys
 * (17 fields) that ran past rte_acl's 8 tries were followed by a SIGSEGV in
 * test_mask's forced passes (twice in fresh-clone CI runs, once under
 * ASan, never in 10 other runs): until that is understood, wider keys keep
 * the tuple space and the decision cache only.
 */
#define SNAP_KEY_MAX 40

/* May @t use a snapshot at all (EAL, tuning, key width, enough masks to keep one)? */
static bool
snap_allowed(const struct mask_table *t)
{
	const struct sl_mask_tuning *tu = &t->tune;

	return t->eal && tu->snap_enable && t->n_rules != 0 && t->key_size <= SNAP_KEY_MAX &&
	       t->full.n_subs >= tu->snap_min_subs / 2;
}

/* Apply the snapshot policy after a change (see the top of the file). */
static void
snap_policy(struct mask_table *t)
{
	const struct sl_mask_tuning *tu = &t->tune;
	struct mask_snap *sn = t->snap;

	if (!snap_allowed(t)) {
		job_abandon(t);
		snap_drop(t);
		return;
	}
	if (t->backoff > 0) {
		t->backoff--;
		return;
	}
	if (sn == NULL) {
		if (t->full.n_subs >= tu->snap_min_subs)
			snap_request(t);
		return;
	}
	/* Hard trigger: bounds the delta and the dead-winner fallbacks. */
	if (t->delta.n_rules > SL_MAX(tu->delta_min, t->n_rules / tu->delta_div) ||
	    sn->n_dead > SL_MAX(tu->dead_min, sn->n / tu->dead_div)) {
		snap_request(t);
		return;
	}
	/*
	 * Soft trigger: each delta mask costs a subtable probe per lookup, so
	 * rebuild early when the builder has been idle long enough (duty
	 * cycle), instead of letting the delta grow to n / 8.
	 */
	if (tu->soft_duty_pct != 0 &&
	    (t->delta.n_subs > tu->soft_max || sn->n_dead > tu->soft_max) &&
	    mono_now() - t->last_build_end >= t->last_build_cost * tu->soft_duty_pct / 100)
		snap_request(t);
}

/*
 * Control path: the ops.
 */

static bool
eal_is_up(void)
{
	/* The lcore count is set by rte_eal_init and 0 before it. */
	return rte_lcore_count() > 0;
}

static int
mask_create(const struct sl_table_params *p, void **tbl)
{
	struct mask_table *t;
	uint32_t max = p->max_entries ? p->max_entries : DEFAULT_MAX_ENTRIES;

	if (p->key_size == 0 || p->key_size % 8 || p->key_size > SL_KEY_MAX)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	t->key_size = p->key_size;
	t->key_words = (uint8_t)(p->key_size / 8);
	t->rule_size = (uint32_t)(sizeof(struct mask_rule) + 2 * p->key_size + 16);
	t->max_entries = max;
	t->free_head = NIL;
	t->chunks = calloc(max / CHUNK_SIZE + 1, sizeof(*t->chunks));
	if (t->chunks == NULL) {
		free(t);
		return -ENOMEM;
	}
	t->full.id = 0;
	t->delta.id = 1;
	t->eal = eal_is_up();
	t->tune = (struct sl_mask_tuning){
		.snap_enable = true,
		.snap_min_subs = SNAP_MIN_SUBS_DEFAULT,
		.delta_min = REBUILD_MIN_DEFAULT,
		.delta_div = REBUILD_DIV_DEFAULT,
		.dead_min = REBUILD_MIN_DEFAULT,
		.dead_div = REBUILD_DIV_DEFAULT,
		.soft_max = SOFT_MAX_DEFAULT,
		.soft_duty_pct = SOFT_DUTY_DEFAULT,
		.snap_max_odd = SNAP_MAX_ODD_DEFAULT,
		.snap_max_bytes = SNAP_MAX_BYTES_DEFAULT,
	};
	*tbl = t;
	return 0;
}

static void
mask_destroy(void *tbl)
{
	struct mask_table *t = tbl;

	if (t == NULL)
		return;
	job_abandon_wait(t, true);
	snap_drop(t);
	tss_clear(&t->full);
	for (uint32_t c = 0; c <= t->max_entries / CHUNK_SIZE; c++)
		free(t->chunks[c]);
	free(t->chunks);
	free(t);
}

/*
 * Copy a rule's value and mask into word form (key_words words each);
 * -EINVAL on value bits outside the mask.
 */
static int
rule_words(const struct mask_table *t, const struct sl_rule *r, uint64_t *value, uint64_t *mask)
{
	uint64_t bad = 0;

	memcpy(value, r->value, t->key_size);
	memcpy(mask, r->mask, t->key_size);
	for (unsigned w = 0; w < t->key_words; w++)
		bad |= value[w] & ~mask[w];
	return bad ? -EINVAL : 0;
}

static int
slot_alloc(struct mask_table *t, uint32_t *idx)
{
	uint32_t i;

	if (t->free_head != NIL) {
		i = t->free_head;
		t->free_head = rule_at(t, i)->next[0];
		*idx = i;
		return 0;
	}
	i = t->n_slots;
	if (t->chunks[i >> CHUNK_SHIFT] == NULL) {
		t->chunks[i >> CHUNK_SHIFT] = calloc(CHUNK_SIZE, t->rule_size);
		if (t->chunks[i >> CHUNK_SHIFT] == NULL)
			return -ENOMEM;
	}
	t->n_slots++;
	*idx = i;
	return 0;
}

static void
slot_free(struct mask_table *t, uint32_t idx)
{
	struct mask_rule *r = rule_at(t, idx);

	rule_set_in_use(t, r, false);
	r->snap_pos = NIL;
	r->next[0] = t->free_head;
	t->free_head = idx;
}

static int
mask_add(void *tbl, const struct sl_rule *sr)
{
	struct mask_table *t = tbl;
	struct mask_rule *r;
	uint32_t idx;
	int rc;

	if (t->n_rules >= t->max_entries)
		return -ENOSPC;
	rc = slot_alloc(t, &idx);
	if (rc < 0)
		return rc;
	r = rule_at(t, idx);
	rc = rule_words(t, sr, r->value, rule_mask(t, r));
	if (rc < 0)
		goto free_slot;
	r->priority = sr->priority;
	r->data = sr->data;
	r->snap_pos = NIL;
	*rule_serial(t, r) = t->next_serial++;
	rc = tss_insert(t, &t->full, idx, true);
	if (rc < 0)
		goto free_slot;
	if (t->snap != NULL) {
		rc = tss_insert(t, &t->delta, idx, false);
		if (rc < 0) {
			tss_remove(t, &t->full, idx);
			goto free_slot;
		}
	}
	rule_set_in_use(t, r, true);
	t->n_rules++;
	snap_policy(t);
	return 0;

free_slot:
	slot_free(t, idx);
	return rc;
}

static uint32_t
locate_rule(const struct mask_table *t, const struct sl_rule *sr)
{
	uint64_t value[KEY_WORDS], mask[KEY_WORDS];
	struct mask_sub *sub;
	uint32_t prev, b;
	unsigned k;

	if (rule_words(t, sr, value, mask) < 0)
		return NIL;
	return tss_locate(t, &t->full, value, mask, sr->priority, &sub, &prev, &b, &k);
}

static int
mask_del(void *tbl, const struct sl_rule *sr, void **data)
{
	struct mask_table *t = tbl;
	struct mask_rule *r;
	uint32_t idx = locate_rule(t, sr);

	if (idx == NIL)
		return -ENOENT;
	r = rule_at(t, idx);
	if (data != NULL)
		*data = r->data;
	if (t->snap != NULL) {
		if (r->snap_pos != NIL) {
			t->snap->ent[r->snap_pos].idx = NIL;
			t->snap->n_dead++;
		} else {
			tss_remove(t, &t->delta, idx);
		}
	}
	tss_remove(t, &t->full, idx);
	slot_free(t, idx);
	t->n_rules--;
	snap_policy(t);
	return 0;
}

static void *
mask_find(const void *tbl, const struct sl_rule *sr)
{
	const struct mask_table *t = tbl;
	uint32_t idx = locate_rule(t, sr);

	return idx == NIL ? NULL : rule_at(t, idx)->data;
}

static int
mask_iterate(const void *tbl, sl_table_iter_fn fn, void *arg)
{
	const struct mask_table *t = tbl;
	struct sl_rule sr;

	for (uint32_t i = 0; i < t->n_slots; i++) {
		const struct mask_rule *r = rule_at(t, i);
		int rc;

		if (!rule_in_use(t, r))
			continue;
		memset(&sr, 0, sizeof(sr));
		memcpy(sr.value, r->value, t->key_size);
		memcpy(sr.mask, rule_mask(t, r), t->key_size);
		sr.priority = r->priority;
		sr.data = r->data;
		rc = fn(&sr, arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static uint64_t
tss_mem(const struct tss *s)
{
	uint64_t m = s->cap_subs * sizeof(s->subs[0]) + (s->map ? s->map_mask + 1 : 0) * 8;

	for (uint32_t i = 0; i < s->n_subs; i++) {
		const struct mask_sub *sub = s->subs[i];

		m += sizeof(*sub) + (uint64_t)(sub->bucket_mask + 1) * sizeof(struct mask_bucket) +
		     (uint64_t)(sub->live.cap + sub->gone.cap) * 4;
	}
	return m;
}

static void
mask_stats_read(const void *tbl, struct sl_table_stats *st)
{
	const struct mask_table *t = tbl;

	memset(st, 0, sizeof(*st));
	st->n_entries = t->n_rules;
	st->n_groups = t->full.n_subs;
	st->mem_bytes =
		sizeof(*t) +
		(uint64_t)SL_DIV_ROUND_UP(t->n_slots, CHUNK_SIZE) * CHUNK_SIZE * t->rule_size +
		tss_mem(&t->full) + tss_mem(&t->delta);
	if (t->snap != NULL)
		st->mem_bytes += (uint64_t)t->snap->n * sizeof(struct snap_ent);
	st->n_rebuilds = t->n_rebuilds;
	st->rebuild_pending = t->job != NULL;
}

/* Install a build the builder finished; 1 when the table changed. */
static int
mask_poll(void *tbl)
{
	struct mask_table *t = tbl;
	struct snap_job *j = t->job;

	if (j == NULL || !__atomic_load_n(&j->done, __ATOMIC_ACQUIRE))
		return 0;
	t->job = NULL;
	if (!snap_allowed(t)) {
		job_free(j);
		return 0;
	}
	job_install(t, j);
	snap_policy(t); /* changes made meanwhile may already call for the next build */
	return 1;
}

const struct sl_table_ops sl_table_mask_ops = {
	.name = "mask",
	.create = mask_create,
	.destroy = mask_destroy,
	.add = mask_add,
	.del = mask_del,
	.find = mask_find,
	.lookup_burst = mask_lookup_burst,
	.iterate = mask_iterate,
	.stats_read = mask_stats_read,
	.lookup_path = NULL,
	.poll = mask_poll,
};

/*
 * Control path: tuning and introspection (mask_priv.h).
 */

void
sl_mask_tuning_get(const void *impl, struct sl_mask_tuning *tu)
{
	*tu = ((const struct mask_table *)impl)->tune;
}

int
sl_mask_tuning_set(void *impl, const struct sl_mask_tuning *tu)
{
	struct mask_table *t = impl;

	if (tu->delta_div == 0 || tu->dead_div == 0)
		return -EINVAL;
	t->tune = *tu;
	t->backoff = 0;
	tss_pass_select(t, &t->full);
	tss_pass_select(t, &t->delta);
	snap_policy(t);
	return 0;
}

int
sl_mask_snapshot_build(void *impl)
{
	struct mask_table *t = impl;

	if (!t->eal || !t->tune.snap_enable)
		return -ENOTSUP;
	if (t->n_rules == 0) {
		job_abandon(t);
		snap_drop(t);
		return 0;
	}
	return snap_rebuild(t);
}

int
sl_mask_commit(void *impl)
{
	struct mask_table *t = impl;
	const struct sl_mask_tuning *tu = &t->tune;

	/* Only where the snapshot policy wants one and it is out of date. */
	if (!snap_allowed(t) || t->full.n_subs < tu->snap_min_subs)
		return 0;
	if (t->snap != NULL && t->delta.n_rules == 0 && t->snap->n_dead == 0)
		return 0;
	if (tu->build_sync) {
		if (!snap_suitable(t, tu->snap_max_odd)) {
			t->n_build_skip++;
			return 0;
		}
		return snap_rebuild(t);
	}
	t->backoff = 0;
	snap_request(t);
	return 0;
}

int
sl_mask_poll(void *impl)
{
	return mask_poll(impl);
}

void
sl_mask_info_get(const void *impl, struct sl_mask_info *info)
{
	const struct mask_table *t = impl;

	memset(info, 0, sizeof(*info));
	info->eal = t->eal;
	info->snap = t->snap != NULL;
	info->n_rules = t->n_rules;
	info->n_subs = t->full.n_subs;
	if (t->snap != NULL) {
		info->snap_rules = t->snap->n;
		info->snap_dead = t->snap->n_dead;
		info->snap_fields = t->snap->n_fields;
	}
	info->delta_rules = t->delta.n_rules;
	info->delta_subs = t->delta.n_subs;
	info->n_rebuilds = t->n_rebuilds;
	info->n_build_fail = t->n_build_fail;
	info->n_build_skip = t->n_build_skip;
	info->build_pending = t->job != NULL;
}
