/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl: the OpenFlow writes: add-flow, add-flows, mod-flows, del-flows,
 * add/mod/del groups and meters, set-fwd-mode; messages go out as one batch
 * closed by a barrier (control path).
 */
#include "sluicectl.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * add-flow, add-flows, mod-flows, del-flows: flow_mods sent as one batch
 * closed by a barrier; every OFPT_ERROR is matched to its message by xid.
 */

int
batch_add_origin(struct batch *b, const char *file, unsigned line)
{
	struct origin *from = sl_vec_push(&b->origins);

	if (from == NULL)
		return -ENOMEM;
	if (file)
		snprintf(from->what, sizeof(from->what), "%s:%u",
			 b->display_file ? b->display_file : file, line);
	else
		snprintf(from->what, sizeof(from->what), "%s", b->label ? b->label : "request");
	return 0;
}

void
flow_mod_init(struct sl_ofp_flow_mod *fm, uint8_t command)
{
	memset(fm, 0, offsetof(struct sl_ofp_flow_mod, spec));
	fm->command = command;
	fm->buffer_id = SL_OFP_NO_BUFFER;
	fm->out_port = SL_PORT_ANY;
	fm->out_group = SL_GROUP_ID_ANY;
}

/*
 * The low_latency keyword is no flow_mod flag: the flow_mod goes without it and an
 * SL_OFPX_LL_SET selecting the same flows (strict for add-flow) follows in the batch.
 */
int
ll_set_append_cmd(struct batch *b, uint8_t command, const struct sl_flow_spec *fs, bool strict,
		  const char *file, unsigned line)
{
	static struct sl_ofp_ll_set ls;
	int rc;

	memset(&ls, 0, sizeof(ls));
	ls.table_id = fs->table_id;
	ls.command = command;
	ls.flags = strict ? SL_OFPX_LL_STRICT : 0;
	ls.priority = fs->priority;
	ls.cookie = fs->cookie;
	ls.cookie_mask = fs->cookie_mask;
	ls.match = fs->match;
	rc = sl_ofp_ll_set_encode(&b->msgs, 0, &ls);
	return rc == 0 ? batch_add_origin(b, file, line) : rc;
}

static int
ll_set_append(struct batch *b, const struct sl_flow_spec *fs, bool strict, const char *file,
	      unsigned line)
{
	return ll_set_append_cmd(b, SL_OFPX_LL_SET_ON, fs, strict, file, line);
}

/* Loader callbacks: encode each item with xid 0 (assigned once connected). */
static int
on_table_decl(void *arg, const struct sl_table_spec *ts, struct sl_parse_error *err)
{
	struct batch *b = arg;

	if (ts->table_id < SL_TABLES_MAX && b->declared_at[ts->table_id] != 0) {
		snprintf(err->msg, sizeof(err->msg), "table %u is already declared (line %u)",
			 ts->table_id, b->declared_at[ts->table_id]);
		return -EEXIST;
	}
	if (ts->table_id < SL_TABLES_MAX)
		b->declared_at[ts->table_id] = err->line;
	int rc = ts->kind == SL_TABLE_STATE ? sl_ofp_state_table_encode(&b->msgs, 0, ts) /* #9 */
					    : sl_ofp_table_declare_encode(&b->msgs, 0, ts);

	if (rc == -EINVAL) {
		snprintf(err->msg, sizeof(err->msg),
			 "this table declaration cannot be sent over OpenFlow");
		return rc;
	}
	if (rc == 0)
		rc = batch_add_origin(b, err->file, err->line);
	return rc;
}

/* A group line: a group_mod ADD in the batch. */
static int
on_group(void *arg, const struct sl_group_spec *gs, struct sl_parse_error *err)
{
	static struct sl_ofp_group_mod gm;
	struct batch *b = arg;
	int rc;

	gm.command = SL_OFPGC_ADD;
	gm.spec = *gs;
	rc = sl_ofp_group_mod_encode(&b->msgs, 0, &gm);
	if (rc == -EMSGSIZE) {
		snprintf(err->msg, sizeof(err->msg), "group too large for one OpenFlow message");
		return rc;
	}
	if (rc == 0)
		rc = batch_add_origin(b, err->file, err->line);
	return rc;
}

