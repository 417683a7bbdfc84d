/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * switch: the lifecycle of one Sluice switch, from EAL to exit.
 *
 *   sl_switch_create   EAL, log levels, the rules (the caller's hook), the
 *                      mbuf pool, the ports and LOCAL, the workers (and the
 *                      I/O core), the forwarding modes, the OpenFlow agent,
 *                      the metrics exporter, the management commands;
 *   sl_switch_run      launches the datapath, runs the caller's control
 *                      loop on the control thread (sl_switch_poll every
 *                      round), then stops the management, then the
 *                      datapath (the I/O core first: the workers drain
 *                      their rings before they return);
 *   sl_switch_destroy  undoes whatever create did, in reverse order, down
 *                      to rte_eal_cleanup and the files EAL leaves behind.
 *
 * create has one unwind path: when a step fails it destroys what the steps
 * before it made, so the caller only maps the error to an exit status.
 * Messages for the operator go to stderr as "sluice: ..." and log lines to
 * sluice.app, as when main() did all this by hand.
 *
 * One switch per process: EAL, the management commands and the signal
 * flags are process-wide.  Control path only.
 */
#ifndef SL_SWITCH_H
#define SL_SWITCH_H

#include <stdbool.h>
#include <stdint.h>

#include "../fwd/fwd.h"
#include "../ofswitch/ofswitch.h"
#include "../pipeline/pipeline.h"
#include "../port/port.h"
#include "../tls/tls.h"
#include "../worker/worker.h"

struct sl_metrics;
struct sl_switch;

/*
 * The agent stays awake (polls its sockets and the packet-in ring without
 * sleeping, yielding the core between rounds) for this long after
 * controller activity: a thread asleep in poll() on an idle core takes
 * about 60 us to wake in a VM, once for a packet-in and once more for the
 * controller's answer.  Off by default when the datapath sleeps when idle
 * or shares the control thread's CPU.
 */
#define SL_AGENT_AWAKE_DEFAULT_US 1000u
#define SL_AGENT_AWAKE_MAX_US 100000u

/** Fills the pipeline once EAL is up.  @return 0, or -EINVAL after printing why. */
typedef int (*sl_switch_load_fn)(void *arg, struct sl_pipeline *pl);

/** The caller's control loop: returns when the switch should stop. */
typedef void (*sl_switch_control_fn)(struct sl_switch *sw, void *arg);

/** What a switch is made of.  Strings and arrays must outlive the switch. */
struct sl_switch_params {
	const char *name; /* instance: EAL file prefix, LOCAL's interface name */
	char **eal_argv;  /* EAL's argv (argv[0] first) */
	int eal_argc;
	struct sl_pipeline *pl; /* configured, ports numbered; the switch owns it */
	sl_switch_load_fn load; /* rules, after EAL (mask tables use EAL memory) */
	void *load_arg;
	const char *const *log_levels; /* --log-level TYPE:LEVEL, in order, after EAL's own */
	unsigned n_log_levels;
	bool verbose; /* ofswitch and ofconn at info */

	/* Datapath. */
	unsigned mbufs;   /* the pool's mbufs */
	unsigned burst;   /* rx burst (0: default) */
	unsigned workers; /* worker lcores, >= 1 */
	bool dispatch_io; /* an I/O core feeds the workers' rings (else RSS) */
	int sched;        /* enum sl_sched (I/O dispatch) */
	double sched_threshold;
	unsigned worker_ring;    /* slots of each worker ring (I/O dispatch) */
	unsigned rx_queues;      /* rx queues per port (0: one per worker, 1 with an I/O core) */
	double pin_rate;         /* packet-ins per second, 0 = no limit */
	unsigned idle_sleep_max; /* us (0: pure polling) */
	int agent_awake_us;      /* -1: SL_AGENT_AWAKE_DEFAULT_US, or 0 with idle_sleep_max */

	/* Ports. */
	const char *const *port_specs;  /* as given, for messages */
	struct sl_port_args *port_args; /* split and numbered; names are filled in when open */
	unsigned n_ports;
	unsigned max_port_no; /* the highest port number given */
	bool no_local;        /* no LOCAL port */

	/* Forwarding modes: *fwd_params is read after load (the flow file may set them). */
	const struct sl_fwd_params *fwd_params;
	const char *fwd_source; /* for messages: "--fwd-mode" or "fwd-mode" */

	/* OpenFlow: the agent exists when there is a controller or a management target. */
	const char *const *controllers;
	unsigned n_controllers;
	const char *mgmt_target; /* "punix:PATH" of the management socket, or "" */
	int mgmt_gid;            /* group of the management and telemetry sockets, -1: none */
	uint64_t dpid;           /* 0: from the first port's MAC */
	enum sl_fail_mode fail_mode;
	double probe_interval;  /* seconds */
	struct sl_tls_ctx *tls; /* for ssl:/pssl: targets, or NULL; the switch owns it */

	const char *metrics; /* [ADDR:]PORT of the Prometheus exporter, or NULL */
};

/**
 * Make a switch, ready to run.  On failure everything made so far is
 * undone (EAL included) and the reason printed.
 *
 * @param[out] out  The switch; NULL on failure.
 * @return 0; -EINVAL when the configuration is wrong (bad port, log level,
 *         rules, forwarding mode, controller target, too few lcores: exit
 *         status 2); any other -errno for a runtime failure (EAL, memory,
 *         devices, sockets: exit status 1).  Init only.
 */
int sl_switch_create(const struct sl_switch_params *p, struct sl_switch **out);

/**
 * Run the datapath and, on the control thread, @control(@sw, @arg); when
 * it returns, stop the management commands and the metrics exporter, then
 * the datapath.  With one lcore the datapath keeps it and @control runs in
 * a thread of its own.  Main thread, once.
 */
void sl_switch_run(struct sl_switch *sw, sl_switch_control_fn control, void *arg);

/**
 * One round of the control loop: the OpenFlow agent (or a sleep without
 * one), the management commands, the metrics exporter, the mask tables'
 * snapshots.  Waits up to 1 ms for the agent's sockets, 4 ms while the
 * datapath sleeps at its longest.  Control thread.
 */
void sl_switch_poll(struct sl_switch *sw);

/**
 * Ports on kernel interfaces whose interface was deleted and made again:
 * delete and add them again (sluicectl del-port/add-port's code), retrying
 * each call until the interface is back.  Control thread, about once a
 * second.
 */
void sl_switch_ports_recover(struct sl_switch *sw);

/** Undo sl_switch_create (NULL-safe), then clean up after EAL.  Main thread, after run. */
void sl_switch_destroy(struct sl_switch *sw);

/** SIGINT or SIGTERM arrived (flags set by the handlers create installs). */
bool sl_switch_quit_requested(void);

/** SIGHUP arrived since the last call (clears the flag). */
bool sl_switch_reload_requested(void);

/* Parts, for readers and run-time changes (control thread). */
struct sl_pipeline *sl_switch_pipeline(const struct sl_switch *sw);
/** SL_PORT_SLOTS slots (port.h), shared with the datapath. */
struct sl_port *sl_switch_ports(const struct sl_switch *sw);
/** The lead worker: readers sum over its group. */
struct sl_worker *sl_switch_worker(const struct sl_switch *sw);
/** The I/O core, or NULL (RSS dispatch). */
struct sl_worker_io *sl_switch_io(const struct sl_switch *sw);
/** The OpenFlow agent, or NULL (no controller and no management socket). */
struct sl_ofswitch *sl_switch_ofswitch(const struct sl_switch *sw);

#endif /* SL_SWITCH_H */
