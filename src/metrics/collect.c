/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics: what GET /metrics returns, read through src/stats (the readers
 * telemetry uses) and the pipeline's FFP accessors.  Control path only.
 *
 * Conventions (prometheus.io/docs/practices/naming): every name starts
 * with sluice_, counters end in _total, times are in seconds (cycles and
 * nanoseconds are converted), every sample carries switch="NAME".  The
 * format wants a family's samples together, so each section reads its
 * subjects once into an array, then writes family by family.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_version.h>

#include "sl_config.h"
#include "metrics_priv.h"

#define C SL_METRICS_COUNTER
#define G SL_METRICS_GAUGE

/* Label sets: "switch" first, then up to three more pairs. */
struct labels {
	const char *kv[9];
};

static struct labels
lbl(const struct sl_metrics *m, const char *k1, const char *v1, const char *k2, const char *v2,
    const char *k3, const char *v3)
{
	struct labels l = {{"switch", m->switch_name, k1, v1, k2, v2, k3, v3, NULL}};
	return l;
}

#define L0(m) lbl(m, NULL, NULL, NULL, NULL, NULL, NULL).kv

/* One family of one sample without labels but the switch's. */
static void
one_u64(struct sl_metrics_text *t, const struct sl_metrics *m, const char *name,
	enum sl_metrics_type type, const char *help, uint64_t v)
{
	sl_metrics_family(t, name, type, help);
	sl_metrics_u64(t, name, L0(m), v);
}

static void
one_f64(struct sl_metrics_text *t, const struct sl_metrics *m, const char *name,
	enum sl_metrics_type type, const char *help, double v)
{
	sl_metrics_family(t, name, type, help);
	sl_metrics_f64(t, name, L0(m), v);
}

/* ---- Histograms: the latency classes' log2 buckets, in seconds ---- */

static double lat_le[SL_LAT_BUCKETS];

static void
lat_le_init(void)
{
	for (unsigned b = 0; b + 1 < SL_LAT_BUCKETS; b++)
		lat_le[b] = (double)sl_lat_bucket_edge_ns(b) / 1e9;
}

/*
 * The FFP histograms have 32 buckets per power of two; their power-of-two
 * edges fall on bucket edges (values below 2^k ns are buckets below
 * (k - 4) * 32, for k >= 5), so folding them into the latency classes'
 * log2 buckets is exact and the two sets of histograms share their edges.
 */
static void
ffp_fold(const struct sl_ffp_hist *h, uint64_t counts[SL_LAT_BUCKETS])
{
	unsigned idx = 0;

	for (unsigned b = 0; b < SL_LAT_BUCKETS; b++) {
		unsigned upto = b + 1 < SL_LAT_BUCKETS ? (b + 4) * 32 : SL_FFP_HIST_BUCKETS;
		counts[b] = 0;
		for (; idx < upto && idx < SL_FFP_HIST_BUCKETS; idx++)
			counts[b] += h->bucket[idx];
	}
}

/* ---- Sections ---- */

static void
switch_info(const struct sl_metrics *m, struct sl_metrics_text *t)
{
	char dpid[20] = "";

	if (m->src.sw != NULL)
		snprintf(dpid, sizeof(dpid), "%016" PRIx64, sl_ofswitch_datapath_id(m->src.sw));
	sl_metrics_family(t, "sluice_info", G, "Constant 1; the labels say what runs");
	sl_metrics_u64(t, "sluice_info",
		       lbl(m, "version", SL_VERSION, "dpdk", rte_version(), "datapath_id", dpid).kv,
		       1);
	one_f64(t, m, "sluice_start_time_seconds", G,
		"Unix time the exporter started (with the "
		"switch)",
		m->start_time);
	one_u64(t, m, "sluice_ports", G, "Ports of the switch (LOCAL included)",
		sl_port_count(m->src.ports));
	one_u64(t, m, "sluice_flows", G, "OpenFlow entries in all tables",
		sl_pipeline_flow_count(m->src.pl, 255));
	one_u64(t, m, "sluice_groups", G, "OpenFlow groups", sl_pipeline_group_count(m->src.pl));
}

