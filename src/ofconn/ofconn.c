/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofconn: OpenFlow channel implementation (control path only).
 *
 * One manager owns a list of targets (listeners and active controller
 * targets) and a list of connections.  sl_ofconn_mgr_poll() rebuilds a
 * pollfd array from both lists on every call: a switch has a handful of
 * controllers and tools, so the rebuild costs less than keeping an array in
 * sync with connections that come and go inside callbacks.
 *
 * Connections are never freed while a callback may hold a pointer to one:
 * a connection that ends is only marked (CS_CLOSING or CS_DEAD), and the
 * retire step at the end of each poll fires on_disconnect and frees it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* struct ucred, SO_PEERCRED */
#endif
#include "ofconn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../tls/tls.h"

/* OpenFlow constants the channel uses by itself (identical in every version). */
enum {
	OFPT_HELLO = 0,
	OFPT_ERROR = 1,
	OFPT_ECHO_REQUEST = 2,
	OFPT_ECHO_REPLY = 3,
	OFPHET_VERSIONBITMAP = 1,
	OFPET_HELLO_FAILED = 0,
	OFPHFC_INCOMPATIBLE = 0,
	OFPET_BAD_REQUEST = 1,
	OFPBRC_BAD_VERSION = 0,
	OFPBRC_BAD_LEN = 6,
};

/* Payload an ERROR reply quotes from the offending message (spec: at least 64). */
#define ERR_DATA_MAX 64
/*
 * Receive buffer: one read can pull several messages, and after the complete
 * ones are consumed the remainder (< 65535 bytes) always leaves room for the
 * largest legal message.
 */
#define RX_CAP (2 * 65536)
/* How long a graceful close may take to flush and see the peer's EOF. */
#define LINGER_MS 1000
/* An idle output queue bigger than this is freed instead of kept. */
#define TX_KEEP_MAX (256 * 1024)
/* Connections accepted per listener per poll, so one listener cannot starve the rest. */
#define ACCEPT_BURST 32
/* A listener that hit the fd limit rests this long instead of spinning in poll(). */
#define ACCEPT_PAUSE_MS 100
/* Peer-triggered log lines: at most RL_BURST per RL_WINDOW_MS, per manager. */
#define RL_BURST 10
#define RL_WINDOW_MS 5000

enum target_kind { TK_TCP, TK_SSL, TK_UNIX, TK_PTCP, TK_PSSL, TK_PUNIX };

struct target {
	int idx;                      /* Position in mgr->targets. */
	enum target_kind kind;        /* Syntax it was given in. */
	bool passive;                 /* ptcp:/pssl:/punix: listener. */
	bool tls;                     /* ssl:/pssl: connections run TLS under OpenFlow. */
	char *spec;                   /* Target string as given (for logs). */
	struct sockaddr_storage addr; /* Where to connect or what is bound. */
	socklen_t addr_len;           /* Valid bytes of addr. */
	int fd;                       /* Listening socket, -1 for active targets. */
	int port;                     /* Bound TCP port (ptcp, pssl), else 0. */
	char *unlink_path;            /* punix socket file to remove on destroy. */
	unsigned n_accepted;          /* Connections accepted (names punix peers). */
	uint64_t accept_pause_until;  /* Not polled before this (after EMFILE and co). */
	struct sl_ofconn *conn;       /* Active: the current connection or NULL. */
	uint32_t backoff_ms;          /* Active: current backoff, 0 before any failure. */
	uint64_t next_attempt_ms;     /* Active: when to connect while conn == NULL. */
	bool removed;                 /* sl_ofconn_mgr_del_target: kept only for its index. */
};

enum conn_state {
	CS_CONNECTING, /* Non-blocking connect in progress (active only). */
	CS_HANDSHAKE,  /* TLS handshake in progress (ssl:, pssl: only). */
	CS_HELLO,      /* Our HELLO sent, waiting for the peer's. */
	CS_CONNECTED,  /* Version negotiated; messages flow. */
	CS_CLOSING,    /* Flushing output, discarding input, waiting for EOF. */
	CS_DEAD,       /* Socket finished; freed by the retire step. */
};

struct sl_ofconn {
	struct sl_ofconn_mgr *mgr;  /* Owner. */
	struct sl_ofconn *next;     /* mgr->conns list. */
	struct target *target;      /* Target it came from (listener or active). */
	int fd;                     /* Socket, -1 once closed. */
	struct sl_tls *tls;         /* TLS session of ssl:/pssl: connections, else NULL. */
	enum conn_state state;      /* See enum conn_state. */
	bool announced;             /* on_connect fired, on_disconnect not yet. */
	bool rx_eof;                /* Peer closed its side. */
	bool shut_wr;               /* We sent our FIN (closing, output flushed). */
	bool probe_sent;            /* Echo probe outstanding. */
	bool above_lowat;           /* Backlog went above tx_low_water since last on_writable. */
	uint8_t version;            /* Negotiated version, 0 before. */
	uint32_t xid;               /* Last xid handed out. */
	char name[128];             /* Peer description. */
	void *user;                 /* Caller state. */
	uint8_t *rx;                /* RX_CAP bytes of received, unparsed input. */
	size_t rx_len;              /* Valid bytes at rx. */
	uint8_t *tx;                /* Output queue; live bytes are [tx_head, tx_head+tx_len). */
	size_t tx_head;             /* Offset of the first unwritten byte. */
	size_t tx_len;              /* Unwritten bytes. */
	size_t tx_cap;              /* Allocated bytes at tx. */
	uint64_t created_ms;        /* Socket creation (hello timeout base). */
	uint64_t last_rx_ms;        /* Last complete message received. */
	uint64_t last_tx_ms;        /* Last time send() took bytes. */
	uint64_t probe_sent_ms;     /* When the outstanding probe went out. */
	uint64_t connected_ms;      /* HELLO exchange done, 0 before. */
	uint64_t close_deadline_ms; /* CS_CLOSING gives up at this time. */
	int64_t connected_at;       /* Wall clock of connected_ms. */
	struct sl_ofconn_stats st;  /* Counters (time fields filled on read). */
};

struct sl_ofconn_mgr {
	struct sl_ofconn_params p; /* Configuration. */
	struct target **targets;   /* Targets in the order added. */
	int n_targets;             /* Entries in targets. */
	struct sl_ofconn *conns;   /* All connections, any state. */
	struct pollfd *pfds;       /* Scratch poll set, rebuilt each poll. */
	void **slots;              /* Per pfd: a struct target * or struct sl_ofconn *. */
	bool *slot_is_conn;        /* Per pfd: which of the two slots[] holds. */
	size_t n_alloc;            /* Capacity of the three arrays above. */
	uint64_t rl_window_ms;     /* Start of the current rate-limit window. */
	unsigned rl_count;         /* Lines logged in that window. */
	unsigned rl_suppressed;    /* Lines dropped since the last logged one. */
	int wake_fd;               /* Extra fd that ends a poll when readable (drained), -1. */
};

/* ------------------------------------------------------------------------- */
/* Small helpers: time, byte order, logging.                                 */
/* ------------------------------------------------------------------------- */

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint16_t
get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void
put_header(uint8_t *p, uint8_t version, uint8_t type, uint16_t len, uint32_t xid)
{
	p[0] = version;
	p[1] = type;
	put_be16(p + 2, len);
	put_be32(p + 4, xid);
}

/*
 * Log through the caller's sink.  @rl marks lines a peer can trigger at will;
 * those share one budget per manager so a hostile peer cannot flood the log.
 */
static void __attribute__((format(printf, 4, 5)))
mlog(struct sl_ofconn_mgr *mgr, int level, bool rl, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	if (!mgr->p.log)
		return;
	if (rl) {
		uint64_t now = now_ms();

		if (now - mgr->rl_window_ms >= RL_WINDOW_MS) {
			mgr->rl_window_ms = now;
			mgr->rl_count = 0;
		}
		if (mgr->rl_count >= RL_BURST) {
			mgr->rl_suppressed++;
			return;
		}
		mgr->rl_count++;
	}
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (rl && mgr->rl_suppressed && n >= 0 && (size_t)n < sizeof line) {
		snprintf(line + n, sizeof line - (size_t)n, " (%u similar messages suppressed)",
			 mgr->rl_suppressed);
		mgr->rl_suppressed = 0;
	}
	mgr->p.log(level, line, mgr->p.arg);
}

