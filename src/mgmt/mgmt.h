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
	const char *name;        /* instance name (the EAL file prefix) */
	const char *mgmt_target; /* punix:PATH for sluicectl, or NULL */
	const char *fail_mode;   /* "secure" | "standalone" */
	unsigned n_controllers;  /* active controller targets configured */
	struct sl_pipeline *pl;
	struct sl_worker *worker;
	struct sl_port *ports;  /* SL_PORT_SLOTS slots (port.h), shared with the datapath */
	struct sl_ofswitch *sw; /* NULL without OpenFlow */
	/* Ports added at run time get what the start's got. */
	struct rte_mempool *mp; /* their rx queues' mbufs */
	uint16_t n_rxq, n_txq;  /* queues per port */
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

/**
 * Add a port at run time, as /sluice/port/add and `sluicectl add-port` do:
 * probe it, set up its queues as the start's ports have them, fill a free
 * slot (or ofport=N's), let the workers poll it, tell the controllers.
 *
 * @param spec     DEVARGS[,name=NAME][,ofport=N] (sl_port_args_parse).
 * @param port_no  Out: its OpenFlow number.
 * @param name     Out: its name (SL_PORT_NAME_MAX + 1 bytes).
 * @return 0; -EINVAL (bad spec, the device cannot be attached), -EEXIST
 *         (number, name or device taken), -ENOSPC; @err says why.
 *         Control thread, after sl_mgmt_create.
 */
int sl_mgmt_port_add(const char *spec, uint32_t *port_no, char *name, char *err, size_t err_size);

/**
 * Delete port @which (a name or a number), as /sluice/port/del does: the
 * pipeline stops sending there, the workers stop polling it, then it is
 * closed and the controllers told.
 *
 * @param port_no  Out: its OpenFlow number.
 * @param name     Out: its name (SL_PORT_NAME_MAX + 1 bytes).
 * @return 0; -ENOENT (no such port), -EPERM (LOCAL); @err says why.
 *         Control thread, after sl_mgmt_create.
 */
int sl_mgmt_port_del(const char *which, uint32_t *port_no, char *name, char *err, size_t err_size);

/**
 * What /sluice/info reports after the configuration changed at run time.
 * @param fail_mode  "secure" | "standalone" (static storage).  Control thread.
 */
void sl_mgmt_controllers_set(const char *fail_mode, unsigned n_controllers);

/** Stop any capture, refuse further requests.  Control thread, before the worker stops. */
void sl_mgmt_destroy(void);

#endif /* SL_MGMT_H */
