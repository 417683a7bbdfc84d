/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mgmt: Sluice's commands in DPDK telemetry (docs/telemetry.md), and the
 * port capture they start and stop.
 *
 * DPDK runs telemetry callbacks on its own threads, while everything they
 * report on (tables, flows, connections, the capture) belongs to the
 * control thread.  So a callback only posts its request and waits; the
 * control thread serves it in its next round (sl_mgmt_run(), about every
 * millisecond) and builds the reply itself.  Nothing is locked against the
 * datapath: worker counters are read as they run (64-bit words, atomic).
 * A request the control thread does not serve within 2 s gets an "error"
 * reply, and the control thread never touches it afterwards.
 *
 * One instance per process (telemetry callbacks carry no argument).
 */
#ifndef SL_MGMT_H
#define SL_MGMT_H

#include <stddef.h>
#include <stdint.h>

#include "../ofswitch/ofswitch.h"
#include "../pipeline/pipeline.h"
#include "../port/port.h"
#include "../worker/worker.h"

struct sl_mgmt_params {
	const char *name;          /* instance name (the EAL file prefix) */
	const char *mgmt_target;   /* punix:PATH for sluicectl, or NULL */
	const char *fail_mode;     /* "secure" | "standalone" */
	unsigned n_controllers;    /* active controller targets configured */
	struct sl_pipeline *pl;
	struct sl_worker *worker;
	struct sl_port *ports;     /* SL_PORT_SLOTS slots (port.h), shared with the datapath */
	struct sl_ofswitch *sw;    /* NULL without OpenFlow */
	/* Ports added at run time get what the start's got. */
	struct rte_mempool *mp;    /* their rx queues' mbufs */
	uint16_t n_rxq, n_txq;     /* queues per port */
};

/**
 * Register the telemetry commands (once per process; again after
 * sl_mgmt_destroy only re-attaches).  After rte_eal_init.
 * @return 0, -EEXIST (an instance exists) or -ENOMEM.  Init only.
 */
int sl_mgmt_create(const struct sl_mgmt_params *p);

/**
 * Serve a pending telemetry request, drain the capture into its file.
 * Cheap when idle (one atomic load).  Control thread, every round.
 */
void sl_mgmt_run(void);

/** Stop any capture, refuse further requests.  Control thread, before the worker stops. */
void sl_mgmt_destroy(void);

#endif /* SL_MGMT_H */
