/* SPDX-License-Identifier: BSD-3-Clause */
/* Structures shared by the pipeline's control-path and per-packet files. */
#ifndef SL_PIPELINE_PRIV_H
#define SL_PIPELINE_PRIV_H

#include "pipeline.h"

#include <string.h>

/*
 * Concurrency: left-right copies.  Each table keeps two copies of what the
 * workers read (struct pl_dtable).  The control thread changes only the
 * standby copy, logging each change; sl_pipeline_publish() makes the
 * standby copy live with one pointer store, waits for a grace period (every
 * worker has finished the burst it was in: the sync hook, rte_rcu_qsbr in
 * the datapath), then replays the log onto the old copy, which becomes the
 * standby.  Readers never lock, never retry and never see a table in flux;
 * the table kinds stay single-threaded structures.  Flows removed by a batch
 * are freed (and reported) only after that grace period.
 */

/** What workers read of one table; one of two copies. */
struct pl_dtable {
	struct sl_table *tbl;        /* NULL until the first flow or a declaration with fields */
	struct sl_key_layout layout; /* fields the table matches */
	struct sl_flow *miss;        /* table-miss entry of a kind that cannot hold it */
	/*
	 * The table's only flow when every packet reaching the table hits it
	 * (an empty match, no guards, no FFP LUT), else NULL: such a table
	 * needs no key extraction and no lookup (pipeline_run.c).
	 */
	struct sl_flow *all_hit;
	/*
	 * Guards: exact prerequisites (dl_type, nw_proto) that every flow of a
	 * table with declared fields shares but its key does not hold (an lpm
	 * table on nw_dst holds only nw_dst).  Packets failing a guard miss.
	 */
	uint8_t n_guards;
	struct sl_match_field guards[2];
	uint32_t version; /* changes with the contents; decision-cache entries carry it */
	uint32_t shape;   /* changes with the layout, the guards or kmask (FFP path keys) */
	/*
	 * The union of the flows' masks in this copy's key: the bits any
	 * lookup here can read (an lpm table's longest prefix, a mask table's
	 * masks).  Only grows between layout changes, and a new bit is a new
	 * shape.  Path keys keep only these bits (ffp_path.c).  Control only.
	 */
	uint8_t kmask[SL_KEY_MAX];
	bool use_dcache;          /* lookups go through the decision cache (see table_changed) */
	bool budgeted;            /* its cache-missing searches are measured for the search
					budget (budget.c): cache on, enough masks to be costly */
	bool ffp_on;              /* low-latency lanes probe this table's LUT first (ffp.h) */
	bool ffp_adapt;           /* not on by the cost model, but each worker turns it on
					while enough LL lanes win LL entries here (ffp.h) */
	uint16_t ffp_adapt_thr;   /* ... more than this fraction of them (1/1024) */
	struct ffp_journal *ffpj; /* changes since recent versions, for LUT verification */
	uint64_t ffp_search_cyc;  /* cost model, 1/16 cycles: one search, one extra-rule compare */
	uint64_t ffp_cmp_cyc;
};

/** A change logged on the standby copy, replayed on the other after publishing. */
struct pl_op {
	struct sl_flow *flow;
	bool add; /* else delete */
};

/** One pipeline stage. */
struct pl_table {
	struct pl_dtable *live; /* the copy workers read (atomic pointer store/load) */
	struct pl_dtable copy[2];
	struct sl_table_spec spec; /* declared, or the default (mask, fields from flows) */
	bool declared;             /* spec came from sl_pipeline_table_declare */
	bool dirty;                /* the standby copy differs from the live one */
	bool rebuild;              /* standby's table object was replaced: rebuild, do not replay */
	bool commit;               /* fold pending changes (sl_table_commit) when publishing */
	uint32_t version_seq;
	uint32_t shape_seq; /* last pl_dtable.shape given out */
	unsigned n_ops, ops_cap;
	struct pl_op *ops; /* changes since the last publish */
	unsigned n_flows;  /* flows, miss entry included */
	unsigned cap;
	struct sl_flow **flows; /* every flow, for iteration and deletion */
	struct sl_state *state; /* kind state: the state table (atomic store/load), else NULL */
	struct ffp_tinfo *ffp;  /* fast-path bookkeeping (ffp.c), NULL until needed */
};

