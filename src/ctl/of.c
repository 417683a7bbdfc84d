/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path (tools): the blocking OpenFlow 1.3 client.
 *
 * One non-blocking socket driven by poll().  Every wait goes through
 * pump(), which writes pending output, reads input, frames it into
 * messages, answers echo requests and hands everything else to the
 * current waiter until the waiter says it is done.  Output and input are
 * serviced together so a large batch (a flow file) cannot deadlock against
 * a switch that is writing errors back while we are still writing.
 *
 * Output is a queue of whole messages in two segments: the caller's buffer
 * (sent in place, not copied) and an internal tail (hello, barrier, echo
 * replies) sent after it, so a reply we add is never spliced into the
 * middle of a message.
 *
 * ssl: targets run the same pump over a TLS session (src/tls): a TLS send
 * retried after -EAGAIN starts with the same bytes, which this queue does
 * by itself (offsets only advance over bytes that were taken).
 */
#include "ctl.h"
#include "ctl_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../tls/tls.h"

struct sl_ctl_of {
	int fd;
	struct sl_tls *tls; /* ssl: targets; NULL for unix: and tcp:. */
	int timeout_ms;
	uint32_t next_xid;
	char target[256];
	/* Input: bytes received and not yet consumed. */
	uint8_t *in;
	size_t in_len;
	size_t in_cap;
	/* Output: the caller's messages, then the tail. */
	const uint8_t *ext;
	size_t ext_len;
	size_t ext_off;
	struct sl_ofp_buf tail;
	size_t tail_off;
};

/* What a wait is waiting for: handle() sees each message that is not an echo request. */
struct waiter {
	/* Returns 1 when the message is relevant (resets the timeout), 0 otherwise. */
	int (*handle)(struct waiter *w, const uint8_t *msg, size_t len);
	bool done;
	int rc;     /* result once done */
	bool hello; /* waiting for the hello: any version accepted */
	char *err;
	size_t err_size;
};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
sl_ctl_of_error_format(const struct sl_ofp_error *e, char *buf, size_t size)
{
	if (e->type == SL_OFPET_EXPERIMENTER)
		return snprintf(buf, size, "%s (experimenter 0x%08x, exp_type %u)",
				sl_ofp_error_name(e), e->experimenter, e->code);
	return snprintf(buf, size, "%s (type %u, code %u)", sl_ofp_error_name(e), e->type, e->code);
}

/*
 * Connecting.
 */

/* Wait for a non-blocking connect on @fd; 0 or -errno. */
static int
connect_wait(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLOUT};
	int64_t deadline = now_ms() + timeout_ms;
	socklen_t sl = sizeof(int);
	int rc, soerr = 0;

	for (;;) {
		int left = (int)SL_MAX(deadline - now_ms(), (int64_t)0);
		rc = poll(&pfd, 1, left);
		if (rc > 0)
			break;
		if (rc == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		return -errno;
	return -soerr;
}

static int
connect_unix(const char *path, int timeout_ms, int *fd_out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, rc;

	if (path[0] == '\0')
		return -EINVAL;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	if (rc == -EINPROGRESS)
		rc = connect_wait(fd, timeout_ms);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	*fd_out = fd;
	return 0;
}

/* Split "HOST[:PORT]" / "[V6]:PORT" into @host and @port. */
static int
split_host_port(const char *s, char *host, size_t hsize, char *port, size_t psize)
{
	const char *colon;
	size_t hlen;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (close == NULL)
			return -EINVAL;
		hlen = (size_t)(close - s - 1);
		if (hlen == 0 || hlen >= hsize)
			return -EINVAL;
		memcpy(host, s + 1, hlen);
		host[hlen] = '\0';
		colon = close[1] == ':' ? close + 1 : NULL;
		if (close[1] != '\0' && colon == NULL)
			return -EINVAL;
	} else {
		colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':'))
			return -EINVAL; /* a bare IPv6 address: brackets are required */
		hlen = colon ? (size_t)(colon - s) : strlen(s);
		if (hlen == 0 || hlen >= hsize)
			return -EINVAL;
		memcpy(host, s, hlen);
		host[hlen] = '\0';
	}
	if (colon) {
		char *end;
		unsigned long p;

		errno = 0;
		p = strtoul(colon + 1, &end, 10);
		if (colon[1] == '\0' || *end != '\0' || errno || p == 0 || p > 65535)
			return -EINVAL;
		snprintf(port, psize, "%lu", p);
	} else {
		snprintf(port, psize, "%d", SL_CTL_OF_PORT);
	}
	return 0;
}

