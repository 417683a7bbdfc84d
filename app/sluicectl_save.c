/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl: the whole flow table at once: save, diff-flows, replace-flows (control path).
 */
#include "sluicectl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * save FILE: what the switch holds, as a flow file that `sluice --restore`
 * and `sluicectl add-flows` load: declared tables (read over telemetry),
 * forwarding modes, meters, groups, then flows with their cookies, timeouts
 * and flags (low_latency included), sorted by table and priority, then the
 * state tables' entries as "state" lines.  Written to FILE.tmp and renamed:
 * a failed save leaves FILE as it was.
 */

/* Flows as flow-file lines, sorted for a stable file. */
static int
save_flow_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
		struct sl_ofp_error *e)
{
	static struct sl_flow_spec fs;
	struct sl_ofp_flow_stats st;
	char text[4096], line[4200];

	if (sl_ofp_flow_stats_entry_decode(body, len, ofs, &fs, &st, e) < 0)
		return -1;
	fs.cookie_mask = 0;
	sl_flow_format(&fs, text, sizeof(text));
	/* Table first, then priority high to low: the key sorts as text. */
	snprintf(line, sizeof(line), "%03u %05u %s", fs.table_id, 65535u - fs.priority, text);
	return flow_line_keep(m->user, 0, line) < 0 ? -ENOMEM : 0;
}

static int
save_line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct flow_line *)a)->text, ((const struct flow_line *)b)->text);
}

/* Declared tables, from telemetry's /sluice/tables and /sluice/table,N; state tables' ids too. */
static int
save_tables(FILE *f, uint8_t *state_ids, unsigned *n_state)
{
	struct sl_ctl_json_doc *doc = NULL, *one = NULL;
	const struct sl_ctl_json *v, *t;
	struct sl_ctl_tel *tel;
	int ex;

	if ((ex = tel_connect(&tel)) != 0)
		return ex;
	if ((ex = tel_get(tel, "/sluice/tables", NULL, &doc, &v)) == 0) {
		for (const struct sl_ctl_json *m = v->child; m != NULL && ex == 0; m = m->next) {
			if ((ex = tel_get(tel, "/sluice/table", m->key, &one, &t)) != 0)
				break;
			const struct sl_ctl_json *spec = sl_ctl_json_get(t, "spec");
			if (sl_ctl_json_get_u64(t, "declared", 0) && spec != NULL &&
			    spec->type == SL_CTL_JSON_STRING) {
				fprintf(f, "%s\n", spec->str);
				if (strstr(spec->str, ",kind=state") != NULL)
					state_ids[(*n_state)++] =
						(uint8_t)strtoul(m->key, NULL, 10);
			}
			sl_ctl_json_free(one);
			one = NULL;
		}
	}
	sl_ctl_json_free(doc);
	sl_ctl_tel_close(tel);
	return ex;
}

/* Queues, from telemetry's /sluice/queues, as "queue=" lines. */
static int
save_queues(FILE *f)
{
	struct sl_ctl_json_doc *doc = NULL;
	const struct sl_ctl_json *v;
	struct sl_ctl_tel *tel;
	char text[256];
	int ex;

	if ((ex = tel_connect(&tel)) != 0)
		return ex;
	if ((ex = tel_get(tel, "/sluice/queues", NULL, &doc, &v)) == 0) {
		for (const struct sl_ctl_json *q = v->child; q != NULL; q = q->next) {
			struct sl_queue_spec qs = {
				.port_no = (uint32_t)sl_ctl_json_get_u64(q, "port", 0),
				.queue_id = (uint32_t)sl_ctl_json_get_u64(q, "queue", 0),
				.max_rate = sl_ctl_json_get_u64(q, "max_rate_kbps", 0),
				.burst = sl_ctl_json_get_u64(q, "burst_kbit", 0)};
			sl_queue_format(&qs, text, sizeof(text));
			fprintf(f, "%s\n", text);
		}
		sl_ctl_json_free(doc);
	}
	sl_ctl_tel_close(tel);
	return ex;
}

