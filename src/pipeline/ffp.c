/* SPDX-License-Identifier: BSD-3-Clause */
/* The fast forwarding path: LUTs, journal, cost model, marks (see ffp.h). */
#include "ffp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- worker side ---- */

/*
 * Zeroed memory for a large per-worker table, on transparent huge pages
 * where the kernel offers them: probes land anywhere in a few MB, and with
 * 4 KB pages nearly every one also misses the TLB.  mmap, not malloc: a
 * heap chunk may reuse pages already faulted in small.
 */
#define HUGE_SZ ((size_t)2 << 20)
static size_t
table_len(size_t size)
{
	return (size + HUGE_SZ - 1) / HUGE_SZ * HUGE_SZ;
}

static void *
table_alloc(size_t size)
{
	size_t len = table_len(size);
	uint8_t *m = mmap(NULL, len + HUGE_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	/* Keep a 2 MB-aligned window of len bytes; give back the rest. */
	uint8_t *p = (uint8_t *)(((uintptr_t)m + HUGE_SZ - 1) & ~(uintptr_t)(HUGE_SZ - 1));
	if (p > m)
		munmap(m, (size_t)(p - m));
	if (m + len + HUGE_SZ > p + len)
		munmap(p + len, (size_t)(m + len + HUGE_SZ - (p + len)));
#ifdef MADV_HUGEPAGE
	(void)madvise(p, len, MADV_HUGEPAGE); /* advice only: 4 KB pages work too */
#endif
	return p; /* anonymous mappings are zeroed */
}

static void
table_free(void *p, size_t size)
{
	if (p != NULL)
		munmap(p, table_len(size));
}

struct ffp_ctx *
pl_ffp_ctx_create(void)
{
	struct ffp_ctx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	memset(f->lut_of, -1, sizeof(f->lut_of));
	/* LUTs are allocated up front: the datapath never allocates. */
	for (unsigned i = 0; i < FFP_LUTS_MAX; i++) {
		f->luts[i] = table_alloc(sizeof(struct ffp_lut));
		if (f->luts[i] == NULL) {
			pl_ffp_ctx_destroy(f);
			return NULL;
		}
	}
	f->path = table_alloc(sizeof(struct ffp_path));
	if (f->path == NULL) {
		pl_ffp_ctx_destroy(f);
		return NULL;
	}
	f->pobs.on = 1; /* judged after the first window */
	f->lat_mult = sl_lat_ns_mult(sl_pipeline_tsc_hz());
	return f;
}

void
pl_ffp_ctx_destroy(struct ffp_ctx *f)
{
	if (f == NULL)
		return;
	for (unsigned i = 0; i < FFP_LUTS_MAX; i++)
		table_free(f->luts[i], sizeof(struct ffp_lut));
	table_free(f->path, sizeof(struct ffp_path));
	free(f);
}

/* A flow's marks, as the control thread may change them at any time. */
static inline bool
flow_ll(const struct sl_flow *f)
{
	return __atomic_load_n(&f->ll, __ATOMIC_RELAXED) != 0;
}

static inline bool
rule_matches(const struct ffp_jent *e, const uint8_t *key, unsigned size)
{
	uint64_t diff = 0;

	for (unsigned i = 0; i < size; i += 8) {
		uint64_t k, m, v;
		memcpy(&k, key + i, 8);
		memcpy(&m, e->mask + i, 8);
		memcpy(&v, e->value + i, 8);
		diff |= (k & m) ^ v;
	}
	return diff == 0;
}

static inline void
rec_drop(struct ffp_lut *lut, struct ffp_rec *r)
{
	r->used = 0;
	lut->st.entries--;
	lut->st.invalidations++;
}

/*
 * A flow's instructions never change (a modify makes a new flow), so a record
 * can hold what they do when that is simple: the instructions stage then
 * needs neither the flow's action list nor a call (pipeline_run.c).
 */
static void
rec_fast(struct ffp_rec *r, const struct sl_flow *f)
{
	r->used = pl_ffp_flow_kind(f, &r->arg);
}

/* Precedence of a low-latency entry in table copy @pt: priority, or prefix length (lpm). */
static uint16_t
flow_eff(const struct pl_dtable *pt, const struct sl_flow *f)
{
	if (pt->tbl->params.kind != SL_TABLE_LPM)
		return f->priority;
	for (unsigned i = 0; i < f->n_match; i++) {
		if (!sl_field_equal(&f->match[i].f, &pt->layout.fields[0]))
			continue;
		unsigned bits = 0;
		for (unsigned b = 0; b < SL_FIELD_SIZE_MAX; b++)
			bits += (unsigned)__builtin_popcount(f->match[i].mask[b]);
		return (uint16_t)bits;
	}
	return 0;
}

/*
 * Verify a record older than the live version (ffp.h).  Returns the entry
 * to use, or NULL when the lane must be searched in the table (the record
 * was dropped, or the search was done here: *searched, hit in ctx->hits).
 */
static const struct sl_flow *
verify(const struct pl_dtable *pt, struct sl_pipeline_ctx *ctx, struct ffp_lut *lut,
       struct ffp_rec *r, unsigned lane, bool *searched, bool *found)
{
	const struct ffp_journal *j = pt->ffpj;
	unsigned size = pt->layout.key_size;
	bool lpm = pt->tbl->params.kind == SL_TABLE_LPM;
	const struct sl_flow *f = r->flow;
	bool need_search = false;
	uint32_t k, start;

	lut->st.verifications++;
	*searched = *found = false;
	if (j == NULL || r->seq < j->floor) {
		rec_drop(lut, r);
		return NULL;
	}
	start = j->n > FFP_JOURNAL ? j->n - FFP_JOURNAL : 0;
	/* First change after the record (seq is non-decreasing along the journal). */
	uint32_t lo = start, hi = j->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (j->e[mid % FFP_JOURNAL].seq <= r->seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	/*
	 * Cost model (seed 4.2.3): walking the list costs a comparison per
	 * change; when that exceeds one table search, search instead.
	 */
	uint64_t list_cyc = (uint64_t)(j->n - lo) * pt->ffp_cmp_cyc;
	if (list_cyc > pt->ffp_search_cyc)
		need_search = true;
	for (k = lo; k < j->n && !need_search; k++) {
		const struct ffp_jent *e = &j->e[k % FFP_JOURNAL];

		if (!e->add) {
			if (e->flow != f)
				continue; /* removing another rule cannot make this one lose */
			const struct ffp_jent *nx = &j->e[(k + 1) % FFP_JOURNAL];
			if (k + 1 < j->n && nx->add && nx->seq == e->seq &&
			    !memcmp(nx->value, e->value, size) &&
			    !memcmp(nx->mask, e->mask, size)) {
				f = nx->flow; /* modified: the same rule with new instructions */
				k++;
				continue;
			}
			rec_drop(lut, r); /* deleted (or timed out) */
			return NULL;
		}
		if (e->flow == f)
			continue;
		/* An extra rule: can it beat the cached entry for this key? */
		if ((lpm ? e->eff > r->eff : e->eff >= r->eff) && rule_matches(e, r->key, size))
			need_search = true;
	}
	if (need_search) {
		void *hit = NULL;
		uint64_t one = UINT64_C(1) << lane;
		*searched = true;
		*found = sl_table_lookup_burst(pt->tbl, ctx->keyp, one, ctx->hits) & one;
		if (*found)
			hit = ctx->hits[lane];
		if (*found && flow_ll(hit)) {
			if (hit != r->flow)
				lut->st.replacements++;
			r->flow = hit;
			r->eff = flow_eff(pt, hit);
			rec_fast(r, hit);
			r->seq = pt->version;
		} else {
			rec_drop(lut, r);
		}
		return NULL;
	}
	/* No extra rule wins: the list is cleared (the record is current again). */
	if (!flow_ll(f)) {
		rec_drop(lut, r);
		return NULL;
	}
	if (r->flow != f) {
		r->flow = f;
		rec_fast(r, f);
	}
	r->seq = pt->version;
	return f;
}

uint64_t
pl_ffp_lookup(const struct pl_dtable *pt, struct sl_pipeline_ctx *ctx, unsigned t, uint64_t lanes,
	      uint64_t *found_out)
{
	struct ffp_ctx *fc = ctx->ffp;
	unsigned size = pt->layout.key_size, i;
	uint64_t done = 0, found = 0;
	int li = fc->lut_of[t];

	*found_out = 0;
	if (li < 0)
		return 0; /* nothing filled yet: every lane continues in the pipeline */
	struct ffp_lut *lut = fc->luts[li];
	uint64_t hits = 0, misses = 0;
	uint32_t version = pt->version;
	/*
	 * Stage A: hash; prefetch both records of the set (one aligned
	 * 128-byte pair), so that stage B waits for one round of memory
	 * accesses.  No separate tag array: once the records are fetched
	 * anyway, a tag is one more line per lane (measured: dropping it took
	 * the server scenario's burst p50 from 1,868 to 1,803 ns in bench_ffp,
	 * no change for 20 % mixed traffic).  A miss (a normal packet still
	 * flagged) fetches two lines it does not use: bandwidth, not latency.
	 */
	SL_FOR_EACH_LANE (i, lanes) {
		uint32_t h = dc_hash(ctx->keys[i], size, (uint8_t)t);
		uint32_t set = h & (FFP_SETS - 1);
		fc->rset[i] = set;
		sl_prefetch0(&lut->rec[set * FFP_WAYS]);
		sl_prefetch0(&lut->rec[set * FFP_WAYS + 1]);
	}
	/* Stage B: whole keys of the ways in use. */
	SL_FOR_EACH_LANE (i, lanes) {
		uint32_t set = fc->rset[i];
		struct ffp_rec *s = &lut->rec[set * FFP_WAYS], *r = NULL;
		unsigned w;

		fc->rrec[i] = NULL;
		for (w = 0; w < FFP_WAYS; w++)
			if (s[w].used && dc_key_equal(s[w].key, ctx->keys[i], size)) {
				r = &s[w];
				break;
			}
		if (r == NULL) {
			misses++;
			continue;
		}
		if (lut->lru[set] != (uint8_t)(w ^ 1))
			lut->lru[set] = (uint8_t)(w ^ 1); /* no store (dirty line) when unchanged */
		const struct sl_flow *f;
		if (sl_likely(r->seq == version)) {
			/*
			 * The table has not changed since: still its winner.  Its
			 * mark is not read here (the flow's line is only
			 * prefetched): the instructions stage reads it for every
			 * hit anyway, and drops this record when it was cleared
			 * (pl_ffp_unmarked); the decision is the table's either way.
			 */
			f = r->flow;
			/* With write intent: its counters are credited next. */
			__builtin_prefetch(f, 1, 3);
			__builtin_prefetch((const uint8_t *)f + 64, 1, 3);
			fc->rrec[i] = r;
		} else {
			bool searched, hit;
			f = verify(pt, ctx, lut, r, i, &searched, &hit);
			if (f == NULL) {
				misses++;
				if (searched) {
					done |= UINT64_C(1) << i;
					found |= (uint64_t)hit << i;
				}
				continue;
			}
			fc->rrec[i] = r;
		}
		hits++;
		ctx->hits[i] = (void *)f;
		done |= UINT64_C(1) << i;
		found |= UINT64_C(1) << i;
	}
	lut->st.hits += hits;
	lut->st.misses += misses;
	*found_out = found;
	return done;
}

void
pl_ffp_observe_window(const struct pl_dtable *pt, struct ffp_obs *o)
{
	/* Hysteresis: on above the threshold, off below it minus 1/16. */
	uint32_t frac = (uint32_t)((uint64_t)o->win * 1024 / o->n);
	if (!o->on && frac > pt->ffp_adapt_thr)
		o->on = 1;
	else if (o->on && frac + 64 < pt->ffp_adapt_thr)
		o->on = 0;
	o->n = o->win = 0;
}

void
pl_ffp_unmarked(struct sl_pipeline_ctx *ctx, unsigned t, unsigned lane)
{
	struct ffp_ctx *fc = ctx->ffp;
	struct ffp_lut *lut = fc->luts[fc->lut_of[t]];
	struct ffp_rec *r = fc->rrec[lane];

	if (r != NULL && r->used && r->flow == ctx->hits[lane])
		rec_drop(lut, r);
}

void
pl_ffp_populate(const struct pl_dtable *pt, struct sl_pipeline_ctx *ctx, unsigned t, uint64_t lanes)
{
	struct ffp_ctx *fc = ctx->ffp;
	unsigned size = pt->layout.key_size, i;
	int li = fc->lut_of[t];

	SL_FOR_EACH_LANE (i, lanes) {
		const struct sl_flow *f = ctx->hits[i];
		if (!flow_ll(f))
			continue;
		if (li < 0) {
			if (fc->n_luts == FFP_LUTS_MAX) {
				fc->lut_refused++;
				return;
			}
			li = (int)fc->n_luts++;
			fc->lut_of[t] = (int8_t)li;
		}
		struct ffp_lut *lut = fc->luts[li];
		uint32_t h = dc_hash(ctx->keys[i], size, (uint8_t)t), set = h & (FFP_SETS - 1);
		struct ffp_rec *s = &lut->rec[set * FFP_WAYS], *r = NULL;
		unsigned w;

		for (w = 0; w < FFP_WAYS; w++)
			if (s[w].used && dc_key_equal(s[w].key, ctx->keys[i], size)) {
				r = &s[w]; /* refresh (a verification dropped nothing, or a race in the burst) */
				break;
			}
		if (r == NULL) {
			for (w = 0; w < FFP_WAYS; w++)
				if (!s[w].used)
					break;
			if (w == FFP_WAYS) {
				w = lut->lru[set];
				lut->st.evictions++;
			} else {
				lut->st.entries++;
			}
			r = &s[w];
			lut->st.inserts++;
		}
		lut->lru[set] = (uint8_t)(w ^ 1);
		memcpy(r->key, ctx->keys[i], size);
		r->flow = f;
		r->eff = flow_eff(pt, f);
		rec_fast(r, f);
		r->seq = pt->version;
	}
}

void
pl_ffp_burst_end(struct sl_pipeline_ctx *ctx, unsigned n, uint64_t t0)
{
	struct ffp_ctx *fc = ctx->ffp;
	uint64_t ns = sl_cycles_to_ns(sl_pipeline_tsc() - t0, fc->lat_mult);
	unsigned n_ll = (unsigned)__builtin_popcountll(ctx->ll_lanes & sl_lanes_first(n));

	fc->cls.packets[1] += n_ll;
	fc->cls.packets[0] += n - n_ll;
	if (n_ll)
		sl_ffp_hist_add(&fc->cls.latency[1], ns, n_ll);
	if (n > n_ll)
		sl_ffp_hist_add(&fc->cls.latency[0], ns, n - n_ll);
}

bool
sl_pipeline_ll_ever(const struct sl_pipeline *pl)
{
	return __atomic_load_n(&pl->accel.ll_ever, __ATOMIC_ACQUIRE);
}

uint64_t
sl_pipeline_ll_lanes(const struct sl_pipeline_ctx *ctx)
{
	return ctx->ll_lanes;
}

void
sl_pipeline_ll_lanes_set(struct sl_pipeline_ctx *ctx, uint64_t lanes)
{
	ctx->ll_lanes = lanes;
}

void
sl_pipeline_ffp_lut_stats(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
			  unsigned table_id, struct sl_ffp_lut_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (table_id >= SL_TABLES_MAX)
		return;
	for (unsigned c = 0; c < n_ctxs; c++) {
		const struct ffp_ctx *fc = ctxs[c]->ffp;
		if (fc == NULL || fc->lut_of[table_id] < 0)
			continue;
		const struct sl_ffp_lut_stats *s = &fc->luts[fc->lut_of[table_id]]->st;
		st->entries += s->entries;
		st->hits += s->hits;
		st->misses += s->misses;
		st->verifications += s->verifications;
		st->invalidations += s->invalidations;
		st->replacements += s->replacements;
		st->evictions += s->evictions;
		st->inserts += s->inserts;
	}
}

void
sl_pipeline_ffp_class_stats(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
			    struct sl_ffp_class_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned c = 0; c < n_ctxs; c++) {
		const struct ffp_ctx *fc = ctxs[c]->ffp;
		if (fc == NULL)
			continue;
		for (unsigned k = 0; k < 2; k++) {
			const struct sl_ffp_hist *h = &fc->cls.latency[k];
			st->packets[k] += fc->cls.packets[k];
			st->latency[k].count += h->count;
			st->latency[k].sum_ns += h->sum_ns;
			if (h->max_ns > st->latency[k].max_ns)
				st->latency[k].max_ns = h->max_ns;
			for (unsigned b = 0; b < SL_FFP_HIST_BUCKETS; b++)
				st->latency[k].bucket[b] += h->bucket[b];
		}
	}
}

uint64_t
sl_ffp_hist_quantile_ns(const struct sl_ffp_hist *h, double q)
{
	uint64_t total = 0, need, seen = 0;

	for (unsigned b = 0; b < SL_FFP_HIST_BUCKETS; b++)
		total += h->bucket[b];
	if (total == 0)
		return 0;
	need = (uint64_t)(q * (double)total);
	if (need == 0)
		need = 1;
	for (unsigned b = 0; b < SL_FFP_HIST_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen < need)
			continue;
		if (b < 32)
			return b;
		unsigned e = b / 32 + 4, m = b % 32;
		uint64_t lo = (uint64_t)(32 + m) << (e - 5), w = UINT64_C(1) << (e - 5);
		uint64_t mid = lo + w / 2;
		return mid > h->max_ns ? h->max_ns : mid;
	}
	return h->max_ns;
}