/* @scheme is "tcp" or "ssl" (for messages); the socket is TCP either way. */
static int
connect_tcp(const char *scheme, const char *hostport, int timeout_ms, int *fd_out, char *err,
	    size_t err_size)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res, *ai;
	char host[256], port[8];
	int rc, gai;

	if (split_host_port(hostport, host, sizeof(host), port, sizeof(port)) < 0)
		return fail(err, err_size, -EINVAL,
			    "bad target '%s:%s': expected %s:HOST[:PORT] (IPv6: %s:[ADDR]:PORT)",
			    scheme, hostport, scheme, scheme);
	gai = getaddrinfo(host, port, &hints, &res);
	if (gai != 0)
		return fail(err, err_size, -EHOSTUNREACH, "cannot resolve '%s': %s", host,
			    gai_strerror(gai));
	rc = -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
				ai->ai_protocol);
		int one = 1;

		if (fd < 0) {
			rc = -errno;
			continue;
		}
		rc = connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 ? -errno : 0;
		if (rc == -EINPROGRESS)
			rc = connect_wait(fd, timeout_ms);
		if (rc == 0) {
			/* Requests are small and we wait for each reply: no Nagle delay. */
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			*fd_out = fd;
			break;
		}
		close(fd);
	}
	freeaddrinfo(res);
	if (rc < 0)
		return fail(err, err_size, rc, "cannot connect to %s:%s: %s", scheme, hostport,
			    strerror(-rc));
	return 0;
}

/* The TLS handshake of a connected ssl: socket, waiting at most @timeout_ms. */
static int
tls_handshake(struct sl_ctl_of *c, int timeout_ms, char *err, size_t err_size)
{
	int64_t deadline = now_ms() + timeout_ms;
	int rc;

	while ((rc = sl_tls_handshake(c->tls)) == -EAGAIN) {
		struct pollfd pfd = {.fd = c->fd, .events = sl_tls_events(c->tls, false, false)};
		int64_t left = deadline - now_ms();

		if (left <= 0)
			return fail(err, err_size, -ETIMEDOUT,
				    "TLS handshake with %s: no answer within "
				    "%d ms",
				    c->target, timeout_ms);
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return fail(err, err_size, -errno, "poll: %s", strerror(errno));
	}
	if (rc < 0)
		return fail(err, err_size, rc, "TLS handshake with %s failed: %s", c->target,
			    sl_tls_error(c->tls)[0] ? sl_tls_error(c->tls) : strerror(-rc));
	return 0;
}

/*
 * The pump.
 */

static bool
output_pending(const struct sl_ctl_of *c)
{
	return c->ext_off < c->ext_len || c->tail_off < c->tail.len;
}

/* Write what the socket takes; 1 if something was written, 0 if nothing, -errno. */
static int
flush_some(struct sl_ctl_of *c)
{
	bool progress = false;

	while (output_pending(c)) {
		const uint8_t *p;
		size_t n;
		ssize_t w;

		if (c->ext_off < c->ext_len) {
			p = c->ext + c->ext_off;
			n = c->ext_len - c->ext_off;
		} else {
			p = c->tail.data + c->tail_off;
			n = c->tail.len - c->tail_off;
		}
		if (c->tls) {
			w = sl_tls_send(c->tls, p, n);
			if (w < 0)
				errno = (int)-w;
		} else {
			w = send(c->fd, p, n, MSG_NOSIGNAL);
		}
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		progress = true;
		if (c->ext_off < c->ext_len)
			c->ext_off += (size_t)w;
		else
			c->tail_off += (size_t)w;
	}
	if (c->ext_off >= c->ext_len) {
		c->ext = NULL;
		c->ext_len = c->ext_off = 0;
	}
	if (c->tail_off >= c->tail.len) {
		sl_ofp_buf_reset(&c->tail);
		c->tail_off = 0;
	}
	return progress;
}

