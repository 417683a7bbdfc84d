/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tls: TLS sessions over non-blocking sockets (control path only), on OpenSSL.
 *
 * The OpenFlow channel's ssl:/pssl: targets (ofconn) and the tools' client
 * (ctl, sluicectl --target ssl:) share it.  It knows nothing of OpenFlow: it
 * turns a connected socket into a byte stream that is encrypted and
 * authenticated, with the same non-blocking contract as send(2)/recv(2):
 * a call that cannot make progress returns -EAGAIN, and sl_tls_events() says
 * which poll(2) event lets the next attempt progress (TLS may have to read
 * to write, or write to read, during the handshake).
 *
 * ----------------------------------------------------------------------------
 * Policy (the same for both ends, as ovs-vswitchd and ovs-ofctl do it)
 * ----------------------------------------------------------------------------
 *   - Mutual authentication, always: each side presents its certificate and
 *     checks that the peer's chains to the CA certificate given with
 *     sl_tls_files.ca_cert.  A peer without a certificate, or with one from
 *     another CA, fails the handshake.  Names in the certificate are not
 *     checked (OVS does not either): the CA decides who may connect, so give
 *     it to no one else.
 *   - TLS 1.2 and 1.3 only; renegotiation refused; no session resumption
 *     (each connection does a full handshake and certificate check).
 *   - OpenSSL's default cipher suites and security level.
 *   - SIGPIPE is never raised: the sockets are written with MSG_NOSIGNAL.
 *
 * ----------------------------------------------------------------------------
 * Use
 * ----------------------------------------------------------------------------
 *   sl_tls_ctx_create()     once, at start: loads and checks the three files.
 *   sl_tls_open()           per connected socket (client or server side).
 *   sl_tls_handshake()      until it returns 0 (poll for sl_tls_events());
 *                           sl_tls_error() says why one failed.
 *   sl_tls_send()/recv()    like send/recv; partial writes happen.  A send
 *                           that returned -EAGAIN must be retried with the
 *                           same bytes first (more may follow them; the
 *                           buffer may move): an output queue that only
 *                           grows at its tail does this by itself.
 *   sl_tls_pending()        bytes already decrypted and buffered: read them
 *                           without waiting for poll(), which cannot see them.
 *   sl_tls_shutdown()       close_notify (best effort), then close the fd.
 *   sl_tls_close()          frees the session; the caller closes the fd.
 *
 * Concurrency: a context may be shared by sessions of one thread; a session
 * belongs to the thread that uses its socket.  Nothing here blocks or logs.
 */
#ifndef SL_TLS_H
#define SL_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/** The three PEM files of one end (paths; options --private-key, --certificate, --ca-cert). */
struct sl_tls_files {
	const char *private_key; /* This end's private key. */
	const char *certificate; /* This end's certificate (a chain may follow it). */
	const char *ca_cert;     /* CA certificate(s) the peer's certificate must chain to. */
};

struct sl_tls_ctx;
struct sl_tls;

/**
 * Load the key, certificate and CA certificate and check that they belong
 * together.  The context serves both client and server sessions.
 *
 * @param f         The files; all three are required.
 * @param out       Receives the context.
 * @param err       Receives a message naming the file and what is wrong with
 *                  it, e.g. "private key /etc/sl/key.pem: No such file or
 *                  directory", "certificate /x.pem: not a PEM certificate
 *                  (no start line)", "private key a.pem does not match
 *                  certificate b.pem".  May be NULL.
 * @param err_size  Size of @err.
 * @return 0; -EINVAL if a path is missing or a file's content is not usable;
 *         the open(2) errno of a file that cannot be read (-ENOENT,
 *         -EACCES ...); -ENOMEM.
 * Thread-safety: init only.
 */
int sl_tls_ctx_create(const struct sl_tls_files *f, struct sl_tls_ctx **out, char *err,
		      size_t err_size);