/* "1.2.3.4:80", "[::1]:80" or "/path" for logs and connection names. */
static void
addr_to_str(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	char ip[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof ip);
		snprintf(buf, size, "%s:%u", ip, ntohs(sin->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof ip);
		snprintf(buf, size, "[%s]:%u", ip, ntohs(sin6->sin6_port));
	} else if (ss->ss_family == AF_UNIX) {
		snprintf(buf, size, "%s", ((const struct sockaddr_un *)ss)->sun_path);
	} else {
		snprintf(buf, size, "?");
	}
}

/* ------------------------------------------------------------------------- */
/* Output queue.                                                             */
/* ------------------------------------------------------------------------- */

/*
 * Make room for @len more bytes at the tail.  Compacting moves the live bytes
 * and is only worth it when the dead space in front is at least as large as
 * what must move; otherwise grow, which copies the live bytes once anyway.
 */
static int
tx_reserve(struct sl_ofconn *c, size_t len)
{
	size_t need = c->tx_len + len;
	uint8_t *nbuf;
	size_t ncap;

	if (c->tx_head + need <= c->tx_cap)
		return 0;
	if (need <= c->tx_cap && c->tx_head >= c->tx_len) {
		memmove(c->tx, c->tx + c->tx_head, c->tx_len);
		c->tx_head = 0;
		return 0;
	}
	ncap = SL_MAX(SL_MAX(c->tx_cap * 2, need), (size_t)4096);
	nbuf = malloc(ncap);
	if (!nbuf)
		return -ENOMEM;
	if (c->tx_len)
		memcpy(nbuf, c->tx + c->tx_head, c->tx_len);
	free(c->tx);
	c->tx = nbuf;
	c->tx_cap = ncap;
	c->tx_head = 0;
	return 0;
}

/* Queue a message without writing it; the bound applies to our own messages too. */
static int
tx_queue(struct sl_ofconn *c, const void *msg, size_t len)
{
	int ret;

	if (c->tx_len + len > c->mgr->p.max_tx_bytes) {
		c->st.tx_dropped++;
		return -ENOBUFS;
	}
	ret = tx_reserve(c, len);
	if (ret)
		return ret;
	memcpy(c->tx + c->tx_head + c->tx_len, msg, len);
	c->tx_len += len;
	c->st.tx_msgs++;
	c->st.tx_bytes += len;
	if (c->tx_len > c->mgr->p.tx_low_water)
		c->above_lowat = true;
	return 0;
}

/*
 * Input throttling: while a connection's backlog is above tx_low_water its
 * input is neither read nor dispatched, so a peer that floods requests
 * without reading the replies slows down instead of losing replies (OVS
 * stops reading a controller with too many replies queued, likewise).
 */
static bool
rx_paused(const struct sl_ofconn *c)
{
	return c->state == CS_CONNECTED && c->tx_len > c->mgr->p.tx_low_water;
}

static void conn_kill(struct sl_ofconn *c);

/*
 * Socket I/O, plain or through TLS: bytes moved (recv: 0 at EOF), or -errno,
 * -EAGAIN when the socket is not ready.  A TLS send retried after -EAGAIN
 * starts with the same bytes, as tls.h requires: the queue only grows at its
 * tail and its head moves only when bytes were taken.
 */
