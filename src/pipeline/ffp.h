/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fast forwarding path (FFP), private to the pipeline (the composite-pipeline design,
 * section 4; docs/ffp.md).  Public API: pipeline.h ("fast forwarding path").
 *
 * Per worker, one LUT per mask or lpm table that has low-latency entries and
 * whose search costs more than a LUT probe (the cost model, measured on the
 * control thread).  Exact and direct tables get none: the FFP shares them
 * with the pipeline.  A LUT maps the table's extracted key (exactly the
 * bytes its match fields cover: the "restricted-field hash") to the
 * low-latency entry that won for that key.
 *
 * Packets enter with the low-latency flag set (ctx->ll_lanes).  At each
 * table, lanes still low-latency probe the LUT first; a hit skips the table
 * search, a miss continues at that same table in the pipeline.  A lane whose
 * table search hits a low-latency entry fills the LUT (packet-driven, seed
 * Fig. 5); hitting a normal entry clears the lane's flag.
 *
 * Correctness under change.  A record holds the table version it was filled
 * (or last verified) at.  Records at the live version are used directly.
 * Older ones are verified against the table's journal: every add and delete
 * since, kept in each left-right copy (struct ffp_journal), immutable while
 * the copy is live.  Added rules of higher (mask) or longer (lpm) precedence
 * that match the key are the record's extra rules; a delete of its entry
 * invalidates it, a modify (delete + add of the same rule) repairs it.  When
 * the list is cheaper than a table search (cost model), it is walked; when
 * an extra rule matches, or the walk would cost more, the table is searched
 * and the record is replaced (winner low-latency), invalidated (winner
 * normal) or refreshed.  Records older than the journal's floor are dropped.
 */
#ifndef SL_PIPELINE_FFP_H
#define SL_PIPELINE_FFP_H

#include "pipeline_priv.h"

#include <stddef.h>

#define FFP_KEY_MAX DC_KEY_MAX /* larger keys get no LUT */
#define FFP_JOURNAL 128        /* changes kept per table copy */
#define FFP_LUTS_MAX 16        /* LUTs per worker (tables beyond: no LUT, counted) */
#define FFP_WAYS 2             /* set-associative, LRU between the two ways */
#define FFP_SETS 4096          /* 8,192 records (512 KB) per LUT */

struct ffp_jent {
	uint32_t seq; /* table version the change belongs to */
	uint8_t add;  /* else delete */
	uint8_t pad;
	uint16_t eff;     /* precedence: priority (mask) or prefix length (lpm) */
	const void *flow; /* identity only: never dereferenced */
	uint8_t value[FFP_KEY_MAX];
	uint8_t mask[FFP_KEY_MAX];
};

struct ffp_journal {
	uint32_t n;     /* entries ever appended; entry k is at e[k % FFP_JOURNAL] */
	uint32_t floor; /* records older than this version cannot be verified */
	struct ffp_jent e[FFP_JOURNAL];
};

/* Control-thread bookkeeping per table. */
struct ffp_tinfo {
	bool eligible; /* mask or lpm, key <= FFP_KEY_MAX */
	bool pays;     /* cost model */
	bool broken;   /* out of memory once: never on again */
	unsigned n_ll; /* low-latency entries in the table */
	unsigned
		n_ll_plain; /* ... with a plain decision (pl_ffp_flow_kind): see FFP_PLAIN_SAVE_NS */
	uint32_t measured_entries;
	uint64_t search_cyc; /* per key, TSC cycles x 16 */
	uint64_t probe_cyc;
	uint64_t cmp_cyc; /* one extra-rule comparison */
};

/*
 * A LUT hit on an entry with a plain decision (FFP_REC_GOTO, FFP_REC_OUTPUT)
 * also skips the entry's instruction walk (exec_flow), which the cost
 * model's search-vs-probe timing does not see.  Measured with
 * build/src/gen/bench_pipeline on TC1 and TC2 of the decomposition study (one output entry
 * hit, search about one probe): 15.2 -> 11.4 and 18.4 -> 13.2 ns/packet with
 * the LUT on; the model counts half of that as the saving, so such tables
 * turn their LUT on adaptively when most low-latency lanes win (ffp.c).
 */
#define FFP_PLAIN_SAVE_NS 2

/*
 * A record in use (ffp_rec.used != 0) and what its entry does, when that is
 * simple enough for the instructions stage to do without the flow's action
 * list or a call (pipeline_run.c); arg holds the goto table or output port.
 */