static void
ports(const struct sl_metrics *m, struct sl_metrics_text *t)
{
	static const struct {
		const char *name, *help;
		enum sl_metrics_type type;
		size_t off; /* in struct sl_stats_port */
	} fams[] = {
		{"sluice_port_rx_packets_total", "Packets received (the workers' count)", C,
		 offsetof(struct sl_stats_port, sw.rx_packets)},
		{"sluice_port_rx_bytes_total", "Bytes received", C,
		 offsetof(struct sl_stats_port, sw.rx_bytes)},
		{"sluice_port_tx_packets_total", "Packets transmitted", C,
		 offsetof(struct sl_stats_port, sw.tx_packets)},
		{"sluice_port_tx_bytes_total", "Bytes transmitted", C,
		 offsetof(struct sl_stats_port, sw.tx_bytes)},
		{"sluice_port_tx_dropped_total", "Packets the tx queue refused (full)", C,
		 offsetof(struct sl_stats_port, sw.tx_drops)},
		{"sluice_port_rx_missed_total", "Packets the device dropped: rx ring full", C,
		 offsetof(struct sl_stats_port, hw.imissed)},
		{"sluice_port_rx_errors_total", "Erroneous packets the device received", C,
		 offsetof(struct sl_stats_port, hw.ierrors)},
		{"sluice_port_tx_errors_total", "Packets the device failed to transmit", C,
		 offsetof(struct sl_stats_port, hw.oerrors)},
		{"sluice_port_rx_nombuf_total", "Receive buffer allocation failures", C,
		 offsetof(struct sl_stats_port, hw.rx_nombuf)},
	};
	struct sl_stats_port *ps = calloc(SL_PORT_SLOTS, sizeof(*ps));
	char(*nos)[12] = calloc(SL_PORT_SLOTS, sizeof(*nos));
	const char *names[SL_PORT_SLOTS];
	unsigned n = 0;

	if (ps == NULL || nos == NULL) {
		t->failed = true;
		goto out;
	}
	/* The filled slots (ports come and go at run time), labelled by number or LOCAL. */
	for (unsigned s = 0; s < SL_PORT_SLOTS; s++) {
		const struct sl_port *p = &m->src.ports[s];
		if (p->of_no == 0)
			continue;
		sl_stats_port_read(&m->src, s, &ps[n]);
		sl_port_no_format(p->of_no, nos[n], sizeof(nos[n]));
		names[n++] = p->name;
	}
	for (size_t f = 0; f < SL_ARRAY_SIZE(fams); f++) {
		sl_metrics_family(t, fams[f].name, fams[f].type, fams[f].help);
		for (unsigned i = 0; i < n; i++)
			sl_metrics_u64(t, fams[f].name,
				       lbl(m, "port", nos[i], "name", names[i], NULL, NULL).kv,
				       *(const uint64_t *)((const char *)&ps[i] + fams[f].off));
	}
	sl_metrics_family(t, "sluice_port_link_up", G, "1 when the link is up");
	for (unsigned i = 0; i < n; i++)
		sl_metrics_u64(t, "sluice_port_link_up",
			       lbl(m, "port", nos[i], "name", names[i], NULL, NULL).kv,
			       ps[i].link.up);
	sl_metrics_family(t, "sluice_port_live", G, "1 when fast-failover groups may use the port");
	for (unsigned i = 0; i < n; i++)
		sl_metrics_u64(t, "sluice_port_live",
			       lbl(m, "port", nos[i], "name", names[i], NULL, NULL).kv, ps[i].live);
out:
	free(ps);
	free(nos);
}

