/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pipeline: OpenFlow 1.3 multi-table match-action processing.
 *
 * A pipeline holds up to SL_TABLES_MAX tables (ids 0..253).  Each table has a
 * kind (table.h), a key layout (the fields its entries match; pkt.h) and its
 * flow entries (struct sl_flow).  A burst of packets enters table 0; each
 * packet looks up the tables it is sent to with goto_table (forward only),
 * runs apply_actions at once, accumulates write_actions into its action set,
 * and at the end of the pipeline executes the action set in the order the
 * specification gives (copy TTL in, pop VLAN, MPLS, PBB, push MPLS, PBB, VLAN,
 * copy TTL out, dec TTL and MPLS TTL, set TTL and MPLS TTL, set fields, queue,
 * group, output).
 *
 * Tables are visited in increasing id order over the whole burst: the lanes
 * waiting at table t are looked up together with one lookup_burst call, so
 * every table kind gets burst-level lookups.
 *
 * Flow-entry semantics follow OpenFlow 1.3: the highest-priority matching
 * entry wins; a miss without a table-miss entry drops (counted); the
 * table-miss entry is the priority-0 entry with an empty match.  Kinds that
 * cannot hold an empty match (direct, exact, lpm) keep it beside the table.
 *
 * The specs it compiles (flows, groups, meters, table declarations) are
 * src/flow/flow.h's: the flow-file parser and the OpenFlow codec fill them.
 *
 * Concurrency: one control thread changes the pipeline while workers call
 * sl_pipeline_run_burst with their own struct sl_pipeline_ctx.  Changes are
 * staged on a standby copy of each table and become visible together at
 * sl_pipeline_publish(), which swaps copies with one pointer store per table,
 * waits for a grace period (the sync hook: every worker has left the burst
 * it was in) and replays the batch onto the other copy.  Workers never lock
 * or wait.  A packet sees each table either wholly before or wholly after a
 * batch.  Flows leave memory (and are reported through the removed hook,
 * with their final counters) only after the grace period.
 */
#ifndef SL_PIPELINE_H
#define SL_PIPELINE_H

#include "../core/core.h"
#include "../flow/flow.h"
#include "../pkt/pkt.h"
#include "../table/table.h"
#include "../state/state.h"

/** Out-port value of a dropped packet in sl_pipeline_run_burst's results. */
#define SL_PORT_DROP 0u

/** A flow entry as the pipeline stores it (compact: 1M flows must fit). */
struct sl_flow {
	uint8_t table_id;
	uint8_t n_apply;    /* actions[0 .. n_apply-1]: apply_actions */
	uint8_t n_write;    /* actions[n_apply ..]: write_actions */
	uint8_t insn_flags; /* SL_INSN_* */
	int16_t goto_table; /* -1: none */
	uint16_t priority;
	uint16_t idle_timeout;
	uint16_t hard_timeout;
	uint16_t flags;        /* SL_FF_* (without SL_FF_LOW_LATENCY: see ll) */
	uint8_t ll;            /* SL_LL_*: low-latency entry (the fast path, ffp.h); atomic byte */
	uint8_t plain_out;     /* instructions are one apply output to this port (< 256), else 0 */
	uint8_t plain_ttl_out; /* instructions are apply dec_ttl, output to this port (< 256), else 0 */
	uint32_t slot;         /* index in the table's flow list (control path) */
	uint64_t cookie;
	uint64_t metadata; /* write_metadata value */
	uint64_t metadata_mask;
	uint64_t n_packets; /* written by the worker; read with sl_flow_packets() */
	uint64_t n_bytes;   /* atomic adds with several workers (sl_pipeline_set_shared_counters) */
	uint64_t last_hit_tsc;    /* TSC of the last hit, 0 = never (worker) */
	uint64_t carried_packets; /* from the flows this one replaced (control thread) */
	uint64_t carried_bytes;
	uint64_t carried_hit_tsc;
	uint64_t created_tsc;
	uint64_t ffp_last_packets; /* packets at the last auto-promotion check (control thread) */
	struct sl_action *actions; /* n_apply + n_write actions */
	void *meter; /* meter instruction (SL_INSN_METER): the meter's slot, else NULL */
	uint8_t n_match;
	struct sl_match_field match[]; /* n_match fields, prerequisites included */
};

#define SL_LL_MARKED 0x1 /* marked by the controller, a flow file or sluicectl */
#define SL_LL_AUTO 0x2   /* promoted from its hit statistics (sl_ffp_auto) */

#define SL_INSN_APPLY 0x1       /* apply_actions present */
#define SL_INSN_WRITE 0x2       /* write_actions present */
#define SL_INSN_CLEAR 0x4       /* clear_actions */
#define SL_INSN_METADATA 0x8    /* write_metadata */
#define SL_INSN_TABLE_MISS 0x10 /* the table-miss entry (priority 0, empty match) */
#define SL_INSN_METER 0x20      /* meter instruction (sl_flow.meter), run before the others */

/** A flow's packet count, counts of the entries it replaced included. */
static inline uint64_t
sl_flow_packets(const struct sl_flow *f)
{
	return f->n_packets + f->carried_packets;
}
/** A flow's byte count, counts of the entries it replaced included. */
static inline uint64_t
sl_flow_bytes(const struct sl_flow *f)
{
	return f->n_bytes + f->carried_bytes;
}
/** TSC of the flow's last hit (entries it replaced included), 0 = never. */
static inline uint64_t
sl_flow_last_hit(const struct sl_flow *f)
{
	uint64_t t = f->last_hit_tsc;
	return t > f->carried_hit_tsc ? t : f->carried_hit_tsc;
}

/** Rebuild the spec a flow was added with (for dumps).  Control thread. */
void sl_flow_to_spec(const struct sl_flow *f, struct sl_flow_spec *fs);

/** Time source for flow timestamps and latency (TSC on x86). */
uint64_t sl_pipeline_tsc(void);
/** Ticks of sl_pipeline_tsc per second (measured once). */
uint64_t sl_pipeline_tsc_hz(void);

struct sl_pipeline;

/** Why the last failing control call failed; the OpenFlow agent maps it onto error codes. */
enum sl_pipeline_fail {
	SL_FAIL_NONE,
	SL_FAIL_BAD_TABLE_ID,  /* table id out of range, goto not forward */
	SL_FAIL_BAD_OUT_PORT,  /* output to a port that cannot be used */
	SL_FAIL_BAD_OUT_GROUP, /* group action to a group that does not exist */
	SL_FAIL_BAD_ACTION,    /* malformed action (bad push_vlan ethertype, ...) */
	SL_FAIL_UNSUPPORTED,   /* valid OpenFlow that Sluice does not implement */
	SL_FAIL_BAD_SET_FIELD, /* set_field on a read-only field */
	SL_FAIL_BAD_MATCH,     /* the table's kind or fields cannot hold this match */
	SL_FAIL_BAD_PREREQ,    /* match prerequisites missing */
	SL_FAIL_TABLE_FULL,
	SL_FAIL_OVERLAP, /* CHECK_OVERLAP found an overlapping entry */
	SL_FAIL_NOMEM,
	SL_FAIL_BAD_TABLE_CONFIG, /* table declaration: bad kind/field combination */
	SL_FAIL_TABLE_BUSY,       /* table declaration: the table holds flows */
	SL_FAIL_GROUP_EXISTS,
	SL_FAIL_UNKNOWN_GROUP,
	SL_FAIL_BAD_GROUP_ID,
	SL_FAIL_BAD_GROUP_TYPE,
	SL_FAIL_BAD_BUCKET,
	SL_FAIL_BAD_WATCH,
	SL_FAIL_GROUP_CHAINING, /* a group chain longer than SL_GROUP_CHAIN_MAX groups */
	SL_FAIL_TOO_MANY_GROUPS,
	SL_FAIL_METER_EXISTS,
	SL_FAIL_UNKNOWN_METER, /* meter_mod or a flow's meter instruction: no such meter */
	SL_FAIL_BAD_METER_ID,
	SL_FAIL_BAD_METER_FLAGS,
	SL_FAIL_BAD_RATE,
	SL_FAIL_BAD_BAND,
	SL_FAIL_BAD_BAND_VALUE,
	SL_FAIL_TOO_MANY_METERS,
	SL_FAIL_TOO_MANY_BANDS,
	SL_FAIL_GROUP_WEIGHT,  /* a bucket weight in a group that is not select (OVS refuses too) */
	SL_FAIL_GROUP_LOOP,    /* a group would reach itself (group actions, watch_group) */
	SL_FAIL_CHAINED_GROUP, /* delete: another group forwards to or watches this one */
};

