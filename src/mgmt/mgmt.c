/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mgmt: telemetry commands served by the control thread.  Control path only.
 *
 * Layout: the request mailbox (telemetry threads <-> control thread), then
 * one handler per command, then the command table and registration.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ring.h>
#include <rte_telemetry.h>
#include <rte_version.h>

#include "sl_config.h"
#include "../capture/capture.h"
#include "../flowfile/flowfile.h"
#include "../log/log.h"
#include "../stats/stats.h"
#include "mgmt.h"

#define WORKERS_LISTED_MAX 24 /* /sluice/workers: about 450 bytes per worker */
#define REQUEST_TIMEOUT_S 2
#define PORT_REQUEST_TIMEOUT_S 10 /* adding a port probes a device: seconds for some PMDs */

typedef int (*handler_fn)(const char *params, struct rte_tel_data *d, char *err, size_t err_size);

struct sl_mgmt {
	struct sl_mgmt_params p;
	struct sl_stats_src src; /* the same parts, for the counter readers */
	uint64_t start_tsc;
	uint64_t lat_mult;
	/* Mailbox: one request at a time (req_lock), handed over under lock. */
	pthread_mutex_t req_lock;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int pending; /* a request waits for the control thread (atomic reads) */
	bool done;
	bool closed;
	handler_fn req_fn;
	const char *req_params;
	struct rte_tel_data *req_data;
	/* Capture (control thread). */
	struct sl_capture *cap;
	struct sl_capture_status cap_last; /* of the last capture, once it ended */
	bool cap_any;
	/* Live trace (control thread). */
	struct sl_trace_live *live; /* the recorder, kept after it is full until stop */
	bool live_published;        /* the workers have it */
	unsigned live_id;
};

static struct sl_mgmt mgmt_instance;
static struct sl_mgmt *mgmt; /* NULL until created */

/* ---- Helpers ---- */

static void
dict_u64(struct rte_tel_data *d, const char *k, uint64_t v)
{
	rte_tel_data_add_dict_u64(d, k, v);
}

/* Telemetry names allow only letters, digits, '_' and '/': "table-miss" -> "table_miss". */
static const char *
tel_key(const char *name, char *buf, size_t size)
{
	size_t i;

	for (i = 0; name[i] != '\0' && i + 1 < size; i++)
		buf[i] = name[i] == '-' || name[i] == '.' ? '_' : name[i];
	buf[i] = '\0';
	return buf;
}

static int
parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s == '\0' || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end != '\0' || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static void
port_summary(struct rte_tel_data *c, unsigned i)
{
	struct sl_stats_port ps;

	sl_stats_port_read(&mgmt->src, i, &ps);
	rte_tel_data_add_dict_string(c, "name", mgmt->p.ports[i].name);
	dict_u64(c, "link", ps.link.up);
	dict_u64(c, "live", ps.live);
	dict_u64(c, "rx_packets", ps.sw.rx_packets);
	dict_u64(c, "rx_bytes", ps.sw.rx_bytes);
	dict_u64(c, "tx_packets", ps.sw.tx_packets);
	dict_u64(c, "tx_bytes", ps.sw.tx_bytes);
	dict_u64(c, "tx_dropped", ps.sw.tx_drops);
	dict_u64(c, "rx_missed", ps.hw.imissed);
}

static void
table_summary(struct rte_tel_data *c, const struct sl_stats_table *ts)
{
	rte_tel_data_add_dict_string(c, "kind", sl_table_kind_name(ts->spec->kind));
	rte_tel_data_add_dict_string(c, "name", ts->spec->name);
	dict_u64(c, "flows", ts->flows);
	dict_u64(c, "lookups", ts->hits.lookups);
	dict_u64(c, "matched", ts->hits.matched);
	dict_u64(c, "missed", ts->hits.missed);
}

static void
latency_summary(struct rte_tel_data *c, const struct sl_lat_hist *h)
{
	dict_u64(c, "count", h->count);
	dict_u64(c, "mean_ns", h->count ? h->sum_ns / h->count : 0);
	dict_u64(c, "max_ns", h->max_ns);
	dict_u64(c, "p50_ns", sl_lat_hist_quantile_ns(h, 0.50));
	dict_u64(c, "p90_ns", sl_lat_hist_quantile_ns(h, 0.90));
	dict_u64(c, "p99_ns", sl_lat_hist_quantile_ns(h, 0.99));
	dict_u64(c, "p999_ns", sl_lat_hist_quantile_ns(h, 0.999));
}

/* ---- Capture (control thread) ---- */

static void
capture_end(void)
{
	if (mgmt->cap == NULL)
		return;
	sl_worker_capture_set(mgmt->p.worker, NULL); /* waits until the worker let go */
	sl_capture_close(mgmt->cap, &mgmt->cap_last);
	mgmt->cap = NULL;
	mgmt->cap_any = true;
}

static void
capture_status_fill(struct rte_tel_data *d)
{
	struct sl_capture_status st;

	if (mgmt->cap != NULL) {
		sl_capture_status(mgmt->cap, &st);
	} else if (mgmt->cap_any) {
		st = mgmt->cap_last;
	} else {
		rte_tel_data_add_dict_string(d, "state", "idle");
		return;
	}
	rte_tel_data_add_dict_string(
		d, "state",
		mgmt->cap == NULL ? (st.state == SL_CAPTURE_DONE ? "done" : "stopped")
				  : (st.state == SL_CAPTURE_RUNNING ? "running" : "done"));
	/* port and port_name: the first port (one-port clients read these); ports: all. */
	dict_u64(d, "port", st.port_nos[0]);
	const struct sl_port *cport = sl_port_get(mgmt->p.ports, st.port_nos[0]);
	if (cport != NULL)
		rte_tel_data_add_dict_string(d, "port_name", cport->name);
	struct rte_tel_data *ports = rte_tel_data_alloc();
	if (ports != NULL) {
		rte_tel_data_start_array(ports, RTE_TEL_U64_VAL);
		for (unsigned i = 0; i < st.n_ports; i++)
			rte_tel_data_add_array_u64(ports, st.port_nos[i]);
		rte_tel_data_add_dict_container(d, "ports", ports, 0);
	}
	rte_tel_data_add_dict_string(d, "filter", st.filter);
	rte_tel_data_add_dict_string(d, "dir", sl_capture_dir_name(st.dir));
	rte_tel_data_add_dict_string(d, "file", st.path);
	dict_u64(d, "count", st.max_packets);
	dict_u64(d, "bytes", st.max_bytes);
	dict_u64(d, "snaplen", st.snaplen);
	dict_u64(d, "captured", st.captured);
	dict_u64(d, "written_bytes", st.written_bytes);
	dict_u64(d, "dropped", st.dropped);
	dict_u64(d, "filtered", st.filtered);
}

/* ---- Handlers (control thread) ---- */

static int
h_info(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	unsigned used = 0;
	char dpid[20] = "";

	(void)params, (void)err, (void)err_size;
	for (int t = 0; t <= sl_pipeline_last_table(mgmt->p.pl); t++) {
		struct sl_stats_table ts;
		used += sl_stats_table_read(&mgmt->src, (unsigned)t, false, &ts);
	}
	if (mgmt->p.sw != NULL)
		snprintf(dpid, sizeof(dpid), "%016" PRIx64, sl_ofswitch_datapath_id(mgmt->p.sw));
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", mgmt->p.name);
	rte_tel_data_add_dict_string(d, "version", SL_VERSION);
	rte_tel_data_add_dict_string(d, "dpdk", rte_version());
	dict_u64(d, "pid", (uint64_t)getpid());
	rte_tel_data_add_dict_string(d, "datapath_id", dpid);
	dict_u64(d, "uptime_ms", (rte_rdtsc() - mgmt->start_tsc) * 1000 / rte_get_tsc_hz());
	dict_u64(d, "n_ports", sl_port_count(mgmt->p.ports));
	dict_u64(d, "n_tables_used", used);
	dict_u64(d, "n_flows", sl_pipeline_flow_count(mgmt->p.pl, 255));
	dict_u64(d, "n_groups", sl_pipeline_group_count(mgmt->p.pl));
	dict_u64(d, "workers", sl_worker_group_size(mgmt->p.worker));
	dict_u64(d, "burst", sl_worker_burst(mgmt->p.worker));
	dict_u64(d, "tsc_hz", rte_get_tsc_hz());
	rte_tel_data_add_dict_string(d, "fail_mode", mgmt->p.fail_mode);
	rte_tel_data_add_dict_string(d, "mgmt", mgmt->p.mgmt_target ? mgmt->p.mgmt_target : "");
	dict_u64(d, "controllers_configured", mgmt->p.n_controllers);
	dict_u64(d, "controllers_connected",
		 mgmt->p.sw != NULL ? sl_ofswitch_n_controllers(mgmt->p.sw) : 0);
	return 0;
}

static int
h_ports(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	char key[16];

	(void)params, (void)err, (void)err_size;
	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < SL_PORT_SLOTS; i++) {
		struct rte_tel_data *c;
		if (mgmt->p.ports[i].of_no == 0)
			continue;
		if ((c = rte_tel_data_alloc()) == NULL)
			break;
		rte_tel_data_start_dict(c);
		port_summary(c, i);
		sl_port_no_format(mgmt->p.ports[i].of_no, key, sizeof(key));
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
	return 0;
}

