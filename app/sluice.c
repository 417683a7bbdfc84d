/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice: the switch daemon.
 *
 *   sluice [OPTIONS] [-- EAL-OPTIONS]
 *
 * Without EAL options Sluice picks its own: two lcores when there are two
 * CPUs (control on the first, datapath on the second), --no-huge --no-pci
 * when no hugepages are free, a per-process --file-prefix.
 *
 * Exit codes: 0 success; 1 runtime failure (EAL, ports, memory);
 * 2 usage or configuration error (bad option, bad flow file).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_version.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "sl_config.h"
#include "options.h"
#include "../src/core/core.h"
#include "../src/flowfile/flowfile.h"
#include "../src/log/log.h"
#include "../src/metrics/metrics.h"
#include "../src/mgmt/mgmt.h"
#include "../src/notify/notify.h"
#include "../src/ofswitch/ofswitch.h"
#include "../src/pipeline/pipeline.h"
#include "../src/port/port.h"
#include "../src/stats/stats.h"
#include "../src/switch/switch.h"
#include "../src/tls/tls.h"
#include "../src/worker/worker.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define SAMPLES_MAX 3600

static bool
hugepages_free(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long n = 0;

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "HugePages_Free: %ld", &n) == 1)
			break;
	fclose(f);
	return n > 0;
}

/* The value of --file-prefix in the user's EAL options, or NULL. */
static const char *
eal_file_prefix(int argc, char **argv, int first_eal)
{
	for (int i = first_eal; i < argc; i++) {
		if (strncmp(argv[i], "--file-prefix=", 14) == 0)
			return argv[i] + 14;
		if (strcmp(argv[i], "--file-prefix") == 0 && i + 1 < argc)
			return argv[i + 1];
	}
	return NULL;
}

/*
 * Build the EAL argv: the user's options after '--', else the configuration
 * file's [eal] args (plus --file-prefix=NAME when they have none), or
 * Sluice's defaults.  Resolves o->name.
 * @return argc, or -1 after printing why.
 */