/* A flow leaving the pipeline, freed after the next grace period. */
struct pl_dead {
	struct sl_flow *flow;
	struct sl_flow *successor; /* replaced by: gets the counters; NULL when removed */
	uint8_t reason;            /* SL_FLOW_REMOVED_* */
};

#define PL_PORTS_MAX 1024

/*
 * The accelerators' pipeline-wide settings and shared state: the decision
 * cache (pipeline_run.c), the FFP's per-table LUTs (ffp.c) and the flow
 * cache's path records (ffp_path.c).  Each worker's own entries live in its
 * context (sl_pipeline_ctx: dc, ffp); each table's LUT state in its copy
 * (pl_dtable).  None of them may change a packet's fate: they answer as the
 * tables would, or step aside.
 */
struct pl_accel {
	bool dcache;                 /* decision cache in front of mask tables (default on) */
	bool ffp_off;                /* fast forwarding path disabled (default on) */
	bool ffp_no_model;           /* LUT wherever eligible, whatever the cost model says */
	struct sl_ffp_auto ffp_auto; /* auto-promotion policy */
	uint64_t ffp_auto_last;      /* TSC of the last auto-promotion check, 0 = none yet */
	bool ffp_path_off;     /* whole-pipeline flow cache (path records) disabled (default on) */
	uint32_t ffp_path_gen; /* last path spec generation given out */
	uint8_t path_inactive; /* enum sl_flow_cache_inactive of the last spec built */
	struct ffp_path_spec
		*path_spec; /* two slots (left-right), NULL until needed (ffp_path.c) */
	const struct ffp_path_spec *path_live; /* the slot workers read (atomic), NULL: none */
	uint32_t ll_epoch; /* mark changes so far (atomic): part of path records' sig */
	bool ll_ever;      /* an entry was marked or auto-promotion on (atomic, sticky) */
	/* Search budget (budget.c); workers read these relaxed. */
	uint32_t budget_share;          /* refill, 1/1024 of the elapsed cycles; 0 = off */
	uint64_t budget_cost_cyc;       /* per-key search cost from which a table is budgeted */
	uint64_t budget_depth_cyc;      /* bucket size: 50 ms of refill */
	struct sl_search_budget budget; /* as set (sl_pipeline_search_budget_get) */
};

struct sl_pipeline {
	struct pl_table tables[SL_TABLES_MAX];
	int last_table;                      /* highest table in use, -1 if none */
	unsigned n_ports;                    /* the highest numbered port present */
	bool port_up[PL_PORTS_MAX + 1];      /* [1..n_ports]; single-byte stores, read by workers */
	bool port_present[PL_PORTS_MAX + 1]; /* a port absent (never added, deleted) is not down */
	bool local_present;                  /* LOCAL: a port to the host stack exists */
	bool local_up;              /* ... and is live (its own flag: its number is no index) */
	enum sl_pipeline_fail fail; /* why the last control call failed */
	sl_pipeline_sync_fn sync;
	void *sync_arg;
	sl_flow_removed_fn removed;
	void *removed_arg;
	unsigned n_dead, dead_cap;
	struct pl_dead *dead;
	struct pl_groups *groups;
	struct pl_meters *meters;
	struct pl_queues *queues; /* queue.c; NULL until the first queue (atomic pointer) */
	struct pl_fdb *fdb;       /* output:NORMAL's MAC learning table (normal.c) */
	bool shared_counters;     /* several workers: flow and group counters by atomic add */
	bool invalid_ttl_pin;     /* expired TTLs also go to the controller (atomic byte) */
	/* State tables (state_stage.c): ids of tables that are or were state tables (grows only). */
	unsigned n_state_ids; /* atomic store/load: workers scan the ids below it */
	uint8_t state_ids[SL_TABLES_MAX];
	struct pl_accel accel;
};

/* Add to a flow or group counter several workers may write (one writer: plain add). */
static inline void
pl_count(const struct sl_pipeline *pl, uint64_t *c, uint64_t v)
{
	if (pl->shared_counters)
		__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
	else
		*c += v;
}

