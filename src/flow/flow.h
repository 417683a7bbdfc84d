/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flow: what the control side describes, as host-order structs: flow
 * entries (match and instructions), groups, meters, queues, table
 * declarations and forwarding-mode parameters, with the helpers every
 * producer and consumer of them shares (prerequisites, the action-set slot
 * rule, table kind names).
 *
 * The flow-file parser (flowfile), the OpenFlow codec (ofp) and sluicectl
 * fill these specs; the pipeline (src/pipeline) and the forwarding modes
 * (src/fwd) compile and run them.  The component is DPDK-free and holds no
 * state, so the control-side tools build and link without DPDK (sluicectl
 * loads no librte_* library: app/meson.build checks it).
 *
 * Concurrency: plain data and pure functions; any thread.
 */
#ifndef SL_FLOW_H
#define SL_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/core.h"
#include "../pkt/pkt.h"
#include "../state/state.h"

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

/** Table kinds a table declaration names (src/table implements the classifiers). */
enum sl_table_kind {
	SL_TABLE_DIRECT,
	SL_TABLE_EXACT,
	SL_TABLE_LPM,
	SL_TABLE_MASK,
	SL_TABLE__KIND_MAX, /* the classifier kinds end here */
	/*
	 * A pipeline stage that is no classifier: an OpenState state table
	 * (src/state, pipeline.h).  sl_table_create() rejects it.
	 */
	SL_TABLE_STATE = SL_TABLE__KIND_MAX,
};

/** "direct", "exact", "lpm", "mask", "state". */
const char *sl_table_kind_name(enum sl_table_kind k);
/** Parse a kind name ("mask" and "ternary" are the same kind); -1 if unknown. */
int sl_table_kind_parse(const char *name);

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
	SL_ACT_SET_STATE, /* OpenState set_state (Sluice experimenter action) */
	SL_ACT_PUSH_MPLS, /* a label after the VLAN tags: ethertype 0x8847 or 0x8848 */
	SL_ACT_POP_MPLS,  /* the top label; ethertype: the type of what follows it */
	SL_ACT_SET_MPLS_TTL,
	SL_ACT_DEC_MPLS_TTL,
	SL_ACT_PUSH_PBB, /* an I-TAG in front (802.1ah): ethertype 0x88e7 */
	SL_ACT_POP_PBB,  /* the outer Ethernet header through the I-TAG */
	SL_ACT__MAX
};

/** set_state's table_id: the state table that loaded the packet's state (the usual case). */
#define SL_STATE_TABLE_AUTO 0xff

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
		uint16_t ethertype; /* push_vlan: 0x8100 or 0x88a8; push/pop_mpls; push_pbb */
		uint8_t ttl;        /* set_nw_ttl, set_mpls_ttl */
		uint32_t group_id;  /* group */
		uint32_t queue_id;  /* set_queue (accepted, no effect) */
		struct {
			uint8_t table_id;        /* a state table, or SL_STATE_TABLE_AUTO */
			struct sl_state_set set; /* state, rollback, idle_ms, hard_ms */
		} set_state;
	};
	void *ref; /* group actions inside the pipeline: the resolved group; NULL elsewhere */
};

/** Instructions of a flow entry, as decoded (host order). */
struct sl_instructions {
	uint8_t n_apply;
	uint8_t n_write;
	bool has_apply;     /* apply_actions present (even if empty) */
	bool has_write;     /* write_actions present */
	bool clear;         /* clear_actions */
	bool has_metadata;  /* write_metadata */
	int16_t goto_table; /* -1: none */
	uint32_t meter_id;  /* meter instruction: the meter (1..SL_METER_ID_MAX); 0: none */
	uint64_t metadata;
	uint64_t metadata_mask;
	struct sl_action apply[SL_ACTIONS_MAX];
	struct sl_action write[SL_ACTIONS_MAX];
};

/** Group types (OFPGT_*). */
enum sl_group_type {
	SL_GROUP_ALL = 0,      /* every bucket gets a copy */
	SL_GROUP_SELECT = 1,   /* one bucket, by a hash of the packet's flow fields, weighted */
	SL_GROUP_INDIRECT = 2, /* the one bucket */
	SL_GROUP_FF = 3,       /* fast failover: the first bucket whose watch port is live */
};
/** Highest group id (OFPG_MAX); OFPG_ALL 0xfffffffc, OFPG_ANY 0xffffffff. */
#define SL_GROUP_ID_MAX 0xffffff00u
#define SL_GROUP_ID_ALL 0xfffffffcu
#define SL_GROUP_ID_ANY 0xffffffffu
/** Buckets in one group. */
#define SL_GROUP_BUCKETS_MAX 32

/** One bucket of a group, as decoded (host order). */
struct sl_bucket_spec {
	uint16_t weight;      /* select groups; 0 means never chosen */
	uint32_t watch_port;  /* fast failover; SL_PORT_ANY = none */
	uint32_t watch_group; /* fast failover; SL_GROUP_ID_ANY = none */
	uint8_t n_actions;
	struct sl_action actions[SL_ACTIONS_MAX];
};