/** Reasons a flow leaves the pipeline (OFPRR_* values). */
#define SL_FLOW_REMOVED_IDLE 0
#define SL_FLOW_REMOVED_HARD 1
#define SL_FLOW_REMOVED_DELETE 2
#define SL_FLOW_REMOVED_GROUP_DELETE 3
#define SL_FLOW_REMOVED_REPLACED 0xff /* replaced by an add or modify: not reported */

/**
 * Wait until every worker has passed a quiescent state (finished the burst
 * it was in when called).  Control thread; NULL when no worker runs.
 */
typedef void (*sl_pipeline_sync_fn)(void *arg);
/** Called for each removed flow after the grace period, counters final.  Control thread. */
typedef void (*sl_flow_removed_fn)(const struct sl_flow *f, uint8_t reason, void *arg);

/**
 * Which flows a modify, delete or statistics request selects (OpenFlow
 * flow_mod / multipart filter semantics).
 */
struct sl_flow_filter {
	uint8_t table_id;  /* 255: all tables */
	bool strict;       /* same match and priority; else every flow at least as specific */
	uint16_t priority; /* strict only */
	uint64_t cookie;
	uint64_t cookie_mask;         /* 0: any cookie */
	uint32_t out_port;            /* SL_PORT_ANY: any; else flows with an output to this port */
	uint32_t out_group;           /* SL_GROUP_ID_ANY: any; else flows with this group action */
	uint32_t meter_id;            /* 0: any; else flows whose meter instruction names it */
	const struct sl_match *match; /* NULL: match everything */
};

/** Initialise a filter that selects every flow of every table. */
void sl_flow_filter_init(struct sl_flow_filter *flt);
/** True when @f is selected by @flt.  Control thread. */
bool sl_flow_filter_match(const struct sl_flow *f, const struct sl_flow_filter *flt);

/** Per-table traffic counters, summed over workers. */
struct sl_pipeline_table_stats {
	uint64_t lookups;
	uint64_t matched;
	uint64_t missed; /* lookups that found nothing (table-miss entry included in matched) */
};

/** Per-worker scratch and counters; cache-line aligned, private to one worker. */
struct sl_pipeline_ctx;

/** Packet-in reasons (OFPR_*). */
#define SL_PIN_NO_MATCH 0
#define SL_PIN_ACTION 1
#define SL_PIN_INVALID_TTL 2 /* dec_ttl / dec_mpls_ttl expired (sl_pipeline_set_invalid_ttl_pin) */

/** Why and how a packet goes to the controller (an output:CONTROLLER). */
struct sl_pin {
	uint8_t reason;   /* SL_PIN_*: NO_MATCH when the table-miss entry sent it */
	uint8_t table_id; /* table of the flow that sent it; 0xff from a packet_out */
	uint16_t max_len; /* bytes of the packet to send; 0xffff = all */
	uint32_t in_port;
	uint64_t cookie; /* of the flow; all-ones from a packet_out */
	uint64_t metadata;
	uint64_t tunnel_id;
};

/**
 * Hooks the datapath gives the pipeline for the packet-level work it owns.
 * All run on the worker.
 */
struct sl_pipeline_hooks {
	/*
	 * Emit a copy of @p (as it is now) to @port, for packets with several
	 * outputs.  @port may be SL_PORT_CONTROLLER (then @pin says why) or,
	 * for packet_out actions, SL_PORT_TABLE (run the copy through the
	 * pipeline afterwards).  Returns 0, or -ENOMEM when no copy could be
	 * made (the pipeline counts SL_DROP_CLONE_FAILED).
	 */
	int (*emit_copy)(void *arg, const struct sl_pkt *p, uint32_t port,
			 const struct sl_pin *pin);
	void *arg;
	/*
	 * The caller is keeping up with its input (its last receive returned
	 * less than a full burst): expensive searches then run whatever the
	 * search budget holds (sl_pipeline_search_budget_set).  False, and a
	 * NULL @hooks, let the budget refuse them.
	 */
	bool keeping_up;
	/*
	 * Every packet of the burst enters with the same in_port and metadata
	 * (a worker's burst comes from one port, metadata 0): until an entry
	 * writes metadata, a table on those registers alone is searched once
	 * for the whole burst.
	 */
	bool same_registers;
	/*
	 * The burst's time in sl_pipeline_tsc ticks, read by the caller just
	 * before (a worker's rx time): one clock read less per burst.  0: the
	 * pipeline reads the clock.
	 */
	uint64_t now;
};

/**
 * Create an empty pipeline: no tables; a table is created when first
 * declared (sl_pipeline_table_declare) or when a flow is added to it (kind
 * mask, fields from its first flows).
 *
 * @return 0 or -ENOMEM.  Init only.
 */
int sl_pipeline_create(struct sl_pipeline **out);
/** Destroy (NULL-safe).  Init only. */
void sl_pipeline_destroy(struct sl_pipeline *pl);

/**
 * Declare a table's kind, fields and capacity.
 *
 * @return 0; -EBUSY when the table already holds flows; -EINVAL with a
 *         reason in @err (bad kind/field combination: lpm takes exactly one
 *         field, direct exactly one exact field, e.g. metadata).
 *         Control thread.
 */
int sl_pipeline_table_declare(struct sl_pipeline *pl, const struct sl_table_spec *ts, char *err,
			      size_t err_size);

/**
 * Set the port list used by FLOOD and ALL and to validate outputs.
 *
 * @param n_ports  Ports are numbered 1..n_ports.
 * @param up       up[i] for port i + 1: false means down (no output, counted).
 * Init only.
 */
void sl_pipeline_ports_set(struct sl_pipeline *pl, unsigned n_ports, const bool *up);
/**
 * A port joins (run-time port add; also LOCAL, SL_PORT_LOCAL): outputs, FLOOD
 * and ALL use it from now on when @live.  Control thread, any time; the
 * caller makes sure the workers can transmit on it first (worker.h).
 */
void sl_pipeline_port_add(struct sl_pipeline *pl, uint32_t port, bool live);
/**
 * A port leaves: outputs to it count bad-port drops (flows naming it stay,
 * as in Open vSwitch), FLOOD and ALL skip it.  Workers may still use it
 * until the next grace period.  Control thread, any time.
 */
