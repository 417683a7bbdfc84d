/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics: the HTTP server of the exporter.  Control path only.
 *
 * Each connection moves READING -> WRITING -> DRAINING -> closed, one step
 * per readiness, never blocking: the control thread also runs OpenFlow and
 * telemetry.  A connection that has not finished within its deadline is
 * closed wherever it is, so a slow or silent client holds a slot for at
 * most SL_METRICS_CLIENT_TIMEOUT_MS (twice: request, then answer).
 */
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "metrics_priv.h"

#define ACCEPTS_PER_ROUND 16
#define DRAIN_MAX 65536 /* bytes read after the answer before giving up on a clean close */

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- The listen address ---- */

/* Split "PORT", "HOST:PORT" or "[HOST]:PORT"; @host gets 127.0.0.1 for a bare port. */
static int
listen_split(const char *target, char *host, size_t host_size, char *port, size_t port_size,
	     char *err, size_t err_size)
{
	const char *colon, *p;
	size_t n;

	if (target == NULL || *target == '\0')
		goto bad;
	if (target[0] == '[') {
		const char *close = strchr(target, ']');
		if (close == NULL || close[1] != ':')
			goto bad;
		n = (size_t)(close - target - 1);
		colon = close + 1;
		if (n == 0 || n >= host_size)
			goto bad;
		memcpy(host, target + 1, n);
		host[n] = '\0';
	} else if ((colon = strrchr(target, ':')) != NULL) {
		n = (size_t)(colon - target);
		if (n == 0 || n >= host_size || memchr(target, ':', n) != NULL)
			goto bad; /* an IPv6 address needs brackets */
		memcpy(host, target, n);
		host[n] = '\0';
	} else {
		snprintf(host, host_size, "127.0.0.1");
		colon = target - 1;
	}
	p = colon + 1;
	n = strlen(p);
	if (n == 0 || n > 5 || n >= port_size || strspn(p, "0123456789") != n || atoi(p) > 65535)
		goto bad;
	memcpy(port, p, n + 1);
	return 0;
bad:
	snprintf(err, err_size, "'%s': expected PORT, ADDR:PORT or [IPV6]:PORT (PORT 0..65535)",
		 target ? target : "");
	return -EINVAL;
}

int
sl_metrics_listen_check(const char *target, char *err, size_t err_size)
{
	char host[256], port[8];

	return listen_split(target, host, sizeof(host), port, sizeof(port), err, err_size);
}

static int
listen_open(const char *target, int *fd_out, char *addr, size_t addr_size, char *err,
	    size_t err_size)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[256], port[8], ip[INET6_ADDRSTRLEN];
	int fd = -1, one = 1, rc, gai;

	rc = listen_split(target, host, sizeof(host), port, sizeof(port), err, err_size);
	if (rc < 0)
		return rc;
	gai = getaddrinfo(host, port, &hints, &res);
	if (gai != 0) {
		snprintf(err, err_size, "'%s': %s", host, gai_strerror(gai));
		return -EINVAL;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		rc = -errno;
		goto fail;
	}
	freeaddrinfo(res);
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
		snprintf(addr, addr_size, "[%s]:%u", ip, ntohs(a->sin6_port));
	} else {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
		snprintf(addr, addr_size, "%s:%u", ip, ntohs(a->sin_port));
	}
	*fd_out = fd;
	return 0;
fail:
	snprintf(err, err_size, "%s:%s: %s", host, port, strerror(-rc));
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return rc;
}

/* ---- Connections ---- */

static void
client_close(struct client *c)
{
	close(c->fd);
	free(c->resp);
	c->resp = NULL;
	c->state = CLIENT_FREE;
}

static const char *
status_text(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 431:
		return "Request Header Fields Too Large";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Internal Server Error";
	}
}

/* Build the answer to @status into c->resp (head + body) and start writing it. */
static void
answer(struct sl_metrics *m, struct client *c, int status)
{
	struct sl_metrics_text text;
	const char *type = "text/plain; charset=utf-8", *body;
	char head[256], msg[128];
	size_t n_body;
	int n_head;

	sl_metrics_text_init(&text);
	if (status == 200) {
		m->scrapes++; /* counted before collecting: the scrape sees itself */
		sl_metrics_collect(m, &text);
		if (text.failed || text.buf == NULL)
			status = 500;
	}
	if (status == 200) {
		type = "text/plain; version=0.0.4; charset=utf-8";
		body = text.buf;
		n_body = text.len;
	} else {
		m->http_errors++;
		n_body = (size_t)snprintf(msg, sizeof(msg), "%d %s: %s\n", status,
					  status_text(status),
					  status == 404   ? "the only resource is /metrics"
					  : status == 405 ? "only GET is served"
							  : "the request was refused");
		body = msg;
	}
	n_head = snprintf(head, sizeof(head),
			  "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
			  "Connection: close\r\n\r\n",
			  status, status_text(status), type, n_body,
			  status == 405 ? "Allow: GET\r\n" : "");
	c->resp = malloc((size_t)n_head + n_body);
	if (c->resp == NULL) {
		sl_metrics_text_free(&text);
		client_close(c);
		return;
	}
	memcpy(c->resp, head, (size_t)n_head);
	memcpy(c->resp + n_head, body, n_body);
	sl_metrics_text_free(&text);
	c->resp_len = (size_t)n_head + n_body;
	c->resp_off = 0;
	c->state = CLIENT_WRITING;
	c->deadline_ms = now_ms() + SL_METRICS_CLIENT_TIMEOUT_MS;
}

