/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switch's lifecycle (control path).  create runs the steps main()
 * used to run by hand, in the same order and with the same messages;
 * destroy is the one unwind path, for a switch that ran and for one that
 * failed halfway (every field it frees is NULL or false until made).
 */
#include "switch.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_log.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pdump.h>

#include "../core/core.h"
#include "../log/log.h"
#include "../metrics/metrics.h"
#include "../mgmt/mgmt.h"
#include "../stats/stats.h"

/* Controller targets the agent takes (the option parser allows 16). */
#define TARGETS_MAX 64

/* A port being opened again after its kernel interface came back (sl_switch_ports_recover). */
struct port_retry {
	char spec[SL_PORT_DEVARGS_MAX + 64]; /* DEVARGS,name=NAME,ofport=N; "" = none */
};

struct sl_switch {
	const char *name;       /* instance name (hugepage file prefix) */
	bool eal_up;            /* rte_eal_init succeeded: cleanup owed */
	bool eal_multi_process; /* EAL left hugepage files for secondary processes */
	struct sl_pipeline *pl;
	struct sl_tls_ctx *tls;
	struct rte_mempool *mp;
	struct sl_port *ports;     /* SL_PORT_SLOTS slots */
	struct sl_worker *workers; /* the group's lead */
	struct sl_worker_io *io;   /* or NULL (RSS) */
	struct sl_fwd *fwd;
	struct sl_ofswitch *ofsw;   /* or NULL */
	struct sl_metrics *metrics; /* or NULL */
	bool mgmt_up;               /* sl_mgmt_create ran: sl_mgmt_destroy owed */
	unsigned n_workers;
	bool dispatch_io;
	unsigned lcores[SL_DISPATCH_WORKERS_MAX +
			1]; /* datapath lcores: workers, then the I/O core */
	unsigned n_lcores;  /* 0: one lcore, the datapath runs on the main one */
	struct port_retry retry[SL_PORT_SLOTS];
	/* sl_switch_run with one lcore: the control thread's part. */
	sl_switch_control_fn control;
	void *control_arg;
	uint64_t awake_until; /* TSC: sl_switch_poll does not sleep until then */
	uint64_t awake_tsc;   /* --agent-awake-us in TSC cycles */
};

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

bool
sl_switch_quit_requested(void)
{
	return quit_signal != 0;
}

