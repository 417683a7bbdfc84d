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
#include <net/if.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pdump.h>
#include <rte_version.h>

#include <dirent.h>
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
#include "../src/tls/tls.h"
#include "../src/worker/worker.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define SAMPLES_MAX 3600

static volatile sig_atomic_t quit_signal;
static volatile sig_atomic_t hup_signal;

/* SIGHUP used to end the switch and leave its sockets behind: it is a reload request. */
static void
on_hup(int sig)
{
	(void)sig;
	hup_signal = 1;
}

static void
on_signal(int sig)
{
	quit_signal = sig;
}

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
	out[n++] = "--log-level=lib.telemetry:warning";
	if (!hugepages_free()) {
		if (o->dumpcap) {
			fprintf(stderr, "sluice: --dumpcap: dpdk-dumpcap needs hugepages and none are "
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
			snprintf(err->msg, sizeof(err->msg), "table %u is already declared (by "
				 "--table or a [table.%u] section)", ts->table_id, ts->table_id);
		else
			snprintf(err->msg, sizeof(err->msg), "table %u is already declared "
				 "(line %u)", ts->table_id, declared_at[ts->table_id]);
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

/* DPDK's telemetry socket: mode 0660, in --mgmt-group when given (it reads and changes the switch). */
static int
telemetry_socket_secure(int gid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/dpdk_telemetry.v2", rte_eal_get_runtime_dir());
	if (chmod(path, 0660) < 0) {
		if (errno == ENOENT)
			return 0; /* telemetry disabled (--no-telemetry) */
		fprintf(stderr, "sluice: telemetry socket %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (gid >= 0 && chown(path, (uid_t)-1, (gid_t)gid) < 0) {
		fprintf(stderr, "sluice: telemetry socket %s: group %d: %s\n", path, gid,
			strerror(errno));
		return -1;
	}
	return 0;
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
	printf("  n_packets=%" PRIu64 ", n_bytes=%" PRIu64 ", %s\n", sl_flow_packets(f), sl_flow_bytes(f), buf);
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
	struct sl_worker *w;    /* the lead worker (readers sum over its group) */
	struct sl_worker_io *io; /* the I/O core, or NULL */
	struct sl_ofswitch *sw; /* NULL without --controller */
	struct sl_metrics *metrics; /* --metrics exporter, or NULL */
	bool have_sw_stats;     /* sw_stats and pins_pending taken before sw went away */
	struct sl_ofswitch_stats sw_stats;
	unsigned pins_pending;
	struct sample samples[SAMPLES_MAX];
	unsigned n_samples;
	double elapsed;
	/* SIGHUP: the command line to read again over the file, what it applied. */
	int argc;
	char **argv;
	const char *mgmt_target;   /* punix:PATH of the management socket, or "" */
	struct options *applied;   /* ports, controllers, fail mode in force */
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
		printf("  %6.1f cyc/pkt",
		       (double)(b->busy_cycles - a->busy_cycles) / (double)(b->packets - a->packets));
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
		SL_LOG(WARNING, app, "the installed flows make a goto chain of %u tables "
		       "(--chain-warn %u): loss is possible at high rates", inst, r->o->chain_warn);
	if (trav >= r->o->chain_warn && !*warned_traversed)
		SL_LOG(WARNING, app, "packets traversed a goto chain of %u tables (--chain-warn %u)",
		       trav, r->o->chain_warn);
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
	if (r->sw == NULL) {
		SL_LOG(WARNING, app, "reload: controllers changed: needs a restart (the switch "
				     "started without OpenFlow: no controller and --mgmt none)");
		return -1;
	}
	for (unsigned i = 0; i < next->n_controllers; i++)
		targets[n++] = next->controllers[i];
	if (r->mgmt_target[0] != '\0')
		targets[n++] = r->mgmt_target;
	if (sl_ofswitch_targets_set(r->sw, targets, n, err, sizeof(err)) < 0) {
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
		SL_LOG(NOTICE, app, "reload: no configuration file (--config FILE, or "
				    SL_CONF_DIR "/NAME.conf with --name NAME)");
	else
		SL_LOG(NOTICE, app, "reload: reading %s", next->config);
	/* What SIGHUP cannot change is compared with what the switch started with. */
	for (unsigned id = 0; id < SL_OPT__N_DIFF; id++) {
		const char *was = r->o->given[id], *now = next->given[id];
		if (sl_opt_reloadable((enum sl_opt)id))
			continue;
		if ((was == NULL) != (now == NULL) || (was != NULL && strcmp(was, now) != 0))
			SL_LOG(WARNING, app, "reload: %s changed: needs a restart (the switch goes "
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
		if (r->sw != NULL) {
			sl_ofswitch_fail_mode_set(r->sw, next->fail_mode);
			SL_LOG(NOTICE, app, "reload: fail mode %s", fail_mode_name(next->fail_mode));
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

/*
 * A port on a kernel interface (af_packet, af_xdp) holds sockets bound to
 * the interface it opened: once that interface is deleted and made again
 * under the same name (another ifindex), the port would never forward
 * again.  Each second: such a port is deleted and added again with its
 * devargs, name and number (sluicectl del-port/add-port's code, so the
 * workers, the pipeline and the controllers' port_status follow); while the
 * interface is missing the link reads down, and an add that fails (the
 * interface not back yet) is tried again the next second.
 */
struct port_retry {
	char spec[SL_PORT_DEVARGS_MAX + 64]; /* DEVARGS,name=NAME,ofport=N; "" = none */
};

static void
ports_recover(struct run *r, struct port_retry retry[SL_PORT_SLOTS])
{
	char err[256], name[SL_PORT_NAME_MAX + 1];
	uint32_t no;

	for (unsigned s = 0; s < SL_PORT_SLOTS; s++) {
		const struct sl_port *p = &r->ports[s];
		if (s != SL_PORT_SLOT_LOCAL && p->of_no != 0 && p->kernel_iface[0] != '\0') {
			unsigned idx = if_nametoindex(p->kernel_iface);
			if (idx == 0 || idx == p->kernel_ifindex)
				continue;
			snprintf(retry[s].spec, sizeof(retry[s].spec), "%s,name=%s,ofport=%u", p->devargs,
				 p->name, p->of_no);
			SL_LOG(NOTICE, app, "port %u (%s): interface %s is another one now (ifindex "
			       "%u, was %u): opening the port again", p->of_no, p->name,
			       p->kernel_iface, idx, p->kernel_ifindex);
			if (sl_mgmt_port_del(p->name, &no, name, err, sizeof(err)) < 0) {
				SL_LOG(WARNING, app, "port %s: %s", p->name, err);
				retry[s].spec[0] = '\0';
				continue;
			}
		}
		if (retry[s].spec[0] == '\0')
			continue;
		if (sl_mgmt_port_add(retry[s].spec, &no, name, err, sizeof(err)) == 0) {
			SL_LOG(NOTICE, app, "port %u (%s) is back", no, name);
			retry[s].spec[0] = '\0';
		}
	}
}

/* The control loop: periodic stats, duration, signals.  Runs on the main lcore. */
static void
control_loop(struct run *r)
{
	double start = now_s(), next = start + (r->o->stats_interval > 0 ? r->o->stats_interval : 1);
	struct sample prev;
	bool chain_warned[2] = {false, false};
	static struct port_retry retry[SL_PORT_SLOTS];

	take_sample(r, 0, &prev);
	r->samples[r->n_samples++] = prev;
	/* Ports, agent and workers are up: systemd may start what is ordered after us. */
	sl_notifyf("READY=1\nSTATUS=forwarding: %u ports", sl_port_count(r->ports));
	while (!quit_signal) {
		if (hup_signal) {
			hup_signal = 0;
			reload(r);
		}
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
			ports_recover(r, retry);
		}
		/*
		 * Packet-ins arrive through a ring that cannot wake poll(): a 1 ms
		 * round bounds their wait (a thousand cheap wakeups a second).  With
		 * --idle-sleep-max, while the datapath sleeps at its longest, rounds
		 * are 4 ms: an idle switch wakes less (a packet-in after an idle
		 * period may wait up to 4 ms; controller messages wake poll() at once).
		 */
		int round_ms = sl_worker_idle_longest(r->w) ? 4 : 1;
		if (r->sw != NULL)
			sl_ofswitch_run(r->sw, round_ms);
		else
			usleep((useconds_t)round_ms * 1000);
		sl_mgmt_run();
		sl_metrics_run(r->metrics);
		sl_pipeline_poll(r->pl); /* mask-table snapshots the builder thread finished */
	}
	r->elapsed = now_s() - start;
	sl_notify("STOPPING=1");
	sl_mgmt_destroy(); /* ends a capture while the worker still reports grace periods */
	sl_metrics_destroy(r->metrics);
	r->metrics = NULL;
}

static void *
control_thread(void *arg)
{
	struct run *r = arg;

	control_loop(r);
	sl_worker_stop(r->w);
	return NULL;
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

	printf("workers: %u, dispatch %s", sl_worker_group_size(r->w), r->io != NULL ? "io" : "rss");
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
		       " tx drops %-10" PRIu64, i, ms.packets, nd, ms.tx_drops);
		if (r->io != NULL) {
			struct sl_dispatch_worker_stats ds;
			sl_dispatch_worker_stats(disp, i, &ds);
			printf(" dispatched %-12" PRIu64 " ring-full %-8" PRIu64 " adjusted away %" PRIu64,
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
	if (r->sw != NULL || ctrl.rx_packets || ctrl.tx_packets || ctrl.tx_drops) {
		struct sl_worker_pin_drops pdd, *pd = &pdd;
		sl_worker_pin_drops_read(r->w, &pdd);
		printf("controller: packet_outs %" PRIu64 ", packet_ins queued %" PRIu64
		       ", not queued %" PRIu64 " (no controller %" PRIu64 ", rate limit %" PRIu64
		       ", queue full %" PRIu64 ", no mbuf %" PRIu64 ")\n",
		       ctrl.rx_packets, ctrl.tx_packets, ctrl.tx_drops,
		       pd->no_controller, pd->rate_limited, pd->queue_full, pd->no_mbuf);
	}
	if (r->sw != NULL) {
		struct sl_ofswitch_stats ss;
		sl_ofswitch_stats(r->sw, &ss);
		printf("openflow: %" PRIu64 " messages, %" PRIu64 " flow_mods, %" PRIu64
		       " errors sent, %" PRIu64 " packet_ins sent, %" PRIu64 " packet_outs, %" PRIu64
		       " publishes, %" PRIu64 " flows expired\n",
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
	fprintf(f, "  \"rx\": %" PRIu64 ", \"tx\": %" PRIu64 ", \"tx_drops\": %" PRIu64
		   ", \"pipeline_drops\": %" PRIu64 ", \"copies\": %" PRIu64 ",\n",
		tot.rx, tot.tx, tot.tx_drops, tot.pipeline_drops, tot.copies);
	fprintf(f, "  \"busy_cycles\": %" PRIu64 ", \"packets\": %" PRIu64 ", \"bursts\": %" PRIu64
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
		fprintf(f, "  \"packet_ins\": {\"queued\": %" PRIu64 ", \"forwarded\": %" PRIu64
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
		fprintf(f, "%s{\"port\": %u, \"name\": \"%s\", \"rx\": %" PRIu64 ", \"tx\": %" PRIu64
			   ", \"tx_drops\": %" PRIu64 "}",
			k++ ? ", " : "", r->ports[p].of_no, r->ports[p].name, ps->rx_packets,
			ps->tx_packets, ps->tx_drops);
	}
	/* Ports deleted at run time: the totals keep their packets. */
	struct sl_worker_port_stats retired;
	const struct sl_dispatch *disp = r->io != NULL ? sl_worker_io_dispatch(r->io) : NULL;
	sl_worker_retired_read(r->w, &retired);
	fprintf(f, "],\n  \"ports_deleted\": {\"rx\": %" PRIu64 ", \"tx\": %" PRIu64
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
		fprintf(f, "%s{\"worker\": %u, \"packets\": %" PRIu64 ", \"tx_drops\": %" PRIu64
			   ", \"dispatched\": %" PRIu64 ", \"ring_full\": %" PRIu64
			   ", \"adjust_from\": %" PRIu64 ", \"adjust_to\": %" PRIu64 ", \"drops\": {",
			i ? ", " : "", i, ms.packets, ms.tx_drops, ds.packets, ds.ring_full,
			ds.adjust_from, ds.adjust_to);
		for (unsigned d = 0; d < SL_DROP__MAX; d++)
			fprintf(f, "%s\"%s\": %" PRIu64, d ? ", " : "", sl_drop_reason_name(d), wd[d]);
		fprintf(f, "}}");
	}
	fprintf(f, "],\n  \"dispatch\": \"%s\", \"scheduler\": \"%s\", \"adjustments\": %" PRIu64
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
		fprintf(f, "%s{\"table\": %d, \"flows\": %u, \"lookups\": %" PRIu64
			   ", \"matched\": %" PRIu64 "}",
			first ? "" : ", ", t, sl_pipeline_flow_count(r->pl, (unsigned)t), st.lookups,
			st.matched);
		first = false;
	}
	fprintf(f, "],\n  \"samples\": [");
	for (unsigned i = 0; i < r->n_samples; i++)
		fprintf(f, "%s{\"t\": %.3f, \"rx\": %" PRIu64 ", \"tx\": %" PRIu64
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
			fprintf(stderr, "sluice: cannot create %s for the management socket: %s "
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
		fprintf(stderr, "sluice: another Sluice named '%s' is running (%s answers); "
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
 * A multi-process EAL (--dumpcap, or hugepages without --in-memory) leaves
 * its hugepage files (NAMEmap_N) behind for processes that never come;
 * remove ours from every hugetlbfs mount after rte_eal_cleanup.
 */
static void
hugepage_files_remove(const char *name)
{
	FILE *mounts = fopen("/proc/mounts", "r");
	char line[512], dir[256], fs[64], prefix[80], path[600];

	if (mounts == NULL)
		return;
	snprintf(prefix, sizeof(prefix), "%smap_", name);
	while (fgets(line, sizeof(line), mounts) != NULL) {
		DIR *d;
		struct dirent *e;

		if (sscanf(line, "%*s %255s %63s", dir, fs) != 2 || strcmp(fs, "hugetlbfs") != 0)
			continue;
		d = opendir(dir);
		if (d == NULL)
			continue;
		while ((e = readdir(d)) != NULL)
			if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
				snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
				unlink(path);
			}
		closedir(d);
	}
	fclose(mounts);
}

static bool
eal_multi_process(char **eal_argv, int n)
{
	for (int i = 1; i < n; i++)
		if (strcmp(eal_argv[i], "--in-memory") == 0 || strcmp(eal_argv[i], "--no-huge") == 0 ||
		    strcmp(eal_argv[i], "--no-shconf") == 0)
			return false;
	return true;
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
	missing = !f->private_key ? "--private-key"
		  : !f->certificate ? "--certificate"
		  : !f->ca_cert     ? "--ca-cert"
				    : NULL;
	if (missing) {
		fprintf(stderr, "sluice: %s: TLS needs --private-key, --certificate and --ca-cert "
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

/* Log levels from the command line, after EAL parsed its own. */
static int
apply_log_levels(const struct options *o)
{
	char err[256];

	if (o->verbose) {
		sl_log_set("ofswitch", "info", err, sizeof(err));
		sl_log_set("ofconn", "info", err, sizeof(err));
	}
	for (unsigned i = 0; i < o->n_log_levels; i++)
		if (sl_log_set(o->log_levels[i], NULL, err, sizeof(err)) < 0) {
			fprintf(stderr, "sluice: --log-level: %s\n", err);
			return -1;
		}
	return 0;
}

/*
 * LOCAL: a TAP interface named after the switch, as Open vSwitch's bridge
 * port.  It starts down (no kernel chatter, not polled) until someone brings
 * it up.  Where it cannot be made (no /dev/net/tun or no right to it, a name
 * longer than an interface name, the name taken) the switch goes on without
 * it, saying why.
 */
static void
local_open(const struct options *o, struct rte_mempool *mp, uint16_t n_queues,
	   struct sl_port *ports, struct sl_pipeline *pl)
{
	struct sl_port *port = &ports[SL_PORT_SLOT_LOCAL];
	char devargs[128], why[600] = "";

	if (strlen(o->name) >= IFNAMSIZ)
		snprintf(why, sizeof(why), "the switch name '%s' is longer than an interface name "
			 "(%d characters)", o->name, IFNAMSIZ - 1);
	else if (access("/dev/net/tun", R_OK | W_OK) < 0)
		snprintf(why, sizeof(why), "/dev/net/tun: %s", strerror(errno));
	else if (if_nametoindex(o->name) != 0)
		snprintf(why, sizeof(why), "an interface named '%s' exists already", o->name);
	if (why[0] == '\0') {
		/* Each worker transmits on its own queue, and every queue of a TAP must be read. */
		snprintf(devargs, sizeof(devargs), "net_tap_local,iface=%s", o->name);
		if (sl_port_open(devargs, o->name, SL_PORT_NO_LOCAL, mp, n_queues, n_queues, port,
				 why, sizeof(why)) == 0) {
			sl_port_link_down(port);
			sl_pipeline_port_add(pl, SL_PORT_LOCAL, false);
			return;
		}
	}
	SL_LOG(WARNING, app, "no LOCAL port: %s (--no-local goes without it silently)", why);
}

int
main(int argc, char **argv)
{
	static struct run run;
	static struct options o; /* static: what it owns stays reachable until exit */
	struct sl_pipeline *pl = NULL;
	struct rte_mempool *mp = NULL;
	struct sl_fwd *fwd = NULL;
	struct sl_port *ports = NULL;
	struct sl_worker *workers = NULL; /* the group's lead */
	struct sl_worker_io *io = NULL;
	unsigned lcores[SL_DISPATCH_WORKERS_MAX + 1], n_lcores = 0;
	char *eal_argv[64], prefix[80], err[512], mgmt[128], rundir[4096];
	const char *targets[SL_ARRAY_SIZE(o.controllers) + 1];
	struct sl_tls_ctx *tls = NULL;
	unsigned n_targets = 0;
	int first_eal, exit_now, n_eal, rc, status = EXIT_RUNTIME;

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

	if (sl_pipeline_create(&pl) < 0) {
		fprintf(stderr, "sluice: out of memory\n");
		return EXIT_RUNTIME;
	}
	sl_pipeline_cache_enable(pl, !o.no_cache);
	sl_pipeline_ffp_enable(pl, !o.no_ffp);
	sl_pipeline_ffp_cost_model(pl, !o.ffp_no_model);
	sl_pipeline_ffp_path_enable(pl, !o.no_ffp_path);
	sl_pipeline_ffp_auto_set(pl, &o.ffp_auto);
	sl_pipeline_search_budget_set(pl, &o.search_budget); /* checked by the option parser */
	/* The ports are known by number already: flow files check watch ports against them. */
	for (unsigned i = 0; i < o.n_ports; i++)
		sl_pipeline_port_add(pl, o.port_args[i].of_no, true);
	if (o.check_only) {
		/* No EAL: mask tables validate with their portable structure only. */
		if (load_rules(pl, &o) < 0) {
			sl_pipeline_destroy(pl);
			return EXIT_USAGE;
		}
		printf("%s: %u flows OK\n", o.flows_file ? o.flows_file : "(flows)",
		       sl_pipeline_flow_count(pl, 255));
		if (o.dump_flows)
			sl_pipeline_flow_iterate(pl, 255, print_flow, NULL);
		sl_pipeline_destroy(pl);
		return 0;
	}

	n_eal = eal_args(argc, argv, first_eal, &o, eal_argv, prefix, sizeof(prefix));
	if (n_eal < 0 || mgmt_target(&o, mgmt, sizeof(mgmt)) < 0) {
		sl_pipeline_destroy(pl);
		return EXIT_USAGE;
	}
	sl_log_init();
	/*
	 * Nothing Sluice creates is for others (sockets that control the switch,
	 * captures of traffic), whatever umask it was started with.
	 */
	umask(umask(0) | 0007);
	if (rte_eal_init(n_eal, eal_argv) < 0) {
		fprintf(stderr, "sluice: EAL init failed: %s\n", rte_strerror(rte_errno));
		sl_pipeline_destroy(pl);
		return EXIT_RUNTIME;
	}
	if (telemetry_socket_secure(o.mgmt_gid) < 0) {
		sl_pipeline_destroy(pl);
		rte_eal_cleanup();
		return EXIT_RUNTIME;
	}
	if (apply_log_levels(&o) < 0) {
		sl_pipeline_destroy(pl);
		rte_eal_cleanup();
		return EXIT_USAGE;
	}
	/* dpdk-dumpcap talks to rte_pdump over EAL multi-process, absent with --in-memory/--no-huge. */
	if (rte_pdump_init() < 0)
		SL_LOG(INFO, app, "dpdk-dumpcap cannot attach (no EAL multi-process: --in-memory or "
				  "--no-huge); use sluicectl capture");
	/* Rules after EAL: mask tables build their rte_acl accelerator with EAL memory. */
	if (load_rules(pl, &o) < 0) {
		sl_pipeline_destroy(pl);
		rte_eal_cleanup();
		return EXIT_USAGE;
	}
	rc = sl_pipeline_commit(pl);
	if (rc < 0)
		fprintf(stderr, "sluice: warning: a table could not rebuild its accelerator (%s); "
				"it keeps working on its incremental structure\n", strerror(-rc));
	/* Datapath lcores: the workers, plus the I/O core with --dispatch io. */
	{
		unsigned need = o.workers + (o.dispatch_io ? 1 : 0);
		for (unsigned l = rte_get_next_lcore(-1, 1, 0); l < RTE_MAX_LCORE && n_lcores < need;
		     l = rte_get_next_lcore(l, 1, 0))
			lcores[n_lcores++] = l;
		if ((o.workers > 1 || o.dispatch_io) && n_lcores < need) {
			fprintf(stderr, "sluice: --workers %u%s needs %u datapath lcores besides the "
					"main one; EAL has %u (give more, e.g. -- --lcores "
					"0@0,1@1,2@1,...)\n",
				o.workers, o.dispatch_io ? " with --dispatch io" : "", need,
				rte_lcore_count() - 1);
			sl_pipeline_destroy(pl);
			rte_eal_cleanup();
			return EXIT_USAGE;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_hup);

	mp = rte_pktmbuf_pool_create("sl_mbufs", o.mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     (int)rte_socket_id());
	if (mp == NULL) {
		fprintf(stderr, "sluice: cannot create a pool of %u mbufs: %s\n", o.mbufs,
			rte_strerror(rte_errno));
		goto out;
	}
	/* One slot per OpenFlow number, then LOCAL (port.h); added ports fill free ones. */
	ports = calloc(SL_PORT_SLOTS, sizeof(*ports));
	if (ports == NULL)
		goto out;
	/* RSS: rx queues shared out over the workers (one each by default), a tx queue per
	 * worker; io: the I/O core polls every rx queue (one by default). */
	uint16_t nq = (uint16_t)o.workers;
	uint16_t nrxq = o.rx_queues != 0 ? (uint16_t)o.rx_queues : o.dispatch_io ? 1 : nq;
	for (unsigned i = 0; i < o.n_ports; i++) {
		const struct sl_port_args *a = &o.port_args[i];
		struct sl_port *port = &ports[a->of_no - 1];
		rc = sl_port_open(a->devargs, a->name, a->of_no, mp, nrxq, nq, port, err, sizeof(err));
		if (rc == 0 && sl_port_find(ports, port->name) != (int)a->of_no - 1) {
			snprintf(err, sizeof(err), "port '%s': its name '%s' is another port's: give "
				 "name=NAME", o.ports[i], port->name);
			sl_port_close(port);
			rc = -EINVAL;
		}
		if (rc < 0) {
			fprintf(stderr, "sluice: %s\n", err);
			status = rc == -EINVAL || rc == -ENODEV ? EXIT_USAGE : EXIT_RUNTIME;
			goto out;
		}
		/* SIGHUP deletes it by this name when the configuration drops it. */
		snprintf(o.port_args[i].name, sizeof(o.port_args[i].name), "%s", port->name);
	}
	if (!o.no_local)
		local_open(&o, mp, nq, ports, pl);
	if (sl_worker_group_create(o.workers, pl, ports, mp, (uint16_t)o.burst, 1024, &workers) < 0) {
		fprintf(stderr, "sluice: cannot set up the datapath: out of memory\n");
		goto out;
	}
	if (o.dispatch_io &&
	    sl_worker_io_create(workers, (enum sl_sched)o.sched, o.sched_threshold, o.worker_ring,
				(unsigned)o.burst, 100, &io) < 0) {
		fprintf(stderr, "sluice: cannot set up the datapath: out of memory\n");
		goto out_workers;
	}
	sl_pipeline_set_shared_counters(pl, o.workers > 1);
	sl_worker_set_pin_rate(workers, (uint64_t)o.pin_rate);
	if (sl_fwd_create(o.max_port_no, &fwd) < 0) {
		fprintf(stderr, "sluice: cannot set up the forwarding modes: out of memory\n");
		goto out_workers;
	}
	sl_worker_idle_set(workers, o.idle_sleep_max);
	if (sl_worker_fwd_attach(workers, fwd) < 0) {
		fprintf(stderr, "sluice: cannot set up the forwarding modes: out of memory\n");
		goto out_workers;
	}
	/* The lead owns the group's RCU variable: its sync waits for every worker. */
	sl_fwd_set_sync(fwd, sl_worker_sync, workers);
	if (sl_fwd_set(fwd, o.fwd_mode == NULL && file_fwd_set ? &file_fwd_params : &o.fwd_params,
		       NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "sluice: %s: %s\n", o.fwd_mode == NULL ? "fwd-mode" : "--fwd-mode",
			err);
		status = EXIT_USAGE;
		goto out_workers;
	}
	for (unsigned i = 0; i < o.n_controllers; i++)
		targets[n_targets++] = o.controllers[i];
	if (mgmt[0] != '\0')
		targets[n_targets++] = mgmt;
	if (n_targets > 0) {
		struct sl_ofswitch_params sp = {
			.datapath_id = o.dpid,
			.fail_mode = o.fail_mode,
			.probe_interval_ms = (uint32_t)(o.probe_interval * 1000),
			.targets = targets,
			.n_targets = n_targets,
			.pl = pl,
			.worker = workers,
			.ports = ports,
			.unix_gid = o.mgmt_gid,
			.tls = tls,
		};
		rc = sl_ofswitch_create(&sp, &run.sw, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "sluice: %s: %s\n",
				o.n_controllers ? "--controller" : "--mgmt", err);
			status = rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
			goto out_workers;
		}
		for (unsigned i = 0; i < o.n_controllers; i++) {
			const char *t = o.controllers[i];
			if (strncmp(t, "ptcp:", 5) == 0 || strncmp(t, "pssl:", 5) == 0)
				printf("sluice: listening on %.4s:%d\n", t,
				       sl_ofswitch_listen_port(run.sw, (int)i));
			else if (strncmp(t, "punix:", 6) == 0)
				printf("sluice: listening on %s\n", t);
		}
		printf("sluice: datapath id %016" PRIx64 "\n", sl_ofswitch_datapath_id(run.sw));
	}
	if (o.metrics != NULL) {
		struct sl_stats_src src = {.pl = pl, .worker = workers, .ports = ports,
					   .sw = run.sw};
		struct sl_metrics_params xp = {.listen = o.metrics, .switch_name = o.name, .src = &src};
		rc = sl_metrics_create(&xp, &run.metrics, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "sluice: --metrics %s\n", err);
			status = rc == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
			sl_ofswitch_destroy(run.sw);
			run.sw = NULL;
			goto out_workers;
		}
		printf("sluice: metrics on http://%s/metrics\n", sl_metrics_address(run.metrics));
	}
	{
		struct sl_mgmt_params mp_ = {
			.name = o.name,
			.mgmt_target = mgmt[0] ? mgmt : NULL,
			.fail_mode = o.fail_mode == SL_FAIL_MODE_SECURE ? "secure" : "standalone",
			.n_controllers = o.n_controllers,
			.pl = pl,
			.worker = workers,
			.ports = ports,
			.sw = run.sw,
			.mp = mp,
			.n_rxq = nrxq,
			.n_txq = nq,
		};
		sl_mgmt_create(&mp_);
	}
	printf("sluice: name %s: sluicectl -n %s, dpdk-telemetry.py -f %s\n", o.name, o.name,
	       o.name);
	fflush(stdout);

	if (!o.quiet) {
		printf("sluice %s: %u ports, %u flows in %d tables\n", SL_VERSION,
		       sl_port_count(ports), sl_pipeline_flow_count(pl, 255),
		       sl_pipeline_last_table(pl) + 1);
		for (unsigned i = 0; i < SL_PORT_SLOTS; i++) {
			char no[16];
			if (ports[i].of_no != 0)
				printf("  port %s: %s (%s)\n",
				       sl_port_no_format(ports[i].of_no, no, sizeof(no)), ports[i].name,
				       ports[i].devargs);
		}
	}
	if (o.dump_flows)
		sl_pipeline_flow_iterate(pl, 255, print_flow, NULL);

	run.o = &o;
	run.applied = &o;
	run.argc = argc;
	run.argv = argv;
	run.mgmt_target = mgmt;
	run.pl = pl;
	run.ports = ports;
	run.w = workers;
	run.io = io;
	if (n_lcores > 0) {
		for (unsigned i = 0; i < o.workers; i++)
			rte_eal_remote_launch(sl_worker_run, sl_worker_group_member(workers, i),
					      lcores[i]);
		if (o.dispatch_io)
			rte_eal_remote_launch(sl_worker_io_run, io, lcores[o.workers]);
		control_loop(&run);
		/* The I/O core first: the workers then drain their rings before they return. */
		if (o.dispatch_io) {
			sl_worker_io_stop(io);
			rte_eal_wait_lcore(lcores[o.workers]);
		}
		for (unsigned i = 0; i < o.workers; i++)
			sl_worker_stop(sl_worker_group_member(workers, i));
		for (unsigned i = 0; i < o.workers; i++)
			rte_eal_wait_lcore(lcores[i]);
	} else {
		/* One lcore: the datapath keeps it, control runs in a plain thread. */
		pthread_t th;
		pthread_create(&th, NULL, control_thread, &run);
		sl_worker_run(workers);
		pthread_join(th, NULL);
	}
	print_summary(&run);
	if (run.sw != NULL) {
		sl_ofswitch_stats(run.sw, &run.sw_stats);
		run.pins_pending = sl_worker_pin_pending(run.w);
		run.have_sw_stats = true;
	}
	sl_ofswitch_destroy(run.sw);
	run.sw = NULL;
	if (o.dump_flows) {
		printf("flows:\n");
		sl_pipeline_flow_iterate(pl, 255, print_flow, NULL);
	}
	status = 0;
	if (o.json_path != NULL && write_json(&run, o.json_path) < 0)
		status = EXIT_RUNTIME;
out_workers:
	sl_worker_group_destroy(workers);

out:
	sl_fwd_destroy(fwd);
	sl_tls_ctx_destroy(tls);
	for (unsigned i = 0; ports != NULL && i < SL_PORT_SLOTS; i++)
		sl_port_close(&ports[i]);
	free(ports);
	rte_mempool_free(mp);
	sl_pipeline_destroy(pl);
	rte_pdump_uninit();
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	sl_dir_remove(rundir); /* DPDK leaves /var/run/dpdk/NAME behind */
	if (eal_multi_process(eal_argv, n_eal))
		hugepage_files_remove(o.name);
	return status;
}