void sl_pipeline_port_del(struct sl_pipeline *pl, uint32_t port);
/** Mark one port live or not (link down, port_mod down).  Control thread, any time. */
void sl_pipeline_port_set_live(struct sl_pipeline *pl, uint32_t port, bool live);
/** True when @port (LOCAL included) is a port of the pipeline and live. */
bool sl_pipeline_port_live(const struct sl_pipeline *pl, uint32_t port);
/** The highest numbered port present (LOCAL aside); at most 1024. */
unsigned sl_pipeline_n_ports(const struct sl_pipeline *pl);

/**
 * Add a flow (OpenFlow add: an existing entry with the same match and
 * priority is replaced, counters kept unless SL_FF_RESET_COUNTS).
 *
 * @return 0; -EINVAL with @err naming the problem (the table kind cannot
 *         hold this match, goto not forward, bad action); -ENOSPC;
 *         -E2BIG (the table's key would grow past SL_KEY_MAX).
 *         Control thread.
 */
int sl_pipeline_flow_add(struct sl_pipeline *pl, const struct sl_flow_spec *fs, char *err,
			 size_t err_size);

/**
 * Delete the flows @flt selects.  They stop matching at the next publish
 * and are reported through the removed hook with @reason (flows without
 * SL_FF_SEND_FLOW_REM too: the hook decides).  Groups keep their reference
 * counts.
 *
 * @return the number of flows deleted.  Control thread.
 */
unsigned sl_pipeline_flow_del(struct sl_pipeline *pl, const struct sl_flow_filter *flt,
			      uint8_t reason);

/**
 * OpenFlow modify: give every flow @flt selects the instructions of @fs
 * (cookie, match, priority and timeouts stay; counters stay unless
 * fs->flags has SL_FF_RESET_COUNTS).
 *
 * @param n_modified  Out: flows changed.
 * @return 0, or -errno with @err and sl_pipeline_fail() set (nothing changed).
 *         Control thread.
 */
int sl_pipeline_flow_modify(struct sl_pipeline *pl, const struct sl_flow_filter *flt,
			    const struct sl_flow_spec *fs, unsigned *n_modified, char *err,
			    size_t err_size);

/**
 * Remove flows whose idle or hard timeout has passed at @now (TSC), with
 * reason SL_FLOW_REMOVED_IDLE / _HARD.  Idle time counts from the last
 * burst that hit the flow.
 *
 * @return flows removed.  Control thread; call about once a second.
 */
unsigned sl_pipeline_flow_expire(struct sl_pipeline *pl, uint64_t now);

/** Callback for sl_pipeline_flow_iterate; return non-zero to stop. */
typedef int (*sl_flow_iter_fn)(const struct sl_flow *f, void *arg);
/** Visit the flows of one table (table_id < SL_TABLES_MAX) or all (255). */
int sl_pipeline_flow_iterate(const struct sl_pipeline *pl, unsigned table_id, sl_flow_iter_fn fn,
			     void *arg);

/** Number of flows in a table, or in all tables for 255. */
unsigned sl_pipeline_flow_count(const struct sl_pipeline *pl, unsigned table_id);

/** Describe a table: NULL when it does not exist. */
const struct sl_table *sl_pipeline_table(const struct sl_pipeline *pl, unsigned table_id);

/** Create a worker context for @pl.  Returns NULL on ENOMEM.  Init only. */
struct sl_pipeline_ctx *sl_pipeline_ctx_create(const struct sl_pipeline *pl);
void sl_pipeline_ctx_destroy(struct sl_pipeline_ctx *ctx);

/**
 * Deferred credits (off by default): the FFP's path record hits are credited
 * to their flow entries (n_packets, n_bytes, last hit) only by
 * sl_pipeline_ctx_flush_credits, not per packet.  A worker that turns this on
 * must flush before every quiescent state it reports (the entries stay alive
 * until then) and soon after traffic stops (counters read by the control
 * thread lag until the flush).  The worker's thread.
 */
void sl_pipeline_ctx_defer_credits(struct sl_pipeline_ctx *ctx, bool on);
/** Deferred credits are waiting.  The worker's thread. */
bool sl_pipeline_ctx_credits_pending(const struct sl_pipeline_ctx *ctx);
/** Credit the deferred hits to their entries.  The worker's thread. */
void sl_pipeline_ctx_flush_credits(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx);

/**
 * Run a burst through the pipeline.
 *
 * @param pl         Pipeline.
 * @param ctx        This worker's context.
 * @param pkts       Packet contexts (in_port, data, len set; sl_pkt_init).
 * @param n          Packets, <= SL_BURST_MAX.
 * @param hooks      Datapath hooks (copies for multi-output).
 * @param out_ports  Out: final output port of each packet, or SL_PORT_DROP.
 * @param drops      Out: drop reason of each dropped packet.
 * @return the number of packets with an output port.  Any worker.
 */
unsigned sl_pipeline_run_burst(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx,
			       struct sl_pkt *pkts, unsigned n,
			       const struct sl_pipeline_hooks *hooks, uint32_t out_ports[],
			       uint8_t drops[]);

/**
 * The packet-in details of lane @lane of the last burst, whose out port is
 * SL_PORT_CONTROLLER.  Same worker, before its next burst.
 */
const struct sl_pin *sl_pipeline_pin(const struct sl_pipeline_ctx *ctx, unsigned lane);

/**
 * Execute an action list on one packet (an OpenFlow packet_out).  Outputs
 * behave as in flows; output:TABLE is allowed here: the packet (or, if more
 * outputs follow, a copy through emit_copy) is to be run through the
 * pipeline by the caller, with *out_port = SL_PORT_TABLE.
 *
 * @param p         The packet; p->in_port is the packet_out's in_port.
 * @param out_port  Out: final output port, SL_PORT_CONTROLLER (details via
 *                  sl_pipeline_pin(ctx, 0)), SL_PORT_TABLE, or SL_PORT_DROP.
 * @param drop      Out: the drop reason when *out_port is SL_PORT_DROP.
 * @return true when the packet has an output.  Any worker.
 */
bool sl_pipeline_exec_actions(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx,
			      struct sl_pkt *p, const struct sl_action *actions, unsigned n,
			      const struct sl_pipeline_hooks *hooks, uint32_t *out_port,
			      uint8_t *drop);

/**
 * Check a packet_out's action list and resolve its group references (for
 * sl_pipeline_exec_actions).  output:TABLE is allowed.  A group named here
 * must not be deleted while the packet_out is queued.
 *
 * @return 0 or -errno with @err and sl_pipeline_fail() set.  Control thread.
 */
int sl_pipeline_actions_prepare(struct sl_pipeline *pl, struct sl_action *actions, unsigned n,
				char *err, size_t err_size);

/** Sum of one table's counters over the given worker contexts. */
void sl_pipeline_table_stats(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
			     unsigned table_id, struct sl_pipeline_table_stats *st);
/** Drop counters (indexed by enum sl_drop_reason) summed over worker contexts. */
void sl_pipeline_drop_stats(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
			    uint64_t drops[SL_DROP__MAX]);
/** Number of multi-output copies made, summed over worker contexts. */
uint64_t sl_pipeline_copies(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs);

/** A table's declared (or default) kind, fields and capacity. */
const struct sl_table_spec *sl_pipeline_table_spec(const struct sl_pipeline *pl, unsigned table_id);
/** True when the table's spec was declared (else it is the default, fields from the flows). */
bool sl_pipeline_table_declared(const struct sl_pipeline *pl, unsigned table_id);