static int
h_port(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	const struct sl_worker_port_stats *ps;
	struct sl_port_hw_stats hw;
	struct sl_port_link link;
	const struct sl_port *port;
	int slot;
	char mac[24];

	struct sl_worker_port_stats ctrl;

	if (params != NULL && strcmp(params, "controller") == 0) {
		sl_worker_ctrl_read(mgmt->p.worker, &ctrl);
		ps = &ctrl;
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_string(d, "name", "controller");
		dict_u64(d, "rx_packets", ps->rx_packets);
		dict_u64(d, "rx_bytes", ps->rx_bytes);
		dict_u64(d, "tx_packets", ps->tx_packets);
		dict_u64(d, "tx_bytes", ps->tx_bytes);
		dict_u64(d, "tx_dropped", ps->tx_drops);
		return 0;
	}
	slot = params != NULL ? sl_port_find(mgmt->p.ports, params) : -ENOENT;
	if (slot < 0) {
		snprintf(err, err_size,
			 "no port '%s' (a port number or name, LOCAL, or 'controller')",
			 params ? params : "");
		return -EINVAL;
	}
	port = &mgmt->p.ports[slot];
	sl_port_hw_stats(port, &hw);
	sl_port_link(port, &link);
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", port->mac[0], port->mac[1],
		 port->mac[2], port->mac[3], port->mac[4], port->mac[5]);
	rte_tel_data_start_dict(d);
	dict_u64(d, "port_no", port->of_no);
	port_summary(d, (unsigned)slot);
	rte_tel_data_add_dict_string(d, "devargs", port->devargs);
	rte_tel_data_add_dict_string(d, "mac", mac);
	dict_u64(d, "speed_mbps", link.speed_mbps);
	dict_u64(d, "dev_ipackets", hw.ipackets);
	dict_u64(d, "dev_opackets", hw.opackets);
	dict_u64(d, "dev_ibytes", hw.ibytes);
	dict_u64(d, "dev_obytes", hw.obytes);
	dict_u64(d, "dev_imissed", hw.imissed);
	dict_u64(d, "dev_ierrors", hw.ierrors);
	dict_u64(d, "dev_oerrors", hw.oerrors);
	dict_u64(d, "dev_rx_nombuf", hw.rx_nombuf);
	return 0;
}

static int
h_tables(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	char key[16];

	(void)params, (void)err, (void)err_size;
	rte_tel_data_start_dict(d);
	for (int t = 0; t <= sl_pipeline_last_table(mgmt->p.pl); t++) {
		struct sl_stats_table ts;
		struct rte_tel_data *c;

		if (!sl_stats_table_read(&mgmt->src, (unsigned)t, false, &ts))
			continue;
		c = rte_tel_data_alloc();
		if (c == NULL)
			break;
		rte_tel_data_start_dict(c);
		table_summary(c, &ts);
		snprintf(key, sizeof(key), "%d", t);
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
	return 0;
}

static int
h_table(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	struct sl_stats_table ts;
	uint64_t t;
	char spec[256];

	if (parse_uint(params, 254, &t) < 0) {
		snprintf(err, err_size, "no table '%s' (tables are 0..254)", params ? params : "");
		return -EINVAL;
	}
	sl_stats_table_read(&mgmt->src, (unsigned)t, true, &ts);
	sl_table_spec_format(ts.spec, spec, sizeof(spec));
	rte_tel_data_start_dict(d);
	dict_u64(d, "table_id", t);
	table_summary(d, &ts);
	rte_tel_data_add_dict_string(d, "spec", spec);
	dict_u64(d, "declared", sl_pipeline_table_declared(mgmt->p.pl, (unsigned)t));
	dict_u64(d, "max_entries", ts.spec->max_entries);
	dict_u64(d, "entries", ts.store.n_entries);
	dict_u64(d, "mem_bytes", ts.store.mem_bytes);
	dict_u64(d, "groups", ts.store.n_groups);
	dict_u64(d, "rebuilds", ts.store.n_rebuilds);
	dict_u64(d, "rebuild_pending", sl_pipeline_table_rebuilding(mgmt->p.pl, (unsigned)t));
	dict_u64(d, "search_ns", ts.search_cycles * 1000000000u / rte_get_tsc_hz());
	if (ts.is_state) {
		dict_u64(d, "state_capacity", ts.state.capacity);
		dict_u64(d, "state_hits", ts.state.hits);
		dict_u64(d, "state_inserts", ts.state.inserts);
		dict_u64(d, "state_expired", ts.state.expired);
		dict_u64(d, "state_evicted", ts.state.evicted);
		dict_u64(d, "state_refused", ts.state.refused);
		dict_u64(d, "state_foreign", ts.state.foreign);
	}
	return 0;
}

static int
h_drops(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	uint64_t drops[SL_DROP__MAX], total = 0;
	char key[32];

	(void)params, (void)err, (void)err_size;
	sl_stats_drops_read(&mgmt->src, drops);
	rte_tel_data_start_dict(d);
	for (unsigned r = 0; r < SL_DROP__MAX; r++) {
		dict_u64(d, tel_key(sl_drop_reason_name(r), key, sizeof(key)), drops[r]);
		total += drops[r];
	}
	dict_u64(d, "total", total);
	return 0;
}

static int
h_datapath(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	struct sl_stats_datapath dp;

	(void)params, (void)err, (void)err_size;
	sl_stats_datapath_read(&mgmt->src, &dp);
	rte_tel_data_start_dict(d);
	dict_u64(d, "workers", dp.workers);
	dict_u64(d, "iterations", dp.loop.iterations);
	dict_u64(d, "busy_rounds", dp.loop.busy_rounds);
	dict_u64(d, "busy_cycles", dp.loop.busy_cycles);
	dict_u64(d, "bursts", dp.loop.bursts);
	dict_u64(d, "packets", dp.loop.packets);
	dict_u64(d, "copies", dp.copies);
	dict_u64(d, "tsc_hz", dp.tsc_hz);
	dict_u64(d, "cache_hits", dp.cache_hits);
	dict_u64(d, "cache_misses", dp.cache_misses);
	dict_u64(d, "chain_installed", dp.chain_installed);
	dict_u64(d, "chain_traversed", dp.chain_traversed);
	dict_u64(d, "idle_sleep_max_us", dp.idle_sleep_max_us);
	dict_u64(d, "idle_sleeps", dp.idle_sleeps);
	dict_u64(d, "idle_slept_ns", dp.idle_slept_ns);
	dict_u64(d, "search_budget_pct", dp.budget.share_pct);
	dict_u64(d, "search_budget_cost_ns", dp.budget.cost_ns);
	dict_u64(d, "search_budget_searches", dp.budget_stats.searches);
	dict_u64(d, "search_budget_cycles", dp.budget_stats.cycles);
	dict_u64(d, "search_budget_refused", dp.budget_stats.refused);
	return 0;
}

static int
h_fwd(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	const struct sl_worker *w = mgmt->p.worker;
	const struct sl_fwd_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned n_ctxs = sl_worker_fwd_ctxs(w, ctxs, SL_DISPATCH_WORKERS_MAX);
	struct sl_fwd_params fp;
	struct sl_fwd_stats st;
	char modes[64] = "openflow", key[48];

	(void)params;
	if (sl_worker_fwd(w) == NULL) {
		snprintf(err, err_size, "forwarding modes are not set up");
		return -1;
	}
	sl_fwd_get(sl_worker_fwd(w), &fp);
	sl_fwd_stats_read(ctxs, n_ctxs, &st);
	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < fp.n_modes; i++) {
		const char *name = sl_fwd_engine_get(fp.modes[i].mode)->name;
		size_t len = strlen(modes);
		snprintf(modes + len, sizeof(modes) - len, "+%s", name);
		snprintf(key, sizeof(key), "%s_tag", name);
		dict_u64(d, key, fp.modes[i].tag);
		if (fp.modes[i].mode == SL_FWD_HYPERCUBE) {
			dict_u64(d, "hypercube_addr", fp.modes[i].hc.addr);
			dict_u64(d, "hypercube_neighbors", fp.modes[i].hc.n_neigh);
		} else if (fp.modes[i].mode == SL_FWD_KEYFLOW) {
			dict_u64(d, "keyflow_key", fp.modes[i].kf.key);
		}
	}
	rte_tel_data_add_dict_string(d, "modes", modes);
	dict_u64(d, "changes", st.changes);
	for (unsigned m = 0; m < SL_FWD__MAX; m++) {
		const char *name = sl_fwd_engine_get(m)->name;
		snprintf(key, sizeof(key), "%s_packets", name);
		dict_u64(d, key, st.packets[m]);
		if (m == SL_FWD_OPENFLOW)
			continue;
		snprintf(key, sizeof(key), "%s_local", name);
		dict_u64(d, key, st.local[m]);
		snprintf(key, sizeof(key), "%s_drops", name);
		dict_u64(d, key, st.drops[m]);
	}
	dict_u64(d, "bursts_mixed", st.bursts_mixed);
	return 0;
}

static int
h_latency(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	(void)params, (void)err, (void)err_size;
	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < SL_STATS_LATENCY_CLASSES; i++) {
		const char *name = sl_stats_latency_class_names[i];
		struct rte_tel_data *c = rte_tel_data_alloc();
		struct sl_lat_hist h;
		if (c == NULL)
			break;
		sl_stats_latency_read(&mgmt->src, name, &h);
		rte_tel_data_start_dict(c);
		latency_summary(c, &h);
		rte_tel_data_add_dict_container(d, name, c, 0);
	}
	return 0;
}

/*
 * /sluice/ffp: the fast forwarding path (docs/telemetry.md).  Top
 * level: policy and per-class counts and percentiles; one container per
 * table the FFP knows ("table_N").
 */
