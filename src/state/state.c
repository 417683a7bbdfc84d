/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * State tables: a two-choice bucketised hash with inline entries and a
 * single writer.
 *
 * Fast path (the worker, the only writer): sl_state_lookup_burst,
 * sl_state_set_pkt, sl_state_service.  Control path: create/destroy,
 * sl_state_ctl_post (single producer of the command ring) and
 * sl_state_dump (seqlock reader).
 *
 * A bucket is one cache line (keys of 8 bytes: 3 ways) or a few (wider
 * keys), laid out as arrays: keys[W][key_size], state[W], dl[W], fl[W],
 * then a header word.  Everything a lookup needs is in the bucket: the
 * key (compared in full, no signatures), the state, and the timeout as a
 * 32-bit millisecond deadline (dl) that a hit moves on by the idle timeout
 * kept in fl.  So a lookup reads one line, and a hit with an idle timeout
 * writes that same line.  The rest of an entry (rollback, configured
 * timeouts, 64-bit deadlines) is "cold", in a separate array indexed by
 * slot, read only when an entry is set, expires, is dumped, or is "slow"
 * (timeouts too long for 32-bit deadlines, or idle and hard together).
 *
 * A key lives in its primary bucket b1 or, when that was full, in its
 * secondary b2; b1's header counts its keys that live in b2 (ovf), so a
 * lookup reads b2 only when that count is not 0.
 *
 * The header word: bits 0..23 are the bucket's sequence count (odd while
 * the writer changes the bucket: a dump or a peek reader retries), bits
 * 24..31 the ovf count (sticky at 255).  A hit's refresh of dl and of a
 * slow entry's `last` is not bracketed by the sequence count: readers load
 * those words whole.
 */
#include "state.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

/* fl: a way's flags and idle timeout. */
#define F_LIVE (1u << 31)  /* the way holds a key */
#define F_SLOW (1u << 30)  /* timeouts in the cold part: every hit reads it */
#define F_DL (1u << 29)    /* dl is a deadline (else: no timeout) */
#define F_RB0 (1u << 28)   /* rollback state is 0 */
#define F_IDLE 0x0fffffffu /* idle timeout in ms (0: none); a hit sets dl = now + it */
/* Longest timeout kept in dl: far below 2^31 ms, so that serial comparisons hold. */
#define FAST_MAX_MS F_IDLE

#define HDR_SEQ 0x00ffffffu
#define HDR_OVF_ONE (1u << 24)
#define HDR_OVF_MAX 255u

#define WAYS_MAX 4
/* Slots per unit of capacity, in 1/8ths (3-way buckets and a short cuckoo path). */
#define SLOTS_PER_ENTRY_8THS 10

/*
 * Bucket access.  The geometry (key size, ways, bucket bytes) is passed by
 * value so that the hot path, specialised for 8-byte keys (GEO8), works
 * with constants: the loops over ways and key words unroll and the offsets
 * fold (measured: generic code cost 8 to 17 more cycles per packet).
 */
struct geo {
	unsigned ks, ways, bsize;
};

#define GEO(s) ((struct geo){(s)->key_size, (s)->ways, (s)->bucket_size})
#define GEO8 ((struct geo){8, 3, 64})

struct st_cold {
	uint32_t rollback;
	uint32_t idle_ms; /* as configured */
	uint32_t hard_ms;
	uint32_t pad;
	uint64_t hard_at; /* ms at which the hard timeout fires, 0 = none */
	uint64_t last;    /* ms of the last hit or set (slow entries only) */
};

struct sl_state {
	/* Read-mostly part. */
	struct sl_key_layout lookup;
	struct sl_key_layout update;
	unsigned key_size;
	unsigned ways;        /* W: ways per bucket, 1..WAYS_MAX */
	unsigned bucket_size; /* bytes per bucket, a multiple of 64 */
	bool same_scope;      /* update scope == lookup scope: lookups find the update slot */
	uint32_t n_buckets;
	size_t map_size; /* bytes mapped for buckets + cold entries */
	uint32_t capacity;
	uint64_t tsc_hz;
	uint64_t ticks_per_ms; /* ceil(tsc_hz / 1000) */
	uint8_t *bkts;
	struct st_cold *cold; /* n_buckets * W, slot b * W + w */
	size_t footprint;
	uint32_t sweep;     /* housekeeping calls */
	uint32_t sweep_b;   /* next bucket the housekeeping checks */
	uint32_t gen;       /* bumped whenever an entry leaves or changes slot (hints) */
	uint64_t now_tsc;   /* writer: the last `now` converted ... */
	uint64_t now_ms;    /* ... to milliseconds (one division per burst, not per packet) */
	const void *writer; /* the worker that claimed the table (atomic), NULL: none yet */
	struct sl_state_stats st SL_CACHE_ALIGNED; /* writer-only counters */
	/* Command ring: the control thread produces, the worker consumes. */
	uint32_t ring_head SL_CACHE_ALIGNED; /* next slot to fill (producer) */
	uint32_t ring_tail SL_CACHE_ALIGNED; /* next slot to apply (consumer) */
	struct sl_state_cmd ring[SL_STATE_RING];
};

