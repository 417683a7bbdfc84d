/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * notify: tell the service manager how the switch is doing (systemd's
 * sd_notify protocol, Type=notify units).
 *
 * When systemd starts a Type=notify service it sets $NOTIFY_SOCKET to a
 * unix datagram socket ("/run/systemd/notify", or "@name" for an abstract
 * one) and waits for "READY=1" before it counts the service as started and
 * starts what is ordered after it.  Other lines: "RELOADING=1" while a
 * reload runs (then "READY=1" again), "STOPPING=1", "STATUS=free text" for
 * `systemctl status`.  Several lines go in one datagram, separated by '\n'.
 *
 * The protocol is one sendto() of a text datagram, so it is written here
 * rather than linking libsystemd for it (which Debian splits into a
 * separate -dev package and which pulls in its own dependencies); the
 * wire format is systemd's documented interface (sd_notify(3)).  Without
 * $NOTIFY_SOCKET (not under systemd) every call does nothing.
 *
 * Control path; any thread (one socket per call, nothing shared).
 */
#ifndef SL_NOTIFY_H
#define SL_NOTIFY_H

/**
 * Send @state ("READY=1\nSTATUS=...") to $NOTIFY_SOCKET.
 *
 * @return 1 when sent, 0 when there is no $NOTIFY_SOCKET, -errno when it
 *         could not be sent (-EINVAL: a socket path that is neither absolute
 *         nor abstract, or too long).  Any thread.
 */
int sl_notify(const char *state);

/** sl_notify with printf formatting.  Same returns. */
int sl_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* SL_NOTIFY_H */
