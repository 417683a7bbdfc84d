/* SPDX-License-Identifier: BSD-3-Clause */
/* The FFP's path records: one probe for a low-latency packet's whole way (see ffp.h). */
#include "ffp.h"

#include <stdlib.h>
#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#define PATH_HASH_SEED 0xfe /* dc_hash's table argument: keeps path keys apart from tables' */

/* ---- control side ---- */

/* A table packets can reach: it has a table object, a table-miss entry or a match-all entry. */
static inline bool
table_in_use(const struct pl_dtable *lv)
{
	return lv->tbl != NULL || lv->miss != NULL || lv->all_hit != NULL;
}

/*
 * Frame keys (ffp.h): the frame bytes the layout's moves read on a plain
 * IPv4 frame.  Only when every field is such a move, in_port or metadata
 * (a generic field read may read anything), and the key fits.
 */
static void
frame_keys_compile(struct ffp_path_spec *sp)
{
	const struct sl_key_layout *l = &sp->layout;
	const uint8_t *lmask = (const uint8_t *)sp->lmask;
	uint8_t mask[FFP_PATH_KEY_MAX] = {0};
	unsigned end = 0, md = 0;

	sp->fmode = 0;
	for (unsigned k = 0; k < l->n_moves; k++) {
		const struct sl_key_move *mv = &l->moves[k];
		if (mv->n == 0 && mv->src == 0xffff)
			continue; /* in_port: always in the last word */
		if (mv->n == 0) {
			if (l->fields[mv->src].id != SL_FIELD_METADATA)
				return;
			md = 1;
			continue;
		}
		if (mv->src + mv->n > FFP_PATH_KEY_MAX)
			return;
		for (unsigned b = 0; b < mv->n; b++)
			mask[mv->src + b] |= lmask[mv->dst + b];
		end = SL_MAX(end, mv->src + mv->n);
		/* Read only under an IP protocol: the protocol byte tells the keys apart. */
		if (mv->proto != 0) {
			mask[23] = 0xff;
			end = SL_MAX(end, 24u);
		}
	}
	unsigned words = (end + 7) / 8, size = words * 8u + 8u * md + 8u;
	if (size > FFP_PATH_KEY_MAX)
		return;
	sp->fwords = (uint8_t)words;
	sp->fmd = (uint8_t)md;
	memcpy(sp->fmask, mask, sizeof(sp->fmask));
	sp->fsize = (uint8_t)size;
	sp->fneed = (uint16_t)SL_MAX(l->moves_need, sp->fwords * 8u);
	sp->key_size = (uint8_t)SL_MAX(sp->key_size, size);
	sp->fmode = 1;
}

/* OR field @f's bytes of a table's kmask (all ones when @from is NULL) into the spec's lmask. */
static void
key_mask_or(struct ffp_path_spec *sp, const struct sl_field *f, const uint8_t *from)
{
	uint8_t *lmask = (uint8_t *)sp->lmask;
	int idx = sl_key_layout_find(&sp->layout, f);
	unsigned size = sl_field_size(f);

	if (idx < 0) /* every table field is in the union: cannot happen; keep all bits */
		idx = 0, size = sp->layout.key_size, from = NULL;
	for (unsigned b = 0; b < size; b++)
		lmask[sp->layout.offsets[idx] + b] |= from != NULL ? from[b] : 0xff;
}

/*
 * The union key's bits some covered table reads: each table's kmask at its
 * fields' places, guards whole.  Read from the live copies, which publish
 * just stored: their shapes are in the spec, so a mask that grows later
 * makes the spec stale before a key misses the new bits.
 */
static void
key_mask_compile(const struct sl_pipeline *pl, struct ffp_path_spec *sp)
{
	memset(sp->lmask, 0, sizeof(sp->lmask));
	for (unsigned k = 0; k < sp->n_tables; k++) {
		const struct pl_dtable *lv = pl->tables[sp->tables[k]].live;
		for (unsigned i = 0; i < lv->layout.n_fields; i++)
			key_mask_or(sp, &lv->layout.fields[i], lv->kmask + lv->layout.offsets[i]);
		for (unsigned g = 0; g < lv->n_guards; g++)
			key_mask_or(sp, &lv->guards[g].f, NULL);
	}
	sp->lpartial = 0;
	for (unsigned w = 0; w < sp->layout.key_size / 8; w++)
		sp->lpartial |= sp->lmask[w] != UINT64_MAX;
}

/* The spec the live tables call for now (gen left 0); returns why there is none. */
static enum sl_flow_cache_inactive
spec_build(const struct sl_pipeline *pl, struct ffp_path_spec *sp)
{
	struct sl_field fields[SL_KEY_FIELDS_MAX * 2];
	enum sl_flow_cache_inactive why = SL_FLOW_CACHE_ACTIVE;
	unsigned n = 0;

	memset(sp, 0, sizeof(*sp));
	if (pl->accel.ffp_path_off)
		return SL_FLOW_CACHE_DISABLED;
	/*
	 * State tables change per packet (set_state): the cache steps aside
	 * while the pipeline has any.
	 */
	if (__atomic_load_n(&pl->n_state_ids, __ATOMIC_RELAXED))
		return SL_FLOW_CACHE_STATE;
	for (unsigned t = 0; t < SL_TABLES_MAX; t++) {
		const struct pl_table *pt = &pl->tables[t];
		const struct pl_dtable *lv = pt->live;
		if (lv == NULL || !table_in_use(lv))
			continue;
		if (sp->n_tables == FFP_PATH_TABLES) {
			why = SL_FLOW_CACHE_TOO_MANY;
			goto none;
		}
		sp->tables[sp->n_tables] = (uint8_t)t;
		sp->shape[sp->n_tables++] = lv->shape;
		sp->covers[t / 64] |= UINT64_C(1) << (t % 64);
		/* sl_key_layout_init drops duplicates; collect at most what a layout holds. */
		for (unsigned i = 0; i < lv->layout.n_fields + lv->n_guards; i++) {
			if (n == SL_KEY_FIELDS_MAX * 2) {
				why = SL_FLOW_CACHE_KEY_TOO_BIG;
				goto none;
			}
			fields[n++] = i < lv->layout.n_fields
					      ? lv->layout.fields[i]
					      : lv->guards[i - lv->layout.n_fields].f;
		}
	}
	/*
	 * One table: its lookup (with the decision cache or the FFP's LUT in
	 * front) is already the whole path; a path record would only add an
	 * extraction (TC4 of the decomposition study: a 25-row table, 1,104 -> 1,200 ns per
	 * burst with a path record).
	 */
	if (sp->n_tables < 2) {
		why = SL_FLOW_CACHE_ONE_TABLE;
		goto none;
	}
	/* sl_key_layout_init drops the fields several tables share. */
	if (sl_key_layout_init(&sp->layout, fields, n) != 0 ||
	    sp->layout.key_size > FFP_PATH_KEY_MAX) {
		why = SL_FLOW_CACHE_KEY_TOO_BIG;
		goto none;
	}
	sp->key_size = (uint8_t)sp->layout.key_size;
	key_mask_compile(pl, sp);
	frame_keys_compile(sp);
	return SL_FLOW_CACHE_ACTIVE;
none:
	memset(sp, 0, sizeof(*sp));
	return why;
}