static int
eal_args(int argc, char **argv, int first_eal, struct options *o, char **out, char *storage,
	 size_t storage_size)
{
	const char *prefix;
	int n = 0;

	if (first_eal >= argc && o->n_eal_args > 0) {
		/* argv[0] stands in front, as on the command line. */
		static char *file_argv[SL_ARRAY_SIZE(o->eal_args) + 1];
		file_argv[0] = argv[0];
		for (unsigned i = 0; i < o->n_eal_args; i++)
			file_argv[i + 1] = o->eal_args[i];
		argv = file_argv;
		argc = (int)o->n_eal_args + 1;
		first_eal = 1;
	}
	prefix = eal_file_prefix(argc, argv, first_eal);

	if (prefix != NULL && o->name != NULL && strcmp(prefix, o->name) != 0) {
		fprintf(stderr, "sluice: --name '%s' and EAL --file-prefix '%s' differ; give one\n",
			o->name, prefix);
		return -1;
	}
	if (o->name == NULL)
		o->name = prefix != NULL ? prefix : "sluice";
	snprintf(storage, storage_size, "--file-prefix=%s", o->name);
	out[n++] = argv[0];
	if (first_eal < argc) {
		for (int i = first_eal; i < argc && n < 61; i++)
			out[n++] = argv[i];
		if (prefix == NULL)
			out[n++] = storage;
		return n;
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned need = o->workers + (o->dispatch_io ? 1 : 0); /* datapath lcores */
	if (need > 1 && ncpu >= 2) {
		/* lcore 0 (control) on CPU 0, datapath lcores spread over the others. */
		static char lcores[1024];
		size_t len = (size_t)snprintf(lcores, sizeof(lcores), "--lcores=0@0");
		for (unsigned i = 1; i <= need && len < sizeof(lcores) - 16; i++)
			len += (size_t)snprintf(lcores + len, sizeof(lcores) - len, ",%u@%ld", i,
						1 + (long)(i - 1) % (ncpu - 1));
		out[n++] = lcores;
	} else {
		out[n++] = ncpu >= 2 ? "-l0,1" : "-l0";
	}
	out[n++] = storage;
	out[n++] = "--log-level=lib.eal:error";
	/* Not its "No legacy callbacks, legacy socket not created" warning at every start. */
	out[n++] = "--log-level=lib.telemetry:error";
	if (!hugepages_free()) {
		if (o->dumpcap) {
			fprintf(stderr,
				"sluice: --dumpcap: dpdk-dumpcap needs hugepages and none are "
				"free (e.g. echo 256 > /proc/sys/vm/nr_hugepages); "
				"'sluicectl capture' works without them\n");
			return -1;
		}
		out[n++] = "--no-huge";
		out[n++] = "-m1024";
		out[n++] = "--no-pci";
	} else if (!o->dumpcap) {
		/* No hugepage files left behind (they can stay pinned by other mount namespaces). */
		out[n++] = "--in-memory";
	}
	return n;
}

/* Flow-file callbacks: into the pipeline, errors back with the pipeline's message. */

/* The "line" of a table declared by --table (or the configuration file's [table.N]). */
#define DECLARED_BY_OPTION UINT_MAX

static int
on_table(void *arg, const struct sl_table_spec *ts, struct sl_parse_error *err)
{
	static unsigned declared_at[SL_TABLES_MAX]; /* line of each table's declaration, 0: none */

	/*
	 * A second declaration used to replace the first without a word.  One
	 * that repeats the first exactly (a --restore file saved from a switch
	 * started with the same --flows) changes nothing and is accepted.
	 */
	if (ts->table_id < SL_TABLES_MAX && declared_at[ts->table_id] != 0) {
		char a[512], b[512];
		sl_table_spec_format(ts, a, sizeof(a));
		sl_table_spec_format(sl_pipeline_table_spec(arg, ts->table_id), b, sizeof(b));
		if (strcmp(a, b) == 0)
			return 0;
		if (declared_at[ts->table_id] == DECLARED_BY_OPTION)
			snprintf(err->msg, sizeof(err->msg),
				 "table %u is already declared (by "
				 "--table or a [table.%u] section)",
				 ts->table_id, ts->table_id);
		else
			snprintf(err->msg, sizeof(err->msg),
				 "table %u is already declared "
				 "(line %u)",
				 ts->table_id, declared_at[ts->table_id]);
		return -EEXIST;
	}
	int rc = sl_pipeline_table_declare(arg, ts, err->msg, sizeof(err->msg));
	if (rc == 0 && ts->table_id < SL_TABLES_MAX)
		declared_at[ts->table_id] = err->line;
	return rc;
}

static int
on_flow(void *arg, const struct sl_flow_spec *fs, struct sl_parse_error *err)
{
	return sl_pipeline_flow_add(arg, fs, err->msg, sizeof(err->msg));
}

/* The flow file's fwd-mode= line (--fwd-mode overrides it). */
static struct sl_fwd_params file_fwd_params;
static bool file_fwd_set;

static int
on_directive(void *arg, const char *name, const char *value, struct sl_parse_error *err)
{
	(void)arg;
	if (strcmp(name, "fwd-mode") != 0)
		return -EINVAL;
	if (sl_fwd_params_parse(value, &file_fwd_params, err->msg, sizeof(err->msg)) < 0)
		return -EINVAL;
	file_fwd_set = true;
	return 0;
}

/* While --restore loads: a group or meter --flows made already is replaced, not an error. */
static bool restoring;

static int
on_group(void *arg, const struct sl_group_spec *gs, struct sl_parse_error *err)
{
	int rc = sl_pipeline_group_add(arg, gs, err->msg, sizeof(err->msg));

	if (rc == -EEXIST && restoring)
		rc = sl_pipeline_group_modify(arg, gs, err->msg, sizeof(err->msg));
	return rc;
}

static int
on_meter(void *arg, const struct sl_meter_spec *ms, struct sl_parse_error *err)
{
	int rc = sl_pipeline_meter_add(arg, ms, err->msg, sizeof(err->msg));

	if (rc == -EEXIST && restoring)
		rc = sl_pipeline_meter_modify(arg, ms, err->msg, sizeof(err->msg));
	return rc;
}

static int
on_state(void *arg, uint8_t table_id, const struct sl_match *key, const struct sl_state_set *set,
	 struct sl_parse_error *err)
{
	return sl_pipeline_state_set(arg, table_id, key, set, err->msg, sizeof(err->msg));
}

static int
on_queue(void *arg, const struct sl_queue_spec *qs, struct sl_parse_error *err)
{
	return sl_pipeline_queue_set(arg, qs, err->msg, sizeof(err->msg));
}

static int
load_rules(struct sl_pipeline *pl, const struct options *o)
{
	struct sl_parse_error pe;
	char msg[512];
	int rc;

	for (unsigned i = 0; i < o->n_tables; i++) {
		struct sl_table_spec ts;
		memset(&pe, 0, sizeof(pe));
		rc = sl_table_spec_parse(o->tables[i], &ts, &pe);
		pe.line = DECLARED_BY_OPTION;
		if (rc == 0)
			rc = on_table(pl, &ts, &pe);
		if (rc < 0) {
			pe.line = 0;
			sl_parse_error_format(&pe, msg, sizeof(msg));
			fprintf(stderr, "sluice: --table '%s': %s\n", o->tables[i], msg);
			return rc;
		}
	}
	const char *files[] = {o->flows_file, o->restore_file};
	for (unsigned i = 0; i < SL_ARRAY_SIZE(files); i++) {
		const struct sl_flowfile_callbacks cb = {on_table, on_flow,  on_directive, on_group,
							 on_meter, on_state, on_queue};
		if (files[i] == NULL)
			continue;
		restoring = i == 1;
		rc = sl_flowfile_load_cb(files[i], &cb, pl, &pe);
		if (rc < 0) {
			sl_parse_error_format(&pe, msg, sizeof(msg));
			fprintf(stderr, "sluice: %s%s\n", i == 1 ? "--restore: " : "", msg);
			return rc;
		}
	}
	for (unsigned i = 0; i < o->n_flows; i++) {
		struct sl_flow_spec fs;
		memset(&pe, 0, sizeof(pe));
		rc = sl_flow_parse(o->flows[i], &fs, &pe);
		if (rc == 0)
			rc = sl_pipeline_flow_add(pl, &fs, pe.msg, sizeof(pe.msg));
		if (rc < 0) {
			sl_parse_error_format(&pe, msg, sizeof(msg));
			fprintf(stderr, "sluice: --flow '%s': %s\n", o->flows[i], msg);
			return rc;
		}
	}
	return 0;
}

static int
print_flow(const struct sl_flow *f, void *arg)
{
	struct sl_flow_spec fs;
	char buf[4096];

	(void)arg;
	sl_flow_to_spec(f, &fs);
	sl_flow_format(&fs, buf, sizeof(buf));
	printf("  n_packets=%" PRIu64 ", n_bytes=%" PRIu64 ", %s\n", sl_flow_packets(f),
	       sl_flow_bytes(f), buf);
	return 0;
}

/* Counters sampled by the control loop. */
struct sample {
	double t;
	uint64_t rx, tx, drops;
	uint64_t busy_cycles, packets;
};

struct run {
	struct options *o;
	struct sl_pipeline *pl;
	struct sl_port *ports;
	struct sl_worker *w;       /* the lead worker (readers sum over its group) */
	struct sl_worker_io *io;   /* the I/O core, or NULL */
	struct sl_switch *sw;      /* the switch (src/switch) */
	struct sl_ofswitch *agent; /* the OpenFlow agent; NULL without --controller and --mgmt */
	bool have_sw_stats;        /* sw_stats and pins_pending taken after the run */
	struct sl_ofswitch_stats sw_stats;
	unsigned pins_pending;
	struct sample samples[SAMPLES_MAX];
	unsigned n_samples;
	double elapsed;
	/* SIGHUP: the command line to read again over the file, what it applied. */
	int argc;
	char **argv;
	const char *mgmt_target; /* punix:PATH of the management socket, or "" */
	struct options *applied; /* ports, controllers, fail mode in force */
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
take_sample(struct run *r, double t, struct sample *s)
{
	struct sl_worker_totals tot;

	struct sl_worker_loop_stats ls;

	sl_worker_totals(r->w, &tot);
	sl_worker_loop_read(r->w, &ls);
	s->t = t;
	s->rx = tot.rx;
	s->tx = tot.tx;
	s->drops = tot.tx_drops + tot.pipeline_drops;
	s->busy_cycles = ls.busy_cycles;
	s->packets = ls.packets;
}

static void
print_rates(const struct run *r, const struct sample *a, const struct sample *b)
{
	double dt = b->t - a->t;

	if (dt <= 0)
		return;
	printf("[%7.1fs] rx %8.3f Mpps  tx %8.3f Mpps  drop %8.3f Mpps", b->t,
	       (double)(b->rx - a->rx) / dt / 1e6, (double)(b->tx - a->tx) / dt / 1e6,
	       (double)(b->drops - a->drops) / dt / 1e6);
	if (b->packets > a->packets)
		printf("  %6.1f cyc/pkt", (double)(b->busy_cycles - a->busy_cycles) /
						  (double)(b->packets - a->packets));
	for (unsigned p = 0; p < SL_PORT_SLOTS; p++) {
		struct sl_worker_port_stats ps;
		if (r->ports[p].of_no == 0)
			continue;
		sl_worker_port_read(r->w, p, &ps);
		printf(" | %s rx %" PRIu64 " tx %" PRIu64, r->ports[p].name, ps.rx_packets,
		       ps.tx_packets);
	}
	printf("\n");
	fflush(stdout);
}

/* Seed 001's runtime check: warn once when a goto chain reaches --chain-warn tables. */
static void
chain_check(const struct run *r, bool *warned_installed, bool *warned_traversed)
{
	const struct sl_pipeline_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned inst, trav, n_ctxs;

	if (r->o->chain_warn == 0)
		return;
	n_ctxs = sl_worker_ctxs(r->w, ctxs, SL_DISPATCH_WORKERS_MAX);
	inst = sl_pipeline_chain_installed(r->pl);
	trav = sl_pipeline_chain_traversed(ctxs, n_ctxs);
	if (inst >= r->o->chain_warn && !*warned_installed)
		SL_LOG(WARNING, app,
		       "the installed flows make a goto chain of %u tables "
		       "(--chain-warn %u): loss is possible at high rates",
		       inst, r->o->chain_warn);
	if (trav >= r->o->chain_warn && !*warned_traversed)
		SL_LOG(WARNING, app,
		       "packets traversed a goto chain of %u tables (--chain-warn %u)", trav,
		       r->o->chain_warn);
	*warned_installed = inst >= r->o->chain_warn;
	*warned_traversed |= trav >= r->o->chain_warn;
}

/*
 * ---- SIGHUP: read the configuration again, apply ports, controllers and
 * fail mode.  Everything else is read, compared and, when it changed,
 * reported as needing a restart. ----
 */

/* The port a --port value names: its name= when given, else its devargs. */
static void
port_spec_key(const char *spec, char *key, size_t size)
{
	struct sl_port_args a;
	char err[256];

	if (sl_port_args_parse(spec, &a, err, sizeof(err)) < 0)
		snprintf(key, size, "%s", spec);
	else
		snprintf(key, size, "%s", a.name[0] ? a.name : a.devargs);
}

/* Index of the port @key names in @o, or -1. */
static int
port_find(const struct options *o, const char *key)
{
	char k[SL_PORT_DEVARGS_MAX];

	for (unsigned i = 0; i < o->n_ports; i++) {
		port_spec_key(o->ports[i], k, sizeof(k));
		if (strcmp(k, key) == 0)
			return (int)i;
	}
	return -1;
}

/*
 * Ports are compared with the configuration applied before, by name (or
 * devargs without one): those gone are deleted, new ones added, changed
 * ones deleted and added again, the same code as sluicectl del-port and
 * add-port.  Ports added with sluicectl at run time are not the file's and
 * stay.  In @next, port_args[i] ends up with the live number and name, or
 * number 0 when the port could not be added.
 */
static void
reload_ports(const struct options *prev, struct options *next, unsigned *n_added,
	     unsigned *n_deleted, unsigned *n_failed)
{
	char key[SL_PORT_DEVARGS_MAX], err[512], name[SL_PORT_NAME_MAX + 1];
	uint32_t no;

	for (unsigned i = 0; i < prev->n_ports; i++) {
		int j;
		if (prev->port_args[i].of_no == 0)
			continue; /* not live */
		port_spec_key(prev->ports[i], key, sizeof(key));
		j = port_find(next, key);
		if (j >= 0 && strcmp(prev->ports[i], next->ports[j]) == 0)
			continue;
		if (sl_mgmt_port_del(prev->port_args[i].name, &no, name, err, sizeof(err)) < 0) {
			SL_LOG(WARNING, app, "reload: port %s: %s", prev->port_args[i].name, err);
			continue;
		}
		(*n_deleted)++;
	}
	for (unsigned j = 0; j < next->n_ports; j++) {
		struct sl_port_args *a = &next->port_args[j];
		int i;
		port_spec_key(next->ports[j], key, sizeof(key));
		i = port_find(prev, key);
		if (i >= 0 && prev->port_args[i].of_no != 0 &&
		    strcmp(prev->ports[i], next->ports[j]) == 0) {
			*a = prev->port_args[i]; /* kept */
			continue;
		}
		a->of_no = 0;
		if (sl_mgmt_port_add(next->ports[j], &no, name, err, sizeof(err)) < 0) {
			SL_LOG(ERR, app, "reload: port %s: %s", next->ports[j], err);
			(*n_failed)++;
			continue;
		}
		a->of_no = no;
		snprintf(a->name, sizeof(a->name), "%s", name);
		(*n_added)++;
	}
}

static bool
controllers_equal(const struct options *a, const struct options *b)
{
	if (a->n_controllers != b->n_controllers)
		return false;
	for (unsigned i = 0; i < a->n_controllers; i++)
		if (strcmp(a->controllers[i], b->controllers[i]) != 0)
			return false;
	return true;
}

/* @return 0, or -1 when the new targets could not be set (the old ones stay). */
static int
reload_controllers(struct run *r, const struct options *prev, const struct options *next)
{
	const char *targets[SL_ARRAY_SIZE(next->controllers) + 1];
	unsigned n = 0;
	char err[512];

	if (controllers_equal(prev, next))
		return 0;
	if (r->agent == NULL) {
		SL_LOG(WARNING, app,
		       "reload: controllers changed: needs a restart (the switch "
		       "started without OpenFlow: no controller and --mgmt none)");
		return -1;
	}
	for (unsigned i = 0; i < next->n_controllers; i++)
		targets[n++] = next->controllers[i];
	if (r->mgmt_target[0] != '\0')
		targets[n++] = r->mgmt_target;
	if (sl_ofswitch_targets_set(r->agent, targets, n, err, sizeof(err)) < 0) {
		SL_LOG(ERR, app, "reload: controllers unchanged: %s", err);
		return -1;
	}
	for (unsigned i = 0; i < prev->n_controllers; i++) {
		bool kept = false;
		for (unsigned j = 0; j < next->n_controllers && !kept; j++)
			kept = strcmp(prev->controllers[i], next->controllers[j]) == 0;
		if (!kept)
			SL_LOG(NOTICE, app, "reload: controller %s removed", prev->controllers[i]);
	}
	for (unsigned j = 0; j < next->n_controllers; j++) {
		bool had = false;
		for (unsigned i = 0; i < prev->n_controllers && !had; i++)
			had = strcmp(prev->controllers[i], next->controllers[j]) == 0;
		if (!had)
			SL_LOG(NOTICE, app, "reload: controller %s added", next->controllers[j]);
	}
	return 0;
}

static const char *
fail_mode_name(enum sl_fail_mode m)
{
	return m == SL_FAIL_MODE_SECURE ? "secure" : "standalone";
}

/*
 * SIGHUP.  A file that does not parse changes nothing: the error is logged
 * and the switch goes on as it was.
 */
static void
reload(struct run *r)
{
	struct options *next = calloc(1, sizeof(*next)), *prev = r->applied;
	unsigned n_added = 0, n_deleted = 0, n_failed = 0;
	int exit_now, rc;

	sl_notifyf("RELOADING=1\nMONOTONIC_USEC=%.0f\nSTATUS=reloading the configuration",
		   now_s() * 1e6); /* sd_notify's clock: CLOCK_MONOTONIC, in us */
	if (next == NULL) {
		SL_LOG(ERR, app, "reload: out of memory; nothing changed");
		goto out;
	}
	rc = options_parse(r->argc, r->argv, next, &exit_now, true);
	if (rc < 0) {
		SL_LOG(ERR, app, "reload: %s: the configuration has errors; nothing changed",
		       next->config ? next->config : "command line");
		options_free(next);
		free(next);
		goto out;
	}
	if (next->config == NULL)
		SL_LOG(NOTICE, app,
		       "reload: no configuration file (--config FILE, or " SL_CONF_DIR
		       "/NAME.conf with --name NAME)");
	else
		SL_LOG(NOTICE, app, "reload: reading %s", next->config);
	/* What SIGHUP cannot change is compared with what the switch started with. */
	for (unsigned id = 0; id < SL_OPT__N_DIFF; id++) {
		const char *was = r->o->given[id], *now = next->given[id];
		if (sl_opt_reloadable((enum sl_opt)id))
			continue;
		if ((was == NULL) != (now == NULL) || (was != NULL && strcmp(was, now) != 0))
			SL_LOG(WARNING, app,
			       "reload: %s changed: needs a restart (the switch goes "
			       "on with the value it started with)",
			       sl_opt_name((enum sl_opt)id));
	}
	reload_ports(prev, next, &n_added, &n_deleted, &n_failed);
	if (reload_controllers(r, prev, next) < 0) {
		/* Keep what is in force, so that the next reload tries again. */
		next->n_controllers = 0;
		for (unsigned i = 0; i < prev->n_controllers; i++)
			next->controllers[next->n_controllers++] =
				options_strdup(next, prev->controllers[i]);
	}
	if (next->fail_mode != prev->fail_mode) {
		if (r->agent != NULL) {
			sl_ofswitch_fail_mode_set(r->agent, next->fail_mode);
			SL_LOG(NOTICE, app, "reload: fail mode %s",
			       fail_mode_name(next->fail_mode));
		} else {
			next->fail_mode = prev->fail_mode;
		}
	}
	sl_mgmt_controllers_set(fail_mode_name(next->fail_mode), next->n_controllers);
	SL_LOG(NOTICE, app, "reload: done: %u ports added, %u deleted%s", n_added, n_deleted,
	       n_failed ? " (some could not be added: see above)" : "");
	/* The options the switch started with stay: their strings are in use. */
	if (prev != r->o) {
		options_free(prev);
		free(prev);
	}
	r->applied = next;
out:
	sl_notifyf("READY=1\nSTATUS=forwarding: %u ports", sl_port_count(r->ports));
}

/* The control loop: periodic stats, duration, signals.  Runs on the control thread. */
static void
control_loop(struct sl_switch *sw, void *arg)
{
	struct run *r = arg;
	double start = now_s(),
	       next = start + (r->o->stats_interval > 0 ? r->o->stats_interval : 1);
	struct sample prev;
	bool chain_warned[2] = {false, false};

	take_sample(r, 0, &prev);
	r->samples[r->n_samples++] = prev;
	/* Ports, agent and workers are up: systemd may start what is ordered after us. */
	sl_notifyf("READY=1\nSTATUS=forwarding: %u ports", sl_port_count(r->ports));
	while (!sl_switch_quit_requested()) {
		if (sl_switch_reload_requested())
			reload(r);
		double t = now_s();
		if (r->o->duration > 0 && t - start >= r->o->duration)
			break;
		if (t >= next) {
			struct sample s;
			take_sample(r, t - start, &s);
			if (!r->o->quiet && r->o->stats_interval > 0)
				print_rates(r, &prev, &s);
			if (r->n_samples < SAMPLES_MAX)
				r->samples[r->n_samples++] = s;
			prev = s;
			next += r->o->stats_interval > 0 ? r->o->stats_interval : 1;
			chain_check(r, &chain_warned[0], &chain_warned[1]);
			sl_switch_ports_recover(sw);
		}
		sl_switch_poll(sw);
	}
	r->elapsed = now_s() - start;
	sl_notify("STOPPING=1");
}

static int
print_table_line(const struct run *r, unsigned t)
{
	const struct sl_pipeline_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned n_ctxs = sl_worker_ctxs(r->w, ctxs, SL_DISPATCH_WORKERS_MAX);
	const struct sl_table_spec *ts = sl_pipeline_table_spec(r->pl, t);
	const struct sl_table *tbl = sl_pipeline_table(r->pl, t);
	struct sl_pipeline_table_stats st;
	struct sl_table_stats ts_st = {0};

	sl_pipeline_table_stats(ctxs, n_ctxs, t, &st);
	if (tbl != NULL)
		sl_table_stats_read(tbl, &ts_st);
	printf("  table %-3u %-6s %-10s flows %-7u lookups %-12" PRIu64 " matched %-12" PRIu64
	       " missed %" PRIu64 "\n",
	       t, sl_table_kind_name(ts->kind), ts->name[0] ? ts->name : "-",
	       sl_pipeline_flow_count(r->pl, t), st.lookups, st.matched, st.missed);
	return 0;
}

/* One line per worker (and the I/O core): where the packets went. */
static void
print_workers(const struct run *r)
{
	const struct sl_pipeline_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned n = sl_worker_ctxs(r->w, ctxs, SL_DISPATCH_WORKERS_MAX);
	const struct sl_dispatch *disp = r->io != NULL ? sl_worker_io_dispatch(r->io) : NULL;

	printf("workers: %u, dispatch %s", sl_worker_group_size(r->w),
	       r->io != NULL ? "io" : "rss");
	if (r->io != NULL)
		printf(", scheduler %s, threshold %.2f, adjustments %" PRIu64,
		       sl_sched_name(sl_dispatch_sched(disp)), sl_dispatch_threshold(disp),
		       sl_dispatch_adjustments(disp));
	printf("\n");
	if (r->io != NULL) {
		struct sl_worker_io_stats ios;
		sl_worker_io_read(r->io, &ios);
		printf("  io      rx %-12" PRIu64 " dispatch-full drops %" PRIu64 "\n",
		       ios.loop.packets, ios.ring_full);
	}
	for (unsigned i = 0; i < n; i++) {
		struct sl_worker_member_stats ms;
		uint64_t drops[SL_DROP__MAX], nd = 0;

		sl_pipeline_drop_stats(&ctxs[i], 1, drops);
		for (unsigned d = 0; d < SL_DROP__MAX; d++)
			nd += drops[d];
		sl_worker_member_read(r->w, i, &ms);
		printf("  worker %-2u packets %-12" PRIu64 " pipeline drops %-10" PRIu64
		       " tx drops %-10" PRIu64,
		       i, ms.packets, nd, ms.tx_drops);
		if (r->io != NULL) {
			struct sl_dispatch_worker_stats ds;
			sl_dispatch_worker_stats(disp, i, &ds);
			printf(" dispatched %-12" PRIu64 " ring-full %-8" PRIu64
			       " adjusted away %" PRIu64,
			       ds.packets, ds.ring_full, ds.adjust_from);
		}
		printf("\n");
	}
}

static void
print_summary(const struct run *r)
{
	struct sl_worker_totals tot;
	struct sl_worker_port_stats ctrl;
	struct sl_worker_loop_stats ls;
	struct sl_worker_port_stats retired;
	uint64_t drops[SL_DROP__MAX];
	int last = sl_pipeline_last_table(r->pl);

	sl_worker_totals(r->w, &tot);
	sl_worker_drops(r->w, drops);
	sl_worker_ctrl_read(r->w, &ctrl);
	sl_worker_loop_read(r->w, &ls);
	sl_worker_retired_read(r->w, &retired);
	/* The tx path counts its drops per port: report them under their reason too. */
	drops[SL_DROP_TX_FULL] += tot.tx_drops - ctrl.tx_drops;
	printf("\n=== sluice: final counters after %.1f s ===\n", r->elapsed);
	printf("ports:\n");
	for (unsigned p = 0; p < SL_PORT_SLOTS; p++) {
		struct sl_worker_port_stats pss, *ps = &pss;
		struct sl_port_hw_stats hw;
		struct sl_port_link link;
		char no[16];

		if (r->ports[p].of_no == 0)
			continue;
		sl_worker_port_read(r->w, p, &pss);
		sl_port_hw_stats(&r->ports[p], &hw);
		sl_port_link(&r->ports[p], &link);
		printf("  port %-5s %-15s link %-4s rx %-12" PRIu64 " tx %-12" PRIu64
		       " tx_drop %-8" PRIu64 " (device: imissed %" PRIu64 ", rx_nombuf %" PRIu64
		       ")\n",
		       sl_port_no_format(r->ports[p].of_no, no, sizeof(no)), r->ports[p].name,
		       link.up ? "up" : "down", ps->rx_packets, ps->tx_packets, ps->tx_drops,
		       hw.imissed, hw.rx_nombuf);
	}
	if (retired.rx_packets || retired.tx_packets || retired.tx_drops)
		printf("  deleted ports         rx %-12" PRIu64 " tx %-12" PRIu64
		       " tx_drop %" PRIu64 "\n",
		       retired.rx_packets, retired.tx_packets, retired.tx_drops);
	printf("tables:\n");
	for (int t = 0; t <= last; t++)
		if (sl_pipeline_table(r->pl, (unsigned)t) != NULL ||
		    sl_pipeline_flow_count(r->pl, (unsigned)t) > 0)
			print_table_line(r, (unsigned)t);
	printf("drops:\n");
	for (unsigned d = 0; d < SL_DROP__MAX; d++)
		if (drops[d] || d == SL_DROP_TX_FULL)
			printf("  %-14s %" PRIu64 "\n", sl_drop_reason_name(d), drops[d]);
	if (r->agent != NULL || ctrl.rx_packets || ctrl.tx_packets || ctrl.tx_drops) {
		struct sl_worker_pin_drops pdd, *pd = &pdd;
		sl_worker_pin_drops_read(r->w, &pdd);
		printf("controller: packet_outs %" PRIu64 ", packet_ins queued %" PRIu64
		       ", not queued %" PRIu64 " (no controller %" PRIu64 ", rate limit %" PRIu64
		       ", queue full %" PRIu64 ", no mbuf %" PRIu64 ")\n",
		       ctrl.rx_packets, ctrl.tx_packets, ctrl.tx_drops, pd->no_controller,
		       pd->rate_limited, pd->queue_full, pd->no_mbuf);
	}
	if (r->agent != NULL) {
		struct sl_ofswitch_stats ss;
		sl_ofswitch_stats(r->agent, &ss);
		printf("openflow: %" PRIu64 " messages, %" PRIu64 " flow_mods, %" PRIu64
		       " errors sent, %" PRIu64 " packet_ins sent, %" PRIu64
		       " packet_outs, %" PRIu64 " publishes, %" PRIu64 " flows expired\n",
		       ss.msgs_rx, ss.flow_mods, ss.errors_sent, ss.packet_ins_sent, ss.packet_outs,
		       ss.publishes, ss.flows_expired);
		/* Packet-ins queued by the workers: each one forwarded, dropped or still queued. */
		struct sl_worker_port_stats cs;
		unsigned pending = sl_worker_pin_pending(r->w);
		sl_worker_ctrl_read(r->w, &cs);
		uint64_t ends = ss.packet_ins_forwarded + ss.packet_ins_standalone +
				ss.packet_ins_dropped + pending;
		printf("check: packet-ins queued %" PRIu64 " = forwarded %" PRIu64
		       " + standalone %" PRIu64 " + dropped %" PRIu64 " (unwanted %" PRIu64
		       ", congested %" PRIu64 ", too big %" PRIu64 ") + pending %u: %s\n",
		       cs.tx_packets, ss.packet_ins_forwarded, ss.packet_ins_standalone,
		       ss.packet_ins_dropped, ss.pin_drop_unwanted, ss.pin_drop_congested,
		       ss.pin_drop_too_big, pending, cs.tx_packets == ends ? "OK" : "MISMATCH");
	}
	printf("check: rx %" PRIu64 " + copies %" PRIu64 " = tx %" PRIu64 " + tx drops %" PRIu64
	       " + pipeline drops %" PRIu64 ": %s\n",
	       tot.rx, tot.copies, tot.tx, tot.tx_drops, tot.pipeline_drops,
	       tot.rx + tot.copies == tot.tx + tot.tx_drops + tot.pipeline_drops ? "OK"
										 : "MISMATCH");
	uint64_t dc_hits, dc_misses;
	const struct sl_pipeline_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned n_ctxs = sl_worker_ctxs(r->w, ctxs, SL_DISPATCH_WORKERS_MAX);
	sl_pipeline_cache_stats(ctxs, n_ctxs, &dc_hits, &dc_misses);
	if (dc_hits + dc_misses)
		printf("decision cache: %" PRIu64 " hits, %" PRIu64 " misses (%.1f %% hits)\n",
		       dc_hits, dc_misses, 100.0 * (double)dc_hits / (double)(dc_hits + dc_misses));
	printf("pipeline length: installed goto chain %u tables, longest traversed %u\n",
	       sl_pipeline_chain_installed(r->pl), sl_pipeline_chain_traversed(ctxs, n_ctxs));
	if (ls.packets)
		printf("datapath: %.1f busy cycles/packet, %.1f packets/burst\n",
		       (double)ls.busy_cycles / (double)ls.packets,
		       (double)ls.packets / (double)ls.bursts);
	if (sl_worker_group_size(r->w) > 1 || r->io != NULL)
		print_workers(r);
}

static int
write_json(const struct run *r, const char *path)
{
	struct sl_worker_totals tot;
	uint64_t drops[SL_DROP__MAX];
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		fprintf(stderr, "sluice: --json %s: %s\n", path, strerror(errno));
		return -errno;
	}
	struct sl_worker_port_stats ctrl;
	struct sl_worker_loop_stats ls;

	sl_worker_totals(r->w, &tot);
	sl_worker_drops(r->w, drops);
	sl_worker_ctrl_read(r->w, &ctrl);
	sl_worker_loop_read(r->w, &ls);
	/* The tx path counts its drops per port: report them under their reason too. */
	drops[SL_DROP_TX_FULL] += tot.tx_drops - ctrl.tx_drops;
	fprintf(f, "{\n  \"elapsed_s\": %.3f,\n  \"tsc_hz\": %" PRIu64 ",\n", r->elapsed,
		rte_get_tsc_hz());
	fprintf(f,
		"  \"rx\": %" PRIu64 ", \"tx\": %" PRIu64 ", \"tx_drops\": %" PRIu64
		", \"pipeline_drops\": %" PRIu64 ", \"copies\": %" PRIu64 ",\n",
		tot.rx, tot.tx, tot.tx_drops, tot.pipeline_drops, tot.copies);
	fprintf(f,
		"  \"busy_cycles\": %" PRIu64 ", \"packets\": %" PRIu64 ", \"bursts\": %" PRIu64
		",\n",
		ls.busy_cycles, ls.packets, ls.bursts);
	const struct sl_pipeline_ctx *cctx[SL_DISPATCH_WORKERS_MAX];
	unsigned n_cctx = sl_worker_ctxs(r->w, cctx, SL_DISPATCH_WORKERS_MAX);
	fprintf(f, "  \"chain_installed\": %u, \"chain_traversed\": %u,\n",
		sl_pipeline_chain_installed(r->pl), sl_pipeline_chain_traversed(cctx, n_cctx));
	fprintf(f, "  \"drops\": {");
	for (unsigned d = 0; d < SL_DROP__MAX; d++)
		fprintf(f, "%s\"%s\": %" PRIu64, d ? ", " : "", sl_drop_reason_name(d), drops[d]);
	fprintf(f, "},\n");
	if (r->have_sw_stats) {
		const struct sl_ofswitch_stats *ss = &r->sw_stats;
		fprintf(f,
			"  \"packet_ins\": {\"queued\": %" PRIu64 ", \"forwarded\": %" PRIu64
			", \"standalone\": %" PRIu64 ", \"dropped\": %" PRIu64
			", \"drop_unwanted\": %" PRIu64 ", \"drop_congested\": %" PRIu64
			", \"drop_too_big\": %" PRIu64 ", \"pending\": %u},\n",
			ctrl.tx_packets, ss->packet_ins_forwarded, ss->packet_ins_standalone,
			ss->packet_ins_dropped, ss->pin_drop_unwanted, ss->pin_drop_congested,
			ss->pin_drop_too_big, r->pins_pending);
	}
	fprintf(f, "  \"ports\": [");
	for (unsigned p = 0, k = 0; p < SL_PORT_SLOTS; p++) {
		struct sl_worker_port_stats pss, *ps = &pss;
		if (r->ports[p].of_no == 0)
			continue;
		sl_worker_port_read(r->w, p, &pss);
		fprintf(f,
			"%s{\"port\": %u, \"name\": \"%s\", \"rx\": %" PRIu64 ", \"tx\": %" PRIu64
			", \"tx_drops\": %" PRIu64 "}",
			k++ ? ", " : "", r->ports[p].of_no, r->ports[p].name, ps->rx_packets,
			ps->tx_packets, ps->tx_drops);
	}
	/* Ports deleted at run time: the totals keep their packets. */
	struct sl_worker_port_stats retired;
	const struct sl_dispatch *disp = r->io != NULL ? sl_worker_io_dispatch(r->io) : NULL;
	sl_worker_retired_read(r->w, &retired);
	fprintf(f,
		"],\n  \"ports_deleted\": {\"rx\": %" PRIu64 ", \"tx\": %" PRIu64
		", \"tx_drops\": %" PRIu64 "},\n  \"workers\": [",
		retired.rx_packets, retired.tx_packets, retired.tx_drops);
	for (unsigned i = 0; i < n_cctx; i++) {
		struct sl_worker_member_stats ms;
		uint64_t wd[SL_DROP__MAX];
		struct sl_dispatch_worker_stats ds = {0};

		sl_pipeline_drop_stats(&cctx[i], 1, wd);
		sl_worker_member_read(r->w, i, &ms);
		if (r->io != NULL)
			sl_dispatch_worker_stats(disp, i, &ds);
		fprintf(f,
			"%s{\"worker\": %u, \"packets\": %" PRIu64 ", \"tx_drops\": %" PRIu64
			", \"dispatched\": %" PRIu64 ", \"ring_full\": %" PRIu64
			", \"adjust_from\": %" PRIu64 ", \"adjust_to\": %" PRIu64 ", \"drops\": {",
			i ? ", " : "", i, ms.packets, ms.tx_drops, ds.packets, ds.ring_full,
			ds.adjust_from, ds.adjust_to);
		for (unsigned d = 0; d < SL_DROP__MAX; d++)
			fprintf(f, "%s\"%s\": %" PRIu64, d ? ", " : "", sl_drop_reason_name(d),
				wd[d]);
		fprintf(f, "}}");
	}
	fprintf(f,
		"],\n  \"dispatch\": \"%s\", \"scheduler\": \"%s\", \"adjustments\": %" PRIu64
		",\n",
		r->io != NULL ? "io" : "rss",
		r->io != NULL ? sl_sched_name(sl_dispatch_sched(disp)) : "",
		r->io != NULL ? sl_dispatch_adjustments(disp) : 0);
	fprintf(f, "  \"tables\": [");
	const struct sl_pipeline_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned n_ctxs = sl_worker_ctxs(r->w, ctxs, SL_DISPATCH_WORKERS_MAX);
	bool first = true;
	for (int t = 0; t <= sl_pipeline_last_table(r->pl); t++) {
		struct sl_pipeline_table_stats st;
		sl_pipeline_table_stats(ctxs, n_ctxs, (unsigned)t, &st);
		if (sl_pipeline_flow_count(r->pl, (unsigned)t) == 0 && st.lookups == 0)
			continue;
		fprintf(f,
			"%s{\"table\": %d, \"flows\": %u, \"lookups\": %" PRIu64
			", \"matched\": %" PRIu64 "}",
			first ? "" : ", ", t, sl_pipeline_flow_count(r->pl, (unsigned)t),
			st.lookups, st.matched);
		first = false;
	}
	fprintf(f, "],\n  \"samples\": [");
	for (unsigned i = 0; i < r->n_samples; i++)
		fprintf(f,
			"%s{\"t\": %.3f, \"rx\": %" PRIu64 ", \"tx\": %" PRIu64
			", \"drops\": %" PRIu64 ", \"busy_cycles\": %" PRIu64
			", \"packets\": %" PRIu64 "}",
			i ? ", " : "", r->samples[i].t, r->samples[i].rx, r->samples[i].tx,
			r->samples[i].drops, r->samples[i].busy_cycles, r->samples[i].packets);
	fprintf(f, "]\n}\n");
	fclose(f);
	return 0;
}

/*
 * The management socket: /run/sluice/NAME.mgmt for root, else under
 * $XDG_RUNTIME_DIR (or /tmp).  Refuses to start a second switch with the
 * same name: a socket that answers belongs to a running Sluice.
 * @return 0 (@target is "punix:PATH" or empty for none), or -1 after printing why.
 */
static int
mgmt_target(const struct options *o, char *target, size_t size)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char dir[200], path[sizeof(sa.sun_path)];
	int fd, n;

	target[0] = '\0';
	if (o->mgmt != NULL && strcmp(o->mgmt, "none") == 0)
		return 0;
	if (o->mgmt != NULL) {
		n = snprintf(path, sizeof(path), "%s", o->mgmt);
	} else {
		const char *rt = getenv("XDG_RUNTIME_DIR");
		snprintf(dir, sizeof(dir), "%s/sluice",
			 geteuid() == 0 ? "/run" : (rt != NULL && rt[0] ? rt : "/tmp"));
		if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
			fprintf(stderr,
				"sluice: cannot create %s for the management socket: %s "
				"(use --mgmt PATH or --mgmt none)\n",
				dir, strerror(errno));
			return -1;
		}
		n = snprintf(path, sizeof(path), "%s/%s.mgmt", dir, o->name);
	}
	if (n <= 0 || (size_t)n >= sizeof(path)) {
		fprintf(stderr, "sluice: --mgmt: path '%s' too long (at most %zu bytes)\n",
			o->mgmt ? o->mgmt : path, sizeof(path) - 1);
		return -1;
	}
	memcpy(sa.sun_path, path, (size_t)n + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		fprintf(stderr,
			"sluice: another Sluice named '%s' is running (%s answers); "
			"choose another --name\n",
			o->name, path);
		return -1;
	}
	if (fd >= 0)
		close(fd);
	snprintf(target, size, "punix:%s", path);
	return 0;
}