bool
sl_switch_reload_requested(void)
{
	if (!hup_signal)
		return false;
	hup_signal = 0;
	return true;
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

/* Log levels from the command line, after EAL parsed its own. */
static int
apply_log_levels(const struct sl_switch_params *p)
{
	char err[256];

	if (p->verbose) {
		sl_log_set("ofswitch", "info", err, sizeof(err));
		sl_log_set("ofconn", "info", err, sizeof(err));
	}
	for (unsigned i = 0; i < p->n_log_levels; i++)
		if (sl_log_set(p->log_levels[i], NULL, err, sizeof(err)) < 0) {
			fprintf(stderr, "sluice: --log-level: %s\n", err);
			return -1;
		}
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
		if (strcmp(eal_argv[i], "--in-memory") == 0 ||
		    strcmp(eal_argv[i], "--no-huge") == 0 ||
		    strcmp(eal_argv[i], "--no-shconf") == 0)
			return false;
	return true;
}

/*
 * LOCAL: a TAP interface named after the switch, as Open vSwitch's bridge
 * port.  It starts down (no kernel chatter, not polled) until someone brings
 * it up.  Where it cannot be made (no /dev/net/tun or no right to it, a name
 * longer than an interface name, the name taken) the switch goes on without
 * it, saying why.
 */
static void
local_open(const char *name, struct rte_mempool *mp, uint16_t n_queues, struct sl_port *ports,
	   struct sl_pipeline *pl)
{
	struct sl_port *port = &ports[SL_PORT_SLOT_LOCAL];
	char devargs[128], why[600] = "";

	if (strlen(name) >= IFNAMSIZ)
		snprintf(why, sizeof(why),
			 "the switch name '%s' is longer than an interface name "
			 "(%d characters)",
			 name, IFNAMSIZ - 1);
	else if (access("/dev/net/tun", R_OK | W_OK) < 0)
		snprintf(why, sizeof(why), "/dev/net/tun: %s", strerror(errno));
	else if (if_nametoindex(name) != 0)
		snprintf(why, sizeof(why), "an interface named '%s' exists already", name);
	if (why[0] == '\0') {
		/* Each worker transmits on its own queue, and every queue of a TAP must be read. */
		snprintf(devargs, sizeof(devargs), "net_tap_local,iface=%s", name);
		/*
		 * The TAP driver logs errors about what a LOCAL port does not use
		 * (no multiq qdisc in the kernel: "Disabling rte flow support"),
		 * four lines at every start: quiet it while the port is made,
		 * unless someone raised its level; a real failure is told below.
		 */
		int tap_log = rte_log_register("pmd.net.tap");
		int tap_level = tap_log >= 0 ? rte_log_get_level((uint32_t)tap_log) : -1;
		if (tap_level >= 0 && tap_level <= (int)RTE_LOG_NOTICE)
			rte_log_set_level((uint32_t)tap_log, RTE_LOG_CRIT);
		int rc = sl_port_open(devargs, name, SL_PORT_NO_LOCAL, mp, n_queues, n_queues, port,
				      why, sizeof(why));
		if (tap_level >= 0)
			rte_log_set_level((uint32_t)tap_log, (uint32_t)tap_level);
		if (rc == 0) {
			sl_port_link_down(port);
			sl_pipeline_port_add(pl, SL_PORT_LOCAL, false);
			return;
		}
	}
	SL_LOG(WARNING, app, "no LOCAL port: %s (--no-local goes without it silently)", why);
}

/* EAL and what must follow it before the datapath: log levels, dumpcap, the rules. */
static int
eal_start(struct sl_switch *sw, const struct sl_switch_params *p)
{
	int rc;

	sl_log_init();
	/*
	 * Nothing Sluice creates is for others (sockets that control the switch,
	 * captures of traffic), whatever umask it was started with.
	 */
	umask(umask(0) | 0007);
	sw->eal_multi_process = eal_multi_process(p->eal_argv, p->eal_argc);
	if (rte_eal_init(p->eal_argc, p->eal_argv) < 0) {
		fprintf(stderr, "sluice: EAL init failed: %s\n", rte_strerror(rte_errno));
		return -EIO;
	}
	sw->eal_up = true;
	if (telemetry_socket_secure(p->mgmt_gid) < 0)
		return -EIO;
	if (apply_log_levels(p) < 0)
		return -EINVAL;
	/* dpdk-dumpcap talks to rte_pdump over EAL multi-process, absent with --in-memory/--no-huge. */
	if (rte_pdump_init() < 0)
		SL_LOG(INFO, app,
		       "dpdk-dumpcap cannot attach (no EAL multi-process: --in-memory or "
		       "--no-huge); use sluicectl capture");
	/* Rules after EAL: mask tables build their rte_acl accelerator with EAL memory. */
	if (p->load != NULL && p->load(p->load_arg, sw->pl) < 0)
		return -EINVAL;
	rc = sl_pipeline_commit(sw->pl);
	if (rc < 0)
		fprintf(stderr,
			"sluice: warning: a table could not rebuild its accelerator (%s); "
			"it keeps working on its incremental structure\n",
			strerror(-rc));
	return 0;
}

/* Datapath lcores: the workers, plus the I/O core with an I/O dispatch. */
static int
lcores_pick(struct sl_switch *sw, const struct sl_switch_params *p)
{
	unsigned need = p->workers + (p->dispatch_io ? 1 : 0);

	for (unsigned l = rte_get_next_lcore(-1, 1, 0); l < RTE_MAX_LCORE && sw->n_lcores < need;
	     l = rte_get_next_lcore(l, 1, 0))
		sw->lcores[sw->n_lcores++] = l;
	if ((p->workers > 1 || p->dispatch_io) && sw->n_lcores < need) {
		fprintf(stderr,
			"sluice: --workers %u%s needs %u datapath lcores besides the "
			"main one; EAL has %u (give more, e.g. -- --lcores "
			"0@0,1@1,2@1,...)\n",
			p->workers, p->dispatch_io ? " with --dispatch io" : "", need,
			rte_lcore_count() - 1);
		return -EINVAL;
	}
	return 0;
}

/* The mbuf pool, the ports given and LOCAL. */
static int
ports_open(struct sl_switch *sw, const struct sl_switch_params *p, uint16_t nrxq, uint16_t nq)
{
	char err[512];
	int rc;

	sw->mp = rte_pktmbuf_pool_create("sl_mbufs", p->mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					 (int)rte_socket_id());
	if (sw->mp == NULL) {
		fprintf(stderr, "sluice: cannot create a pool of %u mbufs: %s\n", p->mbufs,
			rte_strerror(rte_errno));
		return -ENOMEM;
	}
	/* One slot per OpenFlow number, then LOCAL (port.h); added ports fill free ones. */
	sw->ports = calloc(SL_PORT_SLOTS, sizeof(*sw->ports));
	if (sw->ports == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < p->n_ports; i++) {
		struct sl_port_args *a = &p->port_args[i];
		struct sl_port *port = &sw->ports[a->of_no - 1];
		rc = sl_port_open(a->devargs, a->name, a->of_no, sw->mp, nrxq, nq, port, err,
				  sizeof(err));
		if (rc == 0 && sl_port_find(sw->ports, port->name) != (int)a->of_no - 1) {
			snprintf(err, sizeof(err),
				 "port '%s': its name '%s' is another port's: give "
				 "name=NAME",
				 p->port_specs[i], port->name);
			sl_port_close(port);
			rc = -EINVAL;
		}
		if (rc < 0) {
			fprintf(stderr, "sluice: %s\n", err);
			return rc == -EINVAL || rc == -ENODEV ? -EINVAL : rc;
		}
		/* SIGHUP deletes it by this name when the configuration drops it. */
		snprintf(a->name, sizeof(a->name), "%s", port->name);
	}
	if (!p->no_local)
		local_open(p->name, sw->mp, nq, sw->ports, sw->pl);
	return 0;
}

/*
 * --agent-awake-us in TSC cycles (switch.h).  By default it is off when the
 * datapath sleeps when idle, and when the control thread shares a CPU with
 * a polling datapath lcore: a yield there hands the CPU to the worker for
 * its whole time slice, longer than a wake-up.
 */
static uint64_t
agent_awake_tsc(const struct sl_switch *sw, const struct sl_switch_params *p)
{
	uint64_t us = SL_AGENT_AWAKE_DEFAULT_US;
	rte_cpuset_t main_cpus = rte_lcore_cpuset(rte_get_main_lcore());

	if (p->agent_awake_us >= 0)
		return (uint64_t)p->agent_awake_us * rte_get_tsc_hz() / 1000000;
	if (p->idle_sleep_max != 0 || sw->n_lcores == 0)
		us = 0;
	for (unsigned i = 0; i < sw->n_lcores; i++) {
		rte_cpuset_t both, dp = rte_lcore_cpuset(sw->lcores[i]);
		CPU_AND(&both, &main_cpus, &dp);
		if (CPU_COUNT(&both) != 0)
			us = 0;
	}
	return us * rte_get_tsc_hz() / 1000000;
}

/* The workers (and the I/O core), their forwarding modes. */
static int
datapath_create(struct sl_switch *sw, const struct sl_switch_params *p, char *err, size_t err_size)
{
	if (sl_worker_group_create(p->workers, sw->pl, sw->ports, sw->mp, (uint16_t)p->burst, 1024,
				   &sw->workers) < 0 ||
	    (p->dispatch_io &&
	     sl_worker_io_create(sw->workers, (enum sl_sched)p->sched, p->sched_threshold,
				 p->worker_ring, p->burst, 100, &sw->io) < 0)) {
		fprintf(stderr, "sluice: cannot set up the datapath: out of memory\n");
		return -ENOMEM;
	}
	sl_pipeline_set_shared_counters(sw->pl, p->workers > 1);
	sl_worker_set_pin_rate(sw->workers, (uint64_t)p->pin_rate);
	if (sl_fwd_create(p->max_port_no, &sw->fwd) < 0) {
		fprintf(stderr, "sluice: cannot set up the forwarding modes: out of memory\n");
		return -ENOMEM;
	}
	sl_worker_idle_set(sw->workers, p->idle_sleep_max);
	sw->awake_tsc = agent_awake_tsc(sw, p);
	if (sl_worker_fwd_attach(sw->workers, sw->fwd) < 0) {
		fprintf(stderr, "sluice: cannot set up the forwarding modes: out of memory\n");
		return -ENOMEM;
	}
	/* The lead owns the group's RCU variable: its sync waits for every worker. */
	sl_fwd_set_sync(sw->fwd, sl_worker_sync, sw->workers);
	if (sl_fwd_set(sw->fwd, p->fwd_params, NULL, err, err_size) < 0) {
		fprintf(stderr, "sluice: %s: %s\n", p->fwd_source, err);
		return -EINVAL;
	}
	return 0;
}

/* The OpenFlow agent: controllers and the management socket. */
static int
agent_create(struct sl_switch *sw, const struct sl_switch_params *p, char *err, size_t err_size)
{
	const char *targets[TARGETS_MAX + 1]; /* the controllers, then the management socket */
	unsigned n_targets = 0;
	int rc;

	for (unsigned i = 0; i < p->n_controllers && n_targets < TARGETS_MAX; i++)
		targets[n_targets++] = p->controllers[i];
	if (p->mgmt_target[0] != '\0')
		targets[n_targets++] = p->mgmt_target;
	if (n_targets == 0)
		return 0;
	struct sl_ofswitch_params sp = {
		.datapath_id = p->dpid,
		.fail_mode = p->fail_mode,
		.probe_interval_ms = (uint32_t)(p->probe_interval * 1000),
		.targets = targets,
		.n_targets = n_targets,
		.pl = sw->pl,
		.worker = sw->workers,
		.ports = sw->ports,
		.unix_gid = p->mgmt_gid,
		.tls = sw->tls,
	};
	rc = sl_ofswitch_create(&sp, &sw->ofsw, err, err_size);
	if (rc < 0) {
		fprintf(stderr, "sluice: %s: %s\n", p->n_controllers ? "--controller" : "--mgmt",
			err);
		return rc == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	for (unsigned i = 0; i < p->n_controllers; i++) {
		const char *t = p->controllers[i];
		if (strncmp(t, "ptcp:", 5) == 0 || strncmp(t, "pssl:", 5) == 0)
			printf("sluice: listening on %.4s:%d\n", t,
			       sl_ofswitch_listen_port(sw->ofsw, (int)i));
		else if (strncmp(t, "punix:", 6) == 0)
			printf("sluice: listening on %s\n", t);
	}
	printf("sluice: datapath id %016" PRIx64 "\n", sl_ofswitch_datapath_id(sw->ofsw));
	return 0;
}

int
sl_switch_create(const struct sl_switch_params *p, struct sl_switch **out)
{
	struct sl_switch *sw = calloc(1, sizeof(*sw));
	char err[512];
	int rc;

	*out = NULL;
	if (sw == NULL) {
		fprintf(stderr, "sluice: out of memory\n");
		sl_pipeline_destroy(p->pl);
		sl_tls_ctx_destroy(p->tls);
		return -ENOMEM;
	}
	sw->name = p->name;
	sw->pl = p->pl;
	sw->tls = p->tls;
	sw->n_workers = p->workers;
	sw->dispatch_io = p->dispatch_io;

	rc = eal_start(sw, p);
	if (rc < 0)
		goto fail;
	rc = lcores_pick(sw, p);
	if (rc < 0)
		goto fail;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_hup);

	/* RSS: rx queues shared out over the workers (one each by default), a tx queue per
	 * worker; io: the I/O core polls every rx queue (one by default). */
	uint16_t nq = (uint16_t)p->workers;
	uint16_t nrxq = p->rx_queues != 0 ? (uint16_t)p->rx_queues : p->dispatch_io ? 1 : nq;
	rc = ports_open(sw, p, nrxq, nq);
	if (rc < 0)
		goto fail;
	rc = datapath_create(sw, p, err, sizeof(err));
	if (rc < 0)
		goto fail;
	rc = agent_create(sw, p, err, sizeof(err));
	if (rc < 0)
		goto fail;
	if (p->metrics != NULL) {
		struct sl_stats_src src = {
			.pl = sw->pl, .worker = sw->workers, .ports = sw->ports, .sw = sw->ofsw};
		struct sl_metrics_params xp = {
			.listen = p->metrics, .switch_name = p->name, .src = &src};
		rc = sl_metrics_create(&xp, &sw->metrics, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "sluice: --metrics %s\n", err);
			goto fail;
		}
		printf("sluice: metrics on http://%s/metrics\n", sl_metrics_address(sw->metrics));
	}
	struct sl_mgmt_params mp = {
		.name = p->name,
		.mgmt_target = p->mgmt_target[0] ? p->mgmt_target : NULL,
		.fail_mode = p->fail_mode == SL_FAIL_MODE_SECURE ? "secure" : "standalone",
		.n_controllers = p->n_controllers,
		.pl = sw->pl,
		.worker = sw->workers,
		.ports = sw->ports,
		.sw = sw->ofsw,
		.mp = sw->mp,
		.n_rxq = nrxq,
		.n_txq = nq,
	};
	sl_mgmt_create(&mp);
	sw->mgmt_up = true;
	*out = sw;
	return 0;

fail:
	sl_switch_destroy(sw);
	return rc;
}