/**
 * Finish a batch of flow changes (e.g. a startup file): every table folds
 * its pending changes into its fast structures (table.h sl_table_commit),
 * then the batch is published.
 *
 * @return 0, or the first table's -errno (tables stay correct).  Control thread.
 */
int sl_pipeline_commit(struct sl_pipeline *pl);

/**
 * Make every change since the last publish visible to the workers, wait
 * for them to leave the old copies (sync hook), bring the old copies up to
 * date, and free (reporting through the removed hook) the flows the batch
 * removed.  Cheap when nothing changed.  Control thread.
 */
void sl_pipeline_publish(struct sl_pipeline *pl);
/** True when changes wait for sl_pipeline_publish(). */
bool sl_pipeline_dirty(const struct sl_pipeline *pl);

/**
 * Take in what the tables' background builds finished (mask tables compile
 * their rte_acl snapshot on a builder thread while lookups go on with the
 * tuple-space delta) and publish them.  A finished build lands in the
 * standby copy, which is then published; the other copy takes its own when
 * it is standby again (at that publish, or a later poll).  Results never
 * change, only lookup cost.  Call it often (each control-loop round); cheap
 * when nothing finished.
 *
 * @return true when it published.  Control thread.
 */
bool sl_pipeline_poll(struct sl_pipeline *pl);

/**
 * Is a background build in flight for either copy of table @table_id?
 * Control thread.
 */
bool sl_pipeline_table_rebuilding(const struct sl_pipeline *pl, unsigned table_id);

/** Set the grace-period hook (see sl_pipeline_sync_fn).  Init only. */
void sl_pipeline_set_sync(struct sl_pipeline *pl, sl_pipeline_sync_fn fn, void *arg);
/** Set the hook told of every removed flow.  Init only. */
void sl_pipeline_set_removed(struct sl_pipeline *pl, sl_flow_removed_fn fn, void *arg);
/** Why the last failing control call failed. */
enum sl_pipeline_fail sl_pipeline_fail(const struct sl_pipeline *pl);

/**
 * Turn the per-worker decision cache in front of mask tables on or off
 * (default on).  The cache maps a table's extracted key to its winning entry
 * and is invalidated per table by every change, so results never differ;
 * off measures the classifiers alone.  Control thread, datapath stopped.
 */
void sl_pipeline_cache_enable(struct sl_pipeline *pl, bool on);

/**
 * The search budget: how much of a worker's time cache-missing searches in
 * expensive tables may take while the worker is behind.
 *
 * A lookup that misses the decision cache searches the table itself.  In a
 * mask table whose masks rte_acl cannot take (distinct arbitrary-bit masks)
 * that is one probe per mask: ~16 us for 2,000 masks, the time of ~150
 * cached packets.  Traffic with fresh headers (a tuple-space explosion
 * attack, as CVE-2019-25076 against Open vSwitch) then takes the whole
 * worker and cached flows starve.  So each worker measures the cycles of
 * these searches (per table: a moving average of the cost per key) and
 * charges those of tables whose cost reaches @cost_ns to a token bucket
 * that fills with @share_pct percent of the worker's cycles (at most 50 ms
 * worth of it).  While the bucket is empty and the worker is behind
 * (sl_pipeline_hooks.keeping_up false), packets that would need such a
 * search are dropped with reason SL_DROP_SEARCH_BUDGET, unsearched and not
 * cached; the entries they would have matched are not credited.  The
 * classic upcall limit: cached flows keep (100 - share_pct) % of the worker,
 * and a legitimate new flow in such a table may lose packets until the
 * bucket refills.  Searches of cheaper tables, cache hits, traces and
 * tables without the decision cache are never refused.
 */
struct sl_search_budget {
	unsigned share_pct; /* 0 (off) .. 100: share of a worker's cycles */
	unsigned cost_ns;   /* per-key search cost from which a table's searches count */
};
/* The sluice defaults (--search-budget); a new pipeline starts with the budget off. */
#define SL_SEARCH_BUDGET_PCT_DEFAULT 5
#define SL_SEARCH_BUDGET_COST_NS_DEFAULT 1000

/**
 * Set the search budget (see struct sl_search_budget); share_pct 0 turns
 * it off.  Workers see it from their next burst.
 *
 * @return 0, or -EINVAL for a share above 100.  Control thread.
 */
int sl_pipeline_search_budget_set(struct sl_pipeline *pl, const struct sl_search_budget *b);
/** The search budget in force.  Control thread. */
void sl_pipeline_search_budget_get(const struct sl_pipeline *pl, struct sl_search_budget *b);

/** The search budget's counters, summed over workers. */
struct sl_search_budget_stats {
	uint64_t searches; /* keys searched in budgeted tables (cache misses) */
	uint64_t cycles;   /* TSC cycles those searches took */
	uint64_t refused;  /* packets dropped unsearched (drop reason search-budget) */
};
/** Sum the search budget's counters over the given worker contexts. */
void sl_pipeline_search_budget_stats(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
				     struct sl_search_budget_stats *st);
/**
 * The measured cost of one cache-missing search of table @table_id, in TSC
 * cycles per key: the highest of the workers' moving averages, 0 before
 * any measurement (only tables with many masks are measured).
 */
uint64_t sl_pipeline_search_cost(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
				 unsigned table_id);

/**
 * Several workers run this pipeline: flow and group counters are then
 * updated by atomic adds (relaxed; a flow's counters are credited once per
 * run of packets hitting it, so this costs one locked add per run).  With
 * one worker they stay plain adds.  Table, drop and cache counters live in
 * each worker's context and never need this.  Init only (before workers run).
 */
void sl_pipeline_set_shared_counters(struct sl_pipeline *pl, bool on);
/**
 * Send packets whose TTL expires (dec_ttl, dec_mpls_ttl) to the controller,
 * reason SL_PIN_INVALID_TTL, besides dropping them (counted ttl-expired):
 * on while some controller connection asked for OFPR_INVALID_TTL packet-ins
 * (OpenFlow 1.3 asks through the async configuration).  The copy counts as
 * a copy.  Control thread, any time; off by default.
 */
void sl_pipeline_set_invalid_ttl_pin(struct sl_pipeline *pl, bool on);

/*
 * Packet trace (ovs-appctl ofproto/trace): one packet through the real
 * pipeline code on a context of its own, recording each table it visits and
 * the entry it wins, with no side effect: no flow, group or meter counter
 * moves, meters take no tokens (a metered packet is traced as passing),
 * set_state and NORMAL's learning are skipped, state tables are only read.
 * The accelerators (path records, the decision cache, FFP LUTs) are those of
 * the trace context: cold, so the trace walks every table.
 */