/*
 * TLS for ssl:/pssl: targets.  The three files go together, and a TLS target
 * needs them.  They are loaded before anything else starts, so a missing,
 * unreadable or mismatched file is a configuration error naming the file.
 * @return 0 (*@out NULL when TLS is not used), or -1 after printing why.
 */
static int
tls_setup(const struct options *o, struct sl_tls_ctx **out)
{
	const struct sl_tls_files *f = &o->tls;
	const char *tls_target = NULL, *missing;
	char err[512];

	*out = NULL;
	for (unsigned i = 0; i < o->n_controllers && !tls_target; i++)
		if (strncmp(o->controllers[i], "ssl:", 4) == 0 ||
		    strncmp(o->controllers[i], "pssl:", 5) == 0)
			tls_target = o->controllers[i];
	if (!tls_target && !f->private_key && !f->certificate && !f->ca_cert)
		return 0;
	missing = !f->private_key   ? "--private-key"
		  : !f->certificate ? "--certificate"
		  : !f->ca_cert     ? "--ca-cert"
				    : NULL;
	if (missing) {
		fprintf(stderr,
			"sluice: %s: TLS needs --private-key, --certificate and --ca-cert "
			"(%s is missing)\n",
			tls_target ? tls_target : "--private-key/--certificate/--ca-cert", missing);
		return -1;
	}
	if (sl_tls_ctx_create(f, out, err, sizeof(err)) < 0) {
		fprintf(stderr, "sluice: TLS: %s\n", err);
		return -1;
	}
	return 0;
}