/* Before the datapath stops: a capture ends while the workers still report grace periods. */
static void
control_stop(struct sl_switch *sw)
{
	if (sw->mgmt_up)
		sl_mgmt_destroy();
	sw->mgmt_up = false;
	sl_metrics_destroy(sw->metrics);
	sw->metrics = NULL;
}

static void *
control_thread(void *arg)
{
	struct sl_switch *sw = arg;

	sw->control(sw, sw->control_arg);
	control_stop(sw);
	sl_worker_stop(sw->workers);
	return NULL;
}

void
sl_switch_run(struct sl_switch *sw, sl_switch_control_fn control, void *arg)
{
	if (sw->n_lcores > 0) {
		for (unsigned i = 0; i < sw->n_workers; i++)
			rte_eal_remote_launch(sl_worker_run, sl_worker_group_member(sw->workers, i),
					      sw->lcores[i]);
		if (sw->dispatch_io)
			rte_eal_remote_launch(sl_worker_io_run, sw->io, sw->lcores[sw->n_workers]);
		control(sw, arg);
		control_stop(sw);
		/* The I/O core first: the workers then drain their rings before they return. */
		if (sw->dispatch_io) {
			sl_worker_io_stop(sw->io);
			rte_eal_wait_lcore(sw->lcores[sw->n_workers]);
		}
		for (unsigned i = 0; i < sw->n_workers; i++)
			sl_worker_stop(sl_worker_group_member(sw->workers, i));
		for (unsigned i = 0; i < sw->n_workers; i++)
			rte_eal_wait_lcore(sw->lcores[i]);
	} else {
		/* One lcore: the datapath keeps it, control runs in a plain thread. */
		pthread_t th;
		sw->control = control;
		sw->control_arg = arg;
		pthread_create(&th, NULL, control_thread, sw);
		sl_worker_run(sw->workers);
		pthread_join(th, NULL);
	}
}