static void
ffp_class(struct rte_tel_data *d, const char *name, uint64_t packets, const struct sl_ffp_hist *h)
{
	char key[48];

	snprintf(key, sizeof(key), "%s_packets", name);
	dict_u64(d, key, packets);
	snprintf(key, sizeof(key), "%s_mean_ns", name);
	dict_u64(d, key, h->count ? h->sum_ns / h->count : 0);
	snprintf(key, sizeof(key), "%s_p50_ns", name);
	dict_u64(d, key, sl_ffp_hist_quantile_ns(h, 0.50));
	snprintf(key, sizeof(key), "%s_p99_ns", name);
	dict_u64(d, key, sl_ffp_hist_quantile_ns(h, 0.99));
	snprintf(key, sizeof(key), "%s_p999_ns", name);
	dict_u64(d, key, sl_ffp_hist_quantile_ns(h, 0.999));
	snprintf(key, sizeof(key), "%s_max_ns", name);
	dict_u64(d, key, h->max_ns);
}

/* The flow cache's spec size and counters, as /sluice/flow_cache and /sluice/ffp's path show them. */
static void
path_counters(struct rte_tel_data *d, const struct sl_ffp_path_stats *ps)
{
	dict_u64(d, "tables", ps->n_tables);
	dict_u64(d, "key_bytes", ps->key_bytes);
	dict_u64(d, "entries", ps->entries);
	dict_u64(d, "hits", ps->hits);
	dict_u64(d, "misses", ps->misses);
	dict_u64(d, "inserts", ps->inserts);
	dict_u64(d, "stale", ps->stale);
	dict_u64(d, "evictions", ps->evictions);
}

/* The whole-pipeline flow cache: its spec, its adaptive state and counters over all workers. */
static int
h_flow_cache(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	const struct sl_pipeline_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned n_ctxs = sl_worker_ctxs(mgmt->p.worker, ctxs, SL_DISPATCH_WORKERS_MAX);
	struct sl_ffp_path_stats ps;
	uint64_t probes;

	(void)params, (void)err, (void)err_size;
	sl_pipeline_ffp_path_stats(mgmt->p.pl, ctxs, n_ctxs, &ps);
	probes = ps.hits + ps.misses;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "spec", sl_flow_cache_inactive_name(ps.inactive));
	/* Each worker's adaptive rule: on, or stepped aside (too few hits: probes 1 burst in 16). */
	rte_tel_data_add_dict_string(d, "policy",
				     ps.inactive != SL_FLOW_CACHE_ACTIVE ? "-"
				     : ps.probing == n_ctxs              ? "on"
				     : ps.probing == 0                   ? "stepped aside"
									 : "mixed");
	dict_u64(d, "workers", n_ctxs);
	dict_u64(d, "workers_on", ps.probing);
	path_counters(d, &ps);
	dict_u64(d, "capacity", ps.capacity);
	dict_u64(d, "hit_permille", probes ? ps.hits * 1000 / probes : 0);
	return 0;
}