/* ---- control side ---- */

static struct ffp_tinfo *
tinfo(struct pl_table *pt)
{
	if (pt->ffp == NULL) {
		pt->ffp = calloc(1, sizeof(*pt->ffp));
		/* Without bookkeeping there is no journal, so the table never gets a LUT. */
	}
	return pt->ffp;
}

static bool
kind_eligible(const struct pl_table *pt, const struct pl_dtable *dt)
{
	return (pt->spec.kind == SL_TABLE_MASK || pt->spec.kind == SL_TABLE_LPM) &&
	       dt->layout.key_size > 0 && dt->layout.key_size <= FFP_KEY_MAX;
}

/* One low-latency entry more (@add) or less in the table, plain or not. */
static void
ll_count(struct ffp_tinfo *ti, const struct sl_flow *f, bool add)
{
	uint8_t arg;
	bool plain = pl_ffp_flow_kind(f, &arg) != FFP_REC_ANY;

	if (add) {
		ti->n_ll++;
		ti->n_ll_plain += plain;
		return;
	}
	if (ti->n_ll > 0)
		ti->n_ll--;
	if (plain && ti->n_ll_plain > 0)
		ti->n_ll_plain--;
}

void
pl_ffp_journal(struct sl_pipeline *pl, struct pl_table *pt, const struct sl_rule *r,
	       const struct sl_flow *f, bool add)
{
	struct pl_dtable *sb = pl_standby(pt);
	struct ffp_tinfo *ti = tinfo(pt);

	(void)pl;
	if (ti == NULL)
		return;
	if (f->ll)
		ll_count(ti, f, add);
	if (ti->broken || !kind_eligible(pt, sb))
		return;
	if (sb->ffpj == NULL) {
		sb->ffpj = calloc(1, sizeof(*sb->ffpj));
		if (sb->ffpj == NULL) {
			ti->broken = true;
			return;
		}
	}
	struct ffp_journal *j = sb->ffpj;
	struct ffp_jent *e = &j->e[j->n % FFP_JOURNAL];
	uint32_t seq = pt->version_seq + 1 ? pt->version_seq + 1 : 1; /* table_changed follows */

	if (j->n >= FFP_JOURNAL && e->seq > j->floor)
		j->floor = e->seq; /* records that needed the overwritten change are dropped */
	e->seq = seq;
	e->add = add;
	e->flow = f;
	memcpy(e->value, r->value, FFP_KEY_MAX);
	memcpy(e->mask, r->mask, FFP_KEY_MAX);
	if (pt->spec.kind == SL_TABLE_LPM) {
		unsigned bits = 0;
		for (unsigned b = 0; b < sb->layout.key_size; b++)
			bits += (unsigned)__builtin_popcount(r->mask[b]);
		e->eff = (uint16_t)bits;
	} else {
		e->eff = (uint16_t)r->priority;
	}
	j->n++;
}

