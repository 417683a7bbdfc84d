/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Differential test: the real pipeline against a reference pipeline built
 * from linear-scan classifiers (sl_ref_*), on random tables of every kind,
 * random rules, random packets and random flow adds/deletes between bursts.
 *
 * Every flow stamps its id into the packet (set_field on a raw 16-bit field
 * at a per-table offset past the matched bytes), so the final frame records
 * which flow won at every table the packet visited.  A packet's outcome is
 * then compared whole: frame bytes, output port, drop reason.
 *
 * Rounds cycle through: IPv4 lpm with the decision cache, a 45-bit raw lpm
 * field with the cache, IPv4 lpm without it.  Round 0 keeps the original
 * five-stage pipeline (one table of each kind); later rounds draw 2..8
 * stages of random kinds (round % 4 == 1: kinds whose fields sit at fixed
 * frame offsets, so the flow cache keys plain IPv4 frames by their bytes:
 * frame_kinds).  Flows are marked low-latency at random, so the
 * fast forwarding path (ffp.h) fills its LUTs from repeated packets (a pool
 * of recent frames is replayed) and must verify them against the updates:
 * adds, strict deletes, strict modifies (new instructions) and low-latency
 * marks set and cleared, at random priorities.  Every other round bypasses
 * the FFP's cost model so every eligible table gets a LUT.
 *
 * Stages of kind "all" (a mask table without fields: at most two flows, all
 * with an empty match, some doing nothing but goto_table) exercise the
 * lookup-free path for tables of one match-all entry.  At the end of each
 * round every live flow's packet and byte counters and every table's
 * lookup/matched counts are compared with the reference's.
 *
 * Odd rounds run with the search budget on at 100 % (budget.c): measured
 * and charged, it must never refuse.
 *
 * Groups: one final action in three (of flows that do not goto) is a group
 * action into a fixed graph of chained groups (a select group chaining to a
 * fast-failover group whose buckets chain to an indirect group or to a
 * watched fast-failover group), each bucket stamping its group into the
 * frame.  The reference model walks the same graph (liveness included);
 * between bursts the watched ports go up and down and the groups' outputs
 * change (group modify).  Per-group and per-bucket counters are compared
 * at the end of each round.
 *
 * Action sets: flows that are not plain clear the set now and then and
 * write stamps, dec_ttl, an output or a group to it (random_write); some do
 * nothing else, so no record may take such a hop for a plain one.  The
 * reference keeps its own set and runs it at the end (ref_aset_run).
 *
 * Usage: test_pipeline_diff [N_PACKETS] [SEED] [ROUNDS]
 *        (default 1,000,000 packets, 6 rounds).
 */
#include "pipeline.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_TABLES_MAX 8
#define POOL 512
#define FRAME_LEN 160
#define STAMP_OFS 128 /* stamps at 128 + 2 * table; random fields stay below 96 */
#define GSTAMP_OFS (STAMP_OFS + 2 * N_TABLES_MAX) /* groups' stamps: 2 bytes per chain level */
#define WSTAMP_OFS                                                                                 \
	(GSTAMP_OFS + 6) /* action sets' stamps: the writer's id, its table (2 bytes each) */
#define N_PORTS 4        /* flows and groups output to 1..N_PORTS */
#define WATCHED_PORT_A (N_PORTS + 1) /* fast failover watches these; they go up and down */
#define WATCHED_PORT_B (N_PORTS + 2)
#define MAX_FLOWS 200

enum { T_MASK0, T_EXACT, T_LPM, T_DIRECT, T_MASK1, T_ALL, T_MASK2, T_L2, T__KINDS };
/*
 * Frame rounds: mask tables on fields at fixed offsets of a plain IPv4
 * frame (T_MASK2), lpm on ipv4_dst, direct and match-all tables only, so
 * the flow cache's path keys are frame keys (ffp.h) and its dec_ttl on them
 * is the frame one (pl_dec_ttl_ipv4_frame).
 */
static const unsigned frame_kinds[] = {T_MASK2, T_LPM, T_DIRECT, T_ALL, T_L2};

static bool
is_mask_kind(unsigned k)
{
	return k == T_MASK0 || k == T_MASK1 || k == T_MASK2 || k == T_L2;
}
#define ALL_FLOWS_MAX 2 /* flows of a T_ALL table: 0, 1 (the lookup-free path) or 2 */
static unsigned N_TABLES = 5;
static unsigned kind_of[N_TABLES_MAX];
static double ll_share;
static unsigned plain_in; /* one flow in plain_in is plain (goto or output only) */
/*
 * Flow-cache rounds: no flow stamps its id (a stamp is an apply action, and
 * a path with one before its last table is never cached), so most paths are
 * cached; winners are checked through the counters.  Flows that are not
 * plain write metadata (later direct and mask tables match it) or rewrite a
 * field later tables read (set_field: such paths must not be cached).
 */
static bool no_stamps;
static uint64_t rng_state;

static uint64_t
rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static unsigned
rndn(unsigned n)
{
	return (unsigned)(rnd() % n);
}

/*
 * Narrow rounds: rules' masks stay inside a cap that gains a bit now and
 * then (lpm: a longest prefix that grows), and replays flip a bit of the
 * frame's first 48 bytes.  Path keys keep only the bits some rule reads
 * (ffp_path.c): frames that differ elsewhere share a record, and a rule
 * reading a new bit must split them before a record answers.
 */
static bool narrow;
static bool l2_trains; /* table 0 on MACs, bursts in trains of one MAC pair */
static uint8_t mask_cap[SL_FIELD_SIZE_MAX];
static unsigned prefix_cap;

static void
cap_grow(void)
{
	mask_cap[rndn(SL_FIELD_SIZE_MAX)] |= (uint8_t)(1u << rndn(8));
	prefix_cap++;
}

/* Fields each table matches. */
static struct sl_field fields_mask0[] = {
	{.id = SL_FIELD_ETH_DST},
	{.id = SL_FIELD_ETH_TYPE},
	{.id = SL_FIELD_IP_PROTO},
	{.id = SL_FIELD_IPV4_SRC},
	{.id = SL_FIELD_UDP_DST},
	{.id = SL_FIELD_VLAN_VID},
	{.id = SL_FIELD_RAW, .raw_base = SL_RAW_BASE_L4, .raw_bit_off = 67, .raw_n_bits = 13},
};
static struct sl_field fields_mask2[] = {
	{.id = SL_FIELD_ETH_DST},  {.id = SL_FIELD_ETH_SRC},  {.id = SL_FIELD_ETH_TYPE},
	{.id = SL_FIELD_IP_PROTO}, {.id = SL_FIELD_IPV4_SRC}, {.id = SL_FIELD_IPV4_DST},
	{.id = SL_FIELD_UDP_DST},  {.id = SL_FIELD_UDP_SRC},
};
/* A learning switch's table: MACs and in_port only (the raw-key repeats, pkt.h). */
static struct sl_field fields_l2[] = {
	{.id = SL_FIELD_ETH_DST}, {.id = SL_FIELD_ETH_SRC}, {.id = SL_FIELD_IN_PORT}};
static struct sl_field fields_exact[] = {
	{.id = SL_FIELD_ETH_TYPE}, {.id = SL_FIELD_IP_DSCP}, {.id = SL_FIELD_IN_PORT}};
static struct sl_field field_lpm_v4 = {.id = SL_FIELD_IPV4_DST};
static struct sl_field field_lpm_raw = {.id = SL_FIELD_RAW,
					.raw_base = SL_RAW_BASE_PKT,
					.raw_bit_off = 8 * 40 + 3,
					.raw_n_bits = 45};
static struct sl_field field_direct = {.id = SL_FIELD_METADATA};
static struct sl_field fields_mask1[] = {
	{.id = SL_FIELD_METADATA},
	{.id = SL_FIELD_IPV4_DST},
	{.id = SL_FIELD_ETH_SRC},
	{.id = SL_FIELD_RAW, .raw_base = SL_RAW_BASE_L3, .raw_bit_off = 70, .raw_n_bits = 30},
};

struct model_flow {
	struct sl_flow_spec fs;
	bool live;
	uint64_t packets; /* reference counters since added (a modify keeps them) */
};

/* Reference table counters of the current round. */
static uint64_t ref_lookups[N_TABLES_MAX], ref_matched[N_TABLES_MAX];

static struct model_flow flows[N_TABLES_MAX][MAX_FLOWS];
static unsigned n_flows[N_TABLES_MAX];
static struct sl_key_layout layouts[N_TABLES_MAX];
static struct sl_ref_table *refs[N_TABLES_MAX];
static struct model_flow *miss_flows[N_TABLES_MAX];
static bool lpm_raw;