static int
group_row_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct group_row *)a)->desc.group_id;
	uint32_t y = ((const struct group_row *)b)->desc.group_id;

	return x < y ? -1 : x > y;
}

/* Is group @id, when in @gl (sorted by id), written already? */
static bool
group_written(const struct group_list *gl, const bool *written, uint32_t id)
{
	struct group_row key = {.desc.group_id = id};
	const struct group_row *r = bsearch(&key, gl->v, gl->n, sizeof(*gl->v), group_row_cmp);

	return r == NULL || written[r - gl->v];
}

/* Are the groups @g chains to (group actions) or watches written already? */
static bool
group_ready(const struct group_list *gl, const bool *written, const struct sl_group_spec *g)
{
	for (unsigned b = 0; b < g->n_buckets; b++) {
		const struct sl_bucket_spec *bs = &g->buckets[b];
		if (bs->watch_group != SL_GROUP_ID_ANY &&
		    !group_written(gl, written, bs->watch_group))
			return false;
		for (unsigned k = 0; k < bs->n_actions; k++)
			if (bs->actions[k].type == SL_ACT_GROUP &&
			    !group_written(gl, written, bs->actions[k].group_id))
				return false;
	}
	return true;
}

/*
 * The groups of @gl as add-groups lines, each after the groups it chains to
 * or watches: a restore adds them in file order, and an ADD naming a group
 * not there yet is refused.  Chains are at most 8 deep, so at most 8 passes.
 */
static void
groups_save(FILE *f, struct group_list *gl)
{
	bool *written = calloc(gl->n ? gl->n : 1, sizeof(*written));
	size_t left = gl->n, before;

	if (gl->n > 0) /* qsort must not get a null array, even empty */
		qsort(gl->v, gl->n, sizeof(*gl->v), group_row_cmp);
	do {
		before = left;
		for (size_t i = 0; i < gl->n; i++) {
			if (written != NULL &&
			    (written[i] || !group_ready(gl, written, &gl->v[i].desc)))
				continue;
			print_group_line(f, &gl->v[i].desc, NULL);
			if (written != NULL)
				written[i] = true;
			left--;
		}
	} while (left > 0 && left < before);
	/* Out of memory, or a loop no switch accepts: the rest in id order. */
	for (size_t i = 0; written != NULL && left > 0 && i < gl->n; i++)
		if (!written[i])
			print_group_line(f, &gl->v[i].desc, NULL);
	free(written);
}