/* The forwarding modes the switch starts with: --fwd-mode, else the flow file's fwd-mode=. */
static struct sl_fwd_params fwd_chosen;

/* sl_switch_load_fn: the rules of the options, once EAL is up. */
static int
load_switch_rules(void *arg, struct sl_pipeline *pl)
{
	const struct options *o = arg;

	if (load_rules(pl, o) < 0)
		return -EINVAL;
	fwd_chosen = o->fwd_mode == NULL && file_fwd_set ? file_fwd_params : o->fwd_params;
	return 0;
}

/* The pipeline as the options configure it, before any rule.  @return 0 or -ENOMEM. */
static int
pipeline_make(const struct options *o, struct sl_pipeline **out)
{
	struct sl_pipeline *pl;

	if (sl_pipeline_create(&pl) < 0)
		return -ENOMEM;
	sl_pipeline_cache_enable(pl, !o->no_cache);
	sl_pipeline_ffp_enable(pl, !o->no_ffp);
	sl_pipeline_ffp_cost_model(pl, !o->ffp_no_model);
	sl_pipeline_ffp_path_enable(pl, !o->no_ffp_path);
	sl_pipeline_ffp_auto_set(pl, &o->ffp_auto);
	sl_pipeline_search_budget_set(pl, &o->search_budget); /* checked by the option parser */
	/* The ports are known by number already: flow files check watch ports against them. */
	for (unsigned i = 0; i < o->n_ports; i++)
		sl_pipeline_port_add(pl, o->port_args[i].of_no, true);
	*out = pl;
	return 0;
}

