/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofconn: the OpenFlow controller channel (control path only).
 *
 * This component owns the sockets between the switch and its controllers or
 * tools: it listens, accepts, connects out and reconnects, frames the byte
 * stream into OpenFlow messages, negotiates the version and keeps the channel
 * alive.  Everything above the 8-byte OpenFlow header (flow_mod, packet_in,
 * multipart ...) belongs to the caller, which gets whole, length-checked
 * messages through a callback and hands whole encoded messages back to
 * sl_ofconn_send().  It does not depend on DPDK nor on the OpenFlow codec
 * (ofp/): it knows only the header and the few messages a channel needs by
 * itself (HELLO, ECHO_REQUEST/ECHO_REPLY, and the ERROR replies listed below).
 * Sluice speaks OpenFlow 1.3 only (wire version 0x04).
 *
 * ----------------------------------------------------------------------------
 * Targets (sl_ofconn_mgr_add_target), the ovs-vswitchd syntax
 * ----------------------------------------------------------------------------
 *   tcp:HOST[:PORT]      active: connect to a controller; PORT defaults to
 *                        6653.  HOST is a numeric IPv4 address, an IPv6
 *                        address in brackets ("tcp:[::1]:6653") or a host
 *                        name, resolved once, when the target is added.
 *   ssl:HOST[:PORT]      active, as tcp:, with TLS (see "TLS" below).
 *   unix:PATH            active: connect to a unix stream socket.
 *   ptcp:PORT[:IP]       passive: listen on PORT (1..65535, or 0 for an
 *                        ephemeral port, see sl_ofconn_mgr_listen_port());
 *                        IP defaults to 127.0.0.1, since any peer of a
 *                        listener may change every flow: another address
 *                        must be written out ("ptcp:6653:0.0.0.0", "[::]"
 *                        for IPv6).  IP must be numeric.
 *   pssl:PORT[:IP]       passive, as ptcp: (127.0.0.1 by default), with TLS.
 *   punix:PATH           passive: listen on a unix socket; a stale socket
 *                        file at PATH is unlinked first, and the file is
 *                        removed again by sl_ofconn_mgr_destroy().
 * An active target is one controller: the manager keeps (at most) one
 * connection open to it and reconnects with exponential backoff whenever it
 * fails or drops.  A passive target accepts any number of connections
 * (several controllers, or `ovs-ofctl`, which opens a fresh connection per
 * command).  Targets live until sl_ofconn_mgr_del_target() or until the
 * manager is destroyed.
 *
 * ----------------------------------------------------------------------------
 * TLS (ssl:, pssl:)
 * ----------------------------------------------------------------------------
 * params.tls holds the private key, certificate and CA certificate
 * (src/tls/tls.h: mutual authentication, TLS 1.2 or 1.3, no renegotiation);
 * without it ssl:/pssl: targets are refused with -EINVAL.  The handshake runs
 * non-blocking inside sl_ofconn_mgr_poll() before the HELLO exchange and
 * under the same params.hello_timeout_ms.  A peer whose handshake fails (no
 * certificate, one from another CA, plain TCP on a pssl: port) is logged at
 * WARN with TLS's reason, rate-limited, and only that connection ends; for
 * an active target it is a failed attempt, so the reconnect backoff grows
 * exactly as for tcp:.  Everything after the handshake (framing, HELLO,
 * echo, backpressure, graceful close with close_notify) is as for tcp:.
 *
 * ----------------------------------------------------------------------------
 * Connection life cycle
 * ----------------------------------------------------------------------------
 *   1. Socket up (accepted, or a non-blocking connect completed): TCP_NODELAY
 *      is set; ssl:/pssl: connections do their TLS handshake; then our HELLO
 *      (version 0x04, version-bitmap element advertising only 1.3) is sent.
 *   2. The peer's HELLO arrives.  With a bitmap element the highest common
 *      version wins; without one the common version is min(0x04, header
 *      version).  If that is not 0x04 the peer gets ERROR HELLO_FAILED /
 *      INCOMPATIBLE with a text reason and the connection is closed after the
 *      error is flushed.  Any message other than HELLO before this point gets
 *      the same error and close (OVS only logs and drops the connection; the
 *      error text tells the peer why), except an ERROR, which is logged and
 *      closes the connection without a reply.  A peer that does not complete the
 *      exchange within params.hello_timeout_ms is dropped.
 *   3. on_connect fires.  The connection is now "connected": it is counted by
 *      sl_ofconn_mgr_n_connected(), and sl_ofconn_send() accepts messages for
 *      it.
 *   4. Every further complete message is handled here or given to on_message:
 *      - ECHO_REQUEST is answered with an ECHO_REPLY carrying the same xid,
 *        version and payload; ECHO_REPLY only proves liveness.  Neither
 *        reaches on_message.  A repeated HELLO is ignored.
 *      - Any message whose version byte is not the negotiated one (except
 *        HELLO, ECHO and ERROR, which OVS also tolerates) is answered with
 *        ERROR BAD_REQUEST / BAD_VERSION carrying its first 64 bytes, and
 *        the connection stays open.
 *      - Everything else, ERROR messages of any version included, goes to
 *        on_message.
 *      A header whose length field is below 8 gets ERROR BAD_REQUEST /
 *      BAD_LEN with the first 64 bytes received, and the connection is
 *      closed after the error is flushed (the stream cannot be re-framed).
 *   5. The connection ends on EOF, a socket error, a failed keepalive probe
 *      or sl_ofconn_close().  It stops being "connected" at once, and
 *      on_disconnect fires during the same sl_ofconn_mgr_poll() call (or the
 *      next one if sl_ofconn_close() was called outside poll), never from
 *      inside another callback of the same connection.  After on_disconnect
 *      returns the handle is invalid.  on_disconnect fires if and only if
 *      on_connect fired, so per-connection user state may be created in the
 *      one and freed in the other.  Output still queued is flushed in the
 *      background when the close was graceful (bounded by a 1 s linger).
 *
 * ----------------------------------------------------------------------------
 * Output and backpressure
 * ----------------------------------------------------------------------------
 * sl_ofconn_send() copies a whole message into the connection's output queue
 * and writes as much as the socket takes right away; the rest goes out from
 * sl_ofconn_mgr_poll().  The queue is bounded by params.max_tx_bytes: a
 * message that does not fit is refused with -ENOBUFS and counted in
 * sl_ofconn_stats.tx_dropped (the caller drops e.g. a packet_in).  Messages
 * the channel generates itself (echo replies, errors) obey the same bound.
 *
 * To stream a large reply (a multipart dump) without filling the queue, the
 * caller pauses while sl_ofconn_tx_congested() is true, i.e. while more than
 * params.tx_low_water bytes are pending, and resumes from on_writable: that
 * callback fires once, from sl_ofconn_mgr_poll(), each time the backlog of a
 * connection that went above tx_low_water drains back to tx_low_water or
 * below.  A caller that pauses only when congested is therefore always woken.
 *
 * Input is throttled the same way: while more than tx_low_water bytes are
 * queued for a connection, its input is neither read nor dispatched (messages
 * already buffered wait too).  A peer that floods requests without reading
 * the replies is thus slowed down instead of losing replies to -ENOBUFS, the
 * way OVS stops reading a controller that has too many replies queued.  So
 * -ENOBUFS happens only when one burst of handling (one request's replies,
 * or switch-initiated traffic such as packet_ins) overshoots max_tx_bytes.
 *
 * ----------------------------------------------------------------------------
 * Timers
 * ----------------------------------------------------------------------------
 * All timers use CLOCK_MONOTONIC and run inside sl_ofconn_mgr_poll(), which
 * shortens its poll() so that it wakes when the earliest one is due but
 * never sleeps longer than the caller's timeout.
 *   - Keepalive: when nothing at all has been received for probe_interval_ms
 *     an ECHO_REQUEST is sent; if still nothing arrives within another
 *     interval the connection is dropped (and logged).  While input is
 *     throttled (see above) the reply cannot be seen, so output progress
 *     counts as activity then: a peer that neither reads nor sends for two
 *     intervals is dropped.
 *   - Reconnect: the first attempt for an active target starts when it is
 *     added.  After a failed attempt (refused, a failed TLS handshake, or
 *     closed before the HELLO exchange finished) the next attempt waits the backoff, which starts at
 *     backoff_min_ms and doubles up to backoff_max_ms.  A connection that was
 *     up (negotiated) resets the backoff to backoff_min_ms, however short it
 *     lived: a controller that restarts is reached again at once.  A connect
 *     that neither succeeds nor fails is abandoned after hello_timeout_ms,
 *     like a silent peer.
 *
 * ----------------------------------------------------------------------------
 * Concurrency
 * ----------------------------------------------------------------------------
 * A manager and its connections belong to one thread, the control thread
 * that calls sl_ofconn_mgr_poll(); no function here locks.  Callbacks run on
 * that thread, from inside sl_ofconn_mgr_poll().  They may call
 * sl_ofconn_send(), sl_ofconn_close() and the accessors on any connection;
 * they must not call sl_ofconn_mgr_poll(),
 * sl_ofconn_mgr_add_target() or sl_ofconn_mgr_destroy().  Connections are
 * only freed at the end of a poll call, so a handle stays valid through all
 * callbacks until its own on_disconnect has returned.
 *
 * Logging goes through params.log (never to stdout/stderr).  Messages a peer
 * can trigger at will (bad lengths, bad versions, failed hellos) are
 * rate-limited per manager.  SIGPIPE is never raised: writes use MSG_NOSIGNAL.
 */
