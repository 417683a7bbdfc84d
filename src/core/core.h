/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core: the few definitions every Sluice component shares.
 *
 * - Burst limits and lane masks (one bit per packet slot of a burst).
 * - Byte-order types that show network order in the type (sl_be16 ...).
 * - Assertions: SL_ASSERT (debug builds only, allowed in the fast path) and
 *   SL_VERIFY (always on, control path only).
 * - Drop reasons: one X-macro list yields the enum and the names, so a drop
 *   counter can never exist without a printable reason.  Codes are
 *   append-only: never renumber or reuse one.
 *
 * This component has no DPDK dependency: components that must build and test
 * without EAL (pkt, table, pipeline, flowfile) include only this.
 */
#ifndef SL_CORE_H
#define SL_CORE_H

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/** Largest burst any fast-path function accepts; a lane mask fits a uint64_t. */
#define SL_BURST_MAX 64
/** Default rx burst size (OVS NETDEV_MAX_BURST, l2fwd). */
#define SL_BURST_DEFAULT 32

#if defined(__GNUC__)
#define sl_likely(x) __builtin_expect(!!(x), 1)
#define sl_unlikely(x) __builtin_expect(!!(x), 0)
#define SL_ALWAYS_INLINE inline __attribute__((always_inline))
#define SL_CACHE_ALIGNED __attribute__((aligned(64)))
#define sl_prefetch0(p) __builtin_prefetch((p), 0, 3)
#else
#define sl_likely(x) (x)
#define sl_unlikely(x) (x)
#define SL_ALWAYS_INLINE inline
#define SL_CACHE_ALIGNED
#define sl_prefetch0(p) ((void)(p))
#endif

/* Network byte order shows in the type; values are stored as they are on the wire. */
typedef uint16_t sl_be16;
typedef uint32_t sl_be32;
typedef uint64_t sl_be64;

#define SL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SL_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SL_MAX(a, b) ((a) > (b) ? (a) : (b))
#define SL_DIV_ROUND_UP(n, d) (((n) + (d)-1) / (d))

/** Debug-only assertion; compiled out with NDEBUG, so usable in the fast path. */
#ifdef NDEBUG
#define SL_ASSERT(cond) ((void)0)
#else
#define SL_ASSERT(cond) assert(cond)
#endif