/* Frame and dispatch complete messages in the input buffer; 1 if one was relevant. */
static int
dispatch(struct sl_ctl_of *c, struct waiter *w)
{
	size_t ofs = 0;
	int relevant = 0;

	while (!w->done && c->in_len - ofs >= SL_OFP_HEADER_LEN) {
		const uint8_t *m = c->in + ofs;
		size_t len = (size_t)m[2] << 8 | m[3];

		if (len < SL_OFP_HEADER_LEN) {
			w->done = true;
			w->rc = fail(w->err, w->err_size, -EBADMSG,
				     "malformed message from %s: length %zu", c->target, len);
			break;
		}
		if (c->in_len - ofs < len)
			break;
		ofs += len;
		if (!w->hello && m[0] != SL_OFP_VERSION) {
			w->done = true;
			w->rc = fail(w->err, w->err_size, -EBADMSG,
				     "message with version 0x%02x (type %u) from %s, expected 0x04",
				     m[0], m[1], c->target);
			break;
		}
		if (m[1] == SL_OFPT_ECHO_REQUEST && !w->hello) {
			/* Keepalive: answer at once with the same xid and payload. */
			uint32_t xid = (uint32_t)m[4] << 24 | (uint32_t)m[5] << 16 |
				       (uint32_t)m[6] << 8 | m[7];
			if (sl_ofp_echo_reply_encode(&c->tail, xid, m + SL_OFP_HEADER_LEN,
						     len - SL_OFP_HEADER_LEN) < 0) {
				w->done = true;
				w->rc = fail(w->err, w->err_size, -ENOMEM, "out of memory");
			}
			continue;
		}
		if (w->handle(w, m, len) > 0)
			relevant = 1;
	}
	memmove(c->in, c->in + ofs, c->in_len - ofs);
	c->in_len -= ofs;
	return relevant;
}

/* Read what is there; 1 if bytes arrived, 0 if none, -errno (-ECONNRESET at EOF). */
static int
read_some(struct sl_ctl_of *c)
{
	bool got = false;

	for (;;) {
		ssize_t r;

		if (c->in_cap - c->in_len < 4096) {
			size_t ncap = SL_MAX(c->in_cap * 2, (size_t)SL_OFP_MSG_MAX + 4096);
			uint8_t *n = realloc(c->in, ncap);
			if (n == NULL)
				return -ENOMEM;
			c->in = n;
			c->in_cap = ncap;
		}
		if (c->tls) {
			r = sl_tls_recv(c->tls, c->in + c->in_len, c->in_cap - c->in_len);
			if (r < 0)
				errno = (int)-r;
		} else {
			r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
		}
		if (r > 0) {
			c->in_len += (size_t)r;
			got = true;
			/* Leave the rest for the next round once a full message may be there. */
			if (c->in_len >= SL_OFP_MSG_MAX)
				return 1;
			continue;
		}
		if (r == 0)
			return got ? 1 : -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return got;
		return errno == ECONNRESET ? -ECONNRESET : -errno;
	}
}

/* Why I/O failed with @rc: TLS's own reason when it has one. */
static const char *
io_error_text(const struct sl_ctl_of *c, int rc)
{
	if (c->tls && sl_tls_error(c->tls)[0])
		return sl_tls_error(c->tls);
	return rc == -ECONNRESET ? "connection closed" : strerror(-rc);
}

/*
 * Run until @w is done.  The timeout counts from the last progress: bytes
 * written or a relevant message received.
 */
