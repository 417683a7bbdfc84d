/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * worker: the run-to-completion datapath loop on one lcore.
 *
 * Each iteration polls every port's rx queue for a burst, runs the burst
 * through the pipeline, groups the packets by output port and transmits
 * them in bursts.  No allocation, lock, syscall or log per packet; mbufs
 * are only allocated for multi-output copies (from the mempool).
 *
 * The controller is a port of its own here (ctrl): packet_outs are its rx,
 * packet_ins queued to the control thread its tx, packet_ins not queued
 * (no controller, rate limit, queue full) its tx_drops.  Packet-ins travel
 * in an SPSC ring of mbufs (from a pool of their own, truncated to max_len,
 * details in the mbuf's private area); packet_outs in an SPSC ring of
 * descriptors that return through a second ring once executed.
 *
 * Grace periods: the loop reports a quiescent state to an rte_rcu_qsbr
 * variable after every round, which sl_worker_sync() (the pipeline's sync
 * hook) waits for.
 *
 * Counters never lie: for every port and in total, the controller included,
 *     rx + copies == tx + tx_drops + pipeline drops (+ packets in flight)
 * and after sl_worker_run returns nothing is in flight.  Drops carry a
 * reason (core.h).  Counters are plain 64-bit words written only by the
 * worker; the control thread reads them (aligned 64-bit loads are atomic on
 * the CPUs DPDK supports).
 *
 * Several workers (sl_worker_group_init): an array of workers, one lcore
 * each, sharing the pipeline read-only under the lead's RCU variable (every
 * worker is a QSBR thread of it).  Each keeps its own counters, pipeline
 * context (decision cache, table and drop counters) and tx queue (its
 * index); the readers below sum them.  Two dispatch designs:
 *   - RSS (queue per worker): worker i polls rx queue i of every port
 *     (and i + n, i + 2n, ... when ports have more rx queues than workers);
 *   - I/O core (struct sl_worker_io, io.c): one lcore polls every rx queue of
 *     every port and hands packets to the workers' rings through a
 *     scheduler (src/dispatch); workers run the pipeline and transmit.
 *     Port rx counters are the I/O core's; packets a full worker ring
 *     refused are dropped there with reason dispatch-full.
 * The lead (worker 0) owns the controller channel: it executes packet_outs;
 * every worker queues packet-ins into the lead's ring (multi-producer when
 * there are several), each with its share of the packet-in rate.
 */
#ifndef SL_WORKER_H
#define SL_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/core.h"
#include "../dispatch/dispatch.h"
#include "../fwd/fwd.h"
#include "../idle/idle.h"
#include "../pipeline/pipeline.h"
#include "../port/port.h"

struct rte_mempool;
struct rte_mbuf;
struct rte_ring;
struct rte_rcu_qsbr;
struct sl_capture;
struct sl_dispatch;
struct sl_worker_io;

/** A queued packet-in: the private area of its mbuf. */
struct sl_worker_pin {
	struct sl_pin pin;
	uint32_t total_len; /* length of the whole packet (the mbuf holds up to max_len) */
	uint64_t rx_tsc;    /* when its burst was received (packet_in latency) */
};

/** A packet_out on its way to the worker. */
struct sl_worker_pout {
	struct rte_mbuf *m;
	uint32_t in_port;
	uint8_t n_actions;
	struct sl_action actions[SL_ACTIONS_MAX];
};

/** Why packet-ins were not queued. */
struct sl_worker_pin_drops {
	uint64_t no_controller; /* no controller connected (fail mode secure) */
	uint64_t rate_limited;  /* over --packet-in-rate */
	uint64_t queue_full;    /* the control thread is behind */
	uint64_t no_mbuf;
};

/** Per-port counters kept by the worker. */
struct sl_worker_port_stats {
	uint64_t rx_packets, rx_bytes;
	uint64_t tx_packets, tx_bytes;
	uint64_t tx_drops; /* refused by the tx queue */
} SL_CACHE_ALIGNED;

/**
 * The ports the group polls and transmits on: a snapshot the control thread
 * publishes (sl_worker_port_attach/detach) and each worker takes at the
 * start of a round, so a port leaves a worker's loops only between rounds.
 */
