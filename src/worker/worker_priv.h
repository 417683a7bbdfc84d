/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * worker internals: the worker and I/O core structures, shared by worker.c
 * and io.c only.  The loops read these fields directly (no call per burst);
 * other components use the functions of worker.h.
 */
#ifndef SL_WORKER_PRIV_H
#define SL_WORKER_PRIV_H

#include "worker.h"

/** A packet_out on its way to the worker. */
struct sl_worker_pout {
	struct rte_mbuf *m;
	uint32_t in_port;
	uint8_t n_actions;
	struct sl_action actions[SL_ACTIONS_MAX];
};

/**
 * The ports the group polls and transmits on: a snapshot the control thread
 * publishes (sl_worker_port_attach/detach) and each worker takes at the
 * start of a round, so a port leaves a worker's loops only between rounds.
 */
struct sl_worker_pset {
	unsigned n;                   /* ports in use */
	uint8_t slots[SL_PORT_SLOTS]; /* their slots in ports[], in slot order */
};

/** A worker: configuration, the loop's state and counters (worker.c). */
struct sl_worker {
	/* Configuration (set before start). */
	struct sl_pipeline *pl;
	struct sl_port
		*ports; /* SL_PORT_SLOTS slots: ports[i] is OpenFlow port i + 1, then LOCAL */
	struct rte_mempool *mp; /* for multi-output copies */
	uint16_t burst;         /* rx burst size, <= SL_BURST_MAX */
	uint16_t queue;         /* its tx queue and first rx queue (then + n_group, ...) */

	/* State. */
	volatile bool stop; /* set by the control thread to end the loop */
	volatile bool running;
	struct sl_pipeline_ctx *ctx;
	const struct sl_worker_pset
		*pset; /* this round's ports (the lead's pset_pub when it began) */
	struct sl_worker_port_stats pstats[SL_PORT_SLOTS];
	struct sl_worker_loop_stats loop SL_CACHE_ALIGNED;
	struct rte_mbuf *txb[SL_PORT_SLOTS][SL_BURST_MAX]; /* per-port tx burst being built */
	uint16_t n_txb[SL_PORT_SLOTS];
	uint32_t txb_bytes[SL_PORT_SLOTS]; /* their bytes: tx_bytes when the whole burst goes */

	/* Controller channel (sl_worker_ctrl_init). */
	struct sl_worker_port_stats ctrl; /* the controller as a port (see above) */
	struct sl_worker_pin_drops pin_drops;
	uint64_t pin_wake_fails;    /* eventfd writes that failed (the agent polls anyway) */
	struct rte_ring *pin_ring;  /* worker -> control: packet-in mbufs */
	int pin_wake_fd;            /* eventfd: written when the agent sleeps (pin_agent_asleep) */
	bool pin_agent_asleep;      /* the agent is (about to be) in poll(): wake it */
	struct rte_mempool *pin_mp; /* packet-in copies, sl_worker_pin in the private area */
	struct rte_ring *pout_ring; /* control -> worker: struct sl_worker_pout * */
	struct rte_ring *pout_free; /* worker -> control: executed descriptors */
	struct sl_worker_pout *pouts;            /* descriptor storage */
	volatile bool controller_up;             /* packet-ins have somewhere to go */
	uint64_t pin_rate;                       /* packet-ins per second, 0 = unlimited */
	uint64_t pin_tokens, pin_last_tsc;       /* token bucket, scaled by the TSC rate */
	struct rte_mbuf *reinject[SL_BURST_MAX]; /* packet_out output:TABLE, run next */
	unsigned n_reinject;
	uint32_t reinject_port;
	struct rte_rcu_qsbr *qs; /* quiescent-state reports; NULL without control channel */
	struct sl_fwd_ctx *fwd;  /* forwarding modes (src/fwd); NULL = pipeline only */
	struct sl_idle idle;     /* adaptive idle sleep (src/idle); zeroed = off */

