/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The I/O core of the I/O-core dispatch design (fast path, except init/fini).
 *
 * Per rx burst: count rx, stage 1 extracts every packet's 5-tuple and its
 * CRC32-C, stage 2 hands the burst to the scheduler (src/dispatch), which
 * appends each packet to its worker's out-buffer and flushes full ones into
 * the worker's ring.  Out-buffers are also flushed when a polling round
 * received nothing and when the flush timer expires, so a lone packet never
 * waits for company.  A ring that refuses packets gets them freed here and
 * counted as dispatch-full drops.
 */
#include "worker_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#define PREFETCH_OFFSET 4

static unsigned
io_enqueue(void *arg, unsigned w, void *const objs[], unsigned n)
{
	struct sl_worker_io *io = arg;
	unsigned k = rte_ring_sp_enqueue_burst(io->rings[w], objs, n, NULL);

	if (sl_unlikely(k < n)) {
		rte_pktmbuf_free_bulk((struct rte_mbuf **)(uintptr_t)&objs[k], n - k);
		io->ring_full += n - k;
	}
	return k;
}

static unsigned
io_ring_used(void *arg, unsigned w)
{
	struct sl_worker_io *io = arg;

	return rte_ring_count(io->rings[w]);
}

static uint64_t
io_done(void *arg, unsigned w)
{
	struct sl_worker_io *io = arg;

	return __atomic_load_n(&io->workers[w].done, __ATOMIC_ACQUIRE);
}

static int
io_init(struct sl_worker_io *io, struct sl_worker *ws, unsigned n, enum sl_sched sched,
	double threshold, unsigned ring_size, unsigned out_burst, unsigned flush_us)
{
	char name[RTE_RING_NAMESIZE];
	int rc;

	memset(io, 0, sizeof(*io));
	if (n < 1 || n > SL_ARRAY_SIZE(io->rings) || (ring_size & (ring_size - 1)) != 0)
		return -EINVAL;
	io->workers = ws;
	io->n_workers = n;
	io->burst = ws[0].burst;
	io->ring_size = ring_size;
	io->flush_cycles = rte_get_tsc_hz() / 1000000 * flush_us;
	for (unsigned i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "sl_wring%u", i);
		/* Exact size: the load factor's Q_total is ring_size slots. */
		io->rings[i] = rte_ring_create(name, ring_size, SOCKET_ID_ANY,
					       RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (io->rings[i] == NULL) {
			sl_worker_io_fini(io);
			return -ENOMEM;
		}
	}
	struct sl_dispatch_params dp = {
		.n_workers = n,
		.sched = sched,
		.threshold = threshold,
		.burst = io->burst,
		.out_burst = out_burst,
		.ring_size = ring_size,
		.ops = {.enqueue = io_enqueue,
			.ring_used = io_ring_used,
			.done = io_done,
			.arg = io},
	};
	rc = sl_dispatch_create(&dp, &io->disp);
	if (rc < 0) {
		sl_worker_io_fini(io);
		return rc;
	}
	/* Each packet carries its receive TSC to the worker (pipeline latency from rx). */
	static const struct rte_mbuf_dynfield rx_tsc = {
		.name = "sluice_io_rx_tsc",
		.size = sizeof(uint64_t),
		.align = __alignof__(uint64_t),
	};
	io->rx_tsc_off = rte_mbuf_dynfield_register(&rx_tsc);
	for (unsigned i = 0; i < n; i++) {
		ws[i].in_ring = io->rings[i];
		ws[i].io = io;
		ws[i].rx_tsc_off = io->rx_tsc_off;
	}
	/* It reads the port set: the grace periods wait for it too (QSBR thread n). */
	if (ws[0].qs != NULL)
		rte_rcu_qsbr_thread_register(ws[0].qs, n);
	return 0;
}

int
sl_worker_io_create(struct sl_worker *w, enum sl_sched sched, double threshold, unsigned ring_size,
		    unsigned out_burst, unsigned flush_us, struct sl_worker_io **out)
{
	struct sl_worker *l = w->lead;
	struct sl_worker_io *io = aligned_alloc(64, RTE_ALIGN(sizeof(*io), 64));
	int rc;

	*out = NULL;
	if (io == NULL)
		return -ENOMEM;
	rc = io_init(io, l->group, l->n_group, sched, threshold, ring_size, out_burst, flush_us);
	if (rc < 0) {
		free(io);
		return rc;
	}
	*out = io; /* freed with the group (sl_worker_group_destroy) */
	return 0;
}

void
sl_worker_io_stop(struct sl_worker_io *io)
{
	io->stop = true;
}

struct sl_worker_io *
sl_worker_group_io(const struct sl_worker *w)
{
	return w->lead->io;
}