/* A meter line: a meter_mod ADD in the batch. */
static int
on_meter(void *arg, const struct sl_meter_spec *ms, struct sl_parse_error *err)
{
	struct sl_ofp_meter_mod mm = {.command = SL_OFPMC_ADD, .spec = *ms};
	struct batch *b = arg;
	int rc;

	rc = sl_ofp_meter_mod_encode(&b->msgs, 0, &mm);
	if (rc == 0)
		rc = batch_add_origin(b, err->file, err->line);
	return rc;
}

/* A state line: an SL_OFPX_STATE_SET in the batch. */
static int
on_state(void *arg, uint8_t table_id, const struct sl_match *key, const struct sl_state_set *set,
	 struct sl_parse_error *err)
{
	static struct sl_ofp_state_mod m;
	struct batch *b = arg;
	int rc;

	memset(&m, 0, sizeof(m));
	m.table_id = table_id;
	m.key = *key;
	m.set = *set;
	rc = sl_ofp_state_mod_encode(&b->msgs, 0, SL_OFPX_STATE_SET, &m);
	if (rc == 0)
		rc = batch_add_origin(b, err->file, err->line);
	return rc;
}

/* A "fwd-mode=MODES" line: an SL_OFPX_SET_FWD_MODE message in the batch. */
static int
on_directive(void *arg, const char *name, const char *value, struct sl_parse_error *err)
{
	struct batch *b = arg;
	struct sl_fwd_params fp;
	int rc;

	if (strcmp(name, "fwd-mode") != 0 ||
	    sl_fwd_params_parse(value, &fp, err->msg, sizeof(err->msg)) < 0)
		return -EINVAL;
	rc = sl_ofp_fwd_mode_encode(&b->msgs, 0, SL_OFPX_SET_FWD_MODE, &fp);
	if (rc == 0)
		rc = batch_add_origin(b, err->file, err->line);
	return rc;
}

int
on_flow(void *arg, const struct sl_flow_spec *fs, struct sl_parse_error *err)
{
	static struct sl_ofp_flow_mod fm;
	struct batch *b = arg;
	int rc;

	flow_mod_init(&fm, SL_OFPFC_ADD);
	fm.spec = *fs;
	/* low_latency is no flow_mod flag: an SL_OFPX_LL_SET follows in the same batch. */
	fm.spec.flags &= (uint16_t)~SL_FF_LOW_LATENCY;
	rc = sl_ofp_flow_mod_encode(&b->msgs, 0, &fm);
	if (rc == -EMSGSIZE) {
		snprintf(err->msg, sizeof(err->msg), "flow too large for one OpenFlow message");
		return rc;
	}
	if (rc == 0)
		rc = batch_add_origin(b, err->file, err->line);
	if (rc == 0 && (fs->flags & SL_FF_LOW_LATENCY))
		rc = ll_set_append(b, fs, true, err->file, err->line);
	return rc;
}

/* Give the batch's messages consecutive xids of connection @c. */
static void
assign_xids(struct batch *b, struct sl_ctl_of *c)
{
	size_t ofs = 0;

	for (size_t i = 0; i < b->origins.n; i++) {
		uint8_t *m = b->msgs.data + ofs;
		uint32_t xid = sl_ctl_of_next_xid(c);

		if (i == 0)
			b->first_xid = xid;
		m[4] = (uint8_t)(xid >> 24);
		m[5] = (uint8_t)(xid >> 16);
		m[6] = (uint8_t)(xid >> 8);
		m[7] = (uint8_t)xid;
		ofs += (size_t)m[2] << 8 | m[3];
	}
}