/** A group as decoded from a group_mod (host order). */
struct sl_group_spec {
	uint32_t group_id;
	uint8_t type; /* enum sl_group_type */
	uint16_t n_buckets;
	struct sl_bucket_spec buckets[SL_GROUP_BUCKETS_MAX];
};

/*
 * Meters (OpenFlow 1.3 section 5.7): a rate limiter a flow's meter
 * instruction sends its packets through before its other instructions.
 * Each band has a rate; a packet exceeding bands gets the action of the
 * band with the highest rate among them (drop, or DSCP remark).
 */
#define SL_METER_ID_MAX 0xffff0000u        /* OFPM_MAX: highest meter id */
#define SL_METER_ID_SLOWPATH 0xfffffffdu   /* OFPM_SLOWPATH (virtual, not supported) */
#define SL_METER_ID_CONTROLLER 0xfffffffeu /* OFPM_CONTROLLER (virtual, not supported) */
#define SL_METER_ID_ALL 0xffffffffu        /* OFPM_ALL: every meter (delete, stats) */
/** Bands in one meter. */
#define SL_METER_BANDS_MAX 8
/* Meter flags (OFPMF_*). */
#define SL_METER_KBPS 0x1  /* rates in kilobits per second */
#define SL_METER_PKTPS 0x2 /* rates in packets per second */
#define SL_METER_BURST 0x4 /* burst sizes given (else one second of the rate) */
#define SL_METER_STATS 0x8 /* collect statistics */
/** Band types (OFPMBT_*). */
enum sl_meter_band_type {
	SL_BAND_DROP = 1,
	SL_BAND_DSCP_REMARK = 2,
};

/** One band of a meter, as decoded (host order). */
struct sl_meter_band_spec {
	uint8_t type;       /* enum sl_meter_band_type */
	uint8_t prec_level; /* DSCP remark: drop-precedence levels to add */
	uint32_t rate;      /* kbps or packets/s, by the meter's flags; > 0 */
	uint32_t burst;     /* kilobits or packets, with SL_METER_BURST */
};

/** A meter as decoded from a meter_mod (host order). */
struct sl_meter_spec {
	uint32_t meter_id; /* 1..SL_METER_ID_MAX */
	uint16_t flags;    /* SL_METER_*: exactly one of KBPS and PKTPS */
	uint8_t n_bands;
	struct sl_meter_band_spec bands[SL_METER_BANDS_MAX];
};

/** A meter's counters. */
struct sl_meter_stats {
	uint32_t flow_count; /* flows whose instructions name the meter */
	uint64_t packets;    /* packets that entered the meter */
	uint64_t bytes;
	uint64_t created_tsc; /* sl_pipeline_tsc at add */
	uint8_t n_bands;
	uint64_t band_packets[SL_METER_BANDS_MAX]; /* packets each band was applied to */
	uint64_t band_bytes[SL_METER_BANDS_MAX];
};

/** Flow-mod flags (OFPFF_*). */
#define SL_FF_SEND_FLOW_REM 0x1
#define SL_FF_CHECK_OVERLAP 0x2
#define SL_FF_RESET_COUNTS 0x4
#define SL_FF_NO_PKT_COUNTS 0x8
#define SL_FF_NO_BYT_COUNTS 0x10
/*
 * Sluice's own flag (the fast forwarding path): the entry serves
 * low-latency flows.  Never accepted in an OpenFlow flow_mod's flags (set it
 * with the SLUICE_LL_SET experimenter message, docs/openflow.md section 12);
 * flow files and sluicectl spell it "low_latency"; flow stats carry it.
 */
#define SL_FF_LOW_LATENCY 0x4000

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

/** Largest capacity a table may be declared with (a direct table allocates it at once). */
#define SL_TABLE_ENTRIES_MAX (1u << 24)

/** A table declaration: kind, match fields, capacity. */
struct sl_table_spec {
	uint8_t table_id;
	enum sl_table_kind kind;
	uint8_t n_fields; /* 0: derive from the flows added before the table is first used */
	struct sl_field fields[SL_KEY_FIELDS_MAX];
	uint32_t max_entries; /* 0: default */
	char name[32];        /* may be empty */
	/*
	 * kind SL_TABLE_STATE only: `fields` is the lookup scope, these the
	 * update scope (n_update 0: the same as the lookup scope).
	 */
	uint8_t n_update;
	struct sl_field update[SL_STATE_FIELDS_MAX];
};

/**
 * A queue as the operator sets it (flow file `queue=` lines, sluicectl
 * set-queue); what the pipeline does with it: pipeline.h, "Queues".
 */
struct sl_queue_spec {
	uint32_t port_no;  /* 1..SL_PORTS_MAX */
	uint32_t queue_id; /* 0..0xfffffffe (0xffffffff is OFPQ_ALL) */
	uint64_t max_rate; /* kbit/s, > 0 */
	uint64_t burst;    /* kbit, 0: one second of max_rate (as meters without a burst) */
	uint64_t min_rate; /* kbit/s: must be 0 (refused otherwise) */
};

