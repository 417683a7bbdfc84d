/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl: the OpenFlow reads: show, dump-flows, dump-tables, dump-ports,
 * dump-groups, dump-meters, meter-features, fwd-mode (control path).
 */
#include "sluicectl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Formatting helpers.
 */

static void
fmt_duration(uint32_t sec, uint32_t nsec, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRIu32 ".%03" PRIu32 "s", sec,
		 nsec < 1000000000u ? nsec / 1000000u : 999u);
}

static double
duration_d(uint32_t sec, uint32_t nsec)
{
	return sec + (nsec < 1000000000u ? nsec : 999999999u) / 1e9;
}

static void
fmt_mac(const uint8_t *m, char *buf, size_t size)
{
	snprintf(buf, size, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* Names of the set bits of @v from @names (bit i), joined by @sep; "0" when none. */
static void
fmt_bits(uint32_t v, const char *const *names, unsigned n, const char *sep, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < 32 && len < size; i++) {
		if (!(v & (1u << i)))
			continue;
		if (i < n && names[i])
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? sep : "",
						names[i]);
		else
			len += (size_t)snprintf(buf + len, size - len, "%s0x%x", len ? sep : "",
						1u << i);
	}
	if (buf[0] == '\0')
		snprintf(buf, size, "0");
}

static void
jw_bits(const char *key, uint32_t v, const char *const *names, unsigned n)
{
	sl_ctl_jw_array_begin(&jw, key);
	for (unsigned i = 0; i < 32; i++) {
		if (!(v & (1u << i)))
			continue;
		if (i < n && names[i])
			sl_ctl_jw_string(&jw, NULL, names[i]);
		else
			sl_ctl_jw_stringf(&jw, NULL, "0x%x", 1u << i);
	}
	sl_ctl_jw_array_end(&jw);
}

static const char *const cap_names[] = {"FLOW_STATS",  "TABLE_STATS", "PORT_STATS",
					"GROUP_STATS", NULL,          "IP_REASM",
					"QUEUE_STATS", NULL,          "PORT_BLOCKED"};
static const char *const config_names[] = {"PORT_DOWN", NULL,     "NO_RECV",     NULL,
					   NULL,        "NO_FWD", "NO_PACKET_IN"};
static const char *const state_names[] = {"LINK_DOWN", "BLOCKED", "LIVE"};
static const char *const feature_names[] = {"10MB_HD",  "10MB_FD", "100MB_HD", "100MB_FD",
					    "1GB_HD",   "1GB_FD",  "10GB_FD",  "40GB_FD",
					    "100GB_FD", "1TB_FD",  "OTHER",    "COPPER",
					    "FIBER",    "AUTONEG", "PAUSE",    "PAUSE_ASYM"};
static const char *const flag_names[] = {"send_flow_rem", "check_overlap", "reset_counts",
					 "no_packet_counts", "no_byte_counts"};

/* A port speed in kbps as "10G", "100M", "-" for 0. */
static void
fmt_speed(uint32_t kbps, char *buf, size_t size)
{
	if (kbps == 0)
		snprintf(buf, size, "-");
	else if (kbps % 1000000 == 0)
		snprintf(buf, size, "%" PRIu32 "G", kbps / 1000000);
	else if (kbps % 1000 == 0)
		snprintf(buf, size, "%" PRIu32 "M", kbps / 1000);
	else
		snprintf(buf, size, "%" PRIu32 "k", kbps);
}

/*
 * show
 */

static int
got_features(void *arg, const uint8_t *msg, size_t len)
{
	struct sl_ofp_error e;

	return sl_ofp_features_reply_decode(msg, len, arg, &e) < 0 ? -EBADMSG : 0;
}