static ssize_t
io_send(struct sl_ofconn *c, const void *buf, size_t len)
{
	ssize_t n;

	if (c->tls)
		return sl_tls_send(c->tls, buf, len);
	do {
		n = send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static ssize_t
io_recv(struct sl_ofconn *c, void *buf, size_t len)
{
	ssize_t n;

	if (c->tls)
		return sl_tls_recv(c->tls, buf, len);
	do {
		n = recv(c->fd, buf, len, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* Why I/O failed with -@err: TLS's own reason when it has one. */
static const char *
io_error_text(const struct sl_ofconn *c, int err)
{
	if (c->tls && sl_tls_error(c->tls)[0])
		return sl_tls_error(c->tls);
	return strerror(err);
}

/* Write as much queued output as the socket takes; a hard error kills @c. */
static void
tx_flush(struct sl_ofconn *c)
{
	while (c->tx_len) {
		ssize_t n = io_send(c, c->tx + c->tx_head, c->tx_len);

		if (n < 0) {
			if (n != -EAGAIN) {
				mlog(c->mgr, SL_OFCONN_LOG_WARN, true, "%s: send failed (%s)",
				     c->name, io_error_text(c, (int)-n));
				conn_kill(c);
			}
			return;
		}
		c->tx_head += (size_t)n;
		c->tx_len -= (size_t)n;
		c->last_tx_ms = now_ms();
	}
	/* Empty: restart at the front, and give back a buffer a big dump inflated. */
	c->tx_head = 0;
	if (c->tx_cap > TX_KEEP_MAX) {
		free(c->tx);
		c->tx = NULL;
		c->tx_cap = 0;
	}
}

/* ------------------------------------------------------------------------- */
/* Connection state changes.                                                 */
/* ------------------------------------------------------------------------- */

/* Abort: the socket is unusable or the peer is gone; nothing more is sent. */
static void
conn_kill(struct sl_ofconn *c)
{
	c->state = CS_DEAD;
}

/*
 * Graceful close: stop reading messages, flush what is queued, send FIN and
 * wait (bounded) for the peer's EOF.  Closing outright with unread input would
 * make the kernel send RST, and the peer could lose the ERROR we just queued.
 */
static void
conn_start_close(struct sl_ofconn *c)
{
	if (c->state >= CS_CLOSING)
		return;
	if (c->state == CS_CONNECTING || c->state == CS_HANDSHAKE) {
		conn_kill(c); /* Nothing of ours is queued before the HELLO. */
		return;
	}
	c->state = CS_CLOSING;
	c->close_deadline_ms = now_ms() + LINGER_MS;
	tx_flush(c);
}

/* Queue an ERROR message: @data is text (HELLO_FAILED) or the offending bytes. */
static void
send_error(struct sl_ofconn *c, uint8_t version, uint32_t xid, uint16_t type, uint16_t code,
	   const void *data, size_t data_len)
{
	uint8_t buf[12 + 320];
	size_t len;

	data_len = SL_MIN(data_len, sizeof buf - 12);
	len = 12 + data_len;
	put_header(buf, version, OFPT_ERROR, (uint16_t)len, xid);
	put_be16(buf + 8, type);
	put_be16(buf + 10, code);
	memcpy(buf + 12, data, data_len);
	/* Best effort: a peer that let the queue fill up will not read it anyway. */
	(void)tx_queue(c, buf, len);
	tx_flush(c);
}

/* Our HELLO: header plus one version-bitmap element with only bit 4 (1.3) set. */
static void
send_hello(struct sl_ofconn *c)
{
	uint8_t buf[16];

	put_header(buf, SL_OFCONN_VERSION, OFPT_HELLO, sizeof buf, ++c->xid);
	put_be16(buf + 8, OFPHET_VERSIONBITMAP);
	put_be16(buf + 10, 8); /* Element length: 4-byte element header + one bitmap word. */
	put_be32(buf + 12, UINT32_C(1) << SL_OFCONN_VERSION);
	(void)tx_queue(c, buf, sizeof buf);
	tx_flush(c);
}

/*
 * Advance a TLS handshake; once it is done the HELLO exchange starts.  A
 * failure is the peer's doing (no certificate, another CA, not TLS at all):
 * logged with the reason, rate-limited, and only this connection ends.
 */
static void
conn_handshake(struct sl_ofconn *c)
{
	int ret = sl_tls_handshake(c->tls);

	if (ret == -EAGAIN)
		return;
	if (ret < 0) {
		mlog(c->mgr, SL_OFCONN_LOG_WARN, true, "%s: TLS handshake failed: %s", c->name,
		     io_error_text(c, -ret));
		conn_kill(c);
		return;
	}
	mlog(c->mgr, SL_OFCONN_LOG_INFO, false, "%s: %s session with peer certificate '%s'",
	     c->name, sl_tls_version(c->tls), sl_tls_peer_subject(c->tls));
	c->state = CS_HELLO;
	send_hello(c);
}

/* The socket is connected: start the TLS handshake (ssl:, pssl:) or the HELLO exchange. */
static void
conn_established(struct sl_ofconn *c)
{
	int one = 1;
	struct sockaddr_storage ss;
	socklen_t ss_len = sizeof ss;

	if (getsockname(c->fd, (struct sockaddr *)&ss, &ss_len) == 0 &&
	    (ss.ss_family == AF_INET || ss.ss_family == AF_INET6))
		setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	/* The hello timeout covers the TLS handshake too: a silent peer is dropped either way. */
	c->created_ms = now_ms();
	if (c->target->tls) {
		if (sl_tls_open(c->mgr->p.tls, c->fd, c->target->passive, &c->tls) < 0) {
			mlog(c->mgr, SL_OFCONN_LOG_WARN, true, "%s: out of memory for TLS",
			     c->name);
			conn_kill(c);
			return;
		}
		c->state = CS_HANDSHAKE;
		mlog(c->mgr, SL_OFCONN_LOG_DBG, false, "%s: socket connected, TLS handshake",
		     c->name);
		conn_handshake(c);
		return;
	}
	c->state = CS_HELLO;
	mlog(c->mgr, SL_OFCONN_LOG_DBG, false, "%s: socket connected, sent HELLO", c->name);
	send_hello(c);
}

static struct sl_ofconn *
conn_new(struct sl_ofconn_mgr *mgr, struct target *t, int fd)
{
	struct sl_ofconn *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->rx = malloc(RX_CAP);
	if (!c->rx) {
		free(c);
		return NULL;
	}
	c->mgr = mgr;
	c->target = t;
	c->fd = fd;
	c->created_ms = now_ms();
	c->next = mgr->conns;
	mgr->conns = c;
	return c;
}

/* ------------------------------------------------------------------------- */
/* Receive path: framing, HELLO, ECHO, version check.                         */
/* ------------------------------------------------------------------------- */

/* Append " 0x01, 0x02" style version lists to @buf. */
static void
versions_to_str(uint32_t bits, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned v = 0; v < 32 && n < size; v++) {
		if (bits & (UINT32_C(1) << v)) {
			int k = snprintf(buf + n, size - n, "%s0x%02x", n ? ", " : "", v);

			if (k < 0)
				break;
			n += (size_t)k;
		}
	}
	if (!n)
		snprintf(buf, size, "none");
}

/*
 * The peer's HELLO.  Without a bitmap element the peer supports every version
 * up to its header version (OVS ofputil_decode_hello), which makes "highest
 * common" the same as min(ours, theirs).  A malformed element (length below
 * its 4-byte header, or past the message) fails the HELLO.
 */
static void
handle_hello(struct sl_ofconn *c, const uint8_t *msg, size_t len)
{
	uint8_t hv = msg[0];
	uint32_t peer = hv >= 31 ? UINT32_MAX - 1 : (UINT32_C(1) << (hv + 1)) - 2;
	bool has_bitmap = false;
	size_t off = SL_OFCONN_HEADER_LEN;
	char reason[320];

	while (len - off >= 4) {
		uint16_t etype = get_be16(msg + off);
		uint16_t elen = get_be16(msg + off + 2);

		if (elen < 4 || elen > len - off) {
			snprintf(
				reason, sizeof reason,
				"Malformed hello element: type %u, length %u at offset %zu of %zu.",
				etype, elen, off, len);
			mlog(c->mgr, SL_OFCONN_LOG_WARN, true, "%s: %s", c->name, reason);
			send_error(c, hv < SL_OFCONN_VERSION ? hv : SL_OFCONN_VERSION, 0,
				   OFPET_HELLO_FAILED, OFPHFC_INCOMPATIBLE, reason, strlen(reason));
			conn_start_close(c);
			return;
		}
		if (etype == OFPHET_VERSIONBITMAP && elen >= 8) {
			peer = get_be32(msg + off + 4);
			has_bitmap = true;
		}
		off += SL_MIN((size_t)(elen + 7) / 8 * 8, len - off);
	}

	if (peer & (UINT32_C(1) << SL_OFCONN_VERSION)) {
		c->state = CS_CONNECTED;
		c->version = SL_OFCONN_VERSION;
		c->connected_ms = now_ms();
		c->connected_at = (int64_t)time(NULL);
		c->announced = true;
		mlog(c->mgr, SL_OFCONN_LOG_INFO, false,
		     "%s: connected, negotiated OpenFlow version 0x%02x (peer hello 0x%02x%s)",
		     c->name, c->version, hv, has_bitmap ? " with version bitmap" : "");
		if (c->mgr->p.on_connect)
			c->mgr->p.on_connect(c, c->mgr->p.arg);
		return;
	}

	/* Incompatible: answer in the peer's highest version so it can parse the error. */
	char vers[200];
	uint8_t ev = peer ? (uint8_t)(31 - __builtin_clz(peer)) : hv;

	if (has_bitmap) {
		versions_to_str(peer, vers, sizeof vers);
		snprintf(reason, sizeof reason,
			 "We support version 0x%02x, you support %s, no common versions.",
			 SL_OFCONN_VERSION, vers);
	} else {
		snprintf(reason, sizeof reason,
			 "We support version 0x%02x, you support no later than version 0x%02x.",
			 SL_OFCONN_VERSION, hv);
	}
	mlog(c->mgr, SL_OFCONN_LOG_WARN, true, "%s: version negotiation failed: %s", c->name,
	     reason);
	send_error(c, ev, 0, OFPET_HELLO_FAILED, OFPHFC_INCOMPATIBLE, reason, strlen(reason));
	conn_start_close(c);
}

/* One complete, length-checked message. */
static void
handle_msg(struct sl_ofconn *c, const uint8_t *msg, size_t len)
{
	struct sl_ofconn_mgr *mgr = c->mgr;
	uint8_t type = msg[1];

	c->st.rx_msgs++;
	c->st.rx_bytes += len;
	c->last_rx_ms = now_ms();
	c->probe_sent = false;

	if (c->state == CS_HELLO) {
		if (type == OFPT_HELLO) {
			handle_hello(c, msg, len);
		} else if (type == OFPT_ERROR) {
			/* Never answer an error with an error: the peer refused us; say why. */
			uint16_t etype = len >= 12 ? get_be16(msg + 8) : 0xffff;
			uint16_t ecode = len >= 12 ? get_be16(msg + 10) : 0xffff;
			char text[128] = "";

			/* HELLO_FAILED carries ASCII; keep only printable bytes of it in the log. */
			if (etype == OFPET_HELLO_FAILED) {
				size_t k = 0;

				for (size_t i = 12; i < len && k < sizeof text - 1; i++)
					if (msg[i] >= 0x20 && msg[i] < 0x7f)
						text[k++] = (char)msg[i];
				text[k] = '\0';
			}
			mlog(mgr, SL_OFCONN_LOG_WARN, true,
			     "%s: peer sent ERROR type %u code %u before HELLO%s%s, closing",
			     c->name, etype, ecode, text[0] ? ": " : "", text);
			conn_start_close(c);
		} else {
			char reason[96];

			snprintf(reason, sizeof reason, "Expected HELLO, received message type %u.",
				 type);
			mlog(mgr, SL_OFCONN_LOG_WARN, true,
			     "%s: received message type %u while expecting HELLO, closing", c->name,
			     type);
			send_error(c, msg[0], get_be32(msg + 4), OFPET_HELLO_FAILED,
				   OFPHFC_INCOMPATIBLE, reason, strlen(reason));
			conn_start_close(c);
		}
		return;
	}

	switch (type) {
	case OFPT_HELLO:
		mlog(mgr, SL_OFCONN_LOG_DBG, true, "%s: ignoring repeated HELLO", c->name);
		return;
	case OFPT_ECHO_REQUEST:
		/* The reply is the request with another type: same version, xid, payload. */
		if (tx_queue(c, msg, len) == 0) {
			c->tx[c->tx_head + c->tx_len - len + 1] = OFPT_ECHO_REPLY;
			tx_flush(c);
		}
		return;
	case OFPT_ECHO_REPLY:
		return;
	case OFPT_ERROR:
		break;
	default:
		if (msg[0] != c->version) {
			/* OVS answers in the offending version, which is the one the peer reads. */
			mlog(mgr, SL_OFCONN_LOG_WARN, true,
			     "%s: received OpenFlow version 0x%02x != negotiated 0x%02x", c->name,
			     msg[0], c->version);
			send_error(c, msg[0], get_be32(msg + 4), OFPET_BAD_REQUEST,
				   OFPBRC_BAD_VERSION, msg, SL_MIN(len, (size_t)ERR_DATA_MAX));
			return;
		}
		break;
	}
	if (mgr->p.on_message)
		mgr->p.on_message(c, msg, len, mgr->p.arg);
}

/* Split the receive buffer into messages; the length field is never trusted. */
static void
rx_parse(struct sl_ofconn *c)
{
	size_t off = 0;

	while ((c->state == CS_HELLO || c->state == CS_CONNECTED) && !rx_paused(c)) {
		size_t avail = c->rx_len - off;
		const uint8_t *msg = c->rx + off;
		uint16_t len;

		if (avail < SL_OFCONN_HEADER_LEN)
			break;
		len = get_be16(msg + 2);
		if (len < SL_OFCONN_HEADER_LEN) {
			/* The stream cannot be re-framed after this: report and close. */
			mlog(c->mgr, SL_OFCONN_LOG_WARN, true,
			     "%s: message length %u < %u, closing", c->name, len,
			     SL_OFCONN_HEADER_LEN);
			send_error(c, c->state == CS_CONNECTED ? c->version : msg[0],
				   get_be32(msg + 4), OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, msg,
				   SL_MIN(avail, (size_t)ERR_DATA_MAX));
			conn_start_close(c);
			break;
		}
		if (avail < len)
			break;
		handle_msg(c, msg, len);
		off += len;
	}
	if (c->state >= CS_CLOSING) {
		c->rx_len = 0;
	} else if (off) {
		memmove(c->rx, c->rx + off, c->rx_len - off);
		c->rx_len -= off;
	}
}

/* One read per readable socket and poll: a busy peer cannot starve the others. */
static void
conn_read(struct sl_ofconn *c)
{
	ssize_t n;

	/* A full buffer means parsing is paused; recv(len 0) would look like EOF. */
	if (c->rx_eof || c->rx_len == RX_CAP)
		return;
	n = io_recv(c, c->rx + c->rx_len, RX_CAP - c->rx_len);
	if (n > 0) {
		c->rx_len += (size_t)n;
		if (c->state == CS_CLOSING)
			c->rx_len = 0; /* Input after a close request is discarded. */
		else
			rx_parse(c);
		return;
	}
	if (n == -EAGAIN)
		return;
	if (n == 0) {
		c->rx_eof = true;
		if (c->state != CS_CLOSING)
			mlog(c->mgr, SL_OFCONN_LOG_INFO, false, "%s: connection closed by peer",
			     c->name);
		/* A half-closed peer may still read: flush what is queued first. */
		conn_start_close(c);
		if (!c->tx_len)
			conn_kill(c);
	} else {
		mlog(c->mgr, SL_OFCONN_LOG_WARN, true, "%s: receive failed (%s)", c->name,
		     io_error_text(c, (int)-n));
		conn_kill(c);
	}
}

/* ------------------------------------------------------------------------- */
/* Active targets: connect and reconnect.                                    */
/* ------------------------------------------------------------------------- */

/*
 * Next attempt after a failure or a drop; see "Timers" in ofconn.h.
 * @was_up: the connection had finished its HELLO exchange.
 */
static void
target_schedule(struct sl_ofconn_mgr *mgr, struct target *t, uint64_t now, bool was_up)
{
	if (t->backoff_ms == 0 || was_up)
		t->backoff_ms = mgr->p.backoff_min_ms;
	else
		t->backoff_ms =
			(uint32_t)SL_MIN((uint64_t)t->backoff_ms * 2, mgr->p.backoff_max_ms);
	t->next_attempt_ms = now + t->backoff_ms;
	mlog(mgr, SL_OFCONN_LOG_DBG, false, "%s: next connection attempt in %u ms", t->spec,
	     t->backoff_ms);
}

static void
target_connect(struct sl_ofconn_mgr *mgr, struct target *t)
{
	struct sl_ofconn *c;
	char where[120];
	int fd, ret;

	fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		mlog(mgr, SL_OFCONN_LOG_WARN, false, "%s: socket failed (%s)", t->spec,
		     strerror(errno));
		goto retry;
	}
	do {
		ret = connect(fd, (const struct sockaddr *)&t->addr, t->addr_len);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0 && errno != EINPROGRESS) {
		mlog(mgr, SL_OFCONN_LOG_INFO, false, "%s: connection failed (%s)", t->spec,
		     strerror(errno));
		goto close_fd;
	}
	c = conn_new(mgr, t, fd);
	if (!c)
		goto close_fd;
	addr_to_str(&t->addr, where, sizeof where);
	snprintf(c->name, sizeof c->name, "%s:%s",
		 t->kind == TK_TCP   ? "tcp"
		 : t->kind == TK_SSL ? "ssl"
				     : "unix",
		 where);
	t->conn = c;
	c->state = CS_CONNECTING;
	if (ret == 0)
		conn_established(c);
	return;

close_fd:
	close(fd);
retry:
	target_schedule(mgr, t, now_ms(), false);
}

/* A non-blocking connect finished (POLLOUT or POLLERR). */
static void
conn_connect_done(struct sl_ofconn *c)
{
	int err = 0;
	socklen_t err_len = sizeof err;

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &err_len) < 0)
		err = errno;
	if (err == EINPROGRESS)
		return;
	if (err) {
		mlog(c->mgr, SL_OFCONN_LOG_INFO, false, "%s: connection failed (%s)", c->name,
		     strerror(err));
		conn_kill(c);
		return;
	}
	conn_established(c);
}

/* ------------------------------------------------------------------------- */
/* Passive targets: accept.                                                  */
/* ------------------------------------------------------------------------- */

/* May the peer of unix socket @fd use it (ofconn.h, unix_gid)?  Logs a refusal. */
static bool
unix_peer_allowed(struct sl_ofconn_mgr *mgr, const struct target *t, int fd)
{
	struct ucred cr;
	socklen_t len = sizeof cr;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
		mlog(mgr, SL_OFCONN_LOG_WARN, true, "%s: no peer credentials (%s): refused",
		     t->spec, strerror(errno));
		return false;
	}
	if (cr.uid == 0 || cr.uid == geteuid() ||
	    (mgr->p.unix_gid >= 0 && cr.gid == (gid_t)mgr->p.unix_gid))
		return true;
	mlog(mgr, SL_OFCONN_LOG_WARN, true, "%s: peer pid %d uid %u gid %u not allowed: refused",
	     t->spec, (int)cr.pid, (unsigned)cr.uid, (unsigned)cr.gid);
	return false;
}

