/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path (tools): the DPDK telemetry client, and where an instance's
 * sockets are.
 *
 * Protocol (DPDK 22.11 lib/telemetry, "v2"): SOCK_SEQPACKET, so each
 * request and each reply is one packet and needs no framing.  The server
 * writes the greeting as soon as it accepts; a server that has too many
 * clients closes the socket instead.  A reply never exceeds the greeting's
 * max_output_len; recv() with MSG_TRUNC returns a packet's real length, so
 * a larger (hostile) one is detected instead of silently cut.
 */
#include "ctl.h"
#include "ctl_priv.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Bounds on what we accept as max_output_len (DPDK 22.11 uses 16 KiB). */
#define MAX_OUTPUT_MIN 1024u
#define MAX_OUTPUT_MAX (1u << 24)
#define GREETING_MAX 4096

struct sl_ctl_tel {
	int fd;
	int timeout_ms;
	size_t max_output;
	char path[108];
};

/*
 * Instance names and paths.
 */

static bool
name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 64 || name[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

int
sl_ctl_default_target(const char *name, char *buf, size_t size)
{
	if (!name_valid(name))
		return -EINVAL;
	if ((size_t)snprintf(buf, size, "unix:/run/sluice/%s.mgmt", name) >= size)
		return -ENAMETOOLONG;
	return 0;
}

int
sl_ctl_default_telemetry(const char *name, char *buf, size_t size)
{
	const char *base = "/var/run";

	if (!name_valid(name))
		return -EINVAL;
	/* eal_get_runtime_dir(): /var/run for root, else $XDG_RUNTIME_DIR or /tmp. */
	if (getuid() != 0) {
		const char *xdg = getenv("XDG_RUNTIME_DIR");
		base = xdg && xdg[0] ? xdg : "/tmp";
	}
	if ((size_t)snprintf(buf, size, "%s/dpdk/%s/dpdk_telemetry.v2", base, name) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * Packets.
 */

/* Wait for one packet and return it malloc'd (NUL-terminated). */
static int
recv_packet(struct sl_ctl_tel *t, size_t max, char **out, size_t *out_len, char *err,
	    size_t err_size)
{
	struct pollfd pfd = {.fd = t->fd, .events = POLLIN};
	char *buf;
	ssize_t r;
	int rc;

	do
		rc = poll(&pfd, 1, t->timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return fail(err, err_size, -errno, "poll: %s", strerror(errno));
	if (rc == 0)
		return fail(err, err_size, -ETIMEDOUT, "no reply on %s within %d ms", t->path,
			    t->timeout_ms);
	buf = malloc(max + 1);
	if (buf == NULL)
		return fail(err, err_size, -ENOMEM, "out of memory");
	do
		r = recv(t->fd, buf, max, MSG_TRUNC);
	while (r < 0 && errno == EINTR);
	if (r <= 0) {
		rc = r == 0 || errno == ECONNRESET ? -ECONNRESET : -errno;
		free(buf);
		return fail(err, err_size, rc, "%s: %s", t->path,
			    rc == -ECONNRESET ? "connection closed by the server" : strerror(-rc));
	}
	if ((size_t)r > max) {
		free(buf);
		return fail(err, err_size, -EMSGSIZE,
			    "%s: reply of %zd bytes exceeds the announced maximum of %zu", t->path,
			    r, max);
	}
	buf[r] = '\0';
	*out = buf;
	if (out_len)
		*out_len = (size_t)r;
	return 0;
}

int
sl_ctl_tel_open(const char *path, int timeout_ms, struct sl_ctl_tel **out, char *err,
		size_t err_size)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct sl_ctl_json_doc *doc = NULL;
	const struct sl_ctl_json *root;
	struct sl_ctl_tel *t;
	char jerr[160], *greeting = NULL;
	size_t glen;
	uint64_t max;
	int rc;

	*out = NULL;
	if (strlen(path) >= sizeof(sa.sun_path))
		return fail(err, err_size, -ENAMETOOLONG, "telemetry socket path too long: %s",
			    path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return fail(err, err_size, -ENOMEM, "out of memory");
	t->timeout_ms = timeout_ms;
	snprintf(t->path, sizeof(t->path), "%s", path);
	t->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (t->fd < 0) {
		rc = fail(err, err_size, -errno, "socket: %s", strerror(errno));
		goto free_tel;
	}
	if (connect(t->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = fail(err, err_size, -errno, "cannot connect to telemetry socket %s: %s", path,
			  strerror(errno));
		goto close_fd;
	}
	if ((rc = recv_packet(t, GREETING_MAX, &greeting, &glen, err, err_size)) < 0) {
		if (rc == -ECONNRESET)
			fail(err, err_size, rc,
			     "%s closed the connection before its greeting (too many clients?)",
			     path);
		goto close_fd;
	}
	if (sl_ctl_json_parse(greeting, glen, NULL, &doc, jerr, sizeof(jerr)) < 0) {
		rc = fail(err, err_size, -EBADMSG, "%s: greeting is not JSON (%s)", path, jerr);
		goto free_greeting;
	}
	root = sl_ctl_json_root(doc);
	if (!sl_ctl_json_u64(sl_ctl_json_get(root, "max_output_len"), &max) ||
	    max < MAX_OUTPUT_MIN || max > MAX_OUTPUT_MAX) {
		rc = fail(err, err_size, -EBADMSG,
			  "%s: greeting without a valid max_output_len (is it a DPDK telemetry "
			  "v2 socket?)",
			  path);
		goto free_doc;
	}
	t->max_output = max;
	sl_ctl_json_free(doc);
	free(greeting);
	*out = t;
	return 0;

free_doc:
	sl_ctl_json_free(doc);
free_greeting:
	free(greeting);
close_fd:
	close(t->fd);
free_tel:
	free(t);
	return rc;
}

void
sl_ctl_tel_close(struct sl_ctl_tel *t)
{
	if (t == NULL)
		return;
	close(t->fd);
	free(t);
}

size_t
sl_ctl_tel_max_output(const struct sl_ctl_tel *t)
{
	return t->max_output;
}

int
sl_ctl_tel_raw(struct sl_ctl_tel *t, const char *request, char **reply, size_t *len, char *err,
	       size_t err_size)
{
	size_t n = strlen(request);
	ssize_t w;

	*reply = NULL;
	if (n == 0 || n > SL_CTL_TEL_REQUEST_MAX)
		return fail(err, err_size, -EINVAL, "telemetry request of %zu bytes: must be 1..%d",
			    n, SL_CTL_TEL_REQUEST_MAX);
	do
		w = send(t->fd, request, n, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return fail(err, err_size, errno == EPIPE ? -ECONNRESET : -errno, "%s: send: %s",
			    t->path, strerror(errno));
	return recv_packet(t, t->max_output, reply, len, err, err_size);
}

/* An {"error": TEXT} object: copy TEXT (sanitized) to @err. */
static bool
is_error(const struct sl_ctl_json *v, char *err, size_t err_size)
{
	const struct sl_ctl_json *e = sl_ctl_json_get(v, "error");
	char text[256];

	if (e == NULL)
		return false;
	if (e->type == SL_CTL_JSON_STRING)
		sl_ctl_sanitize(text, sizeof(text), e->str, e->str_len);
	else
		snprintf(text, sizeof(text), "(error without a text)");
	fail(err, err_size, 0, "%s", text);
	return true;
}

int
sl_ctl_tel_call(struct sl_ctl_tel *t, const char *cmd, const char *params,
		struct sl_ctl_json_doc **doc, const struct sl_ctl_json **value, char *err,
		size_t err_size)
{
	char request[SL_CTL_TEL_REQUEST_MAX + 2], jerr[160], *reply;
	const struct sl_ctl_json *root, *v;
	size_t len;
	int rc;

	*doc = NULL;
	*value = NULL;
	if (cmd[0] != '/' || strchr(cmd, ',') || strlen(cmd) > SL_CTL_TEL_CMD_MAX)
		return fail(err, err_size, -EINVAL,
			    "bad telemetry command '%s': must start with '/', have no ',' and at "
			    "most %d characters",
			    cmd, SL_CTL_TEL_CMD_MAX);
	if ((size_t)snprintf(request, sizeof(request), params ? "%s,%s" : "%s", cmd,
			     params ? params : "") > SL_CTL_TEL_REQUEST_MAX)
		return fail(err, err_size, -EINVAL, "telemetry request longer than %d bytes",
			    SL_CTL_TEL_REQUEST_MAX);
	if ((rc = sl_ctl_tel_raw(t, request, &reply, &len, err, err_size)) < 0)
		return rc;
	rc = sl_ctl_json_parse(reply, len, NULL, doc, jerr, sizeof(jerr));
	free(reply);
	if (rc < 0)
		return fail(err, err_size, -EBADMSG, "%s: reply to %s is not JSON (%s)", t->path,
			    cmd, jerr);
	root = sl_ctl_json_root(*doc);
	if (root->type != SL_CTL_JSON_OBJECT) {
		rc = fail(err, err_size, -EBADMSG, "%s: reply to %s is not a JSON object", t->path,
			  cmd);
		goto free_doc;
	}
	if (is_error(root, err, err_size))
		return -EREMOTEIO;
	v = sl_ctl_json_get(root, cmd);
	if (v == NULL) {
		rc = fail(err, err_size, -EBADMSG, "%s: reply has no member \"%s\"", t->path, cmd);
		goto free_doc;
	}
	*value = v;
	if (v->type == SL_CTL_JSON_NULL)
		return fail(err, err_size, -EOPNOTSUPP,
			    "the switch answered null to %s: unknown command, or it failed", cmd);
	if (v->type == SL_CTL_JSON_OBJECT && is_error(v, err, err_size))
		return -EREMOTEIO;
	return 0;

free_doc:
	sl_ctl_json_free(*doc);
	*doc = NULL;
	return rc;
}