int
cmd_save(struct sl_ctl_of *c, const struct cmd_call *a)
{
	const char *path = a->argv[0];
	uint8_t state_ids[SL_TABLES_MAX];
	unsigned n_state = 0;
	static struct sl_ofp_mp_request req;
	struct flow_lines lines = {0};
	struct meter_list ml = {0};
	struct group_list gl = {0};
	struct mp_ctx m = {.err = NULL};
	struct sl_fwd_params none = {0}, fp = {0};
	struct sl_ofp_buf b;
	struct sl_ofp_error e;
	char err[ERR_MAX] = "", tmp[4096], text[2048];
	const char *what = "flow stats request";
	FILE *f;
	int rc, ex;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return usage_error("save: file name too long: '%s'", path);
	if ((f = fopen(tmp, "w")) == NULL) {
		errmsg("save: %s: %s", tmp, strerror(errno));
		return EXIT_REFUSED;
	}
	fprintf(f,
		"# sluicectl save: load with sluice --restore FILE or sluicectl add-flows FILE\n");
	ex = save_tables(f, state_ids, &n_state);
	if (ex == 0)
		ex = save_queues(f);
	m.err = err;
	/* Forwarding modes: only when not plain OpenFlow. */
	sl_ofp_buf_init(&b);
	rc = ex ? 0 : sl_ofp_fwd_mode_encode(&b, sl_ctl_of_next_xid(c), SL_OFPX_FWD_MODE, &none);
	if (ex == 0 && rc == 0)
		rc = sl_ctl_of_request(c, b.data, b.len, fwd_mode_reply, &fp, &e, err, sizeof(err));
	sl_ofp_buf_free(&b);
	if (ex == 0 && rc == 0 && sl_fwd_params_format(&fp, text, sizeof(text)) >= 0 &&
	    strcmp(text, "openflow") != 0)
		fprintf(f, "fwd-mode=%s\n", text);
	what = "fwd-mode request";
	if (ex == 0 && rc == 0) {
		what = "meter config request";
		m.type = SL_OFPMP_METER_CONFIG;
		m.entry = meter_config_entry;
		m.user = &ml;
		rc = of_multipart(c,
				  &(struct sl_ofp_mp_request){.type = SL_OFPMP_METER_CONFIG,
							      .meter_id = SL_METER_ID_ALL},
				  mp_reply, &m, NULL, err, sizeof(err));
	}
	for (size_t i = 0; ex == 0 && rc == 0 && i < ml.n; i++) {
		sl_meter_format(&ml.v[i].spec, text, sizeof(text));
		fprintf(f, "%s\n", text);
	}
	if (ex == 0 && rc == 0) {
		what = "group description request";
		m.type = SL_OFPMP_GROUP_DESC;
		m.entry = group_desc_entry;
		m.user = &gl;
		rc = of_multipart(c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_GROUP_DESC},
				  mp_reply, &m, NULL, err, sizeof(err));
	}
	if (ex == 0 && rc == 0)
		groups_save(f, &gl);
	if (ex == 0 && rc == 0) {
		what = "flow stats request";
		memset(&req, 0, sizeof(req));
		req.type = SL_OFPMP_FLOW;
		req.flow.table_id = 0xff;
		req.flow.out_port = SL_PORT_ANY;
		req.flow.out_group = SL_GROUP_ID_ANY;
		m.type = SL_OFPMP_FLOW;
		m.entry = save_flow_entry;
		m.user = &lines;
		rc = of_multipart(c, &req, mp_reply, &m, NULL, err, sizeof(err));
	}
	if (lines.n > 0) /* qsort must not get a null array, even empty */
		qsort(lines.v, lines.n, sizeof(lines.v[0]), save_line_cmp);
	for (size_t i = 0; i < lines.n; i++) {
		if (ex == 0 && rc == 0)
			fprintf(f, "%s\n", lines.v[i].text + 10); /* past the sort key */
		free(lines.v[i].text);
	}
	for (unsigned i = 0; ex == 0 && rc == 0 && i < n_state; i++) {
		what = "state dump request";
		rc = save_states(c, f, state_ids[i], err);
	}
	if (fclose(f) != 0 && ex == 0 && rc == 0) {
		errmsg("save: %s: %s", tmp, strerror(errno));
		ex = EXIT_REFUSED;
	}
	if (ex == 0 && rc < 0)
		ex = of_failed(what, rc, err);
	if (ex == 0 && rename(tmp, path) != 0) {
		errmsg("save: %s: %s", path, strerror(errno));
		ex = EXIT_REFUSED;
	}
	if (ex != 0)
		unlink(tmp);
	else if (!o.json)
		printf("saved %zu meters, %zu groups, %zu flows to %s\n", ml.n, gl.n, lines.n,
		       path);
	sl_vec_free(&lines);
	sl_vec_free(&ml);
	sl_vec_free(&gl);
	return ex;
}