static void
drops(const struct sl_metrics *m, struct sl_metrics_text *t)
{
	uint64_t d[SL_DROP__MAX];
	char reason[32];

	sl_stats_drops_read(&m->src, d);
	sl_metrics_family(t, "sluice_drops_total", C,
			  "Packets dropped, by reason (tx_full includes the ports' tx drops)");
	for (unsigned r = 0; r < SL_DROP__MAX; r++) {
		/* The telemetry key form: "table-miss" -> "table_miss". */
		const char *n = sl_drop_reason_name(r);
		size_t i;
		for (i = 0; n[i] != '\0' && i + 1 < sizeof(reason); i++)
			reason[i] = n[i] == '-' || n[i] == '.' ? '_' : n[i];
		reason[i] = '\0';
		sl_metrics_u64(t, "sluice_drops_total",
			       lbl(m, "reason", reason, NULL, NULL, NULL, NULL).kv, d[r]);
	}
}

static void
tables(const struct sl_metrics *m, struct sl_metrics_text *t)
{
	static const struct {
		const char *name, *help;
		enum sl_metrics_type type;
		unsigned what;
	} fams[] = {
		{"sluice_table_flows", "OpenFlow entries in the table", G, 0},
		{"sluice_table_lookups_total", "Packets looked up", C, 1},
		{"sluice_table_matched_total", "Lookups that found an entry (table-miss included)",
		 C, 2},
		{"sluice_table_missed_total", "Lookups that found nothing", C, 3},
		{"sluice_table_entries", "Entries the classifier stores", G, 4},
		{"sluice_table_memory_bytes", "Memory the classifier holds", G, 5},
		{"sluice_table_max_entries", "Declared capacity (0: unbounded)", G, 6},
	};
	static const struct {
		const char *name, *help;
		enum sl_metrics_type type;
		size_t off; /* in struct sl_state_stats */
	} state_fams[] = {
		{"sluice_state_table_lookups_total", "Packets looked up in the state table", C,
		 offsetof(struct sl_state_stats, lookups)},
		{"sluice_state_table_hits_total", "Lookups that found a live state", C,
		 offsetof(struct sl_state_stats, hits)},
		{"sluice_state_table_inserts_total", "set_state that created an entry", C,
		 offsetof(struct sl_state_stats, inserts)},
		{"sluice_state_table_expired_total", "States whose timeout passed", C,
		 offsetof(struct sl_state_stats, expired)},
		{"sluice_state_table_evicted_total", "Expired states reused for a new flow", C,
		 offsetof(struct sl_state_stats, evicted)},
		{"sluice_state_table_refused_total", "set_state refused: no room", C,
		 offsetof(struct sl_state_stats, refused)},
		{"sluice_state_table_foreign_total", "set_state refused: not the table's writer", C,
		 offsetof(struct sl_state_stats, foreign)},
	};
	int last = sl_pipeline_last_table(m->src.pl);
	unsigned n = last >= 0 ? (unsigned)last + 1 : 0, n_used = 0;
	struct sl_stats_table *ts = calloc(n ? n : 1, sizeof(*ts));
	unsigned *ids = calloc(n ? n : 1, sizeof(*ids));
	char id[12];

	if (ts == NULL || ids == NULL) {
		t->failed = true;
		goto out;
	}
	for (unsigned i = 0; i < n; i++)
		if (sl_stats_table_read(&m->src, i, true, &ts[n_used]))
			ids[n_used++] = i;
	for (size_t f = 0; f < SL_ARRAY_SIZE(fams); f++) {
		sl_metrics_family(t, fams[f].name, fams[f].type, fams[f].help);
		for (unsigned k = 0; k < n_used; k++) {
			const struct sl_stats_table *s = &ts[k];
			uint64_t v[] = {s->flows,
					s->hits.lookups,
					s->hits.matched,
					s->hits.missed,
					s->store.n_entries,
					s->store.mem_bytes,
					s->spec->max_entries};
			snprintf(id, sizeof(id), "%u", ids[k]);
			sl_metrics_u64(t, fams[f].name,
				       lbl(m, "table", id, "name", s->spec->name, "kind",
					   sl_table_kind_name(s->spec->kind))
					       .kv,
				       v[fams[f].what]);
		}
	}
	sl_metrics_family(t, "sluice_state_table_entries", G, "States held by the state table");
	for (unsigned k = 0; k < n_used; k++)
		if (ts[k].is_state) {
			snprintf(id, sizeof(id), "%u", ids[k]);
			sl_metrics_u64(t, "sluice_state_table_entries",
				       lbl(m, "table", id, NULL, NULL, NULL, NULL).kv,
				       ts[k].state.n_entries);
		}
	sl_metrics_family(t, "sluice_state_table_capacity", G, "States the state table can hold");
	for (unsigned k = 0; k < n_used; k++)
		if (ts[k].is_state) {
			snprintf(id, sizeof(id), "%u", ids[k]);
			sl_metrics_u64(t, "sluice_state_table_capacity",
				       lbl(m, "table", id, NULL, NULL, NULL, NULL).kv,
				       ts[k].state.capacity);
		}
	for (size_t f = 0; f < SL_ARRAY_SIZE(state_fams); f++) {
		sl_metrics_family(t, state_fams[f].name, state_fams[f].type, state_fams[f].help);
		for (unsigned k = 0; k < n_used; k++) {
			if (!ts[k].is_state)
				continue;
			snprintf(id, sizeof(id), "%u", ids[k]);
			sl_metrics_u64(t, state_fams[f].name,
				       lbl(m, "table", id, NULL, NULL, NULL, NULL).kv,
				       *(const uint64_t *)((const char *)&ts[k].state +
							   state_fams[f].off));
		}
	}
out:
	free(ts);
	free(ids);
}