/*
 * The groups' reference model: 30 (select) = {weight 0: group 10}, {group
 * 20}; 20 (ff) = {watch port A: group 10}, {watch_group 21: group 21},
 * {watch port 1: output}; 21 (ff) = {watch port B: output}; 10 and 11
 * (indirect) = {output}.  Every bucket stamps 0xGGBB at its level's offset.
 */
struct model_bucket {
	uint16_t weight;
	uint32_t watch_port, watch_group; /* SL_PORT_ANY, SL_GROUP_ID_ANY: none */
	uint32_t group;                   /* chained group, or 0: output */
	uint32_t out;
	uint64_t packets; /* since the group's last modify */
};
struct model_group {
	uint32_t id;
	uint8_t type, level, n_buckets;
	struct model_bucket b[3];
	uint64_t packets;
};
static struct model_group mgroups[5];
static const unsigned n_mgroups = SL_ARRAY_SIZE(mgroups);
static bool port_live[N_PORTS + 3];
/* Over all rounds: packets into a group, and group 20's choices (buckets 0-2, none). */
static uint64_t group_entries, ff_choice[4];
/* Packets that ran an action set at the end; of those, one ending in its group; apply groups run on a copy. */
static uint64_t aset_runs, aset_groups, group_copies;

static void
random_value(const struct sl_field *f, uint8_t *v, uint8_t *m, bool exact)
{
	unsigned size = sl_field_size(f), bits = sl_field_bits(f);

	for (unsigned i = 0; i < size; i++) {
		v[i] = (uint8_t)rnd();
		m[i] = exact ? 0xff : (uint8_t)(rnd() & rnd());
		if (!exact && rndn(3) == 0)
			m[i] = 0xff;
	}
	/* Small value space for some fields, so random packets hit. */
	if (f->id == SL_FIELD_ETH_TYPE) {
		static const uint16_t types[] = {0x0800, 0x86dd, 0x0800, 0x86dd};
		uint16_t t = types[rndn(4)];
		v[0] = (uint8_t)(t >> 8);
		v[1] = (uint8_t)t;
		memset(m, 0xff, 2);
	}
	if (f->id == SL_FIELD_IN_PORT) {
		memset(v, 0, 4);
		v[3] = (uint8_t)(1 + rndn(N_PORTS));
	}
	if (f->id == SL_FIELD_METADATA) {
		memset(v, 0, 8);
		v[7] = (uint8_t)rndn(16);
		if (!exact) {
			memset(m, 0, 8);
			m[7] = (uint8_t)(rnd() | 1);
		}
	}
	if (f->id == SL_FIELD_IP_DSCP)
		v[0] = (uint8_t)rndn(4);
	if (narrow && !exact && f->id != SL_FIELD_ETH_TYPE)
		for (unsigned i = 0; i < size; i++)
			m[i] &= mask_cap[i];
	if (size * 8 > bits) {
		v[0] &= (uint8_t)(0xff >> (size * 8 - bits));
		m[0] &= (uint8_t)(0xff >> (size * 8 - bits));
	}
	for (unsigned i = 0; i < size; i++)
		v[i] &= m[i];
}

static void
random_prefix(const struct sl_field *f, uint8_t *v, uint8_t *m)
{
	unsigned size = sl_field_size(f), bits = sl_field_bits(f), lead = size * 8 - bits;
	unsigned len = rndn(bits + 1);

	if (narrow && len > prefix_cap)
		len = prefix_cap;

	if (size > SL_FIELD_SIZE_MAX) /* the callers' buffers; also tells GCC the bound */
		abort();
	memset(m, 0, size);
	for (unsigned i = 0; i < size; i++)
		v[i] = (uint8_t)rnd();
	if (f->id == SL_FIELD_IPV4_DST)
		v[0] = 10;
	for (unsigned b = 0; b < len; b++)
		m[(lead + b) / 8] |= (uint8_t)(0x80 >> ((lead + b) % 8));
	for (unsigned i = 0; i < size; i++)
		v[i] &= m[i];
}

/* Add the OpenFlow prerequisites of the chosen fields, as a controller must. */
static void
add_prereqs(struct sl_match *m)
{
	struct sl_field eth = {.id = SL_FIELD_ETH_TYPE}, proto = {.id = SL_FIELD_IP_PROTO};
	uint8_t full[2] = {0xff, 0xff};

	for (unsigned i = 0; i < m->n_fields; i++) {
		uint16_t types[2];
		unsigned n_types;
		int ip_proto;
		sl_field_prereq(m->fields[i].f.id, types, &n_types, &ip_proto);
		if (n_types) {
			const struct sl_match_field *cur = sl_match_get(m, &eth);
			bool ok = false;
			for (unsigned k = 0; cur && k < n_types; k++)
				ok |= cur->mask[0] == 0xff && cur->mask[1] == 0xff &&
				      (cur->value[0] << 8 | cur->value[1]) == types[k];
			if (!ok) {
				uint8_t v[2] = {(uint8_t)(types[0] >> 8), (uint8_t)types[0]};
				sl_match_set(m, &eth, v, full);
			}
		}
		if (ip_proto >= 0) {
			uint8_t v = (uint8_t)ip_proto;
			sl_match_set(m, &proto, &v, full);
		}
	}
}

static void
write_stamp(struct sl_action *a, unsigned ofs, unsigned value)
{
	a->type = SL_ACT_SET_FIELD;
	a->set_field.f = (struct sl_field){.id = SL_FIELD_RAW,
					   .raw_base = SL_RAW_BASE_PKT,
					   .raw_bit_off = (uint16_t)(8 * ofs),
					   .raw_n_bits = 16};
	a->set_field.value[0] = (uint8_t)(value >> 8);
	a->set_field.value[1] = (uint8_t)value;
}

/*
 * The action set (OpenFlow 1.3 section 5.10): one flow in eight that is not
 * plain clears it; one in three (@only: all but those that only clear)
 * writes to it the stamp of its id (every writer the same field: a later
 * one replaces it), sometimes the stamp of its table, a dec_ttl, and an
 * output or a group.  Any of these makes a hop's instructions run (never a
 * plain record); an apply group before a set runs on a copy.  Returns true
 * when the set gets an output or a group.
 */
static bool
random_write(struct sl_instructions *in, unsigned t, uint16_t uid, bool only)
{
	if (rndn(8) == 0)
		in->clear = true;
	if (only ? in->clear && rndn(2) : rndn(3) != 0)
		return false;
	in->has_write = true;
	write_stamp(&in->write[in->n_write++], WSTAMP_OFS, uid);
	if (rndn(2))
		write_stamp(&in->write[in->n_write++], WSTAMP_OFS + 2, 0x5a00 | t);
	if (rndn(4) == 0)
		in->write[in->n_write++].type = SL_ACT_DEC_NW_TTL;
	switch (rndn(4)) {
	case 0: {
		struct sl_action *a = &in->write[in->n_write++];
		a->type = SL_ACT_OUTPUT;
		a->output.port = 1 + rndn(N_PORTS);
		return true;
	}
	case 1: {
		struct sl_action *a = &in->write[in->n_write++];
		a->type = SL_ACT_GROUP;
		a->group_id = mgroups[rndn(n_mgroups)].id;
		return true;
	}
	default:
		return false;
	}
}