static void
client_read(struct sl_metrics *m, struct client *c)
{
	while (c->req_len < sizeof(c->req)) {
		ssize_t n =
			recv(c->fd, c->req + c->req_len, sizeof(c->req) - c->req_len, MSG_DONTWAIT);
		int status;
		if (n == 0 ||
		    (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			client_close(c); /* gone before asking anything complete */
			return;
		}
		if (n < 0)
			return;
		c->req_len += (size_t)n;
		status = sl_metrics_request_parse(c->req, c->req_len);
		if (status != 0) {
			answer(m, c, status);
			return;
		}
	}
}

static void
client_write(struct client *c)
{
	while (c->resp_off < c->resp_len) {
		ssize_t n = send(c->fd, c->resp + c->resp_off, c->resp_len - c->resp_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return;
			client_close(c);
			return;
		}
		c->resp_off += (size_t)n;
	}
	/*
	 * All sent: shut the write side and read what the client still sends
	 * (a body, pipelined requests) until it closes, so our close does not
	 * reset the connection before it has read the answer.
	 */
	free(c->resp);
	c->resp = NULL;
	shutdown(c->fd, SHUT_WR);
	c->state = CLIENT_DRAINING;
	c->resp_off = 0; /* counts drained bytes from here */
}

static void
client_drain(struct client *c)
{
	char buf[4096];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		if (n <= 0 || (c->resp_off += (size_t)n) > DRAIN_MAX) {
			client_close(c);
			return;
		}
	}
}

static void
accept_new(struct sl_metrics *m)
{
	for (unsigned k = 0; k < ACCEPTS_PER_ROUND; k++) {
		struct client *c = NULL;
		int fd = accept4(m->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return; /* EAGAIN, or an error that the next round retries */
		for (unsigned i = 0; i < SL_METRICS_CLIENTS && c == NULL; i++)
			if (m->clients[i].state == CLIENT_FREE)
				c = &m->clients[i];
		if (c == NULL) {
			m->refused++;
			close(fd);
			continue;
		}
		c->fd = fd;
		c->state = CLIENT_READING;
		c->req_len = 0;
		c->resp = NULL;
		c->deadline_ms = now_ms() + SL_METRICS_CLIENT_TIMEOUT_MS;
	}
}

void
sl_metrics_run(struct sl_metrics *m)
{
	uint64_t now;

	if (m == NULL)
		return;
	accept_new(m);
	now = now_ms();
	for (unsigned i = 0; i < SL_METRICS_CLIENTS; i++) {
		struct client *c = &m->clients[i];

		if (c->state == CLIENT_FREE)
			continue;
		if (now >= c->deadline_ms) {
			if (c->state != CLIENT_DRAINING)
				m->timeouts++;
			client_close(c);
			continue;
		}
		if (c->state == CLIENT_READING)
			client_read(m, c);
		if (c->state == CLIENT_WRITING)
			client_write(c);
		if (c->state == CLIENT_DRAINING)
			client_drain(c);
	}
}

/* ---- Life cycle ---- */

int
sl_metrics_create(const struct sl_metrics_params *p, struct sl_metrics **out, char *err,
		  size_t err_size)
{
	struct sl_metrics *m = calloc(1, sizeof(*m));
	struct timespec ts;
	int rc;

	if (m == NULL) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	rc = listen_open(p->listen, &m->listen_fd, m->address, sizeof(m->address), err, err_size);
	if (rc < 0) {
		free(m);
		return rc;
	}
	snprintf(m->switch_name, sizeof(m->switch_name), "%s", p->switch_name);
	m->src = *p->src;
	clock_gettime(CLOCK_REALTIME, &ts);
	m->start_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	*out = m;
	return 0;
}

const char *
sl_metrics_address(const struct sl_metrics *m)
{
	return m->address;
}

void
sl_metrics_destroy(struct sl_metrics *m)
{
	if (m == NULL)
		return;
	for (unsigned i = 0; i < SL_METRICS_CLIENTS; i++)
		if (m->clients[i].state != CLIENT_FREE)
			client_close(&m->clients[i]);
	close(m->listen_fd);
	free(m);
}
