/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * options: sluice's options, from its configuration file and its command line.
 *
 * One table lists every option once: its long name, which is also its key
 * in the configuration file, its short letter, whether it takes a value,
 * and whether a file may set it and SIGHUP may change it.  The same
 * per-option code reads a value wherever it comes from, so the file and the
 * command line cannot drift apart.
 *
 * The configuration file is INI, read with libinih (docs/user-guide.md,
 * "Configuration file"):
 *
 *   [switch]            keys are long option names: dpid = 1, fail-mode = secure,
 *                       controller = tcp:127.0.0.1 (repeatable), workers = 2, ...
 *   [port.NAME]         devargs = DPDK devargs; ofport = N (optional)
 *   [table.N]           kind = lpm; fields = nw_dst; size, name, lookup, update
 *   [eal]               args = EAL options, split at blanks
 *
 * Order: defaults, then the file, then the command line.  An option given
 * on the command line replaces the file's value; for a repeatable option
 * (port, controller, flow, log-level, table) the command line's values
 * replace the file's whole list, and EAL options after '--' replace the
 * file's [eal] args.
 *
 * The file: --config FILE; else /etc/sluice/NAME.conf when --name NAME is
 * given and that file exists; --no-config reads none.
 *
 * Control path only; not thread-safe (getopt).
 */
#ifndef SL_APP_OPTIONS_H
#define SL_APP_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../src/ofswitch/ofswitch.h"
#include "../src/pipeline/pipeline.h"
#include "../src/port/port.h"
#include "../src/tls/tls.h"
#include "../src/worker/worker.h"

/** Where /etc/sluice/NAME.conf lives. */
#define SL_CONF_DIR "/etc/sluice"

/** Every option, once.  The table in options.c gives each its name and letter. */
enum sl_opt {
	SL_OPT_PORT,
	SL_OPT_NO_LOCAL,
	SL_OPT_FLOWS,
	SL_OPT_FLOW,
	SL_OPT_RESTORE,
	SL_OPT_TABLE,
	SL_OPT_CONTROLLER,
	SL_OPT_PRIVATE_KEY,
	SL_OPT_CERTIFICATE,
	SL_OPT_CA_CERT,
	SL_OPT_DPID,
	SL_OPT_FAIL_MODE,
	SL_OPT_PROBE_INTERVAL,
	SL_OPT_PACKET_IN_RATE,
	SL_OPT_VERBOSE,
	SL_OPT_NAME,
	SL_OPT_MGMT,
	SL_OPT_MGMT_GROUP,
	SL_OPT_METRICS,
	SL_OPT_LOG_LEVEL,
	SL_OPT_DUMPCAP,
	SL_OPT_DURATION,
	SL_OPT_STATS_INTERVAL,
	SL_OPT_BURST,
	SL_OPT_WORKERS,
	SL_OPT_DISPATCH,
	SL_OPT_SCHEDULER,
	SL_OPT_SCHED_THRESHOLD,
	SL_OPT_WORKER_RING,
	SL_OPT_RX_QUEUES,
	SL_OPT_MBUFS,
	SL_OPT_JSON,
	SL_OPT_DUMP_FLOWS,
	SL_OPT_CHECK,
	SL_OPT_QUIET,
	SL_OPT_CHAIN_WARN,
	SL_OPT_NO_CACHE,
	SL_OPT_NO_FFP,
	SL_OPT_FFP_NO_COST_MODEL,
	SL_OPT_NO_FLOW_CACHE,
	SL_OPT_FFP_AUTO,
	SL_OPT_SEARCH_BUDGET,
	SL_OPT_FWD_MODE,
	SL_OPT_IDLE_SLEEP_MAX,
	SL_OPT_AGENT_AWAKE,
	SL_OPT_CONFIG,
	SL_OPT_NO_CONFIG,
	SL_OPT_VERSION,
	SL_OPT_HELP,
	SL_OPT__N,
	SL_OPT_EAL = SL_OPT__N, /* [eal] args: not an option, but diffed like one */
	SL_OPT__N_DIFF,
};