int
cmd_show(struct sl_ctl_of *c, const struct cmd_call *a)
{
	struct port_list pl = {0};
	struct sl_ofp_features f;
	struct sl_ofp_buf b;
	char err[ERR_MAX] = "", buf[256];
	int rc;

	(void)a;
	sl_ofp_buf_init(&b);
	sl_ofp_empty_encode(&b, SL_OFPT_FEATURES_REQUEST, sl_ctl_of_next_xid(c));
	rc = sl_ctl_of_request(c, b.data, b.len, got_features, &f, NULL, err, sizeof(err));
	sl_ofp_buf_free(&b);
	if (rc == -EBADMSG && err[0] == '\0')
		snprintf(err, sizeof(err), "malformed features reply");
	if (rc < 0)
		return of_failed("features request", rc, err);
	if ((rc = get_ports(c, &pl, err)) < 0) {
		sl_vec_free(&pl);
		return of_failed("port description request", rc, err);
	}

	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_stringf(&jw, "datapath_id", "%016" PRIx64, f.datapath_id);
		sl_ctl_jw_u64(&jw, "n_tables", f.n_tables);
		sl_ctl_jw_u64(&jw, "n_buffers", f.n_buffers);
		jw_bits("capabilities", f.capabilities, cap_names, SL_ARRAY_SIZE(cap_names));
		sl_ctl_jw_array_begin(&jw, "ports");
		for (size_t i = 0; i < pl.n; i++) {
			const struct sl_ofp_port_desc *p = &pl.v[i];
			sl_ctl_jw_object_begin(&jw, NULL);
			sl_ctl_jw_u64(&jw, "port_no", p->port_no);
			sl_ctl_jw_string(&jw, "name", p->name);
			fmt_mac(p->hw_addr, buf, sizeof(buf));
			sl_ctl_jw_string(&jw, "hw_addr", buf);
			jw_bits("config", p->config, config_names, SL_ARRAY_SIZE(config_names));
			jw_bits("state", p->state, state_names, SL_ARRAY_SIZE(state_names));
			jw_bits("curr", p->curr, feature_names, SL_ARRAY_SIZE(feature_names));
			sl_ctl_jw_u64(&jw, "curr_speed_kbps", p->curr_speed);
			sl_ctl_jw_u64(&jw, "max_speed_kbps", p->max_speed);
			sl_ctl_jw_object_end(&jw);
		}
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_object_end(&jw);
	} else {
		static const char *const heads[] = {"port",  "name",   "mac",
						    "state", "config", "speed"};
		struct sl_ctl_table *t;

		printf("datapath_id: %016" PRIx64 "\n", f.datapath_id);
		printf("n_tables: %u, n_buffers: %" PRIu32 "\n", f.n_tables, f.n_buffers);
		fmt_bits(f.capabilities, cap_names, SL_ARRAY_SIZE(cap_names), " ", buf,
			 sizeof(buf));
		printf("capabilities: %s\n", buf);
		if (sl_ctl_table_create(heads, 6, "rlllll", &t) == 0) {
			for (size_t i = 0; i < pl.n; i++) {
				const struct sl_ofp_port_desc *p = &pl.v[i];
				if (p->port_no == SL_PORT_LOCAL)
					sl_ctl_table_add(t, "LOCAL");
				else
					sl_ctl_table_addf(t, "%" PRIu32, p->port_no);
				sl_ctl_sanitize(buf, sizeof(buf), p->name,
						strnlen(p->name, sizeof(p->name)));
				sl_ctl_table_add(t, buf);
				fmt_mac(p->hw_addr, buf, sizeof(buf));
				sl_ctl_table_add(t, buf);
				fmt_bits(p->state, state_names, SL_ARRAY_SIZE(state_names), ",",
					 buf, sizeof(buf));
				sl_ctl_table_add(t, buf);
				fmt_bits(p->config, config_names, SL_ARRAY_SIZE(config_names), ",",
					 buf, sizeof(buf));
				sl_ctl_table_add(t, buf);
				fmt_speed(p->curr_speed, buf, sizeof(buf));
				sl_ctl_table_add(t, buf);
			}
			sl_ctl_table_print(t, stdout, 0);
			sl_ctl_table_destroy(t);
		}
	}
	sl_vec_free(&pl);
	return 0;
}

/*
 * dump-flows
 */

int
flow_line_keep(struct flow_lines *fl, uint16_t priority, const char *text)
{
	struct flow_line *l = sl_vec_push(fl);

	if (l == NULL)
		return -1;
	if ((l->text = strdup(text)) == NULL) {
		fl->n--;
		return -1;
	}
	l->priority = priority;
	l->seq = fl->n - 1;
	return 0;
}

static int
flow_line_cmp(const void *a, const void *b)
{
	const struct flow_line *x = a, *y = b;
	int d = ((int)x->priority - (int)y->priority) * o.sort;

	return d != 0 ? d : (x->seq > y->seq) - (x->seq < y->seq);
}