/*
 * Forwarding modes (src/fwd/fwd.h is the manual): the parameters of the
 * tableless engines, as the text form (sl_fwd_params_parse) and the
 * OpenFlow experimenter messages decode them.
 */
/** Forwarding modes; numbers are on the wire (docs/openflow.md section 12). */
enum sl_fwd_mode { SL_FWD_OPENFLOW = 0, SL_FWD_HYPERCUBE = 1, SL_FWD_KEYFLOW = 2, SL_FWD__MAX };

/** Most neighbours of a hypercube node (one per address bit). */
#define SL_FWD_NEIGH_MAX 32
/** Hypercube parameters. */
struct sl_fwd_hypercube {
	uint32_t addr;    /* this switch's node address */
	uint16_t n_neigh; /* entries in neigh[] */
	struct {
		uint32_t addr; /* neighbour's address: differs from addr in exactly one bit */
		uint32_t port; /* OpenFlow port towards it, 1..n_ports */
	} neigh[SL_FWD_NEIGH_MAX];
};

/** KeyFlow parameters. */
struct sl_fwd_keyflow {
	uint32_t key; /* local key, > number of ports */
};

/** Parameters of one enabled engine. */
struct sl_fwd_mode_params {
	enum sl_fwd_mode mode;
	uint8_t tag; /* dst MAC byte 4 of packets for this engine */
	union {
		struct sl_fwd_hypercube hc;
		struct sl_fwd_keyflow kf;
	};
};

/** A switch's forwarding configuration: the tableless engines enabled (none = openflow only). */
struct sl_fwd_params {
	unsigned n_modes;
	struct sl_fwd_mode_params modes[SL_FWD__MAX - 1];
};

/** Why a configuration was refused (sl_fwd_params_check); mapped to OpenFlow errors by ofp. */
enum sl_fwd_fail {
	SL_FWD_FAIL_NONE = 0,
	SL_FWD_FAIL_UNKNOWN_MODE, /* mode number or name not known */
	SL_FWD_FAIL_DUP_MODE,     /* a mode enabled twice */
	SL_FWD_FAIL_DUP_TAG,      /* two modes with the same tag */
	SL_FWD_FAIL_DUP_NEIGHBOR, /* a neighbour address listed twice */
	SL_FWD_FAIL_BAD_PORT,     /* port 0, above the port count, or used by two neighbours */
	SL_FWD_FAIL_BAD_PARAM,    /* key <= port count, neighbour not one bit away, too many */
};

/*
 * Helpers on specs, shared by the flow-file parser, the OpenFlow codec and
 * the pipeline (spec.c).
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
/** The value of a field the match constrains exactly (full mask), or -1.  Fields <= 8 bytes. */
long sl_match_exact_value(const struct sl_match *m, enum sl_field_id id);
/** True when two actions do the same thing (sl_action.ref is ignored). */
bool sl_action_equal(const struct sl_action *a, const struct sl_action *b);
/**
 * True when @a and @b take the same slot of an action set (OpenFlow 1.3
 * section 5.10: one action per type, one set_field per field), so a
 * write_actions may not hold both.  Any thread.
 */
bool sl_action_same_set_slot(const struct sl_action *a, const struct sl_action *b);
/**
 * The one check of a match's OpenFlow prerequisites (tcp_dst needs ip_proto
 * 6 and an IP eth_type, dl_vlan_pcp a VLAN tag, nd_target an ND message,
 * ...), field by field in match order.
 *
 * @return -1 when all hold, else the index in m->fields of the first field
 *         whose prerequisite is missing, with that prerequisite in @err.
 *         Any thread.
 */
int sl_match_prereq_check(const struct sl_match *m, char *err, size_t err_size);
/**
 * The match as action @a leaves the packet, for the prerequisites of the
 * actions after it (as Open vSwitch checks them): push_mpls, pop_mpls and
 * push_pbb set eth_type to their ethertype and forget ip_proto; pop_pbb
 * forgets both.  Other actions leave @m alone.
 */
void sl_match_after_action(struct sl_match *m, const struct sl_action *a);
/** True when @m holds the eth_type / ip_proto a set_field on @f needs (raw fields: always). */
bool sl_set_field_prereqs_ok(const struct sl_match *m, const struct sl_field *f);
/**
 * The one set_field prerequisite check of a flow's instructions, as Open
 * vSwitch makes it: each set_field against the match as the actions written
 * before it leave the packet, the apply list first, then write_actions in
 * the order written (not the order section 5.10 runs the set in).  @return
 * -1 when all hold, else the index of the first set_field that fails: apply
 * i is i, write j is n_apply + j.  Any thread.
 */
int sl_actions_prereq_check(const struct sl_match *m, const struct sl_instructions *in);

#endif /* SL_FLOW_H */
