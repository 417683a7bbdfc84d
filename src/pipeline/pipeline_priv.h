/* SPDX-License-Identifier: BSD-3-Clause */
/* Structures shared by the pipeline's control-path and per-packet files. */
#ifndef SL_PIPELINE_PRIV_H
#define SL_PIPELINE_PRIV_H

#include "pipeline.h"

/** One pipeline stage. */
struct pl_table {
	struct sl_table *tbl;        /* NULL until the first flow or a declaration with fields */
	struct sl_table_spec spec;   /* declared, or the default (mask, fields from flows) */
	bool declared;               /* spec came from sl_pipeline_table_declare */
	struct sl_key_layout layout; /* fields the table matches */
	struct sl_flow *miss;        /* table-miss entry of a kind that cannot hold it */
	/*
	 * Guards: exact prerequisites (dl_type, nw_proto) that every flow of a
	 * table with declared fields shares but its key does not hold (an lpm
	 * table on nw_dst holds only nw_dst).  Packets failing a guard miss.
	 */
	uint8_t n_guards;
	struct sl_match_field guards[2];
	uint32_t version;            /* bumped by every change; invalidates decision-cache entries */
	bool use_dcache;             /* lookups go through the decision cache (see table_changed) */
	unsigned n_flows;            /* flows, miss entry included */
	unsigned cap;
	struct sl_flow **flows;      /* every flow, for iteration and deletion */
};

struct sl_pipeline {
	struct pl_table tables[SL_TABLES_MAX];
	bool dcache;     /* decision cache in front of mask tables (default on) */
	int last_table;  /* highest table in use, -1 if none */
	unsigned n_ports;
	bool *port_up;   /* [1..n_ports] */
};

/* OpenFlow action set (spec 5.10): at most one action of each kind, set_field per field. */
#define AS_SET_MAX 8
struct action_set {
	const struct sl_action *copy_ttl_in, *pop_vlan, *push_vlan, *copy_ttl_out;
	const struct sl_action *dec_ttl, *set_ttl, *queue, *group, *output;
	uint8_t n_set;
	const struct sl_action *set[AS_SET_MAX];
};

/* Per-packet state while a burst is in the pipeline. */
struct pkt_state {
	uint32_t pending_out;  /* last output not yet emitted (0: none) */
	uint8_t skip_reason;   /* why the last attempted output did not happen */
	bool has_set;          /* action set non-empty */
	struct action_set aset;
};

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
	void *data;       /* the winning flow, or NULL for a cached miss */
	uint8_t key[DC_KEY_MAX];
} __attribute__((aligned(64)));

struct sl_pipeline_ctx {
	uint8_t keys[SL_BURST_MAX][SL_KEY_MAX] SL_CACHE_ALIGNED;
	const uint8_t *keyp[SL_BURST_MAX];
	void *hits[SL_BURST_MAX];
	struct pkt_state st[SL_BURST_MAX];
	uint64_t lanes_at[SL_TABLES_MAX + 2]; /* lanes waiting at each table */
	uint64_t table_bits[4];               /* tables with waiting lanes */
	struct {
		uint64_t lookups;
		uint64_t matched;
	} tstats[SL_TABLES_MAX];
	uint64_t drops[SL_DROP__MAX];
	uint64_t copies;
	uint64_t dc_hits;
	uint64_t dc_misses;
	struct dc_entry *dc_ents[SL_BURST_MAX];
	struct dc_entry dc[DC_ENTRIES];
};

#endif /* SL_PIPELINE_PRIV_H */
