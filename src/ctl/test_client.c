/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_client: the OpenFlow and telemetry clients against scripted fake
 * servers running in a thread of this process (Unix sockets under /tmp).
 *
 * OpenFlow: hello negotiation (good, no 1.3, error instead of hello),
 * echo requests answered mid-request, asynchronous and stale messages
 * ignored, multipart continuations collected, OFPT_ERROR -> -EREMOTEIO with
 * its name, batches with errors matched by xid, a 20,000-message batch
 * whose every message draws an error (a deadlock if sending and receiving
 * were not interleaved), timeouts, a closed connection, a malformed length,
 * bad targets.
 *
 * Telemetry: greeting, replies, {"error"} at both levels, null replies,
 * replies larger than announced, garbage, a server closing early.
 */
#include "ctl.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../core/sl_test.h"

static char sock_path[108];

static int
listen_unix(const char *path, int type)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, type, 0);

	SL_VERIFY(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	SL_VERIFY(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	SL_VERIFY(listen(fd, 4) == 0);
	return fd;
}

static int
read_full(int fd, uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static void
write_full(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		b += w;
		n -= (size_t)w;
	}
}

/* Read one OpenFlow message into @m (65535 bytes); returns its length or -1. */
static int
read_msg(int fd, uint8_t *m)
{
	size_t len;

	if (read_full(fd, m, 8) < 0)
		return -1;
	len = (size_t)m[2] << 8 | m[3];
	if (len < 8 || read_full(fd, m + 8, len - 8) < 0)
		return -1;
	return (int)len;
}

static uint32_t
xid_of(const uint8_t *m)
{
	return (uint32_t)m[4] << 24 | (uint32_t)m[5] << 16 | (uint32_t)m[6] << 8 | m[7];
}

static void
send_buf(int fd, struct sl_ofp_buf *b)
{
	write_full(fd, b->data, b->len);
	sl_ofp_buf_reset(b);
}

/*
 * The fake switch: one connection per mode.
 */
enum mode {
	M_NORMAL,    /* hello, then serve features / multipart / error / batch requests */
	M_NO_13,     /* hello advertising only OpenFlow 1.0 */
	M_HELLO_ERR, /* an error instead of a hello */
	M_SILENT,    /* hello, then never answer */
	M_CLOSE,     /* hello, then close after the first request */
	M_BAD_LEN,   /* hello, then a message with length 4 */
};

struct fake_sw {
	int lfd;
	enum mode mode;
	unsigned echo_replies_seen;
	unsigned msgs_seen;
};

static void
serve_normal(struct fake_sw *fs, int fd)
{
	static uint8_t m[65536];
	struct sl_ofp_buf b;
	int len;

	sl_ofp_buf_init(&b);
	while ((len = read_msg(fd, m)) > 0) {
		uint32_t xid = xid_of(m);
		fs->msgs_seen++;
		switch (m[1]) {
		case SL_OFPT_ECHO_REPLY:
			if (xid == 0x77 && len == 12 && memcmp(m + 8, "ping", 4) == 0)
				fs->echo_replies_seen++;
			break;
		case SL_OFPT_FEATURES_REQUEST: {
			struct sl_ofp_features f = {.datapath_id = 0xabc, .n_tables = 254};
			/* An echo request, an async message and a stale reply come first. */
			sl_ofp_echo_request_encode(&b, 0x77, "ping", 4);
			sl_ofp_empty_encode(&b, SL_OFPT_BARRIER_REPLY, xid + 1000);
			sl_ofp_features_reply_encode(&b, 0, &f);
			sl_ofp_features_reply_encode(&b, xid, &f);
			send_buf(fd, &b);
			break;
		}
		case SL_OFPT_MULTIPART_REQUEST: {
			/* Port stats in three messages, with a foreign message in between. */
			struct sl_ofp_mp_writer w;
			uint16_t type = (uint16_t)(m[8] << 8 | m[9]);
			if (type == SL_OFPMP_TABLE) {
				/* An error for this one. */
				struct sl_ofp_error e = {SL_OFPET_BAD_REQUEST,
							 SL_OFPBRC_BAD_TABLE_ID, 0};
				sl_ofp_error_encode(&b, xid, &e, m, (size_t)len);
				send_buf(fd, &b);
				break;
			}
			sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_PORT_STATS, xid, NULL, NULL);
			for (unsigned i = 1; i <= 1200; i++)
				sl_ofp_mp_port_stats_append(
					&w, &(struct sl_ofp_port_stats){.port_no = i});
			sl_ofp_mp_writer_end(&w);
			{
				/* Split the buffer after the first message and insert an echo. */
				size_t first = (size_t)b.data[2] << 8 | b.data[3];
				struct sl_ofp_buf e2;
				sl_ofp_buf_init(&e2);
				sl_ofp_echo_request_encode(&e2, 0x77, "ping", 4);
				write_full(fd, b.data, first);
				write_full(fd, e2.data, e2.len);
				write_full(fd, b.data + first, b.len - first);
				sl_ofp_buf_free(&e2);
				sl_ofp_buf_reset(&b);
			}
			break;
		}
		case SL_OFPT_FLOW_MOD: {
			/* Refuse flow_mods whose cookie is odd: one error each, as we read them. */
			if (m[15] & 1) {
				struct sl_ofp_error e = {SL_OFPET_BAD_ACTION,
							 SL_OFPBAC_BAD_OUT_GROUP, 0};
				sl_ofp_error_encode(&b, xid, &e, m, (size_t)len);
				send_buf(fd, &b);
			}
			break;
		}
		case SL_OFPT_BARRIER_REQUEST:
			sl_ofp_empty_encode(&b, SL_OFPT_BARRIER_REPLY, xid);
			send_buf(fd, &b);
			break;
		default:
			break;
		}
	}
	sl_ofp_buf_free(&b);
}