/* --check: load the rules without EAL (mask tables validate with their portable structure). */
static int
check_rules(struct sl_pipeline *pl, const struct options *o)
{
	if (load_rules(pl, o) < 0) {
		sl_pipeline_destroy(pl);
		return EXIT_USAGE;
	}
	printf("%s: %u flows OK\n", o->flows_file ? o->flows_file : "(flows)",
	       sl_pipeline_flow_count(pl, 255));
	if (o->dump_flows)
		sl_pipeline_flow_iterate(pl, 255, print_flow, NULL);
	sl_pipeline_destroy(pl);
	return 0;
}

static void
switch_params(struct options *o, char **eal_argv, int n_eal, struct sl_pipeline *pl,
	      const char *mgmt, struct sl_tls_ctx *tls, struct sl_switch_params *sp)
{
	*sp = (struct sl_switch_params){
		.name = o->name,
		.eal_argv = eal_argv,
		.eal_argc = n_eal,
		.pl = pl,
		.load = load_switch_rules,
		.load_arg = o,
		.log_levels = o->log_levels,
		.n_log_levels = o->n_log_levels,
		.verbose = o->verbose,
		.mbufs = o->mbufs,
		.burst = o->burst,
		.workers = o->workers,
		.dispatch_io = o->dispatch_io,
		.sched = o->sched,
		.sched_threshold = o->sched_threshold,
		.worker_ring = o->worker_ring,
		.rx_queues = o->rx_queues,
		.pin_rate = o->pin_rate,
		.idle_sleep_max = o->idle_sleep_max,
		.agent_awake_us = o->agent_awake_us,
		.port_specs = o->ports,
		.port_args = o->port_args,
		.n_ports = o->n_ports,
		.max_port_no = o->max_port_no,
		.no_local = o->no_local,
		.fwd_params = &fwd_chosen,
		.fwd_source = o->fwd_mode == NULL ? "fwd-mode" : "--fwd-mode",
		.controllers = o->controllers,
		.n_controllers = o->n_controllers,
		.mgmt_target = mgmt,
		.mgmt_gid = o->mgmt_gid,
		.dpid = o->dpid,
		.fail_mode = o->fail_mode,
		.probe_interval = o->probe_interval,
		.tls = tls,
		.metrics = o->metrics,
	};
}

