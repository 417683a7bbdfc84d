/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * options: the option table, the per-option parsers, the configuration file
 * reader (libinih) and the command line reader (getopt_long).  Control path.
 *
 * libinih calls back once per key, knowing neither the line number (Debian
 * builds it without INI_HANDLER_LINENO) nor where a section ends; the reader
 * below counts lines itself, and a [port.NAME] or [table.N] section is
 * gathered key by key and applied when the next section starts, with errors
 * at its header's line.
 */
#include "options.h"
#include "../src/switch/switch.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_version.h>

#include "sl_config.h"
#include "../src/core/core.h"
#include "../src/flowfile/flowfile.h"
#include "../src/fwd/fwd.h"
#include "../src/log/log.h"
#include "../src/metrics/metrics.h"

/* What a file may not set, what SIGHUP applies, and what may repeat. */
#define F_CMDLINE (1u << 0) /* command line only */
#define F_RELOAD (1u << 1)  /* SIGHUP applies a change */
#define F_LIST (1u << 2)    /* repeatable: a list */

struct opt_def {
	const char *name; /* long option, and configuration file key */
	int letter;       /* short option, or 0 */
	int has_arg;      /* no_argument | required_argument */
	enum sl_opt id;
	unsigned flags;
};

/* The first row of an id names it; later rows with the same id are aliases. */
static const struct opt_def opt_defs[] = {
	{"port", 'p', required_argument, SL_OPT_PORT, F_LIST | F_RELOAD},
	{"no-local", 0, no_argument, SL_OPT_NO_LOCAL, 0},
	{"flows", 'f', required_argument, SL_OPT_FLOWS, 0},
	{"flow", 'F', required_argument, SL_OPT_FLOW, F_LIST},
	{"restore", 0, required_argument, SL_OPT_RESTORE, 0},
	{"table", 0, required_argument, SL_OPT_TABLE, F_LIST},
	{"controller", 'C', required_argument, SL_OPT_CONTROLLER, F_LIST | F_RELOAD},
	{"private-key", 0, required_argument, SL_OPT_PRIVATE_KEY, 0},
	{"certificate", 0, required_argument, SL_OPT_CERTIFICATE, 0},
	{"ca-cert", 0, required_argument, SL_OPT_CA_CERT, 0},
	{"dpid", 0, required_argument, SL_OPT_DPID, 0},
	{"fail-mode", 0, required_argument, SL_OPT_FAIL_MODE, F_RELOAD},
	{"probe-interval", 0, required_argument, SL_OPT_PROBE_INTERVAL, 0},
	{"packet-in-rate", 0, required_argument, SL_OPT_PACKET_IN_RATE, 0},
	{"verbose", 'v', no_argument, SL_OPT_VERBOSE, 0},
	{"name", 'n', required_argument, SL_OPT_NAME, 0},
	{"mgmt", 0, required_argument, SL_OPT_MGMT, 0},
	{"mgmt-group", 0, required_argument, SL_OPT_MGMT_GROUP, 0},
	{"metrics", 0, required_argument, SL_OPT_METRICS, 0},
	{"log-level", 0, required_argument, SL_OPT_LOG_LEVEL, F_LIST},
	{"dumpcap", 0, no_argument, SL_OPT_DUMPCAP, 0},
	{"duration", 'd', required_argument, SL_OPT_DURATION, 0},
	{"stats-interval", 's', required_argument, SL_OPT_STATS_INTERVAL, 0},
	{"burst", 'b', required_argument, SL_OPT_BURST, 0},
	{"workers", 'w', required_argument, SL_OPT_WORKERS, 0},
	{"dispatch", 0, required_argument, SL_OPT_DISPATCH, 0},
	{"scheduler", 0, required_argument, SL_OPT_SCHEDULER, 0},
	{"sched-threshold", 0, required_argument, SL_OPT_SCHED_THRESHOLD, 0},
	{"worker-ring", 0, required_argument, SL_OPT_WORKER_RING, 0},
	{"rx-queues", 0, required_argument, SL_OPT_RX_QUEUES, 0},
	{"mbufs", 'm', required_argument, SL_OPT_MBUFS, 0},
	{"json", 'j', required_argument, SL_OPT_JSON, 0},
	{"dump-flows", 'D', no_argument, SL_OPT_DUMP_FLOWS, 0},
	{"check", 'c', no_argument, SL_OPT_CHECK, F_CMDLINE},
	{"quiet", 'q', no_argument, SL_OPT_QUIET, 0},
	{"chain-warn", 0, required_argument, SL_OPT_CHAIN_WARN, 0},
	{"no-cache", 0, no_argument, SL_OPT_NO_CACHE, 0},
	{"no-ffp", 0, no_argument, SL_OPT_NO_FFP, 0},
	{"ffp-no-cost-model", 0, no_argument, SL_OPT_FFP_NO_COST_MODEL, 0},
	{"no-flow-cache", 0, no_argument, SL_OPT_NO_FLOW_CACHE, 0},
	{"no-ffp-path", 0, no_argument, SL_OPT_NO_FLOW_CACHE, 0},
	{"ffp-auto", 0, required_argument, SL_OPT_FFP_AUTO, 0},
	{"search-budget", 0, required_argument, SL_OPT_SEARCH_BUDGET, 0},
	{"fwd-mode", 0, required_argument, SL_OPT_FWD_MODE, 0},
	{"idle-sleep-max", 0, required_argument, SL_OPT_IDLE_SLEEP_MAX, 0},
	{"agent-awake-us", 0, required_argument, SL_OPT_AGENT_AWAKE, 0},
	{"config", 0, required_argument, SL_OPT_CONFIG, F_CMDLINE},
	{"no-config", 0, no_argument, SL_OPT_NO_CONFIG, F_CMDLINE},
	{"version", 'V', no_argument, SL_OPT_VERSION, F_CMDLINE},
	{"help", 'h', no_argument, SL_OPT_HELP, F_CMDLINE},
};