static void
listener_accept(struct sl_ofconn_mgr *mgr, struct target *t)
{
	for (int i = 0; i < ACCEPT_BURST; i++) {
		struct sockaddr_storage ss;
		socklen_t ss_len = sizeof ss;
		struct sl_ofconn *c;
		char where[120];
		int fd;

		fd = accept4(t->fd, (struct sockaddr *)&ss, &ss_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			mlog(mgr, SL_OFCONN_LOG_WARN, true, "%s: accept failed (%s)", t->spec,
			     strerror(errno));
			/* The pending connection stays queued: without a pause poll() spins. */
			t->accept_pause_until = now_ms() + ACCEPT_PAUSE_MS;
			return;
		}
		if (t->kind == TK_PUNIX && !unix_peer_allowed(mgr, t, fd)) {
			close(fd);
			continue;
		}
		c = conn_new(mgr, t, fd);
		if (!c) {
			close(fd);
			mlog(mgr, SL_OFCONN_LOG_WARN, true, "%s: out of memory accepting", t->spec);
			return;
		}
		t->n_accepted++;
		if (t->kind == TK_PUNIX) {
			snprintf(c->name, sizeof c->name, "punix:%s#%u", t->unlink_path,
				 t->n_accepted);
		} else {
			addr_to_str(&ss, where, sizeof where);
			snprintf(c->name, sizeof c->name, "%s:%s", t->tls ? "ssl" : "tcp", where);
		}
		mlog(mgr, SL_OFCONN_LOG_DBG, false, "%s: accepted %s", t->spec, c->name);
		conn_established(c);
	}
}