#ifndef SL_OFCONN_H
#define SL_OFCONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/core.h"

/** OpenFlow wire version this channel negotiates (OpenFlow 1.3). */
#define SL_OFCONN_VERSION 0x04
/** Default TCP port of tcp: targets (IANA "openflow"). */
#define SL_OFCONN_DEFAULT_PORT 6653
/** Size of the OpenFlow header every message starts with. */
#define SL_OFCONN_HEADER_LEN 8
/** Largest OpenFlow message (the header's length field is 16 bits). */
#define SL_OFCONN_MSG_MAX 65535

/** Log levels passed to params.log; the values are syslog(3)'s. */
enum sl_ofconn_log_level {
	SL_OFCONN_LOG_ERR = 3,  /* The channel cannot do what it was configured to. */
	SL_OFCONN_LOG_WARN = 4, /* A peer misbehaved or a connection failed. */
	SL_OFCONN_LOG_INFO = 6, /* Connections coming and going. */
	SL_OFCONN_LOG_DBG = 7,  /* Version negotiation details, backoff decisions. */
};

struct sl_ofconn_mgr;
struct sl_ofconn;
struct sl_tls_ctx;

/** Connection event callback: on_connect, on_disconnect, on_writable, foreach. */
typedef void (*sl_ofconn_conn_fn)(struct sl_ofconn *c, void *arg);
/** Message callback: @msg is one whole message of @len bytes (8..65535). */
typedef void (*sl_ofconn_msg_fn)(struct sl_ofconn *c, const uint8_t *msg, size_t len, void *arg);
/** Log callback: @msg is one line without a trailing newline. */
typedef void (*sl_ofconn_log_fn)(int level, const char *msg, void *arg);