static int
flow_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs, struct sl_ofp_error *e)
{
	static struct sl_flow_spec fs; /* large: keep it off the stack */
	struct sl_ofp_flow_stats st;
	char text[4096], head[64], dur[32];
	const char *rest;
	int n;

	if (sl_ofp_flow_stats_entry_decode(body, len, ofs, &fs, &st, e) < 0)
		return -1;
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_u64(&jw, "table", fs.table_id);
		sl_ctl_jw_u64(&jw, "priority", fs.priority);
		sl_ctl_jw_u64(&jw, "cookie", fs.cookie);
		sl_ctl_jw_double(&jw, "duration", duration_d(st.duration_sec, st.duration_nsec));
		sl_ctl_jw_u64(&jw, "n_packets", st.packet_count);
		sl_ctl_jw_u64(&jw, "n_bytes", st.byte_count);
		sl_ctl_jw_u64(&jw, "idle_timeout", fs.idle_timeout);
		sl_ctl_jw_u64(&jw, "hard_timeout", fs.hard_timeout);
		jw_bits("flags", fs.flags, flag_names, SL_ARRAY_SIZE(flag_names));
		sl_flow_format_match_names(&fs.match, out_names(), text, sizeof(text));
		sl_ctl_jw_string(&jw, "match", text);
		sl_flow_format_actions_names(&fs.insns, out_names(), text, sizeof(text));
		sl_ctl_jw_string(&jw, "actions", text);
		sl_flow_format_names(&fs, out_names(), text, sizeof(text));
		sl_ctl_jw_string(&jw, "flow", text);
		sl_ctl_jw_object_end(&jw);
		return 0;
	}
	/*
	 * sl_flow_format prints "table=N, [timeouts, flags, ]priority=... actions=...";
	 * with the cookie cleared it starts exactly with "table=N, ", which the
	 * counters go in front of, ovs-ofctl style.
	 */
	fs.cookie_mask = 0;
	{
		uint64_t cookie = fs.cookie;
		fs.cookie = 0;
		sl_flow_format_names(&fs, out_names(), text, sizeof(text));
		fs.cookie = cookie;
	}
	n = snprintf(head, sizeof(head), "table=%u, ", fs.table_id);
	rest = strncmp(text, head, (size_t)n) == 0 ? text + n : text;
	fmt_duration(st.duration_sec, st.duration_nsec, dur, sizeof(dur));
	char line[4352];
	if (o.no_stats) /* ovs-ofctl --no-stats: no duration or counters */
		n = fs.cookie != 0 ? snprintf(line, sizeof(line), " cookie=0x%" PRIx64 ", %s",
					      fs.cookie, text)
				   : snprintf(line, sizeof(line), " %s", text);
	else
		n = snprintf(line, sizeof(line),
			     " cookie=0x%" PRIx64 ", duration=%s, table=%u, n_packets=%" PRIu64
			     ", n_bytes=%" PRIu64 ", %s",
			     fs.cookie, dur, fs.table_id, st.packet_count, st.byte_count, rest);
	if (o.sort == 0) {
		printf("%s\n", line);
		return 0;
	}
	return flow_line_keep(m->user, fs.priority, line);
}

/* Parse a FILTER (dump-flows, del-flows); exit code 0 or EXIT_USAGE. */
int
parse_filter(const char *cmd, const char *text, struct sl_flow_spec *fs, uint32_t *out_port,
	     uint32_t *out_group)
{
	struct sl_parse_error pe;
	char buf[ERR_MAX];

	if (sl_flow_parse_filter_names(text, &in_names, fs, out_port, out_group, &pe) < 0) {
		if (portmap_error()) /* the names were needed and could not be read */
			return portmap_error();
		sl_parse_error_format(&pe, buf, sizeof(buf));
		return usage_error("%s: bad filter: %s", cmd, buf);
	}
	return 0;
}

static int
dump_flows(struct sl_ctl_of *c, const char *filter_text)
{
	static struct sl_flow_spec fs;
	static struct sl_ofp_mp_request req;
	struct flow_lines lines = {0};
	struct mp_ctx m = {.type = SL_OFPMP_FLOW, .entry = flow_entry, .user = &lines};
	char err[ERR_MAX] = "";
	int rc;

	/* Already validated by the caller before connecting. */
	parse_filter("dump-flows", filter_text, &fs, &req.flow.out_port, &req.flow.out_group);
	req.type = SL_OFPMP_FLOW;
	req.flow.table_id = fs.table_id;
	req.flow.cookie = fs.cookie;
	req.flow.cookie_mask = fs.cookie_mask;
	req.flow.match = fs.match;
	m.err = err;
	if (o.names && (rc = portmap_load(c)) != 0)
		return rc;
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_array_begin(&jw, "flows");
	}
	rc = of_multipart(c, &req, mp_reply, &m, NULL, err, sizeof(err));
	if (o.json) {
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_object_end(&jw);
	}
	if (lines.n > 0) {
		qsort(lines.v, lines.n, sizeof(lines.v[0]), flow_line_cmp);
		for (size_t i = 0; i < lines.n; i++) {
			if (rc >= 0)
				printf("%s\n", lines.v[i].text);
			free(lines.v[i].text);
		}
	}
	sl_vec_free(&lines);
	return rc < 0 ? of_failed("flow stats request", rc, err) : 0;
}

/* dump-flows [FILTER]: the filter is checked before connecting. */
int
cmd_dump_flows(const struct cmd_call *a)
{
	static struct sl_flow_spec fs;
	const char *filter = a->text ? a->text : "";
	struct sl_ctl_of *c;
	uint32_t op, og;
	int ex;

	if ((ex = parse_filter(a->name, filter, &fs, &op, &og)) != 0 || (ex = of_connect(&c)) != 0)
		return ex;
	ex = dump_flows(c, filter);
	sl_ctl_of_close(c);
	return ex;
}

/*
 * dump-tables
 */