struct sl_worker_pset {
	unsigned n;                   /* ports in use */
	uint8_t slots[SL_PORT_SLOTS]; /* their slots in ports[], in slot order */
};

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
	struct sl_port *ports; /* SL_PORT_SLOTS slots: ports[i] is OpenFlow port i + 1, then LOCAL */
	struct rte_mempool *mp; /* for multi-output copies */
	uint16_t burst;         /* rx burst size, <= SL_BURST_MAX */
	uint16_t queue;         /* its tx queue and first rx queue (then + n_group, ...) */

	/* State. */
	volatile bool stop;     /* set by the control thread to end the loop */
	volatile bool running;
	struct sl_pipeline_ctx *ctx;
	const struct sl_worker_pset *pset; /* this round's ports (the lead's pset_pub when it began) */
	struct sl_worker_port_stats pstats[SL_PORT_SLOTS];
	struct sl_worker_loop_stats loop SL_CACHE_ALIGNED;
	struct rte_mbuf *txb[SL_PORT_SLOTS][SL_BURST_MAX]; /* per-port tx burst being built */
	uint16_t n_txb[SL_PORT_SLOTS];

	/* Controller channel (sl_worker_ctrl_init). */
	struct sl_worker_port_stats ctrl;   /* the controller as a port (see above) */
	struct sl_worker_pin_drops pin_drops;
	uint64_t pin_wake_fails;            /* eventfd writes that failed (the agent polls anyway) */
	struct rte_ring *pin_ring;          /* worker -> control: packet-in mbufs */
	int pin_wake_fd;                    /* eventfd: written when pin_ring stops being empty */
	struct rte_mempool *pin_mp;         /* packet-in copies, sl_worker_pin in the private area */
	struct rte_ring *pout_ring;         /* control -> worker: struct sl_worker_pout * */
	struct rte_ring *pout_free;         /* worker -> control: executed descriptors */
	struct sl_worker_pout *pouts;       /* descriptor storage */
	volatile bool controller_up;        /* packet-ins have somewhere to go */
	uint64_t pin_rate;                  /* packet-ins per second, 0 = unlimited */
	uint64_t pin_tokens, pin_last_tsc;  /* token bucket, scaled by the TSC rate */
	struct rte_mbuf *reinject[SL_BURST_MAX]; /* packet_out output:TABLE, run next */
	unsigned n_reinject;
	uint32_t reinject_port;
	struct rte_rcu_qsbr *qs;            /* quiescent-state reports; NULL without control channel */
	struct sl_fwd_ctx *fwd;             /* forwarding modes (src/fwd); NULL = pipeline only */
	struct sl_idle idle;                /* adaptive idle sleep (src/idle); zeroed = off */

	/* Observation (control thread reads; see sl_worker_capture_set). */
	struct sl_capture *capture;         /* port mirroring; NULL when off */
	struct sl_trace_live *trace;        /* live trace recorder; NULL when off */
	uint64_t burst_tsc;                 /* rx time of the burst being processed */
	bool keeping_up;                    /* that burst was not full: no backlog (search budget) */
	unsigned credit_rounds;             /* busy rounds since deferred credits were flushed */
	uint64_t lat_mult;                  /* cycles -> ns (sl_lat_ns_mult) */
	struct sl_lat_hist lat_pipeline SL_CACHE_ALIGNED; /* rx burst handed over -> tx queued */

	/* Group (sl_worker_group_init); a lone worker is a group of one. */
	struct sl_worker *lead;             /* group[0]: controller channel, RCU variable */
	struct sl_worker *group;            /* the group's array */
	unsigned n_group;                   /* workers in the group */
	unsigned id;                        /* index in the group = QSBR thread id = queue */
	struct sl_worker_io *io;            /* the I/O core feeding the group, or NULL (RSS) */
	struct rte_ring *in_ring;           /* I/O dispatch: packets from the I/O core */
	int rx_tsc_off;                     /* I/O dispatch: mbuf dynfield with the rx TSC, or -1 */
	uint64_t done SL_CACHE_ALIGNED;     /* I/O dispatch: packets taken from in_ring, finished */
	uint8_t port_idx[256];              /* mbuf port (DPDK id) -> slot in ports[] (0xff: none) */
	int ll_dynfield; /* offset of the per-packet low-latency flag (issue 6), -1 if none */

	/* Port set (the lead's; control thread writes, workers read pset_pub). */
	const struct sl_worker_pset *pset_pub; /* the published set */
	struct sl_worker_pset pset_buf[2];  /* published one, and the one being built */
	struct sl_worker_port_stats retired; /* counters of deleted ports (totals keep them) */
};

