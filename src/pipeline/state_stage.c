/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stateful stages: the pipeline's side of src/state (OpenState).
 *
 * A table of kind state holds a struct sl_state in pl_table.state instead of
 * flows.  Fast path: pl_state_stage loads each waiting packet's state and
 * sends it on to the next table; pl_state_exec runs set_state;
 * sl_pipeline_service applies control commands when the worker is idle.
 * Control path: declaring, removing, and the set/delete/dump commands.
 *
 * The worker is the single writer of every state table (state.h).  The
 * control thread posts commands while a worker runs (a sync hook is set)
 * and applies them itself otherwise.  A replaced table is freed after a
 * grace period (the sync hook), so a worker that loaded the old pointer
 * finishes its burst with it.
 */
#include "pipeline.h"
#include "pipeline_priv.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* How long the control thread waits for the worker to take or apply commands. */
#define CMD_WAIT_US 100000
#define CMD_POLL_US 100

static inline struct sl_state *
state_of(const struct sl_pipeline *pl, unsigned t)
{
	return __atomic_load_n(&pl->tables[t].state, __ATOMIC_ACQUIRE);
}

/*
 * Worker.
 */

void
pl_state_stage(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, unsigned t,
	       struct sl_pkt *pkts, uint64_t lanes)
{
	struct sl_state *s = state_of(pl, t);
	unsigned i, next = t + 1;

	if (sl_likely(s != NULL && ctx->trace == NULL && sl_state_claim(s, ctx))) {
		/* Commands first, so a controller's state is in force before these lookups. */
		sl_state_service(s, ctx->now);
		sl_state_lookup_burst(s, pkts, lanes, ctx->now, ctx->keys);
	} else if (s != NULL) {
		/* Another worker writes this table: read it, change nothing (state.h). */
		sl_state_peek_burst(s, pkts, lanes, ctx->now, ctx->keys);
	} else {
		SL_FOR_EACH_LANE (i, lanes)
			pkts[i].state = 0; /* removed under our feet: every flow is in state 0 */
	}
	SL_FOR_EACH_LANE (i, lanes)
		pkts[i].state_table = (uint8_t)t;
	ctx->tstats[t].matched += (uint64_t)__builtin_popcountll(lanes);
	/* On to the XFSM table (declaration keeps t + 1 in range). */
	ctx->lanes_at[next] |= lanes;
	ctx->table_bits[next >> 6] |= UINT64_C(1) << (next & 63);
}

void
pl_state_exec(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct sl_pkt *p,
	      const struct sl_action *a)
{
	unsigned t = a->set_state.table_id == SL_STATE_TABLE_AUTO ? p->state_table
								  : a->set_state.table_id;
	struct sl_state *s;

	if (t >= SL_TABLES_MAX || (s = state_of(pl, t)) == NULL)
		return; /* no state table passed (packet_out) or it was removed: nothing to set */
	if (sl_unlikely(!sl_state_claim(s, ctx))) {
		sl_state_count_foreign(s); /* another worker is the writer */
		return;
	}
	/* A refusal (table full) is counted by the state table; the packet goes on. */
	sl_state_set_pkt(s, p, &a->set_state.set, ctx->now);
}

void
sl_pipeline_service(const struct sl_pipeline *pl, const struct sl_pipeline_ctx *ctx)
{
	unsigned n = __atomic_load_n(&pl->n_state_ids, __ATOMIC_ACQUIRE);
	uint64_t now = 0;

	for (unsigned i = 0; i < n; i++) {
		struct sl_state *s = state_of(pl, pl->state_ids[i]);
		if (s == NULL || !sl_state_claim(s, ctx))
			continue; /* another worker writes it */
		if (now == 0)
			now = sl_pipeline_tsc();
		sl_state_service(s, now);
	}
}

/*
 * Control thread.
 */

static void
grace_period(struct sl_pipeline *pl)
{
	if (pl->sync != NULL)
		pl->sync(pl->sync_arg);
}

