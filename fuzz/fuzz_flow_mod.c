/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_flow_mod: decode a flow_mod (or a group_mod, or a Sluice table
 * declaration) and apply it to a real pipeline kept across iterations
 * (libFuzzer).  Finds what the codec lets through that the pipeline cannot
 * take: every decoded spec must be handled (accepted or refused with an
 * error), never crash it.  After every group_mod the groups' chains (group
 * actions in buckets, watch_group) must still be loop-free and at most
 * SL_GROUP_CHAIN_MAX groups deep, and a refused delete must leave the group.
 *
 * Bounded state: at most FLOWS_MAX flows (then everything is deleted), a
 * commit every COMMIT_EVERY inputs, a fresh pipeline every RESET_EVERY.
 * No EAL: mask tables run without their rte_acl snapshots.
 */
#include "../src/ofp/ofp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../src/pipeline/pipeline.h"

#define FLOWS_MAX 2000
#define COMMIT_EVERY 64
#define RESET_EVERY 20000
#define MAX_ENTRIES_CAP 65536

static struct sl_pipeline *pl;
static unsigned long n_inputs;
/* What happened to the inputs; printed at exit when SL_FUZZ_STATS is set. */
static unsigned long n_decoded, n_applied, n_refused;
static struct sl_ofp_flow_mod fm;
static struct sl_ofp_group_mod gm;
static struct sl_table_spec ts;
static struct sl_ofp_ll_set ls;

static void
count(int rc)
{
	n_decoded++;
	if (rc == 0)
		n_applied++;
	else
		n_refused++;
}

static void
print_stats(void)
{
	fprintf(stderr,
		"fuzz_flow_mod: %lu inputs, %lu decoded, %lu applied, %lu refused by the "
		"pipeline\n",
		n_inputs, n_decoded, n_applied, n_refused);
}

static void
pipeline_reset(void)
{
	bool up[8] = {true, true, true, true, true, true, false, true};

	sl_pipeline_destroy(pl);
	pl = NULL;
	if (sl_pipeline_create(&pl) != 0)
		abort();
	sl_pipeline_ports_set(pl, 8, up);
}

static void
apply_flow_mod(void)
{
	struct sl_flow_filter flt;
	char err[256];
	unsigned n;

	sl_flow_filter_init(&flt);
	flt.table_id = fm.spec.table_id;
	flt.strict = fm.command == SL_OFPFC_MODIFY_STRICT || fm.command == SL_OFPFC_DELETE_STRICT;
	flt.priority = fm.spec.priority;
	flt.cookie = fm.spec.cookie;
	flt.cookie_mask = fm.spec.cookie_mask;
	flt.out_port = fm.out_port;
	flt.out_group = fm.out_group;
	flt.match = &fm.spec.match;
	switch (fm.command) {
	case SL_OFPFC_ADD:
		count(sl_pipeline_flow_add(pl, &fm.spec, err, sizeof(err)));
		break;
	case SL_OFPFC_MODIFY:
	case SL_OFPFC_MODIFY_STRICT:
		flt.out_port = SL_PORT_ANY;
		flt.out_group = SL_GROUP_ID_ANY;
		count(sl_pipeline_flow_modify(pl, &flt, &fm.spec, &n, err, sizeof(err)));
		break;
	default:
		(void)sl_pipeline_flow_del(pl, &flt, SL_FLOW_REMOVED_DELETE);
		count(0);
		break;
	}
}

/* Longest chain from group @id, in groups; aborts past SL_GROUP_CHAIN_MAX (a loop included). */
static unsigned
chain_height(uint32_t id, unsigned depth)
{
	static struct sl_group_spec g[SL_GROUP_CHAIN_MAX + 1];
	unsigned h = 0;

	if (depth > SL_GROUP_CHAIN_MAX)
		abort(); /* a loop, or a chain the pipeline should have refused */
	if (sl_pipeline_group_get(pl, id, &g[depth - 1], NULL) < 0)
		abort(); /* a bucket names a group that is gone */
	for (unsigned b = 0; b < g[depth - 1].n_buckets; b++) {
		const struct sl_bucket_spec *bs = &g[depth - 1].buckets[b];
		if (g[depth - 1].type == SL_GROUP_FF && bs->watch_group != SL_GROUP_ID_ANY)
			h = SL_MAX(h, chain_height(bs->watch_group, depth + 1));
		for (unsigned k = 0; k < bs->n_actions; k++)
			if (bs->actions[k].type == SL_ACT_GROUP)
				h = SL_MAX(h, chain_height(bs->actions[k].group_id, depth + 1));
	}
	return h + 1;
}