#define SL_TRACE_STEPS_MAX 64
#define SL_TRACE_OUTS_MAX 64
enum sl_trace_kind {
	SL_TRACE_HIT,       /* the table's winning entry (flow) ran */
	SL_TRACE_MISS,      /* no entry and no table-miss entry: dropped */
	SL_TRACE_STATE,     /* a state table loaded the packet's state */
	SL_TRACE_METER,     /* the entry's meter (not applied) */
	SL_TRACE_SET_STATE, /* a set_state (not applied) */
};
/* What answers a table's lookup for this packet once the datapath is warm. */
enum sl_trace_accel {
	SL_TRACE_ACCEL_SEARCH, /* the table's own search (or only its table-miss entry) */
	SL_TRACE_ACCEL_DCACHE, /* the decision cache in front of a mask table */
	SL_TRACE_ACCEL_LUT,    /* the FFP's lookup table (a low-latency packet) */
	SL_TRACE_ACCEL_ONE,    /* a table of one match-all entry: no lookup */
};
/* What would serve the packet in the datapath (sl_pipeline_trace's verdict on the caches). */
enum sl_trace_tier {
	SL_TRACE_TIER_TABLES,     /* the per-table path: each table's lookup (steps' accel) */
	SL_TRACE_TIER_FLOW_CACHE, /* a flow-cache path record: one probe for the whole path */
};
struct sl_trace_step {
	uint8_t kind; /* enum sl_trace_kind */
	uint8_t table_id;
	uint8_t accel;              /* HIT, MISS: enum sl_trace_accel */
	const struct sl_flow *flow; /* HIT, METER, SET_STATE */
	uint32_t value; /* STATE: the state loaded; METER: the meter id; SET_STATE: the state */
};
struct sl_trace {
	unsigned n_steps;
	bool truncated;
	/*
	 * The cache tier.  FLOW_CACHE: tier_hops entries in the record,
	 * tier_plain when the probe itself outputs the packet (goto-only hops,
	 * then one output or dec_ttl and output); the first packet of a key
	 * still walks the tables and fills the record, and a worker whose
	 * adaptive rule stepped aside (/sluice/flow_cache) walks them too.
	 * TABLES: tier_why is the flow cache's reason for having no spec (enum
	 * sl_flow_cache_inactive), or SL_FLOW_CACHE_ACTIVE when the spec is there
	 * but this path cannot be recorded; then tier_step is the step that stops
	 * it (an entry that applies actions or meters before goto_table, a table
	 * the spec does not cover, more than 8 entries).
	 */
	uint8_t tier, tier_why, tier_hops, tier_step;
	bool tier_plain;
	struct sl_trace_step steps[SL_TRACE_STEPS_MAX];
	unsigned n_outs; /* every output, copies first, in order */
	uint32_t outs[SL_TRACE_OUTS_MAX];
	struct sl_pin pins[SL_TRACE_OUTS_MAX]; /* outs[i] == SL_PORT_CONTROLLER: why */
	uint8_t drop;                          /* SL_DROP_*, valid when dropped */
	bool dropped; /* the packet itself went nowhere (copies may have) */
};
/**
 * Trace packet @p (in_port, metadata and tunnel_id set; its frame may be
 * changed) through the pipeline with @ctx (a context of its own, never a
 * worker's).  Control thread (tables are read as a worker reads them).
 */
void sl_pipeline_trace(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct sl_pkt *p,
		       struct sl_trace *out);
/**
 * Build a frame that a match describes (ofproto/trace's flow syntax): its
 * shape from dl_type, vlan_vid and nw_proto (Ethernet, a VLAN tag, an MPLS
 * label, IPv4/IPv6 with TCP, UDP, SCTP, ICMP or ICMPv6 (an ND message when
 * icmpv6_type is 135 or 136), ARP), every field's value written in, IP and
 * L4 checksums right (not SCTP's CRC), fields left out zero.  in_port,
 * metadata and tunnel_id go into @p.  @buf holds @headroom bytes, then the
 * frame.
 *
 * @return 0, -ENOSPC (@cap below headroom + 256).  Any thread.
 */
int sl_trace_frame(const struct sl_match *m, uint8_t *buf, size_t cap, struct sl_pkt *p,
		   uint16_t headroom);

/*
 * Live trace: the next N packets the datapath receives (optionally only on
 * one in_port), each traced as sl_pipeline_trace traces a packet, by the
 * worker that received it, right before it forwards it.  The control thread
 * creates a recorder and publishes it to the workers (sl_worker_trace_set);
 * a worker with a recorder copies each received frame up to its first
 * SL_TRACE_LIVE_FRAME bytes into a record it claims (an atomic counter: any
 * number of workers) and traces the copy on its own context of the recorder,
 * so the packet forwarded is untouched and nothing in the pipeline changes.
 * Without a recorder a worker pays one pointer test per burst.
 *
 * A record keeps what it needs once the packet is gone: the entries its
 * steps won are copied as flow specs (struct sl_trace's flow pointers are
 * cleared: the entries may be deleted after the worker's next quiescent
 * state).
 */
#define SL_TRACE_LIVE_MAX 64     /* packets one recorder takes */
#define SL_TRACE_LIVE_HITS 8     /* entries kept per packet (the first ones) */
#define SL_TRACE_LIVE_FRAME 2048 /* frame bytes traced and kept */
struct sl_trace_live;
struct sl_trace_live_rec {
	uint32_t in_port;
	uint32_t len;       /* the frame's length (only the first SL_TRACE_LIVE_FRAME traced) */
	uint64_t tsc;       /* when its burst was received */
	unsigned worker;    /* the worker that traced it */
	struct sl_trace tr; /* steps[].flow NULL; hit[] holds the entries */
	uint8_t hit_of[SL_TRACE_STEPS_MAX]; /* step -> index in hit[], 0xff: none kept */
	struct sl_flow_spec hit[SL_TRACE_LIVE_HITS];
	uint8_t frame[SL_TRACE_LIVE_FRAME];
};
/**
 * Create a recorder for @n_packets (1..SL_TRACE_LIVE_MAX) packets received
 * on @in_port (0: any port), traced by up to @n_workers workers (ids
 * 0..n_workers-1).
 * @return 0, -EINVAL (a count out of range), -ENOMEM.  Control thread.
 */
int sl_trace_live_create(const struct sl_pipeline *pl, unsigned n_packets, uint32_t in_port,
			 unsigned n_workers, struct sl_trace_live **out);
/** Free a recorder no worker can still use (NULL-safe).  Control thread. */
void sl_trace_live_destroy(struct sl_trace_live *lt);
/**
 * Trace the first packets of a burst received on @in_port, as far as the
 * recorder takes them: @frames[i] of @lens[i] bytes (the contiguous part).
 * @return false once the recorder is full (the caller may stop calling).
 * The worker @worker (its id below the recorder's n_workers), inside its
 * RCU read side.
 */
bool sl_trace_live_burst(struct sl_trace_live *lt, unsigned worker, uint32_t in_port,
			 const uint8_t *const frames[], const uint16_t lens[], unsigned n,
			 uint64_t tsc);
/** Packets the recorder wants, and how many records are complete.  Any thread. */
unsigned sl_trace_live_wanted(const struct sl_trace_live *lt);
unsigned sl_trace_live_done(const struct sl_trace_live *lt);
/** The port the recorder listens to (0: any).  Any thread. */
uint32_t sl_trace_live_port(const struct sl_trace_live *lt);
/**
 * Record @i, in the order the packets were claimed, or NULL while it is
 * being written (or @i is past what was claimed).  Control thread.
 */
const struct sl_trace_live_rec *sl_trace_live_get(const struct sl_trace_live *lt, unsigned i);

/*
 * output:NORMAL: the datapath as an L2 learning switch.  A packet sent to
 * NORMAL teaches the table its source (VLAN, MAC) on its in_port, then goes
 * to the port its destination was learned on, or is flooded (every live
 * port but in_port) when the destination is unknown, aged out, multicast or
 * broadcast; a destination learned on the in_port drops it (in-port-loop).
 * The VLAN is the outer tag's VID (0 untagged): every port is a trunk.
 * The table (16,384 addresses) is shared by the workers, lock-free.
 */
