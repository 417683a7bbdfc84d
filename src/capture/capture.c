/* SPDX-License-Identifier: BSD-3-Clause */
/* capture: pcapng port mirroring.  Section comments mark worker and control code. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pcapng.h>
#include <rte_ring.h>
#include <rte_version.h>

#include "sl_config.h"
#include "../core/core.h"
#include "../log/log.h"
#include "capture.h"

#define RING_SIZE 1024u /* copies in flight; the control thread drains every ~1 ms */

struct sl_capture {
	/* Read by the worker. */
	uint16_t dpdk_port;
	unsigned dir;
	uint32_t snaplen;
	uint64_t max_packets;
	volatile bool full;  /* control -> worker: stop copying */
	struct rte_mempool *mp;
	struct rte_ring *ring;
	/* The clock: wall time base_ns was TSC base_tsc (set at open, read-only after). */
	uint64_t base_tsc, base_ns, tsc_hz;
	/* Written by the workers (atomic adds: several may capture at once). */
	uint64_t queued SL_CACHE_ALIGNED;
	uint64_t dropped;
	/* Control thread only. */
	rte_pcapng_t *pcapng SL_CACHE_ALIGNED;
	int fd;
	struct sl_capture_status st;
};

const char *
sl_capture_dir_name(unsigned dir)
{
	return dir == SL_CAPTURE_RX ? "rx" : dir == SL_CAPTURE_TX ? "tx" : "both";
}

unsigned
sl_capture_dir_parse(const char *s)
{
	if (strcmp(s, "rx") == 0 || strcmp(s, "in") == 0)
		return SL_CAPTURE_RX;
	if (strcmp(s, "tx") == 0 || strcmp(s, "out") == 0)
		return SL_CAPTURE_TX;
	if (strcmp(s, "both") == 0 || strcmp(s, "rxtx") == 0)
		return SL_CAPTURE_BOTH;
	return 0;
}

/* ---- Worker ---- */

/*
 * Wall-clock nanoseconds of TSC @tsc.  rte_pcapng_copy's own conversion
 * (DPDK 22.11) sets its base lazily, at the first packet, and shares it
 * between threads without locks: a burst time read before that base wraps
 * to the year 2265.  The capture keeps its own, fixed at open.
 */
static inline uint64_t
capture_ns(const struct sl_capture *c, uint64_t tsc)
{
	if (tsc >= c->base_tsc)
		return c->base_ns +
		       (uint64_t)((unsigned __int128)(tsc - c->base_tsc) * 1000000000u / c->tsc_hz);
	return c->base_ns -
	       (uint64_t)((unsigned __int128)(c->base_tsc - tsc) * 1000000000u / c->tsc_hz);
}

/* Overwrite the enhanced packet block's timestamp (bytes 12-19, host order as the file's). */
static inline void
capture_stamp(struct rte_mbuf *m, uint64_t ns)
{
	uint32_t hi = (uint32_t)(ns >> 32), lo = (uint32_t)ns;
	uint8_t *epb = rte_pktmbuf_mtod(m, uint8_t *);

	memcpy(epb + 12, &hi, 4);
	memcpy(epb + 16, &lo, 4);
}

void
sl_capture_burst(struct sl_capture *c, uint16_t dpdk_port, unsigned dir, struct rte_mbuf *const *ms,
		 uint16_t n, uint64_t tsc)
{
	struct rte_mbuf *copies[SL_BURST_MAX];
	unsigned n_copies = 0, sent;

	if (dpdk_port != c->dpdk_port || !(dir & c->dir) || c->full)
		return;
	uint64_t queued = __atomic_load_n(&c->queued, __ATOMIC_RELAXED);

	uint64_t ns = capture_ns(c, tsc);
	/* Racy between workers (it may overshoot by a burst each): the drain cuts at the limit. */
	for (uint16_t i = 0; i < n && queued + n_copies < c->max_packets; i++) {
		struct rte_mbuf *m = rte_pcapng_copy(dpdk_port, 0, ms[i], c->mp, c->snaplen, tsc,
						     dir == SL_CAPTURE_RX ? RTE_PCAPNG_DIRECTION_IN
									  : RTE_PCAPNG_DIRECTION_OUT);
		if (m == NULL) {
			__atomic_fetch_add(&c->dropped, 1, __ATOMIC_RELAXED);
			continue;
		}
		capture_stamp(m, ns);
		copies[n_copies++] = m;
	}
	if (n_copies == 0)
		return;
	sent = rte_ring_enqueue_burst(c->ring, (void **)copies, n_copies, NULL);
	__atomic_fetch_add(&c->queued, sent, __ATOMIC_RELAXED);
	if (sl_unlikely(sent < n_copies)) {
		__atomic_fetch_add(&c->dropped, n_copies - sent, __ATOMIC_RELAXED);
		rte_pktmbuf_free_bulk(&copies[sent], n_copies - sent);
	}
}

