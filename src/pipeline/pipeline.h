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
 * specification gives (copy TTL in, pop, push MPLS, push VLAN, copy TTL out,
 * dec TTL, set fields, queue, group, output).
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
 * Types here are host order and DPDK-free: the flow-file parser (flowfile)
 * and the OpenFlow codec fill them, the pipeline compiles them.
 *
 * Concurrency: one control thread changes the pipeline; workers call
 * sl_pipeline_run_burst with their own struct sl_pipeline_ctx.
 * TODO(#3): changes under traffic go through RCU; until then changes are
 * made before the datapath starts.
 */
#ifndef SL_PIPELINE_H
#define SL_PIPELINE_H

#include "../core/core.h"
#include "../pkt/pkt.h"
#include "../table/table.h"

/** Table ids 0..SL_TABLES_MAX-1 (OpenFlow: 0..254, 255 = all). */
#define SL_TABLES_MAX 254
/** Actions in one instruction's list. */
#define SL_ACTIONS_MAX 32

/* OpenFlow reserved port numbers (OFPP_*). */
#define SL_PORT_MAX_PHYS 0xffffff00u
#define SL_PORT_IN_PORT 0xfffffff8u
#define SL_PORT_TABLE 0xfffffff9u
#define SL_PORT_NORMAL 0xfffffffau
#define SL_PORT_FLOOD 0xfffffffbu
#define SL_PORT_ALL 0xfffffffcu
#define SL_PORT_CONTROLLER 0xfffffffdu
#define SL_PORT_LOCAL 0xfffffffeu
#define SL_PORT_ANY 0xffffffffu
/** Out-port value of a dropped packet in sl_pipeline_run_burst's results. */
#define SL_PORT_DROP 0u

/** One field of a match: value and mask, pkt.h encoding. */
struct sl_match_field {
	struct sl_field f;
	uint8_t value[SL_FIELD_SIZE_MAX]; /* sl_field_size(&f) bytes used; zero outside mask */
	uint8_t mask[SL_FIELD_SIZE_MAX];
};

/** A flow's match: the fields it constrains (prerequisites included). */
struct sl_match {
	uint8_t n_fields;
	struct sl_match_field fields[SL_KEY_FIELDS_MAX];
};

/** Action types (OpenFlow 1.3 OFPAT_* subset). */
enum sl_action_type {
	SL_ACT_OUTPUT,
	SL_ACT_SET_FIELD,
	SL_ACT_PUSH_VLAN,
	SL_ACT_POP_VLAN,
	SL_ACT_SET_NW_TTL,
	SL_ACT_DEC_NW_TTL,
	SL_ACT_COPY_TTL_OUT,
	SL_ACT_COPY_TTL_IN,
	SL_ACT_GROUP,
	SL_ACT_SET_QUEUE,
	SL_ACT__MAX
};

struct sl_action {
	uint8_t type; /* enum sl_action_type */
	union {
		struct {
			uint32_t port;    /* port number or SL_PORT_* */
			uint16_t max_len; /* bytes to the controller */
		} output;
		struct {
			struct sl_field f;
			uint8_t value[SL_FIELD_SIZE_MAX];
		} set_field;
		uint16_t ethertype; /* push_vlan: 0x8100 or 0x88a8 */
		uint8_t ttl;        /* set_nw_ttl */
		uint32_t group_id;  /* group */
		uint32_t queue_id;  /* set_queue (accepted, no effect) */
	};
};

/** Instructions of a flow entry, as decoded (host order). */
struct sl_instructions {
	uint8_t n_apply;
	uint8_t n_write;
	bool has_apply;   /* apply_actions present (even if empty) */
	bool has_write;   /* write_actions present */
	bool clear;       /* clear_actions */
	bool has_metadata; /* write_metadata */
	int16_t goto_table; /* -1: none */
	uint64_t metadata;
	uint64_t metadata_mask;
	struct sl_action apply[SL_ACTIONS_MAX];
	struct sl_action write[SL_ACTIONS_MAX];
};

/** Flow-mod flags (OFPFF_*). */
#define SL_FF_SEND_FLOW_REM 0x1
#define SL_FF_CHECK_OVERLAP 0x2
#define SL_FF_RESET_COUNTS 0x4
#define SL_FF_NO_PKT_COUNTS 0x8
#define SL_FF_NO_BYT_COUNTS 0x10

/** A flow entry as decoded from a flow file or a flow_mod. */
struct sl_flow_spec {
	uint8_t table_id;
	uint16_t priority;
	uint16_t idle_timeout;
	uint16_t hard_timeout;
	uint16_t flags; /* SL_FF_* */
	uint64_t cookie;
	uint64_t cookie_mask; /* for modify/delete filters */
	struct sl_match match;
	struct sl_instructions insns;
};

/** A table declaration: kind, match fields, capacity. */
struct sl_table_spec {
	uint8_t table_id;
	enum sl_table_kind kind;
	uint8_t n_fields;  /* 0: derive from the flows added before the table is first used */
	struct sl_field fields[SL_KEY_FIELDS_MAX];
	uint32_t max_entries; /* 0: default */
	char name[32];        /* may be empty */
};

/** A flow entry as the pipeline stores it (compact: 1M flows must fit). */
struct sl_flow {
	uint8_t table_id;
	uint8_t n_apply;      /* actions[0 .. n_apply-1]: apply_actions */
	uint8_t n_write;      /* actions[n_apply ..]: write_actions */
	uint8_t insn_flags;   /* SL_INSN_* */
	int16_t goto_table;   /* -1: none */
	uint16_t priority;
	uint16_t idle_timeout;
	uint16_t hard_timeout;
	uint16_t flags;       /* SL_FF_* */
	uint32_t slot;        /* index in the table's flow list (control path) */
	uint64_t cookie;
	uint64_t metadata;    /* write_metadata value */
	uint64_t metadata_mask;
	uint64_t n_packets;   /* TODO(#7): per-lcore counters once several workers share flows */
	uint64_t n_bytes;
	uint64_t last_hit_tsc; /* TSC of the last hit, 0 = never */
	uint64_t created_tsc;
	struct sl_action *actions; /* n_apply + n_write actions */
	uint8_t n_match;
	struct sl_match_field match[]; /* n_match fields, prerequisites included */
};

#define SL_INSN_APPLY 0x1    /* apply_actions present */
#define SL_INSN_WRITE 0x2    /* write_actions present */
#define SL_INSN_CLEAR 0x4    /* clear_actions */
#define SL_INSN_METADATA 0x8 /* write_metadata */

/** Rebuild the spec a flow was added with (for dumps).  Control thread. */
void sl_flow_to_spec(const struct sl_flow *f, struct sl_flow_spec *fs);

/** Time source for flow timestamps and latency (TSC on x86). */
uint64_t sl_pipeline_tsc(void);
/** Ticks of sl_pipeline_tsc per second (measured once). */
uint64_t sl_pipeline_tsc_hz(void);

struct sl_pipeline;

/** Per-table traffic counters, summed over workers. */
struct sl_pipeline_table_stats {
	uint64_t lookups;
	uint64_t matched;
	uint64_t missed; /* lookups that found nothing (table-miss entry included in matched) */
};

/** Per-worker scratch and counters; cache-line aligned, private to one worker. */
struct sl_pipeline_ctx;

/**
 * Hooks the datapath gives the pipeline for the packet-level work it owns.
 * All run on the worker.
 */
struct sl_pipeline_hooks {
	/*
	 * Emit a copy of @p (as it is now) to @port, for packets with several
	 * outputs.  Returns 0, or -ENOMEM when no copy could be made (the
	 * pipeline counts SL_DROP_CLONE_FAILED).
	 */
	int (*emit_copy)(void *arg, const struct sl_pkt *p, uint32_t port);
	void *arg;
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
 */
void sl_pipeline_ports_set(struct sl_pipeline *pl, unsigned n_ports, const bool *up);

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
 * Delete flows.  @strict: exact match and priority; else every flow whose
 * match is at least as specific as @fs->match (OpenFlow non-strict delete).
 * fs->cookie/cookie_mask filter; table_id 255 means all tables.
 *
 * @return the number of flows deleted.  Control thread.
 */
unsigned sl_pipeline_flow_del(struct sl_pipeline *pl, const struct sl_flow_spec *fs, bool strict);

/** Callback for sl_pipeline_flow_iterate; return non-zero to stop. */
typedef int (*sl_flow_iter_fn)(const struct sl_flow *f, void *arg);
/** Visit the flows of one table (table_id < SL_TABLES_MAX) or all (255). */
int sl_pipeline_flow_iterate(const struct sl_pipeline *pl, unsigned table_id, sl_flow_iter_fn fn,
			     void *arg);

/** Number of flows in a table, or in all tables for 255. */
unsigned sl_pipeline_flow_count(const struct sl_pipeline *pl, unsigned table_id);

/** Describe a table: NULL when it does not exist. */
const struct sl_table *sl_pipeline_table(const struct sl_pipeline *pl, unsigned table_id);
/** The key layout of an existing table, or NULL. */
const struct sl_key_layout *sl_pipeline_table_layout(const struct sl_pipeline *pl,
						     unsigned table_id);

/** Create a worker context for @pl.  Returns NULL on ENOMEM.  Init only. */
struct sl_pipeline_ctx *sl_pipeline_ctx_create(const struct sl_pipeline *pl);
void sl_pipeline_ctx_destroy(struct sl_pipeline_ctx *ctx);

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
			       struct sl_pkt *pkts, unsigned n, const struct sl_pipeline_hooks *hooks,
			       uint32_t out_ports[], uint8_t drops[]);

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

/**
 * Finish a batch of flow changes (e.g. a startup file): every table folds
 * its pending changes into its fast structures (table.h sl_table_commit).
 *
 * @return 0, or the first table's -errno (tables stay correct).  Control thread.
 */
int sl_pipeline_commit(struct sl_pipeline *pl);

/**
 * Turn the per-worker decision cache in front of mask tables on or off
 * (default on).  The cache maps a table's extracted key to its winning entry
 * and is invalidated per table by every change, so results never differ;
 * off measures the classifiers alone.  Control thread, datapath stopped.
 */
void sl_pipeline_cache_enable(struct sl_pipeline *pl, bool on);

/** Decision-cache hits and misses summed over worker contexts. */
void sl_pipeline_cache_stats(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
			     uint64_t *hits, uint64_t *misses);

/** Highest table id holding a table, or -1. */
int sl_pipeline_last_table(const struct sl_pipeline *pl);

/*
 * Helpers on specs, shared with the flow-file parser and the OpenFlow codec.
 */

/** Initialise a spec: table 0, priority 0x8000 (OpenFlow default), no match, no instructions. */
void sl_flow_spec_init(struct sl_flow_spec *fs);
/**
 * Add a field to a match (replacing a previous constraint on the same
 * field); the value is masked.
 *
 * @return 0, -E2BIG (too many fields), -EINVAL (raw field invalid).
 */
int sl_match_set(struct sl_match *m, const struct sl_field *f, const uint8_t *value,
		 const uint8_t *mask);
/** Find a field's entry in a match, or NULL. */
const struct sl_match_field *sl_match_get(const struct sl_match *m, const struct sl_field *f);
/**
 * Check OpenFlow prerequisites (tcp_dst needs ip_proto 6 and an IP eth_type,
 * ...).  @return 0 or -EINVAL with the missing prerequisite in @err.
 */
int sl_match_check_prereqs(const struct sl_match *m, char *err, size_t err_size);

#endif /* SL_PIPELINE_H */