static void
random_flow(unsigned t, struct sl_flow_spec *fs, uint16_t uid)
{
	struct sl_action *a;
	uint8_t v[SL_FIELD_SIZE_MAX], m[SL_FIELD_SIZE_MAX];

	sl_flow_spec_init(fs);
	fs->table_id = (uint8_t)t;
	fs->priority = (uint16_t)(1 + rndn(60000));
	if ((double)(rnd() % 1000) < ll_share * 1000)
		fs->flags |= SL_FF_LOW_LATENCY;
	switch (kind_of[t]) {
	case T_MASK0:
	case T_MASK1:
	case T_MASK2:
	case T_L2: {
		const struct sl_field *fl = kind_of[t] == T_MASK0   ? fields_mask0
					    : kind_of[t] == T_MASK1 ? fields_mask1
					    : kind_of[t] == T_L2    ? fields_l2
								    : fields_mask2;
		unsigned nf = kind_of[t] == T_MASK0   ? SL_ARRAY_SIZE(fields_mask0)
			      : kind_of[t] == T_MASK1 ? SL_ARRAY_SIZE(fields_mask1)
			      : kind_of[t] == T_L2    ? SL_ARRAY_SIZE(fields_l2)
						      : SL_ARRAY_SIZE(fields_mask2);
		for (unsigned i = 0; i < nf; i++) {
			if (rndn(2))
				continue;
			random_value(&fl[i], v, m, false);
			sl_match_set(&fs->match, &fl[i], v, m);
		}
		break;
	}
	case T_EXACT:
		for (unsigned i = 0; i < SL_ARRAY_SIZE(fields_exact); i++) {
			random_value(&fields_exact[i], v, m, true);
			sl_match_set(&fs->match, &fields_exact[i], v, m);
		}
		break;
	case T_LPM:
		random_prefix(lpm_raw ? &field_lpm_raw : &field_lpm_v4, v, m);
		sl_match_set(&fs->match, lpm_raw ? &field_lpm_raw : &field_lpm_v4, v, m);
		break;
	case T_DIRECT:
		random_value(&field_direct, v, m, true);
		sl_match_set(&fs->match, &field_direct, v, m);
		break;
	case T_ALL:
		if (rndn(4) == 0)
			fs->priority = 0; /* the table-miss entry */
		break;
	}
	add_prereqs(&fs->match);
	/*
	 * One flow in four (every other round: in two) is plain (no stamp, no
	 * metadata): only a goto or an output, the cases the FFP runs from its
	 * record (FFP_REC_*) and whole paths of which make path records. T_ALL:
	 * half its flows are plain, so some are goto_table only (all_hit_goto).
	 */
	bool plain = rndn(plain_in) == 0 || (kind_of[t] == T_ALL && rndn(2));
	bool to_group = !plain && rndn(3) == 0, set_out = false;
	if (plain)
		goto next;
	/* One in four has no other instruction (a hop a plain record must not take). */
	bool set_only = rndn(4) == 0;
	set_out = random_write(&fs->insns, t, uid, set_only);
	if (set_only)
		goto next;
	if (no_stamps) {
		static const struct sl_field rewrites[] = {{.id = SL_FIELD_ETH_SRC},
							   {.id = SL_FIELD_IPV4_DST},
							   {.id = SL_FIELD_UDP_DST}};
		/* Bit 0: metadata, bit 1: a rewrite, bit 2: dec_ttl (alone, often: a router's entry). */
		unsigned what = rndn(4) == 0 ? 4 : 1 + rndn(7);
		if (what & 2) {
			const struct sl_field *f = &rewrites[rndn(SL_ARRAY_SIZE(rewrites))];
			a = &fs->insns.apply[fs->insns.n_apply++];
			a->type = SL_ACT_SET_FIELD;
			a->set_field.f = *f;
			random_value(f, a->set_field.value, m, true);
			if (f->id == SL_FIELD_IPV4_DST)
				a->set_field.value[0] = 10;
			fs->insns.has_apply = true;
		}
		if (what & 4) { /* drops the packet on a TTL of 0 or 1, which no key holds */
			a = &fs->insns.apply[fs->insns.n_apply++];
			a->type = SL_ACT_DEC_NW_TTL;
			fs->insns.has_apply = true;
		}
		if (what & 1) {
			fs->insns.has_metadata = true;
			fs->insns.metadata = rndn(16);
			fs->insns.metadata_mask = 0xff;
		}
		goto next;
	}
	/* Stamp the flow id into the frame. */
	write_stamp(&fs->insns.apply[fs->insns.n_apply++], STAMP_OFS + 2 * t, uid);
	fs->insns.has_apply = true;
	if (rndn(2)) {
		fs->insns.has_metadata = true;
		fs->insns.metadata = rndn(16);
		fs->insns.metadata_mask = 0xff;
	}
next:
	if (t + 1 < N_TABLES && rndn(4) != 0) {
		fs->insns.goto_table = (int16_t)(t + 1 + rndn(N_TABLES - 1 - t));
	} else if (set_out && rndn(2)) {
		/* The action set's output or group is the packet's. */
	} else if (to_group) {
		a = &fs->insns.apply[fs->insns.n_apply++];
		a->type = SL_ACT_GROUP;
		a->group_id = mgroups[rndn(n_mgroups)].id;
		fs->insns.has_apply = true;
	} else {
		a = &fs->insns.apply[fs->insns.n_apply++];
		a->type = SL_ACT_OUTPUT;
		a->output.port = 1 + rndn(N_PORTS);
		fs->insns.has_apply = true;
	}
}

static struct model_group *
mgroup(uint32_t id)
{
	for (unsigned i = 0; i < n_mgroups; i++)
		if (mgroups[i].id == id)
			return &mgroups[i];
	SL_VERIFY(false);
	return NULL;
}

/* The group's spec as the pipeline gets it: stamp, then group or output. */
static void
mgroup_spec(const struct model_group *g, struct sl_group_spec *gs)
{
	memset(gs, 0, sizeof(*gs));
	gs->group_id = g->id;
	gs->type = g->type;
	gs->n_buckets = g->n_buckets;
	for (unsigned b = 0; b < g->n_buckets; b++) {
		const struct model_bucket *mb = &g->b[b];
		struct sl_bucket_spec *bs = &gs->buckets[b];
		bs->weight = mb->weight;
		bs->watch_port = mb->watch_port;
		bs->watch_group = mb->watch_group;
		struct sl_action *a = &bs->actions[bs->n_actions++];
		a->type = SL_ACT_SET_FIELD;
		a->set_field.f = (struct sl_field){
			.id = SL_FIELD_RAW,
			.raw_base = SL_RAW_BASE_PKT,
			.raw_bit_off = (uint16_t)(8 * (GSTAMP_OFS + 2 * g->level)),
			.raw_n_bits = 16};
		a->set_field.value[0] = (uint8_t)g->id;
		a->set_field.value[1] = (uint8_t)b;
		a = &bs->actions[bs->n_actions++];
		if (mb->group) {
			a->type = SL_ACT_GROUP;
			a->group_id = mb->group;
		} else {
			a->type = SL_ACT_OUTPUT;
			a->output.port = mb->out;
		}
	}
}

/* Build the model's groups and add them, the chained ones first. */
static void
groups_create(struct sl_pipeline *pl)
{
	static const struct model_bucket none = {.watch_port = SL_PORT_ANY,
						 .watch_group = SL_GROUP_ID_ANY};
	struct sl_group_spec gs;
	char err[256];

	memset(mgroups, 0, sizeof(mgroups));
	for (unsigned i = 0; i < n_mgroups; i++)
		for (unsigned b = 0; b < 3; b++)
			mgroups[i].b[b] = none;
	mgroups[0] = (struct model_group){
		.id = 10, .type = SL_GROUP_INDIRECT, .level = 2, .n_buckets = 1, .b = {none}};
	mgroups[1] = (struct model_group){
		.id = 11, .type = SL_GROUP_INDIRECT, .level = 0, .n_buckets = 1, .b = {none}};
	mgroups[2] = (struct model_group){
		.id = 21, .type = SL_GROUP_FF, .level = 2, .n_buckets = 1, .b = {none}};
	mgroups[2].b[0].watch_port = WATCHED_PORT_B;
	mgroups[3] = (struct model_group){
		.id = 20, .type = SL_GROUP_FF, .level = 1, .n_buckets = 3, .b = {none, none, none}};
	mgroups[3].b[0].watch_port = WATCHED_PORT_A;
	mgroups[3].b[0].group = 10;
	mgroups[3].b[1].watch_group = 21;
	mgroups[3].b[1].group = 21;
	mgroups[3].b[2].watch_port = 1;
	mgroups[4] = (struct model_group){
		.id = 30, .type = SL_GROUP_SELECT, .level = 0, .n_buckets = 2, .b = {none, none}};
	mgroups[4].b[0].group = 10; /* weight 0: never chosen */
	mgroups[4].b[1].weight = 1;
	mgroups[4].b[1].group = 20;
	for (unsigned i = 0; i < n_mgroups; i++) {
		for (unsigned b = 0; b < mgroups[i].n_buckets; b++)
			mgroups[i].b[b].out = 1 + rndn(N_PORTS);
		mgroup_spec(&mgroups[i], &gs);
		if (sl_pipeline_group_add(pl, &gs, err, sizeof(err)) < 0) {
			fprintf(stderr, "group %u refused: %s\n", mgroups[i].id, err);
			exit(1);
		}
	}
}

/* New outputs for a random group's buckets (group modify: bucket counters restart). */
static void
group_modify(struct sl_pipeline *pl)
{
	struct model_group *g = &mgroups[rndn(n_mgroups)];
	struct sl_group_spec gs;
	char err[256];

	for (unsigned b = 0; b < g->n_buckets; b++) {
		g->b[b].out = 1 + rndn(N_PORTS);
		g->b[b].packets = 0;
	}
	mgroup_spec(g, &gs);
	if (sl_pipeline_group_modify(pl, &gs, err, sizeof(err)) < 0) {
		fprintf(stderr, "group %u modify refused: %s\n", g->id, err);
		exit(1);
	}
}

static bool
ref_group_live(uint32_t id)
{
	const struct model_group *g = mgroup(id);

	for (unsigned b = 0; b < g->n_buckets; b++) {
		const struct model_bucket *mb = &g->b[b];
		if (g->type == SL_GROUP_SELECT ? mb->weight > 0
		    : g->type != SL_GROUP_FF
			    ? true
			    : (mb->watch_port != SL_PORT_ANY && port_live[mb->watch_port]) ||
				      (mb->watch_group != SL_GROUP_ID_ANY &&
				       ref_group_live(mb->watch_group)))
			return true;
	}
	return false;
}