#define FFP_REC_ANY 1    /* anything else: its instructions run (exec_flow) */
#define FFP_REC_GOTO 2   /* goto_table only */
#define FFP_REC_OUTPUT 3 /* apply_actions output to one physical port (< 256), nothing else */

struct ffp_rec {
	uint32_t seq; /* table version filled or last verified at */
	uint16_t eff; /* the entry's precedence */
	uint8_t used; /* 0 free, else FFP_REC_*, derived from flow */
	uint8_t arg;
	const struct sl_flow *flow;
	uint8_t key[FFP_KEY_MAX];
} __attribute__((aligned(64)));

struct ffp_lut {
	struct ffp_rec rec[FFP_SETS * FFP_WAYS];
	uint8_t lru[FFP_SETS]; /* way to evict next */
	struct sl_ffp_lut_stats st;
};

/*
 * A worker's view of a table with ffp_adapt (pipeline_priv.h): low-latency
 * lanes that reached it and those whose winner was a low-latency entry (a
 * LUT hit, or one once the LUT holds it), over windows of FFP_OBS_WINDOW.
 */
#define FFP_OBS_WINDOW 4096
struct ffp_obs {
	uint32_t n, win;
	uint8_t on; /* this worker probes the table's LUT */
};

/*
 * Path records: the whole-pipeline flow cache (ffp_path.c, docs/ffp.md
 * "Path records").  On by default for every entry (--no-flow-cache turns it
 * off), in front of the per-table path.  A packet whose way through the
 * pipeline ran no apply_actions before its last lookup (goto_table, and
 * write_actions, clear_actions or write_metadata only) leaves a record keyed
 * by the union of the fields every table reads (layouts and guards: the path
 * spec).  The next packet with that key is answered at the pipeline's entry
 * with one extraction and one probe, then the recorded entries' instructions
 * (goto-only hops and a last plain output without a call), whatever the
 * number of tables.  Exact: the packet is not modified before its last
 * lookup (metadata writes are the entries' constants over the initial
 * metadata, which is in the key when a table matches it), so each table's
 * key is a part of the union key; a record holds the sum of the tables'
 * versions (plus the spec generation and the mark epoch), and any change to
 * any table (versions only grow) makes it stale.  Groups, ports and the
 * action set are read live when the recorded instructions run.  Per-table
 * LUTs carry on underneath and survive changes through their journals.
 */
#define FFP_PATH_TABLES 16  /* tables a path spec covers at most (more: no path records) */
#define FFP_PATH_HOPS 8     /* tables one record spans at most */
#define FFP_PATH_KEY_MAX 64 /* larger union keys: no flow cache (records are three lines) */
#define FFP_PATH_SETS 16384 /* x 2 ways, 192 bytes a record: 6 MB per worker */

struct ffp_path_spec {
	uint32_t gen; /* 0: no path records */
	uint8_t n_tables;
	uint8_t tables[FFP_PATH_TABLES];            /* ascending */
	uint32_t shape[FFP_PATH_TABLES];            /* pl_dtable.shape the layout was built from */
	uint64_t covers[(SL_TABLES_MAX + 63) / 64]; /* bitmap of tables[] */
	struct sl_key_layout layout;                /* union of their fields and guards */
	/*
	 * Frame keys (ffp_path.c, path_key): on a plain IPv4 frame
	 * (sl_pkt_ipv4_plain) the key is the frame's first fwords words
	 * under fmask (lmask's bits where the moves read), then metadata when
	 * a table matches it, then a word with in_port; other frames use the
	 * layout.  A record keeps its key's form (ffp_path_rec.used), so the
	 * two never match.  Finer than the layout's key (it keeps bytes some
	 * protocols do not read): equal frame keys give equal layout keys.
	 */
	uint8_t fmode; /* frame keys in use (the layout reads only fixed bytes) */
	uint8_t fwords;
	uint8_t fmd;      /* metadata in frame keys */
	uint8_t key_size; /* the larger of both forms (each is hashed and compared at its own) */
	uint8_t fsize;    /* a frame key's bytes */
	uint16_t fneed;   /* frame bytes a frame key needs */
	uint64_t fmask[FFP_PATH_KEY_MAX / 8];
	/*
	 * The bits of the layout's key some table reads (pl_dtable.kmask,
	 * guards whole), as words over the key's bytes: keys keep only these,
	 * so flows that differ only in bits no entry looks at share a record
	 * (an lpm table's host bits, a /8 match's last three bytes).  fmask
	 * holds them too, moved to the frame bytes they come from.
	 */
	uint64_t lmask[FFP_PATH_KEY_MAX / 8];
	uint8_t lpartial; /* some word of lmask is not all ones */
};