void
pl_ffp_reset(struct pl_table *pt)
{
	struct pl_dtable *sb = pl_standby(pt);

	/* A new table object (new layout): no record from before can be verified. */
	if (sb->ffpj != NULL)
		sb->ffpj->floor = pt->version_seq + 1;
}

/* Sample keys for the cost model: rule values with random don't-care bits. */
struct sample_arg {
	uint8_t (*keys)[SL_KEY_MAX];
	unsigned n, cap, size;
	uint64_t seen;
	uint64_t rng;
};

/*
 * Keys from rules drawn uniformly over the whole table (reservoir sampling):
 * the first rules the iterator yields are often of one mask (added
 * together), which makes a mask table's search look cheaper than it is.
 */
static int
sample_rule(const struct sl_rule *r, void *arg)
{
	struct sample_arg *a = arg;
	unsigned slot = a->n;

	a->seen++;
	if (slot >= a->cap) {
		a->rng = a->rng * 6364136223846793005ull + 1442695040888963407ull;
		slot = (unsigned)((a->rng >> 33) % a->seen);
		if (slot >= a->cap)
			return 0;
	} else {
		a->n++;
	}
	for (unsigned b = 0; b < a->size; b++) {
		a->rng = a->rng * 6364136223846793005ull + 1442695040888963407ull;
		a->keys[slot][b] = (uint8_t)((r->value[b] & r->mask[b]) |
					     ((uint8_t)(a->rng >> 33) & ~r->mask[b]));
	}
	return 0;
}