static int
pump(struct sl_ctl_of *c, struct waiter *w)
{
	int64_t deadline = now_ms() + c->timeout_ms;
	bool eof = false;

	while (!w->done) {
		struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
		int64_t left = deadline - now_ms();
		int rc;

		bool buffered = c->tls && sl_tls_pending(c->tls);

		if (c->tls)
			pfd.events = sl_tls_events(c->tls, true, output_pending(c));
		else if (output_pending(c))
			pfd.events |= POLLOUT;
		if (left <= 0)
			return fail(w->err, w->err_size, -ETIMEDOUT,
				    "no reply from %s within %d ms", c->target, c->timeout_ms);
		/* Input TLS already decrypted is invisible to poll(): do not wait for it. */
		rc = poll(&pfd, 1, buffered ? 0 : (int)left);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			return fail(w->err, w->err_size, -errno, "poll: %s", strerror(errno));
		}
		if (c->tls && rc > 0)
			pfd.revents |=
				POLLIN | POLLOUT; /* either event may serve either way (tls.h) */
		if (buffered)
			pfd.revents |= POLLIN;
		else if (rc == 0)
			continue; /* the deadline check above reports it */
		if (pfd.revents & POLLOUT) {
			rc = flush_some(c);
			if (rc < 0)
				return fail(w->err, w->err_size, rc, "sending to %s: %s", c->target,
					    io_error_text(c, rc));
			if (rc > 0)
				deadline = now_ms() + c->timeout_ms;
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			rc = read_some(c);
			if (rc == -ECONNRESET)
				eof = true;
			else if (rc < 0)
				return fail(w->err, w->err_size, rc, "receiving from %s: %s",
					    c->target, io_error_text(c, rc));
			if (dispatch(c, w) > 0)
				deadline = now_ms() + c->timeout_ms;
			if (w->done)
				break;
			if (eof)
				return fail(w->err, w->err_size, -ECONNRESET,
					    "%s closed the connection", c->target);
		}
	}
	return w->rc;
}

/*
 * Hello.
 */

static int
hello_handle(struct waiter *w, const uint8_t *msg, size_t len)
{
	struct sl_ofp_error e, pe;
	uint32_t bitmap;
	char name[128];

	w->done = true;
	if (msg[1] == SL_OFPT_HELLO) {
		if (sl_ofp_hello_decode(msg, len, &bitmap, &pe) < 0) {
			w->rc = fail(w->err, w->err_size, -EPROTO, "malformed hello: %s",
				     sl_ofp_error_name(&pe));
		} else if (!(bitmap & (1u << SL_OFP_VERSION))) {
			w->rc = fail(w->err, w->err_size, -EPROTO,
				     "the peer does not speak OpenFlow 1.3 (versions bitmap 0x%x)",
				     bitmap);
		} else {
			w->rc = 0;
		}
	} else if (msg[1] == SL_OFPT_ERROR && msg[0] == SL_OFP_VERSION) {
		const uint8_t *data;
		size_t n;
		if (sl_ofp_error_decode(msg, len, &e, &data, &n, &pe) < 0)
			snprintf(name, sizeof(name), "a malformed error");
		else
			sl_ctl_of_error_format(&e, name, sizeof(name));
		w->rc = fail(w->err, w->err_size, -EPROTO, "the peer refused our hello: %s", name);
	} else {
		w->rc = fail(w->err, w->err_size, -EPROTO,
			     "expected OFPT_HELLO, got message type %u version 0x%02x", msg[1],
			     msg[0]);
	}
	return 1;
}

int
sl_ctl_of_open(const char *target, int timeout_ms, struct sl_ctl_of **out, char *err,
	       size_t err_size)
{
	return sl_ctl_of_open_tls(target, NULL, timeout_ms, out, err, err_size);
}

int
sl_ctl_of_open_tls(const char *target, struct sl_tls_ctx *tls, int timeout_ms,
		   struct sl_ctl_of **out, char *err, size_t err_size)
{
	struct sl_ctl_of *c;
	struct waiter w = {.handle = hello_handle, .hello = true, .err = err, .err_size = err_size};
	bool ssl = strncmp(target, "ssl:", 4) == 0;
	int fd = -1, rc;