static void *
fake_sw_main(void *arg)
{
	struct fake_sw *fs = arg;
	static uint8_t m[65536];
	struct sl_ofp_buf b;
	int fd = accept(fs->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	sl_ofp_buf_init(&b);
	switch (fs->mode) {
	case M_NO_13:
		sl_ofp_hello_encode(&b, 1, 1u << 1);
		send_buf(fd, &b);
		read_msg(fd, m);
		break;
	case M_HELLO_ERR: {
		struct sl_ofp_error e = {SL_OFPET_HELLO_FAILED, SL_OFPHFC_EPERM, 0};
		sl_ofp_error_encode(&b, 1, &e, "go away", 7);
		send_buf(fd, &b);
		read_msg(fd, m);
		break;
	}
	default:
		sl_ofp_hello_encode(&b, 1, 1u << SL_OFP_VERSION);
		send_buf(fd, &b);
		if (read_msg(fd, m) < 0 || m[1] != SL_OFPT_HELLO)
			break;
		if (fs->mode == M_NORMAL) {
			serve_normal(fs, fd);
		} else if (fs->mode == M_SILENT) {
			while (read_msg(fd, m) > 0)
				;
		} else if (fs->mode == M_CLOSE) {
			read_msg(fd, m);
		} else if (fs->mode == M_BAD_LEN) {
			read_msg(fd, m);
			write_full(fd, "\x04\x13\x00\x04\x00\x00\x00\x02", 8);
			read_msg(fd, m);
		}
		break;
	}
	sl_ofp_buf_free(&b);
	close(fd);
	return NULL;
}

static pthread_t
fake_start(struct fake_sw *fs, enum mode mode)
{
	pthread_t th;

	memset(fs, 0, sizeof(*fs));
	fs->mode = mode;
	fs->lfd = listen_unix(sock_path, SOCK_STREAM);
	SL_VERIFY(pthread_create(&th, NULL, fake_sw_main, fs) == 0);
	return th;
}

static void
fake_stop(struct fake_sw *fs, pthread_t th)
{
	pthread_join(th, NULL);
	close(fs->lfd);
	unlink(sock_path);
}

struct collect {
	unsigned n_msgs;
	unsigned n_entries;
	uint32_t last_port;
	bool bad;
};

static int
collect_port_stats(void *arg, const uint8_t *msg, size_t len)
{
	struct collect *c = arg;
	struct sl_ofp_mp_reply r;
	struct sl_ofp_port_stats ps;
	struct sl_ofp_error e;

	c->n_msgs++;
	if (sl_ofp_mp_reply_decode(msg, len, &r, &e) < 0 || r.type != SL_OFPMP_PORT_STATS) {
		c->bad = true;
		return -EBADMSG;
	}
	for (size_t ofs = 0; ofs < r.body_len;) {
		if (sl_ofp_port_stats_entry_decode(r.body, r.body_len, &ofs, &ps, &e) < 0) {
			c->bad = true;
			return -EBADMSG;
		}
		c->n_entries++;
		c->last_port = ps.port_no;
	}
	return 0;
}

static int
got_features(void *arg, const uint8_t *msg, size_t len)
{
	struct sl_ofp_error e;

	return sl_ofp_features_reply_decode(msg, len, arg, &e) < 0 ? -EBADMSG : 0;
}

struct batch_log {
	unsigned n;
	uint32_t xids[32];
	uint16_t codes[32];
};

static void
on_batch_error(void *arg, uint32_t xid, const struct sl_ofp_error *e, const uint8_t *data,
	       size_t data_len)
{
	struct batch_log *bl = arg;

	(void)data;
	(void)data_len;
	if (bl->n < 32) {
		bl->xids[bl->n] = xid;
		bl->codes[bl->n] = e->code;
	}
	bl->n++;
}

static void
test_of_normal(void)
{
	struct fake_sw fs;
	pthread_t th = fake_start(&fs, M_NORMAL);
	struct sl_ctl_of *c;
	struct sl_ofp_buf b;
	struct sl_ofp_features f;
	struct sl_ofp_error refused;
	struct collect col = {0};
	struct batch_log bl = {0};
	uint32_t xids[6];
	unsigned n_err;
	char target[128], err[256];
	int rc;

	snprintf(target, sizeof(target), "unix:%s", sock_path);
	rc = sl_ctl_of_open(target, 10000, &c, err, sizeof(err));
	CHECK(rc == 0, "open: %s", err);
	if (rc)
		goto out;
	sl_ofp_buf_init(&b);

	/* Features: the echo is answered, the stale and async messages ignored. */
	sl_ofp_empty_encode(&b, SL_OFPT_FEATURES_REQUEST, sl_ctl_of_next_xid(c));
	memset(&f, 0, sizeof(f));
	rc = sl_ctl_of_request(c, b.data, b.len, got_features, &f, NULL, err, sizeof(err));
	CHECK(rc == 0 && f.datapath_id == 0xabc && f.n_tables == 254, "features: %d %s", rc, err);

	/* Multipart in 3 messages (1200 port entries), an echo between them. */
	sl_ofp_buf_reset(&b);
	sl_ofp_mp_request_encode(
		&b, sl_ctl_of_next_xid(c),
		&(struct sl_ofp_mp_request){.type = SL_OFPMP_PORT_STATS, .port_no = SL_PORT_ANY});
	rc = sl_ctl_of_request(c, b.data, b.len, collect_port_stats, &col, NULL, err, sizeof(err));
	CHECK(rc == 0 && !col.bad && col.n_msgs == 3 && col.n_entries == 1200 &&
		      col.last_port == 1200,
	      "multipart: rc %d %s, %u msgs %u entries", rc, err, col.n_msgs, col.n_entries);

	/* An OFPT_ERROR answer. */
	sl_ofp_buf_reset(&b);
	sl_ofp_mp_request_encode(&b, sl_ctl_of_next_xid(c),
				 &(struct sl_ofp_mp_request){.type = SL_OFPMP_TABLE});
	rc = sl_ctl_of_request(c, b.data, b.len, NULL, NULL, &refused, err, sizeof(err));
	CHECK(rc == -EREMOTEIO && refused.type == SL_OFPET_BAD_REQUEST &&
		      refused.code == SL_OFPBRC_BAD_TABLE_ID &&
		      strcmp(err, "OFPBRC_BAD_TABLE_ID (type 1, code 9)") == 0,
	      "error reply: %d '%s'", rc, err);

	/* A batch of 6 flow_mods, cookies 0..5: the odd ones are refused. */
	sl_ofp_buf_reset(&b);
	for (unsigned i = 0; i < 6; i++) {
		struct sl_ofp_flow_mod fm = {.command = SL_OFPFC_ADD,
					     .buffer_id = SL_OFP_NO_BUFFER,
					     .out_port = SL_PORT_ANY,
					     .out_group = SL_GROUP_ID_ANY};
		sl_flow_spec_init(&fm.spec);
		fm.spec.cookie = i;
		xids[i] = sl_ctl_of_next_xid(c);
		sl_ofp_flow_mod_encode(&b, xids[i], &fm);
	}
	rc = sl_ctl_of_batch(c, b.data, b.len, on_batch_error, &bl, &n_err, err, sizeof(err));
	CHECK(rc == 0 && n_err == 3 && bl.n == 3 && bl.xids[0] == xids[1] &&
		      bl.xids[1] == xids[3] && bl.xids[2] == xids[5] &&
		      bl.codes[0] == SL_OFPBAC_BAD_OUT_GROUP,
	      "batch: rc %d %s, %u errors", rc, err, n_err);

	/* 20,000 messages, each refused: sending and receiving must interleave. */
	sl_ofp_buf_reset(&b);
	for (unsigned i = 0; i < 20000; i++) {
		struct sl_ofp_flow_mod fm = {.command = SL_OFPFC_ADD,
					     .buffer_id = SL_OFP_NO_BUFFER,
					     .out_port = SL_PORT_ANY,
					     .out_group = SL_GROUP_ID_ANY};
		sl_flow_spec_init(&fm.spec);
		fm.spec.cookie = 1;
		sl_ofp_flow_mod_encode(&b, sl_ctl_of_next_xid(c), &fm);
	}
	memset(&bl, 0, sizeof(bl));
	rc = sl_ctl_of_batch(c, b.data, b.len, on_batch_error, &bl, &n_err, err, sizeof(err));
	CHECK(rc == 0 && n_err == 20000, "big batch: rc %d %s, %u errors", rc, err, n_err);

	/* An empty batch is just a barrier. */
	rc = sl_ctl_of_batch(c, NULL, 0, NULL, NULL, &n_err, err, sizeof(err));
	CHECK(rc == 0 && n_err == 0, "empty batch: %d %s", rc, err);

	/* Not one message. */
	rc = sl_ctl_of_request(c, b.data, 7, NULL, NULL, NULL, err, sizeof(err));
	CHECK(rc == -EINVAL, "partial request: %d", rc);
	rc = sl_ctl_of_request(c, b.data, b.len, NULL, NULL, NULL, err, sizeof(err));
	CHECK(rc == -EINVAL, "several messages as one request: %d", rc);
	rc = sl_ctl_of_batch(c, b.data, b.len - 1, NULL, NULL, NULL, err, sizeof(err));
	CHECK(rc == -EINVAL, "batch with a partial message: %d", rc);

	sl_ofp_buf_free(&b);
	sl_ctl_of_close(c);
out:
	fake_stop(&fs, th);
	CHECK(fs.echo_replies_seen == 2, "echo replies seen by the switch: %u",
	      fs.echo_replies_seen);
}

static void
test_of_failures(void)
{
	static const struct {
		enum mode mode;
		int open_rc;    /* expected from open */
		int request_rc; /* expected from a features request when open succeeds */
		const char *msg;
	} cases[] = {
		{M_NO_13, -EPROTO, 0, "does not speak OpenFlow 1.3 (versions bitmap 0x2)"},
		{M_HELLO_ERR, -EPROTO, 0, "refused our hello: OFPHFC_EPERM (type 0, code 1)"},
		{M_SILENT, 0, -ETIMEDOUT, "no reply from unix:"},
		{M_CLOSE, 0, -ECONNRESET, "closed the connection"},
		{M_BAD_LEN, 0, -EBADMSG, "malformed message from unix:"},
	};
	char target[128], err[256];

	snprintf(target, sizeof(target), "unix:%s", sock_path);
	for (unsigned k = 0; k < SL_ARRAY_SIZE(cases); k++) {
		struct fake_sw fs;
		pthread_t th = fake_start(&fs, cases[k].mode);
		struct sl_ctl_of *c = NULL;
		struct sl_ofp_buf b;
		int rc;

		err[0] = '\0';
		/*
		 * A generous wait for the hello: on a loaded machine the fake switch's
		 * thread can be descheduled for longer than a short timeout.  Only the
		 * silent case then waits its request out, with a short timeout again.
		 */
		rc = sl_ctl_of_open(target, 5000, &c, err, sizeof(err));
		if (cases[k].open_rc) {
			CHECK(rc == cases[k].open_rc && c == NULL && strstr(err, cases[k].msg),
			      "case %u open: %d '%s'", k, rc, err);
		} else {
			CHECK(rc == 0, "case %u open: %d '%s'", k, rc, err);
			if (rc != 0) { /* nothing to request on: the check above failed */
				fake_stop(&fs, th);
				continue;
			}
			if (cases[k].request_rc == -ETIMEDOUT)
				sl_ctl_of_set_timeout(c, 300);
			sl_ofp_buf_init(&b);
			sl_ofp_empty_encode(&b, SL_OFPT_FEATURES_REQUEST, sl_ctl_of_next_xid(c));
			rc = sl_ctl_of_request(c, b.data, b.len, NULL, NULL, NULL, err,
					       sizeof(err));
			CHECK(rc == cases[k].request_rc && strstr(err, cases[k].msg),
			      "case %u request: %d '%s'", k, rc, err);
			sl_ofp_buf_free(&b);
			sl_ctl_of_close(c);
		}
		fake_stop(&fs, th);
	}
}

static void
test_of_targets(void)
{
	static const struct {
		const char *target;
		int rc;
		const char *msg;
	} cases[] = {
		{"bogus:x", -EINVAL,
		 "bad target 'bogus:x': expected unix:PATH, tcp:HOST[:PORT] or ssl:HOST[:PORT]"},
		{"ssl:127.0.0.1:6653", -EINVAL,
		 "bad target 'ssl:127.0.0.1:6653': TLS needs a private key"},
		{"unix:", -EINVAL, "empty path"},
		{"unix:/nonexistent/sluice.mgmt", -ENOENT,
		 "cannot connect to unix:/nonexistent/sluice.mgmt: No such file or directory"},
		{"tcp:", -EINVAL, "bad target"},
		{"tcp:127.0.0.1:0", -EINVAL, "bad target"},
		{"tcp:127.0.0.1:70000", -EINVAL, "bad target"},
		{"tcp:127.0.0.1:x", -EINVAL, "bad target"},
		{"tcp:::1", -EINVAL, "tcp:[ADDR]:PORT"},
		{"tcp:[::1", -EINVAL, "bad target"},
		{"tcp:127.0.0.1:1", -ECONNREFUSED, "cannot connect to tcp:127.0.0.1:1"},
		{"tcp:no-such-host.invalid", -EHOSTUNREACH,
		 "cannot resolve 'no-such-host.invalid'"},
	};
	char err[256];

	for (unsigned k = 0; k < SL_ARRAY_SIZE(cases); k++) {
		struct sl_ctl_of *c = NULL;
		int rc;

		err[0] = '\0';
		rc = sl_ctl_of_open(cases[k].target, 500, &c, err, sizeof(err));
		CHECK(rc == cases[k].rc && c == NULL && strstr(err, cases[k].msg),
		      "target '%s': %d '%s'", cases[k].target, rc, err);
	}
}

static void
test_default_paths(void)
{
	char buf[256];

	CHECK(sl_ctl_default_target("sluice", buf, sizeof(buf)) == 0 &&
		      strcmp(buf, "unix:/run/sluice/sluice.mgmt") == 0,
	      "default target '%s'", buf);
	CHECK(sl_ctl_default_target("../x", buf, sizeof(buf)) == -EINVAL, "name with '/'");
	CHECK(sl_ctl_default_target(".hidden", buf, sizeof(buf)) == -EINVAL, "name with '.'");
	CHECK(sl_ctl_default_target("", buf, sizeof(buf)) == -EINVAL, "empty name");
	CHECK(sl_ctl_default_target("sluice", buf, 10) == -ENAMETOOLONG, "small buffer");
	CHECK(sl_ctl_default_telemetry("sw-1", buf, sizeof(buf)) == 0 &&
		      strstr(buf, "/dpdk/sw-1/dpdk_telemetry.v2"),
	      "telemetry path '%s'", buf);
	if (getuid() == 0)
		CHECK(strcmp(buf, "/var/run/dpdk/sw-1/dpdk_telemetry.v2") == 0, "root path '%s'",
		      buf);
}

/*
 * Telemetry.
 */

enum tmode { T_NORMAL, T_CLOSE, T_BAD_GREETING };

struct fake_tel {
	int lfd;
	enum tmode mode;
};

static void *
fake_tel_main(void *arg)
{
	struct fake_tel *ft = arg;
	char req[2048];
	int fd = accept(ft->lfd, NULL, NULL);
	ssize_t n;

	if (fd < 0)
		return NULL;
	if (ft->mode == T_CLOSE) {
		close(fd);
		return NULL;
	}
	if (ft->mode == T_BAD_GREETING) {
		write_full(fd, "{\"version\":\"x\"}", 15);
		n = read(fd, req, sizeof(req));
		close(fd);
		return NULL;
	}
	write_full(fd, "{\"version\":\"DPDK 22.11.1\",\"pid\":42,\"max_output_len\":2048}", 57);
	while ((n = read(fd, req, sizeof(req) - 1)) > 0) {
		char out[4096];
		req[n] = '\0';
		if (strcmp(req, "/sluice/ports") == 0) {
			snprintf(out, sizeof(out),
				 "{\"/sluice/ports\":{\"1\":{\"name\":\"net_pcap0\",\"rx_packets\":"
				 "18446744073709551615}}}");
		} else if (strcmp(req, "/sluice/port,7") == 0) {
			snprintf(out, sizeof(out), "{\"/sluice/port\":{\"error\":\"no port 7\"}}");
		} else if (strcmp(req, "/top/error") == 0) {
			snprintf(out, sizeof(out), "{\"error\":\"\\u001b[31mbusy\"}");
		} else if (strcmp(req, "/unknown") == 0) {
			snprintf(out, sizeof(out), "{\"/unknown\":null}");
		} else if (strcmp(req, "/garbage") == 0) {
			snprintf(out, sizeof(out), "{\"/garbage\": 01}");
		} else if (strcmp(req, "/array") == 0) {
			snprintf(out, sizeof(out), "[1]");
		} else if (strcmp(req, "/other") == 0) {
			snprintf(out, sizeof(out), "{\"/something\": 1}");
		} else if (strcmp(req, "/big") == 0) {
			memset(out, ' ', 3000);
			memcpy(out, "{\"/big\":1}", 10);
			out[3000] = '\0';
		} else if (strcmp(req, "/close") == 0) {
			break;
		} else {
			snprintf(out, sizeof(out), "{\"%s\":{}}", req);
		}
		write_full(fd, out, strlen(out));
	}
	close(fd);
	return NULL;
}

static void
test_tel(void)
{
	static const struct {
		const char *cmd;
		const char *params;
		int rc;
		const char *msg;
	} cases[] = {
		{"/sluice/port", "7", -EREMOTEIO, "no port 7"},
		{"/top/error", NULL, -EREMOTEIO, "?[31mbusy"},
		{"/unknown", NULL, -EOPNOTSUPP, "answered null to /unknown"},
		{"/garbage", NULL, -EBADMSG, "leading zero"},
		{"/array", NULL, -EBADMSG, "not a JSON object"},
		{"/other", NULL, -EBADMSG, "no member \"/other\""},
		{"/big", NULL, -EMSGSIZE, "exceeds the announced maximum of 2048"},
		{"no-slash", NULL, -EINVAL, "must start with '/'"},
		{"/a,b", NULL, -EINVAL, "have no ','"},
		{"/0123456789012345678901234567890123456789012345678901234567890", NULL, -EINVAL,
		 "at most 55"},
		{"/close", NULL, -ECONNRESET, "connection closed by the server"},
	};
	struct fake_tel ft = {.mode = T_NORMAL};
	struct sl_ctl_json_doc *doc;
	const struct sl_ctl_json *v;
	struct sl_ctl_tel *t;
	char err[256], params[1100];
	pthread_t th;
	int rc;

	ft.lfd = listen_unix(sock_path, SOCK_SEQPACKET);
	SL_VERIFY(pthread_create(&th, NULL, fake_tel_main, &ft) == 0);
	rc = sl_ctl_tel_open(sock_path, 5000, &t, err, sizeof(err));
	CHECK(rc == 0 && sl_ctl_tel_max_output(t) == 2048, "tel open: %d %s", rc, err);
	if (rc == 0) {
		rc = sl_ctl_tel_call(t, "/sluice/ports", NULL, &doc, &v, err, sizeof(err));
		CHECK(rc == 0 && v &&
			      sl_ctl_json_get_u64(sl_ctl_json_get(v, "1"), "rx_packets", 0) ==
				      UINT64_MAX,
		      "tel ports: %d %s", rc, err);
		sl_ctl_json_free(doc);
		memset(params, 'x', sizeof(params) - 1);
		params[sizeof(params) - 1] = '\0';
		rc = sl_ctl_tel_call(t, "/p", params, &doc, &v, err, sizeof(err));
		CHECK(rc == -EINVAL && doc == NULL && strstr(err, "longer than 1023"),
		      "long request: %d %s", rc, err);
		for (unsigned k = 0; k < SL_ARRAY_SIZE(cases); k++) {
			err[0] = '\0';
			rc = sl_ctl_tel_call(t, cases[k].cmd, cases[k].params, &doc, &v, err,
					     sizeof(err));
			CHECK(rc == cases[k].rc && strstr(err, cases[k].msg),
			      "tel %s: %d '%s' want '%s'", cases[k].cmd, rc, err, cases[k].msg);
			sl_ctl_json_free(doc);
		}
		sl_ctl_tel_close(t);
	}
	pthread_join(th, NULL);
	close(ft.lfd);

	/* A server that closes at once (DPDK with too many clients), a bad greeting. */
	for (unsigned k = 0; k < 2; k++) {
		ft.mode = k ? T_BAD_GREETING : T_CLOSE;
		ft.lfd = listen_unix(sock_path, SOCK_SEQPACKET);
		SL_VERIFY(pthread_create(&th, NULL, fake_tel_main, &ft) == 0);
		rc = sl_ctl_tel_open(sock_path, 5000, &t, err, sizeof(err));
		CHECK(k ? rc == -EBADMSG && strstr(err, "max_output_len")
			: rc == -ECONNRESET && strstr(err, "before its greeting"),
		      "tel mode %u: %d %s", k, rc, err);
		pthread_join(th, NULL);
		close(ft.lfd);
	}
	unlink(sock_path);

	rc = sl_ctl_tel_open("/nonexistent/dpdk_telemetry.v2", 100, &t, err, sizeof(err));
	CHECK(rc == -ENOENT && strstr(err, "/nonexistent/dpdk_telemetry.v2: No such file"),
	      "tel missing socket: %d %s", rc, err);
}

int
main(void)
{
	snprintf(sock_path, sizeof(sock_path), "/tmp/test_ctl_%d.sock", (int)getpid());
	test_of_normal();
	test_of_failures();
	test_of_targets();
	test_default_paths();
	test_tel();
	unlink(sock_path);
	return sl_test_summary();
}