/*
 * diff-flows SOURCE1 SOURCE2 and replace-flows [SWITCH] FILE (ovs-ofctl's).
 * A source is a switch (every table's flows, by flow stats) or a flow file
 * (its flow lines; table declarations, groups, meters, states and fwd-mode
 * lines are checked and left alone).  A flow's identity is its table,
 * priority and match; the rest (cookie, timeouts, flags, actions) is its
 * version.  Both are compared as canonical text (sl_flow_format prints equal
 * specs alike), with the flags that are requests rather than state
 * (check_overlap, reset_counts) left out.
 */

struct fset_entry {
	char *key;        /* "TTT PPPPP MATCH": table, then priority high to low */
	char *text;       /* the flow (sl_flow_format, port numbers) */
	const char *file; /* flow file and line it came from, or NULL (a switch) */
	unsigned line;
	size_t seq; /* reading order: of two equal keys in a file the last wins */
};

struct flow_set {
	struct fset_entry *v;
	size_t n, cap;
	const char *file; /* a file source: its name as given, for FILE:LINE */
};

static void
fset_free(struct flow_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].text);
	}
	sl_vec_free(s);
}

static int
fset_add(struct flow_set *s, const struct sl_flow_spec *fs, const char *file, unsigned line)
{
	static struct sl_flow_spec n; /* large: off the stack */
	char match[4096], text[4096], key[4200];
	struct fset_entry *e = sl_vec_push(s);

	if (e == NULL)
		return -ENOMEM;
	n = *fs;
	n.cookie_mask = 0;
	n.flags &= (uint16_t) ~(SL_FF_CHECK_OVERLAP | SL_FF_RESET_COUNTS);
	sl_flow_format_match(&n.match, match, sizeof(match));
	sl_flow_format(&n, text, sizeof(text));
	snprintf(key, sizeof(key), "%03u %05u %s", n.table_id, 65535u - n.priority, match);
	e->key = strdup(key);
	e->text = strdup(text);
	if (e->key == NULL || e->text == NULL) {
		free(e->key);
		free(e->text);
		s->n--;
		return -ENOMEM;
	}
	e->file = file;
	e->line = line;
	e->seq = s->n - 1;
	return 0;
}

static int
fset_cmp(const void *a, const void *b)
{
	const struct fset_entry *x = a, *y = b;
	int d = strcmp(x->key, y->key);

	return d != 0 ? d : (x->seq > y->seq) - (x->seq < y->seq);
}

/* Sort by key; of entries with one key keep the last read (ovs-ofctl does the same). */
static void
fset_sort(struct flow_set *s)
{
	size_t k = 0;

	if (s->n > 0) /* qsort must not get a null array, even empty */
		qsort(s->v, s->n, sizeof(s->v[0]), fset_cmp);
	for (size_t i = 0; i < s->n; i++) {
		if (i + 1 < s->n && strcmp(s->v[i].key, s->v[i + 1].key) == 0) {
			free(s->v[i].key);
			free(s->v[i].text);
			continue;
		}
		s->v[k++] = s->v[i];
	}
	s->n = k;
}

static int
fset_stats_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
		 struct sl_ofp_error *e)
{
	static struct sl_flow_spec fs;
	struct sl_ofp_flow_stats st;