/* ------------------------------------------------------------------------- */
/* Target parsing and setup.                                                  */
/* ------------------------------------------------------------------------- */

/* Decimal port, all digits; @allow_zero for ptcp's "pick one". */
static bool
parse_port(const char *s, bool allow_zero, int *port)
{
	unsigned long v = 0;

	if (!*s || strlen(s) > 5)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v > 65535 || (v == 0 && !allow_zero))
		return false;
	*port = (int)v;
	return true;
}

/*
 * A host name, resolved once when the target is added (getaddrinfo: hosts
 * file, then DNS; the first address).  A name that moves needs the target
 * added again.
 */
static bool
resolve_host(const char *s, int port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
	bool ok = false;

	if (getaddrinfo(s, NULL, &hints, &res) != 0 || res == NULL)
		return false;
	if (res->ai_addrlen <= sizeof(*ss) &&
	    (res->ai_family == AF_INET || res->ai_family == AF_INET6)) {
		memcpy(ss, res->ai_addr, res->ai_addrlen);
		*len = (socklen_t)res->ai_addrlen;
		if (res->ai_family == AF_INET)
			((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
		else
			((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
		ok = true;
	}
	freeaddrinfo(res);
	return ok;
}

/* Numeric IPv4, IPv6 (bare or bracketed) or "localhost" into @ss; @names: resolve others. */
static bool
parse_ip(const char *s, int port, struct sockaddr_storage *ss, socklen_t *len, bool names)
{
	char buf[INET6_ADDRSTRLEN + 2];
	size_t n = strlen(s);

	memset(ss, 0, sizeof *ss);
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']' && n - 2 < sizeof buf) {
		memcpy(buf, s + 1, n - 2);
		buf[n - 2] = '\0';
		s = buf;
	}
	if (!strcmp(s, "localhost"))
		s = "127.0.0.1";

	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	if (inet_pton(AF_INET, s, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*len = sizeof *sin;
		return true;
	}
	if (inet_pton(AF_INET6, s, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*len = sizeof *sin6;
		return true;
	}
	return names && resolve_host(s, port, ss, len);
}

/*
 * Parse @spec into @t (kind, address).  Error messages quote the whole target
 * and then the offending part, which is what an operator needs to fix it.
 */
static int
target_parse(const char *spec, struct target *t, char *err, size_t err_size)
{
	const char *colon = strchr(spec, ':');
	char rest[512];
	size_t plen;

	if (!colon) {
		sl_set_err(
			err, err_size,
			"bad target '%s': expected tcp:, ssl:, unix:, ptcp:, pssl: or punix: prefix",
			spec);
		return -EINVAL;
	}
	plen = (size_t)(colon - spec);
	if (strlen(colon + 1) >= sizeof rest) {
		sl_set_err(err, err_size, "bad target '%.64s...': too long", spec);
		return -EINVAL;
	}
	strcpy(rest, colon + 1);

	if ((plen == 4 && !strncmp(spec, "unix", 4)) || (plen == 5 && !strncmp(spec, "punix", 5))) {
		struct sockaddr_un *sun = (struct sockaddr_un *)&t->addr;

		t->kind = plen == 4 ? TK_UNIX : TK_PUNIX;
		if (!rest[0]) {
			sl_set_err(err, err_size, "bad target '%s': missing path", spec);
			return -EINVAL;
		}
		if (strlen(rest) >= sizeof sun->sun_path) {
			sl_set_err(err, err_size, "bad target '%s': path longer than %zu bytes",
				   spec, sizeof sun->sun_path - 1);
			return -EINVAL;
		}
		memset(&t->addr, 0, sizeof t->addr);
		sun->sun_family = AF_UNIX;
		strcpy(sun->sun_path, rest);
		t->addr_len = sizeof *sun;
		return 0;
	}

	if (plen == 3 && (!strncmp(spec, "tcp", 3) || !strncmp(spec, "ssl", 3))) {
		/* tcp:IP[:PORT] and ssl:IP[:PORT], IPv6 in brackets. */
		char *host = rest, *port_s = NULL;
		int port = SL_OFCONN_DEFAULT_PORT;

		t->kind = spec[0] == 't' ? TK_TCP : TK_SSL;
		if (rest[0] == '[') {
			char *rb = strchr(rest, ']');

			if (!rb) {
				sl_set_err(err, err_size, "bad target '%s': missing ']'", spec);
				return -EINVAL;
			}
			if (rb[1] == ':')
				port_s = rb + 2;
			else if (rb[1]) {
				sl_set_err(err, err_size, "bad target '%s': junk after ']'", spec);
				return -EINVAL;
			}
			rb[1] = '\0';
		} else {
			char *c2 = strchr(rest, ':');

			if (c2 && strchr(c2 + 1, ':')) {
				sl_set_err(err, err_size,
					   "bad target '%s': IPv6 addresses must be in brackets",
					   spec);
				return -EINVAL;
			}
			if (c2) {
				*c2 = '\0';
				port_s = c2 + 1;
			}
		}
		if (!host[0]) {
			sl_set_err(err, err_size, "bad target '%s': missing host", spec);
			return -EINVAL;
		}
		if (port_s && !port_s[0]) {
			sl_set_err(err, err_size, "bad target '%s': missing port", spec);
			return -EINVAL;
		}
		if (port_s && !parse_port(port_s, false, &port)) {
			sl_set_err(err, err_size,
				   "bad target '%s': port '%s' out of range (1-65535)", spec,
				   port_s);
			return -EINVAL;
		}
		if (!parse_ip(host, port, &t->addr, &t->addr_len, true)) {
			sl_set_err(err, err_size,
				   "bad target '%s': '%s' is neither an IP address nor a host name "
				   "that resolves",
				   spec, host);
			return -EINVAL;
		}
		return 0;
	}

	if (plen == 4 && (!strncmp(spec, "ptcp", 4) || !strncmp(spec, "pssl", 4))) {
		/*
		 * ptcp:PORT[:IP] and pssl:PORT[:IP]; everything after the port is
		 * the address.  A listener gives any peer full control: loopback
		 * unless an address is written out.
		 */
		char *c2 = strchr(rest, ':');
		const char *ip = "127.0.0.1";
		int port;

		t->kind = spec[1] == 't' ? TK_PTCP : TK_PSSL;
		if (c2) {
			*c2 = '\0';
			ip = c2 + 1;
			if (!ip[0]) {
				sl_set_err(err, err_size, "bad target '%s': missing address", spec);
				return -EINVAL;
			}
		}
		if (!rest[0]) {
			sl_set_err(err, err_size, "bad target '%s': missing port", spec);
			return -EINVAL;
		}
		if (!parse_port(rest, true, &port)) {
			sl_set_err(err, err_size,
				   "bad target '%s': port '%s' out of range (0-65535)", spec, rest);
			return -EINVAL;
		}
		if (!parse_ip(ip, port, &t->addr, &t->addr_len, false)) {
			sl_set_err(err, err_size, "bad target '%s': '%s' is not an IP address",
				   spec, ip);
			return -EINVAL;
		}
		return 0;
	}

	sl_set_err(
		err, err_size,
		"bad target '%s': unknown type '%.*s' (expected tcp, ssl, unix, ptcp, pssl or punix)",
		spec, (int)plen, spec);
	return -EINVAL;
}

/* Bind and listen for a ptcp:/punix: target. */
static int
target_listen(struct sl_ofconn_mgr *mgr, struct target *t, char *err, size_t err_size)
{
	char where[120];
	int one = 1, fd, ret;

	addr_to_str(&t->addr, where, sizeof where);
	if (t->kind == TK_PUNIX) {
		const char *path = ((struct sockaddr_un *)&t->addr)->sun_path;
		struct stat sb;

		/* Only a socket file is stale; refuse to delete anything else. */
		if (lstat(path, &sb) == 0) {
			if (!S_ISSOCK(sb.st_mode)) {
				sl_set_err(err, err_size,
					   "target '%s': %s exists and is not a socket", t->spec,
					   path);
				return -EEXIST;
			}
			unlink(path);
		}
	}
	fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		sl_set_err(err, err_size, "target '%s': socket: %s", t->spec, strerror(errno));
		return ret;
	}
	if (t->kind != TK_PUNIX)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	/* A unix socket is born with the umask's mode: none for others, then 0660. */
	mode_t old_mask = t->kind == TK_PUNIX ? umask(0177) : 0;
	ret = bind(fd, (const struct sockaddr *)&t->addr, t->addr_len);
	if (t->kind == TK_PUNIX)
		umask(old_mask);
	if (ret < 0) {
		ret = -errno;
		sl_set_err(err, err_size, "target '%s': bind %s: %s", t->spec, where,
			   strerror(errno));
		goto close_fd;
	}
	if (t->kind == TK_PUNIX) {
		const char *path = ((struct sockaddr_un *)&t->addr)->sun_path;
		if (chmod(path, 0660) < 0 ||
		    (mgr->p.unix_gid >= 0 && chown(path, (uid_t)-1, (gid_t)mgr->p.unix_gid) < 0)) {
			ret = -errno;
			sl_set_err(err, err_size, "target '%s': permissions of %s: %s", t->spec,
				   path, strerror(errno));
			unlink(path);
			goto close_fd;
		}
	}
	if (t->kind == TK_PUNIX) {
		t->unlink_path = strdup(((struct sockaddr_un *)&t->addr)->sun_path);
		if (!t->unlink_path) {
			ret = -ENOMEM;
			sl_set_err(err, err_size, "target '%s': out of memory", t->spec);
			goto unlink_path;
		}
	}
	if (listen(fd, 64) < 0) {
		ret = -errno;
		sl_set_err(err, err_size, "target '%s': listen %s: %s", t->spec, where,
			   strerror(errno));
		goto unlink_path;
	}
	if (t->kind != TK_PUNIX) {
		struct sockaddr_storage ss;
		socklen_t ss_len = sizeof ss;

		if (getsockname(fd, (struct sockaddr *)&ss, &ss_len) == 0)
			t->port = ntohs(ss.ss_family == AF_INET6
						? ((struct sockaddr_in6 *)&ss)->sin6_port
						: ((struct sockaddr_in *)&ss)->sin_port);
	}
	t->fd = fd;
	return 0;

unlink_path:
	if (t->kind == TK_PUNIX)
		unlink(((struct sockaddr_un *)&t->addr)->sun_path);
	free(t->unlink_path);
	t->unlink_path = NULL;
close_fd:
	close(fd);
	return ret;
}

/* ------------------------------------------------------------------------- */
/* Manager.                                                                  */
/* ------------------------------------------------------------------------- */

void
sl_ofconn_params_init(struct sl_ofconn_params *p)
{
	memset(p, 0, sizeof *p);
	p->probe_interval_ms = 5000;
	p->hello_timeout_ms = 10000;
	p->backoff_min_ms = 100;
	p->backoff_max_ms = 8000;
	p->max_tx_bytes = 4u << 20;
	p->tx_low_water = 64u << 10;
	p->unix_gid = -1;
}

int
sl_ofconn_mgr_create(const struct sl_ofconn_params *p, struct sl_ofconn_mgr **out)
{
	struct sl_ofconn_mgr *mgr;
	struct sl_ofconn_params def;

	if (!p) {
		sl_ofconn_params_init(&def);
		p = &def;
	}
	if (p->backoff_min_ms == 0 || p->backoff_max_ms < p->backoff_min_ms ||
	    p->max_tx_bytes < SL_OFCONN_MSG_MAX || p->tx_low_water >= p->max_tx_bytes)
		return -EINVAL;
	mgr = calloc(1, sizeof *mgr);
	if (!mgr)
		return -ENOMEM;
	mgr->p = *p;
	mgr->wake_fd = -1;
	*out = mgr;
	return 0;
}

void
sl_ofconn_mgr_set_wake_fd(struct sl_ofconn_mgr *mgr, int fd)
{
	mgr->wake_fd = fd;
}

static void
conn_free(struct sl_ofconn *c)
{
	sl_tls_close(c->tls);
	if (c->fd >= 0)
		close(c->fd);
	free(c->rx);
	free(c->tx);
	free(c);
}

void
sl_ofconn_mgr_destroy(struct sl_ofconn_mgr *mgr)
{
	if (!mgr)
		return;
	while (mgr->conns) {
		struct sl_ofconn *c = mgr->conns;

		mgr->conns = c->next;
		if (c->announced && mgr->p.on_disconnect) {
			c->announced = false;
			mgr->p.on_disconnect(c, mgr->p.arg);
		}
		conn_free(c);
	}
	for (int i = 0; i < mgr->n_targets; i++) {
		struct target *t = mgr->targets[i];

		if (t->fd >= 0)
			close(t->fd);
		if (t->unlink_path)
			unlink(t->unlink_path);
		free(t->unlink_path);
		free(t->spec);
		free(t);
	}
	free(mgr->targets);
	free(mgr->pfds);
	free(mgr->slots);
	free(mgr->slot_is_conn);
	free(mgr);
}

int
sl_ofconn_mgr_add_target(struct sl_ofconn_mgr *mgr, const char *target, char *err, size_t err_size)
{
	struct target **targets;
	struct target *t;
	int ret;

	if (err && err_size)
		err[0] = '\0';
	t = calloc(1, sizeof *t);
	if (!t)
		return -ENOMEM;
	t->fd = -1;
	t->spec = strdup(target);
	if (!t->spec) {
		ret = -ENOMEM;
		goto free_t;
	}
	ret = target_parse(target, t, err, err_size);
	if (ret)
		goto free_spec;
	t->passive = t->kind == TK_PTCP || t->kind == TK_PSSL || t->kind == TK_PUNIX;
	t->tls = t->kind == TK_SSL || t->kind == TK_PSSL;
	if (t->tls && !mgr->p.tls) {
		sl_set_err(err, err_size,
			   "bad target '%s': TLS needs a private key, a certificate and a CA "
			   "certificate, and none were configured",
			   target);
		ret = -EINVAL;
		goto free_spec;
	}
	targets = realloc(mgr->targets, (size_t)(mgr->n_targets + 1) * sizeof *targets);
	if (!targets) {
		ret = -ENOMEM;
		goto free_spec;
	}
	mgr->targets = targets;
	if (t->passive) {
		ret = target_listen(mgr, t, err, err_size);
		if (ret)
			goto free_spec;
		mlog(mgr, SL_OFCONN_LOG_INFO, false, "%s: listening", t->spec);
	}
	t->idx = mgr->n_targets;
	mgr->targets[mgr->n_targets++] = t;
	if (!t->passive)
		target_connect(mgr, t);
	return t->idx;

free_spec:
	free(t->spec);
free_t:
	free(t);
	return ret;
}

int
sl_ofconn_mgr_del_target(struct sl_ofconn_mgr *mgr, int idx)
{
	struct target *t;

	if (idx < 0 || idx >= mgr->n_targets || mgr->targets[idx]->removed)
		return -ENOENT;
	t = mgr->targets[idx];
	t->removed = true;
	if (t->fd >= 0) {
		close(t->fd);
		t->fd = -1;
	}
	if (t->unlink_path) {
		unlink(t->unlink_path);
		free(t->unlink_path);
		t->unlink_path = NULL;
	}
	/* Its connections end as sl_ofconn_close() ends them; retire() frees them. */
	for (struct sl_ofconn *c = mgr->conns; c; c = c->next)
		if (c->target == t && c->state < CS_CLOSING)
			sl_ofconn_close(c);
	mlog(mgr, SL_OFCONN_LOG_INFO, false, "%s: removed", t->spec);
	return 0;
}

const char *
sl_ofconn_mgr_target(const struct sl_ofconn_mgr *mgr, int idx)
{
	if (idx < 0 || idx >= mgr->n_targets || mgr->targets[idx]->removed)
		return NULL;
	return mgr->targets[idx]->spec;
}

int
sl_ofconn_mgr_n_targets(const struct sl_ofconn_mgr *mgr)
{
	return mgr->n_targets;
}

int
sl_ofconn_mgr_listen_port(const struct sl_ofconn_mgr *mgr, int idx)
{
	if (idx < 0 || idx >= mgr->n_targets)
		return -ENOENT;
	if (mgr->targets[idx]->kind != TK_PTCP && mgr->targets[idx]->kind != TK_PSSL)
		return -EINVAL;
	return mgr->targets[idx]->port;
}

/* Earliest timer of @c, UINT64_MAX if none. */
static uint64_t
conn_deadline(const struct sl_ofconn *c)
{
	const struct sl_ofconn_params *p = &c->mgr->p;

	switch (c->state) {
	case CS_CONNECTING:
	case CS_HANDSHAKE:
	case CS_HELLO:
		return p->hello_timeout_ms ? c->created_ms + p->hello_timeout_ms : UINT64_MAX;
	case CS_CONNECTED: {
		/* While input is paused the peer's replies cannot be seen: output progress counts. */
		uint64_t active =
			rx_paused(c) ? SL_MAX(c->last_rx_ms, c->last_tx_ms) : c->last_rx_ms;

		if (!p->probe_interval_ms)
			return UINT64_MAX;
		if (c->probe_sent)
			return SL_MAX(c->probe_sent_ms, active) + p->probe_interval_ms;
		return active + p->probe_interval_ms;
	}
	case CS_CLOSING:
		return c->close_deadline_ms;
	default:
		return 0;
	}
}

static uint64_t
next_deadline(const struct sl_ofconn_mgr *mgr)
{
	uint64_t d = UINT64_MAX;

	for (const struct sl_ofconn *c = mgr->conns; c; c = c->next)
		d = SL_MIN(d, conn_deadline(c));
	for (int i = 0; i < mgr->n_targets; i++) {
		const struct target *t = mgr->targets[i];

		if (t->removed)
			continue;
		if (!t->passive && !t->conn)
			d = SL_MIN(d, t->next_attempt_ms);
		if (t->passive && t->accept_pause_until)
			d = SL_MIN(d, t->accept_pause_until);
	}
	return d;
}

/* Keepalive, hello timeout, linger, reconnect. */
static void
run_timers(struct sl_ofconn_mgr *mgr, uint64_t now)
{
	const struct sl_ofconn_params *p = &mgr->p;

	for (struct sl_ofconn *c = mgr->conns; c; c = c->next) {
		if (c->state == CS_DEAD || now < conn_deadline(c))
			continue;
		switch (c->state) {
		case CS_CONNECTING:
		case CS_HANDSHAKE:
		case CS_HELLO:
			mlog(mgr, SL_OFCONN_LOG_WARN, true, "%s: %s timed out after %u ms", c->name,
			     c->state == CS_CONNECTING  ? "connect"
			     : c->state == CS_HANDSHAKE ? "TLS handshake"
							: "HELLO exchange",
			     p->hello_timeout_ms);
			conn_kill(c);
			break;
		case CS_CONNECTED:
			if (!c->probe_sent) {
				uint8_t echo[SL_OFCONN_HEADER_LEN];

				put_header(echo, c->version, OFPT_ECHO_REQUEST, sizeof echo,
					   sl_ofconn_next_xid(c));
				c->probe_sent = true;
				c->probe_sent_ms = now;
				mlog(mgr, SL_OFCONN_LOG_DBG, false,
				     "%s: idle %u ms, sending inactivity probe", c->name,
				     p->probe_interval_ms);
				(void)tx_queue(c, echo, sizeof echo);
				tx_flush(c);
			} else {
				mlog(mgr, SL_OFCONN_LOG_WARN, false,
				     "%s: no response to inactivity probe after %u ms, "
				     "disconnecting",
				     c->name, (unsigned)(now - c->last_rx_ms));
				conn_kill(c);
			}
			break;
		case CS_CLOSING:
			conn_kill(c);
			break;
		default:
			break;
		}
	}
	for (int i = 0; i < mgr->n_targets; i++) {
		struct target *t = mgr->targets[i];

		if (t->removed)
			continue;
		if (!t->passive && !t->conn && now >= t->next_attempt_ms)
			target_connect(mgr, t);
		if (t->passive && t->accept_pause_until && now >= t->accept_pause_until)
			t->accept_pause_until = 0;
	}
}

/* on_writable for connections whose backlog drained; see "Output" in ofconn.h. */
static void
notify_writable(struct sl_ofconn_mgr *mgr)
{
	for (struct sl_ofconn *c = mgr->conns; c; c = c->next) {
		if (c->state != CS_CONNECTED || !c->above_lowat || c->tx_len > mgr->p.tx_low_water)
			continue;
		c->above_lowat = false;
		if (mgr->p.on_writable)
			mgr->p.on_writable(c, mgr->p.arg);
	}
}

/*
 * Fire on_disconnect for connections that stopped being connected, then free
 * the finished ones.  on_disconnect may close other connections, so the
 * announce pass repeats until nothing changes.
 */
static void
retire(struct sl_ofconn_mgr *mgr)
{
	bool again = true;

	while (again) {
		again = false;
		for (struct sl_ofconn *c = mgr->conns; c; c = c->next) {
			if (c->announced && c->state >= CS_CLOSING) {
				c->announced = false;
				again = true;
				if (mgr->p.on_disconnect)
					mgr->p.on_disconnect(c, mgr->p.arg);
			}
		}
	}
	for (struct sl_ofconn **pc = &mgr->conns; *pc;) {
		struct sl_ofconn *c = *pc;
		struct target *t = c->target;

		if (c->state != CS_DEAD) {
			pc = &c->next;
			continue;
		}
		*pc = c->next;
		if (!t->passive && t->conn == c) {
			uint64_t now = now_ms();

			t->conn = NULL;
			if (!t->removed)
				target_schedule(mgr, t, now, c->connected_ms != 0);
		}
		mlog(mgr, SL_OFCONN_LOG_DBG, false, "%s: closed", c->name);
		conn_free(c);
	}
}

static int
pollset_reserve(struct sl_ofconn_mgr *mgr, size_t n)
{
	struct pollfd *pfds;
	void **slots;
	bool *is_conn;

	if (n <= mgr->n_alloc)
		return 0;
	n = SL_MAX(n, mgr->n_alloc * 2);
	pfds = realloc(mgr->pfds, n * sizeof *pfds);
	if (!pfds)
		return -ENOMEM;
	mgr->pfds = pfds;
	slots = realloc(mgr->slots, n * sizeof *slots);
	if (!slots)
		return -ENOMEM;
	mgr->slots = slots;
	is_conn = realloc(mgr->slot_is_conn, n * sizeof *is_conn);
	if (!is_conn)
		return -ENOMEM;
	mgr->slot_is_conn = is_conn;
	mgr->n_alloc = n;
	return 0;
}

int
sl_ofconn_mgr_poll(struct sl_ofconn_mgr *mgr, int timeout_ms)
{
	size_t n = 0, n_conns = 0;
	uint64_t now, deadline;
	bool tls_ready = false; /* A TLS session holds decrypted input poll() cannot see. */
	int wait, ret;

	for (struct sl_ofconn *c = mgr->conns; c; c = c->next)
		n_conns++;
	ret = pollset_reserve(mgr, n_conns + (size_t)mgr->n_targets + 1);
	if (ret)
		return ret;

	/* Stage 1: the poll set.  Closing sockets stop reading once EOF was seen. */
	for (int i = 0; i < mgr->n_targets; i++) {
		struct target *t = mgr->targets[i];

		if (t->fd < 0 || now_ms() < t->accept_pause_until)
			continue;
		mgr->pfds[n] = (struct pollfd){.fd = t->fd, .events = POLLIN};
		mgr->slots[n] = t;
		mgr->slot_is_conn[n++] = false;
	}
	for (struct sl_ofconn *c = mgr->conns; c; c = c->next) {
		bool reading = !c->rx_eof && !rx_paused(c), writing = c->tx_len != 0;
		short ev;

		if (c->state == CS_DEAD)
			continue;
		if (c->state == CS_CONNECTING)
			ev = POLLOUT;
		else if (c->tls)
			ev = sl_tls_events(c->tls, reading, writing);
		else
			ev = (short)((reading ? POLLIN : 0) | (writing ? POLLOUT : 0));
		if (c->tls && reading && sl_tls_pending(c->tls))
			tls_ready = true;
		mgr->pfds[n] = (struct pollfd){.fd = c->fd, .events = ev};
		mgr->slots[n] = c;
		mgr->slot_is_conn[n++] = true;
	}

	/* The wake fd goes last: stage 3 stops before it. */
	if (mgr->wake_fd >= 0)
		mgr->pfds[n] = (struct pollfd){.fd = mgr->wake_fd, .events = POLLIN};

	/* Stage 2: wait, but wake for the earliest timer and never past the caller's limit. */
	now = now_ms();
	deadline = next_deadline(mgr);
	if (deadline <= now || tls_ready) {
		wait = 0;
	} else {
		uint64_t until = deadline - now;

		if (timeout_ms < 0)
			wait = until > INT32_MAX ? -1 : (int)until;
		else
			wait = (int)SL_MIN(until, (uint64_t)timeout_ms);
	}
	ret = poll(mgr->pfds, (nfds_t)(n + (mgr->wake_fd >= 0)), wait);
	if (ret < 0) {
		if (errno != EINTR)
			return -errno;
		ret = 0;
	}
	if (mgr->wake_fd >= 0 && (mgr->pfds[n].revents & POLLIN)) {
		uint64_t v;
		if (read(mgr->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN) {
			/* Nothing to do: the next poll reports the fd again if it stays readable. */
		}
		ret--;
	}

	/* Stage 3: socket events.  Callbacks may end connections; dead ones are skipped. */
	for (size_t i = 0; (ret > 0 || tls_ready) && i < n; i++) {
		short rev = mgr->pfds[i].revents;

		if (!mgr->slot_is_conn[i]) {
			if (rev & POLLIN)
				listener_accept(mgr, mgr->slots[i]);
			continue;
		}
		struct sl_ofconn *c = mgr->slots[i];

		if (c->tls && c->state != CS_DEAD && sl_tls_pending(c->tls))
			rev |= POLLIN;
		if (!rev)
			continue;
		if (c->state == CS_CONNECTING) {
			conn_connect_done(c);
			continue;
		}
		if (c->state == CS_HANDSHAKE) {
			conn_handshake(c);
			continue;
		}
		if (c->tls) {
			/* Either event may serve either direction (tls.h): try both. */
			if (c->state != CS_DEAD && (!rx_paused(c) || (rev & (POLLERR | POLLHUP))))
				conn_read(c);
			if (c->state != CS_DEAD && c->tx_len)
				tx_flush(c);
			continue;
		}
		if (c->state != CS_DEAD && (rev & (POLLIN | POLLERR | POLLHUP)))
			conn_read(c);
		if (c->state != CS_DEAD && c->tx_len)
			tx_flush(c);
	}

	/*
	 * Stage 4: timers; then closing sockets whose output is out send FIN and
	 * are done once the peer's EOF arrived; connections whose backlog drained
	 * dispatch the input they had buffered while paused; then backpressure
	 * wake-ups, and finally retire what ended.
	 */
	run_timers(mgr, now_ms());
	for (struct sl_ofconn *c = mgr->conns; c; c = c->next) {
		if (c->state != CS_CLOSING || c->tx_len)
			continue;
		if (!c->shut_wr) {
			if (c->tls)
				sl_tls_shutdown(c->tls);
			shutdown(c->fd, SHUT_WR);
			c->shut_wr = true;
		}
		if (c->rx_eof)
			conn_kill(c);
	}
	for (struct sl_ofconn *c = mgr->conns; c; c = c->next)
		if (c->state == CS_CONNECTED && c->rx_len >= SL_OFCONN_HEADER_LEN && !rx_paused(c))
			rx_parse(c);
	notify_writable(mgr);
	retire(mgr);
	return ret;
}

unsigned
sl_ofconn_mgr_n_connected(const struct sl_ofconn_mgr *mgr)
{
	unsigned n = 0;

	for (const struct sl_ofconn *c = mgr->conns; c; c = c->next)
		n += c->state == CS_CONNECTED;
	return n;
}

unsigned
sl_ofconn_mgr_n_controllers(const struct sl_ofconn_mgr *mgr)
{
	unsigned n = 0;

	for (const struct sl_ofconn *c = mgr->conns; c; c = c->next)
		n += c->state == CS_CONNECTED && !c->target->passive;
	return n;
}

/* ------------------------------------------------------------------------- */
/* Connection accessors and output.                                          */
/* ------------------------------------------------------------------------- */

int
sl_ofconn_send(struct sl_ofconn *c, const void *msg, size_t len)
{
	int ret;

	if (len < SL_OFCONN_HEADER_LEN || len > SL_OFCONN_MSG_MAX ||
	    get_be16((const uint8_t *)msg + 2) != len)
		return -EINVAL;
	if (c->state != CS_CONNECTED)
		return -ENOTCONN;
	ret = tx_queue(c, msg, len);
	if (ret)
		return ret;
	/* Write now only if nothing was queued before: otherwise the socket is full. */
	if (c->tx_len == len)
		tx_flush(c);
	return 0;
}

bool
sl_ofconn_tx_congested(const struct sl_ofconn *c)
{
	return c->tx_len > c->mgr->p.tx_low_water;
}

void
sl_ofconn_close(struct sl_ofconn *c)
{
	if (c->state >= CS_CLOSING)
		return;
	mlog(c->mgr, SL_OFCONN_LOG_INFO, false, "%s: closing", c->name);
	conn_start_close(c);
}

uint32_t
sl_ofconn_next_xid(struct sl_ofconn *c)
{
	if (++c->xid == 0)
		c->xid = 1;
	return c->xid;
}

const char *
sl_ofconn_name(const struct sl_ofconn *c)
{
	return c->name;
}

bool
sl_ofconn_is_passive(const struct sl_ofconn *c)
{
	return c->target->passive;
}

void *
sl_ofconn_get_user(const struct sl_ofconn *c)
{
	return c->user;
}

void
sl_ofconn_set_user(struct sl_ofconn *c, void *user)
{
	c->user = user;
}

void
sl_ofconn_stats(const struct sl_ofconn *c, struct sl_ofconn_stats *st)
{
	*st = c->st;
	st->connected_at = c->connected_ms ? c->connected_at : 0;
	st->uptime_ms = c->connected_ms ? now_ms() - c->connected_ms : 0;
	st->tx_pending = c->tx_len;
}