const char *
sl_flow_cache_inactive_name(enum sl_flow_cache_inactive why)
{
	switch (why) {
	case SL_FLOW_CACHE_ACTIVE:
		return "active";
	case SL_FLOW_CACHE_DISABLED:
		return "disabled";
	case SL_FLOW_CACHE_STATE:
		return "state tables";
	case SL_FLOW_CACHE_ONE_TABLE:
		return "one table";
	case SL_FLOW_CACHE_TOO_MANY:
		return "too many tables";
	case SL_FLOW_CACHE_KEY_TOO_BIG:
		return "key too big";
	}
	return "?";
}

static bool
spec_equal(const struct ffp_path_spec *a, const struct ffp_path_spec *b)
{
	if (a->n_tables != b->n_tables || a->layout.n_fields != b->layout.n_fields)
		return false;
	for (unsigned k = 0; k < a->n_tables; k++)
		if (a->tables[k] != b->tables[k] || a->shape[k] != b->shape[k])
			return false;
	for (unsigned i = 0; i < a->layout.n_fields; i++)
		if (!sl_field_equal(&a->layout.fields[i], &b->layout.fields[i]))
			return false;
	return true;
}

/*
 * Called by sl_pipeline_publish after the tables' live copies are stored and
 * before its grace period: the slot written here was last live before the
 * previous publish that changed it, whose grace period has passed.  Workers
 * check each covered table's shape against the spec per burst, so a spec
 * that lags the tables by one publish is never used.
 */
bool
pl_ffp_path_update(struct sl_pipeline *pl)
{
	struct ffp_path_spec want;
	const struct ffp_path_spec *cur = pl->accel.path_live;

	pl->accel.path_inactive = (uint8_t)spec_build(pl, &want);
	if (cur == NULL ? want.n_tables == 0 : spec_equal(cur, &want))
		return false;
	if (pl->accel.path_spec == NULL) {
		pl->accel.path_spec = calloc(2, sizeof(*pl->accel.path_spec));
		if (pl->accel.path_spec == NULL)
			return false; /* no path records; the per-table LUTs work alone */
	}
	struct ffp_path_spec *slot =
		cur == &pl->accel.path_spec[0] ? &pl->accel.path_spec[1] : &pl->accel.path_spec[0];
	*slot = want;
	if (want.n_tables) {
		if (++pl->accel.ffp_path_gen >= (1u << 24))
			pl->accel.ffp_path_gen =
				1; /* 2^24 spec changes: signatures may repeat (ffp.h) */
		slot->gen = pl->accel.ffp_path_gen;
	}
	__atomic_store_n(&pl->accel.path_live, want.n_tables ? slot : NULL, __ATOMIC_RELEASE);
	return true;
}

void
pl_ffp_path_free(struct sl_pipeline *pl)
{
	free(pl->accel.path_spec);
	pl->accel.path_spec = NULL;
	pl->accel.path_live = NULL;
}

void
sl_pipeline_ffp_path_enable(struct sl_pipeline *pl, bool on)
{
	pl->accel.ffp_path_off = !on;
	pl_ffp_path_update(pl);
	if (pl->sync != NULL)
		pl->sync(pl->sync_arg); /* the old spec's readers are gone before it is rewritten */
}

void
sl_pipeline_ffp_path_stats(const struct sl_pipeline *pl, const struct sl_pipeline_ctx *const ctxs[],
			   unsigned n_ctxs, struct sl_ffp_path_stats *st)
{
	const struct ffp_path_spec *sp = __atomic_load_n(&pl->accel.path_live, __ATOMIC_ACQUIRE);

	memset(st, 0, sizeof(*st));
	st->inactive = (enum sl_flow_cache_inactive)pl->accel.path_inactive;
	if (sp != NULL) {
		st->n_tables = sp->n_tables;
		st->key_bytes = sp->key_size;
	}
	for (unsigned c = 0; c < n_ctxs; c++) {
		const struct ffp_ctx *fc = ctxs[c]->ffp;
		if (fc == NULL || fc->path == NULL)
			continue;
		const struct sl_ffp_path_stats *s = &fc->path->st;
		st->entries += s->entries;
		st->hits += s->hits;
		st->misses += s->misses;
		st->inserts += s->inserts;
		st->evictions += s->evictions;
		st->stale += s->stale;
		st->probing += fc->pobs.on;
		st->capacity += FFP_PATH_SETS * FFP_WAYS;
	}
}

/* ---- worker side ---- */

/* The signature of spec @sp over the live tables, or 0 when a table's shape has moved on. */
static inline uint64_t
path_sig(const struct sl_pipeline *pl, const struct ffp_path_spec *sp)
{
	/* A cleared mark counts as a change: hits need not read their entries' marks. */
	uint64_t sig =
		((uint64_t)sp->gen << 40) + __atomic_load_n(&pl->accel.ll_epoch, __ATOMIC_ACQUIRE);

	for (unsigned k = 0; k < sp->n_tables; k++) {
		const struct pl_dtable *pt = pl_live(&pl->tables[sp->tables[k]]);
		if (pt->shape != sp->shape[k])
			return 0;
		sig += pt->version;
	}
	return sig;
}

/*
 * dc_hash (CRC32) is linear: structured keys (ids counting up in one field)
 * can share its low bits more often than chance; mix the high bits in.
 */
static inline uint32_t
path_mix(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x7feb352du;
	h ^= h >> 15;
	return h;
}

static inline uint32_t
path_hash(const uint8_t *key, unsigned size)
{
	return path_mix(dc_hash(key, size, PATH_HASH_SEED));
}

/*
 * Two-choice sets: a key may sit in either of two 2-way sets (bits 0-13 and
 * 18-31 of its hash).  With one 2-way set, 10,000 keys in 16,384 sets left
 * about 400 sets with three keys or more, whose keys evicted each other for
 * good (the three-stage 10,000-flow mix missed 12.5 % of its probes).
 */
