/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofconn unit tests: real loopback and unix sockets, with a hand-written
 * OpenFlow peer in this file.  Everything runs on one thread: the helpers
 * interleave sl_ofconn_mgr_poll() with non-blocking peer reads and writes.
 * Timing checks use generous bounds only (no tight asserts).  The TLS tests
 * make their CA and certificates with the openssl command in a temporary
 * directory; their peer speaks TLS through src/tls (or raw OpenSSL, for a
 * client without a certificate).
 */
#include "ofconn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "../core/sl_test.h"
#include "../tls/tls.h"

/* ------------------------------------------------------------------------- */
/* Switch-side callbacks recording what happened.                            */
/* ------------------------------------------------------------------------- */

struct rec {
	unsigned n_connect;
	unsigned n_disconnect;
	unsigned n_writable;
	unsigned n_msgs;
	struct sl_ofconn *last; /* Last connection that connected. */
	uint8_t *msgs;          /* Concatenated on_message payloads. */
	size_t msgs_len, msgs_cap;
	bool echo_back; /* on_message sends each message back. */
	bool verbose;   /* Print log lines. */
	unsigned n_log_warn;
	char last_warn[512];   /* Last WARN or ERR line. */
	unsigned backoffs[16]; /* Reconnect delays the log announced, in order. */
	unsigned n_backoffs;
	unsigned n_negotiated_13; /* "negotiated OpenFlow version 0x04" log lines. */
	char names[8][128];       /* sl_ofconn_name() of the connections, in connect order. */
	unsigned n_names;
};

static void
on_connect(struct sl_ofconn *c, void *arg)
{
	struct rec *r = arg;

	r->n_connect++;
	r->last = c;
	/* The channel logs the version it negotiated just before on_connect. */
	CHECK(r->n_negotiated_13 == r->n_connect, "version 0x04 negotiated (%u of %u)",
	      r->n_negotiated_13, r->n_connect);
	if (r->n_names < SL_ARRAY_SIZE(r->names))
		snprintf(r->names[r->n_names++], sizeof r->names[0], "%s", sl_ofconn_name(c));
	sl_ofconn_set_user(c, r);
}

static void
on_disconnect(struct sl_ofconn *c, void *arg)
{
	struct rec *r = arg;

	CHECK(sl_ofconn_get_user(c) == r, "user pointer kept");
	r->n_disconnect++;
	if (r->last == c)
		r->last = NULL;
}

static void
on_writable(struct sl_ofconn *c, void *arg)
{
	struct rec *r = arg;

	(void)c;
	r->n_writable++;
}

static void
on_message(struct sl_ofconn *c, const uint8_t *msg, size_t len, void *arg)
{
	struct rec *r = arg;

	r->n_msgs++;
	if (r->msgs_len + len > r->msgs_cap) {
		r->msgs_cap = (r->msgs_len + len) * 2;
		r->msgs = realloc(r->msgs, r->msgs_cap);
	}
	memcpy(r->msgs + r->msgs_len, msg, len);
	r->msgs_len += len;
	if (r->echo_back)
		CHECK(sl_ofconn_send(c, msg, len) == 0, "echo back");
}

static void
on_log(int level, const char *msg, void *arg)
{
	struct rec *r = arg;

	const char *next = strstr(msg, "next connection attempt in ");
	if (strstr(msg, "negotiated OpenFlow version 0x04"))
		r->n_negotiated_13++;
	if (level <= SL_OFCONN_LOG_WARN) {
		r->n_log_warn++;
		snprintf(r->last_warn, sizeof r->last_warn, "%s", msg);
	}
	if (next && r->n_backoffs < SL_ARRAY_SIZE(r->backoffs))
		r->backoffs[r->n_backoffs++] =
			(unsigned)atoi(next + strlen("next connection attempt in "));
	if (r->verbose)
		fprintf(stderr, "  log[%d] %s\n", level, msg);
}

static void
rec_reset(struct rec *r)
{
	free(r->msgs);
	memset(r, 0, sizeof *r);
	r->verbose = getenv("OFCONN_VERBOSE") != NULL;
}

/* Bytes queued on @c and not yet written, as its counters report them. */
static size_t
tx_pending(const struct sl_ofconn *c)
{
	struct sl_ofconn_stats st;

	sl_ofconn_stats(c, &st);
	return st.tx_pending;
}

static struct sl_ofconn_mgr *
mgr_new(struct rec *r, struct sl_ofconn_params *p)
{
	struct sl_ofconn_params def;
	struct sl_ofconn_mgr *mgr = NULL;

	if (!p) {
		sl_ofconn_params_init(&def);
		p = &def;
	}
	p->on_connect = on_connect;
	p->on_disconnect = on_disconnect;
	p->on_message = on_message;
	p->on_writable = on_writable;
	p->log = on_log;
	p->arg = r;
	CHECK(sl_ofconn_mgr_create(p, &mgr) == 0, "create");
	return mgr;
}

static uint64_t
ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------------- */
/* The hand-written peer.                                                    */
/* ------------------------------------------------------------------------- */

struct peer {
	int fd;
	struct sl_tls *tls; /* Set: the peer speaks TLS (peer_tls_start). */
	uint8_t buf[1 << 17];
	size_t len;
	bool eof;
};

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static size_t
mk_msg(uint8_t *buf, uint8_t version, uint8_t type, uint32_t xid, const void *body, size_t body_len)
{
	buf[0] = version;
	buf[1] = type;
	put16(buf + 2, (uint16_t)(8 + body_len));
	put32(buf + 4, xid);
	if (body_len)
		memmove(buf + 8, body, body_len);
	return 8 + body_len;
}

static void
set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void
peer_init(struct peer *pe, int fd)
{
	pe->fd = fd;
	pe->tls = NULL;
	pe->len = 0;
	pe->eof = false;
	if (fd >= 0)
		set_nonblock(fd);
}