struct sl_dispatch *
sl_worker_io_dispatch(const struct sl_worker_io *io)
{
	return io->disp;
}

void
sl_worker_io_read(const struct sl_worker_io *io, struct sl_worker_io_stats *out)
{
	out->loop = io->loop;
	out->ring_full = io->ring_full;
	out->ring_size = io->ring_size;
}

void
sl_worker_io_fini(struct sl_worker_io *io)
{
	struct rte_mbuf *m;

	for (unsigned i = 0; i < SL_ARRAY_SIZE(io->rings); i++) {
		if (io->rings[i] == NULL)
			continue;
		/* Nothing is left after a clean stop; free what an aborted start left. */
		while (rte_ring_dequeue(io->rings[i], (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(io->rings[i]);
		io->rings[i] = NULL;
		if (io->workers != NULL && i < io->n_workers)
			io->workers[i].in_ring = NULL;
	}
	sl_dispatch_destroy(io->disp);
	io->disp = NULL;
}

/* Receive one burst from queue @q of port index @p and hand it to the scheduler. */
static uint16_t
io_rx_burst(struct sl_worker_io *io, const struct sl_worker *w0, unsigned p, uint16_t q,
	    struct rte_mbuf **mbufs, uint32_t *hashes)
{
	uint16_t n = rte_eth_rx_burst(w0->ports[p].dpdk_id, q, mbufs, io->burst);
	uint64_t bytes = 0;

	if (n == 0)
		return 0;
	uint64_t rx_tsc = rte_rdtsc();
	io->loop.bursts++;
	io->loop.packets += n;
	/* Stage 1: 5-tuple hash of every packet, frame data prefetched ahead. */
	for (unsigned i = 0; i < n && i < PREFETCH_OFFSET; i++)
		rte_prefetch0(rte_pktmbuf_mtod(mbufs[i], void *));
	for (unsigned i = 0; i < n; i++) {
		struct sl_dispatch_tuple t;

		if (i + PREFETCH_OFFSET < n)
			rte_prefetch0(rte_pktmbuf_mtod(mbufs[i + PREFETCH_OFFSET], void *));
		sl_dispatch_tuple_extract(rte_pktmbuf_mtod(mbufs[i], const uint8_t *),
					  rte_pktmbuf_data_len(mbufs[i]), &t);
		hashes[i] = sl_dispatch_crc32(&t);
		bytes += rte_pktmbuf_pkt_len(mbufs[i]);
		if (io->rx_tsc_off >= 0)
			*RTE_MBUF_DYNFIELD(mbufs[i], io->rx_tsc_off, uint64_t *) = rx_tsc;
	}
	io->pstats[p].rx_packets += n;
	io->pstats[p].rx_bytes += bytes;
	/* Stage 2: the scheduler fills the out-buffers, flushing full ones. */
	sl_dispatch_burst(io->disp, (void *const *)mbufs, hashes, n, NULL);
	return n;
}

int
sl_worker_io_run(void *arg)
{
	struct sl_worker_io *io = arg;
	const struct sl_worker *w0 = &io->workers[0];
	struct rte_rcu_qsbr *qs = w0->qs;
	struct rte_mbuf *mbufs[SL_BURST_MAX];
	uint32_t hashes[SL_BURST_MAX];

	io->running = true;
	io->last_flush_tsc = rte_rdtsc();
	if (qs != NULL)
		rte_rcu_qsbr_thread_online(qs, io->n_workers);
	while (!io->stop) {
		bool busy = false;
		uint64_t t0 = rte_rdtsc(), now;
		const struct sl_worker_pset *ps = __atomic_load_n(&w0->pset_pub, __ATOMIC_ACQUIRE);

		/* Every rx queue of every port (one each unless --rx-queues). */
		for (unsigned k = 0; k < ps->n; k++) {
			unsigned p = ps->slots[k];
			for (unsigned q = 0; q < w0->ports[p].n_rxq; q++)
				busy |= io_rx_burst(io, w0, p, (uint16_t)q, mbufs, hashes) > 0;
		}
		/* Idle round or timer: nobody waits on a partly filled out-buffer. */
		now = rte_rdtsc();
		if (!busy || now - io->last_flush_tsc >= io->flush_cycles) {
			sl_dispatch_flush(io->disp);
			io->last_flush_tsc = now;
		}
		io->loop.iterations++;
		if (busy) {
			io->loop.busy_rounds++;
			io->loop.busy_cycles += now - t0;
		}
		if (qs != NULL)
			rte_rcu_qsbr_quiescent(qs,
					       io->n_workers); /* done with this round's ports */
	}
	sl_dispatch_flush(io->disp);
	if (qs != NULL)
		rte_rcu_qsbr_thread_offline(qs, io->n_workers);
	io->running = false;
	return 0;
}