/**
 * Manager configuration.  Fill it with sl_ofconn_params_init() and then
 * override fields: a zero in a numeric field means what the field says
 * ("off", for probe_interval_ms), not "default".
 */
struct sl_ofconn_params {
	uint32_t probe_interval_ms; /* Keepalive interval; 0 = no probes (default 5000). */
	uint32_t hello_timeout_ms;  /* Connect + HELLO exchange limit; 0 = none (default 10000). */
	uint32_t backoff_min_ms;    /* First reconnect delay, > 0 (default 100). */
	uint32_t backoff_max_ms;    /* Reconnect delay cap, >= backoff_min_ms (default 8000). */
	size_t max_tx_bytes; /* Output queue bound per connection, >= 65535 (default 4 MB). */
	size_t tx_low_water; /* on_writable threshold, < max_tx_bytes (default 64 KB). */
	/*
	 * punix: sockets are created mode 0660 whatever the umask, in group
	 * unix_gid when it is >= 0 (default -1: the creator's group); a peer is
	 * accepted only when its SO_PEERCRED uid is 0 or ours, or its gid is
	 * unix_gid.  Any peer of a listener may change every flow.
	 */
	int unix_gid;
	/*
	 * TLS key, certificate and CA for ssl:/pssl: targets (sl_tls_ctx_create);
	 * NULL: none (default).  Borrowed: it must outlive the manager.
	 */
	struct sl_tls_ctx *tls;
	sl_ofconn_conn_fn on_connect;    /* HELLO exchange succeeded; may be NULL. */
	sl_ofconn_msg_fn on_message;     /* A message for the switch agent; may be NULL. */
	sl_ofconn_conn_fn on_disconnect; /* Paired with on_connect; may be NULL. */
	sl_ofconn_conn_fn on_writable;   /* Backlog drained to tx_low_water; may be NULL. */
	sl_ofconn_log_fn log;            /* Log sink; NULL discards log messages. */
	void *arg;                       /* Passed to every callback above. */
};