struct table_row {
	struct sl_ofp_table_stats st;
	char name[32];
};

struct table_list {
	struct table_row rows[SL_OFPTT_ALL + 1];
	bool seen[SL_OFPTT_ALL + 1];
};

static int
table_stats_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
		  struct sl_ofp_error *e)
{
	struct table_list *tl = m->user;
	struct sl_ofp_table_stats ts;

	if (sl_ofp_table_stats_entry_decode(body, len, ofs, &ts, e) < 0)
		return -1;
	tl->rows[ts.table_id].st = ts;
	tl->seen[ts.table_id] = true;
	return 0;
}

static int
table_features_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
		     struct sl_ofp_error *e)
{
	static struct sl_ofp_table_features tf;
	struct table_list *tl = m->user;

	if (sl_ofp_table_features_entry_decode(body, len, ofs, &tf, e) < 0)
		return -1;
	snprintf(tl->rows[tf.table_id].name, sizeof(tl->rows[0].name), "%s", tf.name);
	return 0;
}

int
cmd_dump_tables(struct sl_ctl_of *c, const struct cmd_call *a)
{
	static struct table_list tl;
	struct mp_ctx m = {.type = SL_OFPMP_TABLE, .entry = table_stats_entry, .user = &tl};
	char err[ERR_MAX] = "";
	struct sl_ctl_table *t = NULL;
	int rc;

	(void)a;
	m.err = err;
	rc = of_multipart(c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_TABLE}, mp_reply, &m,
			  NULL, err, sizeof(err));
	if (rc < 0)
		return of_failed("table stats request", rc, err);
	/* Names come from table features (about 200 KB for 254 tables); optional. */
	m.type = SL_OFPMP_TABLE_FEATURES;
	m.entry = table_features_entry;
	rc = of_multipart(c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_TABLE_FEATURES}, mp_reply,
			  &m, NULL, err, sizeof(err));
	if (rc == -ETIMEDOUT || rc == -ECONNRESET)
		return of_failed("table features request", rc, err);

	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_array_begin(&jw, "tables");
	} else {
		static const char *const heads[] = {"table", "name", "active", "lookups",
						    "matched"};
		sl_ctl_table_create(heads, 5, "rlrrr", &t);
	}
	for (unsigned id = 0; id <= SL_OFPTT_ALL; id++) {
		const struct table_row *r = &tl.rows[id];
		if (!tl.seen[id] || (!o.all && r->st.active_count == 0 && r->st.lookup_count == 0))
			continue;
		if (o.json) {
			sl_ctl_jw_object_begin(&jw, NULL);
			sl_ctl_jw_u64(&jw, "table_id", id);
			if (r->name[0])
				sl_ctl_jw_string(&jw, "name", r->name);
			sl_ctl_jw_u64(&jw, "active_count", r->st.active_count);
			sl_ctl_jw_u64(&jw, "lookup_count", r->st.lookup_count);
			sl_ctl_jw_u64(&jw, "matched_count", r->st.matched_count);
			sl_ctl_jw_object_end(&jw);
		} else if (t) {
			sl_ctl_table_addf(t, "%u", id);
			sl_ctl_table_add(t, r->name[0] ? r->name : "-");
			sl_ctl_table_addf(t, "%" PRIu32, r->st.active_count);
			sl_ctl_table_addf(t, "%" PRIu64, r->st.lookup_count);
			sl_ctl_table_addf(t, "%" PRIu64, r->st.matched_count);
		}
	}
	if (o.json) {
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_object_end(&jw);
	} else if (t) {
		if (sl_ctl_table_rows(t))
			sl_ctl_table_print(t, stdout, 0);
		else
			printf("no table has flows or lookups (--all lists every table)\n");
		sl_ctl_table_destroy(t);
	}
	return 0;
}

/*
 * dump-ports
 */

struct port_stats_ctx {
	const struct port_list *names;
	unsigned n;
};

static void
print_counter(const char *key, uint64_t v, bool last)
{
	if (v == UINT64_MAX)
		printf("%s=?%s", key, last ? "" : ", ");
	else
		printf("%s=%" PRIu64 "%s", key, v, last ? "" : ", ");
}

static void
jw_counter(const char *key, uint64_t v)
{
	if (v == UINT64_MAX)
		sl_ctl_jw_null(&jw, key); /* the switch does not count it */
	else
		sl_ctl_jw_u64(&jw, key, v);
}

static int
port_stats_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
		 struct sl_ofp_error *e)
{
	struct port_stats_ctx *pc = m->user;
	struct sl_ofp_port_stats ps;
	const char *name;
	char dur[32], clean[32];

