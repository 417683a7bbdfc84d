/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofswitch: the OpenFlow 1.3 switch agent -- what a controller talks to.
 *
 * It joins the controller channel (ofconn: sockets, hello, echo,
 * reconnection), the wire codec (ofp: bytes <-> host-order structs) and the
 * datapath (pipeline tables and groups, the worker's packet-in and
 * packet_out rings, ports).  Every message from the network is untrusted:
 * each decoder validates lengths and contents and a bad message gets the
 * specification's OFPT_ERROR with its first 64 bytes; the connection and
 * the datapath carry on.
 *
 * Consistency: flow and group changes are staged in the pipeline and
 * published (sl_pipeline_publish) before any reply that could observe them
 * -- barrier replies, multipart replies, packet_outs, role and config
 * replies -- and at the end of every poll round, so a flow_mod is visible
 * to packets no later than the barrier reply that follows it.
 *
 * Roles (OFPT_ROLE_REQUEST): equal (default), master (others become slave;
 * generation_id checked for staleness), slave (no state changes, no
 * packet-ins or flow-removed by default).  Asynchronous messages follow each
 * connection's async config (OFPT_SET_ASYNC).
 *
 * Fail modes, when active controller targets are configured but none is
 * connected: secure keeps the flows and drops what would go to a
 * controller; standalone turns the switch into a MAC-learning switch (a
 * table-miss entry in table 0 sends misses to the agent, which learns
 * source addresses and installs dl_dst flows with an idle timeout, marked
 * with cookie SL_OFSWITCH_STANDALONE_COOKIE and removed as soon as a
 * controller connects).
 *
 * Threading: everything here runs on one control thread (the main lcore);
 * it never blocks the worker.
 */
#ifndef SL_OFSWITCH_H
#define SL_OFSWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../pipeline/pipeline.h"
#include "../port/port.h"
#include "../worker/worker.h"

/** Cookie of the flows the standalone learning switch installs. */
#define SL_OFSWITCH_STANDALONE_COOKIE 0x534c5354414e4401ull

/** What to do while controllers are configured but none is connected. */
enum sl_fail_mode {
	SL_FAIL_MODE_SECURE,
	SL_FAIL_MODE_STANDALONE,
};

/** Counters of the agent. */
struct sl_ofswitch_stats {
	uint64_t msgs_rx;         /* messages handed to the agent */
	uint64_t errors_sent;     /* OFPT_ERROR replies */
	uint64_t flow_mods;       /* flow_mods applied */
	uint64_t packet_ins_sent; /* packet_in messages sent (one per connection) */
	/*
	 * The fate of every packet-in the workers queued (sl_worker ctrl tx):
	 * forwarded to at least one connection, handled by the standalone
	 * learning switch, or dropped with a reason (the sum is
	 * packet_ins_dropped).  queued = forwarded + standalone + dropped +
	 * still in the queue.
	 */
	uint64_t packet_ins_forwarded;
	uint64_t packet_ins_standalone;
	uint64_t packet_ins_dropped;
	uint64_t pin_drop_unwanted; /* no connection, or none whose async config takes the reason */
	uint64_t pin_drop_congested; /* every connection that wanted it was congested */
	uint64_t pin_drop_too_big;   /* no packet_in message could hold it */
	uint64_t packet_outs;        /* packet_outs queued to the worker */
	uint64_t publishes;
	uint64_t flows_expired;
	uint64_t learned;                     /* standalone mode: flows installed */
	struct sl_lat_hist packet_in_latency; /* rx -> packet_in written to a connection */
};

struct sl_tls_ctx;