/** Free a context (NULL-safe) after every session made from it was closed.  Init only. */
void sl_tls_ctx_destroy(struct sl_tls_ctx *ctx);

/**
 * Start a session on the connected, non-blocking stream socket @fd.  No I/O
 * happens until sl_tls_handshake().
 *
 * @param server  Accepted socket (true) or one we connected (false).
 * @return 0; -ENOMEM.
 * Thread-safety: the socket's thread.
 */
int sl_tls_open(struct sl_tls_ctx *ctx, int fd, bool server, struct sl_tls **out);

/** Free a session (NULL-safe); does not close its socket.  The socket's thread. */
void sl_tls_close(struct sl_tls *t);

/**
 * Advance the handshake.
 *
 * @return 0 once done (then sl_tls_version() and sl_tls_peer_subject() are
 *         set); -EAGAIN to wait for sl_tls_events(); -EPROTO for a failed
 *         handshake (sl_tls_error() says why); -ECONNRESET if the peer
 *         closed the connection; another -errno from the socket.
 * Thread-safety: the socket's thread.
 */
int sl_tls_handshake(struct sl_tls *t);

/**
 * Read decrypted bytes, like recv(2).
 *
 * @return bytes read (> 0); 0 at the end of the stream (the peer's
 *         close_notify, or its FIN without one); -EAGAIN; -EPROTO for a TLS
 *         error (a corrupted record, a renegotiation attempt ...); another
 *         -errno from the socket (-ECONNRESET ...).
 * Thread-safety: the socket's thread.
 */
ssize_t sl_tls_recv(struct sl_tls *t, void *buf, size_t len);

/**
 * Encrypt and write up to @len bytes, like send(2) (one record, at most
 * 16 KB, per TLS write).  After -EAGAIN, the next call must start with the
 * same bytes (see "Use" above).
 *
 * @return bytes taken (> 0); -EAGAIN; -EPROTO; another -errno from the
 *         socket (-EPIPE, -ECONNRESET ...).  @len 0 returns 0.
 * Thread-safety: the socket's thread.
 */
ssize_t sl_tls_send(struct sl_tls *t, const void *buf, size_t len);

/**
 * poll(2) events the session waits for: after -EAGAIN from the handshake
 * (whatever @reading and @writing say), or, once established, to make
 * progress reading (@reading) and/or writing (@writing).  A read may need
 * POLLOUT and a write POLLIN while TLS messages of its own are exchanged.
 *
 * Thread-safety: the socket's thread.
 */
short sl_tls_events(const struct sl_tls *t, bool reading, bool writing);

/** Decrypted bytes buffered in the session, readable without poll().  Socket's thread. */
size_t sl_tls_pending(const struct sl_tls *t);

/**
 * Send close_notify if the socket takes it now (best effort: the caller
 * then shuts the socket down or closes it either way).  Reading stays
 * possible until the peer's close_notify or EOF.  Socket's thread.
 */
void sl_tls_shutdown(struct sl_tls *t);

/**
 * Why the last call returned -EPROTO (or a socket error): OpenSSL's reason,
 * with the certificate verification result when that was the cause, e.g.
 * "certificate verify failed (unable to get local issuer certificate)",
 * "peer did not return a certificate", "tlsv1 alert unknown ca" (the peer
 * refused our certificate), "wrong version number" (the peer does not speak
 * TLS).  "" when nothing failed.  Valid until the next call.  Socket's thread.
 */
const char *sl_tls_error(const struct sl_tls *t);

/** Negotiated protocol ("TLSv1.3"), or "" before the handshake ends.  Socket's thread. */
const char *sl_tls_version(const struct sl_tls *t);

/**
 * The peer certificate's subject as one line ("CN=controller,O=example"),
 * or "" before the handshake ends.  Valid until sl_tls_close().  Socket's thread.
 */
const char *sl_tls_peer_subject(const struct sl_tls *t);

#endif /* SL_TLS_H */
