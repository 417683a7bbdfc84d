/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats: the switch's counters gathered into plain structs, one reader per
 * subject (a port, a table, the drops, the datapath loop, a latency class,
 * the controller channel, a worker, the dispatcher).
 *
 * Both views of the counters read through here: the DPDK telemetry
 * commands (src/mgmt, which sluicectl stats uses) and the Prometheus
 * exporter (src/metrics).  So a figure means the same thing in both, and
 * the folding rules live once: the drop reason "tx-full" includes the
 * ports' tx drops, a table is "in use" once declared, given flows or
 * looked up, an OpenState table's entries are its states.
 *
 * Concurrency: every reader runs on the control thread, which owns the
 * pipeline, the agent and the ports' configuration.  Worker counters are
 * read while the workers run (whole 64-bit words, no lock): a snapshot is
 * racy across counters, never torn within one.
 */
#ifndef SL_STATS_H
#define SL_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "../ofswitch/ofswitch.h"
#include "../pipeline/pipeline.h"
#include "../port/port.h"
#include "../worker/worker.h"

/** What the readers read from: the switch's parts, owned by the caller. */
struct sl_stats_src {
	struct sl_pipeline *pl;
	struct sl_worker *worker; /* the lead worker of the group */
	struct sl_port *ports;    /* SL_PORT_SLOTS slots (port.h); of_no 0: a free slot */
	struct sl_ofswitch *sw;   /* NULL without OpenFlow */
};

/** One port: Sluice's own counters, the device's, and its state. */
struct sl_stats_port {
	struct sl_worker_port_stats sw; /* what the workers counted (tx_drops: tx queue full) */
	struct sl_port_hw_stats hw;     /* what the PMD counted (imissed: rx ring full) */
	struct sl_port_link link;
	bool live; /* usable for fast failover (OpenFlow port state) */
};

/**
 * Read the port in slot @i (port.h: OpenFlow port i + 1, or LOCAL in the last).
 * @param i  A filled slot, 0 .. SL_PORT_SLOTS - 1.  Control thread.
 */
void sl_stats_port_read(const struct sl_stats_src *s, unsigned i, struct sl_stats_port *out);

/**
 * Dropped packets by reason (enum sl_drop_reason), over every worker; the
 * ports' tx drops are counted under SL_DROP_TX_FULL.  Control thread.
 */
void sl_stats_drops_read(const struct sl_stats_src *s, uint64_t drops[SL_DROP__MAX]);

/** One flow table. */
struct sl_stats_table {
	bool in_use;                         /* declared, has flows, or was looked up */
	const struct sl_table_spec *spec;    /* kind, name, fields, capacity */
	unsigned flows;                      /* OpenFlow entries */
	struct sl_pipeline_table_stats hits; /* lookups, matched, missed (all workers) */
	struct sl_table_stats store;         /* the classifier's entries, memory, rebuilds */
	bool is_state;                       /* an OpenState table: @state is set */
	struct sl_state_stats state;         /* its states (store.n_entries and mem_bytes too) */
	uint64_t search_cycles;              /* a cache-missing search, cycles per key (search
					       budget; 0: not measured) */
};

/**
 * Read table @t.  With @full false only in_use, spec, flows and hits are
 * set (cheap enough to list every table).
 * @param t  0 .. 254.  @return in_use.  Control thread.
 */
bool sl_stats_table_read(const struct sl_stats_src *s, unsigned t, bool full,
			 struct sl_stats_table *out);

/** The datapath loop over every worker. */
struct sl_stats_datapath {
	unsigned workers;
	struct sl_worker_loop_stats loop;  /* iterations, busy rounds and cycles, bursts, packets */
	uint64_t copies;                   /* multi-output copies made */
	uint64_t cache_hits, cache_misses; /* the decision cache before mask tables */
	unsigned chain_installed;          /* longest goto chain the flows make */
	unsigned chain_traversed;          /* longest goto chain a packet took */
	unsigned idle_sleep_max_us;        /* --idle-sleep-max (0: polls all the time) */
	uint64_t idle_sleeps, idle_slept_ns;
	uint64_t tsc_hz;                            /* cycles per second, for busy_cycles */
	struct sl_search_budget budget;             /* --search-budget */
	struct sl_search_budget_stats budget_stats; /* its searches and refusals */
};

/** Read the datapath loop counters.  Control thread. */
void sl_stats_datapath_read(const struct sl_stats_src *s, struct sl_stats_datapath *out);

/** The latency classes, in the order telemetry lists them. */
#define SL_STATS_LATENCY_CLASSES 2
extern const char *const sl_stats_latency_class_names[SL_STATS_LATENCY_CLASSES];

/**
 * Copy the histogram of latency class @name: "pipeline" (rx burst handed
 * over -> tx queued, every packet) or "packet_in" (rx -> packet_in written
 * to a controller; empty without OpenFlow).
 * @return false for an unknown name.  Control thread.
 */
bool sl_stats_latency_read(const struct sl_stats_src *s, const char *name, struct sl_lat_hist *out);

/** The controller channel: the controller as a port, and the agent. */
struct sl_stats_controller {
	struct sl_worker_port_stats port;     /* rx: packet_outs; tx: packet-ins queued;
					       tx_drops: packet-ins not queued */
	struct sl_worker_pin_drops pin_drops; /* why packet-ins were not queued */
	struct sl_ofswitch_stats of;          /* the agent's counters (zero without OpenFlow) */
	unsigned connections;                 /* controller connections up */
};

/** Read the controller channel.  Control thread. */
void sl_stats_controller_read(const struct sl_stats_src *s, struct sl_stats_controller *out);

/** One worker lcore. */
struct sl_stats_worker {
	uint64_t packets, bursts, busy_cycles;
	uint64_t tx_drops;            /* its tx queues refused */
	uint64_t drops[SL_DROP__MAX]; /* its pipeline drops by reason */
	bool dispatched;              /* fed by the I/O core: the fields below are set */
	unsigned ring_used, ring_size;
	struct sl_dispatch_worker_stats disp;
};

/**
 * Read worker @i of the group.
 * @param i  0 .. datapath workers - 1.  Control thread.
 */
void sl_stats_worker_read(const struct sl_stats_src *s, unsigned i, struct sl_stats_worker *out);

/** The I/O core (--dispatch io). */
struct sl_stats_dispatch {
	bool io; /* false: RSS, nothing below is set */
	enum sl_sched sched;
	double threshold; /* load factor that moves a Subflow (0..1) */
	uint64_t adjustments;
	struct sl_worker_loop_stats loop; /* the I/O core's rx loop */
	uint64_t ring_full;               /* packets dropped: a worker's ring was full */
};

/** Read the dispatcher.  Control thread. */
void sl_stats_dispatch_read(const struct sl_stats_src *s, struct sl_stats_dispatch *out);

#endif /* SL_STATS_H */