/* Reference run of group @id on @p: *pending set, or *skip why not. */
static void
ref_group(struct sl_pkt *p, uint32_t id, uint32_t *pending, uint8_t *skip)
{
	struct model_group *g = mgroup(id);
	struct model_bucket *mb = NULL;

	g->packets++;
	for (unsigned b = 0; b < g->n_buckets && mb == NULL; b++) {
		struct model_bucket *c = &g->b[b];
		if (g->type == SL_GROUP_INDIRECT || (g->type == SL_GROUP_SELECT && c->weight > 0) ||
		    (g->type == SL_GROUP_FF &&
		     ((c->watch_port != SL_PORT_ANY && port_live[c->watch_port]) ||
		      (c->watch_group != SL_GROUP_ID_ANY && ref_group_live(c->watch_group)))))
			mb = c;
	}
	group_entries++;
	if (g->id == 20)
		ff_choice[mb != NULL ? mb - g->b : 3]++;
	if (mb == NULL) {
		*skip = SL_DROP_NO_OUTPUT;
		return;
	}
	mb->packets++;
	p->data[GSTAMP_OFS + 2 * g->level] = (uint8_t)g->id;
	p->data[GSTAMP_OFS + 2 * g->level + 1] = (uint8_t)(mb - g->b);
	if (mb->group) {
		ref_group(p, mb->group, pending, skip);
	} else if (mb->out == p->in_port) {
		*skip = SL_DROP_IN_PORT_LOOP;
	} else {
		*pending = mb->out;
	}
}

/* Group and bucket counters against the model. */
static unsigned long
check_group_counters(struct sl_pipeline *pl, unsigned round)
{
	unsigned long bad = 0;

	for (unsigned i = 0; i < n_mgroups; i++) {
		const struct model_group *g = &mgroups[i];
		struct sl_group_stats st;
		bool ok = sl_pipeline_group_get(pl, g->id, NULL, &st) == 0 &&
			  st.n_packets == g->packets && st.n_bytes == g->packets * FRAME_LEN;
		for (unsigned b = 0; ok && b < g->n_buckets; b++)
			ok = st.bucket_packets[b] == g->b[b].packets;
		if (!ok) {
			bad++;
			fprintf(stderr,
				"GROUP COUNTERS round %u group %u: %" PRIu64
				" packets, ref %" PRIu64 "\n",
				round, g->id, st.n_packets, g->packets);
		}
	}
	return bad;
}

static void
to_rule(unsigned t, const struct sl_flow_spec *fs, struct sl_rule *r, void *data)
{
	const struct sl_key_layout *l = &layouts[t];

	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < fs->match.n_fields; i++) {
		int idx = sl_key_layout_find(l, &fs->match.fields[i].f);
		SL_VERIFY(idx >= 0);
		memcpy(r->value + l->offsets[idx], fs->match.fields[i].value,
		       sl_field_size(&fs->match.fields[i].f));
		memcpy(r->mask + l->offsets[idx], fs->match.fields[i].mask,
		       sl_field_size(&fs->match.fields[i].f));
	}
	r->priority = fs->priority;
	r->data = data;
}

static bool
match_empty(const struct sl_match *m)
{
	for (unsigned i = 0; i < m->n_fields; i++)
		for (unsigned b = 0; b < SL_FIELD_SIZE_MAX; b++)
			if (m->fields[i].mask[b])
				return false;
	return true;
}

/* Add to both; returns true when the real pipeline accepted it. */
static bool
add_flow(struct sl_pipeline *pl, unsigned t, uint16_t uid)
{
	struct model_flow *mf;
	struct sl_rule r;
	char err[256];
	unsigned slot;

	for (slot = 0; slot < n_flows[t] && flows[t][slot].live; slot++)
		;
	if (slot == MAX_FLOWS)
		return false;
	if (kind_of[t] == T_ALL) {
		unsigned n_live = 0;
		for (unsigned i = 0; i < n_flows[t]; i++)
			n_live += flows[t][i].live;
		if (n_live >= ALL_FLOWS_MAX)
			return false;
	}
	mf = &flows[t][slot];
	random_flow(t, &mf->fs, uid);
	mf->packets = 0;
	/* The same rule space twice would make the winner arbitrary: skip duplicates. */
	to_rule(t, &mf->fs, &r, mf);
	uint32_t prio;
	if (kind_of[t] == T_EXACT || kind_of[t] == T_DIRECT || kind_of[t] == T_LPM) {
		/*
		 * One entry per key: skip keys that are taken (value and mask, whatever
		 * the priority).  (A delete-and-re-add probe of the reference here once
		 * repointed an existing rule at this unused slot: seen after ~10^7 packets.)
		 */
		for (unsigned i = 0; i < n_flows[t]; i++) {
			struct sl_rule o;
			if (!flows[t][i].live)
				continue;
			to_rule(t, &flows[t][i].fs, &o, NULL);
			if (!memcmp(o.value, r.value, SL_KEY_MAX) &&
			    !memcmp(o.mask, r.mask, SL_KEY_MAX))
				return false;
		}
	} else {
		/* Distinct priorities among overlapping rules keep the winner deterministic. */
		for (unsigned i = 0; i < n_flows[t]; i++)
			if (flows[t][i].live && flows[t][i].fs.priority == mf->fs.priority)
				return false;
	}
	(void)prio;
	if (sl_pipeline_flow_add(pl, &mf->fs, err, sizeof(err)) < 0) {
		fprintf(stderr, "add rejected (table %u): %s\n", t, err);
		exit(1);
	}
	mf->live = true;
	if (slot == n_flows[t])
		n_flows[t]++;
	if (!is_mask_kind(kind_of[t]) && kind_of[t] != T_ALL && match_empty(&mf->fs.match) &&
	    mf->fs.priority == 0)
		miss_flows[t] = mf;
	else
		SL_VERIFY(sl_ref_add(refs[t], &r) == 0);
	return true;
}

static void
del_flow(struct sl_pipeline *pl, unsigned t)
{
	unsigned live[MAX_FLOWS], n = 0;

	for (unsigned i = 0; i < n_flows[t]; i++)
		if (flows[t][i].live)
			live[n++] = i;
	if (n == 0)
		return;
	struct model_flow *mf = &flows[t][live[rndn(n)]];
	struct sl_rule r;
	to_rule(t, &mf->fs, &r, mf);
	struct sl_flow_filter flt;
	sl_flow_filter_init(&flt);
	flt.table_id = mf->fs.table_id;
	flt.strict = true;
	flt.priority = mf->fs.priority;
	flt.match = &mf->fs.match;
	flt.cookie = mf->fs.cookie;
	flt.cookie_mask = UINT64_MAX;
	SL_VERIFY(sl_pipeline_flow_del(pl, &flt, SL_FLOW_REMOVED_DELETE) == 1);
	SL_VERIFY(sl_ref_del(refs[t], &r) == 0);
	mf->live = false;
}

/* Random frame: IPv4/UDP mostly, fields drawn from live rules so lookups hit. */
static void
random_frame(uint8_t *d)
{
	for (unsigned i = 0; i < FRAME_LEN; i++)
		d[i] = (uint8_t)rnd();
	memset(d + STAMP_OFS, 0, 2 * N_TABLES_MAX);
	d[12] = 0x08;
	d[13] = 0x00;
	if (rndn(8) == 0) {
		d[12] = 0x86;
		d[13] = 0xdd;
	} else if (rndn(8) == 0) {
		d[12] = 0x81; /* VLAN-tagged IPv4 */
		d[13] = 0x00;
		d[16] = 0x08;
		d[17] = 0x00;
		d[18] = 0x45;
		d[20] = 0; /* IP total length: the rest of the frame */
		d[21] = FRAME_LEN - 18;
		d[27] = 17;
		return;
	}
	if (d[12] == 0x86) {
		d[18] = 0; /* payload length: the rest of the frame */
		d[19] = FRAME_LEN - 54;
		return;
	}
	d[14] = 0x45;
	d[16] = 0; /* IP total length: the rest of the frame (sometimes less, rarely a lie) */
	d[17] = (uint8_t)(FRAME_LEN - 14 - (rndn(4) == 0 ? rndn(16) : 0));
	if (rndn(64) == 0)
		d[17] = (uint8_t)rnd();
	d[20] = 0;
	d[21] = 0; /* not a fragment */
	d[23] = rndn(2) ? 17 : 6;
	d[46] = (uint8_t)(rndn(16) == 0 ? d[46] : 0x50); /* TCP data offset, mostly 20 bytes */
	d[26 + 4] = 10;
	d[15] = (uint8_t)(rndn(4) << 2);
}