static inline uint32_t
path_set_a(uint32_t h)
{
	return h & (FFP_PATH_SETS - 1);
}

static inline uint32_t
path_set_b(uint32_t h)
{
	uint32_t b = (h >> 18) & (FFP_PATH_SETS - 1);

	return b != path_set_a(h) ? b : b ^ 1;
}

/*
 * The record of @key in set @set, or NULL.  @used is the key's form + 1
 * (ffp.h: a frame key and a layout key never match, whatever their bytes).
 */
static SL_ALWAYS_INLINE struct ffp_path_rec *
path_find_in(struct ffp_path *ph, uint32_t set, const uint8_t *key, unsigned size, uint8_t used)
{
	struct ffp_path_rec *s = &ph->rec[set * FFP_WAYS];

	for (unsigned w = 0; w < FFP_WAYS; w++)
		if (s[w].used == used && dc_key_equal(s[w].key, key, size))
			return &s[w];
	return NULL;
}

/*
 * A hit or a fill of way @r: its set's other way goes first.  Records are
 * three lines, so a record's line number 6k + 3w is odd exactly in way 1:
 * the way without dividing by 192.
 */
static SL_ALWAYS_INLINE void
path_touch_way(struct ffp_path_rec *s0, unsigned way)
{
	uint8_t other = (uint8_t)(way ^ 1);

	if (s0->lru != other)
		s0->lru = other;
}

static inline void
path_touch(struct ffp_path *ph, struct ffp_path_rec *r)
{
	unsigned way = (unsigned)(((uintptr_t)r - (uintptr_t)ph->rec) >> 6) & 1;

	path_touch_way(r - way, way);
}

/*
 * Where a new key goes: a free way of its first set, else of its second,
 * else the least recently used way of one of them (chosen by a hash bit, so
 * keys spread over both).
 */
static inline struct ffp_path_rec *
path_victim(struct ffp_path *ph, uint32_t h)
{
	struct ffp_path_rec *a = &ph->rec[path_set_a(h) * FFP_WAYS];
	struct ffp_path_rec *b = &ph->rec[path_set_b(h) * FFP_WAYS];

	for (unsigned w = 0; w < FFP_WAYS; w++)
		if (!a[w].used)
			return &a[w];
	for (unsigned w = 0; w < FFP_WAYS; w++)
		if (!b[w].used)
			return &b[w];
	struct ffp_path_rec *s = (h >> 14) & 1 ? b : a;
	return &s[s[0].lru];
}

/* Per-table counters of @pkts hits on record @r (this worker's). */
static inline void
path_tstats(struct sl_pipeline_ctx *ctx, const struct ffp_path_rec *r, uint64_t pkts)
{
	for (unsigned k = 0; k < r->n_hops; k++)
		ctx->tpath[r->tab[k]] += pkts; /* one add for a lookup and a match */
	if (r->miss)
		ctx->tstats[r->miss_at].lookups += pkts;
}

/* Credit @pkts packets and @bytes bytes to every entry of record @r. */
static inline void
path_credit(const struct sl_pipeline *pl, uint64_t now, const struct ffp_path_rec *r, uint64_t pkts,
	    uint64_t bytes)
{
	for (unsigned k = 0; k < r->n_hops; k++) {
		struct sl_flow *f = (struct sl_flow *)r->flow[k];
		pl_count(pl, &f->n_packets, pkts);
		pl_count(pl, &f->n_bytes, bytes);
		__atomic_store_n(&f->last_hit_tsc, now, __ATOMIC_RELAXED);
	}
}

/* Record @r's deferred credits, if any, go to its entries. */
static inline void
path_credit_pending(const struct sl_pipeline *pl, uint64_t now, struct ffp_path_rec *r)
{
	if (r->pend_pkts == 0)
		return;
	path_credit(pl, now, r, r->pend_pkts, r->pend_bytes);
	r->pend_pkts = r->pend_bytes = 0;
}

void
pl_ffp_path_flush(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx)
{
	struct ffp_ctx *fc = ctx->ffp;
	unsigned n = fc->n_dirty;
	uint64_t pkts = 0;

	/* Records and entries are scattered: fetch records 16 ahead, their entries 8 ahead. */
	for (unsigned k = 0; k < n; k++) {
		if (k + 16 < n) {
			sl_prefetch0(fc->dirty[k + 16]);
			sl_prefetch0(&fc->dirty[k + 16]->flow[0]);
		}
		if (k + 8 < n) {
			const struct ffp_path_rec *r = fc->dirty[k + 8];
			for (unsigned h = 0; h < r->n_hops; h++)
				sl_prefetch0(r->flow[h]);
		}
		pkts += fc->dirty[k]->pend_pkts;
		path_credit_pending(pl, ctx->now, fc->dirty[k]);
	}
	fc->n_dirty = 0;
	if (n >= FFP_DEFER_SAMPLE && pkts < 2 * (uint64_t)n)
		fc->defer_rest = FFP_DEFER_REST;
}

/* @pkts hits with @bytes on record @r: credited now, or deferred (ffp.h). */
static inline void
path_hits(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct ffp_path_rec *r,
	  uint64_t pkts, uint64_t bytes)
{
	struct ffp_ctx *fc = ctx->ffp;

	path_tstats(ctx, r, pkts);
	if (!fc->defer_now) {
		path_credit(pl, ctx->now, r, pkts, bytes);
		return;
	}
	if (r->pend_pkts == 0) {
		if (sl_unlikely(fc->n_dirty == FFP_PATH_DIRTY))
			pl_ffp_path_flush(pl, ctx);
		fc->dirty[fc->n_dirty++] = r;
	}
	r->pend_pkts += (uint32_t)pkts;
	r->pend_bytes += (uint32_t)bytes;
	/* 32-bit sums: at most 2^15 + 64 frames of up to 64 KB each wait. */
	if (sl_unlikely(r->pend_pkts >= (1u << 15)))
		path_credit_pending(pl, ctx->now, r);
}

/*
 * Lane @i's key is recorded in @r: a hit when its signature is current
 * (returns the lane's bit; the record's second line, and its third when a
 * hit will read hops 4-7, are fetched for stage C), else a stale miss.
 */
static SL_ALWAYS_INLINE uint64_t
path_found(struct ffp_ctx *fc, struct ffp_path_rec *s0, unsigned way, uint64_t sig, bool defer,
	   unsigned i, uint64_t *misses, uint64_t *stale)
{
	struct ffp_path_rec *r = s0 + way;

	if (r->sig != sig) {
		++*stale;
		++*misses;
		return 0;
	}
	path_touch_way(s0, way);
	fc->prec[i] = r;
	sl_prefetch0((const uint8_t *)r + 64);
	/* Deferred hits on a plain record read no entry: hops 4-7 stay where they are. */
	if (r->n_hops > 4 && (!defer || r->out == 0))
		sl_prefetch0((const uint8_t *)r + 128);
	return UINT64_C(1) << i;
}