static void
on_refused(void *arg, uint32_t xid, const struct sl_ofp_error *e, const uint8_t *data,
	   size_t data_len)
{
	struct batch *b = arg;
	size_t idx = (size_t)(xid - b->first_xid);
	char name[128];

	(void)data;
	(void)data_len;
	b->n_refused++;
	sl_ctl_of_error_format(e, name, sizeof(name));
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		if (idx < b->origins.n)
			sl_ctl_jw_string(&jw, "origin", b->origins.v[idx].what);
		sl_ctl_jw_u64(&jw, "xid", xid);
		sl_ctl_jw_string(&jw, "error", sl_ofp_error_name(e));
		sl_ctl_jw_u64(&jw, "type", e->type);
		sl_ctl_jw_u64(&jw, "code", e->code);
		sl_ctl_jw_object_end(&jw);
	}
	if (idx < b->origins.n)
		errmsg("%s: the switch refused it: %s", b->origins.v[idx].what, name);
	else
		errmsg("the switch refused a message (xid %" PRIu32 "): %s", xid, name);
}

/*
 * Send the batch and the barrier over @c, report refusals; returns the exit
 * code.  With --json it writes "messages" and "errors" into the open object.
 */
int
batch_send(struct batch *b, struct sl_ctl_of *c)
{
	char err[ERR_MAX] = "";
	unsigned n_err = 0;
	int rc;

	assign_xids(b, c);
	if (o.json) {
		sl_ctl_jw_u64(&jw, "messages", b->origins.n);
		sl_ctl_jw_array_begin(&jw, "errors");
	}
	rc = sl_ctl_of_batch(c, b->msgs.data, b->msgs.len, on_refused, b, &n_err, err, sizeof(err));
	if (o.json)
		sl_ctl_jw_array_end(&jw);
	if (rc < 0)
		return of_failed("sending flows", rc, err);
	return n_err ? EXIT_REFUSED : 0;
}

/* Connect, send the batch and the barrier, report refusals; returns the exit code. */
int
run_batch(struct batch *b)
{
	struct sl_ctl_of *c;
	int ex;

	if ((ex = of_connect(&c)) != 0)
		return ex;
	if (o.json)
		sl_ctl_jw_object_begin(&jw, NULL);
	ex = batch_send(b, c);
	if (o.json)
		sl_ctl_jw_object_end(&jw);
	sl_ctl_of_close(c);
	return ex;
}

void
batch_free(struct batch *b)
{
	sl_ofp_buf_free(&b->msgs);
	sl_vec_free(&b->origins);
}

int
batch_run_one(struct batch *b, int rc)
{
	if (rc == 0)
		rc = batch_add_origin(b, NULL, 0);
	if (rc == 0)
		rc = run_batch(b);
	batch_free(b);
	return rc;
}

/* add-flow and mod-flows: one flow_mod (and its LL_SET), then a barrier. */
static int
flow_mod_cmd(const char *cmd, const char *text, uint8_t command)
{
	static struct sl_ofp_flow_mod fm;
	struct sl_parse_error pe;
	struct batch b = {.label = cmd};
	char buf[ERR_MAX];
	int rc;

	flow_mod_init(&fm, command);
	if (sl_flow_parse_names(text, &in_names, &fm.spec, &pe) < 0) {
		if (portmap_error())
			return portmap_error();
		sl_parse_error_format(&pe, buf, sizeof(buf));
		return usage_error("%s: %s", cmd, buf);
	}
	sl_ofp_buf_init(&b.msgs);
	bool ll = fm.spec.flags & SL_FF_LOW_LATENCY;
	fm.spec.flags &= (uint16_t)~SL_FF_LOW_LATENCY;
	rc = sl_ofp_flow_mod_encode(&b.msgs, 0, &fm);
	if (rc == 0)
		rc = batch_add_origin(&b, NULL, 0);
	if (rc == 0 && ll)
		rc = ll_set_append(&b, &fm.spec, command != SL_OFPFC_MODIFY, NULL, 0);
	if (rc < 0) {
		batch_free(&b);
		if (rc == -EMSGSIZE)
			return usage_error("%s: flow too large for one OpenFlow message", cmd);
		errmsg("out of memory");
		return EXIT_REFUSED;
	}
	rc = run_batch(&b);
	batch_free(&b);
	return rc;
}