static int
h_ffp(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	const struct sl_pipeline_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned n_ctxs = sl_worker_ctxs(mgmt->p.worker, ctxs, SL_DISPATCH_WORKERS_MAX);
	static struct sl_ffp_class_stats cs;
	struct sl_ffp_auto a;
	char key[24];

	(void)params, (void)err, (void)err_size;
	sl_pipeline_ffp_class_stats(ctxs, n_ctxs, &cs);
	sl_pipeline_ffp_auto_get(mgmt->p.pl, &a);
	rte_tel_data_start_dict(d);
	dict_u64(d, "auto_promotion", a.enabled);
	dict_u64(d, "auto_min_pps", a.min_pps);
	dict_u64(d, "auto_min_timeout", a.min_timeout);
	ffp_class(d, "low_latency", cs.packets[1], &cs.latency[1]);
	ffp_class(d, "normal", cs.packets[0], &cs.latency[0]);
	{
		struct sl_ffp_path_stats ps;
		struct rte_tel_data *c = rte_tel_data_alloc();

		sl_pipeline_ffp_path_stats(mgmt->p.pl, ctxs, n_ctxs, &ps);
		if (c != NULL) {
			rte_tel_data_start_dict(c);
			dict_u64(c, "probing_workers", ps.probing);
			path_counters(c, &ps);
			rte_tel_data_add_dict_container(d, "path", c, 0);
		}
	}
	for (int t = 0; t <= sl_pipeline_last_table(mgmt->p.pl); t++) {
		struct sl_ffp_table_info ti;
		struct sl_ffp_lut_stats ls;
		struct rte_tel_data *c;

		sl_pipeline_ffp_table_info(mgmt->p.pl, (unsigned)t, &ti);
		sl_pipeline_ffp_lut_stats(ctxs, n_ctxs, (unsigned)t, &ls);
		if (!ti.eligible && ti.n_ll == 0 && ls.inserts == 0)
			continue;
		c = rte_tel_data_alloc();
		if (c == NULL)
			break;
		rte_tel_data_start_dict(c);
		dict_u64(c, "eligible", ti.eligible);
		dict_u64(c, "pays", ti.pays);
		dict_u64(c, "active", ti.active);
		dict_u64(c, "adaptive", ti.adaptive);
		dict_u64(c, "adapt_permille", ti.adapt_permille);
		dict_u64(c, "low_latency_entries", ti.n_ll);
		dict_u64(c, "low_latency_plain_entries", ti.n_ll_plain);
		dict_u64(c, "search_ns", ti.search_ns);
		dict_u64(c, "probe_ns", ti.probe_ns);
		dict_u64(c, "entries", ls.entries);
		dict_u64(c, "hits", ls.hits);
		dict_u64(c, "misses", ls.misses);
		dict_u64(c, "inserts", ls.inserts);
		dict_u64(c, "verifications", ls.verifications);
		dict_u64(c, "invalidations", ls.invalidations);
		dict_u64(c, "replacements", ls.replacements);
		dict_u64(c, "evictions", ls.evictions);
		snprintf(key, sizeof(key), "table_%d", t);
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
	return 0;
}

static int
h_latency_histogram(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	struct sl_lat_hist h;
	char key[32];

	if (params == NULL || !sl_stats_latency_read(&mgmt->src, params, &h)) {
		snprintf(err, err_size, "no latency class '%s' (pipeline, packet_in)",
			 params ? params : "");
		return -EINVAL;
	}
	rte_tel_data_start_dict(d);
	for (unsigned b = 0; b < SL_LAT_BUCKETS; b++) {
		if (b + 1 < SL_LAT_BUCKETS)
			snprintf(key, sizeof(key), "le_%" PRIu64, sl_lat_bucket_edge_ns(b));
		else
			snprintf(key, sizeof(key), "le_inf");
		dict_u64(d, key, h.bucket[b]);
	}
	return 0;
}

static int
h_controller(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	struct sl_stats_controller c;
	const struct sl_ofswitch_stats *ss = &c.of;

	(void)params, (void)err, (void)err_size;
	sl_stats_controller_read(&mgmt->src, &c);
	rte_tel_data_start_dict(d);
	dict_u64(d, "packet_outs", c.port.rx_packets);
	dict_u64(d, "packet_ins_queued", c.port.tx_packets);
	dict_u64(d, "packet_ins_not_queued", c.port.tx_drops);
	dict_u64(d, "no_controller", c.pin_drops.no_controller);
	dict_u64(d, "rate_limited", c.pin_drops.rate_limited);
	dict_u64(d, "queue_full", c.pin_drops.queue_full);
	dict_u64(d, "no_mbuf", c.pin_drops.no_mbuf);
	dict_u64(d, "msgs_rx", ss->msgs_rx);
	dict_u64(d, "flow_mods", ss->flow_mods);
	dict_u64(d, "errors_sent", ss->errors_sent);
	dict_u64(d, "packet_ins_sent", ss->packet_ins_sent);
	dict_u64(d, "packet_ins_forwarded", ss->packet_ins_forwarded);
	dict_u64(d, "packet_ins_standalone", ss->packet_ins_standalone);
	dict_u64(d, "packet_ins_dropped", ss->packet_ins_dropped);
	dict_u64(d, "packet_in_drop_unwanted", ss->pin_drop_unwanted);
	dict_u64(d, "packet_in_drop_congested", ss->pin_drop_congested);
	dict_u64(d, "packet_in_drop_too_big", ss->pin_drop_too_big);
	dict_u64(d, "publishes", ss->publishes);
	dict_u64(d, "flows_expired", ss->flows_expired);
	dict_u64(d, "learned", ss->learned);
	dict_u64(d, "connections", c.connections);
	for (unsigned i = 0; i < c.connections && i < 32; i++) {
		char key[16], desc[RTE_TEL_MAX_STRING_LEN];
		snprintf(key, sizeof(key), "conn_%u", i);
		if (sl_ofswitch_connection(mgmt->p.sw, i, desc, sizeof(desc)) == 0)
			rte_tel_data_add_dict_string(d, key, desc);
	}
	return 0;
}

static int
h_capture(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	(void)params, (void)err, (void)err_size;
	rte_tel_data_start_dict(d);
	capture_status_fill(d);
	return 0;
}

/*
 * port=N[,port=M...][,dir=rx|tx|both][,file=PATH][,count=N][,bytes=N][,snaplen=N]
 * [,filter=EXPR]: the filter last, to the end (it may hold commas).
 */
static int
h_capture_start(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	struct sl_capture_params cp = {.dir = SL_CAPTURE_BOTH};
	char buf[768], path[256] = "", *filter;
	char *save = NULL, *kv;
	uint64_t v;
	int rc;

	if (mgmt->cap != NULL) {
		struct sl_capture_status st;
		sl_capture_status(mgmt->cap, &st);
		snprintf(err, err_size, "a capture is running (port %u into %s): stop it first",
			 st.port_nos[0], st.path);
		return -EBUSY;
	}
	if (params == NULL || strlen(params) >= sizeof(buf)) {
		snprintf(err, err_size,
			 "expected port=N[,port=M...][,dir=rx|tx|both][,file=PATH]"
			 "[,count=N][,bytes=N][,snaplen=N][,filter=EXPR]");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", params);
	filter = strncmp(buf, "filter=", 7) == 0 ? buf : strstr(buf, ",filter=");
	if (filter != NULL) {
		*filter = '\0';
		filter += filter == buf ? 7 : 8;
		cp.filter = filter;
	}
	for (kv = strtok_r(buf, ",", &save); kv != NULL; kv = strtok_r(NULL, ",", &save)) {
		char *val = strchr(kv, '=');
		if (val == NULL) {
			snprintf(err, err_size, "'%s': expected KEY=VALUE", kv);
			return -EINVAL;
		}
		*val++ = '\0';
		if (strcmp(kv, "port") == 0) {
			int slot = sl_port_find(mgmt->p.ports, val);
			if (slot < 0) {
				snprintf(err, err_size,
					 "port=%s: no such port (a port number or name)", val);
				return -EINVAL;
			}
			if (cp.n_ports == SL_CAPTURE_PORTS_MAX) {
				snprintf(err, err_size, "at most %u ports per capture",
					 SL_CAPTURE_PORTS_MAX);
				return -EINVAL;
			}
			const struct sl_port *cport = &mgmt->p.ports[slot];
			cp.ports[cp.n_ports++] =
				(struct sl_capture_port){.port_no = cport->of_no,
							 .dpdk_port = cport->dpdk_id,
							 .name = cport->name};
		} else if (strcmp(kv, "dir") == 0) {
			cp.dir = sl_capture_dir_parse(val);
			if (cp.dir == 0) {
				snprintf(err, err_size, "dir=%s: expected rx, tx or both", val);
				return -EINVAL;
			}
		} else if (strcmp(kv, "file") == 0) {
			snprintf(path, sizeof(path), "%s", val);
		} else if (strcmp(kv, "count") == 0 || strcmp(kv, "bytes") == 0 ||
			   strcmp(kv, "snaplen") == 0) {
			if (parse_uint(val, UINT64_MAX, &v) < 0 || v == 0) {
				snprintf(err, err_size, "%s=%s: expected a positive number", kv,
					 val);
				return -EINVAL;
			}
			if (kv[0] == 'c')
				cp.max_packets = v;
			else if (kv[0] == 'b')
				cp.max_bytes = v;
			else if (v > SL_CAPTURE_SNAPLEN_MAX) {
				snprintf(err, err_size, "snaplen=%s: at most %u", val,
					 SL_CAPTURE_SNAPLEN_MAX);
				return -EINVAL;
			} else
				cp.snaplen = (uint32_t)v;
		} else {
			snprintf(
				err, err_size,
				"'%s': unknown key (port, dir, file, count, bytes, snaplen, filter)",
				kv);
			return -EINVAL;
		}
	}
	if (cp.n_ports == 0) {
		snprintf(err, err_size, "port=N is required");
		return -EINVAL;
	}
	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/%s-%s.pcapng", mgmt->p.name, cp.ports[0].name);
	cp.path = path;
	rc = sl_capture_open(&cp, &mgmt->cap, err, err_size);
	if (rc < 0)
		return rc;
	sl_worker_capture_set(mgmt->p.worker, mgmt->cap);
	rte_tel_data_start_dict(d);
	capture_status_fill(d);
	return 0;
}

static int
h_capture_stop(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	(void)params;
	if (mgmt->cap == NULL && !mgmt->cap_any) {
		snprintf(err, err_size, "no capture to stop");
		return -ENOENT;
	}
	capture_end();
	rte_tel_data_start_dict(d);
	capture_status_fill(d);
	return 0;
}

/* Keyed by component: telemetry names allow no '.' ("app" is type sluice.app). */
static void
log_type_add(void *arg, const char *name, int level)
{
	rte_tel_data_add_dict_string(arg, name + strlen("sluice."), sl_log_level_name(level));
}

static int
h_log(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	(void)params, (void)err, (void)err_size;
	rte_tel_data_start_dict(d);
	sl_log_types(log_type_add, d);
	return 0;
}

static int
h_log_level(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	char buf[160];
	char *comma;

	if (params == NULL || strlen(params) >= sizeof(buf) || strchr(params, ',') == NULL) {
		snprintf(err, err_size, "expected TYPE,LEVEL (e.g. sluice.*,debug)");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", params);
	comma = strchr(buf, ',');
	*comma = '\0';
	if (sl_log_set(buf, comma + 1, err, err_size) < 0)
		return -EINVAL;
	SL_LOG(NOTICE, mgmt, "log level of %s set to %s (telemetry)", buf, comma + 1);
	return h_log(NULL, d, err, err_size);
}

/* ---- Workers and dispatch ---- */

static void
worker_summary(struct rte_tel_data *c, unsigned i)
{
	struct sl_stats_worker ws;
	uint64_t total = 0;
	char key[48], name[32];

	sl_stats_worker_read(&mgmt->src, i, &ws);
	dict_u64(c, "packets", ws.packets);
	dict_u64(c, "bursts", ws.bursts);
	dict_u64(c, "busy_cycles", ws.busy_cycles);
	dict_u64(c, "tx_dropped", ws.tx_drops);
	for (unsigned r = 0; r < SL_DROP__MAX; r++) {
		total += ws.drops[r];
		if (ws.drops[r] == 0)
			continue;
		snprintf(key, sizeof(key), "drop_%s",
			 tel_key(sl_drop_reason_name(r), name, sizeof(name)));
		dict_u64(c, key, ws.drops[r]);
	}
	dict_u64(c, "pipeline_dropped", total);
	if (ws.dispatched) {
		dict_u64(c, "ring_used", ws.ring_used);
		dict_u64(c, "ring_size", ws.ring_size);
		dict_u64(c, "dispatched", ws.disp.packets);
		dict_u64(c, "ring_full", ws.disp.ring_full);
		dict_u64(c, "adjust_from", ws.disp.adjust_from);
		dict_u64(c, "adjust_to", ws.disp.adjust_to);
		dict_u64(c, "moves", ws.disp.moves);
	}
}

static void
dispatch_summary(struct rte_tel_data *d)
{
	struct sl_stats_dispatch ds;

	sl_stats_dispatch_read(&mgmt->src, &ds);
	dict_u64(d, "workers", sl_worker_group_size(mgmt->p.worker));
	rte_tel_data_add_dict_string(d, "dispatch", ds.io ? "io" : "rss");
	if (!ds.io)
		return;
	rte_tel_data_add_dict_string(d, "scheduler", sl_sched_name(ds.sched));
	dict_u64(d, "threshold_pct", (uint64_t)(ds.threshold * 100 + 0.5));
	dict_u64(d, "adjustments", ds.adjustments);
	dict_u64(d, "io_rx", ds.loop.packets);
	dict_u64(d, "io_bursts", ds.loop.bursts);
	dict_u64(d, "io_busy_cycles", ds.loop.busy_cycles);
	dict_u64(d, "io_dispatch_full", ds.ring_full);
}

static int
h_workers(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	unsigned n = sl_worker_group_size(mgmt->p.worker);
	char key[16];

	(void)params, (void)err, (void)err_size;
	rte_tel_data_start_dict(d);
	dispatch_summary(d);
	for (unsigned i = 0; i < n && i < WORKERS_LISTED_MAX; i++) {
		struct rte_tel_data *c = rte_tel_data_alloc();
		if (c == NULL)
			break;
		rte_tel_data_start_dict(c);
		worker_summary(c, i);
		snprintf(key, sizeof(key), "%u", i);
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
	if (n > WORKERS_LISTED_MAX)
		dict_u64(d, "truncated", 1);
	return 0;
}

/* output:NORMAL's learned addresses: the first FDB_LISTED_MAX, "PORT VLAN MAC AGE" each. */
#define FDB_LISTED_MAX 200
static int
h_fdb(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	static struct sl_fdb_entry ents[FDB_LISTED_MAX + 1];
	unsigned n = sl_pipeline_fdb_dump(mgmt->p.pl, ents, FDB_LISTED_MAX + 1);
	struct rte_tel_data *list = rte_tel_data_alloc();
	char row[64];

	(void)params, (void)err, (void)err_size;
	rte_tel_data_start_dict(d);
	dict_u64(d, "listed", SL_MIN(n, FDB_LISTED_MAX));
	dict_u64(d, "truncated", n > FDB_LISTED_MAX);
	if (list == NULL)
		return 0;
	rte_tel_data_start_array(list, RTE_TEL_STRING_VAL);
	for (unsigned i = 0; i < n && i < FDB_LISTED_MAX; i++) {
		const uint8_t *m = ents[i].mac;
		snprintf(row, sizeof(row), "%u %u %02x:%02x:%02x:%02x:%02x:%02x %u", ents[i].port,
			 ents[i].vlan, m[0], m[1], m[2], m[3], m[4], m[5], ents[i].age);
		rte_tel_data_add_array_string(list, row);
	}
	rte_tel_data_add_dict_container(d, "entries", list, 0);
	return 0;
}

/*
 * Queues (pipeline.h "Queues"): /sluice/queues lists them with their
 * counters; /sluice/queue/set,queue=Q,port=P,max_rate=KBPS[,burst=KBIT]
 * adds or changes one (the flow file's queue= syntax); /sluice/queue/del,
 * port=P,queue=Q deletes one.
 */
static int
h_queues(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	static struct sl_queue_info qi[SL_QUEUES_PER_PORT * 64];
	unsigned n = sl_pipeline_queues(mgmt->p.pl, SL_PORT_ANY, UINT32_MAX, qi, SL_ARRAY_SIZE(qi));
	char key[32];

	(void)params, (void)err, (void)err_size;
	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < n && i < SL_ARRAY_SIZE(qi); i++) {
		struct rte_tel_data *c = rte_tel_data_alloc();
		if (c == NULL)
			break;
		rte_tel_data_start_dict(c);
		dict_u64(c, "port", qi[i].spec.port_no);
		dict_u64(c, "queue", qi[i].spec.queue_id);
		dict_u64(c, "max_rate_kbps", qi[i].spec.max_rate);
		dict_u64(c, "burst_kbit", qi[i].spec.burst);
		dict_u64(c, "tx_packets", qi[i].tx_packets);
		dict_u64(c, "tx_bytes", qi[i].tx_bytes);
		dict_u64(c, "tx_errors", qi[i].tx_errors);
		dict_u64(c, "age_ms", qi[i].age_ms);
		/* Telemetry keys take letters, digits, _ and / only. */
		snprintf(key, sizeof(key), "%u_%u", qi[i].spec.port_no, qi[i].spec.queue_id);
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
	return 0;
}

static int
h_queue_set(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	struct sl_parse_error pe;
	struct sl_queue_spec qs;
	int rc;

	if (params == NULL || sl_queue_parse(params, &qs, &pe) < 0) {
		if (params == NULL)
			snprintf(err, err_size,
				 "expected queue=Q,port=P,max_rate=KBPS[,burst=KBIT]");
		else
			sl_parse_error_format(&pe, err, err_size);
		return -EINVAL;
	}
	rc = sl_pipeline_queue_set(mgmt->p.pl, &qs, err, err_size);
	if (rc < 0)
		return rc;
	SL_LOG(NOTICE, mgmt, "queue %u on port %u: max_rate %" PRIu64 " kbit/s", qs.queue_id,
	       qs.port_no, qs.max_rate);
	rte_tel_data_start_dict(d);
	dict_u64(d, "port", qs.port_no);
	dict_u64(d, "queue", qs.queue_id);
	return 0;
}

static int
h_queue_del(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	unsigned port = 0, queue = 0;
	int used = 0;

	if (params == NULL || sscanf(params, "port=%u,queue=%u%n", &port, &queue, &used) != 2 ||
	    params[used] != '\0') {
		snprintf(err, err_size, "expected port=P,queue=Q, not '%s'", params ? params : "");
		return -EINVAL;
	}
	if (sl_pipeline_queue_del(mgmt->p.pl, port, queue) < 0) {
		snprintf(err, err_size, "port %u has no queue %u", port, queue);
		return -ENOENT;
	}
	SL_LOG(NOTICE, mgmt, "queue %u on port %u deleted", queue, port);
	rte_tel_data_start_dict(d);
	dict_u64(d, "port", port);
	dict_u64(d, "queue", queue);
	return 0;
}

/*
 * /sluice/trace,FLOW or /sluice/trace,hex=FRAME[,in_port=N]: one packet
 * through the pipeline, nothing changed (sl_pipeline_trace).  The report is
 * text lines; telemetry strings hold 127 bytes, so a longer line goes in
 * pieces, each one after the first starting with '+'.
 */
#define TRACE_PIECE 120
#define TRACE_HEADROOM 128

static void
trace_line(struct rte_tel_data *lines, const char *text)
{
	char piece[TRACE_PIECE + 2];
	size_t n = strlen(text), at = 0;

	do {
		size_t k = SL_MIN(n - at, (size_t)TRACE_PIECE);
		snprintf(piece, sizeof(piece), "%s%.*s", at ? "+" : "", (int)k, text + at);
		rte_tel_data_add_array_string(lines, piece);
		at += k;
	} while (at < n);
}

static const char *
trace_table_name(unsigned t)
{
	const struct sl_table_spec *ts = sl_pipeline_table_spec(mgmt->p.pl, t);
	return ts != NULL && ts->name[0] ? ts->name : "";
}

static const char *
trace_accel_name(uint8_t accel)
{
	switch (accel) {
	case SL_TRACE_ACCEL_DCACHE:
		return "decision cache";
	case SL_TRACE_ACCEL_LUT:
		return "FFP LUT";
	case SL_TRACE_ACCEL_ONE:
		return "one entry, no lookup";
	default:
		return "table search";
	}
}

/*
 * The entry step @i of a trace won, as a flow spec: the synthetic trace's
 * entries are live (the control thread is the only writer), a live record
 * keeps copies.  NULL when the step won none, or the record kept none.
 */
typedef const struct sl_flow_spec *(*trace_spec_fn)(const void *arg, unsigned i);

/* The trace's cache-tier line (struct sl_trace's tier fields). */
static void
trace_tier_line(const struct sl_trace *tr, const struct sl_flow_spec *tier_fs, char *line,
		size_t size)
{
	if (tr->tier == SL_TRACE_TIER_FLOW_CACHE) {
		bool miss = tr->n_steps > 0 && tr->steps[tr->n_steps - 1].kind == SL_TRACE_MISS;
		unsigned tables = tr->tier_hops + miss;
		snprintf(line, size,
			 "cache tier: flow cache (one probe answers %u table%s; %s; a key's first "
			 "packet walks the tables and records the path)",
			 tables, tables == 1 ? "" : "s",
			 miss             ? "the probe drops it as the table miss would"
			 : tr->tier_plain ? "the probe outputs the packet itself"
					  : "the last entry's instructions then run");
	} else if (tr->tier_why != SL_FLOW_CACHE_ACTIVE) {
		snprintf(line, size, "cache tier: per-table lookups (flow cache: %s)",
			 sl_flow_cache_inactive_name(tr->tier_why));
	} else {
		const struct sl_trace_step *s = &tr->steps[tr->tier_step];
		snprintf(
			line, size,
			"cache tier: per-table lookups (flow cache: no path record spans table %u: %s)",
			s->table_id,
			s->kind == SL_TRACE_HIT && tier_fs != NULL && tier_fs->insns.goto_table >= 0
				? "its entry applies actions or a meter before goto_table"
				: "the spec does not cover it, or the path is longer than 8 entries");
	}
}

/* The report of @tr after its packet line: steps, outputs, verdict, cache tier, in @d. */
static int
trace_report(struct rte_tel_data *d, struct rte_tel_data *lines, const struct sl_trace *tr,
	     trace_spec_fn spec_of, const void *arg, char *err, size_t err_size)
{
	static char line[8192];
	struct rte_tel_data *outs = rte_tel_data_alloc();

	if (outs == NULL) {
		rte_tel_data_free(lines);
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	rte_tel_data_start_array(outs, RTE_TEL_U64_VAL);
	for (unsigned i = 0; i < tr->n_steps; i++) {
		const struct sl_trace_step *s = &tr->steps[i];
		const char *name = trace_table_name(s->table_id);
		char head[64];
		snprintf(head, sizeof(head), "table %u%s%s%s", s->table_id, name[0] ? " (" : "",
			 name, name[0] ? ")" : "");
		switch (s->kind) {
		case SL_TRACE_HIT: {
			const struct sl_flow_spec *fs = spec_of(arg, i);
			char text[4096] = "(an entry past the ones a live trace keeps)";
			if (fs != NULL)
				sl_flow_format(fs, text, sizeof(text));
			snprintf(line, sizeof(line), "%s [%s]: %s", head,
				 trace_accel_name(s->accel), text);
			break;
		}
		case SL_TRACE_MISS:
			snprintf(line, sizeof(line),
				 "%s [%s]: no entry matched and no table-miss entry", head,
				 trace_accel_name(s->accel));
			break;
		case SL_TRACE_STATE:
			snprintf(line, sizeof(line), "%s: state table, state %u loaded", head,
				 s->value);
			break;
		case SL_TRACE_METER:
			snprintf(line, sizeof(line),
				 "    meter %u: not applied in a trace (traced as "
				 "passing)",
				 s->value);
			break;
		default:
			snprintf(line, sizeof(line), "    set_state %u: not applied in a trace",
				 s->value);
			break;
		}
		trace_line(lines, line);
	}
	for (unsigned i = 0; i < tr->n_outs; i++) {
		const struct sl_pin *pin = &tr->pins[i];
		if (tr->outs[i] == SL_PORT_CONTROLLER)
			snprintf(line, sizeof(line),
				 "output: CONTROLLER (packet-in, reason %s, table %u, "
				 "cookie 0x%" PRIx64 ")",
				 pin->reason == SL_PIN_NO_MATCH      ? "no_match"
				 : pin->reason == SL_PIN_INVALID_TTL ? "invalid_ttl"
								     : "action",
				 pin->table_id, pin->cookie);
		else if (tr->outs[i] == SL_PORT_LOCAL)
			snprintf(line, sizeof(line), "output: port LOCAL");
		else
			snprintf(line, sizeof(line), "output: port %" PRIu32, tr->outs[i]);
		trace_line(lines, line);
		rte_tel_data_add_array_u64(outs, tr->outs[i]);
	}
	if (tr->dropped)
		snprintf(line, sizeof(line), "verdict: %s%s",
			 tr->n_outs ? "copies sent, then drop: " : "drop: ",
			 sl_drop_reason_name(tr->drop));
	else
		snprintf(line, sizeof(line), "verdict: %u output%s", tr->n_outs,
			 tr->n_outs == 1 ? "" : "s");
	trace_line(lines, line);
	trace_tier_line(tr, tr->tier_step < tr->n_steps ? spec_of(arg, tr->tier_step) : NULL, line,
			sizeof(line));
	trace_line(lines, line);
	if (tr->truncated)
		trace_line(lines, "(more steps or outputs than a trace keeps)");
	rte_tel_data_add_dict_container(d, "lines", lines, 0);
	rte_tel_data_add_dict_container(d, "outputs", outs, 0);
	dict_u64(d, "dropped", tr->dropped);
	rte_tel_data_add_dict_string(d, "drop_reason",
				     tr->dropped ? sl_drop_reason_name(tr->drop) : "");
	rte_tel_data_add_dict_string(
		d, "cache_tier", tr->tier == SL_TRACE_TIER_FLOW_CACHE ? "flow_cache" : "tables");
	return 0;
}

/* The synthetic trace's entries: still in the tables (only this thread deletes them). */
static const struct sl_flow_spec *
trace_spec_live_flow(const void *arg, unsigned i)
{
	static struct sl_flow_spec fs;
	const struct sl_trace *tr = arg;

	if (tr->steps[i].flow == NULL)
		return NULL;
	sl_flow_to_spec(tr->steps[i].flow, &fs);
	return &fs;
}

/* "HEAD: in_port N[ (NAME)], L bytes: HEX" with at most @max bytes of hex. */
static void
trace_packet_line(struct rte_tel_data *lines, const char *head, uint32_t in_port,
		  const char *port_name, const uint8_t *data, unsigned len, unsigned max)
{
	static char line[2 * 9216 + 128];
	size_t k = (size_t)snprintf(
		line, sizeof(line), "%s: in_port %" PRIu32 "%s%s%s, %u bytes: ", head, in_port,
		port_name ? " (" : "", port_name ? port_name : "", port_name ? ")" : "", len);

	for (unsigned i = 0; i < len && i < max && k + 3 < sizeof(line); i++)
		k += (size_t)snprintf(line + k, sizeof(line) - k, "%02x", data[i]);
	if (len > max)
		snprintf(line + k, sizeof(line) - k, "... (%u more)", len - max);
	trace_line(lines, line);
}

static int
h_trace(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	static struct sl_pipeline_ctx *tctx;
	static struct sl_trace tr;
	static struct sl_flow_spec fs;
	static uint8_t buf[TRACE_HEADROOM + 9216];
	struct rte_tel_data *lines;
	struct sl_parse_error pe;
	struct sl_pkt p;

	if (params == NULL || params[0] == '\0') {
		snprintf(err, err_size,
			 "give a flow (in_port=1,tcp,tp_dst=80) or "
			 "hex=FRAME[,in_port=N]");
		return -EINVAL;
	}
	if (tctx == NULL && (tctx = sl_pipeline_ctx_create(mgmt->p.pl)) == NULL) {
		snprintf(err, err_size, "out of memory for the trace context");
		return -ENOMEM;
	}
	if (strncmp(params, "hex=", 4) == 0) {
		const char *h = params + 4, *comma = strchr(h, ',');
		size_t nh = comma ? (size_t)(comma - h) : strlen(h), n = 0;
		unsigned long in_port = 0;
		memset(buf, 0, sizeof(buf));
		if (nh == 0 || nh % 2 || nh / 2 > 9216) {
			snprintf(err, err_size,
				 "hex=: an even number of hex digits, 1..9216 bytes");
			return -EINVAL;
		}
		for (size_t i = 0; i < nh; i += 2) {
			unsigned v;
			if (!isxdigit((unsigned char)h[i]) || !isxdigit((unsigned char)h[i + 1]) ||
			    sscanf(h + i, "%2x", &v) != 1) {
				snprintf(err, err_size, "hex=: '%.2s' is not a hex byte", h + i);
				return -EINVAL;
			}
			buf[TRACE_HEADROOM + n++] = (uint8_t)v;
		}
		if (comma != NULL) {
			char *end;
			if (strncmp(comma, ",in_port=", 9) != 0 ||
			    (in_port = strtoul(comma + 9, &end, 0), *end != '\0') || in_port == 0 ||
			    in_port > SL_PORT_MAX_PHYS) {
				snprintf(err, err_size,
					 "after hex=FRAME: ,in_port=N (1..0xffffff00), not '%s'",
					 comma + 1);
				return -EINVAL;
			}
		}
		sl_pkt_init(&p, buf + TRACE_HEADROOM, (uint16_t)n, TRACE_HEADROOM,
			    (uint32_t)in_port);
	} else {
		if (sl_flow_parse_filter(params, &fs, &pe) < 0) {
			sl_parse_error_format(&pe, err, err_size);
			return -EINVAL;
		}
		sl_trace_frame(&fs.match, buf, sizeof(buf), &p, TRACE_HEADROOM);
	}
	rte_tel_data_start_dict(d);
	if ((lines = rte_tel_data_alloc()) == NULL) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	rte_tel_data_start_array(lines, RTE_TEL_STRING_VAL);
	trace_packet_line(lines, "packet", p.in_port, NULL, p.data, p.len, 9216);
	sl_pipeline_trace(mgmt->p.pl, tctx, &p, &tr);
	return trace_report(d, lines, &tr, trace_spec_live_flow, &tr, err, err_size);
}

/*
 * Live trace (pipeline.h, "Live trace"): /sluice/trace/live/start arms a
 * recorder, the workers fill it, sl_mgmt_run unpublishes it once full, and
 * the records stay readable until the next start or a stop.  Each start
 * gets an id; the other commands name it, so a client whose session was
 * replaced by another's start is told so instead of reading the other's.
 */
#define TRACE_LIVE_HEX_MAX 128 /* bytes of each live packet shown */

static void
trace_live_unpublish(void)
{
	if (mgmt->live_published) {
		sl_worker_trace_set(mgmt->p.worker, NULL); /* waits until no worker uses it */
		mgmt->live_published = false;
	}
}

static void
trace_live_end(void)
{
	trace_live_unpublish();
	sl_trace_live_destroy(mgmt->live);
	mgmt->live = NULL;
}

static const char *
trace_live_state(void)
{
	if (mgmt->live_published)
		return "armed";
	return sl_trace_live_done(mgmt->live) == sl_trace_live_wanted(mgmt->live) ? "complete"
										  : "stopped";
}

static void
trace_live_status(struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	dict_u64(d, "id", mgmt->live_id);
	rte_tel_data_add_dict_string(d, "state", trace_live_state());
	dict_u64(d, "count", sl_trace_live_wanted(mgmt->live));
	dict_u64(d, "traced", sl_trace_live_done(mgmt->live));
	dict_u64(d, "port", sl_trace_live_port(mgmt->live));
}

/* The recorder @id names ("ID" at the start of @params; the rest after a comma in *rest). */
static int
trace_live_find(const char *params, const char **rest, char *err, size_t err_size)
{
	char *end;
	unsigned long id = params != NULL ? strtoul(params, &end, 10) : 0;

	if (params == NULL || end == params || (*end != '\0' && *end != ',')) {
		snprintf(err, err_size, "expected the live trace's id, not '%s'",
			 params ? params : "");
		return -EINVAL;
	}
	if (mgmt->live == NULL || id != mgmt->live_id) {
		snprintf(err, err_size, "live trace %lu is gone (%s)", id,
			 mgmt->live != NULL ? "another live trace replaced it" : "stopped");
		return -ENOENT;
	}
	if (rest != NULL)
		*rest = *end == ',' ? end + 1 : NULL;
	return 0;
}

/* count=N[,port=P] */
static int
h_trace_live_start(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	char buf[128], *save = NULL;
	uint64_t count = 0;
	uint32_t port_no = 0;
	int rc;

	if (params == NULL || strlen(params) >= sizeof(buf)) {
		snprintf(err, err_size, "expected count=N[,port=P]");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", params);
	for (char *kv = strtok_r(buf, ",", &save); kv != NULL; kv = strtok_r(NULL, ",", &save)) {
		if (strncmp(kv, "count=", 6) == 0) {
			if (parse_uint(kv + 6, SL_TRACE_LIVE_MAX, &count) < 0 || count == 0) {
				snprintf(err, err_size, "count=%s: expected 1..%u packets", kv + 6,
					 SL_TRACE_LIVE_MAX);
				return -EINVAL;
			}
		} else if (strncmp(kv, "port=", 5) == 0) {
			int slot = sl_port_find(mgmt->p.ports, kv + 5);
			if (slot < 0) {
				snprintf(err, err_size,
					 "port=%s: no such port (a port number or name)", kv + 5);
				return -EINVAL;
			}
			port_no = mgmt->p.ports[slot].of_no;
		} else {
			snprintf(err, err_size, "'%s': unknown key (count, port)", kv);
			return -EINVAL;
		}
	}
	if (count == 0) {
		snprintf(err, err_size, "count=N is required");
		return -EINVAL;
	}
	if (mgmt->live != NULL)
		SL_LOG(NOTICE, mgmt, "live trace %u replaced by a new one", mgmt->live_id);
	trace_live_end();
	rc = sl_trace_live_create(mgmt->p.pl, (unsigned)count, port_no,
				  sl_worker_group_size(mgmt->p.worker), &mgmt->live);
	if (rc < 0) {
		snprintf(err, err_size, "cannot create the live trace: %s", strerror(-rc));
		return rc;
	}
	mgmt->live_id++;
	sl_worker_trace_set(mgmt->p.worker, mgmt->live);
	mgmt->live_published = true;
	trace_live_status(d);
	return 0;
}

/* ID: the state and how many packets were traced. */
static int
h_trace_live(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	int rc = trace_live_find(params, NULL, err, err_size);

	if (rc < 0)
		return rc;
	trace_live_status(d);
	return 0;
}

static const struct sl_flow_spec *
trace_spec_rec(const void *arg, unsigned i)
{
	const struct sl_trace_live_rec *rec = arg;

	return rec->hit_of[i] == 0xff ? NULL : &rec->hit[rec->hit_of[i]];
}

/* ID,I: the report of the I-th packet traced (from 0), as /sluice/trace's. */
static int
h_trace_live_packet(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	const struct sl_trace_live_rec *rec;
	struct rte_tel_data *lines;
	const char *rest;
	uint64_t i;
	char head[64];
	int rc = trace_live_find(params, &rest, err, err_size);

	if (rc < 0)
		return rc;
	if (rest == NULL || parse_uint(rest, SL_TRACE_LIVE_MAX, &i) < 0) {
		snprintf(err, err_size, "expected ID,INDEX, not '%s'", params);
		return -EINVAL;
	}
	if ((rec = sl_trace_live_get(mgmt->live, (unsigned)i)) == NULL) {
		snprintf(err, err_size, "packet %" PRIu64 " is not traced (yet)", i);
		return -ENOENT;
	}
	rte_tel_data_start_dict(d);
	if ((lines = rte_tel_data_alloc()) == NULL) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	rte_tel_data_start_array(lines, RTE_TEL_STRING_VAL);
	const struct sl_port *p = sl_port_get(mgmt->p.ports, rec->in_port);
	snprintf(head, sizeof(head), "packet %" PRIu64 " (worker %u)", i + 1, rec->worker);
	trace_packet_line(lines, head, rec->in_port, p != NULL ? p->name : NULL, rec->frame,
			  rec->len, TRACE_LIVE_HEX_MAX);
	dict_u64(d, "in_port", rec->in_port);
	dict_u64(d, "len", rec->len);
	dict_u64(d, "worker", rec->worker);
	dict_u64(d, "rx_ns_ago", (rte_rdtsc() - rec->tsc) * 1000000000u / rte_get_tsc_hz());
	return trace_report(d, lines, &rec->tr, trace_spec_rec, rec, err, err_size);
}

/* ID: stop tracing and free the records. */
static int
h_trace_live_stop(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	int rc = trace_live_find(params, NULL, err, err_size);

	if (rc < 0)
		return rc;
	trace_live_unpublish();
	trace_live_status(d);
	trace_live_end();
	return 0;
}

/* Parameters: [scheduler=NAME][,threshold=T] (none: show). */
static int
h_dispatch(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	struct sl_worker_io *io = sl_worker_group_io(mgmt->p.worker);
	char buf[128], *save = NULL;
	int sched = -1;
	double thr = -1;

	if (params != NULL) {
		if (io == NULL) {
			snprintf(err, err_size, "no I/O core: start the switch with --dispatch io");
			return -EINVAL;
		}
		if (strlen(params) >= sizeof(buf)) {
			snprintf(err, err_size, "parameters too long");
			return -EINVAL;
		}
		snprintf(buf, sizeof(buf), "%s", params);
		for (char *kv = strtok_r(buf, ",", &save); kv != NULL;
		     kv = strtok_r(NULL, ",", &save)) {
			char *end;
			if (strncmp(kv, "scheduler=", 10) == 0) {
				sched = sl_sched_parse(kv + 10);
				if (sched < 0) {
					snprintf(err, err_size,
						 "unknown scheduler '%s' (rr, crc32, hrw, "
						 "adaptive, ordered)",
						 kv + 10);
					return -EINVAL;
				}
			} else if (strncmp(kv, "threshold=", 10) == 0) {
				thr = strtod(kv + 10, &end);
				if (end == kv + 10 || *end != '\0' || !(thr >= 0 && thr <= 1)) {
					snprintf(err, err_size, "threshold '%s' outside 0..1",
						 kv + 10);
					return -EINVAL;
				}
			} else {
				snprintf(err, err_size,
					 "unknown parameter '%s' (scheduler=NAME, "
					 "threshold=T)",
					 kv);
				return -EINVAL;
			}
		}
		struct sl_dispatch *disp = sl_worker_io_dispatch(io);
		sl_dispatch_request(disp, sched, thr);
		SL_LOG(NOTICE, mgmt, "dispatch: scheduler %s, threshold %.2f (telemetry)",
		       sl_sched_name(sl_dispatch_sched(disp)), sl_dispatch_threshold(disp));
	}
	rte_tel_data_start_dict(d);
	dispatch_summary(d);
	return 0;
}

/* ---- Ports at run time ---- */

/*
 * DEVARGS[,name=NAME][,ofport=N]: probe, set up its queues as the ports
 * given at start have them, fill a free slot, let the workers poll it, then
 * the pipeline send there, then tell the controllers.  Forwarding between
 * the other ports goes on meanwhile (worker.h).
 */
int
sl_mgmt_port_add(const char *spec, uint32_t *port_no, char *name, char *err, size_t err_size)
{
	struct sl_port *ports = mgmt->p.ports;
	struct sl_port_args a;
	struct sl_port port;
	uint16_t id;
	int slot, rc;

	rc = sl_port_args_parse(spec, &a, err, err_size);
	if (rc < 0)
		return rc;
	if (a.of_no != 0) {
		slot = (int)a.of_no - 1;
		if (ports[slot].of_no != 0) {
			snprintf(err, err_size, "ofport=%u is port '%s' already", a.of_no,
				 ports[slot].name);
			return -EEXIST;
		}
	} else {
		for (slot = 0; slot < SL_PORTS_MAX && ports[slot].of_no != 0; slot++)
			;
		if (slot == SL_PORTS_MAX) {
			snprintf(err, err_size, "no free port number: %d ports at most",
				 SL_PORTS_MAX);
			return -ENOSPC;
		}
		a.of_no = (uint32_t)slot + 1;
	}
	if (a.name[0] != '\0' && sl_port_find(ports, a.name) >= 0) {
		snprintf(err, err_size, "name=%s: a port has that name already", a.name);
		return -EEXIST;
	}
	if (sl_port_lookup(a.devargs, &id) == 0) {
		for (int s = 0; s < SL_PORT_SLOTS; s++) {
			if (ports[s].of_no != 0 && ports[s].dpdk_id == id) {
				char key[16];
				snprintf(err, err_size, "'%s' is port %s (%s) already", a.devargs,
					 sl_port_no_format(ports[s].of_no, key, sizeof(key)),
					 ports[s].name);
				return -EEXIST;
			}
		}
	}
	rc = sl_port_open(a.devargs, a.name, a.of_no, mgmt->p.mp, mgmt->p.n_rxq, mgmt->p.n_txq,
			  &port, err, err_size);
	if (rc < 0)
		return rc;
	if (sl_port_find(ports, port.name) >= 0) {
		snprintf(err, err_size, "'%s': its name '%s' is another port's: give name=NAME",
			 a.devargs, port.name);
		sl_port_close(&port);
		return -EEXIST;
	}
	ports[slot] = port; /* no worker reads a slot outside its set */
	sl_worker_port_attach(mgmt->p.worker, (unsigned)slot);
	sl_pipeline_port_add(mgmt->p.pl, a.of_no, true);
	if (mgmt->p.sw != NULL)
		sl_ofswitch_port_added(mgmt->p.sw, (unsigned)slot);
	SL_LOG(NOTICE, mgmt, "port %u (%s) added: %s", a.of_no, port.name, port.devargs);
	*port_no = a.of_no;
	snprintf(name, SL_PORT_NAME_MAX + 1, "%s", port.name);
	return 0;
}

/*
 * DEVARGS[,name=NAME][,ofport=N]: probe, set up its queues as the ports
 * given at start have them, fill a free slot, let the workers poll it, then
 * the pipeline send there, then tell the controllers.  Forwarding between
 * the other ports goes on meanwhile (worker.h).
 */
static int
h_port_add(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	char name[SL_PORT_NAME_MAX + 1];
	uint32_t no;
	int rc;

	if (params == NULL) {
		snprintf(err, err_size, "expected DEVARGS[,name=NAME][,ofport=N]");
		return -EINVAL;
	}
	rc = sl_mgmt_port_add(params, &no, name, err, err_size);
	if (rc < 0)
		return rc;
	rte_tel_data_start_dict(d);
	dict_u64(d, "port_no", no);
	rte_tel_data_add_dict_string(d, "name", name);
	rte_tel_data_add_dict_string(d, "devargs", mgmt->p.ports[no - 1].devargs);
	return 0;
}

int
sl_mgmt_port_del(const char *which, uint32_t *port_no, char *name, char *err, size_t err_size)
{
	struct sl_port *ports = mgmt->p.ports;
	struct sl_port *port;
	uint32_t no;
	int slot;

	slot = which != NULL ? sl_port_find(ports, which) : -ENOENT;
	if (slot < 0) {
		snprintf(err, err_size,
			 "no port '%s' (a port name or number; sluicectl show lists them)",
			 which ? which : "");
		return -ENOENT;
	}
	if (slot == SL_PORT_SLOT_LOCAL) {
		snprintf(err, err_size,
			 "LOCAL cannot be deleted (start the switch with --no-local)");
		return -EPERM;
	}
	port = &ports[slot];
	no = port->of_no;
	snprintf(name, SL_PORT_NAME_MAX + 1, "%s", port->name);
	if (mgmt->cap != NULL) {
		struct sl_capture_status st;
		sl_capture_status(mgmt->cap, &st);
		for (unsigned i = 0; i < st.n_ports; i++)
			if (st.port_nos[i] == no) {
				capture_end();
				break;
			}
	}
	sl_pipeline_port_del(mgmt->p.pl, no);
	sl_pipeline_fdb_flush(mgmt->p.pl, no);
	sl_worker_port_detach(mgmt->p.worker, (unsigned)slot);
	sl_worker_port_retire(mgmt->p.worker, (unsigned)slot);
	if (mgmt->p.sw != NULL)
		sl_ofswitch_port_deleted(mgmt->p.sw, (unsigned)slot);
	sl_port_close(port);
	SL_LOG(NOTICE, mgmt, "port %u (%s) deleted", no, name);
	*port_no = no;
	return 0;
}

/*
 * NAME|N: the pipeline stops sending there, the workers stop polling it
 * (a grace period: none touches it any more), then it is stopped, closed
 * and, for a vdev, removed.  LOCAL stays (--no-local goes without it).
 */
static int
h_port_del(const char *params, struct rte_tel_data *d, char *err, size_t err_size)
{
	char name[SL_PORT_NAME_MAX + 1];
	uint32_t no;
	int rc;

	rc = sl_mgmt_port_del(params, &no, name, err, err_size);
	if (rc < 0)
		return rc;
	rte_tel_data_start_dict(d);
	dict_u64(d, "port_no", no);
	rte_tel_data_add_dict_string(d, "name", name);
	return 0;
}

void
sl_mgmt_controllers_set(const char *fail_mode, unsigned n_controllers)
{
	mgmt->p.fail_mode = fail_mode;
	mgmt->p.n_controllers = n_controllers;
}

/* ---- Command table, mailbox, registration ---- */

static const struct {
	const char *cmd;
	handler_fn fn;
	const char *help;
} commands[] = {
	{"/sluice/info", h_info, "Switch identity and configuration. No parameters"},
	{"/sluice/ports", h_ports, "Per-port counters, keyed by OpenFlow port. No parameters"},
	{"/sluice/port", h_port,
	 "One port in full. Parameter: port number or name, LOCAL, or 'controller'"},
	{"/sluice/port/add", h_port_add,
	 "Add a port at run time. Parameters: DEVARGS[,name=NAME][,ofport=N]"},
	{"/sluice/port/del", h_port_del, "Delete a port. Parameter: port name or number"},
	{"/sluice/tables", h_tables, "Per-table counters of the tables in use. No parameters"},
	{"/sluice/table", h_table, "One table in full. Parameter: table id"},
	{"/sluice/drops", h_drops, "Dropped packets by reason. No parameters"},
	{"/sluice/datapath", h_datapath, "Datapath loop counters. No parameters"},
	{"/sluice/latency", h_latency, "Latency percentiles per class. No parameters"},
	{"/sluice/latency/histogram", h_latency_histogram,
	 "Latency histogram (ns buckets). Parameter: pipeline | packet_in"},
	{"/sluice/ffp", h_ffp, "Fast forwarding path: classes and LUTs. No parameters"},
	{"/sluice/flow_cache", h_flow_cache,
	 "Whole-pipeline flow cache: spec, adaptive policy, hits. No parameters"},
	{"/sluice/controller", h_controller, "OpenFlow agent and controller port. No parameters"},
	{"/sluice/capture", h_capture, "Capture status. No parameters"},
	{"/sluice/capture/start", h_capture_start,
	 "Start a pcapng capture. Parameters: port=N[,port=M..][,dir=D][,file=F][,count=N]"
	 "[,bytes=N][,snaplen=N][,filter=EXPR]"},
	{"/sluice/capture/stop", h_capture_stop, "Stop the capture. No parameters"},
	{"/sluice/log", h_log, "Log types and levels. No parameters"},
	{"/sluice/log/level", h_log_level, "Set log levels. Parameters: TYPE,LEVEL"},
	{"/sluice/workers", h_workers, "Dispatch and per-worker counters. No parameters"},
	{"/sluice/dispatch", h_dispatch,
	 "Show or change the I/O core's scheduler. Parameters: [scheduler=NAME][,threshold=T]"},
	{"/sluice/fwd", h_fwd, "Forwarding modes and their counters. No parameters"},
	{"/sluice/trace", h_trace,
	 "One packet through the pipeline, nothing changed. Parameter: a flow "
	 "(in_port=1,tcp,tp_dst=80) or hex=FRAME[,in_port=N]"},
	{"/sluice/trace/live/start", h_trace_live_start,
	 "Trace the next packets received, live. Parameters: count=N[,port=P]; replies the id"},
	{"/sluice/trace/live", h_trace_live, "A live trace's state. Parameter: its id"},
	{"/sluice/trace/live/packet", h_trace_live_packet,
	 "A live-traced packet's report. Parameters: ID,INDEX (from 0)"},
	{"/sluice/trace/live/stop", h_trace_live_stop,
	 "Stop a live trace, free it. Parameter: its id"},
	{"/sluice/queues", h_queues,
	 "Queues (set_queue policers) and their counters. No parameters"},
	{"/sluice/queue/set", h_queue_set,
	 "Add or change a queue. Parameters: queue=Q,port=P,max_rate=KBPS[,burst=KBIT]"},
	{"/sluice/queue/del", h_queue_del, "Delete a queue. Parameters: port=P,queue=Q"},
	{"/sluice/fdb", h_fdb,
	 "output:NORMAL's learned addresses (port, VLAN, MAC, age in s). No parameters"},
};

static void
reply_error(struct rte_tel_data *d, const char *msg)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "error", msg);
}

/* Telemetry thread: post the request, wait for the control thread to serve it. */
static int
tel_request(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct sl_mgmt *m = mgmt;
	handler_fn fn = NULL;
	struct timespec deadline;
	bool served;

	for (size_t i = 0; i < SL_ARRAY_SIZE(commands); i++)
		if (strcmp(cmd, commands[i].cmd) == 0)
			fn = commands[i].fn;
	if (m == NULL || fn == NULL) {
		reply_error(d, "switch is shutting down");
		return 0;
	}
	if (params != NULL && *params == '\0')
		params = NULL;
	pthread_mutex_lock(&m->req_lock);
	pthread_mutex_lock(&m->lock);
	if (m->closed) {
		pthread_mutex_unlock(&m->lock);
		pthread_mutex_unlock(&m->req_lock);
		reply_error(d, "switch is shutting down");
		return 0;
	}
	m->req_fn = fn;
	m->req_params = params;
	m->req_data = d;
	m->done = false;
	__atomic_store_n(&m->pending, 1, __ATOMIC_RELEASE);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	unsigned timeout_s =
		strncmp(cmd, "/sluice/port/", 13) == 0 ? PORT_REQUEST_TIMEOUT_S : REQUEST_TIMEOUT_S;
	deadline.tv_sec += timeout_s;
	while (!m->done && !m->closed)
		if (pthread_cond_timedwait(&m->cond, &m->lock, &deadline) == ETIMEDOUT)
			break;
	served = m->done;
	__atomic_store_n(&m->pending, 0, __ATOMIC_RELEASE); /* withdrawn if not served */
	m->req_data = NULL;
	pthread_mutex_unlock(&m->lock);
	pthread_mutex_unlock(&m->req_lock);
	if (!served) {
		char msg[64];
		snprintf(msg, sizeof(msg), "the control thread did not answer within %u s",
			 timeout_s);
		reply_error(d, msg);
	}
	return 0;
}

void
sl_mgmt_run(void)
{
	struct sl_mgmt *m = mgmt;

	if (m == NULL)
		return;
	if (__atomic_load_n(&m->pending, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&m->lock);
		if (m->pending && !m->done && m->req_data != NULL) {
			char err[256] = "";
			if (m->req_fn(m->req_params, m->req_data, err, sizeof(err)) < 0)
				reply_error(m->req_data, err[0] ? err : "request failed");
			m->done = true;
			m->pending = 0;
			pthread_cond_broadcast(&m->cond);
		}
		pthread_mutex_unlock(&m->lock);
	}
	if (m->cap != NULL && sl_capture_drain(m->cap))
		capture_end(); /* a limit was reached: the file is complete */
	if (m->live_published && sl_trace_live_done(m->live) == sl_trace_live_wanted(m->live))
		trace_live_unpublish(); /* full: the workers stop paying for it */
}

int
sl_mgmt_create(const struct sl_mgmt_params *p)
{
	static bool registered;
	pthread_condattr_t ca;
	struct sl_mgmt *m = &mgmt_instance;

	if (mgmt != NULL)
		return -EEXIST;
	memset(m, 0, sizeof(*m));
	m->p = *p;
	m->src = (struct sl_stats_src){
		.pl = p->pl, .worker = p->worker, .ports = p->ports, .sw = p->sw};
	m->start_tsc = rte_rdtsc();
	pthread_mutex_init(&m->req_lock, NULL);
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &ca);
	pthread_condattr_destroy(&ca);
	__atomic_store_n(&mgmt, m, __ATOMIC_RELEASE);
	if (!registered) {
		for (size_t i = 0; i < SL_ARRAY_SIZE(commands); i++)
			if (rte_telemetry_register_cmd(commands[i].cmd, tel_request,
						       commands[i].help) < 0)
				SL_LOG(WARNING, mgmt, "cannot register telemetry command %s",
				       commands[i].cmd);
		registered = true;
	}
	return 0;
}

void
sl_mgmt_destroy(void)
{
	struct sl_mgmt *m = mgmt;

	if (m == NULL)
		return;
	capture_end();
	trace_live_end();
	pthread_mutex_lock(&m->lock);
	m->closed = true;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	/* Callbacks in flight still hold m (static storage); new ones see closed. */
}