#define PATH_USED_LAYOUT 1 /* ffp_path_rec.used: the record's key is a layout key */
#define PATH_USED_FRAME 2  /* ... a frame key */

/*
 * Packet @p's path key under spec @sp (ffp.h: a frame key, else the layout's);
 * returns its form as ffp_path_rec.used.  A frame key's path_hash comes in
 * *@hash, from the words as they are built; a layout key is hashed later
 * (pl_ffp_path_lookup): reading its bytes back right after their stores
 * would stall on store forwarding.
 */
static SL_ALWAYS_INLINE uint8_t
path_key(const struct ffp_path_spec *sp, struct sl_pkt *p, uint8_t *key, uint32_t *hash,
	 const unsigned fwords, const bool fmd)
{
	/*
	 * Only the test: a hit needs no parse state (its dec_ttl is
	 * pl_dec_ttl_ipv4_frame), and whatever runs later parses as it needs.
	 */
	if (sp->fmode && sl_pkt_ipv4_plain_len(p, sp->fneed) != 0) {
		uint64_t h = dc_hash_init(PATH_HASH_SEED), in_port = p->in_port;
		unsigned nw = fwords ? fwords : sp->fwords, w;
		bool md = fwords ? fmd : sp->fmd;
		for (w = 0; w < nw; w++) {
			uint64_t x;
			__builtin_memcpy(&x, p->data + 8 * w, 8);
			x &= sp->fmask[w];
			__builtin_memcpy(key + 8 * w, &x, 8);
			h = dc_hash_word(h, x);
		}
		if (md) {
			__builtin_memcpy(key + 8 * w, &p->metadata, 8);
			h = dc_hash_word(h, p->metadata);
		}
		__builtin_memcpy(key + 8 * (nw + md), &in_port, 8);
		*hash = path_mix((uint32_t)dc_hash_word(h, in_port));
		return PATH_USED_FRAME;
	}
	if (sp->fmode) /* not of the plain shape: no second test */
		sl_key_extract_ops(&sp->layout, p, key);
	else
		sl_key_extract(&sp->layout, p, key);
	if (sp->lpartial)
		for (unsigned w = 0; w < sp->layout.key_size / 8u; w++) {
			uint64_t x;
			__builtin_memcpy(&x, key + 8 * w, 8);
			x &= sp->lmask[w];
			__builtin_memcpy(key + 8 * w, &x, 8);
		}
	return PATH_USED_LAYOUT;
}

/*
 * The size of a key of form @used (each form is hashed and compared at its
 * own size); @fwords/@fmd as in path_key.
 */
static SL_ALWAYS_INLINE unsigned
path_key_size(const struct ffp_path_spec *sp, uint8_t used, const unsigned fwords, const bool fmd)
{
	if (used != PATH_USED_FRAME)
		return sp->layout.key_size;
	return fwords ? 8 * (fwords + fmd + 1) : sp->fsize;
}

/*
 * The way of set @s holding lane @i's key, or -1.  With @fwords the frame
 * form's size is a constant: the compare is straight-line.
 */
static SL_ALWAYS_INLINE int
path_probe(const struct ffp_path_spec *sp, struct ffp_ctx *fc, const struct ffp_path_rec *s,
	   unsigned i, const unsigned fwords, const bool fmd)
{
	uint8_t used = fc->pform[i];
	unsigned size = path_key_size(sp, used, fwords, fmd);

	for (unsigned w = 0; w < FFP_WAYS; w++)
		if (s[w].used == used &&
		    (fwords && used == PATH_USED_FRAME
			     ? dc_key_equal_const(s[w].key, fc->pkey[i], 8 * (fwords + fmd + 1))
			     : dc_key_equal(s[w].key, fc->pkey[i], size)))
			return (int)w;
	return -1;
}

#define PATH_FWORDS_MAX 5 /* the frame keys pl_ffp_path_lookup has copies for: 2-5 words */

/*
 * Stage A's trains (a burst of one flow's packets): the consecutive lanes
 * of @lanes from the lowest up whose frame key (@nw words, metadata with
 * @md, in_port) is lane @src's.  They take its set without a hash and,
 * when @src is found, its record without a probe (stage B); their keys
 * are not stored (ffp_ctx.ptrain).  Out of line with the key in registers,
 * a copy per key shape: one compare of words a lane, the key's and the
 * bytes @src's plain-IPv4 test read (sl_pkt_ipv4_plain_like's rule).
 */
static SL_ALWAYS_INLINE uint64_t
path_train_of(const struct ffp_path_spec *sp, struct ffp_ctx *fc, const struct sl_pkt *pkts,
	      unsigned src, uint64_t lanes, const unsigned nw, const bool md, const bool regs)
{
	/* The key's words and the plain-IPv4 test's (words 1 and 2) in one compare. */
	const unsigned nc = nw < 3 ? 3 : nw;
	uint64_t want[PATH_FWORDS_MAX] = {0}, mask[PATH_FWORDS_MAX] = {0};
	const struct sl_pkt *s = &pkts[src];
	unsigned first = (unsigned)__builtin_ctzll(lanes), n = 0;
	unsigned room = sl_lanes_run(lanes);
	const struct sl_pkt *p = &pkts[first];
	uint32_t set = fc->pset[src], in_port = s->in_port;
	uint64_t metadata = s->metadata;
	uint16_t len = s->len; /* >= fneed, which holds the words (path_key), and >= 34 */
	/* A TCP frame passed with a whole header: byte 46 (its data offset) is inside. */
	bool tcp = s->data[23] == 6;
	uint8_t tcp_off = tcp ? s->data[46] : 0;

	for (unsigned w = 0; w < nc; w++) {
		mask[w] = (w < nw ? sp->fmask[w] : 0) | sl_pkt_ipv4_plain_word_mask(w);
		__builtin_memcpy(&want[w], s->data + 8 * w, 8);
		want[w] &= mask[w];
	}
#if defined(__AVX2__)
	/* Words 0-3 in one vector test (a frame of len >= 34 holds them; unused words' masks are 0). */
	const __m256i vwant = _mm256_loadu_si256((const void *)want);
	const __m256i vmask = _mm256_loadu_si256((const void *)mask);
	const unsigned w0 = 4;
#else
	const unsigned w0 = 0;
#endif
	/* Nothing stored in the loop: a byte store may alias the words, which would be reloaded. */
	for (; n < room; n++, p++) {
		/* @regs: every lane has the burst's in_port and metadata (ctx->regs_same). */
		uint64_t diff = regs ? 0 : (uint64_t)(p->in_port ^ in_port), x;

		if (p->len != len) /* first: the words must be inside the frame */
			break;
		if (md && !regs)
			diff |= p->metadata ^ metadata;
#if defined(__AVX2__)
		__m256i v = _mm256_loadu_si256((const void *)p->data);
		diff |= (uint64_t)!_mm256_testz_si256(_mm256_xor_si256(v, vwant), vmask);
#endif
		for (unsigned w = w0; w < nc; w++) {
			__builtin_memcpy(&x, p->data + 8 * w, 8);
			diff |= (x & mask[w]) ^ want[w];
		}
		if (tcp)
			diff |= (uint64_t)(p->data[46] ^ tcp_off);
		if (diff != 0)
			break;
	}
	memset(&fc->ptrain[first], (int)src, n);
	memset(&fc->pform[first], PATH_USED_FRAME, n);
	for (unsigned k = 0; k < n; k++)
		fc->pset[first + k] = set;
	return sl_lanes_first(n) << first;
}