static int
tcp_connect(int port, int rcvbuf)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	if (connect(fd, (struct sockaddr *)&sin, sizeof sin) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
unix_connect(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void
peer_close(struct peer *pe)
{
	sl_tls_close(pe->tls);
	pe->tls = NULL;
	if (pe->fd >= 0)
		close(pe->fd);
	pe->fd = -1;
}

/* Pull whatever the socket has, without blocking. */
static void
peer_fill(struct peer *pe)
{
	while (!pe->eof && pe->len < sizeof pe->buf) {
		ssize_t n;

		if (pe->tls) {
			n = sl_tls_recv(pe->tls, pe->buf + pe->len, sizeof pe->buf - pe->len);
			if (n < 0)
				errno = (int)-n;
		} else {
			n = recv(pe->fd, pe->buf + pe->len, sizeof pe->buf - pe->len, MSG_DONTWAIT);
		}
		if (n > 0)
			pe->len += (size_t)n;
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			pe->eof = true;
		else
			break;
	}
}

/* Write everything, polling the manager while the socket is full. */
static void
peer_send(struct sl_ofconn_mgr *mgr, struct peer *pe, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t end = ms_now() + 5000;

	while (len && ms_now() < end) {
		ssize_t n;

		if (pe->tls) {
			n = sl_tls_send(pe->tls, p, len);
			if (n < 0)
				errno = (int)-n;
		} else {
			n = send(pe->fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		}
		if (n > 0) {
			p += n;
			len -= (size_t)n;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			break;
		} else if (mgr) {
			sl_ofconn_mgr_poll(mgr, 1);
		}
	}
	CHECK(len == 0, "peer_send incomplete, %zu left", len);
}

/*
 * Next message the switch sent, into @out (if not NULL); returns its length,
 * 0 on EOF, -1 on timeout.  Polls the manager meanwhile.
 */
static int
peer_recv(struct sl_ofconn_mgr *mgr, struct peer *pe, uint8_t *out, int timeout_ms)
{
	uint64_t end = ms_now() + (uint64_t)timeout_ms;

	for (;;) {
		peer_fill(pe);
		if (pe->len >= 8) {
			size_t len = get16(pe->buf + 2);

			if (len >= 8 && pe->len >= len) {
				if (out)
					memcpy(out, pe->buf, len);
				memmove(pe->buf, pe->buf + len, pe->len - len);
				pe->len -= len;
				return (int)len;
			}
		}
		if (pe->eof)
			return 0;
		if (ms_now() >= end)
			return -1;
		if (mgr)
			sl_ofconn_mgr_poll(mgr, 5);
		else
			usleep(1000);
	}
}

/* Poll the manager until *@counter reaches @target or @timeout_ms passes. */
static bool
pump_until(struct sl_ofconn_mgr *mgr, const unsigned *counter, unsigned target, int timeout_ms)
{
	uint64_t end = ms_now() + (uint64_t)timeout_ms;

	while (*counter < target && ms_now() < end)
		sl_ofconn_mgr_poll(mgr, 10);
	return *counter >= target;
}

static void
pump_for(struct sl_ofconn_mgr *mgr, int ms)
{
	uint64_t end = ms_now() + (uint64_t)ms;

	while (ms_now() < end)
		sl_ofconn_mgr_poll(mgr, (int)(end - ms_now()));
}

/* Check the switch's HELLO: version 4, one bitmap element with only bit 4. */
static void
expect_switch_hello(struct sl_ofconn_mgr *mgr, struct peer *pe)
{
	uint8_t m[65536];
	int n = peer_recv(mgr, pe, m, 2000);

	CHECK(n == 16, "switch hello len %d", n);
	if (n != 16)
		return;
	CHECK(m[0] == 0x04 && m[1] == 0, "hello header %02x %02x", m[0], m[1]);
	CHECK(get16(m + 8) == 1 && get16(m + 10) == 8, "bitmap element %u/%u", get16(m + 8),
	      get16(m + 10));
	CHECK(get32(m + 12) == 0x10, "bitmap 0x%x", get32(m + 12));
}

/* Send a HELLO; @bitmap 0 means no bitmap element. */
static void
peer_hello(struct sl_ofconn_mgr *mgr, struct peer *pe, uint8_t version, uint32_t bitmap)
{
	uint8_t m[16], el[8];
	size_t len;

	put16(el, 1);
	put16(el + 2, 8);
	put32(el + 4, bitmap);
	len = mk_msg(m, version, 0, 7, el, bitmap ? sizeof el : 0);
	peer_send(mgr, pe, m, len);
}

/* Listen on ptcp:0:127.0.0.1, connect a peer, do the full HELLO exchange. */
static int
setup_listener(struct sl_ofconn_mgr *mgr)
{
	char err[256];
	int idx = sl_ofconn_mgr_add_target(mgr, "ptcp:0:127.0.0.1", err, sizeof err);
	int port;

	CHECK(idx >= 0, "ptcp: %s", err);
	port = sl_ofconn_mgr_listen_port(mgr, idx);
	CHECK(port > 0, "listen port %d", port);
	return port;
}

static bool
connect_peer(struct sl_ofconn_mgr *mgr, struct rec *r, struct peer *pe, int port)
{
	unsigned want = r->n_connect + 1;

	peer_init(pe, tcp_connect(port, 0));
	CHECK(pe->fd >= 0, "connect");
	expect_switch_hello(mgr, pe);
	peer_hello(mgr, pe, 0x04, 0x10);
	return pump_until(mgr, &r->n_connect, want, 2000);
}

/* ------------------------------------------------------------------------- */
/* Tests.                                                                    */
/* ------------------------------------------------------------------------- */

static void
test_bad_targets(void)
{
	static const struct {
		const char *target;
		const char *needle;
	} cases[] = {
		{"foo", "prefix"},
		{"udp:1.2.3.4:5", "unknown type 'udp'"},
		{"tcp:", "missing host"},
		{"tcp:1.2.3.4:", "missing port"},
		{"tcp:foo..bar", "'foo..bar' is neither an IP address nor a host name"},
		{"tcp:1.2.3.4:99999", "port '99999' out of range"},
		{"tcp:1.2.3.4:0", "out of range"},
		{"tcp:1.2.3.4:66x", "out of range"},
		{"tcp:::1:6653", "brackets"},
		{"tcp:[::1", "missing ']'"},
		{"ptcp:", "missing port"},
		{"ptcp:99999", "port '99999' out of range"},
		{"ptcp:-1", "out of range"},
		{"ptcp:6653:1.2.3", "'1.2.3' is not an IP address"},
		{"ptcp:6653:", "missing address"},
		{"punix:", "missing path"},
		{"unix:", "missing path"},
	};
	struct rec r = {0};
	struct sl_ofconn_mgr *mgr;
	char err[256], busy[192], path[128];
	int idx, port;

	rec_reset(&r);
	mgr = mgr_new(&r, NULL);
	for (size_t i = 0; i < SL_ARRAY_SIZE(cases); i++) {
		int ret = sl_ofconn_mgr_add_target(mgr, cases[i].target, err, sizeof err);
		char quoted[64];

		snprintf(quoted, sizeof quoted, "'%s'", cases[i].target);
		CHECK(ret == -EINVAL, "%s: ret %d", cases[i].target, ret);
		CHECK(strstr(err, cases[i].needle) && strstr(err, quoted), "%s: err '%s'",
		      cases[i].target, err);
	}

	/* A port already bound gives the bind error with strerror. */
	idx = sl_ofconn_mgr_add_target(mgr, "ptcp:0:127.0.0.1", err, sizeof err);
	port = sl_ofconn_mgr_listen_port(mgr, idx);
	snprintf(busy, sizeof busy, "ptcp:%d:127.0.0.1", port);
	CHECK(sl_ofconn_mgr_add_target(mgr, busy, err, sizeof err) == -EADDRINUSE, "busy");
	CHECK(strstr(err, "bind") && strstr(err, "Address already in use"), "err '%s'", err);
	CHECK(sl_ofconn_mgr_listen_port(mgr, idx + 1) == -ENOENT, "no such target");

	/* punix refuses to unlink something that is not a socket. */
	snprintf(path, sizeof path, "/tmp/sl_ofconn_test_%d.notsock", (int)getpid());
	fclose(fopen(path, "w"));
	snprintf(busy, sizeof busy, "punix:%s", path);
	CHECK(sl_ofconn_mgr_add_target(mgr, busy, err, sizeof err) == -EEXIST, "not a socket");
	CHECK(strstr(err, "not a socket"), "err '%s'", err);
	unlink(path);

	/* Valid forms parse (an active target just starts connecting). */
	CHECK(sl_ofconn_mgr_add_target(mgr, "tcp:127.0.0.1", err, sizeof err) >= 0, "%s", err);
	CHECK(sl_ofconn_mgr_add_target(mgr, "tcp:[::1]:1", err, sizeof err) >= 0, "%s", err);
	CHECK(sl_ofconn_mgr_add_target(mgr, "tcp:localhost:6653", err, sizeof err) >= 0, "%s", err);
	/* A host name resolves (this machine's own name is in its hosts file, as usual). */
	char host[256], tgt[300];
	if (gethostname(host, sizeof host) == 0) {
		snprintf(tgt, sizeof tgt, "tcp:%s:6653", host);
		int hr = sl_ofconn_mgr_add_target(mgr, tgt, err, sizeof err);
		CHECK(hr >= 0 || strstr(err, "resolves"), "%s: %d %s", tgt, hr, err);
	}
	idx = sl_ofconn_mgr_add_target(mgr, "tcp:127.0.0.1:1", err, sizeof err);
	CHECK(idx >= 0 && sl_ofconn_mgr_listen_port(mgr, idx) == -EINVAL, "not ptcp");

	/* Bad parameters. */
	struct sl_ofconn_params p;
	struct sl_ofconn_mgr *bad = NULL;

	sl_ofconn_params_init(&p);
	p.backoff_min_ms = 0;
	CHECK(sl_ofconn_mgr_create(&p, &bad) == -EINVAL, "backoff 0");
	sl_ofconn_params_init(&p);
	p.tx_low_water = p.max_tx_bytes;
	CHECK(sl_ofconn_mgr_create(&p, &bad) == -EINVAL, "low water");

	sl_ofconn_mgr_destroy(mgr);
	sl_ofconn_mgr_destroy(NULL);
	rec_reset(&r);
}

static void
test_hello(void)
{
	/* Peer hello variants that must negotiate 1.3. */
	static const struct {
		uint8_t version;
		uint32_t bitmap;
	} ok[] = {
		{0x04, 0x10}, /* 1.3 with bitmap */
		{0x06, 0x52}, /* 1.0, 1.3, 1.5 with bitmap: highest common is 1.3 */
		{0x04, 0},    /* 1.3, no bitmap */
		{0x06, 0},    /* 1.5, no bitmap: min(ours, theirs) = 1.3 */
	};
	struct rec r;
	struct sl_ofconn_mgr *mgr;
	int port;

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	mgr = mgr_new(&r, NULL);
	port = setup_listener(mgr);
	for (size_t i = 0; i < SL_ARRAY_SIZE(ok); i++) {
		struct peer *pe = calloc(1, sizeof *pe);
		struct sl_ofconn_stats st;

		peer_init(pe, tcp_connect(port, 0));
		expect_switch_hello(mgr, pe);
		CHECK(sl_ofconn_mgr_n_connected(mgr) == 0, "not connected before hello");
		peer_hello(mgr, pe, ok[i].version, ok[i].bitmap);
		CHECK(pump_until(mgr, &r.n_connect, (unsigned)i + 1, 2000), "case %zu connect", i);
		CHECK(r.last && sl_ofconn_is_passive(r.last), "passive");
		CHECK(r.last && !strncmp(sl_ofconn_name(r.last), "tcp:127.0.0.1:", 14), "name %s",
		      r.last ? sl_ofconn_name(r.last) : "-");
		CHECK(sl_ofconn_mgr_n_connected(mgr) == 1, "n_connected");
		CHECK(sl_ofconn_mgr_n_controllers(mgr) == 0, "tools are not controllers");
		if (r.last) {
			uint32_t x1 = sl_ofconn_next_xid(r.last), x2 = sl_ofconn_next_xid(r.last);

			CHECK(x1 && x2 && x1 != x2, "xids %u %u", x1, x2);
			sl_ofconn_stats(r.last, &st);
			CHECK(st.rx_msgs == 1 && st.tx_msgs == 1 && st.connected_at > 0,
			      "stats rx %lu tx %lu", (unsigned long)st.rx_msgs,
			      (unsigned long)st.tx_msgs);
		}
		peer_close(pe);
		CHECK(pump_until(mgr, &r.n_disconnect, (unsigned)i + 1, 2000), "case %zu disc", i);
		CHECK(sl_ofconn_mgr_n_connected(mgr) == 0, "n_connected after close");
		free(pe);
	}
	sl_ofconn_mgr_destroy(mgr);
	rec_reset(&r);
}

static void
test_hello_failures(void)
{
	static const struct {
		uint8_t version;
		uint32_t bitmap;
		uint8_t err_version;
		const char *text;
	} bad[] = {
		{0x01, 0, 0x01, "no later than version 0x01"},
		{0x03, 0x0e, 0x03, "0x01, 0x02, 0x03"},
		{0x06, 0x60, 0x06, "0x05, 0x06"},
	};
	struct rec r;
	struct sl_ofconn_mgr *mgr;
	uint8_t m[65536];
	int port, n;

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	mgr = mgr_new(&r, NULL);
	port = setup_listener(mgr);
	for (size_t i = 0; i < SL_ARRAY_SIZE(bad); i++) {
		struct peer *pe = calloc(1, sizeof *pe);

		peer_init(pe, tcp_connect(port, 0));
		expect_switch_hello(mgr, pe);
		peer_hello(mgr, pe, bad[i].version, bad[i].bitmap);
		n = peer_recv(mgr, pe, m, 2000);
		CHECK(n > 12 && m[1] == 1 && get16(m + 8) == 0 && get16(m + 10) == 0,
		      "case %zu: HELLO_FAILED/INCOMPATIBLE (n %d type %u)", i, n, m[1]);
		CHECK(m[0] == bad[i].err_version, "error version %02x", m[0]);
		if (n > 12) {
			m[n] = '\0';
			CHECK(strstr((char *)m + 12, bad[i].text), "reason '%s'", (char *)m + 12);
		}
		CHECK(peer_recv(mgr, pe, NULL, 2000) == 0, "case %zu: closed", i);
		peer_close(pe);
		free(pe);
	}

	/* Anything but HELLO first: HELLO_FAILED and close. */
	struct peer *pe = calloc(1, sizeof *pe);

	peer_init(pe, tcp_connect(port, 0));
	expect_switch_hello(mgr, pe);
	n = (int)mk_msg(m, 0x04, 5 /* FEATURES_REQUEST */, 99, NULL, 0);
	peer_send(mgr, pe, m, (size_t)n);
	n = peer_recv(mgr, pe, m, 2000);
	CHECK(n > 12 && m[1] == 1 && get16(m + 8) == 0 && get32(m + 4) == 99,
	      "non-hello first: n %d type %u", n, m[1]);
	CHECK(peer_recv(mgr, pe, NULL, 2000) == 0, "closed");
	peer_close(pe);
	free(pe);

	/* A HELLO element of length 0 (below its own header): HELLO_FAILED, not accepted. */
	static const uint8_t elems[][8] = {
		{0, 1, 0, 0, 0, 0, 0, 0},     /* length 0 */
		{0, 1, 0, 64, 0, 0, 0, 0x10}, /* length past the message */
	};
	for (size_t i = 0; i < SL_ARRAY_SIZE(elems); i++) {
		pe = calloc(1, sizeof *pe);
		peer_init(pe, tcp_connect(port, 0));
		expect_switch_hello(mgr, pe);
		n = (int)mk_msg(m, 0x04, 0 /* HELLO */, 7, elems[i], 8);
		peer_send(mgr, pe, m, (size_t)n);
		n = peer_recv(mgr, pe, m, 2000);
		CHECK(n > 12 && m[1] == 1 && get16(m + 8) == 0 && get16(m + 10) == 0,
		      "malformed element %zu: HELLO_FAILED/INCOMPATIBLE (n %d type %u)", i, n,
		      m[1]);
		if (n > 12) {
			m[n] = '\0';
			CHECK(strstr((char *)m + 12, "Malformed hello element"), "reason '%s'",
			      (char *)m + 12);
		}
		CHECK(peer_recv(mgr, pe, NULL, 2000) == 0, "malformed element %zu: closed", i);
		peer_close(pe);
		free(pe);
	}

	/* An ERROR before HELLO (the peer refusing us) is logged, not answered. */
	pe = calloc(1, sizeof *pe);
	peer_init(pe, tcp_connect(port, 0));
	expect_switch_hello(mgr, pe);
	n = (int)mk_msg(m, 0x01, 1, 5, "\0\0\0\0no\ncommon\x1b", 14);
	peer_send(mgr, pe, m, (size_t)n);
	CHECK(peer_recv(mgr, pe, m, 2000) == 0, "error before hello: closed without reply");
	peer_close(pe);
	free(pe);

	pump_for(mgr, 50);
	CHECK(r.n_connect == 0 && r.n_disconnect == 0, "no callbacks for failed hellos (%u %u)",
	      r.n_connect, r.n_disconnect);
	sl_ofconn_mgr_destroy(mgr);
	rec_reset(&r);
}

static void
test_echo_and_framing(void)
{
	struct rec r;
	struct sl_ofconn_mgr *mgr;
	struct peer *pe = calloc(1, sizeof *pe);
	uint8_t m[65536], big[65535], *all;
	size_t all_len = 0;
	int port, n;

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	mgr = mgr_new(&r, NULL);
	port = setup_listener(mgr);
	CHECK(connect_peer(mgr, &r, pe, port), "connect");

	/* ECHO_REQUEST: same xid and payload back, not given to on_message. */
	n = (int)mk_msg(m, 0x04, 2, 0x12345678, "abcdef", 6);
	peer_send(mgr, pe, m, (size_t)n);
	n = peer_recv(mgr, pe, m, 2000);
	CHECK(n == 14 && m[0] == 4 && m[1] == 3 && get32(m + 4) == 0x12345678 &&
		      !memcmp(m + 8, "abcdef", 6),
	      "echo reply n %d", n);
	CHECK(r.n_msgs == 0, "echo not delivered");

	/* Three messages, one of them maximal, written one byte at a time. */
	all = malloc(3 * 65536);
	for (size_t i = 0; i < sizeof big - 8; i++)
		big[8 + i] = (uint8_t)(i * 7);
	all_len += mk_msg(all + all_len, 0x04, 18, 1, "x", 1);
	all_len += mk_msg(all + all_len, 0x04, 18, 2, big + 8, sizeof big - 8);
	all_len += mk_msg(all + all_len, 0x04, 18, 3, NULL, 0);
	for (size_t i = 0; i < 200; i++) {
		peer_send(mgr, pe, all + i, 1);
		sl_ofconn_mgr_poll(mgr, 0);
	}
	peer_send(mgr, pe, all + 200, all_len - 200);
	CHECK(pump_until(mgr, &r.n_msgs, 3, 2000), "3 split messages (%u)", r.n_msgs);
	CHECK(r.msgs_len == all_len && !memcmp(r.msgs, all, all_len), "split intact");

	/* 100 messages of varied sizes in one write. */
	r.n_msgs = 0;
	r.msgs_len = 0;
	all_len = 0;
	for (uint32_t i = 0; i < 100; i++)
		all_len += mk_msg(all + all_len, 0x04, 18, i, big + 8, i * 13 % 300);
	peer_send(mgr, pe, all, all_len);
	CHECK(pump_until(mgr, &r.n_msgs, 100, 2000), "100 batched (%u)", r.n_msgs);
	CHECK(r.msgs_len == all_len && !memcmp(r.msgs, all, all_len), "batch intact, in order");

	/* Wrong version after HELLO: BAD_VERSION with 64 bytes, connection stays. */
	r.n_msgs = 0;
	n = (int)mk_msg(m, 0x01, 18, 77, big + 8, 100);
	peer_send(mgr, pe, m, (size_t)n);
	n = peer_recv(mgr, pe, m, 2000);
	CHECK(n == 12 + 64 && m[1] == 1 && get16(m + 8) == 1 && get16(m + 10) == 0 &&
		      get32(m + 4) == 77 && m[12] == 0x01 && !memcmp(m + 20, big + 8, 56),
	      "BAD_VERSION n %d", n);
	n = (int)mk_msg(m, 0x04, 18, 78, NULL, 0);
	peer_send(mgr, pe, m, (size_t)n);
	CHECK(pump_until(mgr, &r.n_msgs, 1, 2000), "still open after bad version");
	CHECK(r.n_disconnect == 0, "no disconnect");

	/* An ERROR of another version is delivered, not answered. */
	n = (int)mk_msg(m, 0x01, 1, 79, "\0\1\0\2", 4);
	peer_send(mgr, pe, m, (size_t)n);
	CHECK(pump_until(mgr, &r.n_msgs, 2, 2000), "error delivered");

	/* Length < 8: BAD_LEN quoting the bytes, then close. */
	n = (int)mk_msg(m, 0x04, 18, 80, NULL, 0);
	put16(m + 2, 4);
	peer_send(mgr, pe, m, (size_t)n);
	n = peer_recv(mgr, pe, m, 2000);
	CHECK(n == 20 && m[1] == 1 && get16(m + 8) == 1 && get16(m + 10) == 6 &&
		      get32(m + 4) == 80 && get16(m + 14) == 4,
	      "BAD_LEN n %d", n);
	CHECK(peer_recv(mgr, pe, NULL, 2000) == 0, "closed after bad len");
	CHECK(pump_until(mgr, &r.n_disconnect, 1, 2000), "disconnect callback");
	peer_close(pe);
	free(all);
	free(pe);
	sl_ofconn_mgr_destroy(mgr);
	rec_reset(&r);
}

/* A loopback port nothing listens on yet (found by binding, then closed). */
static int
closed_port(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t sl = sizeof sin;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	bind(fd, (struct sockaddr *)&sin, sizeof sin);
	getsockname(fd, (struct sockaddr *)&sin, &sl);
	close(fd);
	return ntohs(sin.sin_port);
}

/* Start listening on loopback @port (non-blocking), as a controller that comes up late. */
static int
listen_on(int port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	CHECK(bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0, "rebind %s", strerror(errno));
	listen(fd, 4);
	set_nonblock(fd);
	return fd;
}

/* Poll @mgr until the switch connects to listener @lfd or @ms pass; the fd or -1. */
static int
accept_within(struct sl_ofconn_mgr *mgr, int lfd, uint64_t ms)
{
	uint64_t t0 = ms_now();
	int fd = -1;

	while (fd < 0 && ms_now() - t0 < ms) {
		sl_ofconn_mgr_poll(mgr, 10);
		fd = accept(lfd, NULL, NULL);
	}
	return fd;
}

static void
test_reconnect(void)
{
	struct rec r;
	struct sl_ofconn_params p;
	struct sl_ofconn_mgr *mgr;
	struct peer *pe = calloc(1, sizeof *pe);
	char target[64], err[256];
	int lfd, port, fd;

	/* A free port, left closed so the first attempts are refused. */
	port = closed_port();

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	sl_ofconn_params_init(&p);
	mgr = mgr_new(&r, &p);
	snprintf(target, sizeof target, "tcp:127.0.0.1:%d", port);
	CHECK(sl_ofconn_mgr_add_target(mgr, target, err, sizeof err) == 0, "%s", err);
	pump_for(mgr, 300);
	CHECK(sl_ofconn_mgr_n_controllers(mgr) == 0, "nothing to connect to yet");

	/* Open the controller late; the switch must find it within a generous bound. */
	lfd = listen_on(port);
	fd = accept_within(mgr, lfd, 3000);
	CHECK(fd >= 0, "switch reconnected within 3 s");
	peer_init(pe, fd);
	expect_switch_hello(mgr, pe);
	peer_hello(mgr, pe, 0x04, 0);
	CHECK(pump_until(mgr, &r.n_connect, 1, 2000), "controller connected");
	CHECK(sl_ofconn_mgr_n_controllers(mgr) == 1, "one controller");
	CHECK(r.last && !sl_ofconn_is_passive(r.last), "active");
	snprintf(target, sizeof target, "tcp:127.0.0.1:%d", port);
	CHECK(r.last && !strcmp(sl_ofconn_name(r.last), target), "name %s",
	      r.last ? sl_ofconn_name(r.last) : "-");

	/* Controller drops: the switch comes back on its own. */
	peer_close(pe);
	CHECK(pump_until(mgr, &r.n_disconnect, 1, 2000), "disconnect seen");
	CHECK(sl_ofconn_mgr_n_controllers(mgr) == 0, "no controller");
	fd = accept_within(mgr, lfd, 3000);
	CHECK(fd >= 0, "reconnected after drop");
	peer_init(pe, fd);
	expect_switch_hello(mgr, pe);
	peer_hello(mgr, pe, 0x04, 0x10);
	CHECK(pump_until(mgr, &r.n_connect, 2, 2000), "second connect");

	/* Graceful close by the switch: queued output arrives, then EOF, then callback. */
	uint8_t m[64];
	size_t n = mk_msg(m, 0x04, 10, 5, "bye", 3);

	CHECK(r.last && sl_ofconn_send(r.last, m, n) == 0, "send");
	if (r.last)
		sl_ofconn_close(r.last);
	CHECK(sl_ofconn_mgr_n_controllers(mgr) == 0, "closing is not connected");
	CHECK(peer_recv(mgr, pe, m, 2000) == (int)n && get32(m + 4) == 5, "last message");
	CHECK(peer_recv(mgr, pe, NULL, 2000) == 0, "then EOF");
	CHECK(r.n_disconnect == 2, "disconnect after close (%u)", r.n_disconnect);
	peer_close(pe);
	close(lfd);
	sl_ofconn_mgr_destroy(mgr);
	free(pe);
	rec_reset(&r);
}

/*
 * A short-lived but successful connection resets the backoff: after failed
 * attempts have pushed it past 800 ms, a controller that accepts, says HELLO
 * and drops at once is tried again after backoff_min_ms, not after a doubled
 * backoff.
 */
static void
test_backoff_resets(void)
{
	struct rec r;
	struct sl_ofconn_params p;
	struct sl_ofconn_mgr *mgr;
	struct peer *pe = calloc(1, sizeof *pe);
	char target[64], err[256];
	int lfd, port = closed_port(), fd;
	uint64_t t0, gap;

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	sl_ofconn_params_init(&p); /* backoff 100 ms doubling to 8 s */
	mgr = mgr_new(&r, &p);
	snprintf(target, sizeof target, "tcp:127.0.0.1:%d", port);
	CHECK(sl_ofconn_mgr_add_target(mgr, target, err, sizeof err) == 0, "%s", err);
	pump_for(mgr, 1700); /* refused at 0, 0.1, 0.3, 0.7, 1.5 s: the backoff is now 1.6 s */

	lfd = listen_on(port);
	fd = accept_within(mgr, lfd, 5000);
	CHECK(fd >= 0, "connected once the controller listens");
	peer_init(pe, fd);
	expect_switch_hello(mgr, pe);
	peer_hello(mgr, pe, 0x04, 0);
	CHECK(pump_until(mgr, &r.n_connect, 1, 2000), "controller connected");

	/* It drops at once: the next attempt comes after the minimum, not 3.2 s. */
	peer_close(pe);
	CHECK(pump_until(mgr, &r.n_disconnect, 1, 2000), "disconnect seen");
	t0 = ms_now();
	fd = accept_within(mgr, lfd, 5000);
	gap = ms_now() - t0;
	CHECK(fd >= 0 && gap < 1000, "reconnected after %llu ms (backoff reset to 100 ms)",
	      (unsigned long long)gap);
	if (fd >= 0)
		close(fd);
	close(lfd);
	sl_ofconn_mgr_destroy(mgr);
	free(pe);
	rec_reset(&r);
}

static void
test_probe(void)
{
	struct rec r;
	struct sl_ofconn_params p;
	struct sl_ofconn_mgr *mgr;
	struct peer *silent = calloc(1, sizeof *silent), *live = calloc(1, sizeof *live);
	uint8_t m[65536];
	bool got_probe = false;
	uint64_t t0;
	int port, n;

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	sl_ofconn_params_init(&p);
	p.probe_interval_ms = 100;
	mgr = mgr_new(&r, &p);
	port = setup_listener(mgr);
	CHECK(connect_peer(mgr, &r, silent, port), "silent connects");
	CHECK(connect_peer(mgr, &r, live, port), "live connects");

	/* The live peer answers probes; the silent one never does. */
	t0 = ms_now();
	while (r.n_disconnect < 1 && ms_now() - t0 < 2000) {
		sl_ofconn_mgr_poll(mgr, 10);
		while ((n = peer_recv(NULL, live, m, 0)) > 0) {
			if (m[1] == 2) {
				m[1] = 3;
				peer_send(mgr, live, m, (size_t)n);
			}
		}
		peer_fill(silent);
		if (silent->len >= 8 && silent->buf[1] == 2)
			got_probe = true;
	}
	CHECK(got_probe, "silent peer saw an ECHO_REQUEST");
	CHECK(r.n_disconnect == 1, "silent peer dropped within 2 s");
	CHECK(ms_now() - t0 >= 150, "not before two intervals (%lu ms)",
	      (unsigned long)(ms_now() - t0));
	CHECK(peer_recv(NULL, silent, NULL, 1000) == 0 || silent->eof, "silent sees EOF");
	CHECK(sl_ofconn_mgr_n_connected(mgr) == 1, "live peer still up");
	CHECK(r.n_log_warn >= 1, "drop was logged");

	/* Keep answering for a few more intervals: still connected. */
	t0 = ms_now();
	while (ms_now() - t0 < 400) {
		sl_ofconn_mgr_poll(mgr, 10);
		while ((n = peer_recv(NULL, live, m, 0)) > 0) {
			if (m[1] == 2) {
				m[1] = 3;
				peer_send(mgr, live, m, (size_t)n);
			}
		}
	}
	CHECK(r.n_disconnect == 1 && sl_ofconn_mgr_n_connected(mgr) == 1, "live stays");
	peer_close(silent);
	peer_close(live);
	sl_ofconn_mgr_destroy(mgr);
	CHECK(r.n_disconnect == 2, "destroy fires on_disconnect");
	free(silent);
	free(live);
	rec_reset(&r);
}

static void
test_unix(void)
{
	struct rec r;
	struct sl_ofconn_mgr *mgr;
	struct peer *pe = calloc(1, sizeof *pe);
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char path[108], path2[108], target[160], err[256];
	struct stat sb;
	int fd, lfd;

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	mgr = mgr_new(&r, NULL);

	/* A stale socket file left by a dead process must be replaced. */
	snprintf(path, sizeof path, "/tmp/sl_ofconn_test_%d.sock", (int)getpid());
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(bind(fd, (struct sockaddr *)&sun, sizeof sun) == 0, "stale bind");
	close(fd);
	snprintf(target, sizeof target, "punix:%s", path);
	CHECK(sl_ofconn_mgr_add_target(mgr, target, err, sizeof err) == 0, "%s", err);
	CHECK(sl_ofconn_mgr_listen_port(mgr, 0) == -EINVAL, "punix has no port");

	peer_init(pe, unix_connect(path));
	CHECK(pe->fd >= 0, "unix connect");
	expect_switch_hello(mgr, pe);
	peer_hello(mgr, pe, 0x04, 0x10);
	CHECK(pump_until(mgr, &r.n_connect, 1, 2000), "punix connected");
	CHECK(r.last && !strncmp(sl_ofconn_name(r.last), "punix:", 6) &&
		      sl_ofconn_is_passive(r.last),
	      "name %s", r.last ? sl_ofconn_name(r.last) : "-");
	peer_close(pe);
	CHECK(pump_until(mgr, &r.n_disconnect, 1, 2000), "punix disconnected");

	/* unix: active target to a socket the test listens on. */
	snprintf(path2, sizeof path2, "/tmp/sl_ofconn_test_%d.ctl", (int)getpid());
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path2);
	unlink(path2);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(bind(lfd, (struct sockaddr *)&sun, sizeof sun) == 0, "bind ctl");
	listen(lfd, 4);
	snprintf(target, sizeof target, "unix:%s", path2);
	CHECK(sl_ofconn_mgr_add_target(mgr, target, err, sizeof err) == 1, "%s", err);
	set_nonblock(lfd);
	fd = -1;
	for (uint64_t t0 = ms_now(); fd < 0 && ms_now() - t0 < 2000;) {
		sl_ofconn_mgr_poll(mgr, 10);
		fd = accept(lfd, NULL, NULL);
	}
	peer_init(pe, fd);
	expect_switch_hello(mgr, pe);
	peer_hello(mgr, pe, 0x04, 0);
	CHECK(pump_until(mgr, &r.n_connect, 2, 2000), "unix connected");
	CHECK(sl_ofconn_mgr_n_controllers(mgr) == 1, "unix controller counted");
	peer_close(pe);
	close(lfd);
	unlink(path2);

	sl_ofconn_mgr_destroy(mgr);
	CHECK(stat(path, &sb) < 0, "punix socket removed on destroy");
	free(pe);
	rec_reset(&r);
}

/*
 * Removing targets at run time (a reloaded configuration): an active target
 * drops its connection and stops reconnecting, a punix: listener stops
 * accepting and its socket file goes; the other targets and the indices
 * carry on.
 */
static void
test_del_target(void)
{
	struct rec r;
	struct sl_ofconn_mgr *mgr;
	struct peer *pe = calloc(1, sizeof *pe);
	char path[108], target[160], err[256];
	struct stat sb;
	int lfd, fd, port, idx_active, idx_unix, idx_tcp;

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	mgr = mgr_new(&r, NULL);
	port = closed_port();
	lfd = listen_on(port);
	snprintf(target, sizeof target, "tcp:127.0.0.1:%d", port);
	idx_active = sl_ofconn_mgr_add_target(mgr, target, err, sizeof err);
	CHECK(idx_active == 0, "%s", err);
	snprintf(path, sizeof path, "/tmp/sl_ofconn_del_%d.sock", (int)getpid());
	snprintf(target, sizeof target, "punix:%s", path);
	idx_unix = sl_ofconn_mgr_add_target(mgr, target, err, sizeof err);
	CHECK(idx_unix == 1, "%s", err);
	idx_tcp = sl_ofconn_mgr_add_target(mgr, "ptcp:0:127.0.0.1", err, sizeof err);
	CHECK(idx_tcp == 2, "%s", err);
	CHECK(sl_ofconn_mgr_n_targets(mgr) == 3, "three targets");

	fd = accept_within(mgr, lfd, 3000);
	CHECK(fd >= 0, "the switch connected");
	peer_init(pe, fd);
	expect_switch_hello(mgr, pe);
	peer_hello(mgr, pe, 0x04, 0x10);
	CHECK(pump_until(mgr, &r.n_connect, 1, 2000), "controller connected");
	CHECK(sl_ofconn_mgr_n_controllers(mgr) == 1, "one controller");

	/* The active target goes: its connection ends, and no new attempt comes. */
	CHECK(sl_ofconn_mgr_del_target(mgr, idx_active) == 0, "del active");
	CHECK(sl_ofconn_mgr_del_target(mgr, idx_active) == -ENOENT, "twice");
	CHECK(sl_ofconn_mgr_target(mgr, idx_active) == NULL, "no longer listed");
	CHECK(sl_ofconn_mgr_n_controllers(mgr) == 0, "closing is not connected");
	CHECK(peer_recv(mgr, pe, NULL, 2000) == 0, "the controller sees EOF");
	CHECK(pump_until(mgr, &r.n_disconnect, 1, 2000), "on_disconnect");
	peer_close(pe);
	set_nonblock(lfd);
	pump_for(mgr, 400); /* several backoff_min_ms periods */
	CHECK(accept(lfd, NULL, NULL) < 0, "no reconnection to a removed target");

	/* The punix: listener goes with its file; ptcp: still accepts. */
	CHECK(stat(path, &sb) == 0, "punix socket exists");
	CHECK(sl_ofconn_mgr_del_target(mgr, idx_unix) == 0, "del punix");
	CHECK(stat(path, &sb) < 0, "punix socket removed");
	CHECK(unix_connect(path) < 0, "nobody listens");
	CHECK(sl_ofconn_mgr_listen_port(mgr, idx_tcp) > 0 &&
		      !strcmp(sl_ofconn_mgr_target(mgr, idx_tcp), "ptcp:0:127.0.0.1"),
	      "ptcp: kept");
	CHECK(connect_peer(mgr, &r, pe, sl_ofconn_mgr_listen_port(mgr, idx_tcp)), "ptcp: works");
	peer_close(pe);

	/* Added again: a new index, connected again. */
	snprintf(target, sizeof target, "tcp:127.0.0.1:%d", port);
	CHECK(sl_ofconn_mgr_add_target(mgr, target, err, sizeof err) == 3, "%s", err);
	fd = accept_within(mgr, lfd, 3000);
	CHECK(fd >= 0, "the re-added target connects");
	if (fd >= 0)
		close(fd);
	close(lfd);
	sl_ofconn_mgr_destroy(mgr);
	free(pe);
	rec_reset(&r);
}

static void
test_many(void)
{
	enum { N = 6 };
	struct rec r;
	struct sl_ofconn_mgr *mgr;
	struct peer *pe[N];
	int port;

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	mgr = mgr_new(&r, NULL);
	port = setup_listener(mgr);
	/* All connect first, then all say hello: several handshakes in flight at once. */
	for (int i = 0; i < N; i++) {
		pe[i] = calloc(1, sizeof *pe[i]);
		peer_init(pe[i], tcp_connect(port, 0));
	}
	for (int i = 0; i < N; i++)
		expect_switch_hello(mgr, pe[i]);
	for (int i = 0; i < N; i++)
		peer_hello(mgr, pe[i], 0x04, 0x10);
	CHECK(pump_until(mgr, &r.n_connect, N, 2000), "all connected (%u)", r.n_connect);
	CHECK(sl_ofconn_mgr_n_connected(mgr) == N, "n_connected %u",
	      sl_ofconn_mgr_n_connected(mgr));
	CHECK(r.n_names == N, "names %u", r.n_names);
	for (int i = 0; i < (int)r.n_names; i++)
		for (int j = i + 1; j < (int)r.n_names; j++)
			CHECK(strcmp(r.names[i], r.names[j]), "distinct names %s", r.names[i]);

	/* One leaves (like an ovs-ofctl command finishing); the rest stay. */
	peer_close(pe[2]);
	CHECK(pump_until(mgr, &r.n_disconnect, 1, 2000), "one disconnect");
	CHECK(sl_ofconn_mgr_n_connected(mgr) == N - 1, "n_connected after one left");
	for (int i = 0; i < N; i++) {
		peer_close(pe[i]);
		free(pe[i]);
	}
	CHECK(pump_until(mgr, &r.n_disconnect, N, 2000), "all disconnected");
	sl_ofconn_mgr_destroy(mgr);
	rec_reset(&r);
}

static void
test_enobufs(void)
{
	struct rec r;
	struct sl_ofconn_params p;
	struct sl_ofconn_mgr *mgr;
	struct peer *pe = calloc(1, sizeof *pe);
	struct sl_ofconn_stats st;
	static uint8_t m[60000];
	size_t len = mk_msg(m, 0x04, 10, 1, m + 8, sizeof m - 8);
	uint64_t sent = 0, got = 0;
	int port, ret = 0, n;

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	sl_ofconn_params_init(&p);
	p.max_tx_bytes = 256 * 1024;
	p.tx_low_water = 64 * 1024;
	mgr = mgr_new(&r, &p);
	port = setup_listener(mgr);
	peer_init(pe, tcp_connect(port, 4096));
	expect_switch_hello(mgr, pe);
	peer_hello(mgr, pe, 0x04, 0x10);
	CHECK(pump_until(mgr, &r.n_connect, 1, 2000), "connected");
	if (!r.last)
		goto out;

	/* The peer never reads: the kernel buffers fill, then the queue bound hits. */
	CHECK(sl_ofconn_send(r.last, m, len - 1) == -EINVAL, "length mismatch");
	for (int i = 0; i < 100000 && (ret = sl_ofconn_send(r.last, m, len)) == 0; i++) {
		sent += len;
		sl_ofconn_mgr_poll(mgr, 0);
	}
	CHECK(ret == -ENOBUFS, "ENOBUFS (ret %d after %lu bytes)", ret, (unsigned long)sent);
	sl_ofconn_stats(r.last, &st);
	CHECK(st.tx_dropped == 1 && st.tx_pending > p.tx_low_water, "dropped %lu pending %zu",
	      (unsigned long)st.tx_dropped, st.tx_pending);
	CHECK(sl_ofconn_tx_congested(r.last), "congested");
	CHECK(tx_pending(r.last) + len > p.max_tx_bytes, "pending near bound");
	CHECK(r.n_writable == 0, "no writable yet");

	/* The peer drains everything: on_writable fires once, and all bytes arrive. */
	for (uint64_t t0 = ms_now(); got < sent && ms_now() - t0 < 5000;) {
		n = peer_recv(mgr, pe, NULL, 100);
		if (n > 0)
			got += (uint64_t)n;
	}
	CHECK(got == sent, "peer got %lu of %lu", (unsigned long)got, (unsigned long)sent);
	pump_until(mgr, &r.n_writable, 1, 1000);
	CHECK(r.n_writable == 1, "on_writable %u", r.n_writable);
	CHECK(r.last && !sl_ofconn_tx_congested(r.last) && tx_pending(r.last) == 0, "drained");
out:
	peer_close(pe);
	sl_ofconn_mgr_destroy(mgr);
	free(pe);
	rec_reset(&r);
}

/* A peer that floods requests without reading replies is slowed, not dropped. */
static void
test_throttle(void)
{
	enum { N = 24000, BODY = 992 };
	struct rec r;
	struct sl_ofconn_params p;
	struct sl_ofconn_mgr *mgr;
	struct peer *pe = calloc(1, sizeof *pe);
	uint8_t *out = malloc((size_t)N * (BODY + 8)), m[2048], body[BODY];
	size_t out_len = 0, off = 0;
	uint32_t next = 0;
	uint64_t t0;
	int port, n;

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	r.echo_back = true;
	sl_ofconn_params_init(&p);
	p.max_tx_bytes = 128 * 1024;
	p.tx_low_water = 64 * 1024;
	mgr = mgr_new(&r, &p);
	port = setup_listener(mgr);
	peer_init(pe, tcp_connect(port, 4096));
	expect_switch_hello(mgr, pe);
	peer_hello(mgr, pe, 0x04, 0x10);
	CHECK(pump_until(mgr, &r.n_connect, 1, 2000), "connected");
	memset(body, 0xab, sizeof body);
	for (uint32_t i = 0; i < N; i++)
		out_len += mk_msg(out + out_len, 0x04, 18, i, body, sizeof body);

	/* Phase 1: write 24 MB of requests, more than the kernel buffers, without reading. */
	t0 = ms_now();
	while (ms_now() - t0 < 300) {
		ssize_t k =
			off < out_len ? send(pe->fd, out + off, out_len - off, MSG_DONTWAIT) : 0;

		if (k > 0)
			off += (size_t)k;
		sl_ofconn_mgr_poll(mgr, 1);
	}
	CHECK(r.last && sl_ofconn_tx_congested(r.last),
	      "switch backlog above low water (pending %zu, dispatched %u, sent %zu)",
	      r.last ? tx_pending(r.last) : 0, r.n_msgs, off);
	CHECK(r.last && tx_pending(r.last) <= p.max_tx_bytes, "bounded");
	CHECK(r.n_msgs < N, "input paused (%u dispatched)", r.n_msgs);

	/* Phase 2: read everything (and send the rest): all replies, in order, none lost. */
	t0 = ms_now();
	while (next < N && ms_now() - t0 < 5000) {
		if (off < out_len) {
			ssize_t k = send(pe->fd, out + off, out_len - off, MSG_DONTWAIT);

			if (k > 0)
				off += (size_t)k;
		}
		sl_ofconn_mgr_poll(mgr, 1);
		while ((n = peer_recv(NULL, pe, m, 0)) > 0) {
			CHECK(get32(m + 4) == next && n == BODY + 8, "reply %u xid %u", next,
			      get32(m + 4));
			next++;
		}
		if (n == 0)
			break;
	}
	CHECK(next == N, "all %u replies (got %u)", N, next);
	if (r.last) {
		struct sl_ofconn_stats st;

		sl_ofconn_stats(r.last, &st);
		CHECK(st.tx_dropped == 0, "no drops (%lu)", (unsigned long)st.tx_dropped);
	}
	peer_close(pe);
	sl_ofconn_mgr_destroy(mgr);
	free(out);
	free(pe);
	rec_reset(&r);
}

static void
test_stress(void)
{
	enum { N = 10000 };
	struct rec r;
	struct sl_ofconn_mgr *mgr;
	struct peer *pe = calloc(1, sizeof *pe);
	uint8_t *out = malloc((size_t)N * 24), m[64];
	size_t out_len = 0, off = 0;
	uint32_t next = 0;
	uint64_t t0 = ms_now();
	int port, n;

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	r.echo_back = true;
	mgr = mgr_new(&r, NULL);
	port = setup_listener(mgr);
	CHECK(connect_peer(mgr, &r, pe, port), "connect");
	for (uint32_t i = 0; i < N; i++) {
		uint8_t body[16];

		put32(body, i);
		out_len += mk_msg(out + out_len, 0x04, 18, i, body, 4 + i % 12);
	}
	/* Write in chunks while reading replies, so neither side's buffers stall. */
	while (next < N && ms_now() - t0 < 10000) {
		if (off < out_len) {
			ssize_t k = send(pe->fd, out + off, SL_MIN(out_len - off, (size_t)8192),
					 MSG_DONTWAIT);

			if (k > 0)
				off += (size_t)k;
		}
		sl_ofconn_mgr_poll(mgr, 0);
		while ((n = peer_recv(NULL, pe, m, 0)) > 0) {
			CHECK(get32(m + 4) == next && get32(m + 8) == next &&
				      (size_t)n == 12 + next % 12,
			      "reply %u: xid %u len %d", next, get32(m + 4), n);
			next++;
		}
		if (n == 0)
			break;
	}
	CHECK(next == N, "round-tripped %u of %u", next, N);
	CHECK(r.n_msgs == N, "on_message %u", r.n_msgs);
	if (r.last) {
		struct sl_ofconn_stats st;

		sl_ofconn_stats(r.last, &st);
		CHECK(st.rx_msgs == N + 1 && st.tx_msgs == N + 1 && st.rx_bytes == out_len + 16,
		      "stats rx %lu tx %lu", (unsigned long)st.rx_msgs, (unsigned long)st.tx_msgs);
	}
	peer_close(pe);
	sl_ofconn_mgr_destroy(mgr);
	free(out);
	free(pe);
	rec_reset(&r);
}

/* The wait never exceeds the caller's timeout, and 0 does not block. */
static void
test_poll_timeout(void)
{
	struct rec r;
	struct sl_ofconn_mgr *mgr;
	uint64_t t0;

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	mgr = mgr_new(&r, NULL);
	setup_listener(mgr);
	t0 = ms_now();
	CHECK(sl_ofconn_mgr_poll(mgr, 0) == 0, "nothing ready");
	CHECK(ms_now() - t0 < 50, "poll(0) did not block");
	t0 = ms_now();
	sl_ofconn_mgr_poll(mgr, 30);
	CHECK(ms_now() - t0 >= 25 && ms_now() - t0 < 500, "poll(30) took %lu ms",
	      (unsigned long)(ms_now() - t0));
	sl_ofconn_mgr_destroy(mgr);
	rec_reset(&r);
}

/* The manager connecting to its own listener: exercises both ends, IPv6 if available. */
static void
test_self_connect(void)
{
	struct rec r;
	struct sl_ofconn_mgr *mgr;
	char err[256], target[64];
	const char *lo = "[::1]";
	int idx, port;

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	mgr = mgr_new(&r, NULL);
	idx = sl_ofconn_mgr_add_target(mgr, "ptcp:0:[::1]", err, sizeof err);
	if (idx < 0) {
		printf("no IPv6 loopback (%s): self-connect over IPv4\n", err);
		lo = "127.0.0.1";
		idx = sl_ofconn_mgr_add_target(mgr, "ptcp:0:127.0.0.1", err, sizeof err);
	}
	port = sl_ofconn_mgr_listen_port(mgr, idx);
	CHECK(port > 0, "port %d", port);
	snprintf(target, sizeof target, "tcp:%s:%d", lo, port);
	CHECK(sl_ofconn_mgr_add_target(mgr, target, err, sizeof err) == idx + 1, "%s", err);
	CHECK(pump_until(mgr, &r.n_connect, 2, 2000), "both ends connected (%u)", r.n_connect);
	CHECK(sl_ofconn_mgr_n_connected(mgr) == 2 && sl_ofconn_mgr_n_controllers(mgr) == 1,
	      "2 connected, 1 controller");
	if (!strcmp(lo, "[::1]")) {
		bool found = false;

		for (unsigned i = 0; i < r.n_names; i++)
			found |= !strcmp(r.names[i], target);
		CHECK(found, "active IPv6 name %s", target);
	}
	sl_ofconn_mgr_destroy(mgr);
	CHECK(r.n_disconnect == 2, "destroy disconnects both");
	rec_reset(&r);
}

/* ------------------------------------------------------------------------- */
/* TLS: ssl:/pssl: targets.                                                  */
/* ------------------------------------------------------------------------- */

static char pki_dir[64];

/* Run one shell command; false (and a failed check) when it fails. */
static bool __attribute__((format(printf, 1, 2))) sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	rc = system(cmd);
	CHECK(rc == 0, "command failed (%d): %s", rc, cmd);
	return rc == 0;
}

/*
 * Two CAs, EC P-256, made with the openssl command: "ca" signs "switch" and
 * "ctl", "otherca" signs "rogue".
 */
static bool
pki_make(void)
{
	static const char *const leaves[][2] = {
		{"switch", "ca"}, {"ctl", "ca"}, {"rogue", "otherca"}};
	static const char *const gen = "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
				       "-nodes -days 2";

	snprintf(pki_dir, sizeof pki_dir, "/tmp/sl_ofconn_pki_%d", (int)getpid());
	if (!sh("mkdir -p %s", pki_dir))
		return false;
	for (int i = 0; i < 2; i++) {
		const char *ca = i ? "otherca" : "ca";

		if (!sh("cd %s && %s -x509 -keyout %s-key.pem -out %s-cert.pem -subj /CN=%s "
			">/dev/null 2>&1",
			pki_dir, gen, ca, ca, ca))
			return false;
	}
	for (size_t i = 0; i < SL_ARRAY_SIZE(leaves); i++) {
		const char *who = leaves[i][0], *ca = leaves[i][1];

		if (!sh("cd %s && %s -keyout %s-key.pem -out %s.csr -subj /CN=%s >/dev/null 2>&1 && "
			"openssl x509 -req -in %s.csr -CA %s-cert.pem -CAkey %s-key.pem "
			"-CAcreateserial -days 2 -out %s-cert.pem >/dev/null 2>&1",
			pki_dir, gen, who, who, who, who, ca, ca, who))
			return false;
	}
	return true;
}

/* The context of identity @who ("switch", "ctl", "rogue") trusting CA @ca. */
static struct sl_tls_ctx *
pki_ctx(const char *who, const char *ca)
{
	char key[128], cert[128], cacert[128], err[256];
	struct sl_tls_files f = {key, cert, cacert};
	struct sl_tls_ctx *ctx = NULL;
	int ret;

	snprintf(key, sizeof key, "%s/%s-key.pem", pki_dir, who);
	snprintf(cert, sizeof cert, "%s/%s-cert.pem", pki_dir, who);
	snprintf(cacert, sizeof cacert, "%s/%s-cert.pem", pki_dir, ca);
	ret = sl_tls_ctx_create(&f, &ctx, err, sizeof err);
	CHECK(ret == 0, "context %s: %s", who, err);
	return ctx;
}

static struct sl_ofconn_mgr *
mgr_new_tls(struct rec *r, struct sl_tls_ctx *ctx, uint32_t backoff_min_ms)
{
	struct sl_ofconn_params p;

	sl_ofconn_params_init(&p);
	p.tls = ctx;
	p.backoff_min_ms = backoff_min_ms;
	return mgr_new(r, &p);
}

/* TLS client handshake of @pe, polling @mgr meanwhile; sl_tls_handshake()'s result. */
static int
peer_tls_start(struct sl_ofconn_mgr *mgr, struct peer *pe, struct sl_tls_ctx *ctx)
{
	uint64_t end = ms_now() + 3000;
	int ret;

	CHECK(sl_tls_open(ctx, pe->fd, false, &pe->tls) == 0, "peer session");
	while ((ret = sl_tls_handshake(pe->tls)) == -EAGAIN && ms_now() < end)
		sl_ofconn_mgr_poll(mgr, 5);
	return ret;
}

/* Poll @mgr until it logged a warning after the first @n_warn ones. */
static bool
pump_until_warned(struct sl_ofconn_mgr *mgr, struct rec *r, unsigned n_warn)
{
	return pump_until(mgr, &r->n_log_warn, n_warn + 1, 3000);
}

/*
 * Messages up to 64 KB through TLS both ways (the switch echoes them): they
 * span several records, and the peer's small receive buffer makes the
 * switch's writes stop mid-record and resume from a queue that has moved.
 */
static void
tls_echo_rounds(struct sl_ofconn_mgr *mgr, struct peer *pe, int rounds)
{
	static uint8_t sent[2][65535], got[65535];

	for (int k = 0; k < rounds; k++) {
		size_t lens[2] = {65535 - (size_t)k * 1000, 9 + (size_t)k * 7};

		for (int j = 0; j < 2; j++) {
			for (size_t i = 8; i < lens[j]; i++)
				sent[j][i] = (uint8_t)(i * 31 + (size_t)k + (size_t)j);
			sent[j][0] = 0x04;
			sent[j][1] =
				99; /* Not a channel message: the agent's echo_back sends it back. */
			put16(sent[j] + 2, (uint16_t)lens[j]);
			put32(sent[j] + 4, (uint32_t)(k * 2 + j + 1));
			peer_send(mgr, pe, sent[j], lens[j]);
		}
		for (int j = 0; j < 2; j++) {
			int n = peer_recv(mgr, pe, got, 3000);

			CHECK(n == (int)lens[j] && !memcmp(got, sent[j], lens[j]),
			      "round %d message %d: %d bytes", k, j, n);
		}
	}
}

static void
test_tls_targets(struct sl_tls_ctx *sw_ctx)
{
	static const struct {
		const char *target;
		const char *needle;
	} bad[] = {
		{"ssl", "prefix"},
		{"tls:1.2.3.4", "unknown type 'tls'"},
		{"ssl:", "missing host"},
		{"ssl:1.2.3.4:", "missing port"},
		{"ssl:1.2.3.4:70000", "port '70000' out of range"},
		{"ssl:1.2.3.4:0", "port '0' out of range"},
		{"ssl:::1:6653", "brackets"},
		{"ssl:[::1", "missing ']'"},
		{"ssl:[::1]x", "junk after ']'"},
		{"ssl:foo..bar", "'foo..bar' is neither an IP address nor a host name"},
		{"pssl:", "missing port"},
		{"pssl:99999", "port '99999' out of range"},
		{"pssl:x1", "port 'x1' out of range"},
		{"pssl:6653:", "missing address"},
		{"pssl:6653:1.2.3", "'1.2.3' is not an IP address"},
		{"pssl:6653:example.org", "'example.org' is not an IP address"},
	};
	static const char *const need_tls[] = {"ssl:127.0.0.1:6653", "pssl:0", "pssl:0:[::1]"};
	struct rec r = {0};
	struct sl_ofconn_mgr *mgr;
	char err[256], quoted[64];
	int idx, port, fd;

	/* Syntax errors name the value whether TLS is configured or not. */
	for (int with_tls = 0; with_tls < 2; with_tls++) {
		rec_reset(&r);
		mgr = with_tls ? mgr_new_tls(&r, sw_ctx, 100) : mgr_new(&r, NULL);
		for (size_t i = 0; i < SL_ARRAY_SIZE(bad); i++) {
			int ret = sl_ofconn_mgr_add_target(mgr, bad[i].target, err, sizeof err);

			snprintf(quoted, sizeof quoted, "'%s'", bad[i].target);
			CHECK(ret == -EINVAL, "%s: ret %d", bad[i].target, ret);
			CHECK(strstr(err, bad[i].needle) && strstr(err, quoted), "%s: err '%s'",
			      bad[i].target, err);
		}
		if (!with_tls) {
			/* Well-formed TLS targets need the key, certificate and CA. */
			for (size_t i = 0; i < SL_ARRAY_SIZE(need_tls); i++) {
				int ret =
					sl_ofconn_mgr_add_target(mgr, need_tls[i], err, sizeof err);

				snprintf(quoted, sizeof quoted, "'%s'", need_tls[i]);
				CHECK(ret == -EINVAL && strstr(err, "TLS needs a private key") &&
					      strstr(err, quoted),
				      "%s: %d '%s'", need_tls[i], ret, err);
			}
		}
		sl_ofconn_mgr_destroy(mgr);
	}

	/* Valid forms, with TLS: pssl:PORT listens on 127.0.0.1; ssl: starts connecting. */
	rec_reset(&r);
	mgr = mgr_new_tls(&r, sw_ctx, 100);
	idx = sl_ofconn_mgr_add_target(mgr, "pssl:0", err, sizeof err);
	port = sl_ofconn_mgr_listen_port(mgr, idx);
	CHECK(idx == 0 && port > 0, "pssl:0: %d %d %s", idx, port, err);
	fd = tcp_connect(port, 0);
	CHECK(fd >= 0, "pssl:0 accepts on 127.0.0.1");
	if (fd >= 0)
		close(fd);
	idx = sl_ofconn_mgr_add_target(mgr, "pssl:0:0.0.0.0", err, sizeof err);
	CHECK(idx == 1 && sl_ofconn_mgr_listen_port(mgr, idx) > 0, "pssl:0:0.0.0.0: %s", err);
	idx = sl_ofconn_mgr_add_target(mgr, "pssl:0:[::1]", err, sizeof err);
	CHECK(idx == 2 || strstr(err, "bind"), "pssl:0:[::1]: %s", err);
	CHECK(sl_ofconn_mgr_add_target(mgr, "ssl:127.0.0.1", err, sizeof err) >= 0, "%s", err);
	CHECK(sl_ofconn_mgr_add_target(mgr, "ssl:[::1]:1", err, sizeof err) >= 0, "%s", err);
	idx = sl_ofconn_mgr_add_target(mgr, "ssl:localhost:6653", err, sizeof err);
	CHECK(idx >= 0 && sl_ofconn_mgr_listen_port(mgr, idx) == -EINVAL, "ssl: has no port: %s",
	      err);
	pump_for(mgr, 20);
	sl_ofconn_mgr_destroy(mgr);
	rec_reset(&r);
}

/* A raw OpenSSL client that presents no certificate; returns its socket for closing. */
static int
tls_client_without_cert(struct sl_ofconn_mgr *mgr, int port, SSL **out)
{
	SSL_CTX *sc = SSL_CTX_new(TLS_client_method());
	uint64_t end = ms_now() + 3000;
	char ca[128];
	SSL *ssl;
	int fd = tcp_connect(port, 0), ret;

	snprintf(ca, sizeof ca, "%s/ca-cert.pem", pki_dir);
	SSL_CTX_load_verify_locations(sc, ca, NULL);
	SSL_CTX_set_verify(sc, SSL_VERIFY_PEER, NULL);
	ssl = SSL_new(sc);
	SSL_CTX_free(sc); /* The session keeps its own reference. */
	set_nonblock(fd);
	SSL_set_fd(ssl, fd);
	while ((ret = SSL_connect(ssl)) != 1 && ms_now() < end) {
		int e = SSL_get_error(ssl, ret);

		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
			break;
		sl_ofconn_mgr_poll(mgr, 5);
	}
	*out = ssl;
	return fd;
}

static void
test_tls_session(struct sl_tls_ctx *sw_ctx, struct sl_tls_ctx *ctl_ctx,
		 struct sl_tls_ctx *rogue_ctx)
{
	struct peer *good = calloc(1, sizeof *good), *bad = calloc(1, sizeof *bad);
	struct rec r;
	struct sl_ofconn_mgr *mgr;
	unsigned warns;
	SSL *ssl;
	int port, fd, ret;
	char buf[64];

	memset(&r, 0, sizeof r);
	rec_reset(&r);
	mgr = mgr_new_tls(&r, sw_ctx, 100);
	r.echo_back = true;
	port = sl_ofconn_mgr_listen_port(mgr,
					 sl_ofconn_mgr_add_target(mgr, "pssl:0", buf, sizeof buf));
	CHECK(port > 0, "pssl:0 port %d", port);

	/* A client with a certificate from the CA: TLS, then OpenFlow as over TCP. */
	peer_init(good, tcp_connect(port, 8192));
	ret = peer_tls_start(mgr, good, ctl_ctx);
	CHECK(ret == 0, "handshake %d: %s", ret, good->tls ? sl_tls_error(good->tls) : "");
	CHECK(!strcmp(sl_tls_peer_subject(good->tls), "CN=switch"), "switch subject '%s'",
	      sl_tls_peer_subject(good->tls));
	expect_switch_hello(mgr, good);
	peer_hello(mgr, good, 0x04, 0x10);
	CHECK(pump_until(mgr, &r.n_connect, 1, 2000), "connected");
	CHECK(r.last && !strncmp(sl_ofconn_name(r.last), "ssl:127.0.0.1:", 14) &&
		      sl_ofconn_is_passive(r.last),
	      "name %s", r.last ? sl_ofconn_name(r.last) : "-");
	tls_echo_rounds(mgr, good, 8);

	/* A certificate from another CA: refused by the switch, with the reason. */
	warns = r.n_log_warn;
	peer_init(bad, tcp_connect(port, 0));
	(void)peer_tls_start(mgr, bad, rogue_ctx);
	CHECK(pump_until_warned(mgr, &r, warns), "rogue refusal logged");
	CHECK(strstr(r.last_warn, "TLS handshake failed: certificate verify failed"), "rogue: '%s'",
	      r.last_warn);
	CHECK(peer_recv(mgr, bad, NULL, 2000) == 0, "rogue gets no OpenFlow message");
	peer_close(bad);

	/* No certificate at all. */
	warns = r.n_log_warn;
	fd = tls_client_without_cert(mgr, port, &ssl);
	CHECK(pump_until_warned(mgr, &r, warns), "no-certificate refusal logged");
	CHECK(strstr(r.last_warn, "TLS handshake failed") &&
		      strstr(r.last_warn, "did not return a certificate"),
	      "no cert: '%s'", r.last_warn);
	SSL_free(ssl);
	close(fd);

	/* Plain TCP on the TLS port: refused, never answered with OpenFlow. */
	warns = r.n_log_warn;
	peer_init(bad, tcp_connect(port, 0));
	peer_hello(mgr, bad, 0x04, 0x10);
	CHECK(pump_until_warned(mgr, &r, warns), "plain TCP refusal logged");
	CHECK(strstr(r.last_warn, "TLS handshake failed"), "plain: '%s'", r.last_warn);
	CHECK(peer_recv(mgr, bad, NULL, 2000) == 0, "plain TCP gets no OpenFlow HELLO");
	peer_close(bad);

	/* The good client was served throughout and still is; a close ends its stream cleanly. */
	CHECK(r.n_connect == 1 && r.n_disconnect == 0, "connects %u disconnects %u", r.n_connect,
	      r.n_disconnect);
	tls_echo_rounds(mgr, good, 2);
	sl_ofconn_close(r.last);
	CHECK(peer_recv(mgr, good, NULL, 2000) == 0, "EOF after close");
	CHECK(pump_until(mgr, &r.n_disconnect, 1, 2000), "disconnected");
	peer_close(good);
	sl_ofconn_mgr_destroy(mgr);
	free(good);
	free(bad);
	rec_reset(&r);
}

/* ssl: targets: to our own pssl: listener, and to a controller from another CA. */
static void
test_tls_active(struct sl_tls_ctx *sw_ctx, struct sl_tls_ctx *rogue_ctx)
{
	struct rec r, rc;
	struct sl_ofconn_mgr *mgr, *ctl;
	char err[256], target[64];
	int port;
	uint64_t end;

	memset(&r, 0, sizeof r);
	memset(&rc, 0, sizeof rc);
	rec_reset(&r);
	rec_reset(&rc);
	mgr = mgr_new_tls(&r, sw_ctx, 50);
	port = sl_ofconn_mgr_listen_port(mgr,
					 sl_ofconn_mgr_add_target(mgr, "pssl:0", err, sizeof err));
	snprintf(target, sizeof target, "ssl:127.0.0.1:%d", port);
	CHECK(sl_ofconn_mgr_add_target(mgr, target, err, sizeof err) == 1, "%s", err);
	CHECK(pump_until(mgr, &r.n_connect, 2, 3000), "both ends connected (%u)", r.n_connect);
	CHECK(sl_ofconn_mgr_n_controllers(mgr) == 1, "one controller");
	sl_ofconn_mgr_destroy(mgr);
	CHECK(r.n_disconnect == 2, "destroy disconnects both");

	/*
	 * A controller whose certificate the switch does not trust: every attempt
	 * fails its handshake, and the next waits the backoff, doubling as for tcp:.
	 */
	rec_reset(&r);
	ctl = mgr_new_tls(&rc, rogue_ctx, 100);
	port = sl_ofconn_mgr_listen_port(ctl,
					 sl_ofconn_mgr_add_target(ctl, "pssl:0", err, sizeof err));
	mgr = mgr_new_tls(&r, sw_ctx, 50);
	snprintf(target, sizeof target, "ssl:127.0.0.1:%d", port);
	CHECK(sl_ofconn_mgr_add_target(mgr, target, err, sizeof err) == 0, "%s", err);
	end = ms_now() + 5000;
	while (r.n_backoffs < 3 && ms_now() < end) {
		sl_ofconn_mgr_poll(mgr, 5);
		sl_ofconn_mgr_poll(ctl, 5);
	}
	CHECK(r.n_backoffs >= 3 && r.backoffs[0] == 50 && r.backoffs[1] == 100 &&
		      r.backoffs[2] == 200,
	      "backoffs %u: %u %u %u", r.n_backoffs, r.backoffs[0], r.backoffs[1], r.backoffs[2]);
	CHECK(strstr(r.last_warn, "TLS handshake failed: certificate verify failed"), "'%s'",
	      r.last_warn);
	CHECK(r.n_connect == 0 && rc.n_connect == 0, "never connected");
	sl_ofconn_mgr_destroy(mgr);
	sl_ofconn_mgr_destroy(ctl);
	rec_reset(&r);
	rec_reset(&rc);
}

static void
test_tls(void)
{
	struct sl_tls_ctx *sw_ctx, *ctl_ctx, *rogue_ctx;

	if (!pki_make()) {
		sh("rm -rf %s", pki_dir);
		return;
	}
	sw_ctx = pki_ctx("switch", "ca");
	ctl_ctx = pki_ctx("ctl", "ca");
	/* Trusts the real CA, presents a certificate from the other one. */
	rogue_ctx = pki_ctx("rogue", "ca");
	if (sw_ctx && ctl_ctx && rogue_ctx) {
		test_tls_targets(sw_ctx);
		test_tls_session(sw_ctx, ctl_ctx, rogue_ctx);
		test_tls_active(sw_ctx, rogue_ctx);
	}
	sl_tls_ctx_destroy(sw_ctx);
	sl_tls_ctx_destroy(ctl_ctx);
	sl_tls_ctx_destroy(rogue_ctx);
	sh("rm -rf %s", pki_dir);
}

static int
count_fds(void)
{
	char path[64];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		n += access(path, F_OK) == 0;
	}
	return n;
}

int
main(void)
{
	int fds_before = count_fds();

	test_bad_targets();
	test_hello();
	test_hello_failures();
	test_echo_and_framing();
	test_reconnect();
	test_backoff_resets();
	test_probe();
	test_unix();
	test_del_target();
	test_many();
	test_enobufs();
	test_throttle();
	test_stress();
	test_poll_timeout();
	test_self_connect();
	test_tls();
	CHECK(count_fds() == fds_before, "fd leak: %d open, %d before", count_fds(), fds_before);
	return sl_test_summary();
}