/*
 * May a plain output to @port (< 256) skip output_one?  Only when it would
 * just set the port: in range, not the in_port, up.  The FFP's records.
 */
static inline bool
pl_port_plain_ok(const struct sl_pipeline *pl, uint32_t port, uint32_t in_port)
{
	return port <= pl->n_ports && port != in_port && pl->port_up[port];
}

/*
 * pl_dec_ttl_plain on a frame sl_pkt_ipv4_plain accepted (its header at 14):
 * RFC 1624 eqn. 3 with m' = m - 0x100, so ~m + m' is 0xfeff whatever m is;
 * the same sum sl_csum_update folds, so the same checksum.  One's-complement
 * sums do not care about byte order (RFC 1071): the checksum is summed as
 * loaded, with 0xfeff's bytes swapped where they land in memory order.
 */
static inline bool
pl_dec_ttl_ipv4_frame(uint8_t *d)
{
	uint16_t cs;

	if (d[22] <= 1)
		return false;
	d[22]--;
	__builtin_memcpy(&cs, d + 24, 2);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t sum = (uint32_t)(uint16_t)~cs + 0xfffe;
#else
	uint32_t sum = (uint32_t)(uint16_t)~cs + 0xfeff;
#endif
	sum = (sum & 0xffff) + (sum >> 16);
	cs = (uint16_t)~sum;
	__builtin_memcpy(d + 24, &cs, 2);
	return true;
}

/*
 * dec_ttl on a packet whose parse state is known: IPv4 (a header that tells
 * the truth) or IPv6 with a TTL above 1 is decremented (IPv4's checksum
 * updated, RFC 1624), a packet that is not IP left alone; returns true.
 * Returns false, having done nothing, when the packet must be dropped (TTL
 * 0 or 1, a lying header) or its parse state is unknown: exec_action
 * decides, and is the only caller that may drop.
 */
static inline bool
pl_dec_ttl_plain(struct sl_pkt *p)
{
	if (p->l2_end == SL_OFS_UNSET)
		return false;
	if (p->eth_type != 0x0800 && p->eth_type != 0x86dd)
		return true;
	if (p->ip_end == 0)
		return false;
	uint8_t *ttl = p->data + p->l3_ofs + (p->eth_type == 0x0800 ? 8 : 7);
	if (*ttl <= 1)
		return false;
	if (p->eth_type == 0x86dd) {
		--*ttl;
		return true;
	}
	/* The TTL/protocol word changes: update the header checksum over it. */
	uint8_t old[2] = {ttl[0], ttl[1]};
	uint16_t cs;
	ttl[0]--;
	memcpy(&cs, ttl + 2, 2);
	cs = sl_csum_update(cs, old, ttl, 2);
	memcpy(ttl + 2, &cs, 2);
	return true;
}

/* The copy the control thread changes (never read by workers between publishes). */
static inline struct pl_dtable *
pl_standby(struct pl_table *pt)
{
	return pt->live == &pt->copy[0] ? &pt->copy[1] : &pt->copy[0];
}

/* The live copy, as a worker sees it. */
static inline const struct pl_dtable *
pl_live(const struct pl_table *pt)
{
	return __atomic_load_n(&pt->live, __ATOMIC_ACQUIRE);
}

/* OpenFlow action set (spec 5.10): at most one action of each kind, set_field per field. */
#define AS_SET_MAX 8
struct action_set {
	const struct sl_action *copy_ttl_in, *pop_vlan, *pop_mpls, *pop_pbb, *push_mpls;
	const struct sl_action *push_pbb, *push_vlan;
	const struct sl_action *copy_ttl_out, *dec_ttl, *dec_mpls_ttl, *set_ttl, *set_mpls_ttl;
	const struct sl_action *queue, *group, *output;
	/*
	 * The entries that wrote group and output: a packet-in from the set is
	 * theirs (reason ACTION unless a table-miss entry wrote it, their table
	 * and cookie), not the entry whose end runs the set.
	 */
	const struct sl_flow *group_by, *output_by;
	uint8_t n_set;
	const struct sl_action *set[AS_SET_MAX];
};