static __attribute__((noinline)) uint64_t
path_train(const struct ffp_path_spec *sp, struct ffp_ctx *fc, const struct sl_pkt *pkts,
	   unsigned src, uint64_t lanes, unsigned nw, bool md, bool regs)
{
	if (regs) /* a worker's burst: the registers need no compare */
		switch (nw) {
		case 2:
			return path_train_of(sp, fc, pkts, src, lanes, 2, md, true);
		case 3:
			return path_train_of(sp, fc, pkts, src, lanes, 3, md, true);
		case 4:
			return path_train_of(sp, fc, pkts, src, lanes, 4, md, true);
		default:
			return path_train_of(sp, fc, pkts, src, lanes, 5, md, true);
		}
	switch (nw * 2 + md) {
	case 2 * 2:
		return path_train_of(sp, fc, pkts, src, lanes, 2, false, false);
	case 2 * 2 + 1:
		return path_train_of(sp, fc, pkts, src, lanes, 2, true, false);
	case 3 * 2:
		return path_train_of(sp, fc, pkts, src, lanes, 3, false, false);
	case 3 * 2 + 1:
		return path_train_of(sp, fc, pkts, src, lanes, 3, true, false);
	case 4 * 2:
		return path_train_of(sp, fc, pkts, src, lanes, 4, false, false);
	case 4 * 2 + 1:
		return path_train_of(sp, fc, pkts, src, lanes, 4, true, false);
	case 5 * 2:
		return path_train_of(sp, fc, pkts, src, lanes, 5, false, false);
	default:
		return path_train_of(sp, fc, pkts, src, lanes, 5, true, false);
	}
}

/*
 * Stage C's runs: the consecutive lanes of @lanes from the lowest up found
 * on record @r, entered on @in_port, output to @out (its port checked once
 * for @in_port), with the frame dec_ttl first when @ttl.  Returns those
 * lanes; their bytes (as they entered) go to *@bytes.  Out of line like
 * plain_run (pipeline_run.c): a train's lanes cost a few instructions each.
 */
static __attribute__((noinline)) uint64_t
path_out_run(struct sl_pipeline_ctx *ctx, const struct sl_pkt *pkts, uint64_t lanes,
	     const struct ffp_path_rec *r, uint32_t out, uint32_t in_port, bool ttl,
	     uint32_t out_ports[], uint64_t *bytes)
{
	const struct ffp_ctx *fc = ctx->ffp;
	unsigned first = (unsigned)__builtin_ctzll(lanes), n = 0;
	uint64_t sum = 0;
	unsigned room = sl_lanes_run(lanes);
	const struct sl_pkt *p = &pkts[first];

	for (; n < room; n++, p++) {
		unsigned i = first + n;

		if (fc->prec[i] != r || p->in_port != in_port)
			break;
		/* A frame key's lane is plain IPv4 (path_key): its TTL is at a fixed place. */
		if (ttl && (fc->pform[i] != PATH_USED_FRAME || !pl_dec_ttl_ipv4_frame(p->data)))
			break;
		out_ports[i] = out;
		sum += p->len;
	}
	*bytes = sum;
	return sl_lanes_first(n) << first;
}

/*
 * Stage C's trains: lanes @first.. (@n of them) of a train stage B took
 * whole, on a record whose output @out is checked for their in_port, are
 * output (dec_ttl first with @ttl, up to the first it drops).  Returns how
 * many were.
 */
static __attribute__((noinline)) unsigned
path_out_train(const struct sl_pkt *pkts, unsigned first, unsigned n, uint32_t out, bool ttl,
	       uint32_t out_ports[])
{
	unsigned k;

	for (k = 0; k < n; k++) {
		if (ttl && !pl_dec_ttl_ipv4_frame(pkts[first + k].data))
			break;
		out_ports[first + k] = out;
	}
	return k;
}

static SL_ALWAYS_INLINE uint64_t path_lookup(const struct sl_pipeline *pl,
					     struct sl_pipeline_ctx *ctx, struct sl_pkt *pkts,
					     uint32_t out_ports[], unsigned *n_out,
					     const struct ffp_path_spec *sp, uint64_t sig,
					     const unsigned fwords, const bool fmd);

