/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The datapath loop (fast path), plus its init/fini and stats readers.
 *
 * Per burst: rx -> packet contexts -> sl_pipeline_run_burst -> group by
 * output port -> tx_burst per port.  Dropped mbufs are freed in one bulk
 * call per burst.
 */
#include "worker.h"

#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

/* How many packets ahead the context-fill loop prefetches frame data. */
#define PREFETCH_OFFSET 4

int
sl_worker_init(struct sl_worker *w, struct sl_pipeline *pl, struct sl_port *ports,
	       unsigned n_ports, struct rte_mempool *mp, uint16_t burst)
{
	memset(w, 0, sizeof(*w));
	w->pl = pl;
	w->ports = ports;
	w->n_ports = n_ports;
	w->mp = mp;
	w->burst = burst == 0 ? SL_BURST_DEFAULT : SL_MIN(burst, SL_BURST_MAX);
	w->ctx = sl_pipeline_ctx_create(pl);
	return w->ctx != NULL ? 0 : -ENOMEM;
}

void
sl_worker_fini(struct sl_worker *w)
{
	sl_pipeline_ctx_destroy(w->ctx);
	w->ctx = NULL;
}

static void
tx_flush(struct sl_worker *w, unsigned port_idx)
{
	uint16_t n = w->n_txb[port_idx];
	uint16_t sent;

	if (n == 0)
		return;
	sent = rte_eth_tx_burst(w->ports[port_idx].dpdk_id, w->queue, w->txb[port_idx], n);
	w->pstats[port_idx].tx_packets += sent;
	for (uint16_t i = 0; i < sent; i++)
		w->pstats[port_idx].tx_bytes += rte_pktmbuf_pkt_len(w->txb[port_idx][i]);
	if (sl_unlikely(sent < n)) {
		w->pstats[port_idx].tx_drops += n - sent;
		rte_pktmbuf_free_bulk(&w->txb[port_idx][sent], n - sent);
	}
	w->n_txb[port_idx] = 0;
}

static inline void
tx_enqueue(struct sl_worker *w, unsigned port_idx, struct rte_mbuf *m)
{
	if (sl_unlikely(w->n_txb[port_idx] == SL_BURST_MAX))
		tx_flush(w, port_idx);
	w->txb[port_idx][w->n_txb[port_idx]++] = m;
}

/* Pipeline hook: copy a packet as it is now and queue the copy for @port. */
static int
emit_copy(void *arg, const struct sl_pkt *p, uint32_t port)
{
	struct sl_worker *w = arg;
	struct rte_mbuf *m = rte_pktmbuf_alloc(w->mp);
	char *dst;

	if (m == NULL)
		return -ENOMEM;
	dst = rte_pktmbuf_append(m, p->len);
	if (dst == NULL) {
		rte_pktmbuf_free(m);
		return -ENOMEM;
	}
	rte_memcpy(dst, p->data, p->len);
	m->port = ((struct rte_mbuf *)p->opaque)->port;
	tx_enqueue(w, port - 1, m);
	return 0;
}

/* Process one received burst from port @in_idx. */
static void
process_burst(struct sl_worker *w, unsigned in_idx, struct rte_mbuf **mbufs, uint16_t n)
{
	struct sl_pkt pkts[SL_BURST_MAX];
	uint32_t out_ports[SL_BURST_MAX];
	uint8_t drops[SL_BURST_MAX];
	struct rte_mbuf *dropped[SL_BURST_MAX];
	const struct sl_pipeline_hooks hooks = {.emit_copy = emit_copy, .arg = w};
	struct sl_worker_port_stats *ps = &w->pstats[in_idx];
	uint32_t in_port = in_idx + 1;
	unsigned n_dropped = 0;

	/* Stage 1: packet contexts; prefetch frame data a few packets ahead. */
	for (unsigned i = 0; i < n && i < PREFETCH_OFFSET; i++)
		rte_prefetch0(rte_pktmbuf_mtod(mbufs[i], void *));
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = mbufs[i];

		if (i + PREFETCH_OFFSET < n)
			rte_prefetch0(rte_pktmbuf_mtod(mbufs[i + PREFETCH_OFFSET], void *));
		/* Multi-segment frames are matched on their first segment only. */
		sl_pkt_init(&pkts[i], rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m),
			    rte_pktmbuf_headroom(m), in_port);
		pkts[i].opaque = m;
		ps->rx_bytes += rte_pktmbuf_pkt_len(m);
	}
	ps->rx_packets += n;

	/* Stage 2: the pipeline over the whole burst. */
	sl_pipeline_run_burst(w->pl, w->ctx, pkts, n, &hooks, out_ports, drops);

	/* Stage 3: group by output port (headers may have moved: push/pop VLAN). */
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = mbufs[i];

		if (out_ports[i] == SL_PORT_DROP) {
			dropped[n_dropped++] = m;
			continue;
		}
		if (sl_unlikely(pkts[i].data != rte_pktmbuf_mtod(m, uint8_t *) ||
				pkts[i].len != rte_pktmbuf_data_len(m))) {
			int32_t delta = (int32_t)pkts[i].len - (int32_t)rte_pktmbuf_data_len(m);
			m->data_off = (uint16_t)(pkts[i].data - (uint8_t *)m->buf_addr);
			m->data_len = pkts[i].len;
			m->pkt_len = (uint32_t)((int32_t)m->pkt_len + delta);
		}
		tx_enqueue(w, out_ports[i] - 1, m);
	}
	if (n_dropped)
		rte_pktmbuf_free_bulk(dropped, n_dropped);

	/* Stage 4: transmit. */
	for (unsigned p = 0; p < w->n_ports; p++)
		tx_flush(w, p);
}

int
sl_worker_run(void *arg)
{
	struct sl_worker *w = arg;
	struct rte_mbuf *mbufs[SL_BURST_MAX];

	w->running = true;
	while (!w->stop) {
		bool busy = false;
		uint64_t t0 = rte_rdtsc();

		for (unsigned p = 0; p < w->n_ports; p++) {
			uint16_t n = rte_eth_rx_burst(w->ports[p].dpdk_id, w->queue, mbufs, w->burst);
			if (n == 0)
				continue;
			busy = true;
			w->loop.bursts++;
			w->loop.packets += n;
			process_burst(w, p, mbufs, n);
		}
		w->loop.iterations++;
		if (busy) {
			w->loop.busy_rounds++;
			w->loop.busy_cycles += rte_rdtsc() - t0;
		}
	}
	for (unsigned p = 0; p < w->n_ports; p++)
		tx_flush(w, p);
	w->running = false;
	return 0;
}

void
sl_worker_drops(const struct sl_worker *w, uint64_t drops[SL_DROP__MAX])
{
	const struct sl_pipeline_ctx *ctxs[1] = {w->ctx};

	sl_pipeline_drop_stats(ctxs, 1, drops);
}

void
sl_worker_totals(const struct sl_worker *w, struct sl_worker_totals *t)
{
	const struct sl_pipeline_ctx *ctxs[1] = {w->ctx};
	uint64_t drops[SL_DROP__MAX];

	memset(t, 0, sizeof(*t));
	for (unsigned p = 0; p < w->n_ports; p++) {
		t->rx += w->pstats[p].rx_packets;
		t->tx += w->pstats[p].tx_packets;
		t->tx_drops += w->pstats[p].tx_drops;
	}
	sl_worker_drops(w, drops);
	for (unsigned r = 0; r < SL_DROP__MAX; r++)
		t->pipeline_drops += drops[r];
	t->copies = sl_pipeline_copies(ctxs, 1);
}