/* Overwrite packet bytes with a live rule's value, so the packet likely matches it. */
static void
aim_at_rule(uint8_t *d, struct sl_pkt *p, bool newest)
{
	unsigned t = rndn(N_TABLES);
	unsigned live[MAX_FLOWS], n = 0;

	for (unsigned i = 0; i < n_flows[t]; i++)
		if (flows[t][i].live)
			live[n++] = i;
	if (n == 0)
		return;
	/* The newest rule may read bits no older one does (narrow rounds). */
	const struct sl_flow_spec *fs = &flows[t][live[newest ? n - 1 : rndn(n)]].fs;
	for (unsigned i = 0; i < fs->match.n_fields; i++) {
		const struct sl_match_field *mf = &fs->match.fields[i];
		uint8_t cur[SL_FIELD_SIZE_MAX], nv[SL_FIELD_SIZE_MAX];
		unsigned size = sl_field_size(&mf->f);

		if (mf->f.id == SL_FIELD_IN_PORT || mf->f.id == SL_FIELD_METADATA ||
		    mf->f.id == SL_FIELD_ETH_TYPE || mf->f.id == SL_FIELD_IP_PROTO ||
		    mf->f.id == SL_FIELD_VLAN_VID)
			continue;
		sl_pkt_field_read(p, &mf->f, cur);
		for (unsigned b = 0; b < size; b++)
			nv[b] = (uint8_t)((cur[b] & ~mf->mask[b]) | mf->value[b]);
		sl_pkt_field_write(p, &mf->f, nv);
		sl_pkt_reparse(p);
	}
	(void)d;
}

/*
 * The reference's dec_ttl: IPv4 TTL (RFC 1624 checksum update) or IPv6 hop
 * limit; 0 or 1 drops, and so does an IP header that lies about its length
 * (its TTL reads as 0, pkt.h).  Returns false when the packet is dropped.
 */
static bool
ref_dec_ttl(struct sl_pkt *p, uint32_t *out, uint8_t *drop)
{
	int o = -1;
	sl_pkt_parse_l2(p);
	bool ip = p->eth_type == 0x0800 || p->eth_type == 0x86dd;
	if (ip && p->ip_end != 0)
		o = p->l3_ofs + (p->eth_type == 0x0800 ? 8 : 7);
	if (ip && p->ip_end == 0) {
		*out = SL_PORT_DROP;
		*drop = SL_DROP_BAD_ACTION;
		return false;
	}
	if (o >= 0 && p->data[o] <= 1) {
		*out = SL_PORT_DROP;
		*drop = SL_DROP_TTL_EXPIRED;
		return false;
	}
	if (o >= 0 && p->eth_type == 0x0800) {
		uint8_t old[2] = {p->data[o], p->data[o + 1]};
		uint16_t cs;
		p->data[o]--;
		memcpy(&cs, p->data + o + 2, 2);
		cs = sl_csum_update(cs, old, p->data + o, 2);
		memcpy(p->data + o + 2, &cs, 2);
	} else if (o >= 0) {
		p->data[o]--;
	}
	return true;
}

/* The reference's action set: the kinds of action random_write writes, one per slot. */
struct ref_aset {
	bool has;
	const struct sl_action *dec_ttl, *group, *output;
	const struct sl_action *set[2];
	unsigned n_set;
};

static void
ref_aset_write(struct ref_aset *as, const struct sl_instructions *in)
{
	if (in->clear)
		memset(as, 0, sizeof(*as));
	if (!in->has_write)
		return;
	as->has = true;
	for (unsigned k = 0; k < in->n_write; k++) {
		const struct sl_action *a = &in->write[k];
		unsigned j;
		switch (a->type) {
		case SL_ACT_DEC_NW_TTL:
			as->dec_ttl = a;
			break;
		case SL_ACT_GROUP:
			as->group = a;
			break;
		case SL_ACT_OUTPUT:
			as->output = a;
			break;
		case SL_ACT_SET_FIELD: /* a field's slot keeps its place; a new field goes last */
			for (j = 0; j < as->n_set; j++)
				if (sl_field_equal(&as->set[j]->set_field.f, &a->set_field.f))
					break;
			SL_VERIFY(j < SL_ARRAY_SIZE(as->set));
			as->set[j] = a;
			as->n_set += j == as->n_set;
			break;
		default:
			SL_VERIFY(false);
		}
	}
}

/*
 * The action set at the end of the pipeline, in section 5.10's order:
 * dec_ttl, set_field, then a group (which wins over an output) or the
 * output.  An output pending from an apply list leaves as a copy before
 * the packet changes.  Returns false when the packet is dropped.
 */
static bool
ref_aset_run(const struct ref_aset *as, struct sl_pkt *p, uint32_t *pending, uint8_t *skip,
	     uint32_t *out, uint8_t *drop)
{
	if (as->dec_ttl != NULL) {
		*pending = 0;
		if (!ref_dec_ttl(p, out, drop))
			return false;
	}
	for (unsigned j = 0; j < as->n_set; j++) {
		*pending = 0;
		sl_pkt_field_write(p, &as->set[j]->set_field.f, as->set[j]->set_field.value);
	}
	if (as->group != NULL) {
		ref_group(p, as->group->group_id, pending, skip);
	} else if (as->output != NULL) {
		if (as->output->output.port == p->in_port)
			*skip = SL_DROP_IN_PORT_LOOP;
		else
			*pending = as->output->output.port;
	}
	return true;
}

/* Reference execution of one packet. */
static void
ref_run(struct sl_pkt *p, uint32_t *out, uint8_t *drop)
{
	unsigned t = 0;
	uint8_t key[SL_KEY_MAX];
	uint32_t pending = 0;
	uint8_t skip = SL_DROP_NO_OUTPUT;
	struct ref_aset as = {0};

	for (;;) {
		struct model_flow *mf = NULL;
		ref_lookups[t]++;
		if (layouts[t].key_size) {
			sl_key_extract(&layouts[t], p, key);
			mf = sl_ref_lookup(refs[t], key, NULL);
		}
		if (mf == NULL)
			mf = miss_flows[t] && miss_flows[t]->live ? miss_flows[t] : NULL;
		if (mf == NULL) { /* a miss drops the packet: its action set never runs */
			*out = pending;
			*drop = pending ? 0 : SL_DROP_TABLE_MISS;
			return;
		}
		ref_matched[t]++;
		mf->packets++;
		const struct sl_instructions *in = &mf->fs.insns;
		/* Something after the list (exec_flow): a group in it runs on a copy. */
		bool more = in->goto_table >= 0 || in->has_write || (as.has && !in->clear);
		for (unsigned k = 0; k < in->n_apply; k++) {
			const struct sl_action *a = &in->apply[k];
			if (a->type == SL_ACT_SET_FIELD) {
				sl_pkt_field_write(p, &a->set_field.f, a->set_field.value);
			} else if (a->type == SL_ACT_DEC_NW_TTL) {
				if (!ref_dec_ttl(p, out, drop))
					return;
			} else if (a->type == SL_ACT_OUTPUT) {
				if (a->output.port == p->in_port)
					skip = SL_DROP_IN_PORT_LOOP;
				else
					pending = a->output.port;
			} else if (a->type == SL_ACT_GROUP && more) {
				/* Every bucket stamps: the chain runs on a copy, the packet goes on. */
				uint8_t copy[FRAME_LEN + 8];
				struct sl_pkt q;
				uint32_t q_pending = 0;
				uint8_t q_skip = 0;
				memcpy(copy, p->data, FRAME_LEN);
				sl_pkt_init(&q, copy, FRAME_LEN, 0, p->in_port);
				q.metadata = p->metadata;
				ref_group(&q, a->group_id, &q_pending, &q_skip);
				group_copies++;
			} else if (a->type == SL_ACT_GROUP) {
				ref_group(p, a->group_id, &pending, &skip);
			}
		}
		ref_aset_write(&as, in);
		if (in->has_metadata)
			p->metadata = (p->metadata & ~in->metadata_mask) |
				      (in->metadata & in->metadata_mask);
		if (in->goto_table < 0) {
			aset_runs += as.has;
			aset_groups += as.has && as.group != NULL;
			if (as.has && !ref_aset_run(&as, p, &pending, &skip, out, drop))
				return;
			*out = pending;
			*drop = pending ? 0 : skip;
			return;
		}
		t = (unsigned)in->goto_table;
	}
}