uint64_t
pl_ffp_path_lookup(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct sl_pkt *pkts,
		   uint32_t out_ports[], unsigned *n_out)
{
	struct ffp_ctx *fc = ctx->ffp;
	const struct ffp_path_spec *sp = __atomic_load_n(&pl->accel.path_live, __ATOMIC_ACQUIRE);
	uint64_t lanes = ctx->lanes_at[0], sig;

	fc->pspec = NULL;
	fc->phit = 0;
	/*
	 * Off (ffp.h, adaptive), a worker runs one burst in FFP_PATH_SAMPLE
	 * through the cache to learn its hit rate.  Without the cost model
	 * (tests) the cache is always on.
	 */
	bool on = fc->pobs.on || pl->accel.ffp_no_model;
	if (!on && (++fc->psample & (FFP_PATH_SAMPLE - 1)) != 0)
		return 0;
	if (sp == NULL || lanes == 0 || fc->path == NULL ||
	    __atomic_load_n(&pl->n_state_ids, __ATOMIC_RELAXED) != 0 ||
	    (sig = path_sig(pl, sp)) == 0)
		return 0;
	fc->pspec = sp;
	fc->psig = sig;
	fc->ptrack = lanes;
	fc->pdone = 0;
	fc->pmissed = 0;
	memset(fc->pn, 0, sizeof(fc->pn));
	fc->pobs.n += (uint32_t)__builtin_popcountll(lanes);
	/*
	 * Frame keys of the common sizes get their own copy of the lookup: key
	 * building, hashing and compares without a loop or a size switch.
	 */
	if (sp->fmode)
		switch (sp->fwords * 2 + sp->fmd) {
		case 2 * 2:
			return path_lookup(pl, ctx, pkts, out_ports, n_out, sp, sig, 2, false);
		case 2 * 2 + 1:
			return path_lookup(pl, ctx, pkts, out_ports, n_out, sp, sig, 2, true);
		case 3 * 2:
			return path_lookup(pl, ctx, pkts, out_ports, n_out, sp, sig, 3, false);
		case 3 * 2 + 1:
			return path_lookup(pl, ctx, pkts, out_ports, n_out, sp, sig, 3, true);
		case 4 * 2:
			return path_lookup(pl, ctx, pkts, out_ports, n_out, sp, sig, 4, false);
		case 4 * 2 + 1:
			return path_lookup(pl, ctx, pkts, out_ports, n_out, sp, sig, 4, true);
		case 5 * 2:
			return path_lookup(pl, ctx, pkts, out_ports, n_out, sp, sig, 5, false);
		case 5 * 2 + 1:
			return path_lookup(pl, ctx, pkts, out_ports, n_out, sp, sig, 5, true);
		}
	return path_lookup(pl, ctx, pkts, out_ports, n_out, sp, sig, 0, false);
}

