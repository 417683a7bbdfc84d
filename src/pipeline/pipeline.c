/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pipeline control path: tables, layouts, flow add/delete/iterate.
 * The per-packet code is in pipeline_run.c.
 */
#include "pipeline.h"
#include "pipeline_priv.h"
#include "ffp.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

uint64_t
sl_pipeline_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

uint64_t
sl_pipeline_tsc_hz(void)
{
	static uint64_t hz;

	if (hz == 0) {
		struct timespec a, b, d = {0, 20 * 1000 * 1000};
		clock_gettime(CLOCK_MONOTONIC, &a);
		uint64_t t0 = sl_pipeline_tsc();
		nanosleep(&d, NULL);
		uint64_t t1 = sl_pipeline_tsc();
		clock_gettime(CLOCK_MONOTONIC, &b);
		double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
		hz = (uint64_t)((double)(t1 - t0) * 1e9 / ns);
	}
	return hz;
}

int
sl_pipeline_create(struct sl_pipeline **out)
{
	struct sl_pipeline *pl = calloc(1, sizeof(*pl));

	if (pl == NULL)
		return -ENOMEM;
	for (unsigned t = 0; t < SL_TABLES_MAX; t++) {
		struct pl_table *pt = &pl->tables[t];
		pt->spec.table_id = (uint8_t)t;
		pt->spec.kind = SL_TABLE_MASK;
		pt->copy[0].version = pt->copy[1].version = 1;
		pt->version_seq = 1;
		pt->live = &pt->copy[0];
	}
	if (pl_groups_create(pl) < 0 || pl_meters_create(pl) < 0 || pl_fdb_create(pl) < 0) {
		pl_groups_destroy(pl);
		pl_meters_destroy(pl);
		free(pl);
		return -ENOMEM;
	}
	pl->accel.dcache = true;
	pl->last_table = -1;
	pl->accel.path_inactive = SL_FLOW_CACHE_ONE_TABLE; /* no table yet */
	*out = pl;
	return 0;
}

void
flow_free(struct sl_flow *f)
{
	if (f == NULL)
		return;
	free(f->actions);
	free(f);
}

void
sl_pipeline_destroy(struct sl_pipeline *pl)
{
	if (pl == NULL)
		return;
	for (unsigned t = 0; t < SL_TABLES_MAX; t++) {
		struct pl_table *pt = &pl->tables[t];
		for (unsigned i = 0; i < pt->n_flows; i++)
			flow_free(pt->flows[i]);
		free(pt->flows);
		free(pt->ops);
		sl_table_destroy(pt->copy[0].tbl);
		sl_table_destroy(pt->copy[1].tbl);
		sl_state_destroy(pt->state);
		pl_ffp_table_free(pt);
	}
	pl_ffp_path_free(pl);
	for (unsigned i = 0; i < pl->n_dead; i++)
		flow_free(pl->dead[i].flow);
	free(pl->dead);
	pl_groups_destroy(pl);
	pl_meters_destroy(pl);
	pl_queues_destroy(pl);
	pl_fdb_destroy(pl);
	free(pl);
}

void
sl_pipeline_ports_set(struct sl_pipeline *pl, unsigned n_ports, const bool *up)
{
	if (n_ports > PL_PORTS_MAX)
		n_ports = PL_PORTS_MAX;
	for (unsigned i = 0; i < n_ports; i++) {
		pl->port_present[i + 1] = true;
		pl->port_up[i + 1] = up ? up[i] : true;
	}
	pl->n_ports = n_ports;
	pl_groups_liveness(pl);
}

/*
 * Ports come and go while workers run: flags are single-byte stores, and
 * n_ports only grows here (a deleted port stays below it, absent), so a
 * worker that read an older n_ports never indexes past what it covers.
 */
void
sl_pipeline_port_add(struct sl_pipeline *pl, uint32_t port, bool live)
{
	if (port == SL_PORT_LOCAL) {
		__atomic_store_n(&pl->local_present, true, __ATOMIC_RELAXED);
		__atomic_store_n(&pl->local_up, live, __ATOMIC_RELEASE);
		return;
	}
	if (port == 0 || port > PL_PORTS_MAX)
		return;
	__atomic_store_n(&pl->port_present[port], true, __ATOMIC_RELAXED);
	__atomic_store_n(&pl->port_up[port], live, __ATOMIC_RELAXED);
	if (port > pl->n_ports)
		__atomic_store_n(&pl->n_ports, port, __ATOMIC_RELEASE);
	pl_groups_liveness(pl);
}

void
sl_pipeline_port_del(struct sl_pipeline *pl, uint32_t port)
{
	if (port == SL_PORT_LOCAL) {
		__atomic_store_n(&pl->local_up, false, __ATOMIC_RELAXED);
		__atomic_store_n(&pl->local_present, false, __ATOMIC_RELAXED);
		return;
	}
	if (port == 0 || port > PL_PORTS_MAX)
		return;
	__atomic_store_n(&pl->port_up[port], false, __ATOMIC_RELAXED);
	__atomic_store_n(&pl->port_present[port], false, __ATOMIC_RELAXED);
	pl_groups_liveness(pl);
}

void
sl_pipeline_port_set_live(struct sl_pipeline *pl, uint32_t port, bool live)
{
	if (port == SL_PORT_LOCAL && pl->local_present)
		__atomic_store_n(&pl->local_up, live, __ATOMIC_RELAXED);
	else if (port >= 1 && port <= pl->n_ports && pl->port_present[port])
		__atomic_store_n(&pl->port_up[port], live, __ATOMIC_RELAXED);
	pl_groups_liveness(pl); /* fast failover's watched groups */
}

bool
sl_pipeline_port_live(const struct sl_pipeline *pl, uint32_t port)
{
	if (port == SL_PORT_LOCAL)
		return pl->local_up;
	return port >= 1 && port <= pl->n_ports && pl->port_up[port];
}

unsigned
sl_pipeline_n_ports(const struct sl_pipeline *pl)
{
	return pl->n_ports;
}