/*
 * Three lines: a probe reads the first (keys up to 48 bytes), a hit the
 * second (the rest of a longer key, hops 0-3 and the deferred credits) and,
 * for more than four hops, the third.
 */
struct ffp_path_rec {
	uint64_t sig; /* spec generation << 40 + mark epoch + sum of the tables' versions */
	uint8_t used; /* 0 free, else the key's form (ffp_path.c, PATH_USED_*) */
	uint8_t n_hops;
	uint8_t out;     /* plain record (goto-only hops, a last plain output): its port, else 0 */
	uint8_t plain;   /* bit k < n_hops - 1: hop k is a plain goto (run without a call);
			      bit n_hops - 1 with out: the output follows a dec_ttl */
	uint8_t lru;     /* way 0 only: the set's way to evict next (a line a probe reads anyway) */
	uint8_t ll;      /* every hop's entry is low-latency: the packet stays in its class */
	uint8_t miss;    /* the way ends in a table miss (no entry: a drop) ... */
	uint8_t miss_at; /* ... at this table, after n_hops entries (maybe none) */
	uint8_t key[FFP_PATH_KEY_MAX];
	uint8_t tab[FFP_PATH_HOPS];
	uint32_t pend_pkts; /* hits not yet credited to the entries (deferred credits) */
	uint32_t pend_bytes;
	const struct sl_flow *flow[FFP_PATH_HOPS];
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct ffp_path_rec) == 192 && FFP_WAYS == 2,
	       "a path record is three lines, two a set (path_touch finds the way from that)");
_Static_assert(offsetof(struct ffp_path_rec, key) + 48 == 64, "48 key bytes in the first line");

struct ffp_path {
	struct ffp_path_rec rec[FFP_PATH_SETS * FFP_WAYS];
	struct sl_ffp_path_stats st;
};

/*
 * Adaptive, per worker: a lane that misses costs an extraction, a probe and
 * a record fill, a hit saves every table's lookup.  The cache is probed
 * while at least FFP_PATH_ON/1024 of the lanes that reach it hit, and steps
 * aside below FFP_PATH_OFF/1024 (a million flows, a churn of new flows, a
 * flood of random 5-tuples), judged over windows of FFP_OBS_WINDOW lanes.
 * While off, one burst in FFP_PATH_SAMPLE is still run through it (probe and
 * fill), so a working set that fits again is noticed; the rest pay nothing.
 */
#define FFP_PATH_ON 256 /* 25 % */
#define FFP_PATH_SAMPLE 16
#define FFP_PATH_OFF 128 /* 12.5 % */

/*
 * Deferred credits (sl_pipeline_ctx_defer_credits, the datapath workers): a
 * hit adds to its record's pend_* instead of touching its 2-6 entries' lines,
 * which cost the path about a tenth of its rate (most of them miss the cache
 * with 4 KB pages).  The records with credits wait in a list; the worker
 * credits them (sl_pipeline_ctx_flush_credits) before it reports a quiescent
 * state, so the entries are alive, and a removed entry's final counts (flow
 * removed messages, a replacement's carried counts) include them.
 */
#define FFP_PATH_DIRTY 4096 /* records with pending credits; a full list is credited at once */
/*
 * Deferring pays only when a record gathers hits: a flush of at least
 * FFP_DEFER_SAMPLE records that credits fewer than two packets a record
 * (many flows, one hit each) re-reads every record for nothing.  Then the
 * worker credits at once for FFP_DEFER_REST bursts and samples again.
 */
#define FFP_DEFER_SAMPLE 256
#define FFP_DEFER_REST 4096