int
cmd_add_flow(const struct cmd_call *a)
{
	return flow_mod_cmd(a->name, a->text, SL_OFPFC_ADD);
}

int
cmd_mod_flows(const struct cmd_call *a)
{
	return flow_mod_cmd(a->name, a->text, o.strict ? SL_OFPFC_MODIFY_STRICT : SL_OFPFC_MODIFY);
}

/* set-fwd-mode MODES: the forwarding modes (src/fwd text form) in one experimenter message. */
int
cmd_set_fwd_mode(const struct cmd_call *a)
{
	const char *text = a->text;
	struct sl_fwd_params fp;
	struct batch b = {.label = "set-fwd-mode"};
	char buf[ERR_MAX];
	int rc;

	if (sl_fwd_params_parse(text, &fp, buf, sizeof(buf)) < 0)
		return usage_error("set-fwd-mode: %s", buf);
	sl_ofp_buf_init(&b.msgs);
	rc = batch_run_one(&b, sl_ofp_fwd_mode_encode(&b.msgs, 0, SL_OFPX_SET_FWD_MODE, &fp));
	if (rc < 0) {
		errmsg("set-fwd-mode: cannot encode the message");
		return EXIT_REFUSED;
	}
	return rc;
}

/*
 * add-group GROUP, mod-group GROUP (ovs-ofctl add-groups syntax) and
 * del-groups [group_id=N]: one group_mod.
 */
int
cmd_group_mod(const struct cmd_call *a)
{
	const char *cmd = a->name, *text = a->text ? a->text : "";
	static struct sl_ofp_group_mod gm;
	struct sl_parse_error pe;
	struct batch b = {.label = cmd};
	char buf[ERR_MAX];
	int rc;

	memset(&gm, 0, sizeof(gm));
	if (strcmp(cmd, "del-groups") == 0) {
		unsigned long long id = SL_GROUP_ID_ALL;
		char *end;
		gm.command = SL_OFPGC_DELETE;
		if (*text != '\0') {
			if (strncmp(text, "group_id=", 9) != 0 || text[9] == '\0' ||
			    (id = strtoull(text + 9, &end, 0), *end != '\0') ||
			    id > SL_GROUP_ID_MAX)
				return usage_error(
					"del-groups: bad group '%s' (expected group_id=N, "
					"N 0..0xffffff00)",
					text);
		}
		gm.spec.group_id = (uint32_t)id;
	} else {
		gm.command = strcmp(cmd, "add-group") == 0 ? SL_OFPGC_ADD : SL_OFPGC_MODIFY;
		if (sl_group_parse_names(text, &in_names, &gm.spec, &pe) < 0) {
			if (portmap_error())
				return portmap_error();
			sl_parse_error_format(&pe, buf, sizeof(buf));
			return usage_error("%s: %s", cmd, buf);
		}
	}
	sl_ofp_buf_init(&b.msgs);
	rc = batch_run_one(&b, sl_ofp_group_mod_encode(&b.msgs, 0, &gm));
	if (rc == -EMSGSIZE)
		return usage_error("%s: group too large for one OpenFlow message", cmd);
	if (rc < 0) {
		errmsg("out of memory");
		return EXIT_REFUSED;
	}
	return rc;
}

/*
 * add-meter METER, mod-meter METER (ovs-ofctl add-meter syntax) and
 * del-meters [meter=N]: one meter_mod.
 */