static void
datapath(const struct sl_metrics *m, struct sl_metrics_text *t)
{
	struct sl_stats_datapath dp;
	double hz;

	sl_stats_datapath_read(&m->src, &dp);
	hz = dp.tsc_hz ? (double)dp.tsc_hz : 1;
	one_u64(t, m, "sluice_workers", G, "Datapath worker lcores", dp.workers);
	one_u64(t, m, "sluice_datapath_packets_total", C, "Packets the workers received",
		dp.loop.packets);
	one_u64(t, m, "sluice_datapath_bursts_total", C, "Non-empty rx bursts", dp.loop.bursts);
	one_u64(t, m, "sluice_datapath_iterations_total", C, "Polling rounds over all ports",
		dp.loop.iterations);
	one_u64(t, m, "sluice_datapath_busy_rounds_total", C, "Rounds that received a packet",
		dp.loop.busy_rounds);
	one_f64(t, m, "sluice_datapath_busy_seconds_total", C,
		"Time spent processing received bursts (TSC)", (double)dp.loop.busy_cycles / hz);
	one_u64(t, m, "sluice_datapath_copies_total", C, "Multi-output copies made", dp.copies);
	one_u64(t, m, "sluice_cache_hits_total", C, "Decision cache hits (before mask tables)",
		dp.cache_hits);
	one_u64(t, m, "sluice_cache_misses_total", C, "Decision cache misses", dp.cache_misses);
	one_u64(t, m, "sluice_search_budget_searches_total", C,
		"Cache-missing searches measured for the search budget", dp.budget_stats.searches);
	one_f64(t, m, "sluice_search_budget_seconds_total", C, "Time those searches took (TSC)",
		(double)dp.budget_stats.cycles / hz);
	one_u64(t, m, "sluice_goto_chain_installed", G, "Longest goto chain the flows make",
		dp.chain_installed);
	one_u64(t, m, "sluice_goto_chain_traversed", G, "Longest goto chain a packet took",
		dp.chain_traversed);
	one_u64(t, m, "sluice_idle_sleeps_total", C, "Sleeps of idle workers (--idle-sleep-max)",
		dp.idle_sleeps);
	one_f64(t, m, "sluice_idle_slept_seconds_total", C, "Time idle workers slept",
		(double)dp.idle_slept_ns / 1e9);
}