/* What the control loop, the reload and the summaries read: the switch's parts. */
static void
run_init(struct run *r, struct sl_switch *sw, struct options *o, int argc, char **argv,
	 const char *mgmt)
{
	r->sw = sw;
	r->o = o;
	r->applied = o;
	r->argc = argc;
	r->argv = argv;
	r->mgmt_target = mgmt;
	r->pl = sl_switch_pipeline(sw);
	r->ports = sl_switch_ports(sw);
	r->w = sl_switch_worker(sw);
	r->io = sl_switch_io(sw);
	r->agent = sl_switch_ofswitch(sw);
}

static void
print_banner(const struct run *r)
{
	const char *name = r->o->name;

	printf("sluice: name %s: sluicectl -n %s, dpdk-telemetry.py -f %s\n", name, name, name);
	fflush(stdout);
	if (!r->o->quiet) {
		printf("sluice %s: %u ports, %u flows in %d tables\n", SL_VERSION,
		       sl_port_count(r->ports), sl_pipeline_flow_count(r->pl, 255),
		       sl_pipeline_last_table(r->pl) + 1);
		for (unsigned i = 0; i < SL_PORT_SLOTS; i++) {
			char no[16];
			if (r->ports[i].of_no != 0)
				printf("  port %s: %s (%s)\n",
				       sl_port_no_format(r->ports[i].of_no, no, sizeof(no)),
				       r->ports[i].name, r->ports[i].devargs);
		}
	}
	if (r->o->dump_flows)
		sl_pipeline_flow_iterate(r->pl, 255, print_flow, NULL);
}