/** The I/O core of the I/O-core dispatch design (io.c). */
struct sl_worker_io {
	/* Configuration (sl_worker_io_init). */
	struct sl_worker *workers;          /* the group it feeds */
	unsigned n_workers;
	uint16_t burst;                     /* rx burst */
	unsigned ring_size;                 /* slots of each worker ring */
	uint64_t flush_cycles;              /* out-buffer timer (TSC cycles) */
	struct sl_dispatch *disp;           /* scheduler and out-buffers */
	struct rte_ring *rings[SL_DISPATCH_WORKERS_MAX]; /* worker i's in_ring */
	int rx_tsc_off;                     /* mbuf dynfield the rx TSC goes in, or -1 */

	/* State. */
	volatile bool stop;
	volatile bool running;
	struct sl_worker_port_stats pstats[SL_PORT_SLOTS]; /* rx counters of every port */
	struct sl_worker_loop_stats loop SL_CACHE_ALIGNED;
	uint64_t ring_full;                 /* packets dropped: the worker's ring was full */
	uint64_t last_flush_tsc;
};

/** Name of the one-byte mbuf dynfield holding the low-latency flag (1: low-latency). */
#define SL_WORKER_LL_DYNFIELD "sluice_dynfield_low_latency"

/**
 * Prepare a worker: allocates its pipeline context.  It serves the ports
 * of @ports (SL_PORT_SLOTS slots) open now; more come and go through
 * sl_worker_port_attach/detach.
 *
 * @return 0 or -ENOMEM.  Main thread.
 */
int sl_worker_init(struct sl_worker *w, struct sl_pipeline *pl, struct sl_port *ports,
		   struct rte_mempool *mp, uint16_t burst);

/** Free what sl_worker_init allocated.  Main thread, after the loop ended. */
void sl_worker_fini(struct sl_worker *w);

/**
 * The datapath loop; returns when w->stop is set, after flushing every tx
 * buffer.  Signature fits rte_eal_remote_launch.
 */
int sl_worker_run(void *w);

/**
 * Set up the controller channel: packet-in ring and pool, packet_out
 * rings, and the RCU variable the loop reports to (also installed as the
 * pipeline's sync hook).
 *
 * @param pin_queue  Packet-ins the ring holds (power of two).
 * @return 0, -ENOMEM.  Main thread, before the loop starts.
 */
int sl_worker_ctrl_init(struct sl_worker *w, unsigned pin_queue);

/** Wait for a grace period (sl_pipeline_sync_fn).  Control thread. */
void sl_worker_sync(void *w);

/**
 * Take up to @n queued packet-ins (mbufs with struct sl_worker_pin in
 * their private area: rte_mbuf_to_priv).  The caller frees them.
 * Control thread.
 */
unsigned sl_worker_pin_dequeue(struct sl_worker *w, struct rte_mbuf **ms, unsigned n);
/** Packet-ins queued and not dequeued yet (control thread, for the accounting). */
unsigned sl_worker_pin_pending(const struct sl_worker *w);

/**
 * Queue a packet_out: the worker runs @actions on a copy of @data
 * (output:TABLE runs it through the pipeline with in_port @in_port).
 *
 * @return 0; -ENOBUFS when descriptors or mbufs run out (try later);
 *         -EINVAL when @len does not fit an mbuf.  Control thread.
 */
int sl_worker_packet_out(struct sl_worker *w, uint32_t in_port, const struct sl_action *actions,
			 unsigned n_actions, const void *data, size_t len);

/** Packet-ins per second the worker may queue (0: no limit).  Control thread. */
void sl_worker_set_pin_rate(struct sl_worker *w, uint64_t pps);

/**
 * Start (@c) or stop (NULL) mirroring frames to a capture.  Stopping waits
 * for a grace period, so on return the worker no longer uses the previous
 * capture and the caller may close it.  Control thread.
 */
void sl_worker_capture_set(struct sl_worker *w, struct sl_capture *c);

/**
 * Start (@lt) or stop (NULL) tracing received packets live (pipeline.h,
 * "Live trace"): every worker of the group traces into @lt with its group
 * index as the recorder's worker id.  Stopping waits for a grace period, as
 * sl_worker_capture_set does: on return the caller may read and destroy
 * the previous recorder.  Control thread.
 */
void sl_worker_trace_set(struct sl_worker *w, struct sl_trace_live *lt);

/** Pipeline drop counters of this worker (indexed by enum sl_drop_reason). */
void sl_worker_drops(const struct sl_worker *w, uint64_t drops[SL_DROP__MAX]);

