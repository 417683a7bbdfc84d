/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl: the OpenFlow plumbing: connecting (TLS included), failures as exit
 * codes, multipart requests, the switch's ports and port names (control path).
 */
#include "sluicectl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit code and message for a failure to reach the switch over OpenFlow. */
static int
of_unreachable(int rc, const char *err)
{
	if (rc == -EINVAL)
		return usage_error("%s", err);
	errmsg("%s", err);
	/* -EPROTO: something answered but refused us (TLS, hello): running, then. */
	if (rc != -EPROTO)
		fprintf(stderr, "sluicectl: is the switch running? Pick it with --name NAME or "
				"--target unix:PATH|tcp:HOST[:PORT]|ssl:HOST[:PORT]\n");
	return EXIT_UNREACHABLE;
}

static struct sl_tls_ctx *tls_ctx;

static void
tls_ctx_free(void)
{
	sl_tls_ctx_destroy(tls_ctx);
	tls_ctx = NULL;
}

/* The TLS context of ssl: targets, loaded once; exit code on a configuration error. */
static int
tls_load(void)
{
	const struct sl_tls_files *f = &o.tls;
	char err[ERR_MAX];

	if (tls_ctx != NULL)
		return 0;
	if (f->private_key == NULL || f->certificate == NULL || f->ca_cert == NULL)
		return usage_error("%s: TLS needs -p/--private-key, -c/--certificate and "
				   "-C/--ca-cert (%s is missing)",
				   o.target,
				   f->private_key == NULL   ? "--private-key"
				   : f->certificate == NULL ? "--certificate"
							    : "--ca-cert");
	if (sl_tls_ctx_create(f, &tls_ctx, err, sizeof(err)) < 0)
		return usage_error("TLS: %s", err);
	atexit(tls_ctx_free);
	return 0;
}

int
of_connect(struct sl_ctl_of **c)
{
	char err[ERR_MAX];
	int rc, ex;

	if (strncmp(o.target, "ssl:", 4) == 0 && (ex = tls_load()) != 0)
		return ex;
	rc = sl_ctl_of_open_tls(o.target, tls_ctx, o.timeout_ms, c, err, sizeof(err));
	return rc < 0 ? of_unreachable(rc, err) : 0;
}

/* Exit code for a failed request or batch (after connecting). */
int
of_failed(const char *what, int rc, const char *err)
{
	switch (rc) {
	case -EREMOTEIO:
		errmsg("%s: the switch refused: %s", what, err);
		return EXIT_REFUSED;
	case -ETIMEDOUT:
	case -ECONNRESET:
	case -EPIPE:
		errmsg("%s: %s", what, err);
		return EXIT_UNREACHABLE;
	default:
		errmsg("%s: %s", what, err[0] ? err : strerror(-rc));
		return EXIT_REFUSED;
	}
}

/* Send one multipart request of @type (body from @req) and feed every reply message to @fn. */
int
of_multipart(struct sl_ctl_of *c, struct sl_ofp_mp_request *req, sl_ctl_of_reply_fn fn, void *arg,
	     struct sl_ofp_error *refused, char *err, size_t err_size)
{
	struct sl_ofp_buf b;
	int rc;

	sl_ofp_buf_init(&b);
	if (sl_ofp_mp_request_encode(&b, sl_ctl_of_next_xid(c), req) < 0) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	rc = sl_ctl_of_request(c, b.data, b.len, fn, arg, refused, err, err_size);
	sl_ofp_buf_free(&b);
	return rc;
}

/*
 * Decoding helpers: each reply callback checks the multipart type and
 * decodes the entries, reporting malformed data as -EBADMSG with a message.
 */
int
mp_oom(struct mp_ctx *m)
{
	snprintf(m->err, ERR_MAX, "out of memory");
	return -ENOMEM;
}

int
mp_reply(void *arg, const uint8_t *msg, size_t len)
{
	struct mp_ctx *m = arg;
	struct sl_ofp_mp_reply r;
	struct sl_ofp_error e;

	if (sl_ofp_mp_reply_decode(msg, len, &r, &e) < 0 || r.type != m->type) {
		snprintf(m->err, ERR_MAX, "malformed reply: expected %s, got message type %u",
			 sl_ofp_mp_type_name(m->type), msg[1]);
		return -EBADMSG;
	}
	for (size_t ofs = 0; ofs < r.body_len;) {
		int rc = m->entry(m, r.body, r.body_len, &ofs, &e);
		if (rc == -1) {
			snprintf(m->err, ERR_MAX, "malformed %s entry at byte %zu: %s",
				 sl_ofp_mp_type_name(m->type), ofs, sl_ofp_error_name(&e));
			return -EBADMSG;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int
port_desc_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
		struct sl_ofp_error *e)
{
	struct port_list *pl = m->user;
	struct sl_ofp_port_desc *p = sl_vec_push(pl);

	if (p == NULL)
		return mp_oom(m);
	if (sl_ofp_port_desc_entry_decode(body, len, ofs, p, e) < 0) {
		pl->n--;
		return -1;
	}
	return 0;
}

int
get_ports(struct sl_ctl_of *c, struct port_list *pl, char *err)
{
	struct mp_ctx m = {
		.type = SL_OFPMP_PORT_DESC, .err = err, .entry = port_desc_entry, .user = pl};

	return of_multipart(c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_PORT_DESC}, mp_reply,
			    &m, NULL, err, ERR_MAX);
}

const char *
port_name_of(const struct port_list *pl, uint32_t port_no)
{
	for (size_t i = 0; i < pl->n; i++)
		if (pl->v[i].port_no == port_no)
			return pl->v[i].name;
	return NULL;
}

/*
 * Port names (ovs-ofctl --names): flows, filters and groups may name a port
 * wherever they take a number, and --names prints names.  The switch's port
 * descriptions are read once, when first needed, so a command without names
 * costs no request.
 */
static struct {
	bool loaded;
	int ex; /* exit code of a failed read, else 0 */
	struct port_list pl;
} portmap;

/* Read the port names over @c, or over a connection of their own when @c is NULL. */
int
portmap_load(struct sl_ctl_of *c)
{
	struct sl_ctl_of *own = NULL;
	char err[ERR_MAX] = "";
	int rc;

	if (portmap.loaded)
		return portmap.ex;
	portmap.loaded = true;
	if (c == NULL) {
		if ((portmap.ex = of_connect(&own)) != 0)
			return portmap.ex;
		c = own;
	}
	if ((rc = get_ports(c, &portmap.pl, err)) < 0)
		portmap.ex = of_failed("port description request", rc, err);
	sl_ctl_of_close(own);
	return portmap.ex;
}

static int
portmap_to_number(void *arg, const char *name, size_t len, uint32_t *port)
{
	(void)arg;
	if (portmap_load(NULL) != 0)
		return -ENOENT;
	for (size_t i = 0; i < portmap.pl.n; i++) {
		const char *n = portmap.pl.v[i].name;
		if (strlen(n) == len && memcmp(n, name, len) == 0) {
			*port = portmap.pl.v[i].port_no;
			return 0;
		}
	}
	return -ENOENT;
}

static const char *
portmap_to_name(void *arg, uint32_t port)
{
	(void)arg;
	return portmap.loaded && portmap.ex == 0 ? port_name_of(&portmap.pl, port) : NULL;
}

int
portmap_error(void)
{
	return portmap.ex;
}

/* Names read in every flow, filter and group; printed with --names only (out_names()). */
const struct sl_port_names in_names = {portmap_to_number, portmap_to_name, NULL};

const struct sl_port_names *
out_names(void)
{
	return o.names ? &in_names : NULL;
}
