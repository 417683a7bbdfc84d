/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * capture: mirror the received and/or transmitted frames of one or more
 * ports into a pcapng file, on request, with packet and size limits and an
 * optional filter (a pcap filter expression, tcpdump's syntax, compiled by
 * libpcap and run on each frame before it is copied).  The file has one
 * interface block per port, named as the port, in the order given.
 *
 * Split across threads the way the datapath is:
 *  - the control thread opens a capture (file, copy pool, ring), hands it to
 *    the worker (sl_worker_capture_set), drains the ring into the file every
 *    round (sl_capture_drain: the only place with syscalls), and closes it
 *    after the worker let go of it (a grace period);
 *  - the workers call sl_capture_burst() for the bursts of the captured
 *    port, which copies frames (rte_pcapng_copy, from the capture's own
 *    pool; rte_pcapng_copy makes the enhanced packet block, the capture sets
 *    its interface and time) after the filter passed them, and enqueues
 *    the copies (a multi-producer ring: several workers
 *    may capture at once; their counters are atomic adds).  When the ring
 *    or pool is full the frame is counted in `dropped` and forwarding goes
 *    on untouched.
 * When no capture runs the worker pays one pointer test per burst.
 *
 * dpdk-dumpcap is the other way to capture (rte_pdump, a secondary
 * process); it needs hugepages and a multi-process EAL (docs/user-guide.md).
 */
#ifndef SL_CAPTURE_H
#define SL_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rte_mbuf;
struct sl_capture;

/** Directions, as a bit set. */
#define SL_CAPTURE_RX 1u
#define SL_CAPTURE_TX 2u
#define SL_CAPTURE_BOTH (SL_CAPTURE_RX | SL_CAPTURE_TX)

/** Defaults and bounds of the limits. */
#define SL_CAPTURE_COUNT_DEFAULT 1000u
#define SL_CAPTURE_BYTES_DEFAULT (64ull << 20)
#define SL_CAPTURE_SNAPLEN_DEFAULT 9216u
#define SL_CAPTURE_SNAPLEN_MAX 16384u

#define SL_CAPTURE_PORTS_MAX 8u
#define SL_CAPTURE_FILTER_MAX 256u /* bytes of a filter expression, NUL included */

/** A captured port: one interface block of the file. */
struct sl_capture_port {
	uint32_t port_no;   /* OpenFlow port (for status) */
	uint16_t dpdk_port; /* ethdev port id */
	const char *name;   /* the interface's name in the file */
};

struct sl_capture_params {
	unsigned n_ports; /* 1..SL_CAPTURE_PORTS_MAX, distinct */
	struct sl_capture_port ports[SL_CAPTURE_PORTS_MAX];
	const char *filter;   /* pcap filter expression; NULL or "": every frame */
	unsigned dir;         /* SL_CAPTURE_RX | SL_CAPTURE_TX */
	const char *path;     /* file to create (truncated if it exists) */
	uint64_t max_packets; /* 0: default */
	uint64_t max_bytes;   /* file size limit; 0: default */
	uint32_t snaplen;     /* bytes kept per frame; 0: default */
};

enum sl_capture_state {
	SL_CAPTURE_RUNNING,
	SL_CAPTURE_DONE, /* a limit was reached; the file is complete */
	SL_CAPTURE_STOPPED,
};

struct sl_capture_status {
	enum sl_capture_state state;
	unsigned n_ports;
	uint32_t port_nos[SL_CAPTURE_PORTS_MAX];
	char filter[SL_CAPTURE_FILTER_MAX];
	unsigned dir;
	char path[256];
	uint64_t max_packets, max_bytes;
	uint32_t snaplen;
	uint64_t captured;      /* frames written to the file */
	uint64_t written_bytes; /* file size */
	uint64_t dropped;       /* frames not copied: ring or pool full */
	uint64_t filtered;      /* frames the filter left out */
};

/**
 * Open a capture: compile the filter, create the file and write the pcapng
 * header (a section block, then an interface block per port), allocate a
 * copy pool and ring.
 * @return 0; -EINVAL (bad parameter, or a filter libpcap refuses: @err has
 *         its message), -errno from open(), -ENOMEM; @err says which.
 *         Control thread.
 */
int sl_capture_open(const struct sl_capture_params *p, struct sl_capture **out, char *err,
		    size_t err_size);

/**
 * Copy the frames of a burst that matches the capture (port and
 * direction) and that the filter passes (it sees the frame's first
 * segment), and queue them for the file.  Any worker, several at once.
 */
void sl_capture_burst(struct sl_capture *c, uint16_t dpdk_port, unsigned dir,
		      struct rte_mbuf *const *ms, uint16_t n, uint64_t tsc);

/**
 * Write queued copies to the file.
 * @return true once a limit is reached (nothing more will be copied).
 *         Control thread.
 */
bool sl_capture_drain(struct sl_capture *c);

/** Current counters and settings.  Control thread. */
void sl_capture_status(const struct sl_capture *c, struct sl_capture_status *st);

/**
 * Drain what is left, close the file and free everything.  Only after no
 * worker can still be in sl_capture_burst (a grace period since the worker
 * dropped its pointer).  NULL-safe.  Control thread.
 */
void sl_capture_close(struct sl_capture *c, struct sl_capture_status *final);

/** "rx", "tx" or "both"; sl_capture_dir_parse returns the bits or 0. */
const char *sl_capture_dir_name(unsigned dir);
unsigned sl_capture_dir_parse(const char *s);

#endif /* SL_CAPTURE_H */