/* Per-packet state while a burst is in the pipeline. */
struct pkt_state {
	uint32_t pending_out;       /* last output not yet emitted (0: none) */
	uint8_t skip_reason;        /* why the last attempted output did not happen */
	bool has_set;               /* action set non-empty */
	bool has_queue;             /* a set_queue ran: outputs go through queue_id (queue.c) */
	uint8_t group_depth;        /* groups the packet is inside now (exec_group), 0 outside */
	uint32_t queue_id;          /* valid with has_queue */
	const struct sl_flow *flow; /* flow whose instructions run (packet-in details) */
	struct sl_pin pin;          /* details of a pending output to the controller */
	struct action_set aset;
};

/*
 * The state's first 8 bytes, its head: lane_reset writes it in one store,
 * pl_pending_word tests it in one load.
 */
_Static_assert(offsetof(struct pkt_state, pending_out) == 0 &&
		       offsetof(struct pkt_state, skip_reason) == 4 &&
		       offsetof(struct pkt_state, has_set) == 5 &&
		       offsetof(struct pkt_state, has_queue) == 6 &&
		       offsetof(struct pkt_state, group_depth) == 7 && sizeof(bool) == 1,
	       "struct pkt_state's 8-byte head");

/* A lane's pending output and has_set, in one load: 0 when it has neither. */
static inline uint64_t
pl_pending_word(const struct pkt_state *st)
{
	const uint64_t mask = 0xffffffffu | UINT64_C(0xff) << 40;
	uint64_t w;

	memcpy(&w, st, sizeof(w));
	return w & mask;
}

/* Private copy of a packet for a group bucket that must leave the packet as it was (exec_group). */
#define PL_SCRATCH_HEADROOM 128
#define PL_SCRATCH_SIZE (PL_SCRATCH_HEADROOM + 9216)

/*
 * Decision cache: per worker, direct-mapped, one cache line an entry.  It
 * maps (table, extracted key) to that table's winning entry (or to "no
 * entry"), which is exact as long as the table has not changed since:
 * entries carry the table's version, and every change bumps it.  Used in
 * front of mask tables, whose lookups cost one probe per mask.
 */
#define DC_ENTRIES 65536
#define DC_KEY_MAX 48
#define DC_MIN_MASKS 4 /* tables with fewer masks are looked up directly */
struct dc_entry {
	uint32_t version; /* table version when filled; 0 = empty (tables start at 1) */
	uint8_t table_id;
	uint8_t pad[3];
	void *data; /* the winning flow, or NULL for a cached miss */
	uint8_t key[DC_KEY_MAX];
} __attribute__((aligned(64)));

/*
 * Key hash shared by the decision cache, the FFP's LUTs and the flow cache;
 * word by word, so the flow cache hashes a frame key as it builds it.
 */
static inline uint64_t
dc_hash_init(uint8_t table_id)
{
	return 0x9e3779b97f4a7c15ull ^ table_id;
}

static inline uint64_t
dc_hash_word(uint64_t h, uint64_t w)
{
#if defined(__SSE4_2__)
	return __builtin_ia32_crc32di(h, w);
#else
	h = (h ^ w) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
#endif
}

static inline uint32_t
dc_hash(const uint8_t *key, unsigned size, uint8_t table_id)
{
	uint64_t h = dc_hash_init(table_id);

	for (unsigned i = 0; i < size; i += 8) {
		uint64_t w;
		__builtin_memcpy(&w, key + i, 8);
		h = dc_hash_word(h, w);
	}
	return (uint32_t)h;
}

static inline uint64_t
dc_word_xor(const uint8_t *a, const uint8_t *b, unsigned i)
{
	uint64_t x, y;

	__builtin_memcpy(&x, a + i, 8);
	__builtin_memcpy(&y, b + i, 8);
	return x ^ y;
}

/*
 * Keys are whole 8-byte words.  Up to 64 bytes the words are compared in
 * straight-line code: a counted loop spent more on its counting than on
 * the compare (49 instructions for a 40-byte flow-cache key, now 25).
 */
