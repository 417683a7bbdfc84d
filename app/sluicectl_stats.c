/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl: stats and monitor: the switch's counters over telemetry, once or
 * as live rates (control path).
 */
#include "sluicectl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/* Integer member as text, "-" when absent. */
static void
fmt_member(const struct sl_ctl_json *obj, const char *key, char *buf, size_t size)
{
	fmt_value(sl_ctl_json_get(obj, key), buf, size);
}

static void
fmt_ns(uint64_t ns, char *buf, size_t size)
{
	if (ns < 1000)
		snprintf(buf, size, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.2fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.2fms", ns / 1e6);
	else
		snprintf(buf, size, "%.2fs", ns / 1e9);
}

static void
fmt_uptime(uint64_t ms, char *buf, size_t size)
{
	uint64_t s = ms / 1000;

	if (s >= 86400)
		snprintf(buf, size, "%" PRIu64 "d%02" PRIu64 "h%02" PRIu64 "m", s / 86400,
			 s / 3600 % 24, s / 60 % 60);
	else if (s >= 3600)
		snprintf(buf, size, "%" PRIu64 "h%02" PRIu64 "m%02" PRIu64 "s", s / 3600,
			 s / 60 % 60, s % 60);
	else if (s >= 60)
		snprintf(buf, size, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
	else
		snprintf(buf, size, "%" PRIu64 ".%03" PRIu64 "s", s, ms % 1000);
}

/*
 * stats
 */

static void
stats_info(const struct sl_ctl_json *v)
{
	uint64_t ms;
	char buf[64];
	const char *extra[2] = {"uptime", buf};

	if (sl_ctl_json_u64(sl_ctl_json_get(v, "uptime_ms"), &ms)) {
		fmt_uptime(ms, buf, sizeof(buf));
		print_kv_extra(v, extra, 1);
	} else {
		print_kv(v);
	}
}

static void
stats_ports(const struct sl_ctl_json *v)
{
	static const char *const heads[] = {"port",    "name",     "state",   "rx_pkts", "rx_bytes",
					    "tx_pkts", "tx_bytes", "tx_drop", "rx_miss"};
	static const char *const keys[] = {"rx_packets", "rx_bytes",   "tx_packets",
					   "tx_bytes",   "tx_dropped", "rx_missed"};
	const struct sl_ctl_json *rows[1024];
	struct sl_ctl_table *t;
	size_t n = sorted_entries(v, rows, SL_ARRAY_SIZE(rows));
	char buf[64];

	if (sl_ctl_table_create(heads, 9, "rllrrrrrr", &t) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct sl_ctl_json *p = rows[i];
		uint64_t link = sl_ctl_json_get_u64(p, "link", 0),
			 live = sl_ctl_json_get_u64(p, "live", 1);

		sl_ctl_table_add(t, p->key);
		fmt_member(p, "name", buf, sizeof(buf));
		sl_ctl_table_add(t, buf);
		sl_ctl_table_add(t, !link ? "down" : !live ? "admin-down" : "up");
		for (unsigned k = 0; k < SL_ARRAY_SIZE(keys); k++) {
			fmt_member(p, keys[k], buf, sizeof(buf));
			sl_ctl_table_add(t, buf);
		}
	}
	sl_ctl_table_print(t, stdout, 0);
	sl_ctl_table_destroy(t);
	if (sl_ctl_json_get_u64(v, "truncated", 0))
		printf("(list cut by the switch: use 'telemetry /sluice/port,N' for the rest)\n");
}

static void
stats_tables(const struct sl_ctl_json *v)
{
	static const char *const heads[] = {"table",   "name",    "kind",  "flows",
					    "lookups", "matched", "missed"};
	static const char *const keys[] = {"name", "kind", "flows", "lookups", "matched", "missed"};
	const struct sl_ctl_json *rows[256];
	struct sl_ctl_table *t;
	size_t n = sorted_entries(v, rows, SL_ARRAY_SIZE(rows));
	char buf[64];

	if (sl_ctl_table_create(heads, 7, "rllrrrr", &t) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		sl_ctl_table_add(t, rows[i]->key);
		for (unsigned k = 0; k < SL_ARRAY_SIZE(keys); k++) {
			fmt_member(rows[i], keys[k], buf, sizeof(buf));
			sl_ctl_table_add(t, buf[0] ? buf : "-");
		}
	}
	if (n)
		sl_ctl_table_print(t, stdout, 0);
	else
		printf("no tables in use\n");
	sl_ctl_table_destroy(t);
	if (sl_ctl_json_get_u64(v, "truncated", 0))
		printf("(list cut by the switch: use 'telemetry /sluice/table,N' for the rest)\n");
}

/* /sluice/ffp: the scalar members, then one row per table_N container. */
static void
stats_ffp(const struct sl_ctl_json *v)
{
	static const char *const heads[] = {"table",    "active",     "adaptive",    "search ns",
					    "probe ns", "LL entries", "LUT entries", "hits",
					    "misses",   "verified",   "invalidated", "evicted"};
	static const char *const keys[] = {
		"active",   "adaptive", "search_ns", "probe_ns",      "low_latency_entries",
		"entries",  "hits",     "misses",    "verifications", "invalidations",
		"evictions"};
	struct sl_ctl_table *kv, *t;
	char buf[64];
	static const char *const kvh[] = {"", ""};
	unsigned rows = 0;

	if (sl_ctl_table_create(kvh, 2, "ll", &kv) < 0)
		return;
	if (sl_ctl_table_create(heads, SL_ARRAY_SIZE(heads), "rrrrrrrrrrrr", &t) < 0) {
		sl_ctl_table_destroy(kv);
		return;
	}
	for (const struct sl_ctl_json *m = v->child; m; m = m->next) {
		if (strncmp(m->key, "table_", 6) == 0 && m->child != NULL) {
			sl_ctl_table_add(t, m->key + 6);
			for (unsigned k = 0; k < SL_ARRAY_SIZE(keys); k++) {
				fmt_member(m, keys[k], buf, sizeof(buf));
				sl_ctl_table_add(t, buf[0] ? buf : "-");
			}
			rows++;
			continue;
		}
		if (m->child != NULL) {
			/* The path records (docs/ffp.md): one line, "key value" pairs. */
			char line[512];
			size_t used = 0;
			line[0] = '\0';
			for (const struct sl_ctl_json *c = m->child; c && used < sizeof(line);
			     c = c->next) {
				fmt_value(c, buf, sizeof(buf));
				int w = snprintf(line + used, sizeof(line) - used, "%s%s %s",
						 used ? ", " : "", c->key, buf);
				if (w < 0)
					break;
				used += (size_t)w;
			}
			sl_ctl_table_addf(kv, "%s:", m->key);
			sl_ctl_table_add(kv, line);
			continue;
		}
		fmt_value(m, buf, sizeof(buf));
		sl_ctl_table_addf(kv, "%s:", m->key);
		sl_ctl_table_add(kv, buf);
	}
	sl_ctl_table_print(kv, stdout, 0);
	if (rows) {
		printf("\n");
		sl_ctl_table_print(t, stdout, 0);
	}
	sl_ctl_table_destroy(kv);
	sl_ctl_table_destroy(t);
}

static void
stats_drops(const struct sl_ctl_json *v)
{
	static const char *const heads[] = {"reason", "packets"};
	struct sl_ctl_table *t;
	char buf[64];

	if (sl_ctl_table_create(heads, 2, "lr", &t) < 0)
		return;
	for (const struct sl_ctl_json *m = v->child; m; m = m->next) {
		if (strcmp(m->key, "total") == 0)
			continue;
		sl_ctl_table_add(t, m->key);
		fmt_value(m, buf, sizeof(buf));
		sl_ctl_table_add(t, buf);
	}
	if (sl_ctl_json_get(v, "total")) {
		sl_ctl_table_add(t, "total");
		fmt_member(v, "total", buf, sizeof(buf));
		sl_ctl_table_add(t, buf);
	}
	sl_ctl_table_print(t, stdout, 0);
	sl_ctl_table_destroy(t);
}

static void
stats_datapath(const struct sl_ctl_json *v)
{
	uint64_t packets = sl_ctl_json_get_u64(v, "packets", 0);
	uint64_t bursts = sl_ctl_json_get_u64(v, "bursts", 0);
	uint64_t cycles = sl_ctl_json_get_u64(v, "busy_cycles", 0);
	uint64_t iter = sl_ctl_json_get_u64(v, "iterations", 0);
	uint64_t busy = sl_ctl_json_get_u64(v, "busy_rounds", 0);
	char cpp[32] = "-", burst[32] = "-", pct[32] = "-";
	const char *extra[6] = {"cycles/packet", cpp, "mean burst", burst, "busy rounds", pct};

	/* Derived: busy_cycles / packets is the datapath's cost per packet. */
	if (packets) {
		snprintf(cpp, sizeof(cpp), "%.1f", (double)cycles / packets);
		if (bursts)
			snprintf(burst, sizeof(burst), "%.1f", (double)packets / bursts);
	}
	if (iter)
		snprintf(pct, sizeof(pct), "%.1f%%", 100.0 * busy / iter);
	print_kv_extra(v, extra, 3);
}

static void
stats_latency(const struct sl_ctl_json *v)
{
	static const char *const heads[] = {"class", "count", "mean",  "p50",
					    "p90",   "p99",   "p99.9", "max"};
	static const char *const keys[] = {"mean_ns", "p50_ns",  "p90_ns",
					   "p99_ns",  "p999_ns", "max_ns"};
	struct sl_ctl_table *t;
	char buf[64];

	if (sl_ctl_table_create(heads, 8, "lrrrrrrr", &t) < 0)
		return;
	for (const struct sl_ctl_json *c = v->child; c; c = c->next) {
		if (c->type != SL_CTL_JSON_OBJECT)
			continue;
		sl_ctl_table_add(t, c->key);
		fmt_member(c, "count", buf, sizeof(buf));
		sl_ctl_table_add(t, buf);
		for (unsigned k = 0; k < SL_ARRAY_SIZE(keys); k++) {
			uint64_t ns;
			if (sl_ctl_json_u64(sl_ctl_json_get(c, keys[k]), &ns))
				fmt_ns(ns, buf, sizeof(buf));
			else
				snprintf(buf, sizeof(buf), "-");
			sl_ctl_table_add(t, buf);
		}
	}
	sl_ctl_table_print(t, stdout, 0);
	sl_ctl_table_destroy(t);
}

static const struct stats_section {
	const char *what;
	const char *cmd;
	void (*print)(const struct sl_ctl_json *v);
} sections[] = {
	{"info", "/sluice/info", stats_info},
	{"ports", "/sluice/ports", stats_ports},
	{"tables", "/sluice/tables", stats_tables},
	{"drops", "/sluice/drops", stats_drops},
	{"datapath", "/sluice/datapath", stats_datapath},
	{"latency", "/sluice/latency", stats_latency},
	{"controller", "/sluice/controller", NULL}, /* key/value */
	{"flow_cache", "/sluice/flow_cache", NULL}, /* key/value */
	{"ffp", "/sluice/ffp", stats_ffp},          /* fast forwarding path */
};

int
cmd_stats(const struct cmd_call *a)
{
	const char *what = a->argc ? a->argv[0] : "all";
	struct sl_ctl_tel *t;
	int ex, worst = 0;
	bool all = strcmp(what, "all") == 0, found = false;

	for (unsigned i = 0; i < SL_ARRAY_SIZE(sections); i++)
		found |= strcmp(sections[i].what, what) == 0;
	if (!all && !found)
		return usage_error("stats: unknown section '%s' (expected ports, tables, drops, "
				   "datapath, latency, controller, flow_cache, ffp, info or all)",
				   what);
	if ((ex = tel_connect(&t)) != 0)
		return ex;
	if (o.json && all)
		sl_ctl_jw_object_begin(&jw, NULL);
	for (unsigned i = 0; i < SL_ARRAY_SIZE(sections); i++) {
		const struct stats_section *s = &sections[i];
		struct sl_ctl_json_doc *doc;
		const struct sl_ctl_json *v;

		if (!all && strcmp(s->what, what) != 0)
			continue;
		if (all && strcmp(s->what, "ffp") == 0)
			continue; /* only on request: 'stats all' keeps its sections */
		ex = tel_get(t, s->cmd, NULL, &doc, &v);
		if (ex) {
			worst = worst ? worst : ex;
			if (ex == EXIT_UNREACHABLE)
				break;
			continue;
		}
		if (o.json) {
			sl_ctl_jw_json(&jw, all ? s->what : NULL, v);
		} else {
			if (all)
				printf("%s== %s ==\n", i ? "\n" : "", s->what);
			if (s->print)
				s->print(v);
			else
				print_kv(v);
		}
		sl_ctl_json_free(doc);
	}
	if (o.json && all)
		sl_ctl_jw_object_end(&jw);
	sl_ctl_tel_close(t);
	return worst;
}

/*
 * monitor
 */

static volatile sig_atomic_t stop_signal;

static void
on_stop(int sig)
{
	stop_signal = sig;
}

/* One sample of the counters monitor shows. */
struct sample {
	double t; /* monotonic seconds */
	struct sl_ctl_json_doc *info, *ports, *tables, *drops, *dp;
	const struct sl_ctl_json *vinfo, *vports, *vtables, *vdrops, *vdp;
};

static void
sample_free(struct sample *s)
{
	sl_ctl_json_free(s->info);
	sl_ctl_json_free(s->ports);
	sl_ctl_json_free(s->tables);
	sl_ctl_json_free(s->drops);
	sl_ctl_json_free(s->dp);
	memset(s, 0, sizeof(*s));
}

static int
sample_take(struct sl_ctl_tel *t, struct sample *s)
{
	int ex;

	memset(s, 0, sizeof(*s));
	s->t = mono_now();
	if ((ex = tel_get(t, "/sluice/info", NULL, &s->info, &s->vinfo)) ||
	    (ex = tel_get(t, "/sluice/ports", NULL, &s->ports, &s->vports)) ||
	    (ex = tel_get(t, "/sluice/tables", NULL, &s->tables, &s->vtables)) ||
	    (ex = tel_get(t, "/sluice/drops", NULL, &s->drops, &s->vdrops)) ||
	    (ex = tel_get(t, "/sluice/datapath", NULL, &s->dp, &s->vdp))) {
		sample_free(s);
		return ex;
	}
	return 0;
}

/* Rate of counter @key of @now vs @then over @dt seconds; 0 when it went backwards. */
static double
rate(const struct sl_ctl_json *now, const struct sl_ctl_json *then, const char *key, double dt)
{
	uint64_t a = sl_ctl_json_get_u64(now, key, 0), b = sl_ctl_json_get_u64(then, key, 0);

	return a >= b && dt > 0 ? (double)(a - b) / dt : 0;
}

static void
monitor_print(const struct sample *cur, const struct sample *prev, bool tty)
{
	const struct sl_ctl_json *rows[1024];
	double dt = cur->t - prev->t;
	char a[32], b[32], c[32], d[32], e[32], name[32], when[64];
	time_t now = time(NULL);
	struct tm tm;
	size_t n;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	fmt_member(cur->vinfo, "name", name, sizeof(name));
	fmt_uptime(sl_ctl_json_get_u64(cur->vinfo, "uptime_ms", 0), a, sizeof(a));
	fmt_member(cur->vinfo, "datapath_id", b, sizeof(b));
	printf("%s  dpid %s  up %s  %s%s\n", name, b, a, when, tty ? "  (q: quit)" : "");

	printf("\n%4s %-15s %9s %9s %9s %9s %10s\n", "PORT", "NAME", "RX pps", "RX Mbps", "TX pps",
	       "TX Mbps", "TX drop/s");
	n = sorted_entries(cur->vports, rows, SL_ARRAY_SIZE(rows));
	for (size_t i = 0; i < n; i++) {
		const struct sl_ctl_json *p = rows[i];
		const struct sl_ctl_json *q = sl_ctl_json_get(prev->vports, p->key);
		char key[8];

		sl_ctl_sanitize(key, sizeof(key), p->key, strlen(p->key));
		fmt_member(p, "name", name, sizeof(name));
		sl_ctl_fmt_si(rate(p, q, "rx_packets", dt), a, sizeof(a));
		snprintf(b, sizeof(b), "%.1f", rate(p, q, "rx_bytes", dt) * 8 / 1e6);
		sl_ctl_fmt_si(rate(p, q, "tx_packets", dt), c, sizeof(c));
		snprintf(d, sizeof(d), "%.1f", rate(p, q, "tx_bytes", dt) * 8 / 1e6);
		sl_ctl_fmt_si(rate(p, q, "tx_dropped", dt), e, sizeof(e));
		printf("%4s %-15.15s %9s %9s %9s %9s %10s\n", key, name, a, b, c, d, e);
	}

	printf("\n%5s %-15s %8s %10s %10s\n", "TABLE", "NAME", "FLOWS", "LOOKUP/s", "MATCH/s");
	n = sorted_entries(cur->vtables, rows, SL_ARRAY_SIZE(rows));
	for (size_t i = 0; i < n; i++) {
		const struct sl_ctl_json *p = rows[i];
		const struct sl_ctl_json *q = sl_ctl_json_get(prev->vtables, p->key);
		char key[8];

		sl_ctl_sanitize(key, sizeof(key), p->key, strlen(p->key));
		fmt_member(p, "name", name, sizeof(name));
		fmt_member(p, "flows", c, sizeof(c));
		sl_ctl_fmt_si(rate(p, q, "lookups", dt), a, sizeof(a));
		sl_ctl_fmt_si(rate(p, q, "matched", dt), b, sizeof(b));
		printf("%5s %-15.15s %8s %10s %10s\n", key, name[0] ? name : "-", c, a, b);
	}

	{
		/* Drops per second by reason, non-zero ones on as few lines as fit 80 columns. */
		size_t col = printf("\nDROPS/s:");
		bool any = false;
		for (const struct sl_ctl_json *m = cur->vdrops->child; m; m = m->next) {
			double r;
			char item[64], key[32];
			if (strcmp(m->key, "total") == 0 || m->type != SL_CTL_JSON_NUMBER)
				continue;
			r = rate(cur->vdrops, prev->vdrops, m->key, dt);
			if (r <= 0)
				continue;
			sl_ctl_sanitize(key, sizeof(key), m->key, m->key_len);
			snprintf(item, sizeof(item), " %s %s", key, sl_ctl_fmt_si(r, a, sizeof(a)));
			if (col + strlen(item) > 79) {
				printf("\n        ");
				col = 8;
			}
			col += (size_t)printf("%s", item);
			any = true;
		}
		printf("%s\n", any ? "" : " none");
	}
	{
		/* Per-packet ratios from the counter deltas (dt = 1), not from rates, so
		 * the same counters always print the same figures. */
		double pk = rate(cur->vdp, prev->vdp, "packets", 1.0);
		double cy = rate(cur->vdp, prev->vdp, "busy_cycles", 1.0);
		double bu = rate(cur->vdp, prev->vdp, "bursts", 1.0);
		sl_ctl_fmt_si(rate(cur->vdp, prev->vdp, "packets", dt), a, sizeof(a));
		if (pk > 0)
			printf("DATAPATH: %s pkt/s, %.1f cycles/pkt, burst %.1f\n", a, cy / pk,
			       bu > 0 ? pk / bu : 0.0);
		else
			printf("DATAPATH: 0 pkt/s, - cycles/pkt (idle)\n");
	}
}

static void
monitor_json(const struct sample *cur, const struct sample *prev)
{
	const struct sl_ctl_json *rows[1024];
	double dt = cur->t - prev->t;
	size_t n;

	sl_ctl_jw_object_begin(&jw, NULL);
	sl_ctl_jw_double(&jw, "time", (double)time(NULL));
	sl_ctl_jw_double(&jw, "interval", dt);
	sl_ctl_jw_json(&jw, "name", sl_ctl_json_get(cur->vinfo, "name"));
	sl_ctl_jw_json(&jw, "datapath_id", sl_ctl_json_get(cur->vinfo, "datapath_id"));
	sl_ctl_jw_json(&jw, "uptime_ms", sl_ctl_json_get(cur->vinfo, "uptime_ms"));
	sl_ctl_jw_object_begin(&jw, "ports");
	n = sorted_entries(cur->vports, rows, SL_ARRAY_SIZE(rows));
	for (size_t i = 0; i < n; i++) {
		const struct sl_ctl_json *q = sl_ctl_json_get(prev->vports, rows[i]->key);
		sl_ctl_jw_object_begin(&jw, rows[i]->key);
		sl_ctl_jw_json(&jw, "name", sl_ctl_json_get(rows[i], "name"));
		sl_ctl_jw_double(&jw, "rx_pps", rate(rows[i], q, "rx_packets", dt));
		sl_ctl_jw_double(&jw, "rx_mbps", rate(rows[i], q, "rx_bytes", dt) * 8 / 1e6);
		sl_ctl_jw_double(&jw, "tx_pps", rate(rows[i], q, "tx_packets", dt));
		sl_ctl_jw_double(&jw, "tx_mbps", rate(rows[i], q, "tx_bytes", dt) * 8 / 1e6);
		sl_ctl_jw_double(&jw, "tx_dropped_pps", rate(rows[i], q, "tx_dropped", dt));
		sl_ctl_jw_object_end(&jw);
	}
	sl_ctl_jw_object_end(&jw);
	sl_ctl_jw_object_begin(&jw, "tables");
	n = sorted_entries(cur->vtables, rows, SL_ARRAY_SIZE(rows));
	for (size_t i = 0; i < n; i++) {
		const struct sl_ctl_json *q = sl_ctl_json_get(prev->vtables, rows[i]->key);
		sl_ctl_jw_object_begin(&jw, rows[i]->key);
		sl_ctl_jw_json(&jw, "name", sl_ctl_json_get(rows[i], "name"));
		sl_ctl_jw_json(&jw, "flows", sl_ctl_json_get(rows[i], "flows"));
		sl_ctl_jw_double(&jw, "lookups_per_sec", rate(rows[i], q, "lookups", dt));
		sl_ctl_jw_double(&jw, "matched_per_sec", rate(rows[i], q, "matched", dt));
		sl_ctl_jw_object_end(&jw);
	}
	sl_ctl_jw_object_end(&jw);
	sl_ctl_jw_object_begin(&jw, "drops_per_sec");
	for (const struct sl_ctl_json *m = cur->vdrops->child; m; m = m->next)
		if (m->type == SL_CTL_JSON_NUMBER && m->key_len == strlen(m->key))
			sl_ctl_jw_double(&jw, m->key, rate(cur->vdrops, prev->vdrops, m->key, dt));
	sl_ctl_jw_object_end(&jw);
	{
		double pk = rate(cur->vdp, prev->vdp, "packets", dt);
		double cy = rate(cur->vdp, prev->vdp, "busy_cycles", dt);
		sl_ctl_jw_object_begin(&jw, "datapath");
		sl_ctl_jw_double(&jw, "packets_per_sec", pk);
		if (pk > 0)
			sl_ctl_jw_double(&jw, "cycles_per_packet", cy / pk);
		else
			sl_ctl_jw_null(&jw, "cycles_per_packet");
		sl_ctl_jw_object_end(&jw);
	}
	sl_ctl_jw_object_end(&jw);
}

/* Sleep @sec seconds unless a stop signal (or 'q' on a tty) comes first; false to stop. */
static bool
monitor_sleep(double sec, bool tty)
{
	double end = mono_now() + sec;

	while (!stop_signal) {
		double left = end - mono_now();
		struct timespec ts;

		if (left <= 0)
			return true;
		if (tty) {
			/* Poll stdin for 'q' in 100 ms steps. */
			fd_set rfds;
			struct timeval tv = {0, (suseconds_t)(SL_MIN(left, 0.1) * 1e6)};
			char ch;
			FD_ZERO(&rfds);
			FD_SET(STDIN_FILENO, &rfds);
			if (select(STDIN_FILENO + 1, &rfds, NULL, NULL, &tv) > 0 &&
			    read(STDIN_FILENO, &ch, 1) == 1 && (ch == 'q' || ch == 'Q'))
				return false;
			continue;
		}
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
	return false;
}

static struct termios saved_tio;
static bool tio_saved;
static bool cursor_hidden;

static void
terminal_restore(void)
{
	/* Cursor back on, and the terminal's line mode as it was. */
	if (cursor_hidden) {
		fputs("\033[?25h", stdout);
		fflush(stdout);
		cursor_hidden = false;
	}
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	tio_saved = false;
}

int
cmd_monitor(const struct cmd_call *a)
{
	struct sample prev, cur;
	struct sl_ctl_tel *t;
	struct sigaction sa;
	double interval = 1.0;
	uint64_t count = 0, done = 0;
	bool tty = !o.json && isatty(STDOUT_FILENO);
	int ex;

	(void)a;
	if (o.interval && !parse_seconds(o.interval, 0.1, 3600, &interval))
		return usage_error("monitor: bad --interval '%s' (expected 0.1..3600 seconds)",
				   o.interval);
	if (o.count && !parse_u64(o.count, 1, UINT32_MAX, &count))
		return usage_error("monitor: bad --count '%s' (expected a positive integer)",
				   o.count);
	if ((ex = tel_connect(&t)) != 0)
		return ex;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a signal ends the sleep at once. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (tty) {
		if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
			struct termios raw = saved_tio;
			/* Keys without Enter and without echo; ISIG keeps Ctrl-C a signal. */
			raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
			raw.c_cc[VMIN] = 0;
			raw.c_cc[VTIME] = 0;
			if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0)
				tio_saved = true;
		}
		fputs("\033[?25l", stdout);
		cursor_hidden = true;
		atexit(terminal_restore);
	}
	if (o.json)
		sl_ctl_jw_array_begin(&jw, NULL);

	if ((ex = sample_take(t, &prev)) != 0)
		goto out;
	while (!stop_signal && (count == 0 || done < count)) {
		if (!monitor_sleep(interval, tty))
			break;
		if ((ex = sample_take(t, &cur)) != 0)
			break;
		if (o.json) {
			monitor_json(&cur, &prev);
		} else {
			if (tty)
				fputs("\033[H\033[J", stdout); /* home, clear to the end */
			else if (done)
				fputc('\n', stdout);
			monitor_print(&cur, &prev, tty);
		}
		fflush(stdout);
		sample_free(&prev);
		prev = cur;
		done++;
	}
	sample_free(&prev);
out:
	if (o.json)
		sl_ctl_jw_array_end(&jw);
	if (tty)
		terminal_restore();
	sl_ctl_tel_close(t);
	return ex;
}