	if (sl_ofp_port_stats_entry_decode(body, len, ofs, &ps, e) < 0)
		return -1;
	pc->n++;
	name = port_name_of(pc->names, ps.port_no);
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_u64(&jw, "port_no", ps.port_no);
		if (name)
			sl_ctl_jw_string(&jw, "name", name);
		jw_counter("rx_packets", ps.rx_packets);
		jw_counter("tx_packets", ps.tx_packets);
		jw_counter("rx_bytes", ps.rx_bytes);
		jw_counter("tx_bytes", ps.tx_bytes);
		jw_counter("rx_dropped", ps.rx_dropped);
		jw_counter("tx_dropped", ps.tx_dropped);
		jw_counter("rx_errors", ps.rx_errors);
		jw_counter("tx_errors", ps.tx_errors);
		jw_counter("rx_frame_err", ps.rx_frame_err);
		jw_counter("rx_over_err", ps.rx_over_err);
		jw_counter("rx_crc_err", ps.rx_crc_err);
		jw_counter("collisions", ps.collisions);
		sl_ctl_jw_double(&jw, "duration", duration_d(ps.duration_sec, ps.duration_nsec));
		sl_ctl_jw_object_end(&jw);
		return 0;
	}
	/* ovs-ofctl dump-ports layout, with the port name. */
	char no[16];
	if (ps.port_no == SL_PORT_LOCAL)
		snprintf(no, sizeof(no), "LOCAL");
	else
		snprintf(no, sizeof(no), "%2" PRIu32, ps.port_no);
	if (name) {
		sl_ctl_sanitize(clean, sizeof(clean), name, strlen(name));
		printf("  port %s (%s): rx ", no, clean);
	} else {
		printf("  port %s: rx ", no);
	}
	print_counter("pkts", ps.rx_packets, false);
	print_counter("bytes", ps.rx_bytes, false);
	print_counter("drop", ps.rx_dropped, false);
	print_counter("errs", ps.rx_errors, false);
	print_counter("frame", ps.rx_frame_err, false);
	print_counter("over", ps.rx_over_err, false);
	print_counter("crc", ps.rx_crc_err, true);
	printf("\n           tx ");
	print_counter("pkts", ps.tx_packets, false);
	print_counter("bytes", ps.tx_bytes, false);
	print_counter("drop", ps.tx_dropped, false);
	print_counter("errs", ps.tx_errors, false);
	print_counter("coll", ps.collisions, true);
	fmt_duration(ps.duration_sec, ps.duration_nsec, dur, sizeof(dur));
	printf("\n           duration=%s\n", dur);
	return 0;
}

int
cmd_dump_ports(struct sl_ctl_of *c, const struct cmd_call *a)
{
	const char *port_arg = a->argc ? a->argv[0] : NULL;
	struct port_list pl = {0};
	struct port_stats_ctx pc = {.names = &pl};
	struct mp_ctx m = {.type = SL_OFPMP_PORT_STATS, .entry = port_stats_entry, .user = &pc};
	struct sl_ofp_mp_request req = {.type = SL_OFPMP_PORT_STATS, .port_no = SL_PORT_ANY};
	char err[ERR_MAX] = "";
	uint64_t v;
	int rc;

	m.err = err;
	/* Names from the port descriptions; a switch without them still gets counters. */
	rc = get_ports(c, &pl, err);
	if (rc == -ETIMEDOUT || rc == -ECONNRESET) {
		sl_vec_free(&pl);
		return of_failed("port description request", rc, err);
	}
	if (port_arg) {
		if (parse_u64(port_arg, 1, SL_PORT_MAX_PHYS, &v)) {
			req.port_no = (uint32_t)v;
		} else if (strcmp(port_arg, "LOCAL") == 0) {
			req.port_no = SL_PORT_LOCAL;
		} else {
			size_t i;
			for (i = 0; i < pl.n; i++)
				if (strcmp(pl.v[i].name, port_arg) == 0)
					break;
			if (i == pl.n) {
				sl_vec_free(&pl);
				return usage_error("dump-ports: no port '%s' (expected a port "
						   "number or the name of a port)",
						   port_arg);
			}
			req.port_no = pl.v[i].port_no;
		}
	}
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_array_begin(&jw, "ports");
	}
	rc = of_multipart(c, &req, mp_reply, &m, NULL, err, sizeof(err));
	if (o.json) {
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_object_end(&jw);
	}
	sl_vec_free(&pl);
	return rc < 0 ? of_failed("port stats request", rc, err) : 0;
}

/*
 * dump-groups
 */

static const char *const group_type_names[] = {"all", "select", "indirect", "ff"};

int
group_desc_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
		 struct sl_ofp_error *e)
{
	struct group_list *gl = m->user;

	struct group_row *r = sl_vec_push(gl);

	if (r == NULL)
		return mp_oom(m);
	if (sl_ofp_group_desc_entry_decode(body, len, ofs, &r->desc, e) < 0) {
		gl->n--;
		return -1;
	}
	return 0;
}

static int
group_stats_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
		  struct sl_ofp_error *e)
{
	static struct sl_ofp_group_stats gs;
	struct group_list *gl = m->user;