	if (sl_ofp_flow_stats_entry_decode(body, len, ofs, &fs, &st, e) < 0)
		return -1;
	if (fset_add(m->user, &fs, NULL, 0) < 0) {
		snprintf(m->err, ERR_MAX, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* Every flow of the switch behind @c; exit code. */
static int
fset_read_switch(struct flow_set *s, struct sl_ctl_of *c)
{
	static struct sl_ofp_mp_request req;
	struct mp_ctx m = {.type = SL_OFPMP_FLOW, .entry = fset_stats_entry, .user = s};
	char err[ERR_MAX] = "";
	int rc;

	memset(&req, 0, sizeof(req));
	req.type = SL_OFPMP_FLOW;
	req.flow.table_id = SL_OFPTT_ALL;
	req.flow.out_port = SL_PORT_ANY;
	req.flow.out_group = SL_GROUP_ID_ANY;
	m.err = err;
	rc = of_multipart(c, &req, mp_reply, &m, NULL, err, sizeof(err));
	if (rc < 0)
		return of_failed("flow stats request", rc, err);
	fset_sort(s);
	return 0;
}

static int
fset_on_flow(void *arg, const struct sl_flow_spec *fs, struct sl_parse_error *err)
{
	struct flow_set *s = arg;

	if (fset_add(s, fs, s->file, err->line) < 0) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* The flow lines of @path ("-": stdin); exit code (2 for a syntax error, naming FILE:LINE). */
static int
fset_read_file(struct flow_set *s, const char *cmd, const char *path)
{
	const struct sl_flowfile_callbacks cb = {.on_flow = fset_on_flow, .ports = &in_names};
	struct sl_parse_error pe;
	char buf[ERR_MAX];
	int rc;

	s->file = path;
	rc = sl_flowfile_load_cb(strcmp(path, "-") == 0 ? "/dev/stdin" : path, &cb, s, &pe);
	if (rc < 0 && portmap_error())
		return portmap_error();
	if (rc < 0) {
		if (strcmp(path, "-") == 0)
			snprintf(pe.file, sizeof(pe.file), "-");
		sl_parse_error_format(&pe, buf, sizeof(buf));
		if (rc == -ENOMEM) {
			errmsg("%s", buf);
			return EXIT_REFUSED;
		}
		return usage_error("%s: %s", cmd, buf);
	}
	fset_sort(s);
	return 0;
}

/*
 * What a SOURCE names, by ovs-ofctl's rule: a file when it starts with '/'
 * or '.' (or is "-"), a switch target when it holds a ':', else a file when
 * one exists by that name, else a switch's instance name (--name).  Fills
 * @target (a switch) and returns true for a file; exit code in *ex.
 */
static bool
source_is_file(const char *src, char *target, size_t size, int *ex)
{
	*ex = 0;
	if (src[0] == '/' || src[0] == '.' || strcmp(src, "-") == 0)
		return true;
	if (strchr(src, ':') != NULL) {
		snprintf(target, size, "%s", src);
		return false;
	}
	if (access(src, F_OK) == 0)
		return true;
	if (sl_ctl_default_target(src, target, size) < 0)
		*ex = usage_error("'%s' is neither a file nor a switch name (1..64 characters of "
				  "A-Z a-z 0-9 _ . -)",
				  src);
	return false;
}

/* Read SOURCE @src into @s: a file, or the switch it names (connecting to it). */
static int
fset_read_source(struct flow_set *s, const char *cmd, const char *src, char *target, size_t size)
{
	struct sl_ctl_of *c;
	int ex;

	if (source_is_file(src, target, size, &ex))
		return fset_read_file(s, cmd, src);
	if (ex != 0)
		return ex;
	o.target = target;
	if ((ex = of_connect(&c)) != 0)
		return ex;
	ex = fset_read_switch(s, c);
	sl_ctl_of_close(c);
	return ex;
}

/* A diff line: the flow with its sign, port names with --names. */
static void
fset_print(char sign, const struct fset_entry *e)
{
	static struct sl_flow_spec fs;
	char text[4096];
	const char *t = e->text;

	if (o.names && sl_flow_parse(e->text, &fs, NULL) == 0 &&
	    sl_flow_format_names(&fs, out_names(), text, sizeof(text)) < (int)sizeof(text))
		t = text;
	if (o.json)
		sl_ctl_jw_stringf(&jw, NULL, "%c%s", sign, t);
	else
		printf("%c%s\n", sign, t);
}

/* ovs-ofctl's exit code for "the sources differ". */
#define EXIT_DIFFERENT 2

int
cmd_diff_flows(const struct cmd_call *call)
{
	const char *src1 = call->argv[0], *src2 = call->argv[1];
	struct flow_set a = {0}, b = {0};
	char t1[160], t2[160];
	size_t i = 0, j = 0, n_diff = 0;
	int ex, d;

	/* Port names in the files are the first switch's, read once it is the target. */
	if (!source_is_file(src1, t1, sizeof(t1), &ex) && ex == 0)
		o.target = t1;
	else if (ex == 0 && !source_is_file(src2, t2, sizeof(t2), &ex) && ex == 0)
		o.target = t2;
	if (ex != 0)
		return ex;
	if ((ex = fset_read_source(&a, "diff-flows", src1, t1, sizeof(t1))) != 0 ||
	    (ex = fset_read_source(&b, "diff-flows", src2, t2, sizeof(t2))) != 0)
		goto out;
	if (o.names && (ex = portmap_load(NULL)) != 0)
		goto out;
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_array_begin(&jw, "lines");
	}
	while (i < a.n || j < b.n) {
		d = i == a.n ? 1 : j == b.n ? -1 : strcmp(a.v[i].key, b.v[j].key);
		if (d < 0) {
			fset_print('-', &a.v[i++]);
			n_diff++;
		} else if (d > 0) {
			fset_print('+', &b.v[j++]);
			n_diff++;
		} else {
			if (strcmp(a.v[i].text, b.v[j].text) != 0) {
				fset_print('-', &a.v[i]);
				fset_print('+', &b.v[j]);
				n_diff++;
			}
			i++;
			j++;
		}
	}
	if (o.json) {
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_u64(&jw, "differences", n_diff);
		sl_ctl_jw_object_end(&jw);
	}
	ex = n_diff ? EXIT_DIFFERENT : 0;
out:
	fset_free(&a);
	fset_free(&b);
	return ex;
}

/* The flow of @e as a spec (its text reads back: sl_flow_format's promise). */
static int
fset_spec(const struct fset_entry *e, struct sl_flow_spec *fs)
{
	struct sl_parse_error pe;
	char buf[ERR_MAX];

	if (sl_flow_parse(e->text, fs, &pe) == 0)
		return 0;
	sl_parse_error_format(&pe, buf, sizeof(buf));
	errmsg("replace-flows: cannot restate the switch's flow '%s': %s", e->text, buf);
	return -EINVAL;
}

/* Does @text carry the low_latency keyword?  (Flags print before "priority=".) */
static bool
text_low_latency(const char *text)
{
	const char *p = strstr(text, "priority=");
	const char *ll = strstr(text, "low_latency, ");

	return ll != NULL && p != NULL && ll < p;
}

/* One flow_mod of replace-flows, plus its low_latency mark when that changes. */
static int
replace_append(struct batch *b, uint8_t command, const struct fset_entry *e, bool ll_was)
{
	static struct sl_ofp_flow_mod fm;
	bool ll;
	int rc;

	flow_mod_init(&fm, command);
	if (fset_spec(e, &fm.spec) < 0)
		return -EINVAL;
	ll = fm.spec.flags & SL_FF_LOW_LATENCY;
	fm.spec.flags &= (uint16_t)~SL_FF_LOW_LATENCY;
	if ((rc = sl_ofp_flow_mod_encode(&b->msgs, 0, &fm)) == 0 &&
	    (rc = batch_add_origin(b, e->file, e->line)) == 0 && e->file == NULL)
		snprintf(b->origins.v[b->origins.n - 1].what, sizeof(b->origins.v[0].what),
			 "deleting %s", e->text);
	if (rc == 0 && command != SL_OFPFC_DELETE_STRICT && ll != ll_was)
		rc = ll_set_append_cmd(b, ll ? SL_OFPX_LL_SET_ON : SL_OFPX_LL_SET_OFF, &fm.spec,
				       true, e->file, e->line);
	if (rc == -EMSGSIZE)
		errmsg("replace-flows: %s:%u: flow too large for one OpenFlow message", e->file,
		       e->line);
	else if (rc == -ENOMEM)
		errmsg("out of memory");
	return rc;
}

/* The text of a flow up to its actions: equal heads differ in the actions alone. */
static bool
same_but_actions(const char *x, const char *y)
{
	const char *ax = strstr(x, " actions="), *ay = strstr(y, " actions=");

	return ax && ay && ax - x == ay - y && strncmp(x, y, (size_t)(ax - x)) == 0;
}

/*
 * replace-flows [SWITCH] FILE: make the switch's flows FILE's with the
 * fewest flow_mods, in one batch closed by a barrier: a DELETE_STRICT for
 * each flow only the switch has, then a MODIFY_STRICT where only the actions
 * differ (counters and duration kept), an ADD where the cookie, a timeout or
 * a flag differs or the flow is new.  Equal flows are not touched.
 */
int
cmd_replace_flows(const struct cmd_call *a)
{
	int argc = a->argc;
	char *const *argv = a->argv;
	const char *path = argv[argc - 1];
	struct flow_set file = {0}, sw = {0};
	struct batch b = {.label = "replace-flows"};
	unsigned n_add = 0, n_mod = 0, n_del = 0, n_same = 0;
	struct sl_ctl_of *c = NULL;
	char target[160];
	size_t i = 0, j = 0;
	int ex, rc = 0, d;

	if (argc == 2) {
		if (source_is_file(argv[0], target, sizeof(target), &ex) && ex == 0)
			return usage_error(
				"replace-flows: '%s' is no switch (SWITCH is a target "
				"such as unix:PATH or tcp:HOST:PORT, or an instance name)",
				argv[0]);
		if (ex != 0)
			return ex;
		o.target = target;
	}
	sl_ofp_buf_init(&b.msgs);
	if ((ex = fset_read_file(&file, "replace-flows", path)) != 0 ||
	    (ex = of_connect(&c)) != 0 || (ex = fset_read_switch(&sw, c)) != 0)
		goto out;
	/* Deletes first, as ovs-ofctl: an ADD below never collides with a flow on its way out. */
	for (i = 0, j = 0; j < sw.n && rc == 0; j++) {
		while (i < file.n && strcmp(file.v[i].key, sw.v[j].key) < 0)
			i++;
		if (i == file.n || strcmp(file.v[i].key, sw.v[j].key) != 0) {
			rc = replace_append(&b, SL_OFPFC_DELETE_STRICT, &sw.v[j], false);
			n_del++;
		}
	}
	for (i = 0, j = 0; i < file.n && rc == 0; i++) {
		while (j < sw.n && strcmp(sw.v[j].key, file.v[i].key) < 0)
			j++;
		d = j == sw.n ? -1 : strcmp(file.v[i].key, sw.v[j].key);
		if (d != 0) {
			rc = replace_append(&b, SL_OFPFC_ADD, &file.v[i], false);
			n_add++;
		} else if (strcmp(file.v[i].text, sw.v[j].text) == 0) {
			n_same++;
		} else {
			bool mod = same_but_actions(file.v[i].text, sw.v[j].text);
			rc = replace_append(&b, mod ? SL_OFPFC_MODIFY_STRICT : SL_OFPFC_ADD,
					    &file.v[i], text_low_latency(sw.v[j].text));
			if (mod)
				n_mod++;
			else
				n_add++;
		}
	}
	if (rc < 0) {
		ex = EXIT_REFUSED; /* replace_append said why */
		goto out;
	}
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_u64(&jw, "added", n_add);
		sl_ctl_jw_u64(&jw, "modified", n_mod);
		sl_ctl_jw_u64(&jw, "deleted", n_del);
		sl_ctl_jw_u64(&jw, "unchanged", n_same);
	}
	ex = batch_send(&b, c);
	if (o.json)
		sl_ctl_jw_object_end(&jw);
out:
	sl_ctl_of_close(c);
	batch_free(&b);
	fset_free(&file);
	fset_free(&sw);
	return ex;
}
