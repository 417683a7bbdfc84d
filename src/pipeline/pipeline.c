/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pipeline control path: tables, layouts, flow add/delete/iterate.
 * The per-packet code is in pipeline_run.c.
 */
#include "pipeline.h"
#include "pipeline_priv.h"

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
		pl->tables[t].spec.table_id = (uint8_t)t;
		pl->tables[t].spec.kind = SL_TABLE_TERNARY;
		pl->tables[t].version = 1;
	}
	pl->dcache = true;
	pl->last_table = -1;
	*out = pl;
	return 0;
}

static void
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
		sl_table_destroy(pt->tbl);
	}
	free(pl->port_up);
	free(pl);
}

void
sl_pipeline_ports_set(struct sl_pipeline *pl, unsigned n_ports, const bool *up)
{
	bool *nu = calloc(n_ports + 1, sizeof(*nu));

	if (nu == NULL)
		return;
	for (unsigned i = 0; i < n_ports; i++)
		nu[i + 1] = up ? up[i] : true;
	free(pl->port_up);
	pl->port_up = nu;
	pl->n_ports = n_ports;
}

static int
err_set(char *err, size_t size, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
err_set(char *err, size_t size, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && size > 0) {
		va_start(ap, fmt);
		vsnprintf(err, size, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* Every change to a table's rules ends here: decision-cache entries for it become stale. */
static void
table_changed(struct sl_pipeline *pl, struct pl_table *pt)
{
	struct sl_table_stats st = {0};

	/* TODO(#3): with RCU, bump before the old entries are reclaimed. */
	if (++pt->version == 0)
		pt->version = 1;
	/*
	 * The cache pays only where a lookup probes several masks: a cache hit
	 * costs ~8 ns, one mask-table probe 2-7 ns, four ~25 ns (bench_ternary).
	 */
	if (pt->tbl != NULL)
		sl_table_stats_read(pt->tbl, &st);
	pt->use_dcache = pl->dcache && pt->tbl != NULL && pt->spec.kind == SL_TABLE_TERNARY &&
			 pt->layout.key_size <= DC_KEY_MAX && st.n_groups >= DC_MIN_MASKS;
}

static void
update_last_table(struct sl_pipeline *pl)
{
	pl->last_table = -1;
	for (int t = SL_TABLES_MAX - 1; t >= 0; t--) {
		if (pl->tables[t].tbl != NULL || pl->tables[t].miss != NULL) {
			pl->last_table = t;
			break;
		}
	}
}

static int
check_kind_layout(const struct sl_table_spec *ts, const struct sl_key_layout *l, char *err,
		  size_t err_size)
{
	char name[48];

	if (ts->kind == SL_TABLE_LPM || ts->kind == SL_TABLE_DIRECT) {
		if (l->n_fields != 1)
			return err_set(err, err_size, -EINVAL,
				       "table %u: a %s table matches exactly one field (got %u)",
				       ts->table_id, sl_table_kind_name(ts->kind), l->n_fields);
		sl_field_format(&l->fields[0], name, sizeof(name));
		if (ts->kind == SL_TABLE_DIRECT && sl_field_size(&l->fields[0]) > 8)
			return err_set(err, err_size, -EINVAL,
				       "table %u: direct index field %s is wider than 64 bits",
				       ts->table_id, name);
	}
	return 0;
}

/* Create the table object for @pt with layout @l. */
static int
table_instantiate(struct pl_table *pt, const struct sl_key_layout *l, struct sl_table **out,
		  char *err, size_t err_size)
{
	struct sl_table_params p = {
		.kind = pt->spec.kind,
		.key_size = l->key_size,
		.max_entries = pt->spec.max_entries,
		.name = pt->spec.name[0] ? pt->spec.name : NULL,
	};
	int rc = check_kind_layout(&pt->spec, l, err, err_size);

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
		return err_set(err, err_size, rc, "table %u: cannot create %s table: %s",
			       pt->spec.table_id, sl_table_kind_name(p.kind), strerror(-rc));
	return 0;
}

int
sl_pipeline_table_declare(struct sl_pipeline *pl, const struct sl_table_spec *ts, char *err,
			  size_t err_size)
{
	struct pl_table *pt;
	struct sl_key_layout l;
	int rc;

	if (ts->table_id >= SL_TABLES_MAX)
		return err_set(err, err_size, -EINVAL, "table id %u out of range 0..%u",
			       ts->table_id, SL_TABLES_MAX - 1);
	pt = &pl->tables[ts->table_id];
	if (pt->n_flows > 0)
		return err_set(err, err_size, -EBUSY, "table %u already holds %u flows",
			       ts->table_id, pt->n_flows);
	if ((unsigned)ts->kind >= SL_TABLE__KIND_MAX)
		return err_set(err, err_size, -EINVAL, "table %u: unknown kind %d", ts->table_id,
			       ts->kind);
	rc = sl_key_layout_init(&l, ts->fields, ts->n_fields);
	if (rc < 0)
		return err_set(err, err_size, rc, "table %u: match fields do not fit a key: %s",
			       ts->table_id, strerror(-rc));
	if (ts->n_fields > 0) {
		rc = check_kind_layout(ts, &l, err, err_size);
		if (rc < 0)
			return rc;
	} else if (ts->kind != SL_TABLE_TERNARY) {
		return err_set(err, err_size, -EINVAL, "table %u: a %s table needs fields=",
			       ts->table_id, sl_table_kind_name(ts->kind));
	}
	sl_table_destroy(pt->tbl);
	pt->tbl = NULL;
	pt->spec = *ts;
	pt->declared = true;
	pt->n_guards = 0;
	pt->layout = l;
	if (ts->n_fields > 0) {
		rc = table_instantiate(pt, &l, &pt->tbl, err, err_size);
		if (rc < 0)
			return rc;
	}
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
is_guard(const struct pl_table *pt, const struct sl_match_field *mf)
{
	for (unsigned g = 0; g < pt->n_guards; g++)
		if (sl_field_equal(&pt->guards[g].f, &mf->f))
			return true;
	return false;
}

static int
flow_rule(const struct pl_table *pt, const struct sl_flow *f, struct sl_rule *r)
{
	struct sl_match_field keyed[SL_KEY_FIELDS_MAX];
	unsigned n = 0;

	/* Guards are checked beside the table, not in its key. */
	for (unsigned i = 0; i < f->n_match; i++)
		if (!is_guard(pt, &f->match[i]))
			keyed[n++] = f->match[i];
	int rc = match_to_rule(&pt->layout, keyed, n, r);

	r->priority = f->priority;
	r->data = (void *)f;
	if (rc == 0 && pt->spec.kind == SL_TABLE_EXACT) {
		/*
		 * Exact tables hash the whole key: every field must be fully
		 * matched; the bits outside fields (padding, unused high bits)
		 * are zero in every extracted key, so they are matched too.
		 */
		uint8_t full[SL_FIELD_SIZE_MAX];
		for (unsigned i = 0; i < pt->layout.n_fields; i++) {
			const struct sl_field *fl = &pt->layout.fields[i];
			unsigned size = sl_field_size(fl);
			memset(full, 0xff, size);
			full[0] = (uint8_t)(0xff >> (size * 8 - sl_field_bits(fl)));
			if (memcmp(r->mask + pt->layout.offsets[i], full, size) != 0)
				return -EINVAL;
		}
		memset(r->mask, 0xff, pt->layout.key_size);
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
	return pt->spec.kind != SL_TABLE_TERNARY && f->priority == 0 &&
	       match_is_empty(f->match, f->n_match);
}

/*
 * Give a mask table a wider layout (a flow uses a field it did not match
 * yet): build a new table and move every flow into it.  Control path only.
 */
static int
table_relayout(struct pl_table *pt, const struct sl_key_layout *nl, char *err, size_t err_size)
{
	struct sl_table *nt = NULL;
	struct sl_key_layout old_layout = pt->layout;
	int rc = table_instantiate(pt, nl, &nt, err, err_size);

	if (rc < 0)
		return rc;
	pt->layout = *nl;
	for (unsigned i = 0; i < pt->n_flows; i++) {
		struct sl_rule r;
		if (is_miss_slot(pt, pt->flows[i]))
			continue;
		flow_rule(pt, pt->flows[i], &r);
		rc = sl_table_add(nt, &r);
		if (rc < 0) {
			pt->layout = old_layout;
			sl_table_destroy(nt);
			return err_set(err, err_size, rc, "table %u: re-layout failed: %s",
				       pt->spec.table_id, strerror(-rc));
		}
	}
	sl_table_destroy(pt->tbl);
	pt->tbl = nt;
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
	unsigned size = sl_field_size(&mf->f);

	if ((mf->f.id != SL_FIELD_ETH_TYPE && mf->f.id != SL_FIELD_IP_PROTO) ||
	    !sl_mask_is_full(mf->mask, size))
		return -EINVAL;
	for (unsigned g = 0; g < pt->n_guards; g++) {
		if (pt->guards[g].f.id == mf->f.id)
			return memcmp(pt->guards[g].value, mf->value, size) == 0 ? 0 : -EEXIST;
	}
	if (pt->n_flows > (pt->miss != NULL ? 1u : 0u))
		return -EEXIST; /* flows without this guard exist already */
	pt->guards[pt->n_guards++] = *mf;
	return 0;
}

/* Make sure table @pt exists and its layout covers every field of @m. */
static int
table_prepare(struct pl_table *pt, const struct sl_match *m, char *err, size_t err_size)
{
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
		if (used && sl_key_layout_find(&pt->layout, &m->fields[i].f) < 0) {
			bool prereq = m->fields[i].f.id == SL_FIELD_ETH_TYPE ||
				      m->fields[i].f.id == SL_FIELD_IP_PROTO;
			if (pt->declared && pt->spec.n_fields > 0 &&
			    !(prereq && pt->spec.kind == SL_TABLE_TERNARY)) {
				int g = pt->spec.kind != SL_TABLE_TERNARY
						? guard_accept(pt, &m->fields[i])
						: -EINVAL;
				if (g == 0)
					continue;
				sl_field_format(&m->fields[i].f, name, sizeof(name));
				if (g == -EEXIST)
					return err_set(err, err_size, -EINVAL,
						       "table %u: every flow must share the %s of "
						       "the first flow (the table matches only its "
						       "declared fields)",
						       pt->spec.table_id, name);
				return err_set(err, err_size, -EINVAL,
					       "table %u (%s) does not match on %s",
					       pt->spec.table_id, sl_table_kind_name(pt->spec.kind),
					       name);
			}
			grow = true;
		}
	}
	for (unsigned g = 0; g < pt->n_guards; g++) {
		const struct sl_match_field *mf = sl_match_get(m, &pt->guards[g].f);
		if (mf == NULL || memcmp(mf->value, pt->guards[g].value, SL_FIELD_SIZE_MAX) ||
		    memcmp(mf->mask, pt->guards[g].mask, SL_FIELD_SIZE_MAX)) {
			sl_field_format(&pt->guards[g].f, name, sizeof(name));
			return err_set(err, err_size, -EINVAL,
				       "table %u: every flow must share the %s of the first flow "
				       "(the table matches only its declared fields)",
				       pt->spec.table_id, name);
		}
	}
	if (pt->tbl != NULL && !grow)
		return 0;
	for (unsigned i = 0; i < pt->layout.n_fields; i++)
		fields[n++] = pt->layout.fields[i];
	for (unsigned i = 0; i < m->n_fields; i++)
		fields[n++] = m->fields[i].f;
	rc = sl_key_layout_init(&nl, fields, n);
	if (rc < 0)
		return err_set(err, err_size, rc,
			       "table %u: the union of match fields exceeds a %u-byte key",
			       pt->spec.table_id, SL_KEY_MAX);
	if (pt->tbl == NULL) {
		if (pt->spec.kind != SL_TABLE_TERNARY && nl.n_fields == 0)
			return 0; /* only a table-miss entry so far */
		rc = table_instantiate(pt, &nl, &pt->tbl, err, err_size);
		if (rc == 0)
			pt->layout = nl;
		return rc;
	}
	return table_relayout(pt, &nl, err, err_size);
}

static int
check_actions(const struct sl_action *a, unsigned n, char *err, size_t err_size)
{
	for (unsigned i = 0; i < n; i++) {
		switch (a[i].type) {
		case SL_ACT_OUTPUT: {
			uint32_t port = a[i].output.port;
			if (port == SL_PORT_TABLE || port == SL_PORT_ANY || port == 0)
				return err_set(err, err_size, -EINVAL,
					       "output to port 0x%x is not allowed in a flow", port);
			if (port == SL_PORT_NORMAL || port == SL_PORT_LOCAL)
				return err_set(err, err_size, -EOPNOTSUPP,
					       "output:%s is not supported",
					       port == SL_PORT_NORMAL ? "NORMAL" : "LOCAL");
			break;
		}
		case SL_ACT_GROUP:
			/* TODO(#3): groups. */
			return err_set(err, err_size, -EOPNOTSUPP,
				       "group actions are not supported yet (group %u)",
				       a[i].group_id);
		case SL_ACT_SET_FIELD:
			if (a[i].set_field.f.id != SL_FIELD_RAW &&
			    !sl_field_writable(a[i].set_field.f.id))
				return err_set(err, err_size, -EINVAL, "set_field: %s is read-only",
					       sl_field_name(a[i].set_field.f.id));
			break;
		case SL_ACT_PUSH_VLAN:
			if (a[i].ethertype != 0x8100 && a[i].ethertype != 0x88a8)
				return err_set(err, err_size, -EINVAL,
					       "push_vlan: ethertype 0x%04x is not 0x8100 or 0x88a8",
					       a[i].ethertype);
			break;
		default:
			if (a[i].type >= SL_ACT__MAX)
				return err_set(err, err_size, -EINVAL, "unknown action type %u",
					       a[i].type);
			break;
		}
	}
	return 0;
}

static struct sl_flow *
flow_build(const struct sl_flow_spec *fs)
{
	const struct sl_instructions *in = &fs->insns;
	unsigned n_act = in->n_apply + in->n_write;
	struct sl_flow *f = calloc(1, sizeof(*f) + fs->match.n_fields * sizeof(f->match[0]));

	if (f == NULL)
		return NULL;
	if (n_act > 0) {
		f->actions = malloc(n_act * sizeof(*f->actions));
		if (f->actions == NULL) {
			free(f);
			return NULL;
		}
		memcpy(f->actions, in->apply, in->n_apply * sizeof(*f->actions));
		memcpy(f->actions + in->n_apply, in->write, in->n_write * sizeof(*f->actions));
	}
	f->table_id = fs->table_id;
	f->n_apply = in->n_apply;
	f->n_write = in->n_write;
	f->insn_flags = (in->has_apply || in->n_apply ? SL_INSN_APPLY : 0) |
			(in->has_write || in->n_write ? SL_INSN_WRITE : 0) |
			(in->clear ? SL_INSN_CLEAR : 0) | (in->has_metadata ? SL_INSN_METADATA : 0);
	f->goto_table = in->goto_table;
	f->priority = fs->priority;
	f->idle_timeout = fs->idle_timeout;
	f->hard_timeout = fs->hard_timeout;
	f->flags = fs->flags;
	f->cookie = fs->cookie;
	f->metadata = in->metadata & in->metadata_mask;
	f->metadata_mask = in->metadata_mask;
	f->created_tsc = sl_pipeline_tsc();
	f->n_match = fs->match.n_fields;
	memcpy(f->match, fs->match.fields, fs->match.n_fields * sizeof(f->match[0]));
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
	fs->flags = f->flags;
	fs->cookie = f->cookie;
	fs->match.n_fields = f->n_match;
	memcpy(fs->match.fields, f->match, f->n_match * sizeof(f->match[0]));
	fs->insns.n_apply = f->n_apply;
	fs->insns.n_write = f->n_write;
	memcpy(fs->insns.apply, f->actions, f->n_apply * sizeof(*f->actions));
	memcpy(fs->insns.write, f->actions + f->n_apply, f->n_write * sizeof(*f->actions));
	fs->insns.has_apply = f->insn_flags & SL_INSN_APPLY;
	fs->insns.has_write = f->insn_flags & SL_INSN_WRITE;
	fs->insns.clear = f->insn_flags & SL_INSN_CLEAR;
	fs->insns.has_metadata = f->insn_flags & SL_INSN_METADATA;
	fs->insns.metadata = f->metadata;
	fs->insns.metadata_mask = f->metadata_mask;
	fs->insns.goto_table = f->goto_table;
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

/* Replace @old's instructions by @nf's (OpenFlow add of an identical flow). */
static void
flow_replace(struct pl_table *pt, struct sl_flow *old, struct sl_flow *nf)
{
	if (!(nf->flags & SL_FF_RESET_COUNTS)) {
		nf->n_packets = old->n_packets;
		nf->n_bytes = old->n_bytes;
		nf->last_hit_tsc = old->last_hit_tsc;
	}
	nf->slot = old->slot;
	pt->flows[old->slot] = nf;
	if (pt->miss == old)
		pt->miss = nf;
	flow_free(old);
}

int
sl_pipeline_flow_add(struct sl_pipeline *pl, const struct sl_flow_spec *fs, char *err,
		     size_t err_size)
{
	const struct sl_instructions *in = &fs->insns;
	struct pl_table *pt;
	struct sl_flow *f;
	struct sl_rule r;
	int rc;

	if (fs->table_id >= SL_TABLES_MAX)
		return err_set(err, err_size, -EINVAL, "table id %u out of range 0..%u",
			       fs->table_id, SL_TABLES_MAX - 1);
	if (in->goto_table >= 0 && (in->goto_table <= fs->table_id ||
				    in->goto_table >= SL_TABLES_MAX))
		return err_set(err, err_size, -EINVAL,
			       "goto_table:%d from table %u: must go forward, below %u",
			       in->goto_table, fs->table_id, SL_TABLES_MAX);
	if (in->n_apply > SL_ACTIONS_MAX || in->n_write > SL_ACTIONS_MAX)
		return err_set(err, err_size, -EINVAL, "too many actions");
	rc = check_actions(in->apply, in->n_apply, err, err_size);
	if (rc == 0)
		rc = check_actions(in->write, in->n_write, err, err_size);
	if (rc == 0)
		rc = sl_match_check_prereqs(&fs->match, err, err_size);
	if (rc < 0)
		return rc;

	pt = &pl->tables[fs->table_id];
	f = flow_build(fs);
	if (f == NULL)
		return err_set(err, err_size, -ENOMEM, "out of memory");
	if (is_miss_slot(pt, f)) {
		if (pt->miss != NULL) {
			flow_replace(pt, pt->miss, f);
		} else if ((rc = flow_list_push(pt, f)) == 0) {
			pt->miss = f;
		} else {
			flow_free(f);
			return err_set(err, err_size, rc, "out of memory");
		}
		table_changed(pl, pt);
		update_last_table(pl);
		return 0;
	}
	rc = table_prepare(pt, &fs->match, err, err_size);
	if (rc < 0)
		goto free_flow;
	rc = flow_rule(pt, f, &r);
	if (rc < 0) {
		err_set(err, err_size, rc,
			"table %u (exact) needs every one of its fields matched exactly",
			fs->table_id);
		goto free_flow;
	}
	struct sl_flow *old = sl_table_find(pt->tbl, &r);
	if (old != NULL) {
		void *data;
		/* Same match and priority: swap the entry (counters kept by flow_replace). */
		sl_table_del(pt->tbl, &r, &data);
		rc = sl_table_add(pt->tbl, &r);
		SL_VERIFY(rc == 0);
		flow_replace(pt, old, f);
		table_changed(pl, pt);
		return 0;
	}
	rc = sl_table_add(pt->tbl, &r);
	if (rc < 0) {
		const char *why = rc == -EEXIST ? "an entry with the same key exists"
				  : rc == -ENOSPC ? "table full"
				  : rc == -EINVAL ? "the match does not fit the table kind"
						  : strerror(-rc);
		err_set(err, err_size, rc, "table %u (%s): cannot add flow: %s", fs->table_id,
			sl_table_kind_name(pt->spec.kind), why);
		goto free_flow;
	}
	rc = flow_list_push(pt, f);
	if (rc < 0) {
		sl_table_del(pt->tbl, &r, NULL);
		err_set(err, err_size, rc, "out of memory");
		goto free_flow;
	}
	table_changed(pl, pt);
	update_last_table(pl);
	return 0;

free_flow:
	flow_free(f);
	return rc;
}

/* True when flow @f's match is at least as specific as @m (OpenFlow non-strict). */
static bool
flow_covered_by(const struct sl_flow *f, const struct sl_match *m)
{
	for (unsigned i = 0; i < m->n_fields; i++) {
		const struct sl_match_field *want = &m->fields[i];
		const struct sl_match_field *have = NULL;

		for (unsigned j = 0; j < f->n_match; j++)
			if (sl_field_equal(&f->match[j].f, &want->f))
				have = &f->match[j];
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
flow_same_match(const struct sl_flow *f, const struct sl_match *m)
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
		for (unsigned j = 0; j < f->n_match; j++)
			if (sl_field_equal(&f->match[j].f, &want->f))
				have = &f->match[j];
		if (have == NULL || memcmp(have->mask, want->mask, SL_FIELD_SIZE_MAX) ||
		    memcmp(have->value, want->value, SL_FIELD_SIZE_MAX))
			return false;
	}
	unsigned n_have = 0;
	for (unsigned j = 0; j < f->n_match; j++)
		for (unsigned b = 0; b < SL_FIELD_SIZE_MAX; b++)
			if (f->match[j].mask[b]) {
				n_have++;
				break;
			}
	return n_have == n_used;
}

static void
flow_remove(struct sl_pipeline *pl, struct pl_table *pt, struct sl_flow *f)
{
	if (pt->miss == f) {
		pt->miss = NULL;
	} else {
		struct sl_rule r;
		void *data = NULL;
		flow_rule(pt, f, &r);
		int rc = sl_table_del(pt->tbl, &r, &data);
		SL_VERIFY(rc == 0 && data == f);
	}
	flow_list_remove(pt, f);
	flow_free(f);
	table_changed(pl, pt);
	update_last_table(pl);
}

unsigned
sl_pipeline_flow_del(struct sl_pipeline *pl, const struct sl_flow_spec *fs, bool strict)
{
	unsigned first = fs->table_id == 255 ? 0 : fs->table_id;
	unsigned last = fs->table_id == 255 ? SL_TABLES_MAX - 1 : fs->table_id;
	unsigned n_deleted = 0;

	if (first >= SL_TABLES_MAX)
		return 0;
	for (unsigned t = first; t <= last; t++) {
		struct pl_table *pt = &pl->tables[t];
		for (unsigned i = 0; i < pt->n_flows;) {
			struct sl_flow *f = pt->flows[i];
			bool hit = (f->cookie & fs->cookie_mask) == (fs->cookie & fs->cookie_mask);

			if (strict)
				hit = hit && f->priority == fs->priority &&
				      flow_same_match(f, &fs->match);
			else
				hit = hit && flow_covered_by(f, &fs->match);
			if (hit) {
				flow_remove(pl, pt, f); /* moves the last flow into slot i */
				n_deleted++;
			} else {
				i++;
			}
		}
	}
	return n_deleted;
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
	return table_id < SL_TABLES_MAX ? pl->tables[table_id].tbl : NULL;
}

const struct sl_key_layout *
sl_pipeline_table_layout(const struct sl_pipeline *pl, unsigned table_id)
{
	return table_id < SL_TABLES_MAX ? &pl->tables[table_id].layout : NULL;
}

int
sl_pipeline_commit(struct sl_pipeline *pl)
{
	int first = 0;

	for (unsigned t = 0; t < SL_TABLES_MAX; t++) {
		int rc = sl_table_commit(pl->tables[t].tbl);
		if (rc < 0 && first == 0)
			first = rc;
	}
	return first;
}

void
sl_pipeline_cache_enable(struct sl_pipeline *pl, bool on)
{
	pl->dcache = on;
	for (unsigned t = 0; t < SL_TABLES_MAX; t++)
		table_changed(pl, &pl->tables[t]);
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
