/* SPDX-License-Identifier: BSD-3-Clause */
/* capture: pcapng port mirroring.  Section comments mark worker and control code. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
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

#include <pcap/pcap.h>

#include "sl_config.h"
#include "../core/core.h"
#include "../log/log.h"
#include "capture.h"

#define RING_SIZE 1024u /* copies in flight; the control thread drains every ~1 ms */

#define NO_IF 0xff

struct sl_capture {
	/* Read by the worker. */
	uint8_t if_of[256]; /* ethdev port id -> interface index in the file, NO_IF: not captured */
	bool filtering;
	struct bpf_program prog; /* the compiled filter, when filtering */
	unsigned dir;
	uint32_t snaplen;
	uint64_t max_packets;
	volatile bool full; /* control -> worker: stop copying */
	struct rte_mempool *mp;
	struct rte_ring *ring;
	/* The clock: wall time base_ns was TSC base_tsc (set at open, read-only after). */
	uint64_t base_tsc, base_ns, tsc_hz;
	/* Written by the workers (atomic adds: several may capture at once). */
	uint64_t queued SL_CACHE_ALIGNED;
	uint64_t dropped;
	uint64_t filtered;
	/* Control thread only. */
	int fd SL_CACHE_ALIGNED;
	bool header_written;
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

/*
 * Overwrite the enhanced packet block's interface (bytes 8-11: the file's
 * own numbering, not the ethdev id rte_pcapng_copy writes) and timestamp
 * (bytes 12-19), host order as the file's.
 */
static inline void
capture_stamp(struct rte_mbuf *m, uint32_t ifc, uint64_t ns)
{
	uint32_t hi = (uint32_t)(ns >> 32), lo = (uint32_t)ns;
	uint8_t *epb = rte_pktmbuf_mtod(m, uint8_t *);

	memcpy(epb + 8, &ifc, 4);
	memcpy(epb + 12, &hi, 4);
	memcpy(epb + 16, &lo, 4);
}

void
sl_capture_burst(struct sl_capture *c, uint16_t dpdk_port, unsigned dir, struct rte_mbuf *const *ms,
		 uint16_t n, uint64_t tsc)
{
	struct rte_mbuf *copies[SL_BURST_MAX];
	unsigned n_copies = 0, sent;

	unsigned ifc = dpdk_port < sizeof(c->if_of) ? c->if_of[dpdk_port] : NO_IF;

	if (ifc == NO_IF || !(dir & c->dir) || c->full)
		return;
	uint64_t queued = __atomic_load_n(&c->queued, __ATOMIC_RELAXED);

	uint64_t ns = capture_ns(c, tsc);
	/* Racy between workers (it may overshoot by a burst each): the drain cuts at the limit. */
	for (uint16_t i = 0; i < n && queued + n_copies < c->max_packets; i++) {
		/* The filter first: frames it leaves out take no copy, ring slot or count. */
		if (c->filtering &&
		    bpf_filter(c->prog.bf_insns, rte_pktmbuf_mtod(ms[i], const u_char *),
			       rte_pktmbuf_pkt_len(ms[i]), rte_pktmbuf_data_len(ms[i])) == 0) {
			__atomic_fetch_add(&c->filtered, 1, __ATOMIC_RELAXED);
			continue;
		}
		struct rte_mbuf *m = rte_pcapng_copy(
			dpdk_port, 0, ms[i], c->mp, c->snaplen, tsc,
			dir == SL_CAPTURE_RX ? RTE_PCAPNG_DIRECTION_IN : RTE_PCAPNG_DIRECTION_OUT);
		if (m == NULL) {
			__atomic_fetch_add(&c->dropped, 1, __ATOMIC_RELAXED);
			continue;
		}
		capture_stamp(m, ifc, ns);
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

/*
 * The file's header, written here rather than by rte_pcapng_fdopen: DPDK
 * 22.11 writes an interface block for every ethdev, named after the device,
 * where a capture has its own ports, named as the switch names them.
 */
#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_IDB 1u
#define PCAPNG_EPB 6u

/* Append option @code (@len bytes of @data, padded to 4) at @b + *off. */
static void
opt_put(uint8_t *b, size_t *off, uint16_t code, const void *data, uint16_t len)
{
	memcpy(b + *off, &code, 2);
	memcpy(b + *off + 2, &len, 2);
	memcpy(b + *off + 4, data, len);
	memset(b + *off + 4 + len, 0, (4 - len % 4) % 4);
	*off += 4 + (len + 3u) / 4 * 4;
}

/* Close block @b: opt_endofopt, then the total length at both ends.  Returns the length. */
static size_t
block_end(uint8_t *b, size_t off)
{
	uint32_t zero = 0, len = (uint32_t)(off + 8);

	memcpy(b + off, &zero, 4); /* opt_endofopt */
	memcpy(b + 4, &len, 4);
	memcpy(b + off + 4, &len, 4);
	return len;
}

static int
write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Section header block, then one interface block per port.  Returns bytes or -errno. */
static ssize_t
write_header(int fd, const struct sl_capture_params *p, uint32_t snaplen, const char *os,
	     const char *app)
{
	uint8_t b[1024];
	uint32_t u32;
	uint64_t u64 = UINT64_MAX; /* section length: unknown */
	uint16_t u16;
	size_t off, total = 0, len;
	int rc;

	memset(b, 0, sizeof(b));
	u32 = PCAPNG_SHB;
	memcpy(b, &u32, 4);
	u32 = 0x1A2B3C4D; /* byte-order magic */
	memcpy(b + 8, &u32, 4);
	u16 = 1; /* version 1.0 */
	memcpy(b + 12, &u16, 2);
	u16 = 0;
	memcpy(b + 14, &u16, 2);
	memcpy(b + 16, &u64, 8);
	off = 24;
	opt_put(b, &off, 3, os, (uint16_t)strlen(os));   /* shb_os */
	opt_put(b, &off, 4, app, (uint16_t)strlen(app)); /* shb_userappl */
	len = block_end(b, off);
	if ((rc = write_all(fd, b, len)) < 0)
		return rc;
	total += len;
	for (unsigned i = 0; i < p->n_ports; i++) {
		const uint8_t tsresol = 9; /* nanoseconds, as rte_pcapng_copy's blocks */
		const char *f = p->filter != NULL ? p->filter : "";
		uint8_t fopt[SL_CAPTURE_FILTER_MAX + 1];

		memset(b, 0, sizeof(b));
		u32 = PCAPNG_IDB;
		memcpy(b, &u32, 4);
		u16 = 1; /* LINKTYPE_ETHERNET */
		memcpy(b + 8, &u16, 2);
		memcpy(b + 12, &snaplen, 4);
		off = 16;
		opt_put(b, &off, 2, p->ports[i].name,
			(uint16_t)strlen(p->ports[i].name)); /* if_name */
		opt_put(b, &off, 9, &tsresol, 1);            /* if_tsresol */
		if (f[0] !=
		    '\0') { /* if_filter: a first byte 0 says the rest is libpcap's syntax */
			fopt[0] = 0;
			memcpy(fopt + 1, f, strlen(f));
			opt_put(b, &off, 11, fopt, (uint16_t)(strlen(f) + 1));
		}
		len = block_end(b, off);
		if ((rc = write_all(fd, b, len)) < 0)
			return rc;
		total += len;
	}
	return (ssize_t)total;
}

/* Write @n copies (enhanced packet blocks) with one writev per up to 64 segments' worth. */
static ssize_t
write_blocks(int fd, struct rte_mbuf *const *ms, unsigned n)
{
	struct iovec iov[64];
	ssize_t total = 0;
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		for (const struct rte_mbuf *m = ms[i]; m != NULL; m = m->next) {
			if (k == SL_ARRAY_SIZE(iov)) {
				ssize_t w = writev(fd, iov, (int)k);
				if (w < 0)
					return -errno;
				total += w;
				k = 0;
			}
			iov[k].iov_base = rte_pktmbuf_mtod(m, void *);
			iov[k++].iov_len = rte_pktmbuf_data_len(m);
		}
	}
	if (k > 0) {
		ssize_t w = writev(fd, iov, (int)k);
		if (w < 0)
			return -errno;
		total += w;
	}
	return total;
}

int
sl_capture_open(const struct sl_capture_params *p, struct sl_capture **out, char *err,
		size_t err_size)
{
	static unsigned seq;
	struct sl_capture *c;
	struct utsname un;
	char name[RTE_MEMPOOL_NAMESIZE], os[160], app[64];
	ssize_t hdr;

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
	if (p->n_ports == 0 || p->n_ports > SL_CAPTURE_PORTS_MAX) {
		snprintf(err, err_size, "1 to %u ports per capture, not %u", SL_CAPTURE_PORTS_MAX,
			 p->n_ports);
		return -EINVAL;
	}
	if (p->filter != NULL && strlen(p->filter) >= SL_CAPTURE_FILTER_MAX) {
		snprintf(err, err_size, "filter too long (at most %u bytes)",
			 SL_CAPTURE_FILTER_MAX - 1);
		return -EINVAL;
	}
	c = rte_zmalloc("sl_capture", sizeof(*c), RTE_CACHE_LINE_SIZE);
	if (c == NULL) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	c->fd = -1;
	memset(c->if_of, NO_IF, sizeof(c->if_of));
	c->dir = p->dir;
	c->snaplen = p->snaplen ? p->snaplen : SL_CAPTURE_SNAPLEN_DEFAULT;
	c->max_packets = p->max_packets ? p->max_packets : SL_CAPTURE_COUNT_DEFAULT;
	c->st.state = SL_CAPTURE_RUNNING;
	c->st.n_ports = p->n_ports;
	for (unsigned i = 0; i < p->n_ports; i++) {
		uint16_t d = p->ports[i].dpdk_port;
		if (d >= sizeof(c->if_of) || c->if_of[d] != NO_IF) {
			snprintf(err, err_size, "port %u: %s", p->ports[i].port_no,
				 d >= sizeof(c->if_of) ? "its device id is out of range"
						       : "given twice");
			sl_capture_close(c, NULL);
			return -EINVAL;
		}
		c->if_of[d] = (uint8_t)i;
		c->st.port_nos[i] = p->ports[i].port_no;
	}
	c->st.dir = p->dir;
	snprintf(c->st.path, sizeof(c->st.path), "%s", p->path);
	c->st.max_packets = c->max_packets;
	c->st.max_bytes = p->max_bytes ? p->max_bytes : SL_CAPTURE_BYTES_DEFAULT;
	c->st.snaplen = c->snaplen;
	if (p->filter != NULL && p->filter[0] != '\0') {
		/* Compiled for Ethernet frames, as the ports hand them over. */
		pcap_t *dead = pcap_open_dead(DLT_EN10MB, (int)c->snaplen);
		if (dead == NULL ||
		    pcap_compile(dead, &c->prog, p->filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
			snprintf(err, err_size, "filter '%s': %s", p->filter,
				 dead != NULL ? pcap_geterr(dead) : "libpcap unavailable");
			if (dead != NULL)
				pcap_close(dead);
			sl_capture_close(c, NULL);
			return -EINVAL;
		}
		pcap_close(dead);
		c->filtering = true;
		snprintf(c->st.filter, sizeof(c->st.filter), "%s", p->filter);
	}

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
	hdr = write_header(c->fd, p, c->snaplen, os, app);
	if (hdr < 0) {
		snprintf(err, err_size, "%s: cannot write the pcapng header: %s", p->path,
			 strerror((int)-hdr));
		sl_capture_close(c, NULL);
		return -EIO;
	}
	/* The header blocks count toward the file size. */
	c->st.written_bytes = (uint64_t)hdr;
	c->header_written = true;
	SL_LOG(INFO, capture,
	       "capturing %u port%s (port %u first) %s into %s (count %" PRIu64 ", bytes %" PRIu64
	       ", snaplen %u%s%s)",
	       p->n_ports, p->n_ports == 1 ? "" : "s", p->ports[0].port_no,
	       sl_capture_dir_name(p->dir), p->path, c->st.max_packets, c->st.max_bytes, c->snaplen,
	       c->filtering ? ", filter " : "", c->st.filter);
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
		       c->st.written_bytes + size + rte_pktmbuf_pkt_len(ms[keep]) <=
			       c->st.max_bytes) {
			size += rte_pktmbuf_pkt_len(ms[keep]);
			keep++;
		}
		if (keep < n && c->st.state == SL_CAPTURE_RUNNING)
			c->st.state = SL_CAPTURE_DONE;
		if (keep > 0) {
			w = write_blocks(c->fd, ms, keep);
			if (w < 0) {
				SL_LOG(ERR, capture, "%s: write failed: %s; capture ends",
				       c->st.path, strerror((int)-w));
				c->st.state = SL_CAPTURE_DONE;
			} else {
				c->st.written_bytes += (uint64_t)w;
				c->st.captured += keep;
			}
		}
		rte_pktmbuf_free_bulk(ms, n);
	}
	if (c->st.captured >= c->max_packets)
		c->st.state =
			c->st.state == SL_CAPTURE_STOPPED ? SL_CAPTURE_STOPPED : SL_CAPTURE_DONE;
	if (c->st.state != SL_CAPTURE_RUNNING)
		c->full = true;
	return c->st.state == SL_CAPTURE_DONE;
}

void
sl_capture_status(const struct sl_capture *c, struct sl_capture_status *st)
{
	*st = c->st;
	st->dropped = c->dropped;
	st->filtered = c->filtered;
}

void
sl_capture_close(struct sl_capture *c, struct sl_capture_status *final)
{
	if (c == NULL)
		return;
	if (c->header_written) {
		if (c->st.state == SL_CAPTURE_RUNNING)
			c->st.state = SL_CAPTURE_STOPPED;
		sl_capture_drain(c);
		SL_LOG(INFO, capture,
		       "%s: %" PRIu64 " frames, %" PRIu64 " bytes, %" PRIu64 " not copied",
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
	if (c->filtering)
		pcap_freecode(&c->prog);
	rte_free(c);
}