#define MEASURE_KEYS 32
#define MEASURE_REPS 32

/* Cost model (seed 4.2.2): per-key table search cost vs LUT probe cost, in TSC. */
static void
measure(struct pl_table *pt, const struct pl_dtable *sb, struct ffp_tinfo *ti)
{
	static uint8_t keys[MEASURE_KEYS][SL_KEY_MAX] __attribute__((aligned(64)));
	static struct ffp_rec recs[256 * FFP_WAYS];
	const uint8_t *keyp[MEASURE_KEYS];
	void *hits[MEASURE_KEYS];
	struct sample_arg a = {.keys = keys,
			       .cap = MEASURE_KEYS,
			       .size = sb->layout.key_size,
			       .rng = 0x5eed ^ pt->spec.table_id};
	struct sl_table_stats st;
	unsigned size = sb->layout.key_size;
	uint64_t best_s = UINT64_MAX, best_p = UINT64_MAX, best_c = UINT64_MAX;
	volatile uint64_t sink = 0;

	memset(keys, 0, sizeof(keys));
	sl_table_iterate(sb->tbl, sample_rule, &a);
	for (unsigned i = a.n; i < MEASURE_KEYS; i++)
		memcpy(keys[i], keys[a.n ? i % a.n : 0], SL_KEY_MAX);
	for (unsigned i = 0; i < MEASURE_KEYS; i++)
		keyp[i] = keys[i];
	memset(recs, 0, sizeof(recs));
	for (unsigned i = 0; i < MEASURE_KEYS; i++) { /* every key present: the hit path */
		uint32_t h = dc_hash(keys[i], size, 0);
		unsigned slot = (h & 255) * FFP_WAYS + (i & 1);
		recs[slot].used = 1;
		memcpy(recs[slot].key, keys[i], size);
	}
	/* Best of several rounds: the least disturbed by other work on the core. */
	for (unsigned rep = 0; rep < MEASURE_REPS; rep++) {
		uint64_t t0 = sl_pipeline_tsc();
		sink += sl_table_lookup_burst(sb->tbl, keyp, UINT64_MAX >> (64 - MEASURE_KEYS),
					      hits);
		uint64_t t1 = sl_pipeline_tsc();
		for (unsigned i = 0; i < MEASURE_KEYS; i++) {
			uint32_t h = dc_hash(keys[i], size, 0);
			unsigned set = (h & 255) * FFP_WAYS;
			for (unsigned w = 0; w < FFP_WAYS; w++)
				sink += recs[set + w].used &&
					dc_key_equal(recs[set + w].key, keys[i], size);
		}
		uint64_t t2 = sl_pipeline_tsc();
		for (unsigned i = 0; i < MEASURE_KEYS; i++) {
			struct ffp_jent e;
			memcpy(e.value, keys[(i + 1) % MEASURE_KEYS], FFP_KEY_MAX);
			memcpy(e.mask, keys[(i + 7) % MEASURE_KEYS], FFP_KEY_MAX);
			sink += rule_matches(&e, keys[i], size);
		}
		uint64_t t3 = sl_pipeline_tsc();
		if (t1 - t0 < best_s)
			best_s = t1 - t0;
		if (t2 - t1 < best_p)
			best_p = t2 - t1;
		if (t3 - t2 < best_c)
			best_c = t3 - t2;
	}
	(void)sink;
	/* Per key, in 1/16 cycles (a few-cycle probe needs the resolution). */
	ti->search_cyc = best_s * 16 / MEASURE_KEYS + 1;
	ti->probe_cyc = best_p * 16 / MEASURE_KEYS + 1;
	ti->cmp_cyc = best_c * 16 / MEASURE_KEYS + 1;
	/*
	 * A LUT pays when hits save more than misses cost (seed 4.2.2: W =
	 * t_pipeline - t_fp on a hit, -t_fp on a miss): with a fraction p of
	 * probes hitting, p * (search - probe) > (1 - p) * probe, i.e. p >
	 * probe / search.  Keep a LUT when the search costs more than 1.5 probes
	 * plus 1 ns (for the lane bookkeeping the timing loop does not see):
	 * then it pays as soon as two thirds of the probes hit.  Tables whose
	 * search is only a few ns (the IoV scenario's WSM table, small Ethernet
	 * tables) get none, so their packets never pay a probe.
	 */
	uint64_t hz = sl_pipeline_tsc_hz(), margin = 16 * (hz ? hz / 1000000000 : 2); /* 1 ns */
	ti->pays = ti->search_cyc > ti->probe_cyc + ti->probe_cyc / 2 + margin;
	sl_table_stats_read(sb->tbl, &st);
	ti->measured_entries = st.n_entries ? st.n_entries : 1;
}