/** Seconds an address stays learned without traffic (Open vSwitch's default). */
#define SL_MAC_AGING_DEFAULT 300
/** One learned address. */
struct sl_fdb_entry {
	uint16_t vlan;
	uint8_t mac[6];
	uint32_t port;
	uint32_t age; /* seconds since last seen */
};
/** Up to @max learned addresses (not aged out), in table order.  @return how many.  Any thread. */
unsigned sl_pipeline_fdb_dump(const struct sl_pipeline *pl, struct sl_fdb_entry *out, unsigned max);
/** Forget the addresses learned on @port (0: all).  Control thread, any time. */
void sl_pipeline_fdb_flush(struct sl_pipeline *pl, uint32_t port);

/**
 * Longest goto chain, in tables, that any packet has traversed so far (0 before the first
 * packet), the maximum over the worker contexts.  Tracked per table per burst.  Any thread
 * (a racy read of a counter that only grows).
 */
unsigned sl_pipeline_chain_traversed(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs);

/**
 * Longest goto chain, in tables, that the installed flows make possible from table 0 (1 for a
 * pipeline without goto_table; 0 with no flows).  Walks every flow.  Control thread.
 */
unsigned sl_pipeline_chain_installed(const struct sl_pipeline *pl);

/** Decision-cache hits and misses summed over worker contexts. */
void sl_pipeline_cache_stats(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
			     uint64_t *hits, uint64_t *misses);

/*
 * Groups (OpenFlow 1.3 section 5.6): all, select, indirect, fast failover.
 *
 * Chaining: a bucket may hold a group action (the other group runs on the
 * packet as the bucket leaves it), and a fast-failover bucket may watch a
 * group instead of, or as well as, a port.  The groups a group reaches
 * through both kinds of reference form a graph that is kept acyclic (a
 * group_mod that would close a loop is refused) and at most
 * SL_GROUP_CHAIN_MAX groups deep, counting the first; a group that another
 * group references cannot be deleted alone.  Workers bound the depth too
 * (drop reason group-chain), so a walk never recurses without limit.
 *
 * Liveness (section 5.6.1): a bucket is live when it watches nothing (OVS),
 * or its watch_port is live, or its watch_group is live; a group is live
 * when one of its buckets is (select: one of weight > 0).  Workers read a
 * per-group flag the control thread recomputes on every port or group
 * change, so a fast-failover walk costs one load per watched group.
 */
/** Groups a packet may pass through, one inside another's bucket (the first included). */
#define SL_GROUP_CHAIN_MAX 8

/** A group's counters. */
struct sl_group_stats {
	uint32_t ref_count; /* flows whose actions name the group, plus groups forwarding to it */
	uint64_t n_packets, n_bytes;
	uint64_t created_tsc;
	uint16_t n_buckets;
	uint64_t bucket_packets[SL_GROUP_BUCKETS_MAX];
	uint64_t bucket_bytes[SL_GROUP_BUCKETS_MAX];
};

/**
 * Add a group.  Its buckets may chain to groups that exist (group actions,
 * and fast failover's watch_group).
 *
 * @return 0; -EEXIST (SL_FAIL_GROUP_EXISTS); -EINVAL with sl_pipeline_fail()
 *         BAD_GROUP_ID, BAD_GROUP_TYPE, BAD_BUCKET, BAD_WATCH (a watched port
 *         or group that does not exist) or an action failure (BAD_OUT_GROUP:
 *         a chained group that does not exist); -ELOOP (GROUP_LOOP: a bucket
 *         names the group itself); -EOPNOTSUPP (GROUP_CHAINING: the chain
 *         would be longer than SL_GROUP_CHAIN_MAX); -ENOSPC (TOO_MANY_GROUPS).
 *         Control thread; visible at the next publish.
 */
int sl_pipeline_group_add(struct sl_pipeline *pl, const struct sl_group_spec *gs, char *err,
			  size_t err_size);
/**
 * Replace a group's type and buckets (flows and chaining groups keep
 * pointing at it; bucket counters restart).
 *
 * @return as sl_pipeline_group_add (GROUP_LOOP also when a chained group
 *         reaches this one; GROUP_CHAINING when a chain through it grows too
 *         long); -ENOENT (UNKNOWN_GROUP).  Control thread.
 */
int sl_pipeline_group_modify(struct sl_pipeline *pl, const struct sl_group_spec *gs, char *err,
			     size_t err_size);
/**
 * Delete group @group_id (SL_GROUP_ID_ALL: every group) and, as the
 * specification says, every flow whose actions name it (removed with reason
 * SL_FLOW_REMOVED_GROUP_DELETE).  A missing group is not an error.  A group
 * that another group's bucket forwards to or watches is not deleted
 * (OFPGMFC_CHAINED_GROUP); deleting every group always succeeds.
 *
 * @return groups deleted; -EBUSY (SL_FAIL_CHAINED_GROUP).  Control thread.
 */
int sl_pipeline_group_del(struct sl_pipeline *pl, uint32_t group_id);
/**
 * Read a group back: its spec (buckets and actions as added) and counters.
 *
 * @return 0 or -ENOENT.  Control thread.
 */
int sl_pipeline_group_get(const struct sl_pipeline *pl, uint32_t group_id, struct sl_group_spec *gs,
			  struct sl_group_stats *st);
/** Number of groups. */
unsigned sl_pipeline_group_count(const struct sl_pipeline *pl);
/**
 * Group ids in increasing order: up to @max ids from position @start.
 *
 * @return ids written.  Control thread.
 */
unsigned sl_pipeline_group_ids(const struct sl_pipeline *pl, unsigned start, uint32_t *ids,
			       unsigned max);

/*
 * Meters (OpenFlow 1.3 section 5.7; the specs are in flow.h: sl_meter_spec).
 * A packet of a flow with a meter instruction goes through the meter first:
 * each band is a token bucket of its rate and burst; of the bands the packet
 * exceeds, the one with the highest rate applies (drop: the packet is
 * dropped, reason "meter"; DSCP remark: an assured-forwarding code point's
 * drop precedence rises).  Buckets are shared by all workers, lock-free.
 */

/** What the meter table supports (OFPMP_METER_FEATURES). */
struct sl_meter_features {
	uint32_t max_meter;
	uint32_t band_types;   /* bit (1 << SL_BAND_*) for each supported band type */
	uint32_t capabilities; /* SL_METER_* flags supported */
	uint8_t max_bands;
	uint8_t max_color;
};
/** Fill @mf with what Sluice's meters support. */
void sl_pipeline_meter_features(struct sl_meter_features *mf);
/**
 * Add a meter.
 *
 * @return 0; -EEXIST (SL_FAIL_METER_EXISTS); -EINVAL with sl_pipeline_fail()
 *         BAD_METER_ID, BAD_METER_FLAGS, BAD_BAND, BAD_RATE, BAD_BAND_VALUE or
 *         TOO_MANY_BANDS; -ENOSPC (TOO_MANY_METERS).  Control thread;
 *         effective at once (flows can name it at the next flow_add).
 */
int sl_pipeline_meter_add(struct sl_pipeline *pl, const struct sl_meter_spec *ms, char *err,
			  size_t err_size);
/**
 * Replace a meter's flags and bands (flows keep pointing at it; buckets
 * start full and band counters restart).
 *
 * @return as sl_pipeline_meter_add; -ENOENT (UNKNOWN_METER).  Control thread.
 */
int sl_pipeline_meter_modify(struct sl_pipeline *pl, const struct sl_meter_spec *ms, char *err,
			     size_t err_size);