/* pl_ffp_path_lookup's stages; @fwords and @fmd: a frame key's shape, or 0 (read from @sp). */
static SL_ALWAYS_INLINE uint64_t
path_lookup(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct sl_pkt *pkts,
	    uint32_t out_ports[], unsigned *n_out, const struct ffp_path_spec *sp, uint64_t sig,
	    const unsigned fwords, const bool fmd)
{
	struct ffp_ctx *fc = ctx->ffp;
	uint64_t lanes = ctx->lanes_at[0];
	unsigned i;
	struct ffp_path *ph = fc->path;
	/*
	 * Stage A: the union keys and their hashes (layout keys' in a second
	 * loop, see path_key); prefetch the first line of both ways.
	 */
	uint64_t layout_keys = 0, trains = 0, todo = lanes;
	while (todo != 0) {
		uint32_t h = 0;
		i = (unsigned)__builtin_ctzll(todo);
		todo &= todo - 1;
		fc->pform[i] = path_key(sp, &pkts[i], fc->pkey[i], &h, fwords, fmd);
		if (fc->pform[i] == PATH_USED_LAYOUT) {
			layout_keys |= UINT64_C(1) << i;
			continue;
		}
		fc->pset[i] = h;
		const struct ffp_path_rec *s = &ph->rec[path_set_a(h) * FFP_WAYS];
		sl_prefetch0(s);
		sl_prefetch0(s + 1);
		/*
		 * The next lane may have this key too (its last frame word, where
		 * 5-tuples differ, says so): a train (path_train).
		 */
		if (fwords && todo != 0 && pkts[__builtin_ctzll(todo)].len == pkts[i].len) {
			uint64_t x, k; /* inside the frame: pkts[i] passed fneed */
			__builtin_memcpy(&x, pkts[__builtin_ctzll(todo)].data + 8 * (fwords - 1),
					 8);
			__builtin_memcpy(&k, fc->pkey[i] + 8 * (fwords - 1), 8);
			if (((x & sp->fmask[fwords - 1]) ^ k) == 0) {
				uint64_t t = path_train(sp, fc, pkts, i, todo, fwords, fmd,
							ctx->regs_same);
				trains |= t;
				todo &= ~t;
			}
		}
	}
	SL_FOR_EACH_LANE (i, layout_keys) {
		uint32_t h = path_hash(fc->pkey[i], sp->layout.key_size);
		fc->pset[i] = h;
		sl_prefetch0(&ph->rec[path_set_a(h) * FFP_WAYS]);
		sl_prefetch0(&ph->rec[path_set_a(h) * FFP_WAYS + 1]);
	}
	/*
	 * Stage B: find the records in their first sets (where most keys sit: a
	 * fill takes a free way there first); the lanes not found there fetch
	 * their second sets, looked at in stage B2 (as rte_hash's secondary
	 * buckets: two lines a lane instead of four).
	 */
	uint64_t found = 0, misses = 0, stale = 0, second = 0, taken_trains = 0;
	bool defer = fc->defer && fc->defer_rest == 0;
	fc->defer_now = defer;
	if (fc->defer_rest != 0)
		fc->defer_rest--;
	/*
	 * A lane with the key of the last lane found (a train of one flow's
	 * packets) takes its record: one compare of keys in L1 instead of the
	 * probe, the signature check and the LRU touch.
	 */
	unsigned last = 0;
	uint32_t last_h = 0;
	bool last_ok = false;
	uint64_t todo_b = lanes;
	while (todo_b != 0) {
		i = (unsigned)__builtin_ctzll(todo_b);
		todo_b &= todo_b - 1;
		uint32_t h = fc->pset[i];
		/*
		 * A train's lane has its predecessor's key (stage A): that is
		 * last's whenever last_ok (a lane since either took its record
		 * or reset last_ok).
		 */
		if (trains >> i & 1) {
			if (last_ok) {
				fc->prec[i] = fc->prec[last];
				found |= UINT64_C(1) << i;
				continue;
			}
			/* Probed as any lane: the key it shares. */
			memcpy(fc->pkey[i], fc->pkey[fc->ptrain[i]], 8 * (fwords + fmd + 1));
		} else if (last_ok && h == last_h && fc->pform[i] == fc->pform[last] &&
			   (fwords && fc->pform[i] == PATH_USED_FRAME
				    ? dc_key_equal_const(fc->pkey[i], fc->pkey[last],
							 8 * (fwords + fmd + 1))
				    : dc_key_equal(fc->pkey[i], fc->pkey[last],
						   path_key_size(sp, fc->pform[i], fwords, fmd)))) {
			fc->prec[i] = fc->prec[last];
			found |= UINT64_C(1) << i;
			continue;
		}
		struct ffp_path_rec *s = &ph->rec[path_set_a(h) * FFP_WAYS];
		int way = path_probe(sp, fc, s, i, fwords, fmd);

		if (way < 0) {
			uint32_t b = path_set_b(h);
			sl_prefetch0(&ph->rec[b * FFP_WAYS]);
			sl_prefetch0(&ph->rec[b * FFP_WAYS + 1]);
			second |= UINT64_C(1) << i;
			last_ok = false;
			continue;
		}
		uint64_t bit = path_found(fc, s, (unsigned)way, sig, defer, i, &misses, &stale);
		found |= bit;
		last_ok = bit != 0;
		last = i;
		last_h = h;
		/*
		 * Its train, if any, is the run of train lanes next (stage A: a
		 * train starts at its source's next lane; no train lane is a
		 * source): they take its record at once.
		 */
		if (last_ok && todo_b != 0 && (trains >> __builtin_ctzll(todo_b) & 1)) {
			unsigned j = (unsigned)__builtin_ctzll(todo_b);
			unsigned len = sl_lanes_run(trains >> j);
			uint64_t run = sl_lanes_first(len) << j;
			struct ffp_path_rec *rec = fc->prec[i], **to = &fc->prec[j];
			unsigned k = 0;
			for (; k + 4 <= len; k += 4) /* unrolled: a train is most of a burst */
				to[k] = to[k + 1] = to[k + 2] = to[k + 3] = rec;
			for (; k < len; k++)
				to[k] = rec;
			found |= run;
			taken_trains |= run;
			todo_b &= ~run;
		}
	}
	SL_FOR_EACH_LANE (i, second) {
		struct ffp_path_rec *s = &ph->rec[path_set_b(fc->pset[i]) * FFP_WAYS];
		int way = path_probe(sp, fc, s, i, fwords, fmd);

		if (way < 0) {
			misses++;
			continue;
		}
		found |= path_found(fc, s, (unsigned)way, sig, defer, i, &misses, &stale);
	}
	/*
	 * Stage C: credit the recorded entries.  Goto-only hops ending in a plain
	 * output to a port that is up are done here (the common case, no call);
	 * the caller runs the others' instructions (path_run).  The entries'
	 * marks need no check: clearing one changes the signature (path_sig).
	 */
	struct ffp_path_rec *run = NULL;
	uint64_t run_bytes = 0, rest = 0, normal = 0;
	uint32_t run_out = 0, ok_in_port = 0;
	uint64_t run_lanes = 0;
	bool run_ttl = false, run_normal = false, port_ok = false;
	if (!defer) /* the entries' lines: the records' second lines have arrived by now */
		SL_FOR_EACH_LANE (i, found) {
			const struct ffp_path_rec *r = fc->prec[i];
			for (unsigned k = 0; k < r->n_hops; k++)
				sl_prefetch0(r->flow[k]);
		}
	uint64_t left = found;
	while (left != 0) {
		i = (unsigned)__builtin_ctzll(left);
		left &= left - 1;
		struct ffp_path_rec *r = fc->prec[i];

		if (r != run) {
			/* What a record says is read once per run of lanes on it. */
			if (run != NULL)
				path_hits(pl, ctx, run, (uint64_t)__builtin_popcountll(run_lanes),
					  run_bytes);
			if (run_normal)
				normal |= run_lanes;
			run = r;
			run_bytes = 0;
			run_lanes = 0;
			run_out = r->out; /* 0 on a miss (pl_ffp_path_end) */
			/*
			 * A plain record's last hop may be dec_ttl, output (plain bit
			 * n_hops - 1); a record with an output has a hop (a miss-only
			 * record has none: no shift by -1).
			 */
			run_ttl = run_out != 0 && (r->plain >> (r->n_hops - 1) & 1);
			/* A normal entry on the way: the packet leaves the low-latency class. */
			run_normal = !r->ll;
			port_ok = run_out != 0 && pl_port_plain_ok(pl, run_out, pkts[i].in_port);
			ok_in_port = pkts[i].in_port;
			if (r->n_hops + r->miss > ctx->chain_max)
				ctx->chain_max = (uint8_t)(r->n_hops + r->miss);
			/*
			 * Its train next (stage B took it whole): the same in_port and
			 * length as lane i, a frame key's plain IPv4; their outputs out
			 * of line, then lane i's below.
			 */
			uint64_t taken, bytes;
			unsigned j = left != 0 ? (unsigned)__builtin_ctzll(left) : 0;
			if (port_ok && left != 0 && (taken_trains >> j & 1) && fc->ptrain[j] == i) {
				unsigned n =
					path_out_train(pkts, j, sl_lanes_run(taken_trains >> j),
						       run_out, run_ttl, out_ports);
				taken = sl_lanes_first(n) << j;
				run_bytes += (uint64_t)n * pkts[i].len;
				run_lanes |= taken;
				left &= ~taken;
			} else if (port_ok && left != 0 && fc->prec[j] == r &&
				   (taken = path_out_run(ctx, pkts, left | UINT64_C(1) << i, r,
							 run_out, ok_in_port, run_ttl, out_ports,
							 &bytes)) != 0) {
				run_bytes += bytes;
				run_lanes |= taken;
				left &= ~taken;
				continue;
			}
		}
		run_bytes += pkts[i].len;
		run_lanes |= UINT64_C(1) << i;
		if (sl_unlikely(pkts[i].in_port != ok_in_port)) {
			port_ok = run_out != 0 && pl_port_plain_ok(pl, run_out, pkts[i].in_port);
			ok_in_port = pkts[i].in_port;
		}
		/* A frame key's lane is plain IPv4 (path_key): its TTL is at a fixed place. */
		if (port_ok && (!run_ttl || (fc->pform[i] == PATH_USED_FRAME
						     ? pl_dec_ttl_ipv4_frame(pkts[i].data)
						     : pl_dec_ttl_plain(&pkts[i])))) {
			/*
			 * A finished lane's state is never read (nor reset:
			 * burst_paths); st.flow is read only by a controller
			 * output or a group bucket, so a hit reads no hop.
			 */
			out_ports[i] = run_out;
		} else {
			rest |= UINT64_C(1) << i;
		}
	}
	if (run != NULL)
		path_hits(pl, ctx, run, (uint64_t)__builtin_popcountll(run_lanes), run_bytes);
	if (run_normal)
		normal |= run_lanes;
	*n_out += (unsigned)__builtin_popcountll(found & ~rest);
	ctx->ll_lanes &= ~normal;
	ph->st.hits += (uint64_t)__builtin_popcountll(found);
	ph->st.misses += misses;
	ph->st.stale += stale;
	fc->phit = found;
	fc->ptrack &= ~found;
	ctx->lanes_at[0] &= ~found;
	if (ctx->lanes_at[0] == 0)
		ctx->table_bits[0] &= ~UINT64_C(1);
	return rest;
}