/* ---- Control thread ---- */

int
sl_capture_open(const struct sl_capture_params *p, struct sl_capture **out, char *err,
		size_t err_size)
{
	static unsigned seq;
	struct sl_capture *c;
	struct utsname un;
	char name[RTE_MEMPOOL_NAMESIZE], os[160], app[64];

	*out = NULL;
	if (p->path == NULL || p->path[0] == '\0') {
		snprintf(err, err_size, "no capture file given");
		return -EINVAL;
	}
	if (strlen(p->path) >= sizeof(c->st.path)) {
		snprintf(err, err_size, "capture file name too long (%zu bytes, at most %zu)",
			 strlen(p->path), sizeof(c->st.path) - 1);
		return -EINVAL;
	}
	if (p->dir == 0 || (p->dir & ~SL_CAPTURE_BOTH)) {
		snprintf(err, err_size, "bad direction (rx, tx or both)");
		return -EINVAL;
	}
	if (p->snaplen > SL_CAPTURE_SNAPLEN_MAX) {
		snprintf(err, err_size, "snaplen %u too large (at most %u)", p->snaplen,
			 SL_CAPTURE_SNAPLEN_MAX);
		return -EINVAL;
	}
	c = rte_zmalloc("sl_capture", sizeof(*c), RTE_CACHE_LINE_SIZE);
	if (c == NULL) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	c->fd = -1;
	c->dpdk_port = p->dpdk_port;
	c->dir = p->dir;
	c->snaplen = p->snaplen ? p->snaplen : SL_CAPTURE_SNAPLEN_DEFAULT;
	c->max_packets = p->max_packets ? p->max_packets : SL_CAPTURE_COUNT_DEFAULT;
	c->st.state = SL_CAPTURE_RUNNING;
	c->st.port_no = p->port_no;
	c->st.dir = p->dir;
	snprintf(c->st.path, sizeof(c->st.path), "%s", p->path);
	c->st.max_packets = c->max_packets;
	c->st.max_bytes = p->max_bytes ? p->max_bytes : SL_CAPTURE_BYTES_DEFAULT;
	c->st.snaplen = c->snaplen;

	seq++;
	snprintf(name, sizeof(name), "sl_cap_mp%u", seq);
	c->mp = rte_pktmbuf_pool_create_by_ops(name, RING_SIZE * 2 - 1, 0, 0,
					       (uint16_t)rte_pcapng_mbuf_size(c->snaplen),
					       SOCKET_ID_ANY, "ring_mp_sc");
	if (c->mp == NULL)
		c->mp = rte_pktmbuf_pool_create(name, RING_SIZE * 2 - 1, 0, 0,
						(uint16_t)rte_pcapng_mbuf_size(c->snaplen),
						SOCKET_ID_ANY);
	snprintf(name, sizeof(name), "sl_cap_ring%u", seq);
	c->ring = rte_ring_create(name, RING_SIZE, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (c->mp == NULL || c->ring == NULL) {
		snprintf(err, err_size, "cannot allocate the capture pool and ring: %s",
			 rte_strerror(rte_errno));
		sl_capture_close(c, NULL);
		return -ENOMEM;
	}
	c->fd = open(p->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (c->fd < 0) {
		int e = errno;
		snprintf(err, err_size, "%s: %s", p->path, strerror(e));
		sl_capture_close(c, NULL);
		return -e;
	}
	if (uname(&un) == 0)
		snprintf(os, sizeof(os), "%s %s", un.sysname, un.release);
	else
		snprintf(os, sizeof(os), "Linux");
	snprintf(app, sizeof(app), "sluice %s (%s)", SL_VERSION, rte_version());
	struct timespec ts;
	c->base_tsc = rte_get_tsc_cycles();
	clock_gettime(CLOCK_REALTIME, &ts);
	c->base_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	c->tsc_hz = rte_get_tsc_hz();
	c->pcapng = rte_pcapng_fdopen(c->fd, os, NULL, app, NULL);
	if (c->pcapng == NULL) {
		snprintf(err, err_size, "%s: cannot write a pcapng header: %s", p->path,
			 rte_strerror(rte_errno));
		sl_capture_close(c, NULL);
		return -EIO;
	}
	/* The header blocks count toward the file size; rte_pcapng_close closes the fd. */
	off_t hdr = lseek(c->fd, 0, SEEK_CUR);
	c->st.written_bytes = hdr > 0 ? (uint64_t)hdr : 0;
	c->fd = -1;
	SL_LOG(INFO, capture, "capturing port %u %s into %s (count %" PRIu64 ", bytes %" PRIu64
			      ", snaplen %u)",
	       p->port_no, sl_capture_dir_name(p->dir), p->path, c->st.max_packets,
	       c->st.max_bytes, c->snaplen);
	*out = c;
	return 0;
}

bool
sl_capture_drain(struct sl_capture *c)
{
	struct rte_mbuf *ms[64];
	unsigned n;

	if (c == NULL)
		return false;
	while ((n = rte_ring_sc_dequeue_burst(c->ring, (void **)ms, SL_ARRAY_SIZE(ms), NULL)) > 0) {
		unsigned keep = 0;
		uint64_t size = 0;
		ssize_t w;

		/* Stop before the size limit: a file never grows past max_bytes. */
		while (keep < n && c->st.state == SL_CAPTURE_RUNNING &&
		       c->st.captured + keep < c->max_packets &&
		       c->st.written_bytes + size + rte_pktmbuf_pkt_len(ms[keep]) <= c->st.max_bytes) {
			size += rte_pktmbuf_pkt_len(ms[keep]);
			keep++;
		}
		if (keep < n && c->st.state == SL_CAPTURE_RUNNING)
			c->st.state = SL_CAPTURE_DONE;
		if (keep > 0) {
			w = rte_pcapng_write_packets(c->pcapng, ms, (uint16_t)keep);
			if (w < 0) {
				SL_LOG(ERR, capture, "%s: write failed: %s; capture ends", c->st.path,
				       strerror(errno));
				c->st.state = SL_CAPTURE_DONE;
			} else {
				c->st.written_bytes += (uint64_t)w;
				c->st.captured += keep;
			}
		}
		rte_pktmbuf_free_bulk(ms, n);
	}
	if (c->st.captured >= c->max_packets)
		c->st.state = c->st.state == SL_CAPTURE_STOPPED ? SL_CAPTURE_STOPPED : SL_CAPTURE_DONE;
	if (c->st.state != SL_CAPTURE_RUNNING)
		c->full = true;
	return c->st.state == SL_CAPTURE_DONE;
}

void
sl_capture_status(const struct sl_capture *c, struct sl_capture_status *st)
{
	*st = c->st;
	st->dropped = c->dropped;
}

void
sl_capture_close(struct sl_capture *c, struct sl_capture_status *final)
{
	if (c == NULL)
		return;
	if (c->pcapng != NULL) {
		if (c->st.state == SL_CAPTURE_RUNNING)
			c->st.state = SL_CAPTURE_STOPPED;
		sl_capture_drain(c);
		rte_pcapng_close(c->pcapng);
		SL_LOG(INFO, capture, "%s: %" PRIu64 " frames, %" PRIu64 " bytes, %" PRIu64
				      " not copied",
		       c->st.path, c->st.captured, c->st.written_bytes, c->dropped);
	}
	if (c->fd >= 0)
		close(c->fd);
	if (final != NULL)
		sl_capture_status(c, final);
	if (c->ring != NULL) {
		struct rte_mbuf *m;
		while (rte_ring_sc_dequeue(c->ring, (void **)&m) == 0)
			rte_pktmbuf_free(m);
	}
	rte_ring_free(c->ring);
	rte_mempool_free(c->mp);
	rte_free(c);
}