	/* Observation (control thread reads; see sl_worker_capture_set). */
	struct sl_capture *capture;  /* port mirroring; NULL when off */
	struct sl_trace_live *trace; /* live trace recorder; NULL when off */
	uint64_t burst_tsc;          /* rx time of the burst being processed */
	uint64_t round_tsc;          /* when the last round ended (sl_worker_run) */
	bool keeping_up;             /* that burst was not full: no backlog (search budget) */
	unsigned credit_rounds;      /* busy rounds since deferred credits were flushed */
	uint64_t lat_mult;           /* cycles -> ns (sl_lat_ns_mult) */
	struct sl_lat_hist lat_pipeline SL_CACHE_ALIGNED; /* rx burst handed over -> tx queued */

	/* Group (sl_worker_group_init); a lone worker is a group of one. */
	struct sl_worker *lead;         /* group[0]: controller channel, RCU variable */
	struct sl_worker *group;        /* the group's array */
	unsigned n_group;               /* workers in the group */
	unsigned id;                    /* index in the group = QSBR thread id = queue */
	struct sl_worker_io *io;        /* the I/O core feeding the group, or NULL (RSS) */
	struct rte_ring *in_ring;       /* I/O dispatch: packets from the I/O core */
	int rx_tsc_off;                 /* I/O dispatch: mbuf dynfield with the rx TSC, or -1 */
	uint64_t done SL_CACHE_ALIGNED; /* I/O dispatch: packets taken from in_ring, finished */
	uint8_t port_idx[256];          /* mbuf port (DPDK id) -> slot in ports[] (0xff: none) */
	int ll_dynfield;                /* offset of the per-packet low-latency flag, -1 if none */

	/* Port set (the lead's; control thread writes, workers read pset_pub). */
	const struct sl_worker_pset *pset_pub; /* the published set */
	struct sl_worker_pset pset_buf[2];     /* published one, and the one being built */
	struct sl_worker_port_stats retired;   /* counters of deleted ports (totals keep them) */
};

/** The I/O core of the I/O-core dispatch design (io.c). */
struct sl_worker_io {
	/* Configuration (sl_worker_io_init). */
	struct sl_worker *workers; /* the group it feeds */
	unsigned n_workers;
	uint16_t burst;                                  /* rx burst */
	unsigned ring_size;                              /* slots of each worker ring */
	uint64_t flush_cycles;                           /* out-buffer timer (TSC cycles) */
	struct sl_dispatch *disp;                        /* scheduler and out-buffers */
	struct rte_ring *rings[SL_DISPATCH_WORKERS_MAX]; /* worker i's in_ring */
	int rx_tsc_off; /* mbuf dynfield the rx TSC goes in, or -1 */

	/* State. */
	volatile bool stop;
	volatile bool running;
	struct sl_worker_port_stats pstats[SL_PORT_SLOTS]; /* rx counters of every port */
	struct sl_worker_loop_stats loop SL_CACHE_ALIGNED;
	uint64_t ring_full; /* packets dropped: the worker's ring was full */
	uint64_t last_flush_tsc;
};
/**
 * Prepare a worker: allocates its pipeline context.  It serves the ports
 * of @ports (SL_PORT_SLOTS slots) open now.
 *
 * @return 0 or -ENOMEM.  Main thread.
 */
int sl_worker_init(struct sl_worker *w, struct sl_pipeline *pl, struct sl_port *ports,
		   struct rte_mempool *mp, uint16_t burst);

/** Free what sl_worker_init and sl_worker_ctrl_init allocated.  Main thread, after the loop ended. */
void sl_worker_fini(struct sl_worker *w);

/**
 * Set up the controller channel: packet-in ring and pool, packet_out
 * rings, and the RCU variable the loop reports to (also installed as the
 * pipeline's sync hook).
 *
 * @param pin_queue  Packet-ins the ring holds (power of two).
 * @return 0, -ENOMEM.  Main thread, before the loop starts.
 */
int sl_worker_ctrl_init(struct sl_worker *w, unsigned pin_queue);

/** Free what sl_worker_io_create allocated (after both loops ended).  Main thread. */
void sl_worker_io_fini(struct sl_worker_io *io);

#endif /* SL_WORKER_PRIV_H */