/** Per-connection counters (sl_ofconn_stats()). */
struct sl_ofconn_stats {
	uint64_t rx_msgs;     /* Complete messages received, HELLO and ECHO included. */
	uint64_t rx_bytes;    /* Bytes of those messages. */
	uint64_t tx_msgs;     /* Messages queued for transmission, own HELLO/ECHO/ERROR included. */
	uint64_t tx_bytes;    /* Bytes of those messages. */
	uint64_t tx_dropped;  /* Messages refused with -ENOBUFS (queue over max_tx_bytes). */
	int64_t connected_at; /* Wall-clock time (time(2) seconds) of the HELLO exchange. */
	uint64_t uptime_ms;   /* Milliseconds since the HELLO exchange. */
	size_t tx_pending;    /* Bytes queued but not yet written to the socket. */
};

/**
 * Fill @p with the defaults documented in struct sl_ofconn_params, and no
 * callbacks.
 *
 * @param p  Parameters to initialise.
 * Thread-safety: any thread (touches only @p).
 */
void sl_ofconn_params_init(struct sl_ofconn_params *p);

/**
 * Create a manager with no targets.
 *
 * @param p    Configuration (copied); NULL means sl_ofconn_params_init() defaults.
 * @param out  Receives the manager.
 * @return 0, -EINVAL if a field is out of range (see struct sl_ofconn_params),
 *         -ENOMEM.
 * Thread-safety: init only; the manager then belongs to the calling thread.
 */
int sl_ofconn_mgr_create(const struct sl_ofconn_params *p, struct sl_ofconn_mgr **out);

/**
 * Close every connection and listener and free the manager.  on_disconnect
 * fires for each connection that had on_connect; queued output is not
 * flushed.  punix: socket files are unlinked.
 *
 * @param mgr  Manager; NULL is a no-op.
 * Thread-safety: control thread, not from inside a callback.
 */
void sl_ofconn_mgr_destroy(struct sl_ofconn_mgr *mgr);