static void
workers(const struct sl_metrics *m, struct sl_metrics_text *t)
{
	unsigned n = sl_worker_group_size(m->src.worker);
	struct sl_stats_worker *ws = calloc(n ? n : 1, sizeof(*ws));
	struct sl_stats_dispatch ds;
	double hz = (double)rte_get_tsc_hz();
	char id[12];

	if (ws == NULL) {
		t->failed = true;
		return;
	}
	for (unsigned i = 0; i < n; i++)
		sl_stats_worker_read(&m->src, i, &ws[i]);
#define WORKER_FAMILY(NAME, TYPE, HELP, COND, EXPR)                                                \
	do {                                                                                       \
		sl_metrics_family(t, NAME, TYPE, HELP);                                            \
		for (unsigned i = 0; i < n; i++) {                                                 \
			const struct sl_stats_worker *w = &ws[i];                                  \
			if (!(COND))                                                               \
				continue;                                                          \
			snprintf(id, sizeof(id), "%u", i);                                         \
			sl_metrics_f64(t, NAME, lbl(m, "worker", id, NULL, NULL, NULL, NULL).kv,   \
				       (double)(EXPR));                                            \
		}                                                                                  \
	} while (0)
	WORKER_FAMILY("sluice_worker_packets_total", C, "Packets the worker processed", true,
		      w->packets);
	WORKER_FAMILY("sluice_worker_bursts_total", C, "Bursts the worker processed", true,
		      w->bursts);
	WORKER_FAMILY("sluice_worker_busy_seconds_total", C, "Time the worker spent on bursts",
		      true, (double)w->busy_cycles / hz);
	WORKER_FAMILY("sluice_worker_tx_dropped_total", C, "Packets its tx queues refused", true,
		      w->tx_drops);
	WORKER_FAMILY("sluice_worker_ring_used", G, "Packets waiting in its ring (I/O dispatch)",
		      w->dispatched, w->ring_used);
	WORKER_FAMILY("sluice_worker_ring_size", G, "Slots of its ring (I/O dispatch)",
		      w->dispatched, w->ring_size);
	WORKER_FAMILY("sluice_worker_dispatched_total", C, "Packets the I/O core gave it",
		      w->dispatched, w->disp.packets);
	WORKER_FAMILY("sluice_worker_ring_full_total", C, "Packets its full ring refused",
		      w->dispatched, w->disp.ring_full);
	WORKER_FAMILY("sluice_worker_moves_total", C, "Flow buckets moved onto it (ordered)",
		      w->dispatched, w->disp.moves);
#undef WORKER_FAMILY
	free(ws);

	sl_stats_dispatch_read(&m->src, &ds);
	sl_metrics_family(t, "sluice_dispatch_info", G,
			  "Constant 1; mode rss or io, and the I/O core's scheduler");
	sl_metrics_u64(t, "sluice_dispatch_info",
		       lbl(m, "mode", ds.io ? "io" : "rss", "scheduler",
			   ds.io ? sl_sched_name(ds.sched) : "", NULL, NULL)
			       .kv,
		       1);
	/* Families without samples under RSS: the set of families does not depend on the mode. */
	sl_metrics_family(t, "sluice_dispatch_threshold_ratio", G,
			  "Ring fill above which a Subflow moves (0..1)");
	if (ds.io)
		sl_metrics_f64(t, "sluice_dispatch_threshold_ratio", L0(m), ds.threshold);
	sl_metrics_family(t, "sluice_dispatch_adjustments_total", C, "Subflow adjustments");
	if (ds.io)
		sl_metrics_u64(t, "sluice_dispatch_adjustments_total", L0(m), ds.adjustments);
	sl_metrics_family(t, "sluice_dispatch_rx_packets_total", C,
			  "Packets the I/O core received");
	if (ds.io)
		sl_metrics_u64(t, "sluice_dispatch_rx_packets_total", L0(m), ds.loop.packets);
	sl_metrics_family(t, "sluice_dispatch_busy_seconds_total", C,
			  "Time the I/O core spent on bursts");
	if (ds.io)
		sl_metrics_f64(t, "sluice_dispatch_busy_seconds_total", L0(m),
			       (double)ds.loop.busy_cycles / hz);
	sl_metrics_family(t, "sluice_dispatch_ring_full_total", C,
			  "Packets dropped: a worker's ring was full");
	if (ds.io)
		sl_metrics_u64(t, "sluice_dispatch_ring_full_total", L0(m), ds.ring_full);
}