	if (sl_ofp_group_stats_entry_decode(body, len, ofs, &gs, e) < 0)
		return -1;
	for (size_t i = 0; i < gl->n; i++) {
		if (gl->v[i].desc.group_id == gs.group_id) {
			gl->v[i].st = gs;
			gl->v[i].have_stats = true;
		}
	}
	return 0;
}

/* A bucket's actions in flow syntax. */
static void
fmt_bucket_actions(const struct sl_bucket_spec *b, const struct sl_port_names *pn, char *buf,
		   size_t size)
{
	static struct sl_instructions in;

	memset(&in, 0, sizeof(in));
	in.goto_table = -1;
	in.has_apply = true;
	in.n_apply = b->n_actions;
	memcpy(in.apply, b->actions, b->n_actions * sizeof(b->actions[0]));
	sl_flow_format_actions_names(&in, pn, buf, size);
}

/* A group in add-groups syntax, as dump-groups prints it and add-group reads it. */
void
print_group_line(FILE *f, const struct sl_group_spec *g, const struct sl_port_names *pn)
{
	static char acts[2048];
	char port[80];
	const char *type = g->type < 4 ? group_type_names[g->type] : "?";

	fprintf(f, "group_id=%" PRIu32 ",type=%s", g->group_id, type);
	for (unsigned k = 0; k < g->n_buckets; k++) {
		const struct sl_bucket_spec *b = &g->buckets[k];
		fprintf(f, ",bucket=");
		if (g->type == SL_GROUP_SELECT)
			fprintf(f, "weight:%u,", b->weight);
		if (b->watch_port != SL_PORT_ANY) {
			sl_port_format(b->watch_port, pn, port, sizeof(port));
			fprintf(f, "watch_port:%s,", port);
		}
		if (b->watch_group != SL_GROUP_ID_ANY)
			fprintf(f, "watch_group:%" PRIu32 ",", b->watch_group);
		fmt_bucket_actions(b, pn, acts, sizeof(acts));
		fprintf(f, "actions=%s", acts);
	}
	fputc('\n', f);
}

int
cmd_dump_groups(struct sl_ctl_of *c, const struct cmd_call *a)
{
	struct group_list gl = {0};
	struct mp_ctx m = {.type = SL_OFPMP_GROUP_DESC, .entry = group_desc_entry, .user = &gl};
	char err[ERR_MAX] = "", acts[2048], dur[32];
	int rc;

	(void)a;
	m.err = err;
	if (o.names && (rc = portmap_load(c)) != 0)
		return rc;
	rc = of_multipart(c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_GROUP_DESC}, mp_reply, &m,
			  NULL, err, sizeof(err));
	if (rc < 0) {
		sl_vec_free(&gl);
		return of_failed("group description request", rc, err);
	}
	m.type = SL_OFPMP_GROUP;
	m.entry = group_stats_entry;
	rc = of_multipart(
		c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_GROUP, .group_id = SL_GROUP_ID_ALL},
		mp_reply, &m, NULL, err, sizeof(err));
	if (rc < 0) {
		sl_vec_free(&gl);
		return of_failed("group stats request", rc, err);
	}

	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_array_begin(&jw, "groups");
	}
	for (size_t i = 0; i < gl.n; i++) {
		const struct group_row *g = &gl.v[i];
		const char *type = g->desc.type < 4 ? group_type_names[g->desc.type] : "?";

		if (o.json) {
			sl_ctl_jw_object_begin(&jw, NULL);
			sl_ctl_jw_u64(&jw, "group_id", g->desc.group_id);
			sl_ctl_jw_string(&jw, "type", type);
			if (g->have_stats) {
				sl_ctl_jw_u64(&jw, "ref_count", g->st.ref_count);
				sl_ctl_jw_u64(&jw, "n_packets", g->st.packet_count);
				sl_ctl_jw_u64(&jw, "n_bytes", g->st.byte_count);
				sl_ctl_jw_double(
					&jw, "duration",
					duration_d(g->st.duration_sec, g->st.duration_nsec));
			}
			sl_ctl_jw_array_begin(&jw, "buckets");
			for (unsigned k = 0; k < g->desc.n_buckets; k++) {
				const struct sl_bucket_spec *b = &g->desc.buckets[k];
				sl_ctl_jw_object_begin(&jw, NULL);
				if (g->desc.type == SL_GROUP_SELECT)
					sl_ctl_jw_u64(&jw, "weight", b->weight);
				if (b->watch_port != SL_PORT_ANY)
					sl_ctl_jw_u64(&jw, "watch_port", b->watch_port);
				if (b->watch_group != SL_GROUP_ID_ANY)
					sl_ctl_jw_u64(&jw, "watch_group", b->watch_group);
				fmt_bucket_actions(b, out_names(), acts, sizeof(acts));
				sl_ctl_jw_string(&jw, "actions", acts);
				if (g->have_stats && k < g->st.n_buckets) {
					sl_ctl_jw_u64(&jw, "n_packets",
						      g->st.buckets[k].packet_count);
					sl_ctl_jw_u64(&jw, "n_bytes", g->st.buckets[k].byte_count);
				}
				sl_ctl_jw_object_end(&jw);
			}
			sl_ctl_jw_array_end(&jw);
			sl_ctl_jw_object_end(&jw);
			continue;
		}
		/* ovs-ofctl dump-groups line, then the counters (dump-group-stats). */
		putchar(' ');
		print_group_line(stdout, &g->desc, out_names());
		if (g->have_stats) {
			fmt_duration(g->st.duration_sec, g->st.duration_nsec, dur, sizeof(dur));
			printf("   duration=%s, ref_count=%" PRIu32 ", n_packets=%" PRIu64
			       ", n_bytes=%" PRIu64,
			       dur, g->st.ref_count, g->st.packet_count, g->st.byte_count);
			for (unsigned k = 0; k < g->st.n_buckets; k++)
				printf(", bucket%u: n_packets=%" PRIu64 " n_bytes=%" PRIu64, k,
				       g->st.buckets[k].packet_count, g->st.buckets[k].byte_count);
			printf("\n");
		}
	}
	if (o.json) {
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_object_end(&jw);
	} else if (gl.n == 0) {
		printf("no groups\n");
	}
	sl_vec_free(&gl);
	return 0;
}