/**
 * Add a target (see the syntax at the top of this file).  A passive target is
 * bound and listening when this returns; an active one starts its first
 * connection attempt at once (a non-blocking connect).
 *
 * @param mgr       Manager.
 * @param target    Target string, e.g. "tcp:127.0.0.1:6653", "ptcp:6653" or
 *                  "pssl:6653:0.0.0.0".
 * @param err       Receives a message naming the offending value on failure,
 *                  e.g. "bad target 'ptcp:99999': port out of range" or
 *                  "bad target 'ptcp:6653': bind 0.0.0.0:6653: Address already
 *                  in use".  May be NULL.
 * @param err_size  Size of @err.
 * @return the target's index (>= 0, in the order targets were added);
 *         -EINVAL for a malformed target, or an ssl:/pssl: one without
 *         params.tls; -EADDRINUSE, -EACCES, ... (the
 *         socket/bind/listen errno) for a passive target that cannot listen;
 *         -ENOMEM.
 * Thread-safety: control thread, not from inside a callback.
 */
int sl_ofconn_mgr_add_target(struct sl_ofconn_mgr *mgr, const char *target, char *err,
			     size_t err_size);

/**
 * Remove a target: a listener stops listening (a punix: socket file is
 * unlinked), an active target stops connecting; the connections made from
 * or accepted on it are closed as by sl_ofconn_close() (on_disconnect
 * follows from the next poll).  Indices are never reused.
 *
 * @param mgr  Manager.
 * @param idx  Target index returned by sl_ofconn_mgr_add_target().
 * @return 0; -ENOENT if @idx is not a target or was removed already.
 * Thread-safety: control thread, not from inside a callback.
 */
int sl_ofconn_mgr_del_target(struct sl_ofconn_mgr *mgr, int idx);

/**
 * The target string @idx was added with, or NULL when @idx is not a target
 * or was removed.  Valid until the target is removed.
 *
 * Thread-safety: control thread.
 */
const char *sl_ofconn_mgr_target(const struct sl_ofconn_mgr *mgr, int idx);

/** Target indices handed out so far, removed ones included.  Control thread. */
int sl_ofconn_mgr_n_targets(const struct sl_ofconn_mgr *mgr);

/**
 * TCP port a ptcp: or pssl: target listens on; useful after "ptcp:0".
 *
 * @param mgr  Manager.
 * @param idx  Target index returned by sl_ofconn_mgr_add_target().
 * @return the port (1..65535), -ENOENT if @idx is not a target, -EINVAL if
 *         the target is not a ptcp: or pssl: one.
 * Thread-safety: control thread.
 */
int sl_ofconn_mgr_listen_port(const struct sl_ofconn_mgr *mgr, int idx);

/**
 * Also end sl_ofconn_mgr_poll()'s wait when @fd (an eventfd) becomes
 * readable; the poll reads it to clear it.  -1: none.  The datapath wakes
 * the agent this way when a packet-in is queued.  Owner thread.
 */
void sl_ofconn_mgr_set_wake_fd(struct sl_ofconn_mgr *mgr, int fd);

/**
 * Run one iteration of the channel: wait in poll() for socket activity or
 * the next timer, then accept, complete connects, read and dispatch
 * messages, write queued output, run the keepalive, hello and reconnect
 * timers, fire on_writable, and retire closed connections (on_disconnect).
 *
 * The call returns as soon as something was handled; it never blocks longer
 * than @timeout_ms, so the caller can run other periodic work in the same
 * loop.  A message already complete in a connection's buffer is dispatched
 * in the iteration that read it.
 *
 * @param mgr         Manager.
 * @param timeout_ms  Longest wait; 0 = do not block; negative = wait until a
 *                    socket event or a timer.
 * @return the number of sockets that had events (0 if only timers ran or the
 *         wait timed out or was interrupted by a signal), -ENOMEM if the poll
 *         set could not be grown, or another -errno from poll(2).
 * Thread-safety: control thread, not from inside a callback.
 */
int sl_ofconn_mgr_poll(struct sl_ofconn_mgr *mgr, int timeout_ms);

/**
 * Number of connected connections (HELLO done, not closing), active and
 * passive.
 *
 * Thread-safety: control thread; callbacks included.
 */