static const struct opt_def *
opt_def(enum sl_opt id)
{
	for (size_t i = 0; i < SL_ARRAY_SIZE(opt_defs); i++)
		if (opt_defs[i].id == id)
			return &opt_defs[i];
	return NULL;
}

const char *
sl_opt_name(enum sl_opt id)
{
	return id == SL_OPT_EAL ? "[eal] args" : opt_def(id)->name;
}

bool
sl_opt_reloadable(enum sl_opt id)
{
	return id < SL_OPT__N && (opt_def(id)->flags & F_RELOAD) != 0;
}

void
options_usage(FILE *f)
{
	fprintf(f,
		"Usage: sluice [OPTIONS] [-- EAL-OPTIONS]\n"
		"A DPDK OpenFlow 1.3 software switch.\n\n"
		"Ports and rules:\n"
		"  -p, --port DEVARGS[,name=NAME][,ofport=N]\n"
		"                           add a port (OpenFlow port 1, 2, ... in order, or N); any\n"
		"                           DPDK devargs: net_pcap0,rx_pcap=in.pcap, net_null0, net_tap0,\n"
		"                           net_af_packet0,iface=veth0, net_ring0, 0000:01:00.0, ...;\n"
		"                           NAME defaults to iface= (af_packet, af_xdp, tap), else\n"
		"                           the device name.  At run time: sluicectl add-port/del-port\n"
		"      --no-local           no LOCAL port (by default a TAP interface named after the\n"
		"                           switch, down until you bring it up, as Open vSwitch's\n"
		"                           bridge port; skipped with a warning when it cannot be made)\n"
		"  -f, --flows FILE         startup flow file (ovs-ofctl flow syntax, plus table\n"
		"                           declarations: table=2,kind=lpm,fields=nw_dst)\n"
		"  -F, --flow FLOW          add one flow (repeatable), after the file\n"
		"      --restore FILE       what `sluicectl save FILE` wrote (tables, forwarding\n"
		"                           modes, meters, groups, flows), after --flows\n"
		"      --table DECL         declare a table (repeatable), before --flows:\n"
		"                           table=N,kind=KIND[,fields=F1+F2][,size=N][,name=NAME]\n"
		"OpenFlow:\n"
		"  -C, --controller TARGET  controller channel (repeatable): tcp:HOST[:PORT] (connect,\n"
		"                           default port 6653; HOST an IP or a host name), ptcp:PORT[:IP] (listen, e.g. for\n"
		"                           ovs-ofctl; IP default 127.0.0.1), unix:PATH, punix:PATH;\n"
		"                           with TLS: ssl:HOST[:PORT], pssl:PORT[:IP] (IP default\n"
		"                           127.0.0.1)\n"
		"      --private-key FILE   TLS: this switch's private key (PEM), for ssl:/pssl:\n"
		"      --certificate FILE   TLS: this switch's certificate (PEM)\n"
		"      --ca-cert FILE       TLS: the CA certificate peers must be signed by (PEM);\n"
		"                           peers without a certificate from this CA are refused\n"
		"      --dpid HEX           datapath id (default: from the first port's MAC)\n"
		"      --fail-mode MODE     secure | standalone (default standalone: a learning\n"
		"                           switch while controllers are configured but none is up)\n"
		"      --probe-interval SEC echo keepalive interval (default 5, 0 = off)\n"
		"      --packet-in-rate PPS packet-ins per second to controllers (default 10000,\n"
		"                           0 = no limit)\n"
		"  -v, --verbose            log OpenFlow connections and refused messages\n"
		"                           (same as --log-level ofswitch:info --log-level ofconn:info)\n"
		"Management:\n"
		"  -n, --name NAME          instance name (default: the EAL --file-prefix if given,\n"
		"                           else \"sluice\"): the EAL file prefix, so\n"
		"                           'dpdk-telemetry.py -f NAME' and 'sluicectl -n NAME' find it\n"
		"      --mgmt PATH|none     OpenFlow management socket for sluicectl and ovs-ofctl\n"
		"                           (default /run/sluice/NAME.mgmt; none: no socket)\n"
		"      --mgmt-group GROUP   group (name or number) that may use the management and\n"
		"                           telemetry sockets (mode 0660 always; default: root's)\n"
		"      --metrics [ADDR:]PORT  serve Prometheus metrics at http://ADDR:PORT/metrics\n"
		"                           (ADDR default 127.0.0.1; [IPV6]:PORT; docs/user-guide.md)\n"
		"      --log-level TYPE:LEVEL  log level of a type (repeatable): sluice.* or a\n"
		"                           component (app, mgmt, capture, ofswitch, ofconn,\n"
		"                           pipeline, worker, port) or a DPDK type (lib.eal);\n"
		"                           LEVEL emerg..debug or 1..8; default notice.  At run\n"
		"                           time: sluicectl log TYPE LEVEL\n"
		"      --dumpcap            let dpdk-dumpcap attach (multi-process EAL; needs free\n"
		"                           hugepages); sluicectl capture works without it\n"
		"      --config FILE        configuration file (INI: [switch] takes these long\n"
		"                           options as keys, [port.NAME], [table.N], [eal];\n"
		"                           docs/user-guide.md); default " SL_CONF_DIR
		"/NAME.conf\n"
		"                           when --name NAME is given and it exists; the command\n"
		"                           line overrides it; SIGHUP reads it again\n"
		"      --no-config          read no configuration file\n"
		"Run:\n"
		"  -d, --duration SEC       stop after SEC seconds (default: run until SIGINT/SIGTERM)\n"
		"  -s, --stats-interval SEC print counters every SEC seconds (default 1, 0 = off)\n"
		"  -b, --burst N            rx burst size, 1..%d (default %d)\n"
		"  -w, --workers N          datapath worker lcores (default 1)\n"
		"      --dispatch rss|io    several workers: rss = each worker polls its own rx\n"
		"                           queue of every port (default); io = one more lcore\n"
		"                           receives and schedules packets to the workers' rings\n"
		"      --scheduler NAME     io dispatch: rr | crc32 | hrw | adaptive | ordered\n"
		"                           (default adaptive; at run time: sluicectl dispatch)\n"
		"      --sched-threshold T  load factor (ring fill, 0..1) above which adaptive and\n"
		"                           ordered move a Subflow off a worker (default 0.25)\n"
		"      --worker-ring N      io dispatch: slots of each worker ring (power of two,\n"
		"                           64..65536, default 1024)\n"
		"      --rx-queues N        rx queues of every port (default: one per worker, or\n"
		"                           one with --dispatch io); worker i polls queues i,\n"
		"                           i + workers, ...; the I/O core polls them all (more\n"
		"                           queues: more ring room for bursts and stalls)\n"
		"  -m, --mbufs N            mbufs in the pool (default 32768)\n"
		"  -j, --json FILE          write final counters and per-interval rates as JSON\n"
		"  -D, --dump-flows         print the installed flows before starting\n"
		"  -c, --check              load and validate the flow file, then exit\n"
		"  -q, --quiet              no periodic stats\n"
		"      --chain-warn N       log a warning when the installed flows make a goto\n"
		"                           chain of N tables, or packets traverse one (the\n"
		"                           longest loss-free chain found by the decomposition\n"
		"                           bench; both lengths are in 'sluicectl stats datapath')\n"
		"      --no-cache           no decision cache before mask tables (measures the\n"
		"                           classifiers alone; results are the same)\n"
		"      --no-ffp             no fast forwarding path for low-latency entries\n"
		"                           (pipeline only; results are the same)\n"
		"      --ffp-no-cost-model  a fast-path LUT before every mask/lpm table with\n"
		"                           low-latency entries, even where it does not pay\n"
		"      --no-flow-cache      no whole-pipeline flow cache (path records): every\n"
		"                           packet crosses the tables (docs/ffp.md; results\n"
		"                           are the same); --no-ffp-path is the old name\n"
		"      --ffp-auto PPS[:T]   auto-promote entries without timeouts (or with\n"
		"                           timeouts >= T s) hit >= PPS times a second\n"
		"      --search-budget PCT[:NS]  while a worker is behind, searches that miss the\n"
		"                           decision cache in tables costing >= NS ns a key may\n"
		"                           take PCT %% of its cycles; packets past that are\n"
		"                           dropped (reason search-budget).  Default %u:%u, 0 = off\n"
		"                           (docs/user-guide.md)\n"
		"      --fwd-mode MODES     forwarding modes (docs/flexforward.md): openflow (default)\n"
		"                           or e.g. 'hypercube:addr=5,nbr=4@1,nbr=7@2;keyflow:key=13';\n"
		"                           overrides a 'fwd-mode=MODES' line of the flow file\n"
		"      --idle-sleep-max US  sleep when idle, backing off up to US microseconds\n"
		"                           (default 0: poll all the time; at most 100000)\n"
		"      --agent-awake-us US  after controller activity (a message, a packet-in) the\n"
		"                           agent polls without sleeping for US microseconds, so a\n"
		"                           controller's answer meets no thread wake-up (default\n"
		"                           %u; 0 with --idle-sleep-max or on the datapath's CPU;\n"
		"                           0 = off; at most %u)\n"
		"  -V, --version            print the version\n"
		"  -h, --help               this help\n\n"
		"Default EAL options (when none follow '--'): -l 0,1 (or -l 0 on one CPU); with\n"
		"several workers --lcores mapping lcore i to CPU 1 + (i - 1) %% (CPUs - 1);\n"
		"--no-huge -m 1024 --no-pci when no hugepages are free, else --in-memory (unless\n"
		"--dumpcap), and --file-prefix=NAME (added to your EAL options when missing).\n"
		"Stats: sluicectl stats|monitor, or dpdk-telemetry.py -f NAME (/sluice/... commands,\n"
		"docs/telemetry.md).  Logs go to stderr with UTC timestamps.\n"
		"Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.\n",
		SL_BURST_MAX, SL_BURST_DEFAULT, SL_SEARCH_BUDGET_PCT_DEFAULT,
		SL_SEARCH_BUDGET_COST_NS_DEFAULT, SL_AGENT_AWAKE_DEFAULT_US, SL_AGENT_AWAKE_MAX_US);
}