/* What a LUT hit saves, TSC cycles x 16: the search, and the plain entries' walk. */
static uint64_t
hit_gain(const struct ffp_tinfo *ti)
{
	uint64_t hz = sl_pipeline_tsc_hz(), ns16 = 16 * (hz ? hz / 1000000000 : 2);

	if (ti->n_ll == 0)
		return ti->search_cyc;
	return ti->search_cyc + FFP_PLAIN_SAVE_NS * ns16 * ti->n_ll_plain / ti->n_ll;
}

void
pl_ffp_changed(struct sl_pipeline *pl, struct pl_table *pt, struct pl_dtable *sb)
{
	struct ffp_tinfo *ti = pt->ffp;
	struct sl_table_stats st;

	sb->ffp_on = sb->ffp_adapt = false;
	if (ti == NULL || ti->broken || sb->tbl == NULL || sb->ffpj == NULL)
		return;
	ti->eligible = kind_eligible(pt, sb);
	if (!ti->eligible || ti->n_ll == 0)
		return;
	sl_table_stats_read(sb->tbl, &st);
	/* Measured at creation, after a commit (new snapshot), and when the size doubles or halves. */
	if (ti->measured_entries == 0 || pt->commit || st.n_entries >= 2 * ti->measured_entries ||
	    2 * st.n_entries < ti->measured_entries)
		measure(pt, sb, ti);
	sb->ffp_search_cyc = ti->search_cyc;
	sb->ffp_cmp_cyc = ti->cmp_cyc;
	sb->ffp_on = !pl->accel.ffp_off && (ti->pays || pl->accel.ffp_no_model);
	/*
	 * The static rule above assumes two thirds of the probes hit.  The
	 * design's gain (hits save search - probe, misses cost a probe) is
	 * positive when the hit fraction p exceeds probe / search: a table
	 * whose search costs more than a probe but not 1.5 probes still pays
	 * when nearly every low-latency lane reaching it wins a low-latency
	 * entry.  Workers observe that fraction (pl_ffp_observe) and turn
	 * their LUT on above probe / search + 10 %, where a hit on a plain entry
	 * saves its instruction walk too (hit_gain).
	 */
	uint64_t gain = hit_gain(ti);
	if (!pl->accel.ffp_off && !sb->ffp_on && gain > ti->probe_cyc) {
		uint64_t thr = ti->probe_cyc * 1024 * 11 / 10 / gain;
		if (thr < 1000) {
			sb->ffp_adapt = true;
			sb->ffp_adapt_thr = (uint16_t)thr;
		}
	}
}