/**
 * Delete meter @meter_id (SL_METER_ID_ALL: every meter) and every flow whose
 * meter instruction names it (removed with reason SL_FLOW_REMOVED_DELETE:
 * OpenFlow 1.3 has no meter-delete reason).  A missing meter is not an error.
 *
 * @return meters deleted.  Control thread.
 */
unsigned sl_pipeline_meter_del(struct sl_pipeline *pl, uint32_t meter_id);
/**
 * Read a meter back: its spec and counters.
 *
 * @return 0 or -ENOENT.  Control thread.
 */
int sl_pipeline_meter_get(const struct sl_pipeline *pl, uint32_t meter_id, struct sl_meter_spec *ms,
			  struct sl_meter_stats *st);
/** Meter ids in increasing order: up to @max ids from position @start.  @return ids written. */
unsigned sl_pipeline_meter_ids(const struct sl_pipeline *pl, unsigned start, uint32_t *ids,
			       unsigned max);

/*
 * Queues (OpenFlow 1.3 section 7.2.2; set_queue).  OpenFlow configures no
 * queue: as Open vSwitch's QoS tables do, the operator does (flow file
 * `queue=` lines, sluicectl set-queue).  A queue is a port's max-rate
 * policer, as OVS-DPDK's egress-policer: an output after set_queue:Q to a
 * port with queue Q passes while the queue's token bucket (GCRA, shared by
 * the workers without a lock) has room, and is dropped (counted queue-rate,
 * and as the queue's tx_errors) once max_rate is exceeded.  An output
 * after set_queue:Q to a port without queue Q goes out as if no queue were
 * set (its default queue), as in OVS.  A software switch has no scheduler
 * to guarantee a min_rate under contention: a min_rate is refused, not
 * silently ignored.  Outputs without set_queue pay nothing.
 */
#define SL_QUEUES_PER_PORT 8
/* A queue as the operator sets it: struct sl_queue_spec, in flow.h. */
struct sl_queue_info {
	struct sl_queue_spec spec;
	uint64_t tx_packets, tx_bytes; /* outputs the queue let through */
	uint64_t tx_errors;            /* outputs it dropped (max_rate exceeded) */
	uint64_t age_ms;               /* since it was set up */
};
/**
 * Add queue (port_no, queue_id), or change its rates (counters kept).
 *
 * @return 0; -EINVAL (port out of range, queue id OFPQ_ALL, max_rate 0, a
 *         min_rate), -ENOSPC (SL_QUEUES_PER_PORT on the port), -ENOMEM;
 *         @err names the value.  Control thread, any time.
 */
int sl_pipeline_queue_set(struct sl_pipeline *pl, const struct sl_queue_spec *qs, char *err,
			  size_t err_size);
/** Delete a queue.  @return 0 or -ENOENT.  Control thread, any time. */
int sl_pipeline_queue_del(struct sl_pipeline *pl, uint32_t port_no, uint32_t queue_id);
/**
 * The queues of port @port_no (SL_PORT_ANY: every port) whose id is
 * @queue_id (0xffffffff: any), by port then id: up to @max written to @out.
 *
 * @return how many there are (may exceed @max).  Control thread.
 */
unsigned sl_pipeline_queues(const struct sl_pipeline *pl, uint32_t port_no, uint32_t queue_id,
			    struct sl_queue_info *out, unsigned max);

/*
 * Stateful stages (OpenState; src/state/state.h is the manual).
 *
 * A table declared with kind SL_TABLE_STATE ("table=0,kind=state,
 * lookup=nw_src,update=nw_src,size=N") holds no flows: a packet reaching it
 * gets the state of its lookup-scope flow loaded into its `state` field
 * (0 when the flow has none) and goes on to the next table (id + 1), the
 * XFSM table, whose flows match `state` like any field and may run
 * set_state (SL_ACT_SET_STATE), which writes the state of the packet's
 * update-scope flow.  set_state with table SL_STATE_TABLE_AUTO writes the
 * state table the packet last passed; with an explicit id, that table.
 *
 * Who writes: one worker is the only writer of a state table (the first
 * to run or service it; state.h); the control functions below post commands to it
 * (applied within one worker loop round, sl_pipeline_service) or, while no
 * worker runs (no sync hook set), apply them themselves.  Declaring a state
 * table (sl_pipeline_table_declare) makes it live at once and waits a grace
 * period before freeing the table it replaces, with its states.
 */

/**
 * Worker housekeeping for state tables: apply commands the control thread
 * posted, expire entries a bucket at a time.  Call once per loop round.
 * A state table has one writer, the first worker (context @ctx) that runs
 * or services it; other workers read it and their set_states are refused
 * (counted `foreign`, state.h).  Any worker.
 */
void sl_pipeline_service(const struct sl_pipeline *pl, const struct sl_pipeline_ctx *ctx);

/**
 * Set the state of one flow of a state table.  @key must give every
 * lookup-scope field exactly (prerequisites such as dl_type may be present
 * too and are ignored).
 *
 * @return 0; -EINVAL with @err (not a state table, a scope field missing or
 *         masked, a field outside the scope); -EBUSY (the worker did not
 *         take commands for 100 ms); -ENOSPC (no worker and the table is
 *         full).  Control thread.
 */
int sl_pipeline_state_set(struct sl_pipeline *pl, unsigned table_id, const struct sl_match *key,
			  const struct sl_state_set *a, char *err, size_t err_size);

/**
 * Delete one flow's state (@key as for sl_pipeline_state_set) or, with
 * @key NULL, every state of the table.
 *
 * @return 0 or -EINVAL / -EBUSY as sl_pipeline_state_set.  Control thread.
 */
int sl_pipeline_state_del(struct sl_pipeline *pl, unsigned table_id, const struct sl_match *key,
			  char *err, size_t err_size);

/** Dump callback: one entry, its key as an exact match on the lookup-scope fields. */
typedef int (*sl_pipeline_state_fn)(const struct sl_match *key, const struct sl_state_entry_info *e,
				    void *arg);

/**
 * Visit the entries of a state table, after the commands posted before the
 * call were applied (waits up to 100 ms for the worker).
 *
 * @return 0, the callback's non-zero value, or -EINVAL (not a state table).
 *         Control thread.
 */
int sl_pipeline_state_dump(struct sl_pipeline *pl, unsigned table_id, sl_pipeline_state_fn fn,
			   void *arg);

/**
 * A state table's counters, after the commands posted before the call were
 * applied (waits up to 100 ms for the worker).
 *
 * @return 0 or -EINVAL (not a state table).  Control thread.
 */
int sl_pipeline_state_stats(struct sl_pipeline *pl, unsigned table_id, struct sl_state_stats *st);

/** The state table of @table_id, or NULL when it is not one.  Control thread. */
const struct sl_state *sl_pipeline_state_table(const struct sl_pipeline *pl, unsigned table_id);

/** Highest table id holding a table, or -1. */
int sl_pipeline_last_table(const struct sl_pipeline *pl);

/*
 * The fast forwarding path (FFP; the composite-pipeline design, section 4, docs/ffp.md): per-worker
 * hash lookup tables (LUTs) in front of mask and lpm tables, filled with the
 * low-latency entries that packets still low-latency hit, verified against
 * later table changes, never giving a decision the tables would not give.
 */

/** Turn the FFP on or off (default on).  Control thread; published at once. */
void sl_pipeline_ffp_enable(struct sl_pipeline *pl, bool on);
/**
 * Follow the cost model (default) or, with @on false, give every eligible
 * table with low-latency entries a LUT (tests).  Control thread; published.
 */