struct ffp_ctx {
	/* Path records: this burst's state (ffp_path.c). */
	const struct ffp_path_spec *pspec; /* NULL: the path is not used in this burst */
	uint64_t psig;
	uint64_t ptrack;  /* lanes still on a recordable path */
	uint64_t pdone;   /* ... that ended (an entry without goto, or a table miss) */
	uint64_t pmissed; /* ... with a table miss, at pmiss_at[i] */
	uint64_t phit;    /* lanes answered by a record */
	struct ffp_path_rec *prec[SL_BURST_MAX]; /* ... and their records */
	bool defer;                              /* deferred credits (above) */
	bool defer_now;                          /* ... in this burst: defer and not defer_rest */
	uint32_t defer_rest; /* bursts left crediting at once: deferring did not aggregate */
	uint32_t n_dirty;
	struct ffp_path_rec *dirty[FFP_PATH_DIRTY]; /* records with pend_pkts > 0 (maybe twice) */
	uint32_t psample;                           /* bursts seen while off */
	struct ffp_obs pobs;
	struct ffp_path *path;
	uint8_t pn[SL_BURST_MAX];
	uint8_t pmiss_at[SL_BURST_MAX];
	uint8_t ptab[SL_BURST_MAX][FFP_PATH_HOPS];
	const struct sl_flow *pflow[SL_BURST_MAX][FFP_PATH_HOPS];
	uint8_t pform[SL_BURST_MAX]; /* per lane: its key's form (ffp_path.c, PATH_USED_*) */
	uint32_t pset[SL_BURST_MAX]; /* per lane: its key's hash (two-choice sets, ffp_path.c) */
	uint8_t ptrain
		[SL_BURST_MAX]; /* per lane of a train: the lane whose key it has (pkey unset) */
	uint8_t pkey[SL_BURST_MAX][FFP_PATH_KEY_MAX] SL_CACHE_ALIGNED;

	int8_t lut_of[SL_TABLES_MAX]; /* LUT index per table, -1 none */
	unsigned n_luts;
	uint64_t lut_refused; /* tables that wanted a LUT when all were taken */
	uint64_t lat_mult;
	uint64_t ll_cycles; /* cost-model samples: not used by the datapath */
	struct sl_ffp_class_stats cls;
	uint32_t rset[SL_BURST_MAX];        /* per lane: set index */
	struct ffp_rec *rrec[SL_BURST_MAX]; /* per lane answered: its record */
	struct ffp_obs obs[SL_TABLES_MAX];  /* per table: ffp_adapt observations */
	struct ffp_lut *luts[FFP_LUTS_MAX];
};

/* Worker side (ffp.c). */
struct ffp_ctx *pl_ffp_ctx_create(void);
void pl_ffp_ctx_destroy(struct ffp_ctx *f);
/*
 * Probe table @t's LUT for @lanes (low-latency lanes with extracted keys).
 * Returns the lanes answered (ctx->hits[i] set for those in *found), the
 * others continue with the table search.
 */
uint64_t pl_ffp_lookup(const struct pl_dtable *pt, struct sl_pipeline_ctx *ctx, unsigned t,
		       uint64_t lanes, uint64_t *found);
/* A table with ffp_adapt: is this worker's LUT on? */
static inline bool
pl_ffp_adapt_on(const struct sl_pipeline_ctx *ctx, unsigned t)
{
	return ctx->ffp->obs[t].on;
}
/* A full window of table @pt's observations: decide, start the next. */
void pl_ffp_observe_window(const struct pl_dtable *pt, struct ffp_obs *o);
/* Of @n_ll low-latency lanes at table @t (ffp_adapt), @n_win won low-latency entries. */
static inline void
pl_ffp_observe(const struct pl_dtable *pt, struct sl_pipeline_ctx *ctx, unsigned t, unsigned n_ll,
	       unsigned n_win)
{
	struct ffp_obs *o = &ctx->ffp->obs[t];

	o->n += n_ll;
	o->win += n_win;
	if (sl_unlikely(o->n >= FFP_OBS_WINDOW))
		pl_ffp_observe_window(pt, o);
}
/*
 * Lane @lane's answer from table @t's LUT is an entry whose mark was cleared:
 * drop the record (the decision stands: it is the table's).
 */
void pl_ffp_unmarked(struct sl_pipeline_ctx *ctx, unsigned t, unsigned lane);
/* Fill table @t's LUT from @lanes, whose table search hit ctx->hits[i]. */
void pl_ffp_populate(const struct pl_dtable *pt, struct sl_pipeline_ctx *ctx, unsigned t,
		     uint64_t lanes);
/* Per-class counters at the end of a burst of @n packets that started at @t0. */
void pl_ffp_burst_end(struct sl_pipeline_ctx *ctx, unsigned n, uint64_t t0);

/*
 * What a flow's instructions do when that is simple (a flow's instructions
 * never change): FFP_REC_GOTO or FFP_REC_OUTPUT with the table or port in
 * *arg, else FFP_REC_ANY.
 */
static inline uint8_t
pl_ffp_flow_kind(const struct sl_flow *f, uint8_t *arg)
{
	if (f->insn_flags == 0 && f->goto_table >= 0 && f->goto_table < 256) {
		*arg = (uint8_t)f->goto_table;
		return FFP_REC_GOTO;
	}
	if (f->insn_flags == SL_INSN_APPLY && f->goto_table < 0 && f->n_apply == 1 &&
	    f->n_write == 0 && f->actions[0].type == SL_ACT_OUTPUT &&
	    f->actions[0].output.port != 0 && f->actions[0].output.port < 256) {
		*arg = (uint8_t)f->actions[0].output.port;
		return FFP_REC_OUTPUT;
	}
	*arg = 0;
	return FFP_REC_ANY;
}