/* After the run: the summary, the flows, the --json file.  @return the exit status. */
static int
report(struct run *r)
{
	print_summary(r);
	if (r->agent != NULL) {
		sl_ofswitch_stats(r->agent, &r->sw_stats);
		r->pins_pending = sl_worker_pin_pending(r->w);
		r->have_sw_stats = true;
	}
	if (r->o->dump_flows) {
		printf("flows:\n");
		sl_pipeline_flow_iterate(r->pl, 255, print_flow, NULL);
	}
	if (r->o->json_path != NULL && write_json(r, r->o->json_path) < 0)
		return EXIT_RUNTIME;
	return 0;
}

int
main(int argc, char **argv)
{
	static struct run run;
	static struct options o; /* static: what it owns stays reachable until exit */
	struct sl_switch_params sp;
	struct sl_switch *sw;
	struct sl_pipeline *pl;
	char *eal_argv[64], prefix[80], mgmt[128];
	struct sl_tls_ctx *tls = NULL;
	int first_eal, exit_now, n_eal, rc, status;

	first_eal = options_parse(argc, argv, &o, &exit_now, false);
	if (first_eal < 0 || exit_now >= 0) {
		options_free(&o);
		return first_eal < 0 ? EXIT_USAGE : exit_now;
	}
	/*
	 * A --json file that cannot be written would lose the run's data at exit:
	 * check now, without creating it (a run that fails early writes none).
	 */
	if (o.json_path != NULL && !o.check_only) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", o.json_path);
		if (access(o.json_path, F_OK) == 0 ? access(o.json_path, W_OK) < 0
						   : access(dirname(dir), W_OK | X_OK) < 0) {
			fprintf(stderr, "sluice: --json %s: %s\n", o.json_path, strerror(errno));
			return EXIT_USAGE;
		}
	}
	if (!o.check_only && tls_setup(&o, &tls) < 0)
		return EXIT_USAGE;
	if (pipeline_make(&o, &pl) < 0) {
		fprintf(stderr, "sluice: out of memory\n");
		return EXIT_RUNTIME;
	}
	if (o.check_only)
		return check_rules(pl, &o);
	n_eal = eal_args(argc, argv, first_eal, &o, eal_argv, prefix, sizeof(prefix));
	if (n_eal < 0 || mgmt_target(&o, mgmt, sizeof(mgmt)) < 0) {
		sl_pipeline_destroy(pl);
		return EXIT_USAGE;
	}

	switch_params(&o, eal_argv, n_eal, pl, mgmt, tls, &sp);
	rc = sl_switch_create(&sp, &sw); /* owns pl and tls from here, even when it fails */
	if (rc < 0)
		return rc == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	run_init(&run, sw, &o, argc, argv, mgmt);
	print_banner(&run);
	sl_switch_run(sw, control_loop, &run);
	status = report(&run);
	sl_switch_destroy(sw);
	return status;
}