/*
 * dump-meters, meter-features
 */

int
meter_config_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
		   struct sl_ofp_error *e)
{
	struct meter_list *ml = m->user;

	struct meter_row *r = sl_vec_push(ml);

	if (r == NULL)
		return mp_oom(m);
	if (sl_ofp_meter_config_entry_decode(body, len, ofs, &r->spec, e) < 0) {
		ml->n--;
		return -1;
	}
	return 0;
}

static int
meter_stats_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
		  struct sl_ofp_error *e)
{
	struct meter_list *ml = m->user;
	struct sl_meter_stats st;
	uint32_t id, sec, nsec;

	if (sl_ofp_meter_stats_entry_decode(body, len, ofs, &id, &sec, &nsec, &st, e) < 0)
		return -1;
	for (size_t i = 0; i < ml->n; i++) {
		if (ml->v[i].spec.meter_id == id) {
			ml->v[i].st = st;
			ml->v[i].dur_sec = sec;
			ml->v[i].dur_nsec = nsec;
			ml->v[i].have_stats = true;
		}
	}
	return 0;
}

int
cmd_dump_meters(struct sl_ctl_of *c, const struct cmd_call *a)
{
	struct meter_list ml = {0};
	struct mp_ctx m = {.type = SL_OFPMP_METER_CONFIG, .entry = meter_config_entry, .user = &ml};
	char err[ERR_MAX] = "", text[1024], dur[32];
	int rc;

	(void)a;
	m.err = err;
	rc = of_multipart(c,
			  &(struct sl_ofp_mp_request){.type = SL_OFPMP_METER_CONFIG,
						      .meter_id = SL_METER_ID_ALL},
			  mp_reply, &m, NULL, err, sizeof(err));
	if (rc == 0) {
		m.type = SL_OFPMP_METER;
		m.entry = meter_stats_entry;
		rc = of_multipart(c,
				  &(struct sl_ofp_mp_request){.type = SL_OFPMP_METER,
							      .meter_id = SL_METER_ID_ALL},
				  mp_reply, &m, NULL, err, sizeof(err));
	}
	if (rc < 0) {
		sl_vec_free(&ml);
		return of_failed("meter request", rc, err);
	}
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_array_begin(&jw, "meters");
	}
	for (size_t i = 0; i < ml.n; i++) {
		const struct meter_row *r = &ml.v[i];

		sl_meter_format(&r->spec, text, sizeof(text));
		if (o.json) {
			sl_ctl_jw_object_begin(&jw, NULL);
			sl_ctl_jw_u64(&jw, "meter_id", r->spec.meter_id);
			sl_ctl_jw_string(&jw, "meter", text);
			if (r->have_stats) {
				sl_ctl_jw_u64(&jw, "flow_count", r->st.flow_count);
				sl_ctl_jw_u64(&jw, "n_packets", r->st.packets);
				sl_ctl_jw_u64(&jw, "n_bytes", r->st.bytes);
				sl_ctl_jw_double(&jw, "duration",
						 duration_d(r->dur_sec, r->dur_nsec));
				sl_ctl_jw_array_begin(&jw, "bands");
				for (unsigned k = 0; k < r->st.n_bands; k++) {
					sl_ctl_jw_object_begin(&jw, NULL);
					sl_ctl_jw_u64(&jw, "n_packets", r->st.band_packets[k]);
					sl_ctl_jw_u64(&jw, "n_bytes", r->st.band_bytes[k]);
					sl_ctl_jw_object_end(&jw);
				}
				sl_ctl_jw_array_end(&jw);
			}
			sl_ctl_jw_object_end(&jw);
			continue;
		}
		/* The add-meter syntax, then the counters (ovs-ofctl meter-stats). */
		printf(" %s\n", text);
		if (r->have_stats) {
			fmt_duration(r->dur_sec, r->dur_nsec, dur, sizeof(dur));
			printf("   duration=%s, flow_count=%" PRIu32 ", n_packets=%" PRIu64
			       ", n_bytes=%" PRIu64,
			       dur, r->st.flow_count, r->st.packets, r->st.bytes);
			for (unsigned k = 0; k < r->st.n_bands; k++)
				printf(", band%u: n_packets=%" PRIu64 " n_bytes=%" PRIu64, k,
				       r->st.band_packets[k], r->st.band_bytes[k]);
			printf("\n");
		}
	}
	if (o.json) {
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_object_end(&jw);
	} else if (ml.n == 0) {
		printf("no meters\n");
	}
	sl_vec_free(&ml);
	return 0;
}