	*out = NULL;
	if (strncmp(target, "unix:", 5) == 0) {
		rc = connect_unix(target + 5, timeout_ms, &fd);
		if (rc == -EINVAL)
			return fail(err, err_size, rc, "bad target '%s': empty path", target);
		if (rc < 0)
			return fail(err, err_size, rc, "cannot connect to %s: %s", target,
				    strerror(-rc));
	} else if (strncmp(target, "tcp:", 4) == 0 || ssl) {
		if (ssl && !tls)
			return fail(err, err_size, -EINVAL,
				    "bad target '%s': TLS needs a private key, a certificate and a "
				    "CA certificate",
				    target);
		if ((rc = connect_tcp(ssl ? "ssl" : "tcp", target + 4, timeout_ms, &fd, err,
				      err_size)) < 0)
			return rc;
	} else {
		return fail(
			err, err_size, -EINVAL,
			"bad target '%s': expected unix:PATH, tcp:HOST[:PORT] or ssl:HOST[:PORT]",
			target);
	}

	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		close(fd);
		return fail(err, err_size, -ENOMEM, "out of memory");
	}
	c->fd = fd;
	c->timeout_ms = timeout_ms;
	c->next_xid = 1;
	snprintf(c->target, sizeof(c->target), "%s", target);
	sl_ofp_buf_init(&c->tail);
	if (ssl) {
		if (sl_tls_open(tls, fd, false, &c->tls) < 0) {
			rc = fail(err, err_size, -ENOMEM, "out of memory");
			goto close_conn;
		}
		if ((rc = tls_handshake(c, timeout_ms, err, err_size)) < 0)
			goto close_conn;
	}
	if (sl_ofp_hello_encode(&c->tail, c->next_xid++, 1u << SL_OFP_VERSION) < 0) {
		rc = fail(err, err_size, -ENOMEM, "out of memory");
		goto close_conn;
	}
	if ((rc = pump(c, &w)) < 0)
		goto close_conn;
	*out = c;
	return 0;

close_conn:
	sl_ctl_of_close(c);
	return rc;
}

void
sl_ctl_of_close(struct sl_ctl_of *c)
{
	if (c == NULL)
		return;
	if (c->tls) {
		sl_tls_shutdown(c->tls);
		sl_tls_close(c->tls);
	}
	close(c->fd);
	free(c->in);
	sl_ofp_buf_free(&c->tail);
	free(c);
}

uint32_t
sl_ctl_of_next_xid(struct sl_ctl_of *c)
{
	uint32_t x = c->next_xid++;

	if (c->next_xid == 0)
		c->next_xid = 1;
	return x;
}

void
sl_ctl_of_set_timeout(struct sl_ctl_of *c, int timeout_ms)
{
	c->timeout_ms = timeout_ms;
}

static uint32_t
msg_xid(const uint8_t *m)
{
	return (uint32_t)m[4] << 24 | (uint32_t)m[5] << 16 | (uint32_t)m[6] << 8 | m[7];
}

/* Check that [p, p + len) is whole messages back to back; returns how many, or -EINVAL. */
static long
count_msgs(const uint8_t *p, size_t len)
{
	long n = 0;

	for (size_t ofs = 0; ofs < len; n++) {
		size_t mlen;

		if (len - ofs < SL_OFP_HEADER_LEN)
			return -EINVAL;
		mlen = (size_t)p[ofs + 2] << 8 | p[ofs + 3];
		if (mlen < SL_OFP_HEADER_LEN || mlen > len - ofs)
			return -EINVAL;
		ofs += mlen;
	}
	return n;
}

/*
 * Requests.
 */

struct req_waiter {
	struct waiter w;
	uint32_t xid;
	sl_ctl_of_reply_fn fn;
	void *arg;
	struct sl_ofp_error *refused;
	const char *target;
};

static int
req_handle(struct waiter *w, const uint8_t *msg, size_t len)
{
	struct req_waiter *rw = (struct req_waiter *)w;
	struct sl_ofp_error e, pe;
	int rc;

	if (msg_xid(msg) != rw->xid)
		return 0; /* asynchronous or stale */
	if (msg[1] == SL_OFPT_ERROR) {
		const uint8_t *data;
		size_t n;
		char name[128];

		w->done = true;
		if (sl_ofp_error_decode(msg, len, &e, &data, &n, &pe) < 0) {
			w->rc = fail(w->err, w->err_size, -EBADMSG, "malformed OFPT_ERROR from %s",
				     rw->target);
			return 1;
		}
		if (rw->refused)
			*rw->refused = e;
		sl_ctl_of_error_format(&e, name, sizeof(name));
		w->rc = fail(w->err, w->err_size, -EREMOTEIO, "%s", name);
		return 1;
	}
	if (rw->fn && (rc = rw->fn(rw->arg, msg, len)) < 0) {
		w->done = true;
		w->rc = rc;
		return 1;
	}
	/* OpenState dump replies come in parts: wait for the last. */
	if (msg[1] == SL_OFPT_EXPERIMENTER && len >= 20 &&
	    ((uint32_t)msg[12] << 24 | (uint32_t)msg[13] << 16 | (uint32_t)msg[14] << 8 |
	     msg[15]) == SL_OFPX_STATE_DUMP_REPLY &&
	    (msg[19] & SL_OFPX_STATE_REPLY_MORE))
		return 1;
	if (msg[1] == SL_OFPT_MULTIPART_REPLY) {
		struct sl_ofp_mp_reply r;
		if (sl_ofp_mp_reply_decode(msg, len, &r, &pe) < 0) {
			w->done = true;
			w->rc = fail(w->err, w->err_size, -EBADMSG,
				     "malformed multipart reply from %s", rw->target);
			return 1;
		}
		if (r.flags & SL_OFPMPF_REPLY_MORE)
			return 1;
	}
	w->done = true;
	w->rc = 0;
	return 1;
}