/*
 * The rules of pl_ffp_path_hop and pl_ffp_path_miss over a trace's steps:
 * every hop before the last only goes to the next table (no apply_actions,
 * no meter), the last has no goto_table (or is a table miss), at most
 * FFP_PATH_HOPS entries, every table covered by the live spec.
 */
void
pl_ffp_path_traced(const struct sl_pipeline *pl, struct sl_trace *tr)
{
	const struct ffp_path_spec *sp = __atomic_load_n(&pl->accel.path_live, __ATOMIC_ACQUIRE);
	unsigned hops = 0, last = tr->n_steps;

	tr->tier = SL_TRACE_TIER_TABLES;
	tr->tier_why = pl->accel.path_inactive;
	if (sp == NULL || __atomic_load_n(&pl->n_state_ids, __ATOMIC_RELAXED) != 0 ||
	    tr->truncated) {
		if (tr->tier_why == SL_FLOW_CACHE_ACTIVE) /* a spec not built yet: no tables */
			tr->tier_why = SL_FLOW_CACHE_ONE_TABLE;
		return;
	}
	tr->tier_why = SL_FLOW_CACHE_ACTIVE;
	for (unsigned k = 0; k < tr->n_steps; k++)
		if (tr->steps[k].kind == SL_TRACE_HIT || tr->steps[k].kind == SL_TRACE_MISS)
			last = k;
	for (unsigned k = 0; k <= last && last < tr->n_steps; k++) {
		const struct sl_trace_step *s = &tr->steps[k];
		unsigned t = s->table_id;

		if (s->kind != SL_TRACE_HIT && s->kind != SL_TRACE_MISS)
			continue;
		tr->tier_step = (uint8_t)k;
		if (!(sp->covers[t / 64] >> (t % 64) & 1))
			return;
		if (s->kind == SL_TRACE_MISS)
			break;
		if (hops == FFP_PATH_HOPS)
			return;
		hops++;
		if (k < last ? (s->flow->insn_flags & (SL_INSN_APPLY | SL_INSN_METER)) ||
				       s->flow->goto_table < 0
			     : s->flow->goto_table >= 0)
			return;
	}
	if (last == tr->n_steps)
		return;
	tr->tier = SL_TRACE_TIER_FLOW_CACHE;
	tr->tier_hops = (uint8_t)hops;
	tr->tier_step = 0;
	/* stage C of pl_ffp_path_lookup: goto-only hops, then a plain output (dec_ttl first or not) */
	const struct sl_trace_step *s = &tr->steps[last];
	bool gotos_only = true;
	for (unsigned k = 0; k < last; k++)
		if (tr->steps[k].kind == SL_TRACE_HIT &&
		    pl_ffp_flow_kind(tr->steps[k].flow, &(uint8_t){0}) != FFP_REC_GOTO)
			gotos_only = false;
	tr->tier_plain = s->kind == SL_TRACE_HIT && gotos_only &&
			 (pl_ffp_flow_kind(s->flow, &(uint8_t){0}) == FFP_REC_OUTPUT ||
			  s->flow->plain_ttl_out != 0);
}

void
pl_ffp_path_end(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx)
{
	struct ffp_ctx *fc = ctx->ffp;
	const struct ffp_path_spec *sp = fc->pspec;
	uint64_t done = fc->pdone & fc->ptrack;
	struct ffp_obs *o = &fc->pobs;
	unsigned i;

	o->win += (uint32_t)__builtin_popcountll(fc->phit);
	if (sl_unlikely(o->n >= FFP_OBS_WINDOW)) {
		uint32_t frac = (uint32_t)((uint64_t)o->win * 1024 / o->n);
		if (frac >= FFP_PATH_ON)
			o->on = 1;
		else if (frac < FFP_PATH_OFF)
			o->on = 0;
		o->n = o->win = 0;
	}
	/* The tables must not have changed during the burst: the records' decisions are theirs. */
	if (done == 0 || path_sig(pl, sp) != fc->psig)
		return;
	struct ffp_path *ph = fc->path;
	SL_FOR_EACH_LANE (i, done) {
		uint32_t h = fc->pset[i];
		unsigned size = path_key_size(sp, fc->pform[i], 0, false);
		/* A stale record, or one filled by an earlier lane of this burst: refill it. */
		struct ffp_path_rec *r =
			path_find_in(ph, path_set_a(h), fc->pkey[i], size, fc->pform[i]);

		if (r == NULL)
			r = path_find_in(ph, path_set_b(h), fc->pkey[i], size, fc->pform[i]);
		if (r == NULL) {
			r = path_victim(ph, h);
			if (r->used)
				ph->st.evictions++;
			else
				ph->st.entries++;
			ph->st.inserts++;
			memcpy(r->key, fc->pkey[i], size);
		}
		/* Its old entries are alive until the next quiescent state: credit them now. */
		path_credit_pending(pl, ctx->now, r);
		path_touch(ph, r);
		unsigned nh = fc->pn[i];
		uint8_t arg, plain = 0, out = 0, ll = 1, ttl_out = 0;
		for (unsigned k = 0; k < nh; k++) {
			uint8_t kind = pl_ffp_flow_kind(fc->pflow[i][k], &arg);
			/* Any mark change moves the signature (ll_epoch): ll stays true to the marks. */
			ll &= __atomic_load_n(&fc->pflow[i][k]->ll, __ATOMIC_RELAXED) != 0;
			if ((k + 1 < nh || (fc->pmissed >> i & 1)) && kind == FFP_REC_GOTO)
				plain |= (uint8_t)(1u << k);
			else if (k + 1 == nh && kind == FFP_REC_OUTPUT)
				out = arg;
			else if (k + 1 == nh && fc->pflow[i][k]->plain_ttl_out != 0)
				out = fc->pflow[i][k]->plain_ttl_out, ttl_out = 1;
			r->tab[k] = fc->ptab[i][k];
			r->flow[k] = fc->pflow[i][k];
		}
		r->sig = fc->psig;
		r->n_hops = (uint8_t)nh;
		r->miss = (uint8_t)(fc->pmissed >> i & 1);
		r->miss_at = fc->pmiss_at[i];
		/*
		 * A plain record (goto-only hops, then a plain output, or dec_ttl and
		 * output) is finished by the lookup.  The last hop is never a plain
		 * goto, so its bit in plain says "dec_ttl first" (stage C).
		 */
		r->out = !r->miss && nh > 0 && plain == (uint8_t)((1u << (nh - 1)) - 1) ? out : 0;
		r->plain = (uint8_t)(plain | (r->out != 0 && ttl_out ? 1u << (nh - 1) : 0));
		r->ll = ll;
		r->used = fc->pform[i];
	}
}
