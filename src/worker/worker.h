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
 * Several workers (sl_worker_group_create): an array of workers, one lcore
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
struct sl_worker;    /* private (worker_priv.h) */
struct sl_worker_io; /* private (worker_priv.h) */

/** A queued packet-in: the private area of its mbuf. */
struct sl_worker_pin {
	struct sl_pin pin;
	uint32_t total_len; /* length of the whole packet (the mbuf holds up to max_len) */
	uint64_t rx_tsc;    /* when its burst was received (packet_in latency) */
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

/** Loop counters. */
struct sl_worker_loop_stats {
	uint64_t iterations;  /* polling rounds over all ports */
	uint64_t busy_rounds; /* rounds that received at least one packet */
	uint64_t busy_cycles; /* TSC cycles of busy rounds, each from the last round's end */
	uint64_t bursts;      /* non-empty rx bursts */
	uint64_t packets;     /* packets received */
};

/** Name of the one-byte mbuf dynfield holding the low-latency flag (1: low-latency). */
#define SL_WORKER_LL_DYNFIELD "sluice_dynfield_low_latency"

/*
 * Lifecycle (main thread): a group of workers is created with its
 * controller channel, optionally fed by an I/O core and given forwarding
 * modes, launched one worker per lcore (sl_worker_run), stopped, then
 * destroyed.  struct sl_worker and struct sl_worker_io are private to this
 * component: the worker's loop reads its fields directly, everyone else
 * goes through the functions below.
 */

/**
 * Create @n workers sharing @pl (worker i uses tx queue i and rx queue i,
 * i + n, ...), and the lead's controller channel: packet-in ring and pool,
 * packet_out rings, and the RCU variable every worker reports to (also
 * installed as the pipeline's sync hook).  They serve the ports of @ports
 * (SL_PORT_SLOTS slots) open now; more come and go through
 * sl_worker_port_attach/detach.
 *
 * @param burst      Rx burst size (0: SL_BURST_DEFAULT; capped at SL_BURST_MAX).
 * @param pin_queue  Packet-ins the lead's ring holds (power of two).
 * @param[out] lead  The group's lead (worker 0), which every reader takes.
 * @return 0, -ENOMEM.  Main thread.
 */
int sl_worker_group_create(unsigned n, struct sl_pipeline *pl, struct sl_port *ports,
			   struct rte_mempool *mp, uint16_t burst, unsigned pin_queue,
			   struct sl_worker **lead);

/**
 * Free the group, its I/O core and its forwarding contexts (NULL-safe).
 * Main thread, after every loop returned.
 */
void sl_worker_group_destroy(struct sl_worker *lead);

/** Workers in the group of @w. */
unsigned sl_worker_group_size(const struct sl_worker *w);

/** Worker @i (0 .. size - 1) of the group of @w, to launch it.  Main thread. */
struct sl_worker *sl_worker_group_member(struct sl_worker *w, unsigned i);

/**
 * Give every worker of the group a context of forwarding modes @fwd
 * (src/fwd), freed with the group.
 * @return 0, -ENOMEM.  Main thread, before the loops start.
 */
int sl_worker_fwd_attach(struct sl_worker *w, struct sl_fwd *fwd);

/** The forwarding modes of the group, or NULL when none were attached.  Control thread. */
struct sl_fwd *sl_worker_fwd(const struct sl_worker *w);

/** The forwarding contexts of the group, for sl_fwd_stats_read; returns how many (<= @max). */
unsigned sl_worker_fwd_ctxs(const struct sl_worker *w, const struct sl_fwd_ctx *ctxs[],
			    unsigned max);

/** Adaptive idle sleep (src/idle) of every worker: at most @max_us (0: pure polling).  Init only. */
void sl_worker_idle_set(struct sl_worker *w, unsigned max_us);

/**
 * True when the worker @w sleeps at its longest between empty rounds
 * (idle sleep on and the datapath idle for a while).  Control thread.
 */
bool sl_worker_idle_longest(const struct sl_worker *w);

/** Rx burst size of the workers. */
uint16_t sl_worker_burst(const struct sl_worker *w);

/**
 * The datapath loop; returns after sl_worker_stop, having flushed every tx
 * buffer.  Signature fits rte_eal_remote_launch.
 */
int sl_worker_run(void *w);

/** Make the loop of worker @w (that one only) return.  Control thread. */
void sl_worker_stop(struct sl_worker *w);

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
 * Whether packet-ins have somewhere to go (a controller is connected, or the
 * agent takes them itself): while not, the workers count them as
 * no_controller instead of queueing them.  Control thread.
 */
void sl_worker_controller_up_set(struct sl_worker *w, bool up);

/** Packet_outs queued and not yet taken by the lead worker.  Control thread. */
unsigned sl_worker_pout_pending(const struct sl_worker *w);

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
 * Feed the group of @w from an I/O core: a ring of @ring_size slots per
 * worker (power of two), a dispatcher with scheduler @sched and load
 * threshold @threshold (0..1), out-buffers flushed at @out_burst packets or
 * after @flush_us microseconds.  The workers then take their packets from
 * the rings instead of polling rx queues.  The I/O core is freed with the
 * group.
 *
 * @param[out] io  The I/O core, to launch with sl_worker_io_run.
 * @return 0, -EINVAL (bad scheduler or threshold), -ENOMEM.  Main thread,
 *         after the group's controller channel (sl_worker_group_create).
 */
int sl_worker_io_create(struct sl_worker *w, enum sl_sched sched, double threshold,
			unsigned ring_size, unsigned out_burst, unsigned flush_us,
			struct sl_worker_io **io);

/**
 * The I/O core loop; returns after sl_worker_io_stop, having flushed its
 * out-buffers.  Stop it before the workers: they drain their rings before
 * they return.  Signature fits rte_eal_remote_launch.
 */
int sl_worker_io_run(void *io);

/** Make the I/O core's loop return.  Control thread. */
void sl_worker_io_stop(struct sl_worker_io *io);

/** The I/O core feeding the group of @w, or NULL (RSS dispatch). */
struct sl_worker_io *sl_worker_group_io(const struct sl_worker *w);

/** The I/O core's dispatcher (scheduler, per-worker counters).  Control thread. */
struct sl_dispatch *sl_worker_io_dispatch(const struct sl_worker_io *io);

/** The I/O core's own counters. */
struct sl_worker_io_stats {
	struct sl_worker_loop_stats loop; /* its rx loop */
	uint64_t ring_full;               /* packets dropped: a worker's ring was full */
	unsigned ring_size;               /* slots of each worker ring */
};
/** Read the I/O core's counters.  Control thread. */
void sl_worker_io_read(const struct sl_worker_io *io, struct sl_worker_io_stats *out);

/*
 * Readers (control thread): sums over the group (and its I/O core).
 * @w is any worker of the group, normally the lead.
 */
/** Counters of the port in slot @port (OpenFlow port @port + 1, or LOCAL). */
void sl_worker_port_read(const struct sl_worker *w, unsigned port,
			 struct sl_worker_port_stats *out);
/** The controller as a port (packet_outs rx, packet-ins tx). */
void sl_worker_ctrl_read(const struct sl_worker *w, struct sl_worker_port_stats *out);
/** Why packet-ins were not queued. */
void sl_worker_pin_drops_read(const struct sl_worker *w, struct sl_worker_pin_drops *out);
/** The eventfd the lead worker writes to wake the agent in poll() for a packet-in. */
int sl_worker_pin_wake_fd(const struct sl_worker *w);
/**
 * The agent is about to sleep in poll(): from now on a packet-in writes
 * the wake fd (once).  Returns false, and the agent must not sleep, when a
 * packet-in is already queued.  sl_worker_pin_agent_awake() after poll().
 * Control thread, on the lead worker.
 */
bool sl_worker_pin_agent_sleep(struct sl_worker *w);
/** The agent is awake again: packet-ins wait for its next round, no write. */
void sl_worker_pin_agent_awake(struct sl_worker *w);
/** Loop counters (the workers'; rx bursts of the I/O core: sl_worker_io_read). */
void sl_worker_loop_read(const struct sl_worker *w, struct sl_worker_loop_stats *out);
/** Pipeline latency histogram, merged. */
void sl_worker_lat_read(const struct sl_worker *w, struct sl_lat_hist *out);
/** The pipeline contexts of the group, for sl_pipeline_*_stats; returns how many (<= @max). */
unsigned sl_worker_ctxs(const struct sl_worker *w, const struct sl_pipeline_ctx *ctxs[],
			unsigned max);

/** Counters of deleted ports (sl_worker_port_retire), summed. */
void sl_worker_retired_read(const struct sl_worker *w, struct sl_worker_port_stats *out);

/** One worker of the group on its own. */
struct sl_worker_member_stats {
	uint64_t packets, bursts, busy_cycles; /* its loop */
	uint64_t tx_drops;                     /* its tx queues refused, all ports */
	bool dispatched;                       /* fed by the I/O core: ring_used is set */
	unsigned ring_used;                    /* packets waiting in its ring */
};
/** Read worker @i (0 .. group size - 1) of the group of @w. */
void sl_worker_member_read(const struct sl_worker *w, unsigned i,
			   struct sl_worker_member_stats *out);

/** Adaptive idle sleep over the group (src/idle). */
struct sl_worker_idle_stats {
	unsigned max_us;   /* the longest sleep (0: pure polling) */
	uint64_t sleeps;   /* sleeps taken */
	uint64_t slept_ns; /* time spent in them */
};
void sl_worker_idle_read(const struct sl_worker *w, struct sl_worker_idle_stats *out);

/** Totals over all ports (deleted ones too): rx, tx, tx_drops; plus pipeline drops and copies. */
struct sl_worker_totals {
	uint64_t rx, tx, tx_drops, pipeline_drops, copies;
};
void sl_worker_totals(const struct sl_worker *w, struct sl_worker_totals *t);

#endif /* SL_WORKER_H */