void
pl_ffp_catch_up(struct pl_table *pt, struct pl_dtable *dt, const struct pl_dtable *lv)
{
	struct ffp_tinfo *ti = pt->ffp;

	dt->ffp_on = dt->ffp_adapt = false;
	dt->ffp_search_cyc = lv->ffp_search_cyc;
	dt->ffp_cmp_cyc = lv->ffp_cmp_cyc;
	dt->ffp_adapt_thr = lv->ffp_adapt_thr;
	if (lv->ffpj == NULL) {
		if (dt->ffpj != NULL)
			dt->ffpj->floor =
				UINT32_MAX; /* cannot happen: journals start on the standby */
		return;
	}
	if (dt->ffpj == NULL) {
		dt->ffpj = malloc(sizeof(*dt->ffpj));
		if (dt->ffpj == NULL) {
			if (ti != NULL)
				ti->broken = true;
			return;
		}
	}
	memcpy(dt->ffpj, lv->ffpj, sizeof(*dt->ffpj));
	dt->ffp_on = lv->ffp_on;
	dt->ffp_adapt = lv->ffp_adapt;
}

void
pl_ffp_table_free(struct pl_table *pt)
{
	free(pt->copy[0].ffpj);
	free(pt->copy[1].ffpj);
	pt->copy[0].ffpj = pt->copy[1].ffpj = NULL;
	free(pt->ffp);
	pt->ffp = NULL;
}