/* Strict modify of a random live flow: new instructions (and stamp), same match. */
static bool
modify_flow(struct sl_pipeline *pl, unsigned t, uint16_t uid)
{
	unsigned live[MAX_FLOWS], n = 0;
	char err[256];

	for (unsigned i = 0; i < n_flows[t]; i++)
		if (flows[t][i].live)
			live[n++] = i;
	if (n == 0)
		return false;
	struct model_flow *mf = &flows[t][live[rndn(n)]];
	struct sl_flow_spec ns;
	random_flow(t, &ns, uid);
	struct sl_flow_filter flt;
	sl_flow_filter_init(&flt);
	flt.table_id = (uint8_t)t;
	flt.strict = true;
	flt.priority = mf->fs.priority;
	flt.match = &mf->fs.match;
	unsigned n_mod = 0;
	ns.flags = 0;
	if (sl_pipeline_flow_modify(pl, &flt, &ns, &n_mod, err, sizeof(err)) < 0 || n_mod != 1) {
		fprintf(stderr, "modify failed (table %u, %u modified): %s\n", t, n_mod, err);
		exit(1);
	}
	mf->fs.insns = ns.insns;
	return true;
}

/* Set or clear a random live flow's low-latency mark (never changes a decision). */
static bool
mark_flow(struct sl_pipeline *pl, unsigned t)
{
	unsigned live[MAX_FLOWS], n = 0;

	for (unsigned i = 0; i < n_flows[t]; i++)
		if (flows[t][i].live)
			live[n++] = i;
	if (n == 0)
		return false;
	struct model_flow *mf = &flows[t][live[rndn(n)]];
	struct sl_flow_filter flt;
	sl_flow_filter_init(&flt);
	flt.table_id = (uint8_t)t;
	flt.strict = true;
	flt.priority = mf->fs.priority;
	flt.match = &mf->fs.match;
	SL_VERIFY(sl_pipeline_flow_set_ll(pl, &flt, rndn(2)) == 1);
	return true;
}

struct count_check {
	unsigned t;
	uint64_t packets;
	unsigned long bad;
};

/* One real flow's counters against its model flow (priorities are distinct in mask-like tables). */
static int
check_flow(const struct sl_flow *f, void *arg)
{
	struct count_check *cc = arg;
	unsigned t = cc->t;

	cc->packets += sl_flow_packets(f);
	if (!is_mask_kind(kind_of[t]) && kind_of[t] != T_ALL)
		return 0;
	for (unsigned i = 0; i < n_flows[t]; i++) {
		const struct model_flow *mf = &flows[t][i];
		if (!mf->live || mf->fs.priority != f->priority)
			continue;
		if (sl_flow_packets(f) != mf->packets ||
		    sl_flow_bytes(f) != mf->packets * FRAME_LEN) {
			if (cc->bad++ < 5)
				fprintf(stderr,
					"COUNTERS table %u prio %u: %" PRIu64 " packets %" PRIu64
					" bytes, ref %" PRIu64 " packets\n",
					t, f->priority, sl_flow_packets(f), sl_flow_bytes(f),
					mf->packets);
		}
		return 0;
	}
	cc->bad++;
	fprintf(stderr, "COUNTERS table %u: flow at priority %u not in the model\n", t,
		f->priority);
	return 0;
}

/* Flow counters (live flows) and table lookup/matched counts against the reference. */
static unsigned long
check_counters(struct sl_pipeline *pl, const struct sl_pipeline_ctx *ctx, unsigned round)
{
	const struct sl_pipeline_ctx *cs[1] = {ctx};
	unsigned long bad = 0;

	sl_pipeline_publish(pl); /* replaced flows' counters move on at publish */
	for (unsigned t = 0; t < N_TABLES; t++) {
		struct count_check cc = {.t = t};
		struct sl_pipeline_table_stats ts;
		uint64_t model = 0;

		sl_pipeline_flow_iterate(pl, t, check_flow, &cc);
		for (unsigned i = 0; i < n_flows[t]; i++)
			if (flows[t][i].live)
				model += flows[t][i].packets;
		sl_pipeline_table_stats(cs, 1, t, &ts);
		if (cc.packets != model || ts.lookups != ref_lookups[t] ||
		    ts.matched != ref_matched[t]) {
			cc.bad++;
			fprintf(stderr,
				"COUNTERS round %u table %u (kind %u): flows %" PRIu64
				" packets vs ref %" PRIu64 ", lookups %" PRIu64 "/%" PRIu64
				", matched %" PRIu64 "/%" PRIu64 "\n",
				round, t, kind_of[t], cc.packets, model, ts.lookups, ref_lookups[t],
				ts.matched, ref_matched[t]);
		}
		bad += cc.bad;
	}
	return bad;
}