/* ---- Where a value comes from, and how its errors are told ---- */

struct src {
	const char *file; /* NULL: the command line */
	unsigned line;
	bool reload; /* errors to the log, not stderr */
};

static struct src cur; /* options_parse runs on one thread */

static void opt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
opt_err(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (cur.reload && cur.file != NULL)
		SL_LOG(ERR, app, "%s:%u: %s", cur.file, cur.line, msg);
	else if (cur.reload)
		SL_LOG(ERR, app, "%s", msg);
	else if (cur.file != NULL)
		fprintf(stderr, "sluice: %s:%u: %s\n", cur.file, cur.line, msg);
	else
		fprintf(stderr, "sluice: %s\n", msg);
}

static char *
own(struct options *o, char *s)
{
	if (s == NULL)
		return NULL;
	if (o->n_owned == o->owned_cap) {
		unsigned cap = o->owned_cap ? o->owned_cap * 2 : 64;
		char **n = realloc(o->owned, cap * sizeof(*n));
		if (n == NULL) {
			free(s);
			return NULL;
		}
		o->owned = n;
		o->owned_cap = cap;
	}
	o->owned[o->n_owned++] = s;
	return s;
}

static char *
own_dup(struct options *o, const char *s)
{
	return own(o, strdup(s));
}

const char *
options_strdup(struct options *o, const char *s)
{
	const char *copy = own_dup(o, s);

	return copy != NULL ? copy : "";
}

/* Record @value as given for @id: appended to a list, replacing anything else. */
static void
given_add(struct options *o, enum sl_opt id, const char *value, bool list)
{
	char *old = list ? o->given[id] : NULL, *n;

	if (!list) {
		free(o->given[id]);
		o->given[id] = NULL;
	}
	if (asprintf(&n, "%s%s%s", old ? old : "", old ? "\n" : "", value) < 0)
		return;
	free(old);
	o->given[id] = n;
}

/* ---- Per-option parsers: one for the file and the command line ---- */