/* Change @f's low-latency bits to @ll (the table's bookkeeping follows). */
static bool
flow_ll_set(struct sl_pipeline *pl, struct pl_table *pt, struct sl_flow *f, uint8_t ll)
{
	struct ffp_tinfo *ti = tinfo(pt);
	bool was = f->ll != 0, now = ll != 0;

	if (f->ll == ll)
		return false;
	if (ll)
		__atomic_store_n(&pl->accel.ll_ever, true, __ATOMIC_RELEASE);
	__atomic_store_n(&f->ll, ll, __ATOMIC_RELAXED);
	if (was != now) /* path records holding @f go stale: their ll bit (ffp_path.c, path_sig) */
		__atomic_fetch_add(&pl->accel.ll_epoch, 1, __ATOMIC_RELEASE);
	if (ti != NULL && was != now) {
		const struct pl_dtable *sb = pl_standby(pt);
		if (sb->miss != f) /* beside-the-table miss entries are not counted */
			ll_count(ti, f, now);
	}
	pl_table_touch(pl, pt);
	return true;
}

unsigned
sl_pipeline_flow_set_ll(struct sl_pipeline *pl, const struct sl_flow_filter *flt, bool on)
{
	unsigned first = flt->table_id == 255 ? 0 : flt->table_id;
	unsigned last = flt->table_id == 255 ? SL_TABLES_MAX - 1 : flt->table_id;
	unsigned n = 0;

	if (first >= SL_TABLES_MAX)
		return 0;
	for (unsigned t = first; t <= last; t++) {
		struct pl_table *pt = &pl->tables[t];
		for (unsigned i = 0; i < pt->n_flows; i++) {
			struct sl_flow *f = pt->flows[i];
			if (!sl_flow_filter_match(f, flt))
				continue;
			flow_ll_set(pl, pt, f,
				    on ? (uint8_t)(f->ll | SL_LL_MARKED)
				       : (uint8_t)(f->ll & ~SL_LL_MARKED));
			n++;
		}
	}
	return n;
}