/** Configuration. */
struct sl_ofswitch_params {
	uint64_t datapath_id; /* 0: derived from the first port's MAC */
	enum sl_fail_mode fail_mode;
	uint32_t probe_interval_ms; /* echo keepalive (0: off) */
	const char *const *targets; /* tcp:, ssl:, unix:, ptcp:, pssl:, punix: (ofconn.h) */
	unsigned n_targets;
	struct sl_pipeline *pl;
	struct sl_worker *worker;
	struct sl_port *ports;  /* SL_PORT_SLOTS slots (port.h), shared with the datapath */
	int unix_gid;           /* punix: sockets' group (ofconn.h); -1: the creator's */
	struct sl_tls_ctx *tls; /* key, certificate, CA for ssl:/pssl: (tls.h); NULL: none */
};

struct sl_ofswitch;

/**
 * Create the agent: opens listeners, starts connecting to active targets,
 * installs the pipeline's flow-removed hook.
 *
 * @return 0; -EINVAL with @err naming the bad target; -ENOMEM.  Main thread.
 */
int sl_ofswitch_create(const struct sl_ofswitch_params *p, struct sl_ofswitch **out, char *err,
		       size_t err_size);
/** Close every connection and free the agent (NULL-safe).  Main thread. */
void sl_ofswitch_destroy(struct sl_ofswitch *sw);

/**
 * One round of control work: socket I/O and messages, queued packet-ins,
 * timers (flow timeouts, port status, standalone mode), publish.
 *
 * @param timeout_ms  Longest wait for socket activity.
 * @return true when a controller connection had activity or a packet-in
 *         was dequeued (the agent's caller may stay awake for the answer).
 * Control thread.
 */
bool sl_ofswitch_run(struct sl_ofswitch *sw, int timeout_ms);

/**
 * Port @slot of the ports array was added (its slot filled, the datapath
 * using it): controllers get OFPT_PORT_STATUS ADD.  Control thread.
 */
void sl_ofswitch_port_added(struct sl_ofswitch *sw, unsigned slot);
/**
 * Port @slot is being deleted (its slot still filled): controllers get
 * OFPT_PORT_STATUS DELETE, the standalone learning switch forgets it.
 * Control thread.
 */
void sl_ofswitch_port_deleted(struct sl_ofswitch *sw, unsigned slot);

/**
 * Make @targets the agent's controller targets (a reloaded configuration):
 * targets not in the list are removed (their connections close), new ones
 * are added (listeners listen, active ones start connecting), the others
 * and their connections are left alone.  Fail mode standalone is
 * re-evaluated: it ends when no active target is left.
 *
 * @return 0; -EINVAL, -EADDRINUSE, ... with @err naming the target that
 *         could not be added (sl_ofconn_mgr_add_target): then nothing
 *         changed.  Control thread.
 */
int sl_ofswitch_targets_set(struct sl_ofswitch *sw, const char *const *targets, unsigned n,
			    char *err, size_t err_size);

/** Change the fail mode (standalone is entered or left at once).  Control thread. */
void sl_ofswitch_fail_mode_set(struct sl_ofswitch *sw, enum sl_fail_mode mode);

/**
 * TCP port of the @idx-th target when it is ptcp: or pssl: (for port 0), or
 * < 0.  Indices count in the order targets were added, removed ones too.
 */
int sl_ofswitch_listen_port(const struct sl_ofswitch *sw, int idx);
/** Connections with a finished HELLO exchange. */
unsigned sl_ofswitch_n_connections(const struct sl_ofswitch *sw);

/**
 * Describe connection @i (0 .. n_connections-1): "NAME controller|service
 * role=ROLE".  @return 0 or -ENOENT.  Control thread.
 */
int sl_ofswitch_connection(const struct sl_ofswitch *sw, unsigned i, char *buf, size_t size);

/** Connected controllers (from active tcp:/ssl:/unix: targets; tools on listeners do not count).  Control thread. */
unsigned sl_ofswitch_n_controllers(const struct sl_ofswitch *sw);
/** The agent's counters. */
void sl_ofswitch_stats(const struct sl_ofswitch *sw, struct sl_ofswitch_stats *st);
/** The datapath id in use. */
uint64_t sl_ofswitch_datapath_id(const struct sl_ofswitch *sw);

#endif /* SL_OFSWITCH_H */