unsigned sl_ofconn_mgr_n_connected(const struct sl_ofconn_mgr *mgr);

/**
 * Number of connected connections made from active (tcp:, ssl:, unix:) targets,
 * i.e. controllers.  Fail-mode "standalone" takes over when this is 0; tools
 * connected to a passive listener do not count.
 *
 * Thread-safety: control thread; callbacks included.
 */
unsigned sl_ofconn_mgr_n_controllers(const struct sl_ofconn_mgr *mgr);

/**
 * Queue one whole OpenFlow message for @c and write what the socket takes.
 *
 * @param c    Connected connection.
 * @param msg  The encoded message; copied, the caller keeps ownership.
 * @param len  Its size; must equal the header's length field.
 * @return 0; -EINVAL if @len is outside 8..65535 or differs from the length
 *         field; -ENOTCONN if @c is not connected (HELLO pending, or closing);
 *         -ENOBUFS if the queue would exceed params.max_tx_bytes (counted in
 *         tx_dropped; nothing was queued); -ENOMEM.  A socket error is not
 *         returned here: it closes the connection, and on_disconnect follows
 *         from the next sl_ofconn_mgr_poll().
 * Thread-safety: control thread; callbacks included.
 */
int sl_ofconn_send(struct sl_ofconn *c, const void *msg, size_t len);

/**
 * Whether the caller should pause bulk output on @c: more than
 * params.tx_low_water bytes are pending.  While it is true, on_writable is
 * guaranteed to fire once the backlog drains to tx_low_water.
 *
 * Thread-safety: control thread; callbacks included.
 */
bool sl_ofconn_tx_congested(const struct sl_ofconn *c);

/**
 * Close @c gracefully: it stops being connected now, queued output is
 * flushed (for at most 1 s), then the socket is closed.  on_disconnect fires
 * from the current or next sl_ofconn_mgr_poll().  An active target will
 * reconnect after its backoff.  Closing a closing connection is a no-op.
 *
 * @param c  Connection.
 * Thread-safety: control thread; callbacks included.
 */
void sl_ofconn_close(struct sl_ofconn *c);

/**
 * Next transaction id for a switch-initiated message on @c (never 0).
 *
 * Thread-safety: control thread; callbacks included.
 */
uint32_t sl_ofconn_next_xid(struct sl_ofconn *c);

/**
 * Peer description: "tcp:127.0.0.1:54322", "tcp:[::1]:6653",
 * "ssl:127.0.0.1:6653", "unix:/run/sluice.sock" (active) or
 * "punix:/run/sluice.sock#3" (the third connection accepted on that socket);
 * connections accepted on ptcp:/pssl: are named tcp:/ssl: after the peer.
 *
 * @return a string owned by @c, valid until on_disconnect returns.
 * Thread-safety: control thread; callbacks included.
 */
const char *sl_ofconn_name(const struct sl_ofconn *c);

/**
 * Whether @c was accepted from a passive (ptcp:, pssl:, punix:) listener, as tools
 * and some controllers do, rather than made to an active controller target.
 *
 * Thread-safety: control thread; callbacks included.
 */
bool sl_ofconn_is_passive(const struct sl_ofconn *c);

/** Caller state attached to @c (NULL until set).  Thread-safety: control thread. */
void *sl_ofconn_get_user(const struct sl_ofconn *c);

/**
 * Attach caller state (role, async config, miss_send_len ...) to @c.  The
 * manager never dereferences it; free it in on_disconnect.
 *
 * Thread-safety: control thread; callbacks included.
 */
void sl_ofconn_set_user(struct sl_ofconn *c, void *user);

/**
 * Read @c's counters.
 *
 * @param c   Connection.
 * @param st  Filled in.
 * Thread-safety: control thread; callbacks included.
 */
void sl_ofconn_stats(const struct sl_ofconn *c, struct sl_ofconn_stats *st);

#endif /* SL_OFCONN_H */