int
cmd_meter_mod(const struct cmd_call *a)
{
	const char *cmd = a->name, *text = a->text ? a->text : "";
	struct sl_ofp_meter_mod mm;
	struct sl_parse_error pe;
	struct batch b = {.label = cmd};
	char buf[ERR_MAX];
	int rc;

	memset(&mm, 0, sizeof(mm));
	if (strcmp(cmd, "del-meters") == 0) {
		unsigned long long id = SL_METER_ID_ALL;
		char *end;
		mm.command = SL_OFPMC_DELETE;
		if (*text != '\0' && strcmp(text, "meter=all") != 0) {
			if (strncmp(text, "meter=", 6) != 0 || text[6] == '\0' ||
			    (id = strtoull(text + 6, &end, 0), *end != '\0') || id == 0 ||
			    id > SL_METER_ID_MAX)
				return usage_error("del-meters: bad meter '%s' (expected meter=N, "
						   "N 1..0xffff0000, or meter=all)",
						   text);
		}
		mm.spec.meter_id = (uint32_t)id;
	} else {
		mm.command = strcmp(cmd, "add-meter") == 0 ? SL_OFPMC_ADD : SL_OFPMC_MODIFY;
		if (sl_meter_parse(text, &mm.spec, &pe) < 0) {
			sl_parse_error_format(&pe, buf, sizeof(buf));
			return usage_error("%s: %s", cmd, buf);
		}
	}
	sl_ofp_buf_init(&b.msgs);
	rc = batch_run_one(&b, sl_ofp_meter_mod_encode(&b.msgs, 0, &mm));
	if (rc < 0) {
		errmsg("out of memory");
		return EXIT_REFUSED;
	}
	return rc;
}

/* A "queue=" line: not OpenFlow (pipeline.h "Queues"); set over telemetry once the batch ran. */
static int
on_queue(void *arg, const struct sl_queue_spec *qs, struct sl_parse_error *err)
{
	struct batch *b = arg;
	struct sl_queue_spec *q = sl_vec_push(&b->queues);

	(void)err;
	if (q == NULL)
		return -ENOMEM;
	*q = *qs;
	return 0;
}

static void
print_nothing(const struct sl_ctl_json *v)
{
	(void)v;
}

int
cmd_add_flows(const struct cmd_call *a)
{
	const char *path = a->argv[0];
	struct sl_parse_error pe;
	struct batch b = {0};
	const char *file = path;
	char buf[ERR_MAX];
	int rc;

	if (strcmp(path, "-") == 0) {
		file = "/dev/stdin";
		b.display_file = "-";
	}
	sl_ofp_buf_init(&b.msgs);
	/* The whole file is checked and encoded before anything is sent. */
	const struct sl_flowfile_callbacks cb = {on_table_decl, on_flow,  on_directive, on_group,
						 on_meter,      on_state, on_queue,     &in_names};
	rc = sl_flowfile_load_cb(file, &cb, &b, &pe);
	if (rc < 0 && portmap_error()) {
		batch_free(&b);
		return portmap_error();
	}
	if (rc < 0) {
		if (b.display_file)
			snprintf(pe.file, sizeof(pe.file), "%s", b.display_file);
		sl_parse_error_format(&pe, buf, sizeof(buf));
		batch_free(&b);
		sl_vec_free(&b.queues);
		if (rc == -ENOMEM) {
			errmsg("%s", buf);
			return EXIT_REFUSED;
		}
		return usage_error("add-flows: %s", buf);
	}
	rc = run_batch(&b);
	for (size_t i = 0; rc == 0 && i < b.queues.n; i++) {
		sl_queue_format(&b.queues.v[i], buf, sizeof(buf));
		rc = tel_simple("/sluice/queue/set", buf, print_nothing);
	}
	batch_free(&b);
	sl_vec_free(&b.queues);
	return rc;
}

int
cmd_del_flows(const struct cmd_call *a)
{
	const char *filter_text = a->text ? a->text : "";
	static struct sl_ofp_flow_mod fm;
	struct batch b = {.label = "del-flows"};
	int rc;

	flow_mod_init(&fm, o.strict ? SL_OFPFC_DELETE_STRICT : SL_OFPFC_DELETE);
	if ((rc = parse_filter("del-flows", filter_text, &fm.spec, &fm.out_port, &fm.out_group)))
		return rc;
	sl_ofp_buf_init(&b.msgs);
	rc = batch_run_one(&b, sl_ofp_flow_mod_encode(&b.msgs, 0, &fm));
	return rc < 0 ? usage_error("del-flows: filter too large for one OpenFlow message") : rc;
}