void
sl_switch_poll(struct sl_switch *sw)
{
	/*
	 * Controller messages and packet-ins (the worker's eventfd) wake
	 * poll(); the round only bounds the timers' wait: 1 ms, or 4 ms while
	 * the datapath sleeps at its longest (--idle-sleep-max).  For a while
	 * after controller activity the agent does not sleep at all
	 * (--agent-awake-us, switch.h): rounds of zero wait, the core yielded
	 * between them, so neither the next packet-in nor the controller's
	 * answer waits for a thread wake-up.
	 */
	int round_ms = sl_worker_idle_longest(sw->workers) ? 4 : 1;
	uint64_t now = rte_rdtsc();

	if (now < sw->awake_until)
		round_ms = 0;
	if (sw->ofsw != NULL) {
		if (sl_ofswitch_run(sw->ofsw, round_ms))
			sw->awake_until = now + sw->awake_tsc;
	} else {
		usleep((useconds_t)round_ms * 1000);
	}
	if (round_ms == 0)
		sched_yield();
	sl_mgmt_run();
	sl_metrics_run(sw->metrics);
	sl_pipeline_poll(sw->pl); /* mask-table snapshots the builder thread finished */
}

/*
 * A port on a kernel interface (af_packet, af_xdp) holds sockets bound to
 * the interface it opened: once that interface is deleted and made again
 * under the same name (another ifindex), the port would never forward
 * again.  Each call: such a port is deleted and added again with its
 * devargs, name and number (sluicectl del-port/add-port's code, so the
 * workers, the pipeline and the controllers' port_status follow); while the
 * interface is missing the link reads down, and an add that fails (the
 * interface not back yet) is tried again the next call.
 */