int
pl_err(struct sl_pipeline *pl, enum sl_pipeline_fail why, char *err, size_t size, int rc,
       const char *fmt, ...)
{
	va_list ap;

	pl->fail = why;
	if (err != NULL && size > 0) {
		va_start(ap, fmt);
		vsnprintf(err, size, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/*
 * Every change to a table's standby copy ends here: it gets a version of its
 * own, so decision-cache entries filled from either copy before become stale.
 */
static void
table_changed(struct sl_pipeline *pl, struct pl_table *pt)
{
	struct pl_dtable *sb = pl_standby(pt);
	struct sl_table_stats st = {0};

	if (++pt->version_seq == 0)
		pt->version_seq = 1;
	sb->version = pt->version_seq;
	pt->dirty = true;
	/*
	 * The cache pays only where a lookup probes several masks: a cache hit
	 * costs ~8 ns, one mask-table probe 2-7 ns, four ~25 ns (bench_mask).
	 */
	if (sb->tbl != NULL)
		sl_table_stats_read(sb->tbl, &st);
	sb->use_dcache = pl->accel.dcache && sb->tbl != NULL && pt->spec.kind == SL_TABLE_MASK &&
			 sb->layout.key_size <= DC_KEY_MAX && st.n_groups >= DC_MIN_MASKS;
	sb->budgeted = sb->use_dcache && st.n_groups >= PL_BUDGET_MIN_MASKS;
	pl_ffp_changed(pl, pt, sb); /* fast path: LUT on or off for this copy */
	/* Goto chains: tables of one match-all entry skip the lookup. */
	sb->all_hit = NULL;
	if (pt->n_flows == 1 && pt->flows[0]->n_match == 0 && sb->n_guards == 0 && !sb->ffp_on)
		sb->all_hit = pt->flows[0];
}

static int flow_rule(const struct pl_table *pt, const struct pl_dtable *dt, const struct sl_flow *f,
		     struct sl_rule *r);

/*
 * The standby copy's layout or guards changed: keys built for the old ones
 * (the FFP's path records, ffp_path.c) no longer cover what the table reads.
 */
static void
shape_changed(struct pl_table *pt)
{
	struct pl_dtable *sb = pl_standby(pt);

	sb->shape = ++pt->shape_seq;
	/* The key moved: the flows' masks again, under the new layout. */
	memset(sb->kmask, 0, sizeof(sb->kmask));
	for (unsigned i = 0; i < pt->n_flows; i++) {
		struct sl_rule r;
		if (pt->flows[i] != sb->miss && flow_rule(pt, sb, pt->flows[i], &r) == 0)
			for (unsigned b = 0; b < sb->layout.key_size; b++)
				sb->kmask[b] |= r.mask[b];
	}
}

/* Rule @r joins the standby copy: a bit no flow read before is a new shape. */
static void
kmask_add(struct pl_table *pt, const struct sl_rule *r)
{
	struct pl_dtable *sb = pl_standby(pt);
	bool grew = false;

	for (unsigned b = 0; b < sb->layout.key_size; b++) {
		grew |= (r->mask[b] & ~sb->kmask[b]) != 0;
		sb->kmask[b] |= r->mask[b];
	}
	if (grew)
		sb->shape = ++pt->shape_seq;
}

void
pl_table_touch(struct sl_pipeline *pl, struct pl_table *pt)
{
	table_changed(pl, pt);
}

/* Log a change of the standby copy for replay on the other one. */
static int
op_log(struct pl_table *pt, struct sl_flow *f, bool add)
{
	if (pt->spec.kind == SL_TABLE_MASK || pt->spec.kind == SL_TABLE_LPM || f->ll) {
		/* The fast path's journal (ffp.h): every change, rebuilds included. */
		struct sl_rule r;
		if (flow_rule(pt, pl_standby(pt), f, &r) == 0)
			pl_ffp_journal(NULL, pt, &r, f, add);
	}
	if (pt->rebuild)
		return 0; /* the other copy is rebuilt from the flow list anyway */
	if (pt->n_ops == pt->ops_cap) {
		unsigned cap = pt->ops_cap ? pt->ops_cap * 2 : 64;
		struct pl_op *n = realloc(pt->ops, cap * sizeof(*n));
		if (n == NULL) {
			pt->rebuild = true; /* cannot log: rebuild instead, still exact */
			return 0;
		}
		pt->ops = n;
		pt->ops_cap = cap;
	}
	pt->ops[pt->n_ops++] = (struct pl_op){.flow = f, .add = add};
	return 0;
}

/* Retire a flow: freed (and reported) after the next grace period. */
static void
dead_push(struct sl_pipeline *pl, struct sl_flow *f, struct sl_flow *successor, uint8_t reason)
{
	if (pl->n_dead == pl->dead_cap) {
		unsigned cap = pl->dead_cap ? pl->dead_cap * 2 : 64;
		struct pl_dead *n = realloc(pl->dead, cap * sizeof(*n));
		/* Out of memory: publish now so the flow can go at once. */
		if (n == NULL) {
			sl_pipeline_publish(pl);
			if (pl->n_dead == pl->dead_cap) {
				/* Still no room: wait for a grace period by hand. */
				if (pl->sync != NULL)
					pl->sync(pl->sync_arg);
				flow_free(f);
				return;
			}
		} else {
			pl->dead = n;
			pl->dead_cap = cap;
		}
	}
	pl->dead[pl->n_dead++] =
		(struct pl_dead){.flow = f, .successor = successor, .reason = reason};
}

static void
update_last_table(struct sl_pipeline *pl)
{
	pl->last_table = -1;
	for (int t = SL_TABLES_MAX - 1; t >= 0; t--) {
		const struct pl_dtable *sb = pl_standby(&pl->tables[t]);
		if (sb->tbl != NULL || sb->miss != NULL || pl->tables[t].state != NULL) {
			pl->last_table = t;
			break;
		}
	}
}

static int
check_kind_layout(struct sl_pipeline *pl, const struct sl_table_spec *ts,
		  const struct sl_key_layout *l, char *err, size_t err_size)
{
	char name[48];

	if (ts->kind == SL_TABLE_LPM || ts->kind == SL_TABLE_DIRECT) {
		if (l->n_fields != 1)
			return pl_err(pl, SL_FAIL_BAD_TABLE_CONFIG, err, err_size, -EINVAL,
				      "table %u: a %s table matches exactly one field (got %u)",
				      ts->table_id, sl_table_kind_name(ts->kind), l->n_fields);
		sl_field_format(&l->fields[0], name, sizeof(name));
		if (ts->kind == SL_TABLE_DIRECT && sl_field_size(&l->fields[0]) > 8)
			return pl_err(pl, SL_FAIL_BAD_TABLE_CONFIG, err, err_size, -EINVAL,
				      "table %u: direct index field %s is wider than 64 bits",
				      ts->table_id, name);
	}
	return 0;
}

/* Create a table object of @pt's kind with layout @l. */
static int
table_instantiate(struct sl_pipeline *pl, struct pl_table *pt, const struct sl_key_layout *l,
		  struct sl_table **out, char *err, size_t err_size)
{
	struct sl_table_params p = {
		.kind = pt->spec.kind,
		.key_size = l->key_size,
		.max_entries = pt->spec.max_entries,
		.name = pt->spec.name[0] ? pt->spec.name : NULL,
	};
	int rc = check_kind_layout(pl, &pt->spec, l, err, err_size);

	if (rc < 0)
		return rc;
	if (p.kind == SL_TABLE_LPM)
		p.lpm_bits = (uint16_t)sl_field_bits(&l->fields[0]);
	if (p.kind == SL_TABLE_DIRECT) {
		p.direct_bytes = (uint16_t)sl_field_size(&l->fields[0]);
		if (p.max_entries == 0)
			p.max_entries = 65536;
	}
	rc = sl_table_create(&p, out);
	if (rc < 0)
		return pl_err(pl, SL_FAIL_NOMEM, err, err_size, rc,
			      "table %u: cannot create %s table: %s", pt->spec.table_id,
			      sl_table_kind_name(p.kind), strerror(-rc));
	return 0;
}

/* Replace the standby copy's table object; the other copy is rebuilt at publish. */
static void
standby_set_table(struct pl_table *pt, struct sl_table *nt)
{
	struct pl_dtable *sb = pl_standby(pt);

	sl_table_destroy(sb->tbl);
	sb->tbl = nt;
	pl_ffp_reset(pt);
	pt->rebuild = true;
	pt->n_ops = 0;
}

int
sl_pipeline_table_declare(struct sl_pipeline *pl, const struct sl_table_spec *ts, char *err,
			  size_t err_size)
{
	struct sl_table *nt = NULL;
	struct pl_table *pt;
	struct pl_dtable *sb;
	struct sl_key_layout l;
	struct sl_table_spec old_spec;
	int rc;

	if (ts->table_id >= SL_TABLES_MAX)
		return pl_err(pl, SL_FAIL_BAD_TABLE_ID, err, err_size, -EINVAL,
			      "table id %u out of range 0..%u", ts->table_id, SL_TABLES_MAX - 1);
	pt = &pl->tables[ts->table_id];
	sb = pl_standby(pt);
	if (pt->n_flows > 0)
		return pl_err(pl, SL_FAIL_TABLE_BUSY, err, err_size, -EBUSY,
			      "table %u already holds %u flows", ts->table_id, pt->n_flows);
	if (ts->kind == SL_TABLE_STATE) { /* an OpenState stage: state_stage.c */
		rc = pl_state_declare(pl, ts, err, err_size);
		if (rc == 0)
			update_last_table(pl);
		return rc;
	}
	pl_state_remove(pl, ts->table_id); /* was a state table: now a classifier */
	if ((unsigned)ts->kind >= SL_TABLE__KIND_MAX)
		return pl_err(pl, SL_FAIL_BAD_TABLE_CONFIG, err, err_size, -EINVAL,
			      "table %u: unknown kind %d", ts->table_id, ts->kind);
	/* Capacity comes from the network too: bound what one message can allocate. */
	if (ts->max_entries > SL_TABLE_ENTRIES_MAX)
		return pl_err(pl, SL_FAIL_BAD_TABLE_CONFIG, err, err_size, -EINVAL,
			      "table %u: size %u exceeds %u", ts->table_id, ts->max_entries,
			      SL_TABLE_ENTRIES_MAX);
	rc = sl_key_layout_init(&l, ts->fields, ts->n_fields);
	if (rc < 0)
		return pl_err(pl, SL_FAIL_BAD_TABLE_CONFIG, err, err_size, rc,
			      "table %u: match fields do not fit a key: %s", ts->table_id,
			      strerror(-rc));
	if (ts->n_fields > 0) {
		rc = check_kind_layout(pl, ts, &l, err, err_size);
		if (rc < 0)
			return rc;
	} else if (ts->kind != SL_TABLE_MASK) {
		return pl_err(pl, SL_FAIL_BAD_TABLE_CONFIG, err, err_size, -EINVAL,
			      "table %u: a %s table needs fields=", ts->table_id,
			      sl_table_kind_name(ts->kind));
	}
	old_spec = pt->spec;
	pt->spec = *ts;
	if (ts->n_fields > 0) {
		rc = table_instantiate(pl, pt, &l, &nt, err, err_size);
		if (rc < 0) {
			pt->spec = old_spec;
			return rc;
		}
	}
	standby_set_table(pt, nt);
	pt->declared = true;
	sb->n_guards = 0;
	sb->layout = l;
	shape_changed(pt);
	table_changed(pl, pt);
	update_last_table(pl);
	return 0;
}

/* Key-space rule of a flow's match under layout @l; -EINVAL if a field is not in @l. */
static int
match_to_rule(const struct sl_key_layout *l, const struct sl_match_field *m, unsigned n,
	      struct sl_rule *r)
{
	memset(r->value, 0, sizeof(r->value));
	memset(r->mask, 0, sizeof(r->mask));
	for (unsigned i = 0; i < n; i++) {
		int idx = sl_key_layout_find(l, &m[i].f);
		unsigned size = sl_field_size(&m[i].f);

		if (idx < 0)
			return -EINVAL;
		memcpy(r->value + l->offsets[idx], m[i].value, size);
		memcpy(r->mask + l->offsets[idx], m[i].mask, size);
	}
	return 0;
}

static bool
is_guard(const struct pl_dtable *dt, const struct sl_match_field *mf)
{
	for (unsigned g = 0; g < dt->n_guards; g++)
		if (sl_field_equal(&dt->guards[g].f, &mf->f))
			return true;
	return false;
}

/* The rule flow @f is under copy @dt's layout and guards. */
static int
flow_rule(const struct pl_table *pt, const struct pl_dtable *dt, const struct sl_flow *f,
	  struct sl_rule *r)
{
	struct sl_match_field keyed[SL_KEY_FIELDS_MAX];
	unsigned n = 0;

	/* Guards are checked beside the table, not in its key. */
	for (unsigned i = 0; i < f->n_match; i++)
		if (!is_guard(dt, &f->match[i]))
			keyed[n++] = f->match[i];
	int rc = match_to_rule(&dt->layout, keyed, n, r);

	r->priority = f->priority;
	r->data = (void *)f;
	if (rc == 0 && pt->spec.kind == SL_TABLE_EXACT) {
		/*
		 * Exact tables hash the whole key: every field must be fully
		 * matched; the bits outside fields (padding, unused high bits)
		 * are zero in every extracted key, so they are matched too.
		 */
		uint8_t full[SL_FIELD_SIZE_MAX];
		for (unsigned i = 0; i < dt->layout.n_fields; i++) {
			const struct sl_field *fl = &dt->layout.fields[i];
			unsigned size = sl_field_size(fl);
			memset(full, 0xff, size);
			full[0] = (uint8_t)(0xff >> (size * 8 - sl_field_bits(fl)));
			if (memcmp(r->mask + dt->layout.offsets[i], full, size) != 0)
				return -EINVAL;
		}
		memset(r->mask, 0xff, dt->layout.key_size);
	}
	return rc;
}

static bool
match_is_empty(const struct sl_match_field *m, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		for (unsigned b = 0; b < SL_FIELD_SIZE_MAX; b++)
			if (m[i].mask[b])
				return false;
	return true;
}

static bool
is_miss_slot(const struct pl_table *pt, const struct sl_flow *f)
{
	return pt->spec.kind != SL_TABLE_MASK && f->priority == 0 &&
	       match_is_empty(f->match, f->n_match);
}

/* Build a table object with layout @l holding every flow of @pt (bar the miss slot). */
static int
table_fill(struct sl_pipeline *pl, struct pl_table *pt, const struct pl_dtable *dt,
	   struct sl_table **out, char *err, size_t err_size)
{
	struct sl_table *nt = NULL;
	int rc = table_instantiate(pl, pt, &dt->layout, &nt, err, err_size);

	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < pt->n_flows; i++) {
		struct sl_rule r;
		if (is_miss_slot(pt, pt->flows[i]))
			continue;
		flow_rule(pt, dt, pt->flows[i], &r);
		rc = sl_table_add(nt, &r);
		if (rc < 0) {
			sl_table_destroy(nt);
			return pl_err(pl, SL_FAIL_NOMEM, err, err_size, rc,
				      "table %u: re-layout failed: %s", pt->spec.table_id,
				      strerror(-rc));
		}
	}
	sl_table_commit(nt);
	*out = nt;
	return 0;
}

/*
 * Give a mask table a wider layout (a flow uses a field it did not match
 * yet): build a new table and move every flow into it.  Control path only.
 */
static int
table_relayout(struct sl_pipeline *pl, struct pl_table *pt, const struct sl_key_layout *nl,
	       char *err, size_t err_size)
{
	struct pl_dtable *sb = pl_standby(pt);
	struct sl_key_layout old_layout = sb->layout;
	struct sl_table *nt = NULL;
	int rc;

	sb->layout = *nl;
	rc = table_fill(pl, pt, sb, &nt, err, err_size);
	if (rc < 0) {
		sb->layout = old_layout;
		return rc;
	}
	standby_set_table(pt, nt);
	shape_changed(pt);
	return 0;
}

/*
 * May a field outside a declared layout be a guard?  Only exact dl_type or
 * nw_proto, equal for every flow of the table.  Returns 0 when accepted
 * (recorded as a guard), -EEXIST when it conflicts with the table's guard,
 * -EINVAL when the field cannot be a guard.
 */
static int
guard_accept(struct pl_table *pt, const struct sl_match_field *mf)
{
	struct pl_dtable *sb = pl_standby(pt);
	unsigned size = sl_field_size(&mf->f);

	if ((mf->f.id != SL_FIELD_ETH_TYPE && mf->f.id != SL_FIELD_IP_PROTO) ||
	    !sl_mask_is_full(mf->mask, size))
		return -EINVAL;
	for (unsigned g = 0; g < sb->n_guards; g++) {
		if (sb->guards[g].f.id == mf->f.id)
			return memcmp(sb->guards[g].value, mf->value, size) == 0 ? 0 : -EEXIST;
	}
	if (pt->n_flows > (sb->miss != NULL ? 1u : 0u))
		return -EEXIST; /* flows without this guard exist already */
	sb->guards[sb->n_guards++] = *mf;
	shape_changed(pt);
	return 0;
}

/* Make sure table @pt exists and its layout covers every field of @m. */
/*
 * The layout an undeclared table needs for the flows it holds now plus @m:
 * the union kept so far also has the fields of flows deleted since, and
 * must not decide whether a new flow fits (a flow was refused in an
 * empty table because of flows long gone).  -E2BIG when even that is too
 * wide for a key.
 */
static int
layout_of_flows(const struct pl_table *pt, const struct sl_match *m, struct sl_key_layout *nl)
{
	struct sl_field fields[SL_KEY_FIELDS_MAX];
	unsigned n = 0;

	for (unsigned k = 0; k <= pt->n_flows; k++) {
		const struct sl_match_field *mf = k < pt->n_flows ? pt->flows[k]->match : m->fields;
		unsigned nf = k < pt->n_flows ? pt->flows[k]->n_match : m->n_fields;
		for (unsigned i = 0; i < nf; i++) {
			bool used = false, seen = false;
			for (unsigned b = 0; b < SL_FIELD_SIZE_MAX; b++)
				used |= mf[i].mask[b] != 0;
			for (unsigned j = 0; j < n && !seen; j++)
				seen = sl_field_equal(&fields[j], &mf[i].f);
			if (!used || seen)
				continue;
			if (n == SL_KEY_FIELDS_MAX)
				return -E2BIG;
			fields[n++] = mf[i].f;
		}
	}
	return sl_key_layout_init(nl, fields, n);
}

static int
table_prepare(struct sl_pipeline *pl, struct pl_table *pt, const struct sl_match *m, char *err,
	      size_t err_size)
{
	struct pl_dtable *sb = pl_standby(pt);
	struct sl_field fields[SL_KEY_FIELDS_MAX * 2];
	struct sl_key_layout nl;
	unsigned n = 0;
	bool grow = false;
	char name[48];
	int rc;

	for (unsigned i = 0; i < m->n_fields; i++) {
		bool used = false;
		for (unsigned b = 0; b < SL_FIELD_SIZE_MAX; b++)
			used |= m->fields[i].mask[b] != 0;
		if (used && sl_key_layout_find(&sb->layout, &m->fields[i].f) < 0) {
			bool prereq = m->fields[i].f.id == SL_FIELD_ETH_TYPE ||
				      m->fields[i].f.id == SL_FIELD_IP_PROTO;
			if (pt->declared && pt->spec.n_fields > 0 &&
			    !(prereq && pt->spec.kind == SL_TABLE_MASK)) {
				int g = pt->spec.kind != SL_TABLE_MASK
						? guard_accept(pt, &m->fields[i])
						: -EINVAL;
				if (g == 0)
					continue;
				sl_field_format(&m->fields[i].f, name, sizeof(name));
				if (g == -EEXIST)
					return pl_err(pl, SL_FAIL_BAD_MATCH, err, err_size, -EINVAL,
						      "table %u: every flow must share the %s of "
						      "the first flow (the table matches only its "
						      "declared fields)",
						      pt->spec.table_id, name);
				return pl_err(pl, SL_FAIL_BAD_MATCH, err, err_size, -EINVAL,
					      "table %u (%s) does not match on %s",
					      pt->spec.table_id, sl_table_kind_name(pt->spec.kind),
					      name);
			}
			grow = true;
		}
	}
	for (unsigned g = 0; g < sb->n_guards; g++) {
		const struct sl_match_field *mf = sl_match_get(m, &sb->guards[g].f);
		if (mf == NULL || memcmp(mf->value, sb->guards[g].value, SL_FIELD_SIZE_MAX) ||
		    memcmp(mf->mask, sb->guards[g].mask, SL_FIELD_SIZE_MAX)) {
			sl_field_format(&sb->guards[g].f, name, sizeof(name));
			return pl_err(pl, SL_FAIL_BAD_MATCH, err, err_size, -EINVAL,
				      "table %u: every flow must share the %s of the first flow "
				      "(the table matches only its declared fields)",
				      pt->spec.table_id, name);
		}
	}
	if (sb->tbl != NULL && !grow)
		return 0;
	for (unsigned i = 0; i < sb->layout.n_fields; i++)
		fields[n++] = sb->layout.fields[i];
	for (unsigned i = 0; i < m->n_fields; i++)
		fields[n++] = m->fields[i].f;
	rc = sl_key_layout_init(&nl, fields, n);
	if (rc == -E2BIG && !pt->declared)
		rc = layout_of_flows(pt, m, &nl);
	if (rc < 0)
		return pl_err(pl, SL_FAIL_BAD_MATCH, err, err_size, rc,
			      "table %u: the union of match fields exceeds a %u-byte key",
			      pt->spec.table_id, SL_KEY_MAX);
	if (sb->tbl == NULL) {
		struct sl_table *nt = NULL;
		if (pt->spec.kind != SL_TABLE_MASK && nl.n_fields == 0)
			return 0; /* only a table-miss entry so far */
		rc = table_instantiate(pl, pt, &nl, &nt, err, err_size);
		if (rc == 0) {
			standby_set_table(pt, nt);
			sb->layout = nl;
			shape_changed(pt);
		}
		return rc;
	}
	return table_relayout(pl, pt, &nl, err, err_size);
}

int
pl_check_actions(struct sl_pipeline *pl, const struct sl_action *a, unsigned n, char *err,
		 size_t err_size)
{
	for (unsigned i = 0; i < n; i++) {
		switch (a[i].type) {
		case SL_ACT_OUTPUT: {
			uint32_t port = a[i].output.port;
			if (port == SL_PORT_TABLE || port == SL_PORT_ANY || port == 0 ||
			    (port < SL_PORT_MAX_PHYS && port > PL_PORTS_MAX))
				return pl_err(pl, SL_FAIL_BAD_OUT_PORT, err, err_size, -EINVAL,
					      "output to port 0x%x is not allowed in a flow", port);
			if (port > SL_PORT_MAX_PHYS && port < SL_PORT_IN_PORT)
				return pl_err(pl, SL_FAIL_BAD_OUT_PORT, err, err_size, -EOPNOTSUPP,
					      "output:reserved port 0x%x is not supported", port);
			break;
		}
		case SL_ACT_GROUP: /* in a bucket too: chaining (group.c checks loops and depth) */
			if (pl_group_find(pl, a[i].group_id) == NULL)
				return pl_err(pl, SL_FAIL_BAD_OUT_GROUP, err, err_size, -ENOENT,
					      "group %u does not exist", a[i].group_id);
			break;
		case SL_ACT_SET_FIELD:
			if (a[i].set_field.f.id != SL_FIELD_RAW &&
			    !sl_field_writable(a[i].set_field.f.id))
				return pl_err(pl, SL_FAIL_BAD_SET_FIELD, err, err_size, -EINVAL,
					      "set_field: %s is read-only",
					      sl_field_name(a[i].set_field.f.id));
			break;
		case SL_ACT_SET_STATE:
			if (a[i].set_state.table_id != SL_STATE_TABLE_AUTO &&
			    (a[i].set_state.table_id >= SL_TABLES_MAX ||
			     pl->tables[a[i].set_state.table_id].state == NULL))
				return pl_err(pl, SL_FAIL_BAD_ACTION, err, err_size, -EINVAL,
					      "set_state: table %u is not a state table",
					      a[i].set_state.table_id);
			break;
		case SL_ACT_PUSH_VLAN:
			if (a[i].ethertype != 0x8100 && a[i].ethertype != 0x88a8)
				return pl_err(pl, SL_FAIL_BAD_ACTION, err, err_size, -EINVAL,
					      "push_vlan: ethertype 0x%04x is not 0x8100 or 0x88a8",
					      a[i].ethertype);
			break;
		case SL_ACT_PUSH_MPLS:
			if (a[i].ethertype != 0x8847 && a[i].ethertype != 0x8848)
				return pl_err(pl, SL_FAIL_BAD_ACTION, err, err_size, -EINVAL,
					      "push_mpls: ethertype 0x%04x is not 0x8847 or 0x8848",
					      a[i].ethertype);
			break;
		case SL_ACT_PUSH_PBB:
			if (a[i].ethertype != 0x88e7)
				return pl_err(pl, SL_FAIL_BAD_ACTION, err, err_size, -EINVAL,
					      "push_pbb: ethertype 0x%04x is not 0x88e7",
					      a[i].ethertype);
			break;
		default:
			if (a[i].type >= SL_ACT__MAX)
				return pl_err(pl, SL_FAIL_BAD_ACTION, err, err_size, -EINVAL,
					      "unknown action type %u", a[i].type);
			break;
		}
	}
	return 0;
}

int
sl_pipeline_actions_prepare(struct sl_pipeline *pl, struct sl_action *actions, unsigned n,
			    char *err, size_t err_size)
{
	pl->fail = SL_FAIL_NONE;
	for (unsigned i = 0; i < n; i++) {
		struct sl_action *a = &actions[i];
		if (a->type == SL_ACT_OUTPUT && a->output.port == SL_PORT_TABLE) {
			a->ref = NULL;
			continue;
		}
		int rc = pl_check_actions(pl, a, 1, err, err_size);
		if (rc < 0)
			return rc;
		a->ref = a->type == SL_ACT_GROUP ? pl_group_find(pl, a->group_id) : NULL;
	}
	return 0;
}

/* Copy @n actions, resolving group references (checked before). */
static void
actions_copy(struct sl_pipeline *pl, struct sl_action *dst, const struct sl_action *src, unsigned n)
{
	memcpy(dst, src, n * sizeof(*dst));
	for (unsigned i = 0; i < n; i++)
		dst[i].ref =
			dst[i].type == SL_ACT_GROUP ? pl_group_find(pl, dst[i].group_id) : NULL;
}

/* A meter instruction must name a meter that exists (OVS: OFPMMFC_UNKNOWN_METER). */
static int
check_meter(struct sl_pipeline *pl, uint32_t meter_id, char *err, size_t err_size)
{
	if (meter_id == 0 || (meter_id <= SL_METER_ID_MAX && pl_meter_find(pl, meter_id) != NULL))
		return 0;
	return pl_err(pl, SL_FAIL_UNKNOWN_METER, err, err_size, -ENOENT, "meter:%u: no such meter",
		      meter_id);
}

static struct sl_flow *
flow_build(struct sl_pipeline *pl, const struct sl_flow_spec *fs)
{
	const struct sl_instructions *in = &fs->insns;
	unsigned n_act = in->n_apply + in->n_write;
	size_t size = sizeof(struct sl_flow) + fs->match.n_fields * sizeof(struct sl_match_field);
	/* Line-aligned: a hit's mark, counters and last-hit stamp share the first line. */
	struct sl_flow *f = aligned_alloc(64, (size + 63) / 64 * 64);

	if (f == NULL)
		return NULL;
	memset(f, 0, size);
	if (n_act > 0) {
		f->actions = malloc(n_act * sizeof(*f->actions));
		if (f->actions == NULL) {
			free(f);
			return NULL;
		}
		actions_copy(pl, f->actions, in->apply, in->n_apply);
		actions_copy(pl, f->actions + in->n_apply, in->write, in->n_write);
	}
	f->table_id = fs->table_id;
	f->n_apply = in->n_apply;
	f->n_write = in->n_write;
	f->insn_flags = (in->has_apply || in->n_apply ? SL_INSN_APPLY : 0) |
			(in->has_write || in->n_write ? SL_INSN_WRITE : 0) |
			(in->clear ? SL_INSN_CLEAR : 0) |
			(in->has_metadata ? SL_INSN_METADATA : 0) |
			(in->meter_id != 0 ? SL_INSN_METER : 0) |
			(fs->priority == 0 && match_is_empty(fs->match.fields, fs->match.n_fields)
				 ? SL_INSN_TABLE_MISS
				 : 0);
	f->goto_table = in->goto_table;
	f->meter = in->meter_id != 0 ? pl_meter_find(pl, in->meter_id) : NULL; /* checked before */
	f->priority = fs->priority;
	f->idle_timeout = fs->idle_timeout;
	f->hard_timeout = fs->hard_timeout;
	f->flags = fs->flags & ~SL_FF_LOW_LATENCY;
	f->ll = (fs->flags & SL_FF_LOW_LATENCY) ? SL_LL_MARKED : 0;
	if (f->ll)
		__atomic_store_n(&pl->accel.ll_ever, true, __ATOMIC_RELEASE);
	f->cookie = fs->cookie;
	f->metadata = in->metadata & in->metadata_mask;
	f->metadata_mask = in->metadata_mask;
	f->created_tsc = sl_pipeline_tsc();
	f->n_match = fs->match.n_fields;
	memcpy(f->match, fs->match.fields, fs->match.n_fields * sizeof(f->match[0]));
	uint8_t port;
	/* The datapath runs such an entry without reading its action list (pipeline_run.c). */
	f->plain_out = pl_ffp_flow_kind(f, &port) == FFP_REC_OUTPUT ? port : 0;
	/* A router's entry, dec_ttl then one output: pl_dec_ttl_plain and no action list. */
	f->plain_ttl_out =
		f->insn_flags == SL_INSN_APPLY && f->goto_table < 0 && f->n_apply == 2 &&
				f->n_write == 0 && f->actions[0].type == SL_ACT_DEC_NW_TTL &&
				f->actions[1].type == SL_ACT_OUTPUT &&
				f->actions[1].output.port != 0 && f->actions[1].output.port < 256
			? (uint8_t)f->actions[1].output.port
			: 0;
	return f;
}

void
sl_flow_to_spec(const struct sl_flow *f, struct sl_flow_spec *fs)
{
	sl_flow_spec_init(fs);
	fs->table_id = f->table_id;
	fs->priority = f->priority;
	fs->idle_timeout = f->idle_timeout;
	fs->hard_timeout = f->hard_timeout;
	fs->flags = (uint16_t)(f->flags | ((f->ll & SL_LL_MARKED) ? SL_FF_LOW_LATENCY : 0));
	fs->cookie = f->cookie;
	fs->match.n_fields = f->n_match;
	memcpy(fs->match.fields, f->match, f->n_match * sizeof(f->match[0]));
	fs->insns.n_apply = f->n_apply;
	fs->insns.n_write = f->n_write;
	if (f->actions != NULL) { /* NULL when the flow has no actions */
		memcpy(fs->insns.apply, f->actions, f->n_apply * sizeof(*f->actions));
		memcpy(fs->insns.write, f->actions + f->n_apply, f->n_write * sizeof(*f->actions));
	}
	for (unsigned i = 0; i < f->n_apply; i++)
		fs->insns.apply[i].ref = NULL;
	for (unsigned i = 0; i < f->n_write; i++)
		fs->insns.write[i].ref = NULL;
	fs->insns.has_apply = f->insn_flags & SL_INSN_APPLY;
	fs->insns.has_write = f->insn_flags & SL_INSN_WRITE;
	fs->insns.clear = f->insn_flags & SL_INSN_CLEAR;
	fs->insns.has_metadata = f->insn_flags & SL_INSN_METADATA;
	fs->insns.metadata = f->metadata;
	fs->insns.metadata_mask = f->metadata_mask;
	fs->insns.goto_table = f->goto_table;
	fs->insns.meter_id = f->meter != NULL ? ((const struct pl_meter_slot *)f->meter)->id : 0;
}

static int
flow_list_push(struct pl_table *pt, struct sl_flow *f)
{
	if (pt->n_flows == pt->cap) {
		unsigned cap = pt->cap ? pt->cap * 2 : 16;
		struct sl_flow **nf = realloc(pt->flows, cap * sizeof(*nf));
		if (nf == NULL)
			return -ENOMEM;
		pt->flows = nf;
		pt->cap = cap;
	}
	f->slot = pt->n_flows;
	pt->flows[pt->n_flows++] = f;
	return 0;
}

static void
flow_list_remove(struct pl_table *pt, struct sl_flow *f)
{
	struct sl_flow *last = pt->flows[--pt->n_flows];

	pt->flows[f->slot] = last;
	last->slot = f->slot;
}

/* Group and meter reference counts follow the flows that name them. */
static void
flow_group_refs(const struct sl_flow *f, int delta)
{
	if (f->meter != NULL)
		((struct pl_meter_slot *)f->meter)->ref_count += (unsigned)delta;
	for (unsigned i = 0; i < (unsigned)f->n_apply + f->n_write; i++)
		if (f->actions[i].type == SL_ACT_GROUP && f->actions[i].ref != NULL)
			pl_group_ref(f->actions[i].ref, delta);
}

/*
 * Swap flow @old for @nf (same match and priority) in the standby copy and
 * the flow list.  Counters move to @nf at publish unless RESET_COUNTS.
 */
static void
flow_replace(struct sl_pipeline *pl, struct pl_table *pt, struct sl_flow *old, struct sl_flow *nf,
	     bool reset)
{
	struct pl_dtable *sb = pl_standby(pt);

	if (sb->miss == old) {
		sb->miss = nf;
	} else {
		struct sl_rule r;
		void *data = NULL;
		flow_rule(pt, sb, old, &r);
		SL_VERIFY(sl_table_del(sb->tbl, &r, &data) == 0 && data == old);
		op_log(pt, old, false);
		flow_rule(pt, sb, nf, &r);
		SL_VERIFY(sl_table_add(sb->tbl, &r) == 0);
		op_log(pt, nf, true);
	}
	nf->slot = old->slot;
	pt->flows[old->slot] = nf;
	if (!reset)
		nf->created_tsc = old->created_tsc;
	flow_group_refs(nf, +1);
	flow_group_refs(old, -1);
	dead_push(pl, old, reset ? NULL : nf, SL_FLOW_REMOVED_REPLACED);
	table_changed(pl, pt);
}

/* Two matches overlap when some packet could match both. */
static bool
matches_overlap(const struct sl_match_field *a, unsigned na, const struct sl_match_field *b,
		unsigned nb)
{
	for (unsigned i = 0; i < na; i++)
		for (unsigned j = 0; j < nb; j++) {
			if (!sl_field_equal(&a[i].f, &b[j].f))
				continue;
			for (unsigned k = 0; k < SL_FIELD_SIZE_MAX; k++)
				if ((a[i].value[k] ^ b[j].value[k]) & a[i].mask[k] & b[j].mask[k])
					return false;
		}
	return true;
}

static bool flow_same_match_fields(const struct sl_match_field *a, unsigned na,
				   const struct sl_match *m);

int
sl_pipeline_flow_add(struct sl_pipeline *pl, const struct sl_flow_spec *fs, char *err,
		     size_t err_size)
{
	const struct sl_instructions *in = &fs->insns;
	struct pl_table *pt;
	struct pl_dtable *sb;
	struct sl_flow *f;
	struct sl_rule r;
	int rc;

	pl->fail = SL_FAIL_NONE;
	if (fs->table_id >= SL_TABLES_MAX)
		return pl_err(pl, SL_FAIL_BAD_TABLE_ID, err, err_size, -EINVAL,
			      "table id %u out of range 0..%u", fs->table_id, SL_TABLES_MAX - 1);
	if (in->goto_table >= 0 &&
	    (in->goto_table <= fs->table_id || in->goto_table >= SL_TABLES_MAX))
		return pl_err(pl, SL_FAIL_BAD_TABLE_ID, err, err_size, -EINVAL,
			      "goto_table:%d from table %u: must go forward, below %u",
			      in->goto_table, fs->table_id, SL_TABLES_MAX);
	if (in->n_apply > SL_ACTIONS_MAX || in->n_write > SL_ACTIONS_MAX)
		return pl_err(pl, SL_FAIL_BAD_ACTION, err, err_size, -EINVAL, "too many actions");
	if (pl->tables[fs->table_id].state != NULL)
		return pl_err(pl, SL_FAIL_BAD_TABLE_ID, err, err_size, -EINVAL,
			      "table %u is a state table: it holds states, not flows "
			      "(put the flows in table %u)",
			      fs->table_id, fs->table_id + 1);
	for (unsigned i = 0; i < in->n_write; i++)
		if (in->write[i].type == SL_ACT_SET_STATE)
			return pl_err(pl, SL_FAIL_UNSUPPORTED, err, err_size, -EINVAL,
				      "set_state in write_actions: use it as an apply action");
	rc = pl_check_actions(pl, in->apply, in->n_apply, err, err_size);
	if (rc == 0)
		rc = pl_check_actions(pl, in->write, in->n_write, err, err_size);
	if (rc == 0)
		rc = check_meter(pl, in->meter_id, err, err_size);
	if (rc < 0)
		return rc;
	if (sl_match_prereq_check(&fs->match, err, err_size) >= 0) {
		pl->fail = SL_FAIL_BAD_PREREQ;
		return -EINVAL;
	}

	pt = &pl->tables[fs->table_id];
	sb = pl_standby(pt);
	if (fs->flags & SL_FF_CHECK_OVERLAP) {
		for (unsigned i = 0; i < pt->n_flows; i++) {
			const struct sl_flow *o = pt->flows[i];
			if (o->priority == fs->priority &&
			    !flow_same_match_fields(o->match, o->n_match, &fs->match) &&
			    matches_overlap(o->match, o->n_match, fs->match.fields,
					    fs->match.n_fields))
				return pl_err(pl, SL_FAIL_OVERLAP, err, err_size, -EEXIST,
					      "table %u: overlaps a flow of priority %u",
					      fs->table_id, fs->priority);
		}
	}
	f = flow_build(pl, fs);
	if (f == NULL)
		return pl_err(pl, SL_FAIL_NOMEM, err, err_size, -ENOMEM, "out of memory");
	if (is_miss_slot(pt, f)) {
		if (sb->miss != NULL) {
			flow_replace(pl, pt, sb->miss, f, fs->flags & SL_FF_RESET_COUNTS);
			return 0;
		}
		if ((rc = flow_list_push(pt, f)) < 0) {
			flow_free(f);
			return pl_err(pl, SL_FAIL_NOMEM, err, err_size, rc, "out of memory");
		}
		sb->miss = f;
		flow_group_refs(f, +1);
		table_changed(pl, pt);
		update_last_table(pl);
		return 0;
	}
	rc = table_prepare(pl, pt, &fs->match, err, err_size);
	if (rc < 0)
		goto free_flow;
	rc = flow_rule(pt, sb, f, &r);
	if (rc < 0) {
		pl_err(pl, SL_FAIL_BAD_MATCH, err, err_size, rc,
		       "table %u (exact) needs every one of its fields matched exactly",
		       fs->table_id);
		goto free_flow;
	}
	struct sl_flow *old = sl_table_find(sb->tbl, &r);
	if (old != NULL) {
		/* Same match and priority: swap the entry. */
		flow_replace(pl, pt, old, f, fs->flags & SL_FF_RESET_COUNTS);
		return 0;
	}
	rc = sl_table_add(sb->tbl, &r);
	if (rc < 0) {
		const char *why = rc == -EEXIST   ? "an entry with the same key exists"
				  : rc == -ENOSPC ? "table full"
				  : rc == -EINVAL ? "the match does not fit the table kind"
						  : strerror(-rc);
		pl_err(pl, rc == -ENOSPC ? SL_FAIL_TABLE_FULL : SL_FAIL_BAD_MATCH, err, err_size,
		       rc, "table %u (%s): cannot add flow: %s", fs->table_id,
		       sl_table_kind_name(pt->spec.kind), why);
		goto free_flow;
	}
	rc = flow_list_push(pt, f);
	if (rc < 0) {
		sl_table_del(sb->tbl, &r, NULL);
		pl_err(pl, SL_FAIL_NOMEM, err, err_size, rc, "out of memory");
		goto free_flow;
	}
	op_log(pt, f, true);
	kmask_add(pt, &r);
	flow_group_refs(f, +1);
	table_changed(pl, pt);
	update_last_table(pl);
	return 0;

free_flow:
	flow_free(f);
	return rc;
}

/* True when match fields @have are at least as specific as @m (OpenFlow non-strict). */
static bool
fields_covered_by(const struct sl_match_field *have_f, unsigned n_have, const struct sl_match *m)
{
	for (unsigned i = 0; i < m->n_fields; i++) {
		const struct sl_match_field *want = &m->fields[i];
		const struct sl_match_field *have = NULL;

		for (unsigned j = 0; j < n_have; j++)
			if (sl_field_equal(&have_f[j].f, &want->f))
				have = &have_f[j];
		for (unsigned b = 0; b < SL_FIELD_SIZE_MAX; b++) {
			uint8_t hm = have ? have->mask[b] : 0, hv = have ? have->value[b] : 0;
			if ((want->mask[b] & hm) != want->mask[b] ||
			    (hv & want->mask[b]) != want->value[b])
				return false;
		}
	}
	return true;
}

static bool
flow_same_match_fields(const struct sl_match_field *have_f, unsigned n_have,
		       const struct sl_match *m)
{
	unsigned n_used = 0;

	for (unsigned i = 0; i < m->n_fields; i++) {
		const struct sl_match_field *want = &m->fields[i];
		const struct sl_match_field *have = NULL;
		bool used = false;

		for (unsigned b = 0; b < SL_FIELD_SIZE_MAX; b++)
			used |= want->mask[b] != 0;
		if (!used)
			continue;
		n_used++;
		for (unsigned j = 0; j < n_have; j++)
			if (sl_field_equal(&have_f[j].f, &want->f))
				have = &have_f[j];
		if (have == NULL || memcmp(have->mask, want->mask, SL_FIELD_SIZE_MAX) ||
		    memcmp(have->value, want->value, SL_FIELD_SIZE_MAX))
			return false;
	}
	unsigned n_have_used = 0;
	for (unsigned j = 0; j < n_have; j++)
		for (unsigned b = 0; b < SL_FIELD_SIZE_MAX; b++)
			if (have_f[j].mask[b]) {
				n_have_used++;
				break;
			}
	return n_have_used == n_used;
}

void
sl_flow_filter_init(struct sl_flow_filter *flt)
{
	memset(flt, 0, sizeof(*flt));
	flt->table_id = 255;
	flt->out_port = SL_PORT_ANY;
	flt->out_group = SL_GROUP_ID_ANY;
}

static bool
flow_outputs_to(const struct sl_flow *f, uint32_t port, uint32_t group)
{
	for (unsigned i = 0; i < (unsigned)f->n_apply + f->n_write; i++) {
		const struct sl_action *a = &f->actions[i];
		if (port != SL_PORT_ANY && a->type == SL_ACT_OUTPUT && a->output.port == port)
			return true;
		if (group != SL_GROUP_ID_ANY && a->type == SL_ACT_GROUP && a->group_id == group)
			return true;
	}
	return false;
}

bool
sl_flow_filter_match(const struct sl_flow *f, const struct sl_flow_filter *flt)
{
	static const struct sl_match empty;
	const struct sl_match *m = flt->match ? flt->match : &empty;

	if (flt->table_id != 255 && f->table_id != flt->table_id)
		return false;
	if ((f->cookie & flt->cookie_mask) != (flt->cookie & flt->cookie_mask))
		return false;
	if (flt->out_port != SL_PORT_ANY && !flow_outputs_to(f, flt->out_port, SL_GROUP_ID_ANY))
		return false;
	if (flt->out_group != SL_GROUP_ID_ANY && !flow_outputs_to(f, SL_PORT_ANY, flt->out_group))
		return false;
	if (flt->meter_id != 0 &&
	    (f->meter == NULL || ((const struct pl_meter_slot *)f->meter)->id != flt->meter_id))
		return false;
	if (flt->strict)
		return f->priority == flt->priority &&
		       flow_same_match_fields(f->match, f->n_match, m);
	return fields_covered_by(f->match, f->n_match, m);
}

static void
flow_remove(struct sl_pipeline *pl, struct pl_table *pt, struct sl_flow *f, uint8_t reason)
{
	struct pl_dtable *sb = pl_standby(pt);

	if (sb->miss == f) {
		sb->miss = NULL;
	} else {
		struct sl_rule r;
		void *data = NULL;
		flow_rule(pt, sb, f, &r);
		int rc = sl_table_del(sb->tbl, &r, &data);
		SL_VERIFY(rc == 0 && data == f);
		op_log(pt, f, false);
	}
	flow_list_remove(pt, f);
	flow_group_refs(f, -1);
	dead_push(pl, f, NULL, reason);
	table_changed(pl, pt);
}

unsigned
sl_pipeline_flow_del(struct sl_pipeline *pl, const struct sl_flow_filter *flt, uint8_t reason)
{
	unsigned first = flt->table_id == 255 ? 0 : flt->table_id;
	unsigned last = flt->table_id == 255 ? SL_TABLES_MAX - 1 : flt->table_id;
	unsigned n_deleted = 0;

	if (first >= SL_TABLES_MAX)
		return 0;
	for (unsigned t = first; t <= last; t++) {
		struct pl_table *pt = &pl->tables[t];
		for (unsigned i = 0; i < pt->n_flows;) {
			struct sl_flow *f = pt->flows[i];

			if (sl_flow_filter_match(f, flt)) {
				flow_remove(pl, pt, f,
					    reason); /* moves the last flow into slot i */
				n_deleted++;
			} else {
				i++;
			}
		}
	}
	if (n_deleted)
		update_last_table(pl);
	return n_deleted;
}

int
sl_pipeline_flow_modify(struct sl_pipeline *pl, const struct sl_flow_filter *flt,
			const struct sl_flow_spec *fs, unsigned *n_modified, char *err,
			size_t err_size)
{
	const struct sl_instructions *in = &fs->insns;
	unsigned first = flt->table_id == 255 ? 0 : flt->table_id;
	unsigned last = flt->table_id == 255 ? SL_TABLES_MAX - 1 : flt->table_id;
	int rc;

	*n_modified = 0;
	pl->fail = SL_FAIL_NONE;
	if (first >= SL_TABLES_MAX)
		return pl_err(pl, SL_FAIL_BAD_TABLE_ID, err, err_size, -EINVAL,
			      "table id %u out of range", flt->table_id);
	if (in->n_apply > SL_ACTIONS_MAX || in->n_write > SL_ACTIONS_MAX)
		return pl_err(pl, SL_FAIL_BAD_ACTION, err, err_size, -EINVAL, "too many actions");
	for (unsigned i = 0; i < in->n_write; i++)
		if (in->write[i].type == SL_ACT_SET_STATE)
			return pl_err(pl, SL_FAIL_UNSUPPORTED, err, err_size, -EINVAL,
				      "set_state in write_actions: use it as an apply action");
	rc = pl_check_actions(pl, in->apply, in->n_apply, err, err_size);
	if (rc == 0)
		rc = pl_check_actions(pl, in->write, in->n_write, err, err_size);
	if (rc == 0)
		rc = check_meter(pl, in->meter_id, err, err_size);
	if (rc < 0)
		return rc;
	if (in->goto_table >= SL_TABLES_MAX)
		return pl_err(pl, SL_FAIL_BAD_TABLE_ID, err, err_size, -EINVAL,
			      "goto_table:%d: beyond the last table %u", in->goto_table,
			      SL_TABLES_MAX - 1);
	for (unsigned t = first; t <= last; t++) {
		struct pl_table *pt = &pl->tables[t];
		for (unsigned i = 0; i < pt->n_flows; i++) {
			struct sl_flow *old = pt->flows[i], *nf;
			struct sl_flow_spec ns;

			if (!sl_flow_filter_match(old, flt))
				continue;
			if (in->goto_table >= 0 && in->goto_table <= (int)t)
				return pl_err(pl, SL_FAIL_BAD_TABLE_ID, err, err_size, -EINVAL,
					      "goto_table:%d from table %u: must go forward",
					      in->goto_table, t);
			sl_flow_to_spec(old, &ns);
			ns.insns = *in;
			nf = flow_build(pl, &ns);
			if (nf == NULL)
				return pl_err(pl, SL_FAIL_NOMEM, err, err_size, -ENOMEM,
					      "out of memory");
			nf->created_tsc = old->created_tsc;
			flow_replace(pl, pt, old, nf, fs->flags & SL_FF_RESET_COUNTS);
			(*n_modified)++;
		}
	}
	return 0;
}

unsigned
sl_pipeline_flow_expire(struct sl_pipeline *pl, uint64_t now)
{
	uint64_t hz = sl_pipeline_tsc_hz();
	unsigned n = 0;

	pl_ffp_promote(pl, now); /* auto-promotion, when enabled, runs with the timeouts */
	for (unsigned t = 0; t < SL_TABLES_MAX; t++) {
		struct pl_table *pt = &pl->tables[t];
		for (unsigned i = 0; i < pt->n_flows;) {
			struct sl_flow *f = pt->flows[i];
			uint64_t last_hit = sl_flow_last_hit(f);
			uint64_t since = last_hit > f->created_tsc ? last_hit : f->created_tsc;

			if (f->hard_timeout && now - f->created_tsc >= f->hard_timeout * hz) {
				flow_remove(pl, pt, f, SL_FLOW_REMOVED_HARD);
				n++;
			} else if (f->idle_timeout && now > since &&
				   now - since >= f->idle_timeout * hz) {
				flow_remove(pl, pt, f, SL_FLOW_REMOVED_IDLE);
				n++;
			} else {
				i++;
			}
		}
	}
	if (n)
		update_last_table(pl);
	return n;
}

int
sl_pipeline_flow_iterate(const struct sl_pipeline *pl, unsigned table_id, sl_flow_iter_fn fn,
			 void *arg)
{
	unsigned first = table_id == 255 ? 0 : table_id;
	unsigned last = table_id == 255 ? SL_TABLES_MAX - 1 : table_id;

	if (first >= SL_TABLES_MAX)
		return -EINVAL;
	for (unsigned t = first; t <= last; t++) {
		const struct pl_table *pt = &pl->tables[t];
		for (unsigned i = 0; i < pt->n_flows; i++) {
			int rc = fn(pt->flows[i], arg);
			if (rc)
				return rc;
		}
	}
	return 0;
}

unsigned
sl_pipeline_flow_count(const struct sl_pipeline *pl, unsigned table_id)
{
	unsigned n = 0;

	if (table_id != 255)
		return table_id < SL_TABLES_MAX ? pl->tables[table_id].n_flows : 0;
	for (unsigned t = 0; t < SL_TABLES_MAX; t++)
		n += pl->tables[t].n_flows;
	return n;
}

const struct sl_table *
sl_pipeline_table(const struct sl_pipeline *pl, unsigned table_id)
{
	return table_id < SL_TABLES_MAX ? pl_live(&pl->tables[table_id])->tbl : NULL;
}

/* Bring copy @dt (no longer read by workers) up to date with the live copy. */
static void
table_catch_up(struct sl_pipeline *pl, struct pl_table *pt, struct pl_dtable *dt)
{
	const struct pl_dtable *lv = pt->live;

	dt->layout = lv->layout;
	dt->shape = lv->shape;
	memcpy(dt->kmask, lv->kmask, sizeof(dt->kmask));
	dt->n_guards = lv->n_guards;
	memcpy(dt->guards, lv->guards, sizeof(dt->guards));
	dt->miss = lv->miss;
	if (pt->rebuild) {
		struct sl_table *nt = NULL;
		sl_table_destroy(dt->tbl);
		dt->tbl = NULL;
		if (lv->tbl != NULL && table_fill(pl, pt, dt, &nt, NULL, 0) == 0)
			dt->tbl = nt;
		SL_VERIFY(lv->tbl == NULL || dt->tbl != NULL); /* out of memory: no safe way on */
	} else {
		for (unsigned i = 0; i < pt->n_ops; i++) {
			struct sl_rule r;
			const struct pl_op *op = &pt->ops[i];
			flow_rule(pt, dt, op->flow, &r);
			if (op->add)
				SL_VERIFY(sl_table_add(dt->tbl, &r) == 0);
			else
				SL_VERIFY(sl_table_del(dt->tbl, &r, NULL) == 0);
		}
		if (pt->commit && dt->tbl != NULL)
			sl_table_commit(dt->tbl);
		if (dt->tbl != NULL)
			sl_table_poll(dt->tbl); /* its own build, if it finished: live next time */
	}
	dt->version = lv->version;
	dt->use_dcache = lv->use_dcache;
	dt->budgeted = lv->budgeted;
	dt->all_hit = lv->all_hit;
	pl_ffp_catch_up(pt, dt, lv);
	pt->n_ops = 0;
	pt->rebuild = false;
	pt->commit = false;
	pt->dirty = false;
}

void
sl_pipeline_publish(struct sl_pipeline *pl)
{
	bool any = false;

	for (unsigned t = 0; t < SL_TABLES_MAX; t++) {
		struct pl_table *pt = &pl->tables[t];
		if (!pt->dirty)
			continue;
		__atomic_store_n(&pt->live, pl_standby(pt), __ATOMIC_RELEASE);
		any = true;
	}
	any |= pl_ffp_path_update(pl); /* the FFP's path spec follows the live tables */
	any |= pl_groups_dirty(pl) || pl_meters_dirty(pl);
	if (!any && pl->n_dead == 0)
		return;
	/* Workers may still be in the old copies (and hold removed flows): wait them out. */
	if (pl->sync != NULL)
		pl->sync(pl->sync_arg);
	for (unsigned t = 0; t < SL_TABLES_MAX; t++) {
		struct pl_table *pt = &pl->tables[t];
		if (pt->dirty)
			table_catch_up(pl, pt, pl_standby(pt));
	}
	/* Replacements pass their counters on; removals are reported, then freed. */
	for (unsigned i = 0; i < pl->n_dead; i++) {
		struct pl_dead *d = &pl->dead[i];
		if (d->successor != NULL) {
			/* The worker writes n_packets: carry into control-owned fields. */
			d->successor->carried_packets += sl_flow_packets(d->flow);
			d->successor->carried_bytes += sl_flow_bytes(d->flow);
			if (sl_flow_last_hit(d->flow) > d->successor->carried_hit_tsc)
				d->successor->carried_hit_tsc = sl_flow_last_hit(d->flow);
		}
		if (d->reason != SL_FLOW_REMOVED_REPLACED && pl->removed != NULL)
			pl->removed(d->flow, d->reason, pl->removed_arg);
		flow_free(d->flow);
	}
	pl->n_dead = 0;
	pl_groups_reclaim(pl);
	pl_meters_reclaim(pl);
}

bool
sl_pipeline_dirty(const struct sl_pipeline *pl)
{
	if (pl->n_dead)
		return true;
	for (unsigned t = 0; t < SL_TABLES_MAX; t++)
		if (pl->tables[t].dirty)
			return true;
	return pl_groups_dirty(pl) || pl_meters_dirty(pl);
}

bool
sl_pipeline_poll(struct sl_pipeline *pl)
{
	bool any = false;

	for (unsigned t = 0; t <= (unsigned)SL_MAX(pl->last_table, 0); t++) {
		struct pl_table *pt = &pl->tables[t];
		struct pl_dtable *sb = pl_standby(pt);

		/* Same rules, same results: no new version, the caches stay valid. */
		if (sb->tbl != NULL && !pt->rebuild && sl_table_poll(sb->tbl) > 0) {
			pt->dirty = true;
			any = true;
		}
	}
	if (any)
		sl_pipeline_publish(pl);
	return any;
}

bool
sl_pipeline_table_rebuilding(const struct sl_pipeline *pl, unsigned table_id)
{
	struct sl_table_stats st;

	if (table_id >= SL_TABLES_MAX)
		return false;
	for (unsigned c = 0; c < 2; c++) {
		const struct sl_table *tbl = pl->tables[table_id].copy[c].tbl;

		if (tbl == NULL)
			continue;
		sl_table_stats_read(tbl, &st);
		if (st.rebuild_pending)
			return true;
	}
	return false;
}

int
sl_pipeline_commit(struct sl_pipeline *pl)
{
	int first = 0;

	for (unsigned t = 0; t < SL_TABLES_MAX; t++) {
		struct pl_table *pt = &pl->tables[t];
		struct pl_dtable *sb = pl_standby(pt);
		if (sb->tbl == NULL)
			continue;
		int rc = sl_table_commit(sb->tbl);
		if (rc < 0 && first == 0)
			first = rc;
		pt->commit = true;
		table_changed(pl, pt);
	}
	sl_pipeline_publish(pl);
	return first;
}

void
sl_pipeline_set_shared_counters(struct sl_pipeline *pl, bool on)
{
	pl->shared_counters = on;
}

void
sl_pipeline_set_invalid_ttl_pin(struct sl_pipeline *pl, bool on)
{
	__atomic_store_n(&pl->invalid_ttl_pin, on, __ATOMIC_RELAXED);
}

void
sl_pipeline_cache_enable(struct sl_pipeline *pl, bool on)
{
	pl->accel.dcache = on;
	for (unsigned t = 0; t < SL_TABLES_MAX; t++)
		table_changed(pl, &pl->tables[t]);
	sl_pipeline_publish(pl);
}

int
sl_pipeline_last_table(const struct sl_pipeline *pl)
{
	return pl->last_table;
}

const struct sl_table_spec *
sl_pipeline_table_spec(const struct sl_pipeline *pl, unsigned table_id)
{
	return table_id < SL_TABLES_MAX ? &pl->tables[table_id].spec : NULL;
}

bool
sl_pipeline_table_declared(const struct sl_pipeline *pl, unsigned table_id)
{
	return table_id < SL_TABLES_MAX && pl->tables[table_id].declared;
}

void
sl_pipeline_set_sync(struct sl_pipeline *pl, sl_pipeline_sync_fn fn, void *arg)
{
	pl->sync = fn;
	pl->sync_arg = arg;
}

void
sl_pipeline_set_removed(struct sl_pipeline *pl, sl_flow_removed_fn fn, void *arg)
{
	pl->removed = fn;
	pl->removed_arg = arg;
}

enum sl_pipeline_fail
sl_pipeline_fail(const struct sl_pipeline *pl)
{
	return pl->fail;
}