/**
 * Make @ws[0..n-1] a group of workers sharing @pl (sl_worker_init on each;
 * worker i uses queue i).  Then sl_worker_ctrl_init(&ws[0], ...) sets up
 * the shared controller channel and RCU variable.  Free with
 * sl_worker_fini on each.
 *
 * @return 0 or -ENOMEM.  Main thread.
 */
int sl_worker_group_init(struct sl_worker *ws, unsigned n, struct sl_pipeline *pl,
			 struct sl_port *ports, struct rte_mempool *mp, uint16_t burst);

/*
 * Ports at run time.  A port's slot is written while no worker uses it;
 * then attach makes the workers poll and transmit on it, and only then may
 * the pipeline send packets there (sl_pipeline_port_add).  To remove one,
 * the pipeline stops sending there first (sl_pipeline_port_del); detach
 * then takes it out of the workers' loops and waits until every worker
 * (and the I/O core) has finished the round it was in, after which nothing
 * touches the port and it may be stopped and closed.  Forwarding between
 * the other ports goes on throughout: no worker stops or waits.
 */
/**
 * Start polling and transmitting on the open port in slot @slot; returns
 * after a grace period (every worker runs with the new set).  Control thread.
 */
void sl_worker_port_attach(struct sl_worker *w, unsigned slot);
/**
 * Stop using slot @slot; returns after a grace period, when no worker or
 * I/O core touches the port any more.  Control thread.
 */
void sl_worker_port_detach(struct sl_worker *w, unsigned slot);
/**
 * A detached port is deleted: its counters move to the totals' retired
 * share (the balance still adds up) and the slot's start from zero for the
 * next port there.  Control thread, after sl_worker_port_detach.
 */
void sl_worker_port_retire(struct sl_worker *w, unsigned slot);
/** True when slot @slot is in the published set.  Control thread. */
bool sl_worker_port_attached(const struct sl_worker *w, unsigned slot);

/**
 * Set up the I/O core of group @ws: a ring of @ring_size slots per worker
 * (power of two), a dispatcher with scheduler @sched and load threshold
 * @threshold (0..1), out-buffers flushed at @out_burst packets or after
 * @flush_us microseconds.  The workers then take their packets from the
 * rings instead of polling rx queues.
 *
 * @return 0, -EINVAL (bad scheduler or threshold), -ENOMEM.  Main thread.
 */
int sl_worker_io_init(struct sl_worker_io *io, struct sl_worker *ws, unsigned n,
		      enum sl_sched sched, double threshold, unsigned ring_size,
		      unsigned out_burst, unsigned flush_us);

/** Free what sl_worker_io_init allocated (after both loops ended).  Main thread. */
void sl_worker_io_fini(struct sl_worker_io *io);

/**
 * The I/O core loop; returns when io->stop is set, after flushing its
 * out-buffers.  Stop it before the workers: they drain their rings before
 * they return.  Signature fits rte_eal_remote_launch.
 */
int sl_worker_io_run(void *io);

/*
 * Readers (control thread): sums over the group (and its I/O core).
 * @w is any worker of the group, normally the lead.
 */
/** Counters of the port in slot @port (OpenFlow port @port + 1, or LOCAL). */
void sl_worker_port_read(const struct sl_worker *w, unsigned port, struct sl_worker_port_stats *out);
/** The controller as a port (packet_outs rx, packet-ins tx). */
void sl_worker_ctrl_read(const struct sl_worker *w, struct sl_worker_port_stats *out);
/** Why packet-ins were not queued. */
void sl_worker_pin_drops_read(const struct sl_worker *w, struct sl_worker_pin_drops *out);
/** The eventfd the lead worker writes when its packet-in ring stops being empty (agent's poll). */
int sl_worker_pin_wake_fd(const struct sl_worker *w);
/** Loop counters (the workers'; rx bursts of the I/O core are in io->loop). */
void sl_worker_loop_read(const struct sl_worker *w, struct sl_worker_loop_stats *out);
/** Pipeline latency histogram, merged. */
void sl_worker_lat_read(const struct sl_worker *w, struct sl_lat_hist *out);
/** The pipeline contexts of the group, for sl_pipeline_*_stats; returns how many (<= @max). */
unsigned sl_worker_ctxs(const struct sl_worker *w, const struct sl_pipeline_ctx *ctxs[],
			unsigned max);

/** Totals over all ports (deleted ones too): rx, tx, tx_drops; plus pipeline drops and copies. */
struct sl_worker_totals {
	uint64_t rx, tx, tx_drops, pipeline_drops, copies;
};
void sl_worker_totals(const struct sl_worker *w, struct sl_worker_totals *t);

#endif /* SL_WORKER_H */