int
sl_ctl_of_request(struct sl_ctl_of *c, const void *req, size_t len, sl_ctl_of_reply_fn fn,
		  void *arg, struct sl_ofp_error *refused, char *err, size_t err_size)
{
	struct req_waiter rw = {
		.w = {.handle = req_handle, .err = err, .err_size = err_size},
		.fn = fn,
		.arg = arg,
		.refused = refused,
		.target = c->target,
	};
	int rc;

	if (count_msgs(req, len) != 1)
		return fail(err, err_size, -EINVAL, "request is not one OpenFlow message");
	rw.xid = msg_xid(req);
	c->ext = req;
	c->ext_len = len;
	c->ext_off = 0;
	rc = pump(c, &rw.w);
	/* Never keep a pointer to the caller's buffer past the call. */
	c->ext = NULL;
	c->ext_len = c->ext_off = 0;
	return rc;
}

/*
 * Batches.
 */

struct batch_waiter {
	struct waiter w;
	uint32_t barrier_xid;
	sl_ctl_of_error_fn on_error;
	void *arg;
	unsigned n_errors;
	const char *target;
};

static int
batch_handle(struct waiter *w, const uint8_t *msg, size_t len)
{
	struct batch_waiter *bw = (struct batch_waiter *)w;
	struct sl_ofp_error e, pe;

	if (msg[1] == SL_OFPT_ERROR) {
		const uint8_t *data;
		size_t n;

		if (sl_ofp_error_decode(msg, len, &e, &data, &n, &pe) < 0) {
			w->done = true;
			w->rc = fail(w->err, w->err_size, -EBADMSG, "malformed OFPT_ERROR from %s",
				     bw->target);
			return 1;
		}
		bw->n_errors++;
		if (bw->on_error)
			bw->on_error(bw->arg, msg_xid(msg), &e, data, n);
		return 1;
	}
	if (msg[1] == SL_OFPT_BARRIER_REPLY && msg_xid(msg) == bw->barrier_xid) {
		w->done = true;
		w->rc = 0;
		return 1;
	}
	return 0;
}

int
sl_ctl_of_batch(struct sl_ctl_of *c, const void *msgs, size_t len, sl_ctl_of_error_fn on_error,
		void *arg, unsigned *n_errors, char *err, size_t err_size)
{
	struct batch_waiter bw = {
		.w = {.handle = batch_handle, .err = err, .err_size = err_size},
		.on_error = on_error,
		.arg = arg,
		.target = c->target,
	};
	int rc;

	if (n_errors)
		*n_errors = 0;
	if (count_msgs(msgs, len) < 0)
		return fail(err, err_size, -EINVAL, "batch is not whole OpenFlow messages");
	bw.barrier_xid = sl_ctl_of_next_xid(c);
	if (sl_ofp_empty_encode(&c->tail, SL_OFPT_BARRIER_REQUEST, bw.barrier_xid) < 0)
		return fail(err, err_size, -ENOMEM, "out of memory");
	c->ext = len ? msgs : NULL;
	c->ext_len = len;
	c->ext_off = 0;
	rc = pump(c, &bw.w);
	c->ext = NULL;
	c->ext_len = c->ext_off = 0;
	if (n_errors)
		*n_errors = bw.n_errors;
	return rc;
}