static int __attribute__((format(printf, 4, 5)))
fail(char *err, size_t size, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && size > 0) {
		va_start(ap, fmt);
		vsnprintf(err, size, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* Ways and bucket bytes for a key size: the fewest lines that give 3 ways or more. */
static void
bucket_shape(unsigned key_size, unsigned *ways, unsigned *bytes)
{
	unsigned rec = key_size + 3 * sizeof(uint32_t);

	for (unsigned lines = 1;; lines++) {
		unsigned w = (lines * 64 - (unsigned)sizeof(uint32_t)) / rec;
		if (w >= 3) {
			*ways = SL_MIN(w, (unsigned)WAYS_MAX);
			*bytes = lines * 64;
			return;
		}
	}
}

static uint32_t
n_buckets_for(uint32_t capacity, unsigned ways)
{
	uint64_t slots = SL_DIV_ROUND_UP((uint64_t)capacity * SLOTS_PER_ENTRY_8THS, 8);

	return (uint32_t)SL_MAX(SL_DIV_ROUND_UP(slots, ways), 1u);
}

size_t
sl_state_footprint_for(uint32_t capacity, unsigned key_size)
{
	unsigned ways, bytes;
	size_t nb;

	bucket_shape(key_size, &ways, &bytes);
	nb = n_buckets_for(capacity, ways);
	return sizeof(struct sl_state) + nb * bytes + nb * ways * sizeof(struct st_cold);
}

int
sl_state_create(const struct sl_state_params *p, struct sl_state **out, char *err, size_t err_size)
{
	const struct sl_field *upd = p->n_update ? p->update : p->lookup;
	unsigned n_upd = p->n_update ? p->n_update : p->n_lookup;
	uint32_t cap = p->capacity ? p->capacity : SL_STATE_CAPACITY_DEFAULT;
	struct sl_state *s;
	char name[48];
	int rc;

	*out = NULL;
	if (p->n_lookup == 0)
		return fail(err, err_size, -EINVAL, "a state table needs a lookup scope");
	if (p->n_lookup > SL_STATE_FIELDS_MAX || n_upd > SL_STATE_FIELDS_MAX)
		return fail(err, err_size, -EINVAL, "a scope has at most %d fields (got %u)",
			    SL_STATE_FIELDS_MAX, SL_MAX(p->n_lookup, n_upd));
	if (n_upd != p->n_lookup)
		return fail(err, err_size, -EINVAL,
			    "lookup scope has %u fields, update scope %u: they must pair up",
			    p->n_lookup, n_upd);
	if (cap > SL_STATE_CAPACITY_MAX)
		return fail(err, err_size, -EINVAL, "state table size %u exceeds %u", cap,
			    SL_STATE_CAPACITY_MAX);
	if (p->tsc_hz == 0)
		return fail(err, err_size, -EINVAL, "tsc_hz is 0");
	for (unsigned i = 0; i < p->n_lookup; i++) {
		const struct sl_field *a = &p->lookup[i], *b = &upd[i];

		if (a->id >= SL_FIELD__MAX || b->id >= SL_FIELD__MAX)
			return fail(err, err_size, -EINVAL, "scope field %u: unknown field id", i);
		if (a->id == SL_FIELD_STATE || b->id == SL_FIELD_STATE)
			return fail(err, err_size, -EINVAL, "'state' cannot be part of a scope");
		if (sl_field_bits(a) != sl_field_bits(b)) {
			char an[48];
			sl_field_format(a, an, sizeof(an));
			sl_field_format(b, name, sizeof(name));
			return fail(err, err_size, -EINVAL,
				    "scope field %u: lookup %s (%u bits) and update %s (%u bits) "
				    "differ in width",
				    i + 1, an, sl_field_bits(a), name, sl_field_bits(b));
		}
		for (unsigned k = 0; k < i; k++)
			if (sl_field_equal(&p->lookup[k], a) || sl_field_equal(&upd[k], b)) {
				sl_field_format(sl_field_equal(&p->lookup[k], a) ? a : b, name,
						sizeof(name));
				return fail(err, err_size, -EINVAL, "duplicate field %s in a scope",
					    name);
			}
	}
	s = aligned_alloc(64, (sizeof(*s) + 63) & ~(size_t)63);
	if (s == NULL)
		return fail(err, err_size, -ENOMEM, "out of memory");
	memset(s, 0, sizeof(*s));
	if ((rc = sl_key_layout_init(&s->lookup, p->lookup, p->n_lookup)) < 0 ||
	    (rc = sl_key_layout_init(&s->update, upd, n_upd)) < 0 ||
	    s->lookup.key_size > SL_STATE_KEY_MAX) {
		free(s);
		return fail(err, err_size, rc < 0 ? rc : -E2BIG,
			    "scope does not fit a key of %d bytes", SL_STATE_KEY_MAX);
	}
	s->key_size = s->lookup.key_size;
	bucket_shape(s->key_size, &s->ways, &s->bucket_size);
	SL_VERIFY(s->ways * (s->key_size + 12) + 4 <= s->bucket_size && s->ways <= WAYS_MAX);
	SL_VERIFY(s->key_size != 8 || (s->ways == GEO8.ways && s->bucket_size == GEO8.bsize));
	s->capacity = cap;
	s->n_buckets = n_buckets_for(cap, s->ways);
	s->tsc_hz = p->tsc_hz;
	s->ticks_per_ms = (p->tsc_hz + 999) / 1000;
	s->now_tsc = 0;
	s->now_ms = 0;
	/*
	 * One anonymous mapping for buckets and cold entries, with transparent
	 * huge pages requested: lookups land anywhere in it, and 4 KB pages
	 * would cost a TLB miss per packet once the table outgrows the TLB.
	 */
	size_t bkt_bytes = (size_t)s->n_buckets * s->bucket_size;
	s->map_size = bkt_bytes + (size_t)s->n_buckets * s->ways * sizeof(struct st_cold);
	void *mem =
		mmap(NULL, s->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		s->map_size = 0;
		sl_state_destroy(s);
		return fail(err, err_size, -ENOMEM, "out of memory for %u state entries", cap);
	}
	if (s->map_size >= (2u << 20))
		madvise(mem, s->map_size, MADV_HUGEPAGE); /* best effort */
	/* Fault every page in now, on the control thread, never on the datapath. */
	memset(mem, 0, s->map_size);
	s->bkts = mem;
	s->cold = (struct st_cold *)((uint8_t *)mem + bkt_bytes);
	s->same_scope = true;
	for (unsigned i = 0; i < s->lookup.n_fields; i++)
		s->same_scope &= sl_field_equal(&s->lookup.fields[i], &s->update.fields[i]);
	s->footprint = sl_state_footprint_for(cap, s->key_size);
	s->st.capacity = cap;
	s->st.bytes = s->footprint;
	*out = s;
	return 0;
}

void
sl_state_destroy(struct sl_state *s)
{
	if (s == NULL)
		return;
	if (s->map_size)
		munmap(s->bkts, s->map_size);
	free(s);
}

const struct sl_key_layout *
sl_state_layout(const struct sl_state *s, bool update)
{
	return update ? &s->update : &s->lookup;
}

uint32_t
sl_state_capacity(const struct sl_state *s)
{
	return s->capacity;
}

size_t
sl_state_footprint(const struct sl_state *s)
{
	return s->footprint;
}

#define SL_ALWAYS_INLINE_GEO inline __attribute__((always_inline)) /* GEO8 must fold */

static SL_ALWAYS_INLINE_GEO uint8_t *
g_bkt(const struct sl_state *s, struct geo g, uint32_t b)
{
	return s->bkts + (size_t)b * g.bsize;
}

static SL_ALWAYS_INLINE_GEO uint8_t *
g_key(struct geo g, uint8_t *bk, unsigned w)
{
	return bk + w * g.ks;
}

static SL_ALWAYS_INLINE_GEO uint32_t *
g_state(struct geo g, uint8_t *bk)
{
	return (uint32_t *)(bk + g.ways * g.ks);
}

static SL_ALWAYS_INLINE_GEO uint32_t *
g_dl(struct geo g, uint8_t *bk)
{
	return (uint32_t *)(bk + g.ways * g.ks + 4 * g.ways);
}

static SL_ALWAYS_INLINE_GEO uint32_t *
g_fl(struct geo g, uint8_t *bk)
{
	return (uint32_t *)(bk + g.ways * g.ks + 8 * g.ways);
}

static SL_ALWAYS_INLINE_GEO uint32_t *
g_hdr(struct geo g, uint8_t *bk)
{
	return (uint32_t *)(bk + g.ways * g.ks + 12 * g.ways);
}

static inline uint8_t *
bkt(const struct sl_state *s, uint32_t b)
{
	return g_bkt(s, GEO(s), b);
}

static inline uint8_t *
b_key(const struct sl_state *s, uint8_t *bk, unsigned w)
{
	return g_key(GEO(s), bk, w);
}

static inline uint32_t *
b_state(const struct sl_state *s, uint8_t *bk)
{
	return g_state(GEO(s), bk);
}

static inline uint32_t *
b_dl(const struct sl_state *s, uint8_t *bk)
{
	return g_dl(GEO(s), bk);
}

static inline uint32_t *
b_fl(const struct sl_state *s, uint8_t *bk)
{
	return g_fl(GEO(s), bk);
}

static inline uint32_t *
b_hdr(const struct sl_state *s, uint8_t *bk)
{
	return g_hdr(GEO(s), bk);
}

static inline struct st_cold *
cold_at(const struct sl_state *s, uint32_t b, unsigned w)
{
	return &s->cold[(size_t)b * s->ways + w];
}

static SL_ALWAYS_INLINE_GEO void
bkt_prefetch(const struct sl_state *s, struct geo g, uint32_t b)
{
	const uint8_t *bk = g_bkt(s, g, b);

	for (unsigned o = 0; o < g.bsize; o += 64)
		sl_prefetch0(bk + o);
}

/* A slot (hint) names bucket and way: ways are at most 4. */
#define SLOT(b, w) (((b) << 2) | (w))
#define SLOT_B(slot) ((slot) >> 2)
#define SLOT_W(slot) ((slot)&3u)

static SL_ALWAYS_INLINE_GEO uint64_t
key_hash(const uint8_t *key, unsigned size)
{
	uint64_t h = 0x84222325cbf29ce4ull;

	for (unsigned i = 0; i < size; i += 8) {
		uint64_t w;
		memcpy(&w, key + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return h * 0xbf58476d1ce4e5b9ull;
}

/* The key's primary and secondary buckets (distinct when there are two or more). */
static SL_ALWAYS_INLINE_GEO void
key_place(const struct sl_state *s, uint64_t h, uint32_t *b1, uint32_t *b2)
{
	uint32_t n = s->n_buckets;

	/* Multiply-shift range reduction: any bucket count, no division. */
	*b1 = (uint32_t)(((uint64_t)(uint32_t)h * n) >> 32);
	*b2 = (uint32_t)(((h >> 32) * n) >> 32);
	if (*b2 == *b1)
		*b2 = *b1 + 1 == n ? 0 : *b1 + 1;
}

static SL_ALWAYS_INLINE_GEO bool
key_equal(const uint8_t *a, const uint8_t *b, unsigned size)
{
	uint64_t diff = 0;

	for (unsigned i = 0; i < size; i += 8) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		diff |= x ^ y;
	}
	return diff == 0;
}

static inline unsigned
hdr_ovf(uint32_t hdr)
{
	return hdr >> 24;
}

/*
 * Bit w set when way w of bucket @bk holds @key.  No early exit: which way
 * holds a key is random, and a branch per way mispredicts about once per
 * search (measured: that, not the cache lines, was most of a search).
 */
static SL_ALWAYS_INLINE_GEO uint32_t
g_match(struct geo g, uint8_t *bk, const uint8_t *key)
{
	const uint32_t *fl = g_fl(g, bk);
	uint32_t m = 0;

#if defined(__AVX2__) && !defined(SL_STATE_SCALAR)
	/*
	 * GEO8: the three keys are the first 24 bytes, fl the words at 48..59
	 * (F_LIVE is their sign bit): one compare and two movemasks.  The
	 * fourth lanes (state words, the header) are masked off.
	 */
	if (g.ks == 8 && g.ways == 3 && g.bsize == 64) {
		uint64_t k;
		memcpy(&k, key, 8);
		__m256i eq = _mm256_cmpeq_epi64(_mm256_loadu_si256((const __m256i *)bk),
						_mm256_set1_epi64x((long long)k));
		uint32_t km = (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(eq));
		uint32_t lm = (uint32_t)_mm_movemask_ps(
			_mm_castsi128_ps(_mm_loadu_si128((const __m128i *)fl)));
		return km & lm & 7u;
	}
#endif
	for (unsigned w = 0; w < g.ways; w++)
		m |= ((fl[w] >> 31) & (uint32_t)key_equal(g_key(g, bk, w), key, g.ks)) << w;
	return m;
}

/* The way of bucket @b holding @key, or -1.  Writer. */
static SL_ALWAYS_INLINE_GEO int
g_find(const struct sl_state *s, struct geo g, uint32_t b, const uint8_t *key)
{
	uint32_t m = g_match(g, g_bkt(s, g, b), key);

	return m ? __builtin_ctz(m) : -1;
}

static inline int
bucket_find(const struct sl_state *s, uint32_t b, const uint8_t *key)
{
	return g_find(s, GEO(s), b, key);
}

/* The slot (SLOT) holding @key, or -1.  Writer. */
static inline int64_t
find_slot(const struct sl_state *s, const uint8_t *key, uint32_t *b1, uint32_t *b2)
{
	int w;

	key_place(s, key_hash(key, s->key_size), b1, b2);
	if ((w = bucket_find(s, *b1, key)) >= 0)
		return SLOT(*b1, (uint32_t)w);
	if (hdr_ovf(*b_hdr(s, bkt(s, *b1))) == 0)
		return -1;
	if ((w = bucket_find(s, *b2, key)) >= 0)
		return SLOT(*b2, (uint32_t)w);
	return -1;
}

/* Seqlock writer side: readers retry while the count is odd or changed. */
static inline void
write_begin(const struct sl_state *s, uint8_t *bk)
{
	uint32_t *h = b_hdr(s, bk), v = *h;

	__atomic_store_n(h, (v & ~HDR_SEQ) | ((v + 1) & HDR_SEQ), __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void
write_end(const struct sl_state *s, uint8_t *bk)
{
	uint32_t *h = b_hdr(s, bk), v = *h;

	__atomic_store_n(h, (v & ~HDR_SEQ) | ((v + 1) & HDR_SEQ), __ATOMIC_RELEASE);
}

/* Count (+1) or uncount (-1) a key of primary bucket @b1 living in its secondary. */
static inline void
ovf_add(const struct sl_state *s, uint32_t b1, int d)
{
	uint32_t *h = b_hdr(s, bkt(s, b1)), v = *h;
	unsigned n = hdr_ovf(v);

	if (n == HDR_OVF_MAX)
		return; /* sticky: b2 is always searched */
	n = d > 0 ? n + 1 : n - 1;
	__atomic_store_n(h, (v & HDR_SEQ) | (n << 24), __ATOMIC_RELEASE);
}

static inline uint64_t
to_ms(const struct sl_state *s, uint64_t now)
{
	return now / s->ticks_per_ms;
}

/* Writer: @now in ms, one division per distinct `now` (a burst's). */
static inline uint64_t
writer_ms(struct sl_state *s, uint64_t now)
{
	if (now != s->now_tsc) {
		s->now_tsc = now;
		s->now_ms = to_ms(s, now);
	}
	return s->now_ms;
}

/*
 * Whether a way's timeout passed at @now (ms).  Readers pass the words they
 * copied; the cold part is read only for slow entries.
 */
static inline bool
way_expired(uint32_t fl, uint32_t dl, const struct st_cold *c, uint64_t now)
{
	if (sl_unlikely(fl & F_SLOW))
		return (c->hard_at != 0 && now >= c->hard_at) ||
		       (c->idle_ms != 0 && now - c->last >= c->idle_ms);
	return (fl & F_DL) && (int32_t)(dl - (uint32_t)now) <= 0;
}

static void
slot_free(struct sl_state *s, uint32_t b, unsigned w)
{
	uint8_t *bk = bkt(s, b);
	uint32_t b1, b2;

	key_place(s, key_hash(b_key(s, bk, w), s->key_size), &b1, &b2);
	write_begin(s, bk);
	b_fl(s, bk)[w] = 0;
	write_end(s, bk);
	if (b != b1)
		ovf_add(s, b1, -1);
	s->st.n_entries--;
	s->gen++;
}

/*
 * A timeout passed: the flow goes to its rollback state with no timeouts
 * (the entry leaves when that is 0).  Returns the state now in force.
 */
static uint32_t
entry_roll_back(struct sl_state *s, uint32_t b, unsigned w)
{
	uint8_t *bk = bkt(s, b);
	struct st_cold *c = cold_at(s, b, w);
	uint32_t rb = c->rollback;

	s->st.expired++;
	if (rb == 0) {
		slot_free(s, b, w);
		s->st.deletes++;
		return 0;
	}
	write_begin(s, bk);
	b_state(s, bk)[w] = rb;
	b_fl(s, bk)[w] = F_LIVE | F_RB0;
	b_dl(s, bk)[w] = 0;
	c->rollback = 0;
	c->idle_ms = c->hard_ms = 0;
	c->hard_at = 0;
	write_end(s, bk);
	return rb;
}

/* Write a set's state and timeouts into a way (under the bucket's sequence count). */
static void
way_fill(struct sl_state *s, uint32_t b, unsigned w, const struct sl_state_set *a, uint64_t now)
{
	uint8_t *bk = bkt(s, b);
	struct st_cold *c = cold_at(s, b, w);
	bool slow =
		(a->idle_ms && a->hard_ms) || a->idle_ms > FAST_MAX_MS || a->hard_ms > FAST_MAX_MS;
	uint32_t fl = F_LIVE | (a->rollback == 0 ? F_RB0 : 0), dl = 0;

	if (slow)
		fl |= F_SLOW;
	else if (a->idle_ms) {
		fl |= F_DL | a->idle_ms;
		dl = (uint32_t)now + a->idle_ms;
	} else if (a->hard_ms) {
		fl |= F_DL;
		dl = (uint32_t)now + a->hard_ms;
	}
	b_state(s, bk)[w] = a->state;
	b_dl(s, bk)[w] = dl;
	b_fl(s, bk)[w] = fl;
	c->rollback = a->rollback;
	c->idle_ms = a->idle_ms;
	c->hard_ms = a->hard_ms;
	c->hard_at = a->hard_ms ? now + a->hard_ms : 0;
	c->last = now;
}

/*
 * set_state on an existing entry.  When the set changes nothing but the
 * idle deadline (the same state, rollback 0, the same idle timeout and no
 * hard one: a flow refreshing itself on every packet), only dl is written,
 * in the bucket line the lookup just read: no cold line, no sequence count.
 */
static SL_ALWAYS_INLINE_GEO void
g_way_set(struct sl_state *s, struct geo g, uint32_t b, unsigned w, const struct sl_state_set *a,
	  uint64_t now)
{
	uint8_t *bk = g_bkt(s, g, b);
	uint32_t fl = g_fl(g, bk)[w];

	s->st.sets++;
	if (g_state(g, bk)[w] == a->state && a->rollback == 0 && a->hard_ms == 0 &&
	    (fl & (F_SLOW | F_RB0)) == F_RB0 && a->idle_ms <= FAST_MAX_MS &&
	    (fl & F_IDLE) == a->idle_ms && ((fl & F_DL) != 0) == (a->idle_ms != 0)) {
		if (a->idle_ms)
			__atomic_store_n(&g_dl(g, bk)[w], (uint32_t)now + a->idle_ms,
					 __ATOMIC_RELAXED);
		return;
	}
	write_begin(s, bk);
	way_fill(s, b, w, a, now);
	write_end(s, bk);
}

static void
way_set(struct sl_state *s, uint32_t b, unsigned w, const struct sl_state_set *a, uint64_t now)
{
	g_way_set(s, GEO(s), b, w, a, now);
}

static inline int
bucket_free_way(const struct sl_state *s, uint32_t b)
{
	const uint32_t *fl = b_fl(s, bkt(s, b));

	for (unsigned w = 0; w < s->ways; w++)
		if (!(fl[w] & F_LIVE))
			return (int)w;
	return -1;
}

/*
 * Move the entry of way @w of bucket @from to free way @tw of bucket @to
 * (its other bucket).  It is written at its new place before it leaves the
 * old one, and b1's ovf count covers it before it leaves b1, so a lookup
 * finds it throughout; a dump running at the same time may see it twice or
 * not at all (dumps are per-bucket consistent, not snapshots).
 */
static void
way_move(struct sl_state *s, uint32_t from, unsigned w, uint32_t to, unsigned tw, uint32_t b1)
{
	uint8_t *fb = bkt(s, from), *tb = bkt(s, to);

	write_begin(s, tb);
	memcpy(b_key(s, tb, tw), b_key(s, fb, w), s->key_size);
	b_state(s, tb)[tw] = b_state(s, fb)[w];
	b_dl(s, tb)[tw] = b_dl(s, fb)[w];
	b_fl(s, tb)[tw] = b_fl(s, fb)[w];
	*cold_at(s, to, tw) = *cold_at(s, from, w);
	write_end(s, tb);
	if (to != b1)
		ovf_add(s, b1, +1);
	write_begin(s, fb);
	b_fl(s, fb)[w] = 0;
	write_end(s, fb);
	if (from != b1)
		ovf_add(s, b1, -1);
	s->gen++;
}

/*
 * Both buckets of a new key are full: make a way of the full bucket @b free
 * by moving one of its entries to its other bucket, making room there
 * first (recursively, @depth more levels) if needed.  Returns the way
 * freed, or -1.
 */
static int
bucket_make_room(struct sl_state *s, uint32_t b, unsigned depth)
{
	for (unsigned pass = 0; pass <= depth; pass++)
		for (unsigned w = 0; w < s->ways; w++) {
			uint32_t o1, o2, alt;
			int tw;

			key_place(s, key_hash(b_key(s, bkt(s, b), w), s->key_size), &o1, &o2);
			alt = o1 == b ? o2 : o1;
			if (alt == b)
				continue;
			tw = bucket_free_way(s, alt);
			if (tw < 0 && pass > 0 && bucket_make_room(s, alt, pass - 1) >= 0) {
				/*
				 * The moves may have passed through @b itself: look
				 * again rather than trust what was read before.
				 */
				if ((tw = bucket_free_way(s, b)) >= 0)
					return tw;
				key_place(s, key_hash(b_key(s, bkt(s, b), w), s->key_size), &o1,
					  &o2);
				alt = o1 == b ? o2 : o1;
				tw = alt == b ? -1 : bucket_free_way(s, alt);
			}
			if (tw < 0)
				continue;
			way_move(s, b, w, alt, (unsigned)tw, o1);
			return (int)w;
		}
	return -1;
}

/*
 * A way of @b whose timeout passed and whose rollback state is 0, so that
 * it stands for nothing any more (reusable), or -1.  An expired entry with
 * a rollback state is a live flow in that state and stays.
 */
static int
bucket_expired_way(const struct sl_state *s, uint32_t b, uint64_t now)
{
	uint8_t *bk = bkt(s, b);

	for (unsigned w = 0; w < s->ways; w++) {
		uint32_t fl = b_fl(s, bk)[w];
		const struct st_cold *c = cold_at(s, b, w);
		if ((fl & F_LIVE) && c->rollback == 0 && way_expired(fl, b_dl(s, bk)[w], c, now))
			return (int)w;
	}
	return -1;
}

static int
set_key_ms(struct sl_state *s, const uint8_t *key, const struct sl_state_set *a, uint64_t now)
{
	uint32_t b1, b2, b;
	int64_t slot = find_slot(s, key, &b1, &b2);
	bool remove = a->state == 0 && a->rollback == 0;
	uint8_t *bk;
	int w = -1;

	if (slot >= 0) {
		if (remove) {
			slot_free(s, SLOT_B((uint32_t)slot), SLOT_W((uint32_t)slot));
			s->st.deletes++;
			return 0;
		}
		way_set(s, SLOT_B((uint32_t)slot), SLOT_W((uint32_t)slot), a, now);
		return 0;
	}
	if (remove)
		return 0; /* state 0 is what a missing entry means already */
	b = b1;
	if (s->st.n_entries < s->capacity) {
		/* The primary bucket first (one-line lookups), then the secondary, then cuckoo moves. */
		if ((w = bucket_free_way(s, b1)) < 0 && (w = bucket_free_way(s, b2)) >= 0)
			b = b2;
		if (w < 0 && (w = bucket_make_room(s, b1, 2)) < 0 &&
		    (w = bucket_make_room(s, b2, 2)) >= 0)
			b = b2;
	}
	if (w < 0) {
		/* Full: only an entry whose timeout passed may make room. */
		if ((w = bucket_expired_way(s, b1, now)) < 0 &&
		    (w = bucket_expired_way(s, b2, now)) >= 0)
			b = b2;
		if (w < 0) {
			s->st.refused++;
			return -ENOSPC;
		}
		s->st.evicted++;
		s->st.expired++;
		slot_free(s, b, (unsigned)w); /* keeps the ovf count right */
	}
	bk = bkt(s, b);
	write_begin(s, bk);
	memcpy(b_key(s, bk, (unsigned)w), key, s->key_size);
	way_fill(s, b, (unsigned)w, a, now);
	write_end(s, bk);
	if (b != b1)
		ovf_add(s, b1, +1);
	s->st.n_entries++;
	s->st.inserts++;
	return 0;
}

int
sl_state_set_key(struct sl_state *s, const uint8_t *key, const struct sl_state_set *a, uint64_t now)
{
	return set_key_ms(s, key, a, writer_ms(s, now));
}

int
sl_state_set_pkt(struct sl_state *s, struct sl_pkt *p, const struct sl_state_set *a, uint64_t now)
{
	uint8_t key[SL_KEY_MAX] __attribute__((aligned(8)));
	uint32_t hint = p->state_slot;
	uint64_t ms = writer_ms(s, now);

	/*
	 * The lookup stage left the slot of this packet's update-scope entry.
	 * It holds while (a) it came from this table, (b) no entry of the
	 * table left or moved since (generation), and (c) the packet's headers
	 * were not written since (sl_pkt_field_write and sl_pkt_reparse drop
	 * it): then the update key is the one the stage saw, in that slot, and
	 * neither extraction nor search is needed.
	 */
	if (hint != UINT32_MAX && p->state_owner == s && p->state_gen == s->gen &&
	    (a->state != 0 || a->rollback != 0)) {
		SL_ASSERT(b_fl(s, bkt(s, SLOT_B(hint)))[SLOT_W(hint)] & F_LIVE);
		if (s->key_size == 8)
			g_way_set(s, GEO8, SLOT_B(hint), SLOT_W(hint), a, ms);
		else
			way_set(s, SLOT_B(hint), SLOT_W(hint), a, ms);
		return 0;
	}
	sl_key_extract(&s->update, p, key);
	return set_key_ms(s, key, a, ms);
}

int
sl_state_del_key(struct sl_state *s, const uint8_t *key)
{
	uint32_t b1, b2;
	int64_t slot = find_slot(s, key, &b1, &b2);

	if (slot < 0)
		return -ENOENT;
	slot_free(s, SLOT_B((uint32_t)slot), SLOT_W((uint32_t)slot));
	s->st.deletes++;
	return 0;
}

void
sl_state_clear(struct sl_state *s)
{
	for (uint32_t b = 0; b < s->n_buckets; b++)
		for (unsigned w = 0; w < s->ways; w++)
			if (b_fl(s, bkt(s, b))[w] & F_LIVE) {
				slot_free(s, b, w);
				s->st.deletes++;
			}
}

uint32_t
sl_state_get_key(const struct sl_state *s, const uint8_t *key, uint64_t now)
{
	uint32_t b1, b2;
	int64_t slot = find_slot(s, key, &b1, &b2);
	uint32_t b, fl;
	unsigned w;
	uint8_t *bk;

	if (slot < 0)
		return 0;
	b = SLOT_B((uint32_t)slot);
	w = SLOT_W((uint32_t)slot);
	bk = bkt(s, b);
	fl = b_fl(s, bk)[w];
	return way_expired(fl, b_dl(s, bk)[w], cold_at(s, b, w), to_ms(s, now))
		       ? cold_at(s, b, w)->rollback
		       : b_state(s, bk)[w];
}

/*
 * Staged search of one key per lane.  Stage 1 hashes and prefetches the
 * primary buckets; stage 2 searches them, and for the lanes that did not
 * find their key where the primary's ovf count says some key of it lives
 * in its secondary, prefetches that; stage 3 (probe_b2) searches those.
 * A miss in a bucket with no overflow, the common case, is decided by one
 * line.
 */
struct probe {
	uint32_t b1[SL_BURST_MAX], b2[SL_BURST_MAX];
	int64_t slot[SL_BURST_MAX]; /* SLOT or -1 */
	uint64_t second;            /* lanes still to search in b2 */
};

static SL_ALWAYS_INLINE_GEO void
probe_hash(const struct sl_state *s, struct geo g, struct probe *pr, uint64_t lanes,
	   uint8_t (*keys)[SL_KEY_MAX])
{
	unsigned i;

	SL_FOR_EACH_LANE (i, lanes) {
		key_place(s, key_hash(keys[i], g.ks), &pr->b1[i], &pr->b2[i]);
		bkt_prefetch(s, g, pr->b1[i]);
	}
}

static SL_ALWAYS_INLINE_GEO void
probe_b1(const struct sl_state *s, struct geo g, struct probe *pr, uint64_t lanes,
	 uint8_t (*keys)[SL_KEY_MAX])
{
	unsigned i;

	pr->second = 0;
	SL_FOR_EACH_LANE (i, lanes) {
		uint8_t *bk = g_bkt(s, g, pr->b1[i]);
		uint32_t m = g_match(g, bk, keys[i]);
		uint64_t again = (m == 0) & (hdr_ovf(*g_hdr(g, bk)) != 0);

		/* Without branches on the outcome: a lane that needs no second bucket prefetches its first again. */
		pr->slot[i] = m ? (int64_t)SLOT(pr->b1[i], (uint32_t)__builtin_ctz(m)) : -1;
		pr->second |= again << i;
		bkt_prefetch(s, g, again ? pr->b2[i] : pr->b1[i]);
	}
}

static SL_ALWAYS_INLINE_GEO void
probe_b2(const struct sl_state *s, struct geo g, struct probe *pr, uint8_t (*keys)[SL_KEY_MAX])
{
	unsigned i;

	SL_FOR_EACH_LANE (i, pr->second) {
		int w = g_find(s, g, pr->b2[i], keys[i]);

		pr->slot[i] = w >= 0 ? (int64_t)SLOT(pr->b2[i], (uint32_t)w) : -1;
	}
}

/*
 * The slot holding lane @i's key, or -1.  The answer was found before
 * earlier lanes of this burst ran: one of them may have expired the entry
 * (the same key twice in a burst), so it is checked again.  Lookups never
 * insert or move entries, so a key that was not found is still absent.
 */
static SL_ALWAYS_INLINE_GEO int64_t
probe_resolve(const struct sl_state *s, struct geo g, const struct probe *pr, unsigned i,
	      const uint8_t *key)
{
	int64_t c = pr->slot[i];
	uint8_t *bk;
	unsigned w;

	if (c < 0)
		return -1;
	bk = g_bkt(s, g, SLOT_B((uint32_t)c));
	w = SLOT_W((uint32_t)c);
	return (g_fl(g, bk)[w] & F_LIVE) && key_equal(g_key(g, bk, w), key, g.ks) ? c : -1;
}

static SL_ALWAYS_INLINE_GEO void
lookup_burst(struct sl_state *s, struct geo g, struct sl_pkt *pkts, uint64_t lanes, uint64_t now,
	     uint8_t (*keys)[SL_KEY_MAX])
{
	struct probe lk, up;
	uint8_t ukeys[SL_BURST_MAX][SL_KEY_MAX] __attribute__((aligned(8)));
	bool both = !s->same_scope;
	uint64_t ms = writer_ms(s, now);
	unsigned i;

	up.second = 0;
	/*
	 * When the scopes differ (MAC learning: lookup dl_dst, update dl_src),
	 * most packets will set_state their update key, so its slot is found
	 * here too, in the same stages, and left as the packet's hint: the
	 * misses of both searches overlap.
	 *
	 * Extraction is a pass of its own: the extractor writes a key in small
	 * stores, and reading it back as 8-byte words at once stalls on store
	 * forwarding (measured: a third of the lookup's cycles).
	 */
	SL_FOR_EACH_LANE (i, lanes)
		sl_key_extract(&s->lookup, &pkts[i], keys[i]);
	if (both)
		SL_FOR_EACH_LANE (i, lanes)
			sl_key_extract(&s->update, &pkts[i], ukeys[i]);
	probe_hash(s, g, &lk, lanes, keys);
	if (both)
		probe_hash(s, g, &up, lanes, ukeys);
	probe_b1(s, g, &lk, lanes, keys);
	if (both)
		probe_b1(s, g, &up, lanes, ukeys);
	probe_b2(s, g, &lk, keys);
	if (both)
		probe_b2(s, g, &up, ukeys);

	/* The states, timeouts applied (idle deadlines move on); the hints when the scopes are the same. */
	SL_FOR_EACH_LANE (i, lanes) {
		int64_t c = probe_resolve(s, g, &lk, i, keys[i]);
		uint32_t b, fl, *dl;
		unsigned w;
		uint8_t *bk;

		pkts[i].state_slot = UINT32_MAX;
		if (c < 0) {
			pkts[i].state = 0;
			continue;
		}
		b = SLOT_B((uint32_t)c);
		w = SLOT_W((uint32_t)c);
		bk = g_bkt(s, g, b);
		fl = g_fl(g, bk)[w];
		dl = &g_dl(g, bk)[w];
		if (sl_unlikely(way_expired(fl, *dl, cold_at(s, b, w), ms))) {
			pkts[i].state = entry_roll_back(s, b, w);
			continue;
		}
		if (fl & F_IDLE)
			__atomic_store_n(dl, (uint32_t)ms + (fl & F_IDLE), __ATOMIC_RELAXED);
		else if (sl_unlikely(fl & F_SLOW))
			__atomic_store_n(&cold_at(s, b, w)->last, ms, __ATOMIC_RELAXED);
		pkts[i].state = g_state(g, bk)[w];
		if (!both) {
			pkts[i].state_slot = (uint32_t)c;
			pkts[i].state_gen = s->gen;
			pkts[i].state_owner = s;
		}
		s->st.hits++;
	}
	s->st.lookups += (uint64_t)__builtin_popcountll(lanes);
	if (!both)
		return;
	/* The update keys' slots as hints (after the rollbacks above). */
	SL_FOR_EACH_LANE (i, lanes) {
		int64_t c = probe_resolve(s, g, &up, i, ukeys[i]);

		pkts[i].state_slot = c < 0 ? UINT32_MAX : (uint32_t)c;
		pkts[i].state_gen = s->gen;
		pkts[i].state_owner = s;
	}
}

void
sl_state_lookup_burst(struct sl_state *s, struct sl_pkt *pkts, uint64_t lanes, uint64_t now,
		      uint8_t (*keys)[SL_KEY_MAX])
{
	if (s->key_size == 8)
		lookup_burst(s, GEO8, pkts, lanes, now, keys);
	else
		lookup_burst(s, GEO(s), pkts, lanes, now, keys);
}

bool
sl_state_claim(struct sl_state *s, const void *who)
{
	const void *w = __atomic_load_n(&s->writer, __ATOMIC_ACQUIRE);

	if (sl_likely(w == who))
		return true;
	if (w != NULL)
		return false;
	return __atomic_compare_exchange_n(&s->writer, &w, who, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE) ||
	       w == who;
}

void
sl_state_count_foreign(struct sl_state *s)
{
	__atomic_fetch_add(&s->st.foreign, 1, __ATOMIC_RELAXED);
}

/* A consistent copy of one bucket, for readers that are not the writer. */
struct bkt_copy {
	uint32_t hdr;
	uint32_t state[WAYS_MAX], dl[WAYS_MAX], fl[WAYS_MAX];
	struct st_cold cold[WAYS_MAX];
	uint8_t keys[WAYS_MAX][SL_KEY_MAX];
};

/* Seqlock read of bucket @b: false when the writer kept changing it. */
static bool
bkt_read(const struct sl_state *s, uint32_t b, struct bkt_copy *c, unsigned max_tries)
{
	uint8_t *bk = bkt(s, b);
	const uint32_t *h = b_hdr(s, bk);

	for (unsigned tries = 0; tries < max_tries; tries++) {
		uint32_t s1 = __atomic_load_n(h, __ATOMIC_ACQUIRE);

		if (s1 & 1)
			continue;
		for (unsigned w = 0; w < s->ways; w++) {
			c->fl[w] = __atomic_load_n(&b_fl(s, bk)[w], __ATOMIC_RELAXED);
			c->state[w] = b_state(s, bk)[w];
			c->dl[w] = __atomic_load_n(&b_dl(s, bk)[w], __ATOMIC_RELAXED);
			memcpy(c->keys[w], b_key(s, bk, w), s->key_size);
			c->cold[w] = *cold_at(s, b, w);
			c->cold[w].last =
				__atomic_load_n(&cold_at(s, b, w)->last, __ATOMIC_RELAXED);
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(h, __ATOMIC_RELAXED) != s1)
			continue;
		c->hdr = s1;
		return true;
	}
	return false;
}

void
sl_state_peek_burst(const struct sl_state *s, struct sl_pkt *pkts, uint64_t lanes, uint64_t now,
		    uint8_t (*keys)[SL_KEY_MAX])
{
	uint64_t ms = to_ms(s, now);
	unsigned i;

	SL_FOR_EACH_LANE (i, lanes)
		sl_key_extract(&s->lookup, &pkts[i], keys[i]);
	SL_FOR_EACH_LANE (i, lanes) {
		uint32_t b[2], st = 0;
		struct bkt_copy c;
		bool found = false;

		key_place(s, key_hash(keys[i], s->key_size), &b[0], &b[1]);
		for (unsigned k = 0; k < 2 && !found; k++) {
			/* The writer keeps changing it: read as no entry this time. */
			if (!bkt_read(s, b[k], &c, 64))
				break;
			for (unsigned w = 0; w < s->ways && !found; w++)
				if ((c.fl[w] & F_LIVE) &&
				    key_equal(c.keys[w], keys[i], s->key_size)) {
					found = true;
					st = way_expired(c.fl[w], c.dl[w], &c.cold[w], ms)
						     ? c.cold[w].rollback
						     : c.state[w];
				}
			if (k == 0 && hdr_ovf(c.hdr) == 0)
				break;
		}
		pkts[i].state = found ? st : 0;
		pkts[i].state_slot = UINT32_MAX;
	}
}

int
sl_state_cmd_apply(struct sl_state *s, const struct sl_state_cmd *c, uint64_t now)
{
	s->st.commands++;
	switch (c->op) {
	case SL_STATE_CMD_SET:
		return sl_state_set_key(s, c->key, &c->set, now);
	case SL_STATE_CMD_DEL:
		return sl_state_del_key(s, c->key);
	case SL_STATE_CMD_CLEAR:
		sl_state_clear(s);
		return 0;
	default:
		return -EINVAL;
	}
}

void
sl_state_service(struct sl_state *s, uint64_t now)
{
	uint32_t head = __atomic_load_n(&s->ring_head, __ATOMIC_ACQUIRE);
	uint32_t tail = s->ring_tail;

	if (head != tail) {
		while (tail != head) {
			sl_state_cmd_apply(s, &s->ring[tail % SL_STATE_RING], now);
			tail++;
		}
		__atomic_store_n(&s->ring_tail, tail, __ATOMIC_RELEASE);
	}
	/*
	 * Housekeeping: one bucket every 8th call (the sweep's cache misses
	 * should not cost every burst), so a full sweep takes 8 * n_buckets
	 * calls; lookups expire the entries they meet on their own.  The
	 * sweep also keeps every deadline within 2^31 ms of now, which the
	 * 32-bit comparisons need.
	 */
	if ((++s->sweep & 7) != 0)
		return;
	uint32_t b = s->sweep_b;
	s->sweep_b = b + 1 == s->n_buckets ? 0 : b + 1;
	uint64_t ms = writer_ms(s, now);
	uint8_t *bk = bkt(s, b);
	for (unsigned w = 0; w < s->ways; w++) {
		uint32_t fl = b_fl(s, bk)[w];
		if ((fl & F_LIVE) && way_expired(fl, b_dl(s, bk)[w], cold_at(s, b, w), ms))
			entry_roll_back(s, b, w);
	}
}

/*
 * Control thread.
 */

int
sl_state_ctl_post(struct sl_state *s, const struct sl_state_cmd *c)
{
	uint32_t head = s->ring_head;

	if (head - __atomic_load_n(&s->ring_tail, __ATOMIC_ACQUIRE) >= SL_STATE_RING)
		return -ENOBUFS;
	s->ring[head % SL_STATE_RING] = *c;
	__atomic_store_n(&s->ring_head, head + 1, __ATOMIC_RELEASE);
	return 0;
}

bool
sl_state_ctl_pending(const struct sl_state *s)
{
	return __atomic_load_n(&s->ring_tail, __ATOMIC_ACQUIRE) != s->ring_head;
}

static uint32_t
clamp_ms(uint64_t ms)
{
	return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

int
sl_state_dump(const struct sl_state *s, uint64_t now, sl_state_dump_fn fn, void *arg)
{
	uint64_t ms = to_ms(s, now);

	for (uint32_t b = 0; b < s->n_buckets; b++) {
		struct bkt_copy c;

		/* Seqlock read; a bucket the writer keeps changing is skipped this time. */
		if (!bkt_read(s, b, &c, 1000))
			continue;
		for (unsigned w = 0; w < s->ways; w++) {
			const struct st_cold *cd = &c.cold[w];
			struct sl_state_entry_info info;
			uint32_t fl = c.fl[w];
			int rc;

			if (!(fl & F_LIVE))
				continue;
			info.key = c.keys[w];
			info.state = c.state[w];
			info.rollback = cd->rollback;
			info.idle_ms = cd->idle_ms;
			info.hard_ms = cd->hard_ms;
			info.idle_left_ms = info.hard_left_ms = 0;
			if (way_expired(fl, c.dl[w], cd, ms)) {
				if (info.rollback == 0)
					continue;
				info.state = info.rollback;
				info.rollback = 0;
				info.idle_ms = info.hard_ms = 0;
			} else if (fl & F_SLOW) {
				if (cd->idle_ms != 0)
					info.idle_left_ms = clamp_ms(
						cd->idle_ms - (ms > cd->last ? ms - cd->last : 0));
				if (cd->hard_at != 0)
					info.hard_left_ms = clamp_ms(cd->hard_at - ms);
			} else if (fl & F_DL) {
				uint32_t left = c.dl[w] - (uint32_t)ms;
				if (fl & F_IDLE)
					info.idle_left_ms = left;
				else
					info.hard_left_ms = left;
			}
			if ((rc = fn(&info, arg)) != 0)
				return rc;
		}
	}
	return 0;
}

void
sl_state_stats_get(const struct sl_state *s, struct sl_state_stats *st)
{
	const uint64_t *src = (const uint64_t *)&s->st;
	uint64_t *dst = (uint64_t *)st;

	static_assert(sizeof(*st) % 8 == 0, "stats are 64-bit words");
	for (size_t i = 0; i < sizeof(*st) / 8; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}
