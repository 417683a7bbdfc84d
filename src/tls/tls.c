/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tls: OpenSSL sessions on non-blocking sockets (control path only).
 *
 * Sessions read and write their socket through a BIO of our own instead of
 * OpenSSL's socket BIO: that one writes with plain send(), which raises
 * SIGPIPE when the peer is gone, and a library must not depend on the
 * process ignoring it.  The BIO also remembers EOF, which OpenSSL asks for
 * (BIO_CTRL_EOF) to tell a peer's FIN from an error.
 *
 * Every OpenSSL call is preceded by ERR_clear_error() and errno = 0, so the
 * error queue and errno read after it belong to that call alone.
 */
#include "tls.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "../core/core.h"

struct sl_tls_ctx {
	SSL_CTX *ssl_ctx; /* Key, certificate, CA store and the policy in tls.h. */
	BIO_METHOD *bio;  /* The MSG_NOSIGNAL socket BIO below. */
};

/* What the socket BIO needs: its fd, and whether recv() saw EOF. */
struct sock_io {
	int fd;
	bool eof;
};

struct sl_tls {
	SSL *ssl;
	struct sock_io io; /* The BIO's data. */
	bool done;         /* Handshake finished. */
	short hs_ev;       /* Event the handshake waits for. */
	short rd_ev;       /* Event the next recv waits for (POLLIN, or POLLOUT). */
	short wr_ev;       /* Event the next send waits for (POLLOUT, or POLLIN). */
	char version[16];  /* SSL_get_version() once done. */
	char subject[256]; /* Peer certificate subject once done. */
	char error[192];   /* Reason of the last failure. */
};

/* ------------------------------------------------------------------------- */
/* The socket BIO.                                                           */
/* ------------------------------------------------------------------------- */

static int
bio_write(BIO *b, const char *buf, int len)
{
	struct sock_io *io = BIO_get_data(b);
	ssize_t n;

	BIO_clear_retry_flags(b);
	do {
		n = send(io->fd, buf, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		BIO_set_retry_write(b);
	return (int)n;
}

static int
bio_read(BIO *b, char *buf, int len)
{
	struct sock_io *io = BIO_get_data(b);
	ssize_t n;

	BIO_clear_retry_flags(b);
	do {
		n = recv(io->fd, buf, (size_t)len, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n == 0)
		io->eof = true;
	else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		BIO_set_retry_read(b);
	return (int)n;
}

static long
bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	const struct sock_io *io = BIO_get_data(b);

	(void)num;
	(void)ptr;
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1; /* Nothing is buffered here. */
	case BIO_CTRL_EOF:
		return io != NULL && io->eof;
	default:
		return 0;
	}
}

static int
bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

/* ------------------------------------------------------------------------- */
/* Errors.                                                                   */
/* ------------------------------------------------------------------------- */

/* The first error OpenSSL queued (the cause; later ones only say where it surfaced). */
static const char *
ssl_reason(void)
{
	unsigned long code = ERR_peek_error();
	const char *r = code ? ERR_reason_error_string(code) : NULL;

	return r ? r : "unknown error";
}

/*
 * Map a failed SSL_* call to -EAGAIN (and the event to wait for), 0 for the
 * end of the stream, or -errno, recording the reason in t->error.
 */
static int
io_result(struct sl_tls *t, int ret, int sys_errno, short *ev)
{
	switch (SSL_get_error(t->ssl, ret)) {
	case SSL_ERROR_WANT_READ:
		*ev = POLLIN;
		return -EAGAIN;
	case SSL_ERROR_WANT_WRITE:
		*ev = POLLOUT;
		return -EAGAIN;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	case SSL_ERROR_SYSCALL:
		if (ERR_peek_error() == 0) {
			/* OpenSSL 1.1 reports a FIN without close_notify this way. */
			if (sys_errno == 0 || t->io.eof)
				return 0;
			snprintf(t->error, sizeof t->error, "%s", strerror(sys_errno));
			return -sys_errno;
		}
		/* fallthrough */
	default: {
		long vr = SSL_get_verify_result(t->ssl);

		if (vr != X509_V_OK)
			snprintf(t->error, sizeof t->error, "%s (%s)", ssl_reason(),
				 X509_verify_cert_error_string(vr));
		else
			snprintf(t->error, sizeof t->error, "%s", ssl_reason());
		ERR_clear_error();
		return -EPROTO;
	}
	}
}

/* ------------------------------------------------------------------------- */
/* Context.                                                                  */
/* ------------------------------------------------------------------------- */

/* Never prompt on the terminal for a passphrase: an encrypted key fails to load. */
static int
no_passphrase(char *buf, int size, int rwflag, void *arg)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)arg;
	return 0;
}