void
sl_switch_ports_recover(struct sl_switch *sw)
{
	struct port_retry *retry = sw->retry;
	char err[256], name[SL_PORT_NAME_MAX + 1];
	uint32_t no;

	for (unsigned s = 0; s < SL_PORT_SLOTS; s++) {
		const struct sl_port *p = &sw->ports[s];
		if (s != SL_PORT_SLOT_LOCAL && p->of_no != 0 && p->kernel_iface[0] != '\0') {
			unsigned idx = if_nametoindex(p->kernel_iface);
			if (idx == 0 || idx == p->kernel_ifindex)
				continue;
			snprintf(retry[s].spec, sizeof(retry[s].spec), "%s,name=%s,ofport=%u",
				 p->devargs, p->name, p->of_no);
			SL_LOG(NOTICE, app,
			       "port %u (%s): interface %s is another one now (ifindex "
			       "%u, was %u): opening the port again",
			       p->of_no, p->name, p->kernel_iface, idx, p->kernel_ifindex);
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

void
sl_switch_destroy(struct sl_switch *sw)
{
	char rundir[PATH_MAX];

	if (sw == NULL)
		return;
	control_stop(sw);
	sl_ofswitch_destroy(sw->ofsw);
	sl_worker_group_destroy(sw->workers);
	sl_fwd_destroy(sw->fwd);
	sl_tls_ctx_destroy(sw->tls);
	for (unsigned i = 0; sw->ports != NULL && i < SL_PORT_SLOTS; i++)
		sl_port_close(&sw->ports[i]);
	free(sw->ports);
	rte_mempool_free(sw->mp);
	sl_pipeline_destroy(sw->pl);
	if (sw->eal_up) {
		rte_pdump_uninit();
		snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
		rte_eal_cleanup();
		sl_dir_remove(rundir); /* DPDK leaves /var/run/dpdk/NAME behind */
		if (sw->eal_multi_process)
			hugepage_files_remove(sw->name);
	}
	free(sw);
}

struct sl_pipeline *
sl_switch_pipeline(const struct sl_switch *sw)
{
	return sw->pl;
}

struct sl_port *
sl_switch_ports(const struct sl_switch *sw)
{
	return sw->ports;
}

struct sl_worker *
sl_switch_worker(const struct sl_switch *sw)
{
	return sw->workers;
}

struct sl_worker_io *
sl_switch_io(const struct sl_switch *sw)
{
	return sw->io;
}

struct sl_ofswitch *
sl_switch_ofswitch(const struct sl_switch *sw)
{
	return sw->ofsw;
}