static int
parse_number(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end != '\0' || v < lo || v > hi) {
		opt_err("%s: invalid value '%s' (expected %g..%g)", opt, s, lo, hi);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* A whole number in [lo, hi] (counts: workers, queues). */
static int
parse_whole(const char *opt, const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	double v;

	if (parse_number(opt, s, lo, hi, &v) < 0)
		return -EINVAL;
	if (v != (unsigned)v) {
		opt_err("%s: invalid value '%s' (expected a whole number)", opt, s);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

/* Instance names become file and directory names: keep them plain. */
static bool
name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 40 || s[0] == '.' || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

/* A list that is full: say so. */
static int
list_full(const char *opt, size_t max, const char *hint)
{
	opt_err("%s: at most %zu%s", opt, max, hint);
	return -1;
}

/*
 * Apply one option's value (NULL for a flag) to @o: the body of the old
 * getopt switch.  @arg must outlive @o (argv, or a string @o owns).
 * @return 0, 1 to exit now with status 0 (--help, --version), or -1 after
 * saying why.
 */
static int
opt_apply(struct options *o, enum sl_opt id, const char *arg)
{
	double v;

	switch (id) {
	case SL_OPT_WORKERS:
		if (parse_whole("--workers", arg, 1, SL_DISPATCH_WORKERS_MAX, &o->workers) < 0)
			return -1;
		break;
	case SL_OPT_DISPATCH:
		if (strcmp(arg, "rss") != 0 && strcmp(arg, "io") != 0) {
			opt_err("--dispatch: invalid value '%s' (expected rss or io)", arg);
			return -1;
		}
		o->dispatch_io = strcmp(arg, "io") == 0;
		break;
	case SL_OPT_SCHEDULER:
		o->io_opt = "--scheduler";
		o->sched = sl_sched_parse(arg);
		if (o->sched < 0) {
			opt_err("--scheduler: unknown scheduler '%s' (expected rr, crc32, hrw, "
				"adaptive or ordered)",
				arg);
			return -1;
		}
		break;
	case SL_OPT_SCHED_THRESHOLD:
		o->io_opt = "--sched-threshold";
		if (parse_number("--sched-threshold", arg, 0, 1, &o->sched_threshold) < 0)
			return -1;
		break;
	case SL_OPT_WORKER_RING:
		o->io_opt = "--worker-ring";
		if (parse_number("--worker-ring", arg, 64, 65536, &v) < 0)
			return -1;
		if (((unsigned)v & ((unsigned)v - 1)) != 0 || v != (unsigned)v) {
			opt_err("--worker-ring: invalid value '%s' (expected a power of two)", arg);
			return -1;
		}
		o->worker_ring = (unsigned)v;
		break;
	case SL_OPT_RX_QUEUES:
		if (parse_whole("--rx-queues", arg, 1, SL_RX_QUEUES_MAX, &o->rx_queues) < 0)
			return -1;
		break;
	case SL_OPT_CONTROLLER:
		if (o->n_controllers == SL_ARRAY_SIZE(o->controllers))
			return list_full("--controller", SL_ARRAY_SIZE(o->controllers), " targets");
		o->controllers[o->n_controllers++] = arg;
		break;
	case SL_OPT_PRIVATE_KEY:
		o->tls.private_key = arg;
		break;
	case SL_OPT_CERTIFICATE:
		o->tls.certificate = arg;
		break;
	case SL_OPT_CA_CERT:
		o->tls.ca_cert = arg;
		break;
	case SL_OPT_DPID: {
		char *end;
		errno = 0;
		o->dpid = strtoull(arg, &end, 16);
		if (errno || end == arg || *end != '\0' || o->dpid == 0) {
			opt_err("--dpid: invalid value '%s' (expected a non-zero hex number)", arg);
			return -1;
		}
		break;
	}
	case SL_OPT_FAIL_MODE:
		if (strcmp(arg, "secure") == 0) {
			o->fail_mode = SL_FAIL_MODE_SECURE;
		} else if (strcmp(arg, "standalone") == 0) {
			o->fail_mode = SL_FAIL_MODE_STANDALONE;
		} else {
			opt_err("--fail-mode: invalid value '%s' (expected secure or standalone)",
				arg);
			return -1;
		}
		break;
	case SL_OPT_PROBE_INTERVAL:
		if (parse_number("--probe-interval", arg, 0, 3600, &o->probe_interval) < 0)
			return -1;
		break;
	case SL_OPT_PACKET_IN_RATE:
		if (parse_number("--packet-in-rate", arg, 0, 1e8, &o->pin_rate) < 0)
			return -1;
		break;
	case SL_OPT_VERBOSE:
		o->verbose = true;
		break;
	case SL_OPT_NAME:
		if (!name_valid(arg)) {
			opt_err("--name: invalid value '%s' (1-40 characters from A-Z a-z 0-9 . _ -)",
				arg);
			return -1;
		}
		o->name = arg;
		break;
	case SL_OPT_MGMT:
		o->mgmt = arg;
		break;
	case SL_OPT_MGMT_GROUP: {
		struct group *g = getgrnam(arg);
		char *end;
		long gid = g != NULL ? (long)g->gr_gid : strtol(arg, &end, 10);
		if (g == NULL && (*arg == '\0' || *end != '\0' || gid < 0 || gid > INT32_MAX)) {
			opt_err("--mgmt-group: no group '%s'", arg);
			return -1;
		}
		o->mgmt_gid = (int)gid;
		break;
	}
	case SL_OPT_METRICS: {
		char merr[256];
		if (sl_metrics_listen_check(arg, merr, sizeof(merr)) < 0) {
			opt_err("--metrics: %s", merr);
			return -1;
		}
		o->metrics = arg;
		break;
	}
	case SL_OPT_LOG_LEVEL:
		if (o->n_log_levels == SL_ARRAY_SIZE(o->log_levels))
			return list_full("--log-level", SL_ARRAY_SIZE(o->log_levels), "");
		if (strchr(arg, ':') == NULL || sl_log_level_parse(strrchr(arg, ':') + 1) < 0) {
			opt_err("--log-level: invalid value '%s' (expected TYPE:LEVEL, LEVEL one of "
				"emerg alert crit err warning notice info debug)",
				arg);
			return -1;
		}
		o->log_levels[o->n_log_levels++] = arg;
		break;
	case SL_OPT_DUMPCAP:
		o->dumpcap = true;
		break;
	case SL_OPT_FWD_MODE: {
		char ferr[256];
		if (sl_fwd_params_parse(arg, &o->fwd_params, ferr, sizeof(ferr)) < 0) {
			opt_err("--fwd-mode: %s", ferr);
			return -1;
		}
		o->fwd_mode = arg;
		break;
	}
	case SL_OPT_IDLE_SLEEP_MAX:
		if (parse_number("--idle-sleep-max", arg, 0, SL_IDLE_MAX_US, &v) < 0)
			return -1;
		o->idle_sleep_max = (unsigned)v;
		break;
	case SL_OPT_AGENT_AWAKE:
		if (parse_number("--agent-awake-us", arg, 0, SL_AGENT_AWAKE_MAX_US, &v) < 0)
			return -1;
		o->agent_awake_us = (int)v;
		break;
	case SL_OPT_PORT:
		if (o->n_ports == SL_PORTS_MAX)
			return list_full("--port", SL_PORTS_MAX, " ports");
		o->ports[o->n_ports++] = arg;
		break;
	case SL_OPT_FLOWS:
		o->flows_file = arg;
		break;
	case SL_OPT_NO_LOCAL:
		o->no_local = true;
		break;
	case SL_OPT_RESTORE:
		o->restore_file = arg;
		break;
	case SL_OPT_TABLE: {
		struct sl_table_spec ts;
		struct sl_parse_error pe = {0};
		char msg[512];
		if (o->n_tables == SL_ARRAY_SIZE(o->tables))
			return list_full("--table", SL_ARRAY_SIZE(o->tables), " declarations");
		if (sl_table_spec_parse(arg, &ts, &pe) < 0) {
			sl_parse_error_format(&pe, msg, sizeof(msg));
			opt_err("--table '%s': %s", arg, msg);
			return -1;
		}
		o->tables[o->n_tables++] = arg;
		break;
	}
	case SL_OPT_FLOW:
		if (o->n_flows == SL_ARRAY_SIZE(o->flows))
			return list_full("--flow", SL_ARRAY_SIZE(o->flows), "; use --flows FILE");
		o->flows[o->n_flows++] = arg;
		break;
	case SL_OPT_DURATION:
		if (parse_number("--duration", arg, 0, 1e7, &o->duration) < 0)
			return -1;
		break;
	case SL_OPT_STATS_INTERVAL:
		if (parse_number("--stats-interval", arg, 0, 3600, &o->stats_interval) < 0)
			return -1;
		break;
	case SL_OPT_BURST:
		if (parse_number("--burst", arg, 1, SL_BURST_MAX, &v) < 0)
			return -1;
		o->burst = (unsigned)v;
		break;
	case SL_OPT_MBUFS:
		if (parse_number("--mbufs", arg, 1024, 1 << 24, &v) < 0)
			return -1;
		o->mbufs = (unsigned)v;
		break;
	case SL_OPT_JSON:
		o->json_path = arg;
		break;
	case SL_OPT_DUMP_FLOWS:
		o->dump_flows = true;
		break;
	case SL_OPT_CHECK:
		o->check_only = true;
		break;
	case SL_OPT_QUIET:
		o->quiet = true;
		break;
	case SL_OPT_NO_CACHE:
		o->no_cache = true;
		break;
	case SL_OPT_NO_FFP:
		o->no_ffp = true;
		break;
	case SL_OPT_FFP_NO_COST_MODEL:
		o->ffp_no_model = true;
		break;
	case SL_OPT_NO_FLOW_CACHE:
		o->no_ffp_path = true;
		break;
	case SL_OPT_FFP_AUTO: {
		char pps[32], *colon;
		snprintf(pps, sizeof(pps), "%s", arg);
		colon = strchr(pps, ':');
		if (colon != NULL)
			*colon = '\0';
		if (parse_number("--ffp-auto", pps, 1, 4294967295.0, &v) < 0)
			return -1;
		o->ffp_auto.min_pps = (uint32_t)v;
		if (colon != NULL) {
			if (parse_number("--ffp-auto timeout", colon + 1, 0, 65535, &v) < 0)
				return -1;
			o->ffp_auto.min_timeout = (uint16_t)v;
		}
		o->ffp_auto.enabled = true;
		break;
	}
	case SL_OPT_SEARCH_BUDGET: {
		char pct[32], *colon;
		snprintf(pct, sizeof(pct), "%s", arg);
		colon = strchr(pct, ':');
		if (colon != NULL)
			*colon = '\0';
		if (parse_whole("--search-budget", pct, 0, 100, &o->search_budget.share_pct) < 0)
			return -1;
		if (colon != NULL && parse_whole("--search-budget cost", colon + 1, 0, 1000000000,
						 &o->search_budget.cost_ns) < 0)
			return -1;
		break;
	}
	case SL_OPT_CHAIN_WARN:
		if (parse_number("--chain-warn", arg, 1, SL_TABLES_MAX, &v) < 0)
			return -1;
		o->chain_warn = (unsigned)v;
		break;
	case SL_OPT_CONFIG:
		o->config = arg;
		break;
	case SL_OPT_NO_CONFIG:
		o->no_config = true;
		break;
	case SL_OPT_VERSION:
		printf("sluice %s (%s; OpenFlow 1.3)\n", SL_VERSION, rte_version());
		return 1;
	case SL_OPT_HELP:
		options_usage(stdout);
		return 1;
	default:
		return -1;
	}
	return 0;
}

/* Empty a list option before the command line's values replace the file's. */
static void
list_clear(struct options *o, enum sl_opt id)
{
	switch (id) {
	case SL_OPT_PORT:
		o->n_ports = 0;
		break;
	case SL_OPT_CONTROLLER:
		o->n_controllers = 0;
		break;
	case SL_OPT_FLOW:
		o->n_flows = 0;
		break;
	case SL_OPT_LOG_LEVEL:
		o->n_log_levels = 0;
		break;
	case SL_OPT_TABLE:
		o->n_tables = 0;
		break;
	default:
		break;
	}
	free(o->given[id]);
	o->given[id] = NULL;
}

/* ---- The configuration file ---- */

/* One [port.NAME] or [table.N] section, applied when it ends. */
struct section {
	char name[128];      /* as written, "" before the first */
	unsigned line;       /* of its header */
	char keys[1024];     /* table: ",key=value..." in file order */
	const char *devargs; /* port */
	const char *ofport;  /* port */
};

struct file_ctx {
	struct options *o;
	FILE *f;
	unsigned section_line; /* of the last [section] header read */
	bool at_line_start;
	bool failed;                /* an error was told */
	unsigned set_at[SL_OPT__N]; /* line a single-valued key was set at */
	struct section sec;
	struct {
		char name[32];
		unsigned line;
	} seen[SL_PORTS_MAX + SL_TABLES_MAX + 2]; /* sections so far: each once */
	unsigned n_seen;
};

/* libinih's reader: fgets, counting lines and noting where sections start. */
static char *
file_read(char *str, int num, void *stream)
{
	struct file_ctx *c = stream;
	char *s = fgets(str, num, c->f);

	if (s == NULL)
		return NULL;
	if (c->at_line_start) {
		const char *p = s + strspn(s, " \t");
		cur.line++;
		if (*p == '[')
			c->section_line = cur.line;
	}
	c->at_line_start = strchr(s, '\n') != NULL;
	return s;
}

static bool
value_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no",
										    "off", "0"};

	for (size_t i = 0; i < SL_ARRAY_SIZE(yes); i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return *out = true, true;
		if (strcasecmp(v, no[i]) == 0)
			return *out = false, true;
	}
	return false;
}

/* A key of [switch]: a long option. */
static int
switch_key(struct file_ctx *c, const char *key, const char *value)
{
	const struct opt_def *d = NULL;
	const char *arg = NULL;

	for (size_t i = 0; i < SL_ARRAY_SIZE(opt_defs) && d == NULL; i++)
		if (strcmp(opt_defs[i].name, key) == 0)
			d = &opt_defs[i];
	if (d == NULL) {
		opt_err("unknown key '%s' in [switch] (keys are sluice's long options: "
			"sluice --help)",
			key);
		return -1;
	}
	if (d->flags & F_CMDLINE) {
		opt_err("'%s' is a command-line option, not a configuration key", key);
		return -1;
	}
	if (!(d->flags & F_LIST) && c->set_at[d->id] != 0) {
		opt_err("'%s' is set twice (first at line %u)", key, c->set_at[d->id]);
		return -1;
	}
	c->set_at[d->id] = cur.line;
	if (d->has_arg == no_argument) {
		bool on;
		if (!value_bool(value, &on)) {
			opt_err("%s: invalid value '%s' (expected true or false)", key, value);
			return -1;
		}
		if (!on)
			return 0;
	} else {
		arg = own_dup(c->o, value);
		if (arg == NULL)
			return -1;
	}
	if (opt_apply(c->o, d->id, arg) != 0)
		return -1;
	given_add(c->o, d->id, arg ? arg : "true", d->flags & F_LIST);
	return 0;
}

/* The end of a [port.NAME] or [table.N] section: one --port or --table value. */
static int
section_end(struct file_ctx *c)
{
	struct section *s = &c->sec;
	unsigned line = cur.line;
	char *v = NULL;
	int rc = 0;

	if (s->name[0] == '\0' || strcmp(s->name, "switch") == 0 || strcmp(s->name, "eal") == 0)
		return 0;
	cur.line = s->line; /* errors name the section's header */
	if (strncmp(s->name, "port.", 5) == 0) {
		struct sl_port_args a;
		char err[512];
		if (s->devargs == NULL) {
			opt_err("[%s]: no devargs (e.g. devargs = net_af_packet0,iface=eth0)",
				s->name);
			rc = -1;
		} else if (asprintf(&v, "%s,name=%s%s%s", s->devargs, s->name + 5,
				    s->ofport ? ",ofport=" : "", s->ofport ? s->ofport : "") < 0 ||
			   own(c->o, v) == NULL || opt_apply(c->o, SL_OPT_PORT, v) != 0) {
			rc = -1;
		} else if (sl_port_args_parse(v, &a, err, sizeof(err)) < 0) {
			opt_err("[%s]: %s", s->name, err);
			rc = -1;
		} else {
			given_add(c->o, SL_OPT_PORT, v, true);
		}
	} else {
		if (asprintf(&v, "table=%s%s", s->name + 6, s->keys) < 0 || own(c->o, v) == NULL ||
		    opt_apply(c->o, SL_OPT_TABLE, v) != 0)
			rc = -1;
		else
			given_add(c->o, SL_OPT_TABLE, v, true);
	}
	cur.line = line;
	return rc;
}

/* A new section: check its name, and end the one before. */
static int
section_begin(struct file_ctx *c, const char *name)
{
	struct section *s = &c->sec;
	unsigned line = cur.line;

	if (section_end(c) < 0)
		return -1;
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->line = c->section_line;
	cur.line = s->line;
	for (unsigned i = 0; i < c->n_seen && strchr(name, '.') != NULL; i++)
		if (strcmp(c->seen[i].name, name) == 0) {
			opt_err("[%s] is given twice (first at line %u)", name, c->seen[i].line);
			return -1;
		}
	if (c->n_seen < SL_ARRAY_SIZE(c->seen)) {
		snprintf(c->seen[c->n_seen].name, sizeof(c->seen[0].name), "%s", name);
		c->seen[c->n_seen++].line = s->line;
	}
	if (strcmp(name, "switch") == 0 || strcmp(name, "eal") == 0) {
		/* fine */
	} else if (strncmp(name, "port.", 5) == 0) {
		if (!sl_port_name_valid(name + 5)) {
			opt_err("[%s]: invalid port name '%s' (1-15 characters of A-Z a-z 0-9 _ . "
				"- :, not a number nor LOCAL)",
				name, name + 5);
			return -1;
		}
	} else if (strncmp(name, "table.", 6) == 0) {
		char *end;
		unsigned long t = strtoul(name + 6, &end, 10);
		if (name[6] == '\0' || *end != '\0' || t >= SL_TABLES_MAX) {
			opt_err("[%s]: expected [table.N], N 0..%d", name, SL_TABLES_MAX - 1);
			return -1;
		}
	} else {
		opt_err("unknown section [%s] (expected [switch], [port.NAME], [table.N] or "
			"[eal])",
			name);
		return -1;
	}
	cur.line = line;
	return 0;
}

/* libinih's handler: 1 to go on, 0 to stop at this line. */
static int
file_key(void *user, const char *section, const char *key, const char *value)
{
	struct file_ctx *c = user;
	struct section *s = &c->sec;

	if (strcmp(section, s->name) != 0 || s->name[0] == '\0' || c->section_line != s->line) {
		if (section[0] == '\0') {
			opt_err("'%s' is outside any section (put it under [switch])", key);
			goto fail;
		}
		if (section_begin(c, section) < 0)
			goto fail;
	}
	if (strcmp(section, "switch") == 0) {
		if (switch_key(c, key, value) < 0)
			goto fail;
	} else if (strcmp(section, "eal") == 0) {
		char *copy, *tok, *save = NULL;
		if (strcmp(key, "args") != 0) {
			opt_err("unknown key '%s' in [eal] (expected args = EAL options)", key);
			goto fail;
		}
		copy = own_dup(c->o, value);
		for (tok = copy ? strtok_r(copy, " \t", &save) : NULL; tok != NULL;
		     tok = strtok_r(NULL, " \t", &save)) {
			if (c->o->n_eal_args == SL_ARRAY_SIZE(c->o->eal_args)) {
				opt_err("[eal] args: at most %zu", SL_ARRAY_SIZE(c->o->eal_args));
				goto fail;
			}
			c->o->eal_args[c->o->n_eal_args++] = tok;
			given_add(c->o, SL_OPT_EAL, tok, true);
		}
	} else if (strncmp(section, "port.", 5) == 0) {
		const char **slot = strcmp(key, "devargs") == 0  ? &s->devargs
				    : strcmp(key, "ofport") == 0 ? &s->ofport
								 : NULL;
		if (slot == NULL) {
			opt_err("unknown key '%s' in [%s] (expected devargs, ofport)", key,
				section);
			goto fail;
		}
		if (*slot != NULL) {
			opt_err("'%s' is set twice in [%s]", key, section);
			goto fail;
		}
		if ((*slot = own_dup(c->o, value)) == NULL)
			goto fail;
	} else {
		static const char *const keys[] = {"kind",   "fields", "lookup",
						   "update", "size",   "name"};
		bool known = false;
		size_t n = strlen(s->keys);
		for (size_t i = 0; i < SL_ARRAY_SIZE(keys); i++)
			known |= strcmp(key, keys[i]) == 0;
		if (!known) {
			opt_err("unknown key '%s' in [%s] (expected kind, fields, lookup, update, "
				"size, name)",
				key, section);
			goto fail;
		}
		if ((size_t)snprintf(s->keys + n, sizeof(s->keys) - n, ",%s=%s", key, value) >=
		    sizeof(s->keys) - n) {
			opt_err("[%s]: too long", section);
			goto fail;
		}
	}
	return 1;
fail:
	c->failed = true;
	return 0;
}

/*
 * Read @path into @o.  libinih's options are set here: no inline comments
 * (';' separates forwarding modes), no continuation lines, long lines
 * (flow and devargs strings), stop at the first error.
 */
static int
file_load(struct options *o, const char *path)
{
	struct file_ctx c = {.o = o, .at_line_start = true};
	int rc;

	c.f = fopen(path, "r");
	if (c.f == NULL) {
		cur.file = NULL;
		opt_err("--config %s: %s", path, strerror(errno));
		return -1;
	}
	ini_allow_inline_comments = false;
	ini_allow_multiline = false;
	ini_use_stack = false;
	ini_allow_realloc = true;
	ini_max_line = 65536;
	ini_stop_on_first_error = true;
	cur.file = path;
	cur.line = 0;
	rc = ini_parse_stream(file_read, &c, file_key, &c);
	fclose(c.f);
	if (rc == 0 && !c.failed) {
		cur.line++; /* a section's errors still name its header */
		if (section_end(&c) < 0)
			rc = -1;
	} else if (rc > 0 && !c.failed) {
		cur.line = (unsigned)rc;
		opt_err("syntax error: expected [section], key = value, or a comment");
	} else if (rc == -2) {
		opt_err("out of memory");
	}
	cur.file = NULL;
	return rc == 0 ? 0 : -1;
}

/* ---- The command line ---- */

/* getopt_long's tables, made from opt_defs. */
static void
getopt_tables(struct option *longopts, char *shortopts)
{
	size_t n = 0;

	for (size_t i = 0; i < SL_ARRAY_SIZE(opt_defs); i++) {
		const struct opt_def *d = &opt_defs[i];
		longopts[i] = (struct option){d->name, d->has_arg, NULL, 0x1000 + (int)d->id};
		if (d->letter != 0) {
			shortopts[n++] = (char)d->letter;
			if (d->has_arg == required_argument)
				shortopts[n++] = ':';
		}
	}
	longopts[SL_ARRAY_SIZE(opt_defs)] = (struct option){NULL, 0, NULL, 0};
	shortopts[n] = '\0';
}

static enum sl_opt
opt_of_letter(int c)
{
	if (c >= 0x1000)
		return (enum sl_opt)(c - 0x1000);
	for (size_t i = 0; i < SL_ARRAY_SIZE(opt_defs); i++)
		if (opt_defs[i].letter == c)
			return opt_defs[i].id;
	return SL_OPT__N;
}

/*
 * Split the --port arguments (name=, ofport= are Sluice's) and number the
 * ports: ofport=N where given, else the lowest free numbers in order.
 * Names and numbers must not repeat.
 */
static int
port_args_number(struct options *o)
{
	bool used[SL_PORTS_MAX + 1] = {false};
	char err[512];
	uint32_t next = 1;

	for (unsigned i = 0; i < o->n_ports; i++) {
		struct sl_port_args *a = &o->port_args[i];
		if (sl_port_args_parse(o->ports[i], a, err, sizeof(err)) < 0) {
			opt_err("--port: %s", err);
			return -1;
		}
		if (a->of_no != 0 && used[a->of_no]) {
			opt_err("--port %s: ofport=%u is given twice", o->ports[i], a->of_no);
			return -1;
		}
		used[a->of_no] = a->of_no != 0;
		for (unsigned j = 0; j < i && a->name[0]; j++)
			if (strcmp(o->port_args[j].name, a->name) == 0) {
				opt_err("--port %s: name=%s is given twice", o->ports[i], a->name);
				return -1;
			}
	}
	for (unsigned i = 0; i < o->n_ports; i++) {
		struct sl_port_args *a = &o->port_args[i];
		while (a->of_no == 0 && used[next])
			next++;
		if (a->of_no == 0) {
			a->of_no = next;
			used[next] = true;
		}
		o->max_port_no = SL_MAX(o->max_port_no, a->of_no);
	}
	return 0;
}

static void
defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->stats_interval = 1;
	o->burst = SL_BURST_DEFAULT;
	o->mbufs = 32768;
	o->fail_mode = SL_FAIL_MODE_STANDALONE;
	o->search_budget.share_pct = SL_SEARCH_BUDGET_PCT_DEFAULT;
	o->search_budget.cost_ns = SL_SEARCH_BUDGET_COST_NS_DEFAULT;
	o->probe_interval = 5;
	o->pin_rate = 10000;
	o->workers = 1;
	o->mgmt_gid = -1;
	o->sched = SL_SCHED_ADAPTIVE;
	o->sched_threshold = SL_DISPATCH_THRESHOLD_DEFAULT;
	o->worker_ring = 1024;
	o->agent_awake_us = -1;
}