static inline bool
dc_key_equal(const uint8_t *a, const uint8_t *b, unsigned size)
{
	uint64_t diff = 0;
	unsigned i = 64;

	switch ((size + 7) >> 3) {
	default:
		for (; i < size; i += 8)
			diff |= dc_word_xor(a, b, i);
		/* fall through */
	case 8:
		diff |= dc_word_xor(a, b, 56);
		/* fall through */
	case 7:
		diff |= dc_word_xor(a, b, 48);
		/* fall through */
	case 6:
		diff |= dc_word_xor(a, b, 40);
		/* fall through */
	case 5:
		diff |= dc_word_xor(a, b, 32);
		/* fall through */
	case 4:
		diff |= dc_word_xor(a, b, 24);
		/* fall through */
	case 3:
		diff |= dc_word_xor(a, b, 16);
		/* fall through */
	case 2:
		diff |= dc_word_xor(a, b, 8);
		/* fall through */
	case 1:
		diff |= dc_word_xor(a, b, 0);
		/* fall through */
	case 0:
		break;
	}
	return diff == 0;
}

/*
 * dc_key_equal for a @size known at compile time: 16-byte lanes (GCC's
 * generic vectors: SSE2 on any x86-64), so a 48-byte flow-cache key is
 * three loads, three xors and a test instead of twelve loads.
 */
typedef uint64_t dc_v2u64 __attribute__((vector_size(16)));

static SL_ALWAYS_INLINE bool
dc_key_equal_const(const uint8_t *a, const uint8_t *b, const unsigned size)
{
	dc_v2u64 d = {0, 0};
	unsigned i = 0;

	for (; i + 16 <= size; i += 16) {
		dc_v2u64 x, y;
		__builtin_memcpy(&x, a + i, 16);
		__builtin_memcpy(&y, b + i, 16);
		d |= x ^ y;
	}
	uint64_t diff = d[0] | d[1];
	if (i < size)
		diff |= dc_word_xor(a, b, i);
	return diff == 0;
}

struct ffp_journal;
struct ffp_tinfo;
struct ffp_ctx;
struct ffp_path_spec;

/*
 * Search budget, one per worker (pipeline.h: struct sl_search_budget).
 * Tables with fewer masks are never measured: their searches cost a few
 * hundred ns at most (mask.c), and measuring costs two TSC reads.
 */
#define PL_BUDGET_MIN_MASKS 32
struct pl_budget {
	int64_t tokens;               /* cycles of budgeted search left (>= -depth) */
	uint64_t last;                /* TSC of the last refill */
	uint64_t searches;            /* keys searched in budgeted tables */
	uint64_t cycles;              /* ... and their cycles */
	uint32_t cost[SL_TABLES_MAX]; /* per table: cycles per key, moving average (1/8) */
};

struct sl_pipeline_ctx {
	uint8_t keys[SL_BURST_MAX][SL_KEY_MAX] SL_CACHE_ALIGNED;
	const uint8_t *keyp[SL_BURST_MAX];
	void *hits[SL_BURST_MAX];
	uint8_t dup_of
		[SL_BURST_MAX]; /* register_keys: the lane whose key and answer a lane takes */
	bool regs_same; /* every lane still has the burst's first registers (hooks.same_registers) */
	bool resized;   /* a push or pop moved a packet's start or length (sl_pipeline_resized) */
	struct pkt_state st[SL_BURST_MAX];
	uint64_t lanes_at[SL_TABLES_MAX + 2]; /* lanes waiting at each table */
	uint64_t table_bits[4];               /* tables with waiting lanes */
	struct {
		uint64_t lookups;
		uint64_t matched;
	} tstats[SL_TABLES_MAX];
	/* Per table: lanes the flow cache's records took through it, a lookup and a match each. */
	uint64_t tpath[SL_TABLES_MAX];
	uint64_t drops[SL_DROP__MAX];
	uint64_t copies;
	uint64_t dc_hits;
	uint64_t dc_misses;
	uint64_t now;                        /* time of the burst (set_state timeouts) */
	uint32_t chain_max;                  /* longest goto chain a packet took (tables) */
	uint8_t chain_at[SL_TABLES_MAX + 2]; /* this burst: longest chain reaching each table */
	struct dc_entry *dc_ents[SL_BURST_MAX];
	uint64_t ll_lanes;       /* lanes whose packet is still low-latency (ffp.h) */
	struct ffp_ctx *ffp;     /* this worker's LUTs and class counters */
	struct sl_trace *trace;  /* sl_pipeline_trace's context only: record, change nothing */
	struct pl_budget budget; /* search budget (budget.c) */
	uint8_t scratch[SL_GROUP_CHAIN_MAX][PL_SCRATCH_SIZE]; /* one per group depth (chaining) */
	struct dc_entry dc[DC_ENTRIES];
};