int
pl_state_declare(struct sl_pipeline *pl, const struct sl_table_spec *ts, char *err, size_t err_size)
{
	struct pl_table *pt = &pl->tables[ts->table_id];
	struct sl_state_params p = {
		.lookup = ts->fields,
		.n_lookup = ts->n_fields,
		.update = ts->update,
		.n_update = ts->n_update,
		.capacity = ts->max_entries,
		.tsc_hz = sl_pipeline_tsc_hz(),
	};
	struct sl_state *s, *old;
	char msg[160];
	int rc;

	if (ts->table_id + 1u >= SL_TABLES_MAX)
		return pl_err(pl, SL_FAIL_BAD_TABLE_ID, err, err_size, -EINVAL,
			      "table %u: a state table needs a next table (ids up to %u)",
			      ts->table_id, SL_TABLES_MAX - 2);
	if (ts->n_update > SL_STATE_FIELDS_MAX)
		return pl_err(pl, SL_FAIL_BAD_TABLE_CONFIG, err, err_size, -EINVAL,
			      "table %u: update scope of %u fields (max %d)", ts->table_id,
			      ts->n_update, SL_STATE_FIELDS_MAX);
	rc = sl_state_create(&p, &s, msg, sizeof(msg));
	if (rc < 0)
		return pl_err(pl, rc == -ENOMEM ? SL_FAIL_NOMEM : SL_FAIL_BAD_TABLE_CONFIG, err,
			      err_size, rc, "table %u: %s", ts->table_id, msg);
	old = pt->state;
	pt->spec = *ts;
	pt->declared = true;
	__atomic_store_n(&pt->state, s, __ATOMIC_RELEASE);
	bool known = false;
	for (unsigned i = 0; i < pl->n_state_ids; i++)
		known |= pl->state_ids[i] == ts->table_id;
	if (!known) {
		pl->state_ids[pl->n_state_ids] = ts->table_id;
		__atomic_store_n(&pl->n_state_ids, pl->n_state_ids + 1, __ATOMIC_RELEASE);
	}
	if (old != NULL) {
		grace_period(pl);
		sl_state_destroy(old);
	}
	return 0;
}

void
pl_state_remove(struct sl_pipeline *pl, unsigned table_id)
{
	struct sl_state *old = pl->tables[table_id].state;

	if (old == NULL)
		return;
	__atomic_store_n(&pl->tables[table_id].state, NULL, __ATOMIC_RELEASE);
	grace_period(pl);
	sl_state_destroy(old);
}

const struct sl_state *
sl_pipeline_state_table(const struct sl_pipeline *pl, unsigned table_id)
{
	return table_id < SL_TABLES_MAX ? pl->tables[table_id].state : NULL;
}

static struct sl_state *
state_for_ctl(struct sl_pipeline *pl, unsigned table_id, char *err, size_t err_size)
{
	if (table_id >= SL_TABLES_MAX || pl->tables[table_id].state == NULL) {
		pl_err(pl, SL_FAIL_BAD_TABLE_ID, err, err_size, -EINVAL,
		       "table %u is not a state table", table_id);
		return NULL;
	}
	return pl->tables[table_id].state;
}

static void
full_mask(const struct sl_field *f, uint8_t *mask)
{
	unsigned size = sl_field_size(f), bits = sl_field_bits(f);

	memset(mask, 0xff, size);
	mask[0] = (uint8_t)(0xff >> (size * 8 - bits));
}

/* Build the lookup-scope key from an exact match on every scope field. */
static int
key_from_match(struct sl_pipeline *pl, const struct sl_state *s, unsigned table_id,
	       const struct sl_match *m, uint8_t *key, char *err, size_t err_size)
{
	const struct sl_key_layout *l = sl_state_layout(s, false);
	char name[48];

	memset(key, 0, SL_STATE_KEY_MAX);
	for (unsigned i = 0; i < m->n_fields; i++) {
		const struct sl_field *f = &m->fields[i].f;
		if (sl_key_layout_find(l, f) < 0 && f->id != SL_FIELD_ETH_TYPE &&
		    f->id != SL_FIELD_IP_PROTO) {
			sl_field_format(f, name, sizeof(name));
			return pl_err(pl, SL_FAIL_BAD_MATCH, err, err_size, -EINVAL,
				      "table %u: %s is not in the lookup scope", table_id, name);
		}
	}
	for (unsigned i = 0; i < l->n_fields; i++) {
		const struct sl_match_field *mf = sl_match_get(m, &l->fields[i]);
		uint8_t full[SL_FIELD_SIZE_MAX];
		unsigned size = sl_field_size(&l->fields[i]);

		sl_field_format(&l->fields[i], name, sizeof(name));
		if (mf == NULL)
			return pl_err(pl, SL_FAIL_BAD_MATCH, err, err_size, -EINVAL,
				      "table %u: lookup-scope field %s missing", table_id, name);
		full_mask(&l->fields[i], full);
		if (memcmp(mf->mask, full, size) != 0)
			return pl_err(pl, SL_FAIL_BAD_MATCH, err, err_size, -EINVAL,
				      "table %u: %s must be exact, not masked", table_id, name);
		memcpy(key + l->offsets[i], mf->value, size);
	}
	return 0;
}

