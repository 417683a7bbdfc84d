/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * worker: the run-to-completion datapath loop on one lcore.
 *
 * Each iteration polls every port's rx queue for a burst, runs the burst
 * through the pipeline, groups the packets by output port and transmits
 * them in bursts.  No allocation, lock, syscall or log per packet; mbufs
 * are only allocated for multi-output copies (from the mempool).
 *
 * Counters never lie: for every port and in total,
 *     rx + copies == tx + tx_drops + pipeline drops (+ packets in flight)
 * and after sl_worker_run returns nothing is in flight.  Drops carry a
 * reason (core.h).  Counters are plain 64-bit words written only by the
 * worker; the control thread reads them (aligned 64-bit loads are atomic on
 * the CPUs DPDK supports).
 *
 * TODO(#7): several workers (RSS queues or an I/O core with rings).
 */
#ifndef SL_WORKER_H
#define SL_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/core.h"
#include "../pipeline/pipeline.h"
#include "../port/port.h"

struct rte_mempool;
struct rte_mbuf;

/** Per-port counters kept by the worker. */
struct sl_worker_port_stats {
	uint64_t rx_packets, rx_bytes;
	uint64_t tx_packets, tx_bytes;
	uint64_t tx_drops; /* refused by the tx queue */
} SL_CACHE_ALIGNED;

/** Loop counters. */
struct sl_worker_loop_stats {
	uint64_t iterations;   /* polling rounds over all ports */
	uint64_t busy_rounds;  /* rounds that received at least one packet */
	uint64_t busy_cycles;  /* TSC cycles spent processing received bursts */
	uint64_t bursts;       /* non-empty rx bursts */
	uint64_t packets;      /* packets received */
};

struct sl_worker {
	/* Configuration (set before start). */
	struct sl_pipeline *pl;
	struct sl_port *ports; /* ports[i] is OpenFlow port i + 1 */
	unsigned n_ports;
	struct rte_mempool *mp; /* for multi-output copies */
	uint16_t burst;         /* rx burst size, <= SL_BURST_MAX */
	uint16_t queue;         /* rx/tx queue this worker uses */

	/* State. */
	volatile bool stop;     /* set by the control thread to end the loop */
	volatile bool running;
	struct sl_pipeline_ctx *ctx;
	struct sl_worker_port_stats pstats[SL_PORTS_MAX];
	struct sl_worker_loop_stats loop SL_CACHE_ALIGNED;
	struct rte_mbuf *txb[SL_PORTS_MAX][SL_BURST_MAX]; /* per-port tx burst being built */
	uint16_t n_txb[SL_PORTS_MAX];
};

/**
 * Prepare a worker: allocates its pipeline context.
 *
 * @return 0 or -ENOMEM.  Main thread.
 */
int sl_worker_init(struct sl_worker *w, struct sl_pipeline *pl, struct sl_port *ports,
		   unsigned n_ports, struct rte_mempool *mp, uint16_t burst);

/** Free what sl_worker_init allocated.  Main thread, after the loop ended. */
void sl_worker_fini(struct sl_worker *w);

/**
 * The datapath loop; returns when w->stop is set, after flushing every tx
 * buffer.  Signature fits rte_eal_remote_launch.
 */
int sl_worker_run(void *w);

/** Pipeline drop counters of this worker (indexed by enum sl_drop_reason). */
void sl_worker_drops(const struct sl_worker *w, uint64_t drops[SL_DROP__MAX]);

/** Totals over all ports: rx, tx, tx_drops; plus pipeline drops and copies. */
struct sl_worker_totals {
	uint64_t rx, tx, tx_drops, pipeline_drops, copies;
};
void sl_worker_totals(const struct sl_worker *w, struct sl_worker_totals *t);

#endif /* SL_WORKER_H */