/*
 * Groups (group.c).  A group id maps to a slot that lives as long as the
 * group; flows' and buckets' group actions point at the slot
 * (sl_action.ref), and so do fast-failover buckets' watched groups
 * (watch_slot).  A referenced slot cannot be deleted alone, so these
 * pointers never dangle.  The slot's body (type, buckets) is immutable: a
 * modify publishes a new body with one pointer store and frees the old one
 * after a grace period.
 */
#define PL_SELECT_SLOTS 256 /* select groups: hash -> bucket map, weighted */

struct pl_bucket {
	uint16_t weight;
	uint32_t watch_port;
	uint32_t watch_group;
	struct pl_group_slot *watch_slot; /* fast failover: the watched group, or NULL */
	uint8_t n_actions;
	bool modifies;             /* has actions that change the packet (needs its own copy) */
	struct sl_action *actions; /* as given (group_desc shows them) */
	uint8_t n_run;
	struct sl_action *run; /* what runs: the actions as an action set, group refs resolved */
	uint64_t n_packets, n_bytes; /* pl_count: atomic with several workers */
};

struct pl_group {
	uint8_t type;
	uint16_t n_buckets;
	bool has_select; /* select_map holds a live choice */
	uint8_t select_map[PL_SELECT_SLOTS];
	struct pl_bucket buckets[];
};

struct pl_group_slot {
	uint32_t id;
	struct pl_group *body; /* atomic pointer store/load */
	unsigned ref_count;    /* flows with a group action to this group */
	unsigned n_forwarders; /* groups whose buckets have a group action to this one */
	unsigned n_watchers;   /* groups whose buckets watch this one */
	bool live;             /* liveness (pl_groups_liveness): atomic byte store/load */
	uint64_t n_packets, n_bytes;
	uint64_t created_tsc;
	uint32_t walk;      /* control-thread graph walks: the walk that saw it last */
	uint8_t walk_state; /* ... 1 while on its path, 2 when done */
	uint8_t walk_value; /* ... what it gave (chain height, liveness) */
};

int pl_groups_create(struct sl_pipeline *pl);
void pl_groups_destroy(struct sl_pipeline *pl);
/* The slot of group @id, or NULL.  Control thread. */
struct pl_group_slot *pl_group_find(struct sl_pipeline *pl, uint32_t id);
void pl_group_ref(void *slot, int delta);
/* True when group memory waits for a grace period. */
bool pl_groups_dirty(const struct sl_pipeline *pl);
/* Free group memory retired before the grace period that just ended. */
void pl_groups_reclaim(struct sl_pipeline *pl);
/* Recompute the groups' liveness flags after a port changed.  Control thread. */
void pl_groups_liveness(struct sl_pipeline *pl);

/*
 * Meters (meter.c).  A meter id maps to a slot that lives as long as the
 * meter; flows' meter instructions point at the slot (sl_flow.meter).  The
 * body (flags, bands and their buckets) is replaced whole by a modify.
 */
/*
 * GCRA (meter.c): does a packet costing @inc fit a bucket of burst tolerance
 * @tau whose theoretical arrival time is *@tat, at time @now (1/16 cycles)?
 * If so its cost is taken.  Lock-free: the CAS retries only when another
 * worker moved the same bucket in between.  Meter bands and queues.
 */