/* Path records, worker side (ffp_path.c). */
/*
 * At the start of a burst: the lanes of ctx->lanes_at[0] a record answers
 * are taken out of lanes_at[0], their entries and tables credited.  Plain
 * records (goto-only hops, then an output to a port that is up) are done
 * here (out_ports, *n_out); returns the other answered lanes (ffp->prec[i]),
 * whose instructions the caller runs (pipeline_run.c, path_run).
 */
uint64_t pl_ffp_path_lookup(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx,
			    struct sl_pkt *pkts, uint32_t out_ports[], unsigned *n_out);
/* Lane @i, tracked, ran flow @f at table @t and goes to @next (< 0: its way ended). */
static inline void
pl_ffp_path_hop(struct sl_pipeline_ctx *ctx, unsigned i, unsigned t, const struct sl_flow *f,
		int next)
{
	struct ffp_ctx *fc = ctx->ffp;
	uint64_t bit = UINT64_C(1) << i;
	/*
	 * Before the last lookup the packet must stay as it came: no apply_actions,
	 * and no meter (a meter may drop or remark it; path_run ignores what the
	 * hops before the last decide).
	 * A way ends in an entry without goto_table (next -1, or -2 when its
	 * actions dropped the packet: a replay decides that again on the packet).
	 * An entry with goto_table that dropped the packet (dec_ttl on a TTL of 1)
	 * is no way's end: the next packet with that key may have another TTL.
	 */
	bool ok = fc->pn[i] < FFP_PATH_HOPS && (fc->pspec->covers[t / 64] >> (t % 64) & 1) &&
		  (next < 0 ? f->goto_table < 0
			    : !(f->insn_flags & (SL_INSN_APPLY | SL_INSN_METER)) &&
				      f->goto_table == next);

	if (!ok) {
		fc->ptrack &= ~bit;
		return;
	}
	fc->ptab[i][fc->pn[i]] = (uint8_t)t;
	fc->pflow[i][fc->pn[i]++] = f;
	if (next < 0)
		fc->pdone |= bit;
}
/*
 * Lane @i, tracked, missed table @t, which has no table-miss entry: a drop,
 * recordable like a way that ends in an entry (no apply_actions before).
 */
static inline void
pl_ffp_path_miss(struct sl_pipeline_ctx *ctx, unsigned i, unsigned t)
{
	struct ffp_ctx *fc = ctx->ffp;
	uint64_t bit = UINT64_C(1) << i;

	if (!(fc->pspec->covers[t / 64] >> (t % 64) & 1)) {
		fc->ptrack &= ~bit;
		return;
	}
	fc->pmiss_at[i] = (uint8_t)t;
	fc->pmissed |= bit;
	fc->pdone |= bit;
}
/* At the end of the burst: fill records for the lanes that ended on a recordable path. */
void pl_ffp_path_end(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx);
/* Credit the deferred hits to their entries (sl_pipeline_ctx_flush_credits). */
void pl_ffp_path_flush(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx);

/* sl_pipeline_trace: would a path record serve the traced path? (sl_trace's tier fields) */
void pl_ffp_path_traced(const struct sl_pipeline *pl, struct sl_trace *tr);

/* Path records, control side (ffp_path.c): recompute the spec; true when it changed. */
bool pl_ffp_path_update(struct sl_pipeline *pl);
void pl_ffp_path_free(struct sl_pipeline *pl);

/* Control side (ffp.c), hooks called from pipeline.c. */
void pl_ffp_journal(struct sl_pipeline *pl, struct pl_table *pt, const struct sl_rule *r,
		    const struct sl_flow *f, bool add);
void pl_ffp_reset(struct pl_table *pt);
void pl_ffp_changed(struct sl_pipeline *pl, struct pl_table *pt, struct pl_dtable *sb);
void pl_ffp_catch_up(struct pl_table *pt, struct pl_dtable *dt, const struct pl_dtable *lv);
void pl_ffp_table_free(struct pl_table *pt);
void pl_ffp_promote(struct sl_pipeline *pl, uint64_t now);

/* pipeline.c: a change to @pt's standby copy (new version, republished). */
void pl_table_touch(struct sl_pipeline *pl, struct pl_table *pt);

#endif /* SL_PIPELINE_FFP_H */