/** Control-path invariant: always checked, aborts with the location. */
#define SL_VERIFY(cond)                                                                            \
	do {                                                                                       \
		if (sl_unlikely(!(cond))) {                                                        \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__,       \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/** Iterate over the set lanes of a 64-bit lane mask. */
#define SL_FOR_EACH_LANE(i, mask)                                                                  \
	for (uint64_t _m = (mask); _m != 0 && ((i) = (unsigned)__builtin_ctzll(_m), 1);            \
	     _m &= _m - 1)

/**
 * How many consecutive lanes @lanes (not 0) has from its lowest one: the
 * run the out-of-line loops walk by pointer (pipeline_run.c, ffp_path.c).
 */
static inline unsigned
sl_lanes_run(uint64_t lanes)
{
	uint64_t from_first = lanes >> __builtin_ctzll(lanes);

	return ~from_first == 0 ? 64
				: (unsigned)__builtin_ctzll(~from_first); /* ctz(0) undefined */
}

/** Lane mask with the low @n bits set (n <= 64). */
static inline uint64_t
sl_lanes_first(unsigned n)
{
	return n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
}

/*
 * Drop reasons.  Append only; the numbers are part of the stats interface.
 */
#define SL_FOREACH_DROP_REASON(_)                                                                  \
	_(TABLE_MISS, "table-miss")       /* no entry matched and no table-miss entry */           \
	_(NO_OUTPUT, "no-output")         /* pipeline ended without an output action */            \
	_(TTL_EXPIRED, "ttl-expired")     /* dec_ttl reached zero */                               \
	_(BAD_PORT, "bad-port")           /* output to a port that does not exist */               \
	_(IN_PORT_LOOP, "in-port-loop")   /* output to the ingress port without IN_PORT */         \
	_(TX_FULL, "tx-full")             /* the port's tx queue refused the packet */             \
	_(NO_CONTROLLER, "no-controller") /* output:CONTROLLER with no controller attached */      \
	_(CLONE_FAILED, "clone-failed")   /* no mbuf for a multi-output copy */                    \
	_(NO_HEADROOM, "no-headroom")     /* push_vlan without room in front of the frame */       \
	_(PORT_DOWN, "port-down")         /* output port administratively down */                  \
	_(TOO_SHORT, "too-short")         /* frame shorter than an Ethernet header */              \
	_(BAD_ACTION, "bad-action") /* an action impossible on this packet (dec_ttl, lying IP) */  \
	_(DISPATCH_FULL, "dispatch-full") /* I/O core: the chosen worker's ring was full */        \
	_(FWD_NO_ROUTE, "fwd-no-route")   /* tableless engine: no port for this address/route */   \
	_(FWD_HOP_LIMIT, "fwd-hop-limit") /* tableless engine: hops byte of the dst MAC was 0 */   \
	_(FWD_LOOP, "fwd-loop")           /* tableless engine: output would be the ingress port */ \
	_(METER, "meter")                 /* a meter's drop band: the flow's rate was exceeded */  \
	_(QUEUE_RATE, "queue-rate")       /* set_queue: the queue's max_rate was exceeded */       \
	_(SEARCH_BUDGET, "search-budget") /* expensive search refused: worker's budget spent */    \
	_(GROUP_CHAIN, "group-chain")     /* groups chained deeper than SL_GROUP_CHAIN_MAX */

enum sl_drop_reason {
#define SL_DROP_ENUM_(n, s) SL_DROP_##n,
	SL_FOREACH_DROP_REASON(SL_DROP_ENUM_)
#undef SL_DROP_ENUM_
		SL_DROP__MAX
};

/**
 * Printable name of a drop reason.
 *
 * @param r  A drop reason; out-of-range values give "unknown".
 * @return   A static string.  Thread-safe.
 */
const char *sl_drop_reason_name(enum sl_drop_reason r);

/**
 * Write an error message into @err (@size bytes, may be NULL or 0: then
 * nothing), printf-style.  Control path.
 */
void sl_set_err(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/**
 * Remove a directory and the files directly in it (not recursive): DPDK
 * leaves its runtime directory (/var/run/dpdk/PREFIX) behind at exit.
 * @return 0 or -errno.  Control path.
 */
int sl_dir_remove(const char *path);

/** Longest line sl_read_line accepts by default (a flow line is a few hundred bytes). */
#define SL_LINE_MAX 65536

/**
 * Read one line of @f (its newline included when there is one) into *@buf,
 * grown as needed (free it after the last call), never past @max bytes.
 * Configuration readers use it so that nothing is silently cut or lost: a
 * read error is an error, not an end of file, and so are a line longer
 * than @max and a NUL byte (text after it would be ignored).
 *
 * @return the line's length (> 0); 0 at the end of the file; -E2BIG (line
 *         longer than @max), -EILSEQ (NUL byte), -ENOMEM or the read's
 *         -errno (-EIO when unknown).  Control path.
 */
long sl_read_line(FILE *f, char **buf, size_t *cap, size_t max);

/*
 * Growable arrays (control path).  A vector is any struct with the members
 * `T *v; size_t n, cap;` (SL_VEC(T) declares one; other members may follow),
 * zero-initialised when empty: v[0..n) are in use, cap are allocated.  The
 * macros evaluate their vector argument more than once.  Capacity doubles
 * (16 elements first), so pushing n elements costs O(n) copies in all.
 */
#define SL_VEC(type)                                                                               \
	struct {                                                                                   \
		type *v;                                                                           \
		size_t n, cap;                                                                     \
	}

/**
 * Room for @want elements in the vector @vec (its v and cap updated).
 * @return 0, or -ENOMEM (out of memory or a size overflow; @vec unchanged).
 */
#define sl_vec_reserve(vec, want)                                                                  \
	((vec)->v = sl_vec_grow_((vec)->v, &(vec)->cap, (want), sizeof(*(vec)->v)),                \
	 (vec)->cap >= (want) ? 0 : -ENOMEM)

/**
 * Append a zeroed element to @vec.
 * @return a pointer to it, or NULL out of memory (@vec unchanged).  A caller
 *         that cannot fill it in drops it again with `vec->n--`.
 */
#define sl_vec_push(vec)                                                                           \
	(sl_vec_reserve((vec), (vec)->n + 1) < 0                                                   \
		 ? NULL                                                                            \
		 : sl_vec_zero_(&(vec)->v[(vec)->n++], sizeof(*(vec)->v)))

/** Free @vec's elements (not what they point to) and empty it. */
#define sl_vec_free(vec) (free((vec)->v), (vec)->v = NULL, (vec)->n = (vec)->cap = 0)

/* The functions behind the macros: @v regrown to hold @want elements of @size
 * bytes, *@cap updated; @v itself, *@cap unchanged, when that fails. */
void *sl_vec_grow_(void *v, size_t *cap, size_t want, size_t size);
void *sl_vec_zero_(void *elem, size_t size);

/*
 * Latency histogram: log2 buckets in nanoseconds.  Bucket 0 holds < 256 ns,
 * bucket i (1 <= i < SL_LAT_BUCKETS - 1) [2^(i+7), 2^(i+8)) ns, the last one
 * everything from 2^(SL_LAT_BUCKETS+6) ns (16.8 ms) up.  One writer (the
 * thread that measures); readers on other threads see each 64-bit word
 * whole.  Adding is a few instructions: fine once per burst.
 */
#define SL_LAT_BUCKETS 18

struct sl_lat_hist {
	uint64_t count;  /* samples (packets) */
	uint64_t sum_ns; /* total over samples */
	uint64_t max_ns;
	uint64_t bucket[SL_LAT_BUCKETS];
};

/** Record @n samples that each took @ns nanoseconds.  Thread of the writer. */
static inline void
sl_lat_hist_add(struct sl_lat_hist *h, uint64_t ns, uint64_t n)
{
	unsigned b = 64u - (unsigned)__builtin_clzll(ns | 255) - 8u;

	if (b >= SL_LAT_BUCKETS)
		b = SL_LAT_BUCKETS - 1;
	h->bucket[b] += n;
	h->count += n;
	h->sum_ns += ns * n;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

/** Upper edge in ns of bucket @b (UINT64_MAX for the last). */
uint64_t sl_lat_bucket_edge_ns(unsigned b);

/**
 * The upper bucket edge below which a fraction @q (0..1] of the samples
 * fell; 0 without samples.  Any thread (reads a racy snapshot).
 */
uint64_t sl_lat_hist_quantile_ns(const struct sl_lat_hist *h, double q);

/** Nanoseconds from TSC cycles: ns = cycles * mult >> 32, mult = sl_lat_ns_mult(hz). */
static inline uint64_t
sl_cycles_to_ns(uint64_t cycles, uint64_t mult)
{
	return (uint64_t)(((unsigned __int128)cycles * mult) >> 32);
}

static inline uint64_t
sl_lat_ns_mult(uint64_t tsc_hz)
{
	return tsc_hz ? (uint64_t)((1000000000.0 * 4294967296.0) / (double)tsc_hz) : 0;
}

#endif /* SL_CORE_H */