static void
controller(const struct sl_metrics *m, struct sl_metrics_text *t)
{
	struct sl_stats_controller c;
	const struct sl_ofswitch_stats *of = &c.of;

	sl_stats_controller_read(&m->src, &c);
	one_u64(t, m, "sluice_openflow_connections", G, "Controller connections up", c.connections);
	one_u64(t, m, "sluice_openflow_messages_received_total", C,
		"OpenFlow messages handed to the agent", of->msgs_rx);
	one_u64(t, m, "sluice_openflow_flow_mods_total", C, "flow_mods applied", of->flow_mods);
	one_u64(t, m, "sluice_openflow_errors_sent_total", C, "OFPT_ERROR replies sent",
		of->errors_sent);
	one_u64(t, m, "sluice_openflow_packet_ins_sent_total", C,
		"packet_in messages sent (one per connection)", of->packet_ins_sent);
	one_u64(t, m, "sluice_openflow_packet_outs_total", C, "packet_outs run by the datapath",
		c.port.rx_packets);
	one_u64(t, m, "sluice_openflow_flows_expired_total", C, "Flows removed by a timeout",
		of->flows_expired);
	one_u64(t, m, "sluice_openflow_learned_total", C,
		"Flows the standalone learning switch installed", of->learned);
	one_u64(t, m, "sluice_packet_ins_queued_total", C,
		"Packets the workers queued for the controller", c.port.tx_packets);
	sl_metrics_family(t, "sluice_packet_ins_total", C,
			  "Fate of the queued packet-ins: forwarded, standalone or dropped");
	sl_metrics_u64(t, "sluice_packet_ins_total",
		       lbl(m, "fate", "forwarded", NULL, NULL, NULL, NULL).kv,
		       of->packet_ins_forwarded);
	sl_metrics_u64(t, "sluice_packet_ins_total",
		       lbl(m, "fate", "standalone", NULL, NULL, NULL, NULL).kv,
		       of->packet_ins_standalone);
	sl_metrics_u64(t, "sluice_packet_ins_total",
		       lbl(m, "fate", "dropped", NULL, NULL, NULL, NULL).kv,
		       of->packet_ins_dropped);
	sl_metrics_family(t, "sluice_packet_in_drops_total", C,
			  "Packet-ins not sent, by reason (workers: no_controller, rate_limited, "
			  "queue_full, no_mbuf; agent: unwanted, congested, too_big)");
	{
		const struct {
			const char *reason;
			uint64_t v;
		} r[] = {
			{"no_controller", c.pin_drops.no_controller},
			{"rate_limited", c.pin_drops.rate_limited},
			{"queue_full", c.pin_drops.queue_full},
			{"no_mbuf", c.pin_drops.no_mbuf},
			{"unwanted", of->pin_drop_unwanted},
			{"congested", of->pin_drop_congested},
			{"too_big", of->pin_drop_too_big},
		};
		for (size_t i = 0; i < SL_ARRAY_SIZE(r); i++)
			sl_metrics_u64(t, "sluice_packet_in_drops_total",
				       lbl(m, "reason", r[i].reason, NULL, NULL, NULL, NULL).kv,
				       r[i].v);
	}
}

