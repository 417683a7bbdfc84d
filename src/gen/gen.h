/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen: the traffic generator and receiver behind sluice-gen.
 *
 * A run sends one or more streams out of one DPDK port and receives them on
 * another (or the same) port after the device under test.  A stream is a set
 * of frames built from a template (or read from a pcap file), cycled in
 * order, at a fixed rate.  Every frame carries a 16-byte signature in its
 * last 16 bytes (before the FCS, which DPDK does not hold):
 *
 *     0  u16  magic 0x51CE (host order)
 *     2  u16  stream index
 *     4  u32  sequence number within the stream (from 0)
 *     8  u64  TSC at transmit (the burst's rte_rdtsc())
 *
 * The tail position survives header rewrites by the switch (set_field,
 * VLAN id changes) and needs no parsing on receive.  The builder refuses
 * frames whose signature would overlap the headers up to the L4 ports.
 *
 * Sizes are Ethernet frame sizes as testers give them: FCS included, so a
 * "128-byte frame" is 124 bytes of mbuf data.  Layer-1 rates count 20 more
 * bytes per frame (preamble, start delimiter, inter-frame gap).
 *
 * This header's parsing, frame building and histogram functions need no
 * DPDK and are unit tested (test_gen.c); sl_gen_run needs EAL and ports.
 *
 * Concurrency: sl_gen_run runs on one lcore and owns all of struct sl_gen
 * while it runs; everything else is single-threaded setup and reporting.
 */
#ifndef SL_GEN_H
#define SL_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Bytes of the signature at the tail of every frame. */
#define SL_GEN_SIG_SIZE 16
/** Signature magic. */
#define SL_GEN_MAGIC 0x51CE
/** Ethernet FCS bytes, counted in frame sizes but not in mbuf data. */
#define SL_GEN_FCS 4
/** Preamble + SFD + inter-frame gap, counted in layer-1 rates. */
#define SL_GEN_L1_OVERHEAD 20
/** Smallest and largest frame size (FCS included). */
#define SL_GEN_SIZE_MIN 64
#define SL_GEN_SIZE_MAX 9018
/** Largest tx/rx burst. */
#define SL_BURST_MAX_GEN 64
/** Most streams in one run. */
#define SL_GEN_STREAMS_MAX 256
/** Most distinct frames one stream cycles through. */
#define SL_GEN_FRAMES_MAX (1u << 20)

/** Latency histogram: 32 linear sub-buckets per power of two (≤ 3.2 % width), in ns. */
#define SL_GEN_HIST_SUB 32
#define SL_GEN_HIST_BUCKETS (SL_GEN_HIST_SUB * 43)

/** Latency histogram and summary, in nanoseconds. */
struct sl_gen_hist {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t min_ns; /* UINT64_MAX when empty */
	uint64_t max_ns;
	uint64_t buckets[SL_GEN_HIST_BUCKETS];
};

/** One header field a stream varies: value = start + (frame index mod count). */
struct sl_gen_range {
	uint32_t count; /* 1 = fixed */
};

/** What a stream sends (parsed from "key=value,..."; see sl_gen_stream_parse). */
struct sl_gen_stream_spec {
	char name[32];
	uint32_t size;    /* frame size, FCS included; 0 = from the pcap frames */
	double pps;       /* frames per second (layer-1 rates converted at parse time) */
	double l1_gbps;   /* the layer-1 rate asked for, or 0 when given in pps */
	bool expect_drop; /* the device should drop this stream: not counted as loss */
	uint8_t eth_src[6], eth_dst[6];
	uint32_t eth_dst_count, eth_src_count;
	int vlan;                /* VLAN id 0..4095, or -1 for untagged */
	uint16_t eth_type;       /* 0x0800 unless given (ip only) */
	uint32_t ip_src, ip_dst; /* host order */
	uint32_t ip_src_count, ip_dst_count;
	uint8_t proto; /* 6 tcp, 17 udp, other: no L4 header */
	uint16_t sport, dport;
	uint32_t sport_count, dport_count;
	uint32_t flows; /* frames to build; 0 = the largest range count */
	char pcap[256]; /* frames from this pcap instead of a template */
};

/** A stream's frames, built once before the run. */
struct sl_gen_frames {
	uint8_t *data;  /* n frames of len bytes each (pcap: of stride bytes) */
	uint32_t *lens; /* per frame data length (mbuf bytes, no FCS) */
	uint32_t n;
	uint32_t stride;
};

/** Per-stream results. */
struct sl_gen_stream_stats {
	uint64_t tx;          /* frames generated and handed to the port */
	uint64_t tx_rejected; /* frames the port refused (device under test full): lost */
	uint64_t tx_bytes;    /* frame bytes with FCS, of frames generated */
	uint64_t rx;          /* frames received carrying this stream's signature */
	uint64_t rx_bytes;
	uint64_t reordered; /* frames arriving with a sequence number below one seen before */
	uint32_t max_seq;   /* highest sequence number received + 1 (0 = none) */
	struct sl_gen_hist lat;
};

/**
 * Parse a stream specification.
 *
 * Syntax: comma-separated key=value pairs:
 *   name=S  size=BYTES (64..9018, FCS included; default 128)
 *   gbps=X | mbps=X | pps=X  (required; layer-1 rates count 20 B per frame)
 *   eth_src=MAC eth_dst=MAC[+N]  vlan=ID  eth_type=0xNNNN
 *   ip_src=A.B.C.D[+N] ip_dst=A.B.C.D[+N]  proto=tcp|udp|N  sport=P[+N] dport=P[+N]
 *   flows=N  drop=1 (expected to be dropped)  pcap=FILE (frames from a pcap file)
 * "+N" makes the field take N consecutive values (MAC: the last 4 bytes count).
 *
 * @return 0, or -EINVAL with a message naming the offending key and value in err.
 * Any thread.
 */
int sl_gen_stream_parse(const char *text, struct sl_gen_stream_spec *s, char *err, size_t err_size);

/** Frames per second for a frame size (FCS included) at a layer-1 rate in Gb/s. */
double sl_gen_l1_pps(uint32_t size, double gbps);

/**
 * Build a stream's frames (templates, or frames read from its pcap file).
 * @return 0, -EINVAL (signature would overlap a header, bad pcap) or -ENOMEM;
 * the message in err names the stream and the reason.  Any thread.
 */
int sl_gen_frames_build(const struct sl_gen_stream_spec *s, struct sl_gen_frames *f, char *err,
			size_t err_size);

/** Free the frames (NULL-safe members). */
void sl_gen_frames_free(struct sl_gen_frames *f);

/** Write a signature into the last SL_GEN_SIG_SIZE bytes of a frame of len bytes. */
static inline void
sl_gen_sig_write(uint8_t *frame, uint32_t len, uint16_t stream, uint32_t seq, uint64_t tsc)
{
	uint8_t *p = frame + len - SL_GEN_SIG_SIZE;
	uint16_t magic = SL_GEN_MAGIC;

	__builtin_memcpy(p, &magic, 2);
	__builtin_memcpy(p + 2, &stream, 2);
	__builtin_memcpy(p + 4, &seq, 4);
	__builtin_memcpy(p + 8, &tsc, 8);
}

/** Read a signature; false when the frame is too short or the magic is wrong. */
static inline bool
sl_gen_sig_read(const uint8_t *frame, uint32_t len, uint16_t *stream, uint32_t *seq, uint64_t *tsc)
{
	const uint8_t *p;
	uint16_t magic;

	if (len < SL_GEN_SIG_SIZE)
		return false;
	p = frame + len - SL_GEN_SIG_SIZE;
	__builtin_memcpy(&magic, p, 2);
	if (magic != SL_GEN_MAGIC)
		return false;
	__builtin_memcpy(stream, p + 2, 2);
	__builtin_memcpy(seq, p + 4, 4);
	__builtin_memcpy(tsc, p + 8, 8);
	return true;
}

/** Empty a histogram. */
void sl_gen_hist_init(struct sl_gen_hist *h);

/** Bucket index of a latency in ns. */
static inline unsigned
sl_gen_hist_bucket(uint64_t ns)
{
	unsigned msb, shift, b;

	if (ns < 2 * SL_GEN_HIST_SUB)
		return (unsigned)ns;               /* exact below 64 ns */
	msb = 63u - (unsigned)__builtin_clzll(ns); /* >= 6 */
	shift = msb - 5u;                          /* keep 6 significant bits: 32..63 */
	b = shift * SL_GEN_HIST_SUB + (unsigned)(ns >> shift);
	return b < SL_GEN_HIST_BUCKETS ? b : SL_GEN_HIST_BUCKETS - 1;
}

/** Lowest latency (ns) that falls into bucket b. */
uint64_t sl_gen_hist_bucket_low(unsigned b);

/** Add one sample.  The worker; no allocation. */
static inline void
sl_gen_hist_add(struct sl_gen_hist *h, uint64_t ns)
{
	h->count++;
	h->sum_ns += ns;
	if (ns < h->min_ns)
		h->min_ns = ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->buckets[sl_gen_hist_bucket(ns)]++;
}

/** Merge src into dst. */
void sl_gen_hist_merge(struct sl_gen_hist *dst, const struct sl_gen_hist *src);

/**
 * The q-quantile (0 < q <= 1) in ns: the low edge of the bucket holding it, clamped to
 * [min, max] (so p100 is the exact maximum).  0 when empty.
 */
uint64_t sl_gen_hist_quantile(const struct sl_gen_hist *h, double q);

/* ---- The run (needs EAL, ports started by the caller). ---- */

/** What sl_gen_run does. */
struct sl_gen_run_params {
	uint16_t tx_port, rx_port; /* DPDK port ids (may be equal) */
	uint16_t rx_queues;        /* rx queues polled on rx_port (a peer may send on several) */
	uint16_t tx_queues;        /* tx queues of tx_port, a burst each in turn (more ring room) */
	struct rte_mempool *mp;
	double duration_s; /* transmit time */
	double drain_s;    /* keep receiving this long after the last frame */
	unsigned burst;    /* tx/rx burst, 1..64 */
	double batch_s;    /* send due frames at most this often (0: as soon as due) */
	unsigned n_streams;
	const struct sl_gen_stream_spec *specs;
	const struct sl_gen_frames *frames;
	volatile bool *stop; /* set by a signal handler to end early */
};

/** What a run measured besides the streams. */
struct sl_gen_run_totals {
	uint64_t tsc_hz;
	double tx_seconds;        /* from the first to the last transmit */
	uint64_t rx_foreign;      /* frames without a valid signature or with a bad stream index */
	uint64_t late_max_cycles; /* how far the sender fell behind its schedule at worst */
	uint64_t alloc_fail;      /* bursts cut short by an empty mempool */
};

/**
 * Send the streams for duration_s, receive until drain_s after.
 * @param stats  n_streams entries, filled in.
 * @return 0 or -errno.  The calling lcore.
 */
int sl_gen_run(const struct sl_gen_run_params *p, struct sl_gen_stream_stats *stats,
	       struct sl_gen_run_totals *tot);

#endif /* SL_GEN_H */