static void
groups_check(void)
{
	uint32_t ids[64];
	unsigned n;

	for (unsigned start = 0; (n = sl_pipeline_group_ids(pl, start, ids, 64)) > 0; start += n)
		for (unsigned i = 0; i < n; i++)
			(void)chain_height(ids[i], 1);
}

static void
apply_group_mod(void)
{
	char err[256];
	int rc;

	switch (gm.command) {
	case SL_OFPGC_ADD:
		count(sl_pipeline_group_add(pl, &gm.spec, err, sizeof(err)));
		break;
	case SL_OFPGC_MODIFY:
		count(sl_pipeline_group_modify(pl, &gm.spec, err, sizeof(err)));
		break;
	default:
		rc = sl_pipeline_group_del(pl, gm.spec.group_id);
		if (rc == -EBUSY && sl_pipeline_group_get(pl, gm.spec.group_id, NULL, NULL) < 0)
			abort(); /* refused, yet gone */
		count(rc < 0 ? rc : 0);
		break;
	}
	groups_check();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_ofp_error e;
	char err[256];
	uint8_t *msg;

	if (pl == NULL && getenv("SL_FUZZ_STATS") != NULL)
		atexit(print_stats);
	if (pl == NULL || n_inputs % RESET_EVERY == 0)
		pipeline_reset();
	n_inputs++;
	if (size < 8 || size > SL_OFP_MSG_MAX)
		return 0;
	msg = malloc(size);
	if (msg == NULL)
		return 0;
	memcpy(msg, data, size);
	msg[0] = SL_OFP_VERSION;
	msg[2] = (uint8_t)(size >> 8);
	msg[3] = (uint8_t)size;
	/* Anything that is not a group_mod or an experimenter message is read as a flow_mod. */
	if (msg[1] != SL_OFPT_GROUP_MOD && msg[1] != SL_OFPT_EXPERIMENTER)
		msg[1] = SL_OFPT_FLOW_MOD;

	if (msg[1] == SL_OFPT_FLOW_MOD && sl_ofp_flow_mod_decode(msg, size, &fm, &e) == 0)
		apply_flow_mod();
	else if (msg[1] == SL_OFPT_GROUP_MOD && sl_ofp_group_mod_decode(msg, size, &gm, &e) == 0)
		apply_group_mod();
	else if (msg[1] == SL_OFPT_EXPERIMENTER && sl_ofp_ll_set_decode(msg, size, &ls, &e) == 0) {
		/* Low-latency marks: exercises the FFP's bookkeeping. */
		struct sl_flow_filter flt;
		sl_flow_filter_init(&flt);
		flt.table_id = ls.table_id;
		flt.strict = ls.flags & SL_OFPX_LL_STRICT;
		flt.priority = ls.priority;
		flt.cookie = ls.cookie;
		flt.cookie_mask = ls.cookie_mask;
		flt.match = &ls.match;
		n_applied += sl_pipeline_flow_set_ll(pl, &flt, ls.command == SL_OFPX_LL_SET_ON) > 0;
	} else if (msg[1] == SL_OFPT_EXPERIMENTER &&
		   sl_ofp_table_declare_decode(msg, size, &ts, &e) == 0) {
		/*
		 * The pipeline bounds max_entries by SL_TABLE_ENTRIES_MAX (this target
		 * found a multi-GB direct-table calloc before it did); a lower cap
		 * keeps each iteration fast.
		 */
		if (ts.max_entries > MAX_ENTRIES_CAP)
			ts.max_entries = MAX_ENTRIES_CAP;
		count(sl_pipeline_table_declare(pl, &ts, err, sizeof(err)));
	}

	if (sl_pipeline_flow_count(pl, 255) > FLOWS_MAX) {
		struct sl_flow_filter all;
		sl_flow_filter_init(&all);
		sl_pipeline_flow_del(pl, &all, SL_FLOW_REMOVED_DELETE);
	}
	if (n_inputs % COMMIT_EVERY == 0)
		(void)sl_pipeline_commit(pl);
	else
		sl_pipeline_publish(pl);
	free(msg);
	return 0;
}