void sl_pipeline_ffp_cost_model(struct sl_pipeline *pl, bool on);

/**
 * Set (@on) or clear the controller's low-latency mark on every flow the
 * filter selects (strict or not, as in a flow_mod).  Control thread.
 *
 * @return the number of flows changed or already so.
 */
unsigned sl_pipeline_flow_set_ll(struct sl_pipeline *pl, const struct sl_flow_filter *flt, bool on);

/** Auto-promotion policy (seed 4.1: permanent or long-lived entries with steady hits). */
struct sl_ffp_auto {
	bool enabled;         /* default off */
	uint32_t min_pps;     /* promote at >= this many hits per second (checked each second) */
	uint16_t min_timeout; /* only entries with no timeout or idle/hard timeouts >= this (s) */
};
/** Set the auto-promotion policy; disabling demotes every auto-promoted entry.  Control thread. */
void sl_pipeline_ffp_auto_set(struct sl_pipeline *pl, const struct sl_ffp_auto *a);
/** Current auto-promotion policy. */
void sl_pipeline_ffp_auto_get(const struct sl_pipeline *pl, struct sl_ffp_auto *a);

/** What the FFP knows of one table (control thread). */
struct sl_ffp_table_info {
	bool eligible; /* kind mask or lpm, key <= 48 bytes */
	bool pays;     /* the cost model keeps a LUT (search cost > LUT probe cost) */
	bool active;   /* eligible, pays, FFP on and the table has low-latency entries */
	bool adaptive; /* not active, but each worker probes its LUT while more than
				adapt_permille of its LL lanes here win LL entries (ffp.h) */
	uint16_t adapt_permille;
	unsigned n_ll;       /* low-latency entries */
	unsigned n_ll_plain; /* ... whose instructions are one goto or one output (a LUT hit
				skips them too, so the cost model counts more gain: ffp.h) */
	uint32_t search_ns;  /* measured table search cost per key (0: not measured) */
	uint32_t probe_ns;   /* measured LUT probe cost per key */
};
void sl_pipeline_ffp_table_info(const struct sl_pipeline *pl, unsigned table_id,
				struct sl_ffp_table_info *info);

/** Per-LUT counters summed over workers. */
struct sl_ffp_lut_stats {
	uint64_t entries, hits, misses, verifications, invalidations, replacements, evictions,
		inserts;
};
void sl_pipeline_ffp_lut_stats(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
			       unsigned table_id, struct sl_ffp_lut_stats *st);

/**
 * The whole-pipeline flow cache (path records, docs/ffp.md "The flow
 * cache"): a packet whose way through the tables ran no apply_actions before
 * its last lookup leaves a record keyed by the union of every table's
 * fields; the next packet with that key is answered at the pipeline's entry
 * with one extraction and one probe, whatever the number of tables.  On by
 * default; each worker steps aside while too few lanes hit.  Off, every
 * packet crosses the tables (results are the same).  Control thread;
 * published.
 */
void sl_pipeline_ffp_path_enable(struct sl_pipeline *pl, bool on);

/** Why the flow cache has no spec (sl_ffp_path_stats.inactive). */
enum sl_flow_cache_inactive {
	SL_FLOW_CACHE_ACTIVE,
	SL_FLOW_CACHE_DISABLED,    /* sl_pipeline_ffp_path_enable(false), --no-flow-cache */
	SL_FLOW_CACHE_STATE,       /* the pipeline has state tables (per-packet changes) */
	SL_FLOW_CACHE_ONE_TABLE,   /* fewer than two tables in use: the table is the path */
	SL_FLOW_CACHE_TOO_MANY,    /* more tables than FFP_PATH_TABLES */
	SL_FLOW_CACHE_KEY_TOO_BIG, /* the union of the tables' fields exceeds SL_KEY_MAX */
};
const char *sl_flow_cache_inactive_name(enum sl_flow_cache_inactive why);

/** Path records: the spec (control thread) and counters summed over workers. */
struct sl_ffp_path_stats {
	uint64_t entries, hits, misses, inserts, evictions;
	uint64_t stale;     /* probes that found the key with an outdated signature */
	uint64_t probing;   /* workers whose adaptive rule has the cache on (else stepped aside) */
	uint64_t capacity;  /* records, all workers */
	unsigned n_tables;  /* tables the spec covers (0: no path records) */
	unsigned key_bytes; /* the union key */
	enum sl_flow_cache_inactive inactive;
};
void sl_pipeline_ffp_path_stats(const struct sl_pipeline *pl,
				const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
				struct sl_ffp_path_stats *st);

/*
 * A latency histogram fine enough for percentiles: 32 buckets per power of
 * two (3.1 % wide), values below 32 ns exact.
 */
#define SL_FFP_HIST_BUCKETS 1280
struct sl_ffp_hist {
	uint64_t count, sum_ns, max_ns;
	uint64_t bucket[SL_FFP_HIST_BUCKETS];
};
static inline void
sl_ffp_hist_add(struct sl_ffp_hist *h, uint64_t ns, uint64_t n)
{
	unsigned idx;

	if (ns < 32) {
		idx = (unsigned)ns;
	} else {
		unsigned e = 63u - (unsigned)__builtin_clzll(ns);
		idx = (e - 4) * 32 + (unsigned)((ns >> (e - 5)) & 31);
		if (idx >= SL_FFP_HIST_BUCKETS)
			idx = SL_FFP_HIST_BUCKETS - 1;
	}
	h->bucket[idx] += n;
	h->count += n;
	h->sum_ns += ns * n;
	if (ns > h->max_ns)
		h->max_ns = ns;
}
/** Quantile @q (0..1) in ns: the middle of the bucket holding it; 0 when empty. */
uint64_t sl_ffp_hist_quantile_ns(const struct sl_ffp_hist *h, double q);

/** Per-class packet counts and processing-time histograms summed over workers. */
struct sl_ffp_class_stats {
	uint64_t packets[2];           /* [0] normal, [1] low-latency (flag still set at the end) */
	struct sl_ffp_hist latency[2]; /* burst time inside the pipeline, once per packet */
};
void sl_pipeline_ffp_class_stats(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
				 struct sl_ffp_class_stats *st);

/**
 * Per-packet low-latency flags of the last burst (bit i: packet i hit only
 * low-latency entries).  The worker copies them into the mbuf dynfield.
 * Worker.
 */
uint64_t sl_pipeline_ll_lanes(const struct sl_pipeline_ctx *ctx);

/**
 * A push or pop action of the last burst moved a packet's start or
 * changed its length: the caller's buffers must follow the packets'
 * data/len.  False: every packet starts and ends where it came in.
 */
bool sl_pipeline_resized(const struct sl_pipeline_ctx *ctx);

/**
 * Has any entry ever been low-latency (a mark set, or auto-promotion on)?
 * Until then every forwarded packet is normal (flag 0) and the worker need
 * not write the dynfield (zeroed with the pool).  Sticky.  Any thread.
 */
bool sl_pipeline_ll_ever(const struct sl_pipeline *pl);

/**
 * Replace the last burst's low-latency flags: for a caller that ran the
 * pipeline on a sub-burst and maps its lanes back (src/fwd).  Worker.
 */
void sl_pipeline_ll_lanes_set(struct sl_pipeline_ctx *ctx, uint64_t lanes);

#endif /* SL_PIPELINE_H */
