/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dispatch: packet schedulers for an I/O core that feeds worker rings.
 *
 * An I/O core receives bursts and hands each packet to one of N workers
 * through per-worker out-buffers that are flushed into the workers' rings
 * when they hold out_burst packets (or when the caller's timer says so).
 * This component decides the worker of every packet and keeps those
 * out-buffers.  It knows nothing of mbufs or rings: packets are opaque
 * pointers with a 32-bit hash of their 5-tuple, and the caller supplies
 * three callbacks: enqueue a flushed out-buffer into worker w's ring, the
 * number of slots used in that ring, and (ordered mode) how many packets
 * worker w has finished.  So the same code drives the real I/O lcore
 * (src/worker/io.c) and the simulated workers of the model (model.c).
 *
 * Schedulers (the dispatch design, "An Adaptive Throughput-First Packet Scheduling
 * Algorithm for DPDK-Based Packet Processing Systems", sections 3-4):
 *   rr        a whole rx burst to the next worker in turn (per burst).
 *   crc32     the CRC32-C of the 5-tuple, mapped onto [0, N) by a
 *             multiply-shift (fastrange) instead of a division.
 *   hrw       Highest Random Weight: the worker T maximising
 *                 W(T, D) = (A * ((A * T + B) ^ D) + B) mod 2^31,
 *             A = 1103515245, B = 12345, D = the 31-bit digest of the
 *             5-tuple (hash & 0x7fffffff), T = worker index 0..N-1; ties
 *             go to the lowest index.
 *   adaptive  Subflow-based HRW, Algorithm 1 of the seed: a per-burst
 *             target[] cache indexed by the packet id (the digest) mod the
 *             cache size (the rx burst rounded up to a power of two).  On a
 *             cache miss the HRW target is computed and cached.  Then, only
 *             when the target's out-buffer is empty (n_mbufs == 0) and its
 *             load factor tau = used / total ring slots exceeds the
 *             threshold (default 0.25), the Subflow is adjusted: AHRW picks
 *             the worker maximising mu_j * W(j, D), mu_j = 1 - tau_j, over
 *             the workers whose tau does not exceed the threshold, and the
 *             choice replaces the cached one for the rest of the burst.
 *             One deliberate addition: a cache entry remembers its packet
 *             id, so two different flows whose ids collide modulo the cache
 *             size do not share a decision (the seed intends one entry per
 *             Subflow); without it a flow could leave its HRW worker while
 *             nothing is overloaded.
 *   ordered   adaptive placement, but a flow never overtakes itself: flows
 *             are kept in order_buckets buckets (by digest, default 16384);
 *             a bucket stays on its worker while any of its packets is still
 *             queued there (in the out-buffer, in the ring or being
 *             processed) and is placed again only once the worker has
 *             finished all of them (flowlet switching): away from a worker
 *             whose load factor exceeds the threshold (AHRW as above), or
 *             back to its HRW home once home is at half the threshold or
 *             less (hysteresis).  "Finished" compares the worker's done
 *             counter with the sequence number the bucket's last packet got
 *             on that worker.  Decisions use a snapshot of every worker's
 *             ring use and done counter taken at the start of the burst
 *             (a stale done counter only delays a move: still safe).
 *
 * Concurrency: one dispatcher belongs to one I/O thread ("I/O core"); the
 * control thread may call sl_dispatch_request() and read the statistics
 * (plain 64-bit words written by the I/O core only).  Nothing here
 * allocates, locks or logs after sl_dispatch_create().
 */
#ifndef SL_DISPATCH_H
#define SL_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/core.h"

/** Workers one dispatcher can feed. */
#define SL_DISPATCH_WORKERS_MAX 64
/** HRW weight constants (the dispatch design, after Thaler and Ravishankar). */
#define SL_DISPATCH_HRW_A 1103515245u
#define SL_DISPATCH_HRW_B 12345u
/** Default load-factor threshold of the adaptive schedulers (the dispatch design, section 4.1). */
#define SL_DISPATCH_THRESHOLD_DEFAULT 0.25

/** Scheduler kinds; the numbers are part of the telemetry interface. */
enum sl_sched {
	SL_SCHED_RR,
	SL_SCHED_CRC32,
	SL_SCHED_HRW,
	SL_SCHED_ADAPTIVE,
	SL_SCHED_ORDERED,
	SL_SCHED__MAX
};

/** Name of a scheduler ("rr", "crc32", "hrw", "adaptive", "ordered").  Any thread. */
const char *sl_sched_name(enum sl_sched s);

/**
 * Scheduler by name.
 * @return the enum sl_sched value, or -EINVAL for an unknown name.  Any thread.
 */
int sl_sched_parse(const char *name);

/** The 5-tuple a packet is scheduled by (IPv6 addresses folded to 32 bits). */
struct sl_dispatch_tuple {
	uint32_t src; /* IPv4 source address, or the xor of the IPv6 words */
	uint32_t dst;
	uint32_t ports; /* source port << 16 | destination port, 0 without L4 ports */
	uint32_t proto; /* IP protocol; for non-IP frames: 0x10000 | ethertype */
};

/**
 * Extract the 5-tuple of an Ethernet frame (up to two VLAN tags, IPv4 or
 * IPv6; TCP, UDP and SCTP ports of the first fragment).  Non-IP frames
 * use the low 32 bits of both MAC addresses and the ethertype; short or
 * truncated frames whatever could be read (the result is still a valid,
 * deterministic tuple).
 *
 * Any thread.
 */
void sl_dispatch_tuple_extract(const uint8_t *frame, uint32_t len, struct sl_dispatch_tuple *t);

/** CRC32-C of a tuple (SSE4.2 crc32 instruction when built for it, else a table).  Any thread. */
uint32_t sl_dispatch_crc32(const struct sl_dispatch_tuple *t);

/** HRW weight of worker @worker for digest @digest (31 bits), per the formula above.  Any thread. */
static inline uint32_t
sl_dispatch_hrw_weight(uint32_t worker, uint32_t digest)
{
	/* mod 2^31 of the full product depends only on its low 31 bits: 32-bit wrap is exact. */
	uint32_t t = SL_DISPATCH_HRW_A * worker + SL_DISPATCH_HRW_B;
	return (SL_DISPATCH_HRW_A * (t ^ (digest & 0x7fffffffu)) + SL_DISPATCH_HRW_B) & 0x7fffffffu;
}

/** The HRW worker of @digest among @n_workers (ties: lowest index).  Any thread. */
unsigned sl_dispatch_hrw(uint32_t digest, unsigned n_workers);

/** Callbacks into the owner of the rings (the I/O core or the model). */
struct sl_dispatch_ops {
	/**
	 * Enqueue @n packets into worker @worker's ring, in order.  Returns
	 * how many were taken (a prefix of @objs); the callee disposes of the
	 * rest (frees and counts them as dropped).  Mandatory.
	 */
	unsigned (*enqueue)(void *arg, unsigned worker, void *const objs[], unsigned n);
	/** Slots of worker @worker's ring holding packets.  Mandatory for adaptive and ordered. */
	unsigned (*ring_used)(void *arg, unsigned worker);
	/**
	 * Packets worker @worker has finished since the start (taken from its
	 * ring and processed to the end; monotonic).  Mandatory for ordered.
	 */
	uint64_t (*done)(void *arg, unsigned worker);
	void *arg;
};

struct sl_dispatch_params {
	unsigned n_workers; /* 1..SL_DISPATCH_WORKERS_MAX */
	enum sl_sched sched;
	double threshold;       /* load-factor threshold, 0..1 */
	unsigned burst;         /* rx burst size, 1..SL_BURST_MAX (target[] cache size) */
	unsigned out_burst;     /* out-buffer flush size, 1..SL_BURST_MAX */
	unsigned ring_size;     /* usable slots of each worker ring (Q_total) */
	unsigned order_buckets; /* ordered: flow buckets, power of two; 0 = 16384 */
	struct sl_dispatch_ops ops;
};

/** Per-worker counters of a dispatcher. */
struct sl_dispatch_worker_stats {
	uint64_t packets;     /* packets given to this worker (out-buffer) */
	uint64_t enqueued;    /* packets its ring took */
	uint64_t ring_full;   /* packets its ring refused (dropped by the enqueue callback) */
	uint64_t flushes;     /* out-buffer flushes */
	uint64_t adjust_from; /* Subflow adjustments away from this worker (overloaded) */
	uint64_t adjust_to;   /* adjustments that chose this worker */
	uint64_t moves;       /* ordered: flow buckets placed on this worker after draining */
};

struct sl_dispatch;

/**
 * Create a dispatcher.
 * @return 0; -EINVAL naming no value (the caller checks ranges first:
 *         n_workers, sched, threshold, burst, out_burst, ring_size,
 *         order_buckets, missing callbacks); -ENOMEM.  Init only.
 */
int sl_dispatch_create(const struct sl_dispatch_params *p, struct sl_dispatch **out);

/** Free a dispatcher (NULL-safe); its out-buffers must have been flushed.  Init only. */
void sl_dispatch_destroy(struct sl_dispatch *d);

/**
 * Schedule a burst: every packet goes to an out-buffer; full out-buffers
 * are flushed through ops.enqueue as they fill.  @hashes[i] is the CRC32 of
 * packet i's tuple (sl_dispatch_crc32 or the NIC's hash).  If @targets is
 * not NULL it receives the worker of every packet.
 *
 * @return @n.  I/O core.
 */
unsigned sl_dispatch_burst(struct sl_dispatch *d, void *const objs[], const uint32_t hashes[],
			   unsigned n, uint16_t targets[]);

/** Flush every non-empty out-buffer (the caller's timer, idle polls, shutdown).  I/O core. */
void sl_dispatch_flush(struct sl_dispatch *d);

/** Packets waiting in worker @worker's out-buffer.  I/O core. */
unsigned sl_dispatch_pending(const struct sl_dispatch *d, unsigned worker);

/**
 * Ask for another scheduler and/or threshold (@sched < 0 or @threshold < 0:
 * unchanged).  The I/O core applies it at its next burst; switching into
 * ordered starts with empty buckets (a flow moved at that instant may be
 * reordered once).
 * @return 0, -EINVAL (unknown scheduler, threshold above 1).  Control thread.
 */
int sl_dispatch_request(struct sl_dispatch *d, int sched, double threshold);

/** The scheduler and threshold in effect (or requested, when not yet applied).  Any thread. */
enum sl_sched sl_dispatch_sched(const struct sl_dispatch *d);
double sl_dispatch_threshold(const struct sl_dispatch *d);

/** Counters of worker @worker.  Control thread (reads words the I/O core writes). */
void sl_dispatch_worker_stats(const struct sl_dispatch *d, unsigned worker,
			      struct sl_dispatch_worker_stats *st);

/** Subflow adjustments so far (adaptive and ordered).  Control thread. */
uint64_t sl_dispatch_adjustments(const struct sl_dispatch *d);

#endif /* SL_DISPATCH_H */