static void
latency(const struct sl_metrics *m, struct sl_metrics_text *t)
{
	static const char *const names[SL_STATS_LATENCY_CLASSES] = {
		"sluice_pipeline_latency_seconds", "sluice_packet_in_latency_seconds"};
	static const char *const helps[SL_STATS_LATENCY_CLASSES] = {
		"Burst handed to the pipeline -> tx queued, per packet",
		"Packet received -> packet_in written to a controller"};

	for (unsigned c = 0; c < SL_STATS_LATENCY_CLASSES; c++) {
		struct sl_lat_hist h;
		sl_stats_latency_read(&m->src, sl_stats_latency_class_names[c], &h);
		sl_metrics_family(t, names[c], SL_METRICS_HISTOGRAM, helps[c]);
		sl_metrics_histogram(t, names[c], L0(m), lat_le, h.bucket, SL_LAT_BUCKETS,
				     (double)h.sum_ns / 1e9);
	}
}

static void
ffp(const struct sl_metrics *m, struct sl_metrics_text *t)
{
	const struct sl_pipeline_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned n_ctxs = sl_worker_ctxs(m->src.worker, ctxs, SL_DISPATCH_WORKERS_MAX);
	static const char *const classes[2] = {"normal", "low_latency"};
	struct sl_ffp_class_stats *cs = malloc(sizeof(*cs));
	struct sl_ffp_path_stats ps;
	int last = sl_pipeline_last_table(m->src.pl);
	uint64_t counts[SL_LAT_BUCKETS];
	char id[12];

	if (cs == NULL) {
		t->failed = true;
		return;
	}
	sl_pipeline_ffp_class_stats(ctxs, n_ctxs, cs);
	sl_metrics_family(t, "sluice_ffp_packets_total", C,
			  "Packets by class: low_latency hit only low-latency entries");
	for (unsigned k = 0; k < 2; k++)
		sl_metrics_u64(t, "sluice_ffp_packets_total",
			       lbl(m, "class", classes[k], NULL, NULL, NULL, NULL).kv,
			       cs->packets[k]);
	sl_metrics_family(t, "sluice_ffp_latency_seconds", SL_METRICS_HISTOGRAM,
			  "Time in the pipeline per packet, by class");
	for (unsigned k = 0; k < 2; k++) {
		ffp_fold(&cs->latency[k], counts);
		sl_metrics_histogram(t, "sluice_ffp_latency_seconds",
				     lbl(m, "class", classes[k], NULL, NULL, NULL, NULL).kv, lat_le,
				     counts, SL_LAT_BUCKETS, (double)cs->latency[k].sum_ns / 1e9);
	}
	free(cs);

	/* The whole-pipeline flow cache (path records). */
	sl_pipeline_ffp_path_stats(m->src.pl, ctxs, n_ctxs, &ps);
	one_u64(t, m, "sluice_flow_cache_hits_total", C, "Flow cache hits", ps.hits);
	one_u64(t, m, "sluice_flow_cache_misses_total", C, "Flow cache misses", ps.misses);
	one_u64(t, m, "sluice_flow_cache_inserts_total", C, "Flow cache records made", ps.inserts);
	one_u64(t, m, "sluice_flow_cache_stale_total", C,
		"Probes that found a record with an outdated signature", ps.stale);
	one_u64(t, m, "sluice_flow_cache_evictions_total", C, "Records evicted", ps.evictions);
	one_u64(t, m, "sluice_flow_cache_entries", G, "Records held, all workers", ps.entries);
	one_u64(t, m, "sluice_flow_cache_capacity", G, "Records the caches can hold", ps.capacity);
	one_u64(t, m, "sluice_flow_cache_workers_on", G,
		"Workers whose adaptive rule has the cache on", ps.probing);

	/* Per-table fast-path LUTs, for the tables the FFP knows. */
	{
		static const struct {
			const char *name, *help;
			enum sl_metrics_type type;
			size_t off; /* in struct sl_ffp_lut_stats */
		} fams[] = {
			{"sluice_ffp_lut_hits_total", "LUT hits", C,
			 offsetof(struct sl_ffp_lut_stats, hits)},
			{"sluice_ffp_lut_misses_total", "LUT misses", C,
			 offsetof(struct sl_ffp_lut_stats, misses)},
			{"sluice_ffp_lut_inserts_total", "LUT inserts", C,
			 offsetof(struct sl_ffp_lut_stats, inserts)},
			{"sluice_ffp_lut_invalidations_total", "LUT invalidations", C,
			 offsetof(struct sl_ffp_lut_stats, invalidations)},
			{"sluice_ffp_lut_evictions_total", "LUT evictions", C,
			 offsetof(struct sl_ffp_lut_stats, evictions)},
			{"sluice_ffp_lut_entries", "LUT entries", G,
			 offsetof(struct sl_ffp_lut_stats, entries)},
		};
		unsigned n = last >= 0 ? (unsigned)last + 1 : 0, n_known = 0;
		struct sl_ffp_lut_stats *ls = calloc(n ? n : 1, sizeof(*ls));
		struct sl_ffp_table_info *ti = calloc(n ? n : 1, sizeof(*ti));
		unsigned *ids = calloc(n ? n : 1, sizeof(*ids));

		if (ls == NULL || ti == NULL || ids == NULL) {
			t->failed = true;
			goto out;
		}
		for (unsigned i = 0; i < n; i++) {
			sl_pipeline_ffp_table_info(m->src.pl, i, &ti[n_known]);
			sl_pipeline_ffp_lut_stats(ctxs, n_ctxs, i, &ls[n_known]);
			if (ti[n_known].eligible || ti[n_known].n_ll > 0 || ls[n_known].inserts > 0)
				ids[n_known++] = i;
		}
		for (size_t f = 0; f < SL_ARRAY_SIZE(fams); f++) {
			sl_metrics_family(t, fams[f].name, fams[f].type, fams[f].help);
			for (unsigned k = 0; k < n_known; k++) {
				snprintf(id, sizeof(id), "%u", ids[k]);
				sl_metrics_u64(
					t, fams[f].name,
					lbl(m, "table", id, NULL, NULL, NULL, NULL).kv,
					*(const uint64_t *)((const char *)&ls[k] + fams[f].off));
			}
		}
		sl_metrics_family(t, "sluice_ffp_table_active", G,
				  "1 when the table's LUT is in use (eligible, pays, has entries)");
		for (unsigned k = 0; k < n_known; k++) {
			snprintf(id, sizeof(id), "%u", ids[k]);
			sl_metrics_u64(t, "sluice_ffp_table_active",
				       lbl(m, "table", id, NULL, NULL, NULL, NULL).kv,
				       ti[k].active);
		}
		sl_metrics_family(t, "sluice_ffp_low_latency_entries", G,
				  "Low-latency entries in the table");
		for (unsigned k = 0; k < n_known; k++) {
			snprintf(id, sizeof(id), "%u", ids[k]);
			sl_metrics_u64(t, "sluice_ffp_low_latency_entries",
				       lbl(m, "table", id, NULL, NULL, NULL, NULL).kv, ti[k].n_ll);
		}
out:
		free(ls);
		free(ti);
		free(ids);
	}
}

static void
exporter(const struct sl_metrics *m, struct sl_metrics_text *t)
{
	one_u64(t, m, "sluice_metrics_scrapes_total", C,
		"GET /metrics answered (this one included)", m->scrapes);
	one_u64(t, m, "sluice_metrics_http_errors_total", C,
		"Requests answered with an error status (4xx, 5xx)", m->http_errors);
	one_u64(t, m, "sluice_metrics_refused_total", C,
		"Connections closed on accept: every slot was busy", m->refused);
	one_u64(t, m, "sluice_metrics_timeouts_total", C,
		"Connections closed at their deadline (slow or silent clients)", m->timeouts);
}

void
sl_metrics_collect(const struct sl_metrics *m, struct sl_metrics_text *t)
{
	if (lat_le[0] == 0)
		lat_le_init();
	switch_info(m, t);
	ports(m, t);
	drops(m, t);
	tables(m, t);
	datapath(m, t);
	workers(m, t);
	controller(m, t);
	latency(m, t);
	ffp(m, t);
	exporter(m, t);
}