struct options {
	const char *ports[SL_PORTS_MAX];
	struct sl_port_args port_args[SL_PORTS_MAX]; /* the ports split, numbered */
	unsigned n_ports;
	unsigned max_port_no; /* the highest port number given at start */
	bool no_local;        /* --no-local: no LOCAL port (a TAP named after the switch) */
	const char *flows_file;
	const char *restore_file; /* --restore: a `sluicectl save` file, loaded after --flows */
	const char *flows[256];   /* --flow, in order, after the file */
	unsigned n_flows;
	const char *tables[SL_TABLES_MAX]; /* --table declarations, before --flows */
	unsigned n_tables;
	double duration;       /* seconds; 0 = until a signal */
	double stats_interval; /* seconds; 0 = no periodic stats */
	unsigned burst;
	unsigned mbufs;
	const char *json_path;
	bool dump_flows;
	bool check_only;
	bool quiet;
	bool no_cache;
	bool no_ffp;                           /* --no-ffp */
	bool ffp_no_model;                     /* --ffp-no-cost-model */
	bool no_ffp_path;                      /* --no-flow-cache (--no-ffp-path) */
	struct sl_ffp_auto ffp_auto;           /* --ffp-auto PPS[:MIN_TIMEOUT] */
	struct sl_search_budget search_budget; /* --search-budget PCT[:COST_NS] */
	unsigned chain_warn;         /* warn when a goto chain reaches this many tables (0 = off) */
	const char *controllers[16]; /* --controller targets */
	unsigned n_controllers;
	struct sl_tls_files tls; /* --private-key, --certificate, --ca-cert */
	uint64_t dpid;
	enum sl_fail_mode fail_mode;
	double probe_interval; /* seconds */
	double pin_rate;       /* packet-ins per second, 0 = no limit */
	bool verbose;
	const char *name;    /* instance: EAL file prefix, mgmt socket name */
	const char *mgmt;    /* mgmt socket path, "none", or NULL (default path) */
	int mgmt_gid;        /* --mgmt-group: group of the mgmt and telemetry sockets, -1: none */
	const char *metrics; /* --metrics [ADDR:]PORT: Prometheus exporter, or NULL */
	const char *log_levels[32]; /* --log-level TYPE:LEVEL, in order */
	unsigned n_log_levels;
	bool dumpcap;     /* multi-process EAL so dpdk-dumpcap can attach */
	unsigned workers; /* datapath worker lcores */
	bool dispatch_io; /* I/O core + worker rings (else RSS: a queue per worker) */
	int sched;        /* enum sl_sched (I/O dispatch) */
	double sched_threshold;
	unsigned worker_ring; /* slots of each worker ring (I/O dispatch) */
	unsigned rx_queues;   /* rx queues per port (0: one per worker, or 1 with an I/O core) */
	const char *io_opt;   /* an I/O-dispatch-only option given (for the error message) */
	const char *fwd_mode; /* --fwd-mode text (src/fwd) */
	struct sl_fwd_params fwd_params;
	unsigned idle_sleep_max; /* --idle-sleep-max, us (0: pure polling) */
	int agent_awake_us;      /* --agent-awake-us (-1: the default, see options.c) */

	/* Where they came from. */
	const char *config; /* the configuration file read, or NULL */
	bool no_config;     /* --no-config */
	char *eal_args[64]; /* [eal] args of the file, split (used when argv has none) */
	unsigned n_eal_args;
	/*
	 * What each option was set to, its values one per line in the order
	 * given (NULL: not set): SIGHUP compares these to tell what changed.
	 */
	char *given[SL_OPT__N_DIFF];
	char **owned; /* strings from the file, freed with the options */
	unsigned n_owned, owned_cap;
};

/** The option's long name (its configuration file key), e.g. "fail-mode". */
const char *sl_opt_name(enum sl_opt id);

/** True when SIGHUP applies a change of the option without a restart. */
bool sl_opt_reloadable(enum sl_opt id);

/** Print the help text. */
void options_usage(FILE *f);

/**
 * Parse the configuration file and then @argv into @o.
 *
 * @param exit_now  Out: >= 0 when the program should exit with that status
 *                  now (--help, --version), else -1.
 * @param reload    True on SIGHUP: errors go to the log (at error) instead
 *                  of stderr, and the file must still be there.
 * @return the index in @argv of the first EAL argument, or -1 after saying
 *         why (usage or configuration error: exit status 2).  @o must be
 *         freed with options_free() whatever the result.
 */
int options_parse(int argc, char **argv, struct options *o, int *exit_now, bool reload);

/** A copy of @s that lives as long as @o ("" when out of memory). */
const char *options_strdup(struct options *o, const char *s);

/** Free what options_parse allocated (NULL-safe).  @o can be parsed again. */
void options_free(struct options *o);

#endif /* SL_APP_OPTIONS_H */