void
sl_pipeline_ffp_enable(struct sl_pipeline *pl, bool on)
{
	pl->accel.ffp_off = !on;
	for (unsigned t = 0; t < SL_TABLES_MAX; t++)
		pl_table_touch(pl, &pl->tables[t]);
	sl_pipeline_publish(pl);
}

void
sl_pipeline_ffp_cost_model(struct sl_pipeline *pl, bool on)
{
	pl->accel.ffp_no_model = !on;
	for (unsigned t = 0; t < SL_TABLES_MAX; t++)
		pl_table_touch(pl, &pl->tables[t]);
	sl_pipeline_publish(pl);
}

void
sl_pipeline_ffp_auto_set(struct sl_pipeline *pl, const struct sl_ffp_auto *a)
{
	pl->accel.ffp_auto = *a;
	pl->accel.ffp_auto_last = 0; /* rates count from the next check */
	if (a->enabled)
		return;
	for (unsigned t = 0; t < SL_TABLES_MAX; t++) {
		struct pl_table *pt = &pl->tables[t];
		for (unsigned i = 0; i < pt->n_flows; i++)
			if (pt->flows[i]->ll & SL_LL_AUTO)
				flow_ll_set(pl, pt, pt->flows[i],
					    (uint8_t)(pt->flows[i]->ll & ~SL_LL_AUTO));
	}
}

void
sl_pipeline_ffp_auto_get(const struct sl_pipeline *pl, struct sl_ffp_auto *a)
{
	*a = pl->accel.ffp_auto;
}

/*
 * Auto-promotion (seed 4.1): permanent or long-timeout entries hit at least
 * min_pps times a second since the last check become low-latency; an
 * auto-promoted entry hit less than half that is demoted.  Called about once
 * a second with the flow timeouts (sl_pipeline_flow_expire).
 */
void
pl_ffp_promote(struct sl_pipeline *pl, uint64_t now)
{
	const struct sl_ffp_auto *a = &pl->accel.ffp_auto;
	uint64_t hz = sl_pipeline_tsc_hz();

	if (!a->enabled || hz == 0)
		return;
	double secs =
		pl->accel.ffp_auto_last ? (double)(now - pl->accel.ffp_auto_last) / (double)hz : 0;
	pl->accel.ffp_auto_last = now;
	if (secs <= 0)
		return;
	for (unsigned t = 0; t < SL_TABLES_MAX; t++) {
		struct pl_table *pt = &pl->tables[t];
		for (unsigned i = 0; i < pt->n_flows; i++) {
			struct sl_flow *f = pt->flows[i];
			uint64_t pk = sl_flow_packets(f);
			double pps = (double)(pk - f->ffp_last_packets) / secs;
			bool long_lived =
				(f->idle_timeout == 0 || f->idle_timeout >= a->min_timeout) &&
				(f->hard_timeout == 0 || f->hard_timeout >= a->min_timeout);
			f->ffp_last_packets = pk;
			if (!(f->ll & SL_LL_AUTO) && long_lived && pps >= a->min_pps)
				flow_ll_set(pl, pt, f, (uint8_t)(f->ll | SL_LL_AUTO));
			else if ((f->ll & SL_LL_AUTO) && pps < a->min_pps / 2.0)
				flow_ll_set(pl, pt, f, (uint8_t)(f->ll & ~SL_LL_AUTO));
		}
	}
}

void
sl_pipeline_ffp_table_info(const struct sl_pipeline *pl, unsigned table_id,
			   struct sl_ffp_table_info *info)
{
	memset(info, 0, sizeof(*info));
	if (table_id >= SL_TABLES_MAX)
		return;
	const struct pl_table *pt = &pl->tables[table_id];
	const struct ffp_tinfo *ti = pt->ffp;
	uint64_t hz = sl_pipeline_tsc_hz();

	info->active = pl_live(pt)->ffp_on;
	info->adaptive = pl_live(pt)->ffp_adapt;
	info->adapt_permille = (uint16_t)(pl_live(pt)->ffp_adapt_thr * 1000u / 1024u);
	if (ti == NULL)
		return;
	info->eligible = kind_eligible(pt, pl_live(pt));
	info->pays = ti->pays;
	info->n_ll = ti->n_ll;
	info->n_ll_plain = ti->n_ll_plain;
	if (hz) {
		info->search_ns = (uint32_t)(ti->search_cyc * 1000000000ull / 16 / hz);
		info->probe_ns = (uint32_t)(ti->probe_cyc * 1000000000ull / 16 / hz);
	}
}