void
options_free(struct options *o)
{
	if (o == NULL)
		return;
	for (unsigned i = 0; i < o->n_owned; i++)
		free(o->owned[i]);
	free(o->owned);
	for (unsigned i = 0; i < SL_ARRAY_SIZE(o->given); i++)
		free(o->given[i]);
	memset(o, 0, sizeof(*o));
}

int
options_parse(int argc, char **argv, struct options *o, int *exit_now, bool reload)
{
	struct option longopts[SL_ARRAY_SIZE(opt_defs) + 1];
	char shortopts[2 * SL_ARRAY_SIZE(opt_defs) + 2];
	bool on_cmdline[SL_OPT__N] = {false};
	const char *config = NULL, *name = NULL;
	bool exits = false; /* --help or --version: no file needed */
	char path[PATH_MAX];
	int c;

	defaults(o);
	cur = (struct src){.reload = reload};
	*exit_now = -1;
	getopt_tables(longopts, shortopts);

	/* Pass 1: which file, if any.  Errors wait for pass 2, in command-line order. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		enum sl_opt id = opt_of_letter(c);
		if (id == SL_OPT_CONFIG)
			config = optarg;
		else if (id == SL_OPT_NO_CONFIG)
			o->no_config = true;
		else if (id == SL_OPT_NAME)
			name = optarg;
		else if (id == SL_OPT_HELP || id == SL_OPT_VERSION)
			exits = true;
	}
	if (o->no_config || exits) {
		config = NULL;
	} else if (config == NULL && name != NULL && name_valid(name)) {
		snprintf(path, sizeof(path), "%s/%s.conf", SL_CONF_DIR, name);
		if (access(path, F_OK) == 0)
			config = path;
	}
	if (config != NULL) {
		o->config = own_dup(o, config);
		if (o->config == NULL || file_load(o, o->config) < 0)
			return -1;
	}

	/* Pass 2: the command line, over the file. */
	optind = 0;
	opterr = !reload;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		enum sl_opt id = opt_of_letter(c);
		const struct opt_def *d = id < SL_OPT__N ? opt_def(id) : NULL;
		int rc;

		if (d == NULL) {
			if (!reload)
				fprintf(stderr, "Try 'sluice --help'.\n");
			return -1;
		}
		if (id == SL_OPT_CONFIG || id == SL_OPT_NO_CONFIG)
			continue; /* pass 1 */
		if (!on_cmdline[id] && (d->flags & F_LIST))
			list_clear(o, id);
		on_cmdline[id] = true;
		rc = opt_apply(o, id, optarg);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			*exit_now = 0;
			return 0;
		}
		given_add(o, id, optarg ? optarg : "true", d->flags & F_LIST);
	}
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0) {
		opt_err("unexpected argument '%s' (EAL options go after '--')", argv[optind]);
		return -1;
	}
	if (optind < argc) {
		/* EAL options on the command line replace the file's. */
		free(o->given[SL_OPT_EAL]);
		o->given[SL_OPT_EAL] = NULL;
		o->n_eal_args = 0;
		for (int i = optind; i < argc; i++)
			given_add(o, SL_OPT_EAL, argv[i], true);
	}
	if (o->io_opt != NULL && !o->dispatch_io) {
		opt_err("%s applies to the I/O core: add --dispatch io", o->io_opt);
		return -1;
	}
	if (o->rx_queues != 0 && !o->dispatch_io && o->rx_queues < o->workers) {
		opt_err("--rx-queues %u: fewer than the %u workers (each polls its own queues; "
			"with --dispatch rss at least one each)",
			o->rx_queues, o->workers);
		return -1;
	}
	if (o->n_ports == 0 && !o->check_only) {
		opt_err("no ports: give at least one --port DEVARGS%s",
			o->config ? " or a [port.NAME] section" : "");
		return -1;
	}
	if (port_args_number(o) < 0)
		return -1;
	return optind;
}