/* @path names a readable regular file; the message names it otherwise. */
static int
file_check(const char *what, const char *path, char *err, size_t err_size)
{
	struct stat st;
	int fd, ret = 0;

	if (!path || !path[0]) {
		sl_set_err(err, err_size, "%s: no file given", what);
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		sl_set_err(err, err_size, "%s %s: %s", what, path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		sl_set_err(err, err_size, "%s %s: not a regular file", what, path);
		ret = -EINVAL;
	}
	close(fd);
	return ret;
}

int
sl_tls_ctx_create(const struct sl_tls_files *f, struct sl_tls_ctx **out, char *err, size_t err_size)
{
	STACK_OF(X509_NAME) * ca_names;
	struct sl_tls_ctx *ctx;
	SSL_CTX *sc;
	int ret;

	if ((ret = file_check("private key", f->private_key, err, err_size)) < 0 ||
	    (ret = file_check("certificate", f->certificate, err, err_size)) < 0 ||
	    (ret = file_check("CA certificate", f->ca_cert, err, err_size)) < 0)
		return ret;
	ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		goto no_mem;
	ERR_clear_error();
	sc = ctx->ssl_ctx = SSL_CTX_new(TLS_method());
	ctx->bio = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "sluice socket");
	if (!sc || !ctx->bio)
		goto free_ctx_no_mem;
	BIO_meth_set_write(ctx->bio, bio_write);
	BIO_meth_set_read(ctx->bio, bio_read);
	BIO_meth_set_ctrl(ctx->bio, bio_ctrl);
	BIO_meth_set_create(ctx->bio, bio_create);

	/* The policy of tls.h: 1.2 and 1.3, no renegotiation, no resumption. */
	SSL_CTX_set_min_proto_version(sc, TLS1_2_VERSION);
	SSL_CTX_set_options(sc, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
	/* A FIN without close_notify is an ordinary end of stream, as with TCP. */
	SSL_CTX_set_options(sc, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
	SSL_CTX_set_session_cache_mode(sc, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(sc, 0);
	/*
	 * Partial writes: a send returns after each record instead of holding the
	 * caller until all of @len is out.  Moving buffer: the retry after -EAGAIN
	 * may come from another address (the caller's queue compacts or grows).
	 * No auto retry: a non-application record ends the read with -EAGAIN.
	 */
	SSL_CTX_set_mode(sc, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_clear_mode(sc, SSL_MODE_AUTO_RETRY);
	SSL_CTX_set_verify(sc, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	SSL_CTX_set_default_passwd_cb(sc, no_passphrase);

	if (SSL_CTX_use_certificate_chain_file(sc, f->certificate) != 1) {
		sl_set_err(err, err_size, "certificate %s: not a PEM certificate (%s)",
			   f->certificate, ssl_reason());
		goto free_ctx_inval;
	}
	if (SSL_CTX_use_PrivateKey_file(sc, f->private_key, SSL_FILETYPE_PEM) != 1) {
		/* OpenSSL checks the key against the certificate while loading it. */
		if (ERR_GET_REASON(ERR_peek_error()) == X509_R_KEY_VALUES_MISMATCH)
			sl_set_err(err, err_size, "private key %s does not match certificate %s",
				   f->private_key, f->certificate);
		else
			sl_set_err(err, err_size,
				   "private key %s: not an unencrypted PEM private key (%s)",
				   f->private_key, ssl_reason());
		goto free_ctx_inval;
	}
	if (SSL_CTX_check_private_key(sc) != 1) {
		sl_set_err(err, err_size, "private key %s does not match certificate %s",
			   f->private_key, f->certificate);
		goto free_ctx_inval;
	}
	if (SSL_CTX_load_verify_locations(sc, f->ca_cert, NULL) != 1) {
		sl_set_err(err, err_size, "CA certificate %s: not a PEM certificate (%s)",
			   f->ca_cert, ssl_reason());
		goto free_ctx_inval;
	}
	/* A server names the CAs it accepts, so a client with several certificates picks right. */
	ca_names = SSL_load_client_CA_file(f->ca_cert);
	if (ca_names)
		SSL_CTX_set_client_CA_list(sc, ca_names);
	ERR_clear_error();
	*out = ctx;
	return 0;

free_ctx_inval:
	ERR_clear_error();
	sl_tls_ctx_destroy(ctx);
	return -EINVAL;
free_ctx_no_mem:
	sl_tls_ctx_destroy(ctx);
no_mem:
	sl_set_err(err, err_size, "TLS: out of memory");
	return -ENOMEM;
}

void
sl_tls_ctx_destroy(struct sl_tls_ctx *ctx)
{
	if (!ctx)
		return;
	SSL_CTX_free(ctx->ssl_ctx);
	BIO_meth_free(ctx->bio);
	free(ctx);
}

/* ------------------------------------------------------------------------- */
/* Sessions.                                                                 */
/* ------------------------------------------------------------------------- */

int
sl_tls_open(struct sl_tls_ctx *ctx, int fd, bool server, struct sl_tls **out)
{
	struct sl_tls *t = calloc(1, sizeof *t);
	BIO *bio;

	if (!t)
		return -ENOMEM;
	t->io.fd = fd;
	t->hs_ev = server ? POLLIN : POLLOUT;
	t->rd_ev = POLLIN;
	t->wr_ev = POLLOUT;
	ERR_clear_error();
	t->ssl = SSL_new(ctx->ssl_ctx);
	bio = BIO_new(ctx->bio);
	if (!t->ssl || !bio) {
		BIO_free(bio);
		SSL_free(t->ssl);
		free(t);
		ERR_clear_error();
		return -ENOMEM;
	}
	BIO_set_data(bio, &t->io);
	SSL_set_bio(t->ssl, bio, bio); /* The session owns the BIO (one reference for both). */
	if (server)
		SSL_set_accept_state(t->ssl);
	else
		SSL_set_connect_state(t->ssl);
	*out = t;
	return 0;
}

void
sl_tls_close(struct sl_tls *t)
{
	if (!t)
		return;
	SSL_free(t->ssl);
	ERR_clear_error();
	free(t);
}

/* The peer's subject in RFC 2253 form ("CN=x,O=y"), for logs. */
static void
peer_subject(struct sl_tls *t)
{
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
	X509 *cert = SSL_get1_peer_certificate(t->ssl);
#else
	X509 *cert = SSL_get_peer_certificate(t->ssl);
#endif
	BIO *mem;
	int n;

	t->subject[0] = '\0';
	if (!cert)
		return;
	mem = BIO_new(BIO_s_mem());
	if (mem) {
		X509_NAME_print_ex(mem, X509_get_subject_name(cert), 0,
				   XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
		n = BIO_read(mem, t->subject, sizeof t->subject - 1);
		t->subject[n > 0 ? n : 0] = '\0';
		BIO_free(mem);
	}
	X509_free(cert);
}

int
sl_tls_handshake(struct sl_tls *t)
{
	int ret, sys_errno;

	if (t->done)
		return 0;
	t->error[0] = '\0';
	ERR_clear_error();
	errno = 0;
	ret = SSL_do_handshake(t->ssl);
	sys_errno = errno;
	if (ret == 1) {
		t->done = true;
		snprintf(t->version, sizeof t->version, "%s", SSL_get_version(t->ssl));
		peer_subject(t);
		return 0;
	}
	ret = io_result(t, ret, sys_errno, &t->hs_ev);
	if (ret == 0) {
		snprintf(t->error, sizeof t->error, "connection closed by peer");
		return -ECONNRESET;
	}
	return ret;
}

ssize_t
sl_tls_recv(struct sl_tls *t, void *buf, size_t len)
{
	int ret, sys_errno;

	t->error[0] = '\0';
	ERR_clear_error();
	errno = 0;
	ret = SSL_read(t->ssl, buf, (int)SL_MIN(len, (size_t)INT_MAX));
	sys_errno = errno;
	if (ret > 0) {
		t->rd_ev = POLLIN;
		return ret;
	}
	return io_result(t, ret, sys_errno, &t->rd_ev);
}

ssize_t
sl_tls_send(struct sl_tls *t, const void *buf, size_t len)
{
	int ret, sys_errno;

	if (!len)
		return 0;
	t->error[0] = '\0';
	ERR_clear_error();
	errno = 0;
	ret = SSL_write(t->ssl, buf, (int)SL_MIN(len, (size_t)INT_MAX));
	sys_errno = errno;
	if (ret > 0) {
		t->wr_ev = POLLOUT;
		return ret;
	}
	ret = io_result(t, ret, sys_errno, &t->wr_ev);
	return ret == 0 ? -EPIPE : ret;
}

short
sl_tls_events(const struct sl_tls *t, bool reading, bool writing)
{
	if (!t->done)
		return t->hs_ev;
	return (short)((reading ? t->rd_ev : 0) | (writing ? t->wr_ev : 0));
}

size_t
sl_tls_pending(const struct sl_tls *t)
{
	int n = t->done ? SSL_pending(t->ssl) : 0;

	return n > 0 ? (size_t)n : 0;
}

void
sl_tls_shutdown(struct sl_tls *t)
{
	if (!t->done)
		return;
	ERR_clear_error();
	(void)SSL_shutdown(t->ssl);
	ERR_clear_error();
}

const char *
sl_tls_error(const struct sl_tls *t)
{
	return t->error;
}

const char *
sl_tls_version(const struct sl_tls *t)
{
	return t->version;
}

const char *
sl_tls_peer_subject(const struct sl_tls *t)
{
	return t->subject;
}