/* Apply or post one command. */
static int
command(struct sl_pipeline *pl, struct sl_state *s, const struct sl_state_cmd *c, char *err,
	size_t err_size)
{
	int rc;

	if (pl->sync == NULL) {
		rc = sl_state_cmd_apply(s, c, sl_pipeline_tsc());
		if (rc == -ENOSPC)
			return pl_err(pl, SL_FAIL_TABLE_FULL, err, err_size, rc,
				      "state table full (%u entries)", sl_state_capacity(s));
		return rc == -ENOENT ? 0 : rc;
	}
	for (unsigned waited = 0; (rc = sl_state_ctl_post(s, c)) == -ENOBUFS;
	     waited += CMD_POLL_US) {
		if (waited >= CMD_WAIT_US)
			return pl_err(pl, SL_FAIL_NONE, err, err_size, -EBUSY,
				      "the worker does not take state commands");
		usleep(CMD_POLL_US);
	}
	return rc;
}

int
sl_pipeline_state_set(struct sl_pipeline *pl, unsigned table_id, const struct sl_match *key,
		      const struct sl_state_set *a, char *err, size_t err_size)
{
	struct sl_state *s = state_for_ctl(pl, table_id, err, err_size);
	struct sl_state_cmd c = {.op = SL_STATE_CMD_SET, .set = *a};
	int rc;

	if (s == NULL)
		return -EINVAL;
	if ((rc = key_from_match(pl, s, table_id, key, c.key, err, err_size)) < 0)
		return rc;
	return command(pl, s, &c, err, err_size);
}

int
sl_pipeline_state_del(struct sl_pipeline *pl, unsigned table_id, const struct sl_match *key,
		      char *err, size_t err_size)
{
	struct sl_state *s = state_for_ctl(pl, table_id, err, err_size);
	struct sl_state_cmd c = {.op = key ? SL_STATE_CMD_DEL : SL_STATE_CMD_CLEAR};
	int rc;

	if (s == NULL)
		return -EINVAL;
	if (key != NULL && (rc = key_from_match(pl, s, table_id, key, c.key, err, err_size)) < 0)
		return rc;
	return command(pl, s, &c, err, err_size);
}

struct dump_arg {
	const struct sl_key_layout *l;
	sl_pipeline_state_fn fn;
	void *arg;
};

/* The key as a match: each scope field exact, with its eth_type / ip_proto prerequisites. */
static int
dump_one(const struct sl_state_entry_info *e, void *arg)
{
	const struct dump_arg *d = arg;
	struct sl_match m = {0};

	for (unsigned i = 0; i < d->l->n_fields; i++) {
		const struct sl_field *f = &d->l->fields[i];
		struct sl_field pf;
		uint16_t types[2];
		unsigned n_types;
		int proto;
		uint8_t v[SL_FIELD_SIZE_MAX], mask[SL_FIELD_SIZE_MAX];

		if (f->id != SL_FIELD_RAW) {
			/* Where both IP versions qualify, IPv4 is named (ovs-ofctl's "tcp"). */
			sl_field_prereq(f->id, types, &n_types, &proto);
			pf = (struct sl_field){.id = SL_FIELD_ETH_TYPE};
			if (n_types > 0 && sl_match_get(&m, &pf) == NULL) {
				v[0] = (uint8_t)(types[0] >> 8);
				v[1] = (uint8_t)types[0];
				full_mask(&pf, mask);
				sl_match_set(&m, &pf, v, mask);
			}
			pf = (struct sl_field){.id = SL_FIELD_IP_PROTO};
			if (proto >= 0 && sl_match_get(&m, &pf) == NULL) {
				v[0] = (uint8_t)proto;
				full_mask(&pf, mask);
				sl_match_set(&m, &pf, v, mask);
			}
		}
		full_mask(f, mask);
		sl_match_set(&m, f, e->key + d->l->offsets[i], mask);
	}
	return d->fn(&m, e, d->arg);
}

/* Wait (bounded) until the worker applied the commands posted so far. */
static void
commands_wait(const struct sl_pipeline *pl, const struct sl_state *s)
{
	for (unsigned waited = 0;
	     pl->sync != NULL && sl_state_ctl_pending(s) && waited < CMD_WAIT_US;
	     waited += CMD_POLL_US)
		usleep(CMD_POLL_US);
}

int
sl_pipeline_state_stats(struct sl_pipeline *pl, unsigned table_id, struct sl_state_stats *st)
{
	struct sl_state *s = state_for_ctl(pl, table_id, NULL, 0);

	if (s == NULL)
		return -EINVAL;
	commands_wait(pl, s);
	sl_state_stats_get(s, st);
	return 0;
}

int
sl_pipeline_state_dump(struct sl_pipeline *pl, unsigned table_id, sl_pipeline_state_fn fn,
		       void *arg)
{
	struct sl_state *s = state_for_ctl(pl, table_id, NULL, 0);
	struct dump_arg d = {.fn = fn, .arg = arg};

	if (s == NULL)
		return -EINVAL;
	commands_wait(pl, s);
	d.l = sl_state_layout(s, false);
	return sl_state_dump(s, sl_pipeline_tsc(), dump_one, &d);
}