int
main(int argc, char **argv)
{
	unsigned long n_packets = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 12345;
	unsigned rounds = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 0) : 6;
	unsigned long done = 0, mismatches = 0, updates = 0, forwarded = 0, counter_mismatches = 0;
	struct sl_ffp_lut_stats tot = {0};
	struct sl_ffp_path_stats ptot = {0};
	uint64_t ll_packets = 0, budget_searches = 0, budget_refused = 0;
	struct sl_pipeline *pl;
	struct sl_pipeline_ctx *ctx;
	uint16_t uid = 1;
	char err[256];

	if (rounds == 0 || n_packets < rounds) {
		fprintf(stderr,
			"usage: test_pipeline_diff [N_PACKETS >= ROUNDS] [SEED] [ROUNDS >= 1]\n");
		return 2;
	}
	for (unsigned round = 0; round < rounds; round++) {
		rng_state = seed * 2654435761u + (uint64_t)round + 1;
		lpm_raw = round % 3 == 1;
		memset(flows, 0, sizeof(flows));
		memset(n_flows, 0, sizeof(n_flows));
		memset(miss_flows, 0, sizeof(miss_flows));
		memset(ref_lookups, 0, sizeof(ref_lookups));
		memset(ref_matched, 0, sizeof(ref_matched));
		/* Round 0: one table of each kind in the original order; then random. */
		if (round == 0) {
			N_TABLES = 5;
			for (unsigned t = 0; t < 5; t++)
				kind_of[t] = t;
		} else if (round % 4 == 1) {
			lpm_raw = false;
			N_TABLES = 2 + rndn(N_TABLES_MAX - 1);
			for (unsigned t = 0; t < N_TABLES; t++)
				kind_of[t] = frame_kinds[rndn(SL_ARRAY_SIZE(frame_kinds))];
		} else {
			N_TABLES = 2 + rndn(N_TABLES_MAX - 1);
			for (unsigned t = 0; t < N_TABLES; t++)
				kind_of[t] = rndn(T__KINDS);
		}
		/*
		 * Every third round from round 2 marks nothing low-latency: no
		 * table's FFP LUT comes on (whether one pays is timed), so the
		 * per-table path's repeated keys (repeated_keys_of) run.  Its
		 * table 0 is a learning switch's, and bursts come in trains of
		 * one MAC pair: the raw-key repeats (pkt.h).
		 */
		l2_trains = round % 3 == 2;
		if (l2_trains)
			kind_of[0] = T_L2;
		ll_share = round == 0 ? 0.5 : l2_trains ? 0.0 : (double)(1 + rndn(9)) / 10.0;
		plain_in = round % 2 ? 2 : 4;
		/* Every other round from round 1 (with path records on: not round % 4 == 3). */
		no_stamps = round % 4 == 1 || round % 4 == 2;
		narrow = round % 4 == 1 || round % 4 == 2;
		memset(mask_cap, 0, sizeof(mask_cap));
		prefix_cap = 4;
		for (unsigned b = 0; b < 8; b++)
			cap_grow();
		SL_VERIFY(sl_pipeline_create(&pl) == 0);
		/* Path records (ffp.h) on, except every fourth round: per-table LUTs alone. */
		sl_pipeline_ffp_path_enable(pl, round % 4 != 3);
		/* With the decision cache (the default) except every third round. */
		sl_pipeline_cache_enable(pl, round % 3 != 2);
		sl_pipeline_ffp_cost_model(pl, round % 2 == 0);
		/*
		 * The search budget every other round, at 100 % so that it never
		 * runs out: measuring and charging must change nothing
		 * (test_budget checks it exhausted).
		 */
		if (round % 2 == 1) {
			struct sl_search_budget sb = {.share_pct = 100, .cost_ns = 0};
			SL_VERIFY(sl_pipeline_search_budget_set(pl, &sb) == 0);
		}
		if (getenv("SL_DIFF_NO_FFP") != NULL) /* to tell FFP mismatches from others */
			sl_pipeline_ffp_enable(pl, false);

		for (unsigned t = 0; t < N_TABLES; t++) {
			struct sl_table_spec ts = {.table_id = (uint8_t)t};
			switch (kind_of[t]) {
			case T_MASK0:
				ts.kind = SL_TABLE_MASK;
				ts.n_fields = SL_ARRAY_SIZE(fields_mask0);
				memcpy(ts.fields, fields_mask0, sizeof(fields_mask0));
				break;
			case T_MASK1:
				ts.kind = SL_TABLE_MASK;
				ts.n_fields = SL_ARRAY_SIZE(fields_mask1);
				memcpy(ts.fields, fields_mask1, sizeof(fields_mask1));
				break;
			case T_MASK2:
				ts.kind = SL_TABLE_MASK;
				ts.n_fields = SL_ARRAY_SIZE(fields_mask2);
				memcpy(ts.fields, fields_mask2, sizeof(fields_mask2));
				break;
			case T_L2:
				ts.kind = SL_TABLE_MASK;
				ts.n_fields = SL_ARRAY_SIZE(fields_l2);
				memcpy(ts.fields, fields_l2, sizeof(fields_l2));
				break;
			case T_EXACT:
				ts.kind = SL_TABLE_EXACT;
				ts.n_fields = SL_ARRAY_SIZE(fields_exact);
				memcpy(ts.fields, fields_exact, sizeof(fields_exact));
				break;
			case T_LPM:
				ts.kind = SL_TABLE_LPM;
				ts.n_fields = 1;
				ts.fields[0] = lpm_raw ? field_lpm_raw : field_lpm_v4;
				break;
			case T_DIRECT:
				ts.kind = SL_TABLE_DIRECT;
				ts.n_fields = 1;
				ts.fields[0] = field_direct;
				ts.max_entries = 256;
				break;
			case T_ALL:
				ts.kind = SL_TABLE_MASK;
				ts.n_fields = 0;
				break;
			}
			if (sl_pipeline_table_declare(pl, &ts, err, sizeof(err)) < 0) {
				fprintf(stderr, "declare %u: %s\n", t, err);
				return 1;
			}
			/*
			 * The reference judges whole flows: its key holds the declared
			 * fields (the lpm field first) plus dl_type and nw_proto, and
			 * every table is a priority scan, except lpm (longest prefix).
			 */
			struct sl_field rf[SL_KEY_FIELDS_MAX];
			unsigned nrf = ts.n_fields;
			memcpy(rf, ts.fields, nrf * sizeof(rf[0]));
			rf[nrf++] = (struct sl_field){.id = SL_FIELD_ETH_TYPE};
			rf[nrf++] = (struct sl_field){.id = SL_FIELD_IP_PROTO};
			SL_VERIFY(sl_key_layout_init(&layouts[t], rf, nrf) == 0);
			struct sl_table_params p = {.kind = ts.kind == SL_TABLE_LPM ? SL_TABLE_LPM
										    : SL_TABLE_MASK,
						    .key_size = layouts[t].key_size};
			if (ts.kind == SL_TABLE_LPM)
				p.lpm_bits = (uint16_t)sl_field_bits(&ts.fields[0]);
			refs[t] = sl_ref_create(&p);
		}
		bool up[N_PORTS + 2] = {true, true, true, true, true, true};
		sl_pipeline_ports_set(pl, N_PORTS + 2, up);
		for (unsigned q = 0; q < SL_ARRAY_SIZE(port_live); q++)
			port_live[q] = true;
		groups_create(pl);
		for (unsigned t = 0; t < N_TABLES; t++)
			for (unsigned i = 0; i < (kind_of[t] == T_DIRECT ? 12
						  : kind_of[t] == T_ALL  ? 1
									 : 80);
			     i++)
				add_flow(pl, t, uid++);
		sl_pipeline_commit(pl);
		ctx = sl_pipeline_ctx_create(pl);
		SL_VERIFY(ctx != NULL);

		/* A pool of frames replayed often, so flows repeat and LUTs fill. */
		static uint8_t pool[POOL][FRAME_LEN + 8];
		static uint64_t pool_md[POOL];
		static uint32_t pool_port[POOL];
		for (unsigned k = 0; k < POOL; k++) {
			struct sl_pkt pp;
			random_frame(pool[k]);
			sl_pkt_init(&pp, pool[k], FRAME_LEN, 0, 1 + rndn(N_PORTS));
			for (unsigned a = rndn(3); a > 0; a--)
				aim_at_rule(pool[k], &pp, false);
			pool_md[k] = rndn(16);
			pool_port[k] = pp.in_port;
		}

		unsigned long target =
			n_packets / rounds + (round == rounds - 1 ? n_packets % rounds : 0);
		unsigned long local = 0;
		while (local < target) {
			static uint8_t frames[SL_BURST_MAX][FRAME_LEN + 8],
				ref_frames[SL_BURST_MAX][FRAME_LEN + 8];
			struct sl_pkt pkts[SL_BURST_MAX], rp;
			uint32_t outs[SL_BURST_MAX];
			uint8_t drops[SL_BURST_MAX];
			uint64_t md0[SL_BURST_MAX];
			static const unsigned bursts[] = {0, 1, 3, 4, 5, 31, 32, 33, 63, 64};
			unsigned n = bursts[rndn(SL_ARRAY_SIZE(bursts))];
			/* Frame rounds: one burst in four is long trains (a few flows' packets). */
			bool train_burst = round % 4 == 1 && rndn(4) == 0;

			for (unsigned i = 0; i < n; i++) {
				if (rndn(4) != 0) {
					/* Replay a pooled frame (stamps cleared). */
					unsigned k = rndn(POOL);
					memcpy(frames[i], pool[k], FRAME_LEN);
					memset(frames[i] + STAMP_OFS, 0, 2 * N_TABLES_MAX);
					sl_pkt_init(&pkts[i], frames[i], FRAME_LEN, 0,
						    pool_port[k]);
					pkts[i].metadata = pool_md[k];
					/*
					 * Narrow rounds: near copies, a bit flipped or
					 * a rule's bits written (often the newest's).
					 */
					if (narrow && rndn(4) == 0)
						frames[i][rndn(48)] ^= (uint8_t)(1u << rndn(8));
					if (narrow && rndn(2) == 0) {
						aim_at_rule(frames[i], &pkts[i], rndn(2));
						sl_pkt_init(&pkts[i], frames[i], FRAME_LEN, 0,
							    pool_port[k]);
						pkts[i].metadata = pool_md[k];
					}
				} else {
					random_frame(frames[i]);
					sl_pkt_init(&pkts[i], frames[i], FRAME_LEN, 0,
						    1 + rndn(N_PORTS));
					for (unsigned k = rndn(3); k > 0; k--)
						aim_at_rule(frames[i], &pkts[i], false);
					sl_pkt_init(&pkts[i], frames[i], FRAME_LEN, 0,
						    pkts[i].in_port);
					pkts[i].metadata = rndn(16);
					if (rndn(8) == 0) {
						unsigned k = rndn(POOL);
						memcpy(pool[k], frames[i], FRAME_LEN);
						pool_md[k] = pkts[i].metadata;
						pool_port[k] = pkts[i].in_port;
					}
				}
				/*
				 * Trains: in L2 rounds a lane may have the last one's MACs
				 * (the rest its own); in those and the flow cache's frame
				 * rounds, the last one's whole frame and registers.
				 */
				if (l2_trains && i > 0 && rndn(4) != 0)
					memcpy(frames[i], frames[i - 1], 12);
				if ((l2_trains || round % 4 == 1) && i > 0 &&
				    (train_burst ? rndn(8) != 0 : rndn(4) == 0)) {
					memcpy(frames[i], frames[i - 1], FRAME_LEN);
					pkts[i].in_port = pkts[i - 1].in_port;
					pkts[i].metadata = pkts[i - 1].metadata;
				}
				/*
				 * Flow-cache rounds: one frame in eight gets a TTL (IPv4) or hop
				 * limit (IPv6) of 0..2, which no key holds: a way that dec_ttl
				 * dropped must not answer the same key with another TTL, nor
				 * a train (same key) output it.
				 */
				if (no_stamps && rndn(8) == 0)
					frames[i][frames[i][12] == 0x86 ? 21 : 22] =
						(uint8_t)rndn(3);
				md0[i] = pkts[i].metadata;
				memcpy(ref_frames[i], frames[i], FRAME_LEN);
			}
			/*
			 * Half the bursts come as a worker's do, every lane with the
			 * same in_port and metadata (hooks.same_registers).
			 */
			bool same = n > 0 && rndn(2) == 0;
			for (unsigned i = 1; same && i < n; i++) {
				pkts[i].in_port = pkts[0].in_port;
				pkts[i].metadata = md0[i] = pkts[0].metadata;
			}
			const struct sl_pipeline_hooks hooks = {.same_registers = same};
			/* Changes become visible at publish: batches of 1..8 updates. */
			sl_pipeline_publish(pl);
			sl_pipeline_run_burst(pl, ctx, pkts, n, &hooks, outs, drops);
			ll_packets += (uint64_t)__builtin_popcountll(sl_pipeline_ll_lanes(ctx) &
								     sl_lanes_first(n));
			for (unsigned i = 0; i < n; i++) {
				uint32_t rout;
				uint8_t rdrop;
				sl_pkt_init(&rp, ref_frames[i], FRAME_LEN, 0, pkts[i].in_port);
				rp.metadata =
					md0[i]; /* the metadata the real packet started with */
				ref_run(&rp, &rout, &rdrop);
				(void)rdrop;
				bool ok = rout == outs[i] &&
					  memcmp(ref_frames[i], frames[i], FRAME_LEN) == 0;
				if (!ok && mismatches < 10) {
					fprintf(stderr,
						"MISMATCH packet %lu (round %u, %u tables): out %u vs ref %u; stamps real/ref:",
						done + i, round, N_TABLES, outs[i], rout);
					for (unsigned k = 0; k < N_TABLES; k++)
						fprintf(stderr, " %02x%02x/%02x%02x",
							frames[i][STAMP_OFS + 2 * k],
							frames[i][STAMP_OFS + 2 * k + 1],
							ref_frames[i][STAMP_OFS + 2 * k],
							ref_frames[i][STAMP_OFS + 2 * k + 1]);
					fprintf(stderr, "; groups:");
					for (unsigned k = 0; k < 3; k++)
						fprintf(stderr, " %02x%02x/%02x%02x",
							frames[i][GSTAMP_OFS + 2 * k],
							frames[i][GSTAMP_OFS + 2 * k + 1],
							ref_frames[i][GSTAMP_OFS + 2 * k],
							ref_frames[i][GSTAMP_OFS + 2 * k + 1]);
					fprintf(stderr, "\n");
					if (getenv("SL_DIFF_DEBUG") != NULL && mismatches == 0) {
						for (unsigned t = 0; t < N_TABLES; t++)
							fprintf(stderr, "table %u kind %u\n", t,
								kind_of[t]);
						fprintf(stderr, "md0 %lu in_port %u\n",
							(unsigned long)md0[i], pkts[i].in_port);
						for (unsigned k = 0; k < n_flows[0]; k++) {
							const struct model_flow *mf = &flows[0][k];
							const struct sl_action *a =
								&mf->fs.insns.apply[0];
							if (!mf->live)
								continue;
							fprintf(stderr,
								"  %02x%02x prio %u flags %x:",
								a->set_field.value[0],
								a->set_field.value[1],
								mf->fs.priority, mf->fs.flags);
							for (unsigned q = 0;
							     q < mf->fs.match.n_fields; q++) {
								const struct sl_match_field *m =
									&mf->fs.match.fields[q];
								fprintf(stderr, " f%u=", m->f.id);
								for (unsigned b = 0;
								     b < sl_field_size(&m->f); b++)
									fprintf(stderr, "%02x",
										m->value[b]);
								fprintf(stderr, "/");
								for (unsigned b = 0;
								     b < sl_field_size(&m->f); b++)
									fprintf(stderr, "%02x",
										m->mask[b]);
							}
							fprintf(stderr, "\n");
						}
					}
				}
				mismatches += !ok;
				forwarded += outs[i] != SL_PORT_DROP;
			}
			done += n;
			local += n;
			/*
			 * Updates between bursts: adds, deletes, modifies, marks at random
			 * priorities; after one burst in four, or (odd rounds) in sixteen,
			 * or (flow-cache rounds) in 256, so that path records live long
			 * enough to be used (any change makes them all stale).
			 */
			unsigned every = no_stamps ? 256 : round % 2 ? 16 : 4;
			for (unsigned k = rndn(every) == 0 ? 1 + rndn(8) : 0; k > 0; k--) {
				unsigned t = rndn(N_TABLES);
				if (narrow && rndn(4) == 0)
					cap_grow(); /* the next rules may read a bit no rule read */
				switch (rndn(6)) {
				case 0:
				case 1:
					updates += add_flow(pl, t, uid++);
					break;
				case 2:
				case 3:
					del_flow(pl, t);
					updates++;
					break;
				case 4:
					updates += modify_flow(pl, t, uid++);
					break;
				default:
					updates += mark_flow(pl, t);
					break;
				}
			}
			if (rndn(64) == 0)
				sl_pipeline_commit(pl);
			/* The watched ports go up and down; groups get new outputs. */
			if (rndn(16) == 0) {
				unsigned port = rndn(2) ? WATCHED_PORT_A : WATCHED_PORT_B;
				port_live[port] = rndn(2);
				sl_pipeline_port_set_live(pl, port, port_live[port]);
				updates++;
			}
			if (rndn(64) == 0) {
				group_modify(pl);
				updates++;
			}
		}
		for (unsigned t = 0; t < N_TABLES; t++) {
			struct sl_ffp_lut_stats st;
			const struct sl_pipeline_ctx *cs[1] = {ctx};
			sl_pipeline_ffp_lut_stats(cs, 1, t, &st);
			tot.hits += st.hits;
			tot.misses += st.misses;
			tot.verifications += st.verifications;
			tot.invalidations += st.invalidations;
			tot.replacements += st.replacements;
			tot.inserts += st.inserts;
			tot.evictions += st.evictions;
		}
		{
			struct sl_ffp_path_stats ps;
			const struct sl_pipeline_ctx *cs[1] = {ctx};
			sl_pipeline_ffp_path_stats(pl, cs, 1, &ps);
			ptot.hits += ps.hits;
			ptot.inserts += ps.inserts;
			ptot.stale += ps.stale;
			ptot.evictions += ps.evictions;
			if (getenv("SL_DIFF_VERBOSE") != NULL)
				fprintf(stderr,
					"round %u: %u tables, no_stamps %d, path spec %u tables %u B, %lu hits, %lu misses, %lu inserts, %lu stale\n",
					round, N_TABLES, no_stamps, ps.n_tables, ps.key_bytes,
					(unsigned long)ps.hits, (unsigned long)ps.misses,
					(unsigned long)ps.inserts, (unsigned long)ps.stale);
		}
		counter_mismatches += check_counters(pl, ctx, round);
		counter_mismatches += check_group_counters(pl, round);
		{
			const struct sl_pipeline_ctx *cs[1] = {ctx};
			struct sl_search_budget_stats bs;
			sl_pipeline_search_budget_stats(cs, 1, &bs);
			budget_searches += bs.searches;
			budget_refused += bs.refused;
		}
		sl_pipeline_ctx_destroy(ctx);
		sl_pipeline_destroy(pl);
		for (unsigned t = 0; t < N_TABLES; t++)
			sl_ref_destroy(refs[t]);
	}
	printf("differential: %lu packets (%lu forwarded, %lu still low-latency), %lu updates, "
	       "%lu mismatches\n",
	       done, forwarded, (unsigned long)ll_packets, updates, mismatches);
	printf("ffp: %lu lut hits, %lu misses, %lu inserts, %lu verifications, %lu invalidations, "
	       "%lu replacements, %lu evictions\n",
	       (unsigned long)tot.hits, (unsigned long)tot.misses, (unsigned long)tot.inserts,
	       (unsigned long)tot.verifications, (unsigned long)tot.invalidations,
	       (unsigned long)tot.replacements, (unsigned long)tot.evictions);
	printf("ffp paths: %lu hits, %lu inserts, %lu stale, %lu evictions\n",
	       (unsigned long)ptot.hits, (unsigned long)ptot.inserts, (unsigned long)ptot.stale,
	       (unsigned long)ptot.evictions);
	/* The fast path must have been exercised, or the comparison proves nothing about it. */
	if (n_packets >= 100000 &&
	    (tot.hits == 0 || tot.verifications == 0 || tot.invalidations == 0 ||
	     (rounds >= 3 && (ptot.hits == 0 || ptot.stale == 0)))) {
		fprintf(stderr, "FAIL: the fast path was not exercised\n");
		return 1;
	}
	printf("search budget: %lu searches measured, %lu refused\n",
	       (unsigned long)budget_searches, (unsigned long)budget_refused);
	if (budget_refused != 0 || (n_packets >= 100000 && rounds >= 2 && budget_searches == 0)) {
		fprintf(stderr, "FAIL: the search budget refused, or was not exercised\n");
		return 1;
	}
	printf("groups: %" PRIu64 " packets into groups; fast failover 20 took bucket 0 %" PRIu64
	       ", 1 (watch_group) %" PRIu64 ", 2 %" PRIu64 ", none %" PRIu64 "\n",
	       group_entries, ff_choice[0], ff_choice[1], ff_choice[2], ff_choice[3]);
	if (n_packets >= 100000 && (ff_choice[0] == 0 || ff_choice[1] == 0 || ff_choice[2] == 0)) {
		fprintf(stderr, "FAIL: chained groups were not exercised\n");
		return 1;
	}
	printf("action sets: %" PRIu64 " packets ran one, %" PRIu64
	       " of them ending in a group; %" PRIu64 " apply groups ran on a copy\n",
	       aset_runs, aset_groups, group_copies);
	if (n_packets >= 100000 && (aset_groups == 0 || group_copies == 0)) {
		fprintf(stderr, "FAIL: action sets were not exercised\n");
		return 1;
	}
	printf("counters: %lu mismatches\n", counter_mismatches);
	printf("%lu passed, %lu failed\n", done - mismatches, mismatches);
	return mismatches || counter_mismatches ? 1 : 0;
}