static inline bool
pl_gcra_take(uint64_t *tat, uint64_t tau, uint64_t now, uint64_t inc)
{
	uint64_t t = __atomic_load_n(tat, __ATOMIC_RELAXED);

	for (;;) {
		uint64_t next = (t > now ? t : now) + inc;
		if (next - now > tau)
			return false;
		if (__atomic_compare_exchange_n(tat, &t, next, true, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return true;
	}
}

struct pl_meter_band {
	struct sl_meter_band_spec spec;
	uint64_t inc; /* cost: pktps, 1/16 cycles a packet; kbps, 2^-16 of those a byte */
	uint64_t tau; /* burst tolerance, 1/16 cycles */
	uint64_t tat; /* theoretical arrival time, 1/16 cycles (CAS by the workers) */
	uint64_t n_packets, n_bytes; /* pl_count: packets this band was applied to */
} __attribute__((aligned(64)));

struct pl_meter {
	uint16_t flags;
	uint8_t n_bands;
	struct pl_meter_band bands[];
};

struct pl_meter_slot {
	uint32_t id;
	struct pl_meter *body; /* atomic pointer store/load */
	unsigned ref_count;    /* flows with a meter instruction to this meter */
	uint64_t n_packets, n_bytes;
	uint64_t created_tsc;
};

/* queue.c: free every queue (pipeline destroy); admit one output on a queue (worker). */
void pl_queues_destroy(struct sl_pipeline *pl);
bool pl_queue_admit(const struct sl_pipeline *pl, uint32_t port, uint32_t queue_id, uint32_t len,
		    uint64_t tsc);

int pl_meters_create(struct sl_pipeline *pl);
void pl_meters_destroy(struct sl_pipeline *pl);
/* The slot of meter @id, or NULL.  Control thread. */
struct pl_meter_slot *pl_meter_find(struct sl_pipeline *pl, uint32_t id);
/* True when meter memory waits for a grace period. */
bool pl_meters_dirty(const struct sl_pipeline *pl);
/* Free meter memory retired before the grace period that just ended. */
void pl_meters_reclaim(struct sl_pipeline *pl);
/* Send packet @p through a meter at TSC @tsc: false when a drop band drops it.  Workers. */
bool pl_meter_run(const struct sl_pipeline *pl, struct pl_meter_slot *slot, struct sl_pkt *p,
		  uint64_t tsc);

/* output:NORMAL's learning table (normal.c): learn and look up from any worker. */
int pl_fdb_create(struct sl_pipeline *pl);
void pl_fdb_destroy(struct sl_pipeline *pl);
void pl_fdb_learn(struct pl_fdb *f, uint16_t vlan, const uint8_t *mac, uint32_t port, uint64_t tsc);
/* The port (VLAN, MAC) was learned on, 0 when unknown or aged out. */
uint32_t pl_fdb_lookup(const struct pl_fdb *f, uint16_t vlan, const uint8_t *mac, uint64_t tsc);

/* State tables (state_stage.c). */
int pl_state_declare(struct sl_pipeline *pl, const struct sl_table_spec *ts, char *err,
		     size_t err_size);
void pl_state_remove(struct sl_pipeline *pl, unsigned table_id);
void pl_state_stage(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, unsigned t,
		    struct sl_pkt *pkts, uint64_t lanes);
void pl_state_exec(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct sl_pkt *p,
		   const struct sl_action *a);

/*
 * A burst lookup of the lanes @todo of budgeted table @table_id (a cache
 * miss each), through the search budget: lanes it refuses are taken out
 * of *todo and returned; the rest are looked up as sl_table_lookup_burst
 * does (hit mask returned in *found, entries in ctx->hits).  Workers.
 */
uint64_t pl_budget_lookup(const struct sl_pipeline *pl, const struct pl_dtable *pt,
			  struct sl_pipeline_ctx *ctx, unsigned table_id, bool keeping_up,
			  uint64_t *todo, uint64_t *found);

/* Shared control-path helpers (pipeline.c). */
int pl_err(struct sl_pipeline *pl, enum sl_pipeline_fail why, char *err, size_t size, int rc,
	   const char *fmt, ...) __attribute__((format(printf, 6, 7)));
int pl_check_actions(struct sl_pipeline *pl, const struct sl_action *a, unsigned n, char *err,
		     size_t err_size);
void flow_free(struct sl_flow *f);

#endif /* SL_PIPELINE_PRIV_H */
