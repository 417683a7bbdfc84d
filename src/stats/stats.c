/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats: counter readers shared by telemetry and the metrics exporter.
 * Control path only.
 */
#include "stats.h"

#include <string.h>

#include <rte_cycles.h>

const char *const sl_stats_latency_class_names[SL_STATS_LATENCY_CLASSES] = {"pipeline",
									    "packet_in"};

static unsigned
ctxs_read(const struct sl_stats_src *s, const struct sl_pipeline_ctx *ctxs[])
{
	return sl_worker_ctxs(s->worker, ctxs, SL_DISPATCH_WORKERS_MAX);
}

void
sl_stats_port_read(const struct sl_stats_src *s, unsigned i, struct sl_stats_port *out)
{
	sl_worker_port_read(s->worker, i, &out->sw);
	sl_port_hw_stats(&s->ports[i], &out->hw);
	sl_port_link(&s->ports[i], &out->link);
	out->live = sl_pipeline_port_live(s->pl, s->ports[i].of_no);
}

void
sl_stats_drops_read(const struct sl_stats_src *s, uint64_t drops[SL_DROP__MAX])
{
	sl_worker_drops(s->worker, drops);
	/*
	 * The tx path counts refusals per port, not as a pipeline drop: fold them
	 * in here, with those of deleted ports.
	 */
	for (unsigned i = 0; i < SL_PORT_SLOTS; i++) {
		struct sl_worker_port_stats ps;
		sl_worker_port_read(s->worker, i, &ps);
		drops[SL_DROP_TX_FULL] += ps.tx_drops;
	}
	struct sl_worker_port_stats retired;
	sl_worker_retired_read(s->worker, &retired);
	drops[SL_DROP_TX_FULL] += retired.tx_drops;
}

bool
sl_stats_table_read(const struct sl_stats_src *s, unsigned t, bool full, struct sl_stats_table *out)
{
	const struct sl_pipeline_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned n_ctxs = ctxs_read(s, ctxs);
	const struct sl_table *tbl = sl_pipeline_table(s->pl, t);
	const struct sl_state *st;

	memset(out, 0, sizeof(*out));
	sl_pipeline_table_stats(ctxs, n_ctxs, t, &out->hits);
	out->spec = sl_pipeline_table_spec(s->pl, t);
	out->flows = sl_pipeline_flow_count(s->pl, t);
	out->in_use = tbl != NULL || out->flows > 0 || out->hits.lookups > 0 ||
		      sl_pipeline_table_declared(s->pl, t);
	if (!full)
		return out->in_use;
	out->search_cycles = sl_pipeline_search_cost(ctxs, n_ctxs, t);
	if (tbl != NULL)
		sl_table_stats_read(tbl, &out->store);
	st = sl_pipeline_state_table(s->pl, t);
	if (st != NULL) { /* an OpenState table: its entries are states */
		out->is_state = true;
		sl_state_stats_get(st, &out->state);
		out->store.n_entries = out->state.n_entries;
		out->store.mem_bytes = out->state.bytes;
	}
	return out->in_use;
}

void
sl_stats_datapath_read(const struct sl_stats_src *s, struct sl_stats_datapath *out)
{
	const struct sl_pipeline_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned n_ctxs = ctxs_read(s, ctxs);
	const struct sl_worker *w = s->worker;
	struct sl_worker_totals tot;

	memset(out, 0, sizeof(*out));
	sl_worker_totals(w, &tot);
	sl_worker_loop_read(w, &out->loop);
	sl_pipeline_cache_stats(ctxs, n_ctxs, &out->cache_hits, &out->cache_misses);
	sl_pipeline_search_budget_get(s->pl, &out->budget);
	sl_pipeline_search_budget_stats(ctxs, n_ctxs, &out->budget_stats);
	out->workers = sl_worker_group_size(w);
	out->copies = tot.copies;
	out->chain_installed = sl_pipeline_chain_installed(s->pl);
	out->chain_traversed = sl_pipeline_chain_traversed(ctxs, n_ctxs);
	struct sl_worker_idle_stats idle;
	sl_worker_idle_read(w, &idle);
	out->idle_sleep_max_us = idle.max_us;
	out->idle_sleeps = idle.sleeps;
	out->idle_slept_ns = idle.slept_ns;
	out->tsc_hz = rte_get_tsc_hz();
}

bool
sl_stats_latency_read(const struct sl_stats_src *s, const char *name, struct sl_lat_hist *out)
{
	if (strcmp(name, "pipeline") == 0) {
		sl_worker_lat_read(s->worker, out);
		return true;
	}
	if (strcmp(name, "packet_in") == 0) {
		struct sl_ofswitch_stats ss;
		memset(&ss, 0, sizeof(ss));
		if (s->sw != NULL)
			sl_ofswitch_stats(s->sw, &ss);
		*out = ss.packet_in_latency;
		return true;
	}
	return false;
}

void
sl_stats_controller_read(const struct sl_stats_src *s, struct sl_stats_controller *out)
{
	memset(out, 0, sizeof(*out));
	if (s->sw != NULL) {
		sl_ofswitch_stats(s->sw, &out->of);
		out->connections = sl_ofswitch_n_connections(s->sw);
	}
	sl_worker_ctrl_read(s->worker, &out->port);
	sl_worker_pin_drops_read(s->worker, &out->pin_drops);
}

void
sl_stats_worker_read(const struct sl_stats_src *s, unsigned i, struct sl_stats_worker *out)
{
	const struct sl_pipeline_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned n_ctxs = ctxs_read(s, ctxs);
	const struct sl_worker_io *io = sl_worker_group_io(s->worker);
	struct sl_worker_member_stats ms;

	memset(out, 0, sizeof(*out));
	if (i < n_ctxs)
		sl_pipeline_drop_stats(&ctxs[i], 1, out->drops);
	sl_worker_member_read(s->worker, i, &ms);
	out->tx_drops = ms.tx_drops;
	out->packets = ms.packets;
	out->bursts = ms.bursts;
	out->busy_cycles = ms.busy_cycles;
	if (io != NULL && ms.dispatched) {
		struct sl_worker_io_stats ios;
		sl_worker_io_read(io, &ios);
		out->dispatched = true;
		out->ring_used = ms.ring_used;
		out->ring_size = ios.ring_size;
		sl_dispatch_worker_stats(sl_worker_io_dispatch(io), i, &out->disp);
	}
}

void
sl_stats_dispatch_read(const struct sl_stats_src *s, struct sl_stats_dispatch *out)
{
	const struct sl_worker_io *io = sl_worker_group_io(s->worker);
	const struct sl_dispatch *disp;
	struct sl_worker_io_stats ios;

	memset(out, 0, sizeof(*out));
	if (io == NULL)
		return;
	disp = sl_worker_io_dispatch(io);
	sl_worker_io_read(io, &ios);
	out->io = true;
	out->sched = sl_dispatch_sched(disp);
	out->threshold = sl_dispatch_threshold(disp);
	out->adjustments = sl_dispatch_adjustments(disp);
	out->loop = ios.loop;
	out->ring_full = ios.ring_full;
}
