/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fast path: the generator's one loop.  Each round it builds the frames that
 * are due by their stream's schedule (one burst at most), stamps them with
 * the round's TSC, transmits, then polls the receive port once and accounts
 * what came back.  Sending and receiving share the lcore, so the receive
 * timestamp is taken once per received burst (its cost is part of the
 * generator's own latency floor, measured in loopback).
 *
 * Frames the port refuses are counted as tx_rejected and freed: on a wire
 * they would be lost in the device under test's receive ring, and this
 * keeps the offered schedule independent of the device's speed.  With
 * several tx queues the bursts take them in turn, so a device that polls
 * them all has their rings' combined room to ride out a stall.
 */
#include "gen.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

struct rt_stream {
	const uint8_t *data;
	const uint32_t *lens;
	uint32_t n, stride, next;
	uint32_t seq;
	double period;   /* TSC cycles between frames */
	double next_tsc; /* when the next frame is due */
};

int
sl_gen_run(const struct sl_gen_run_params *p, struct sl_gen_stream_stats *stats,
	   struct sl_gen_run_totals *tot)
{
	struct rte_mbuf *tx[SL_BURST_MAX_GEN], *rx[SL_BURST_MAX_GEN];
	uint16_t sid[SL_BURST_MAX_GEN];
	struct rt_stream *rt;
	uint64_t hz = rte_get_tsc_hz();
	double ns_per_cycle = 1e9 / (double)hz;
	unsigned burst = p->burst, rr = 0;
	uint64_t t0, t_end, t_first = 0, t_last = 0, drain_end = 0;
	bool tx_done = false;
	uint16_t rxq = 0, n_rxq = p->rx_queues ? p->rx_queues : 1;
	uint16_t txq = 0, n_txq = p->tx_queues ? p->tx_queues : 1;
	uint64_t next_batch = 0, batch_cycles = (uint64_t)(p->batch_s * (double)hz);

	memset(tot, 0, sizeof(*tot));
	tot->tsc_hz = hz;
	if (burst == 0 || burst > SL_BURST_MAX_GEN || p->n_streams == 0 ||
	    p->n_streams > SL_GEN_STREAMS_MAX)
		return -EINVAL;
	rt = calloc(p->n_streams, sizeof(*rt));
	if (rt == NULL)
		return -ENOMEM;
	t0 = rte_rdtsc() + hz / 100; /* start 10 ms from now, streams staggered */
	for (unsigned s = 0; s < p->n_streams; s++) {
		memset(&stats[s], 0, sizeof(stats[s]));
		sl_gen_hist_init(&stats[s].lat);
		rt[s].data = p->frames[s].data;
		rt[s].lens = p->frames[s].lens;
		rt[s].n = p->frames[s].n;
		rt[s].stride = p->frames[s].stride;
		rt[s].period = (double)hz / p->specs[s].pps;
		rt[s].next_tsc = (double)t0 + rt[s].period * s / p->n_streams;
	}
	t_end = t0 + (uint64_t)(p->duration_s * (double)hz);

	for (;;) {
		uint64_t now = rte_rdtsc();

		if (p->stop != NULL && *p->stop && !tx_done)
			t_end = now;
		if (!tx_done && now < t_end && now >= next_batch) {
			unsigned n = 0;

			/* Stage 1: pick the due frames, streams in rotating order. */
			for (unsigned k = 0; k < p->n_streams && n < burst; k++) {
				unsigned s = rr + k < p->n_streams ? rr + k : rr + k - p->n_streams;
				struct rt_stream *r = &rt[s];

				while (n < burst && r->next_tsc <= (double)now) {
					sid[n++] = (uint16_t)s;
					r->next_tsc += r->period;
				}
			}
			rr = rr + 1 < p->n_streams ? rr + 1 : 0;
			if (n < burst)
				next_batch =
					now + batch_cycles; /* caught up: wait for the next batch */
			if (n == burst) {
				/* A full burst: frames may still be due; how far behind are we? */
				for (unsigned s = 0; s < p->n_streams; s++) {
					double lag = (double)now - rt[s].next_tsc;
					if (lag > (double)tot->late_max_cycles)
						tot->late_max_cycles = (uint64_t)lag;
				}
			}
			if (n > 0 && rte_pktmbuf_alloc_bulk(p->mp, tx, n) != 0) {
				tot->alloc_fail++;
				n = 0;
			}
			/* Stage 2: copy each frame, stamp it, send the burst. */
			for (unsigned i = 0; i < n; i++) {
				struct rt_stream *r = &rt[sid[i]];
				uint32_t len = r->lens[r->next];
				uint8_t *d = rte_pktmbuf_mtod(tx[i], uint8_t *);

				memcpy(d, r->data + (size_t)r->next * r->stride, len);
				sl_gen_sig_write(d, len, sid[i], r->seq++, now);
				tx[i]->data_len = (uint16_t)len;
				tx[i]->pkt_len = len;
				r->next = r->next + 1 < r->n ? r->next + 1 : 0;
				stats[sid[i]].tx++;
				stats[sid[i]].tx_bytes += len + SL_GEN_FCS;
			}
			if (n > 0) {
				uint16_t sent = rte_eth_tx_burst(p->tx_port, txq, tx, (uint16_t)n);

				txq = txq + 1 < n_txq ? txq + 1 : 0;

				for (unsigned i = sent; i < n; i++)
					stats[sid[i]].tx_rejected++;
				if (sent < n)
					rte_pktmbuf_free_bulk(tx + sent, n - sent);
				if (t_first == 0)
					t_first = now;
				t_last = now;
			}
		} else if (!tx_done && now < t_end) {
			/* Between batches: only receive. */
		} else if (!tx_done) {
			tx_done = true;
			drain_end = now + (uint64_t)(p->drain_s * (double)hz);
		} else if (now >= drain_end) {
			break;
		}

		/* Stage 3: receive and account one burst. */
		uint16_t nb = rte_eth_rx_burst(p->rx_port, rxq, rx, (uint16_t)burst);
		rxq = rxq + 1 < n_rxq ? rxq + 1 : 0;
		if (nb == 0)
			continue;
		uint64_t rnow = rte_rdtsc();
		for (unsigned i = 0; i < nb; i++) {
			const struct rte_mbuf *m = rx[i];
			uint8_t tail[SL_GEN_SIG_SIZE];
			const uint8_t *sig;
			uint16_t s;
			uint32_t seq;
			uint64_t tsc;

			if (m->pkt_len < SL_GEN_SIG_SIZE) {
				tot->rx_foreign++;
				continue;
			}
			sig = rte_pktmbuf_read(m, m->pkt_len - SL_GEN_SIG_SIZE, SL_GEN_SIG_SIZE,
					       tail);
			if (!sl_gen_sig_read(sig, SL_GEN_SIG_SIZE, &s, &seq, &tsc) ||
			    s >= p->n_streams) {
				tot->rx_foreign++;
				continue;
			}
			struct sl_gen_stream_stats *st = &stats[s];
			st->rx++;
			st->rx_bytes += m->pkt_len + SL_GEN_FCS;
			if (seq < st->max_seq)
				st->reordered++;
			else
				st->max_seq = seq + 1;
			sl_gen_hist_add(&st->lat,
					rnow > tsc ? (uint64_t)((double)(rnow - tsc) * ns_per_cycle)
						   : 0);
		}
		rte_pktmbuf_free_bulk(rx, nb);
	}
	tot->tx_seconds = t_last > t_first ? (double)(t_last - t_first) / (double)hz : 0;
	free(rt);
	return 0;
}