static int
meter_features_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
		     struct sl_ofp_error *e)
{
	if (sl_ofp_meter_features_decode(body + *ofs, len - *ofs, m->user, e) < 0)
		return -1;
	*ofs = len;
	return 0;
}

int
cmd_meter_features(struct sl_ctl_of *c, const struct cmd_call *a)
{
	struct sl_ofp_meter_features mf = {0};
	struct mp_ctx m = {
		.type = SL_OFPMP_METER_FEATURES, .entry = meter_features_entry, .user = &mf};
	char err[ERR_MAX] = "";
	int rc;

	(void)a;
	m.err = err;
	rc = of_multipart(c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_METER_FEATURES}, mp_reply,
			  &m, NULL, err, sizeof(err));
	if (rc < 0)
		return of_failed("meter features request", rc, err);
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_u64(&jw, "max_meter", mf.max_meter);
		sl_ctl_jw_u64(&jw, "band_types", mf.band_types);
		sl_ctl_jw_u64(&jw, "capabilities", mf.capabilities);
		sl_ctl_jw_u64(&jw, "max_bands", mf.max_bands);
		sl_ctl_jw_u64(&jw, "max_color", mf.max_color);
		sl_ctl_jw_object_end(&jw);
		return 0;
	}
	printf("max_meter=%" PRIu32 " max_bands=%u max_color=%u\nband_types:%s%s\n"
	       "capabilities:%s%s%s%s\n",
	       mf.max_meter, mf.max_bands, mf.max_color,
	       mf.band_types & (1u << SL_BAND_DROP) ? " drop" : "",
	       mf.band_types & (1u << SL_BAND_DSCP_REMARK) ? " dscp_remark" : "",
	       mf.capabilities & SL_METER_KBPS ? " kbps" : "",
	       mf.capabilities & SL_METER_PKTPS ? " pktps" : "",
	       mf.capabilities & SL_METER_BURST ? " burst" : "",
	       mf.capabilities & SL_METER_STATS ? " stats" : "");
	return 0;
}

/*
 * fwd-mode
 */

int
fwd_mode_reply(void *arg, const uint8_t *msg, size_t len)
{
	struct sl_fwd_params *fp = arg;
	struct sl_ofp_error e;
	uint32_t t;

	return sl_ofp_fwd_mode_decode(msg, len, &t, fp, &e) == 0 && t == SL_OFPX_FWD_MODE
		       ? 0
		       : -EBADMSG;
}

/* fwd-mode: print the forwarding modes (SL_OFPX_FWD_MODE request). */
int
cmd_fwd_mode(struct sl_ctl_of *c, const struct cmd_call *a)
{
	struct sl_fwd_params req = {0}, fp = {0};
	struct sl_ofp_buf b;
	struct sl_ofp_error e;
	char err[ERR_MAX], text[2048];
	int rc;

	(void)a;
	sl_ofp_buf_init(&b);
	if (sl_ofp_fwd_mode_encode(&b, sl_ctl_of_next_xid(c), SL_OFPX_FWD_MODE, &req) < 0) {
		sl_ofp_buf_free(&b);
		errmsg("out of memory");
		return EXIT_REFUSED;
	}
	rc = sl_ctl_of_request(c, b.data, b.len, fwd_mode_reply, &fp, &e, err, sizeof(err));
	sl_ofp_buf_free(&b);
	if (rc < 0)
		return of_failed("fwd-mode", rc, err);
	if (sl_fwd_params_format(&fp, text, sizeof(text)) < 0)
		snprintf(text, sizeof(text), "(too long)");
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_string(&jw, "modes", text);
		sl_ctl_jw_object_end(&jw);
	} else {
		printf("%s\n", text);
	}
	return 0;
}
