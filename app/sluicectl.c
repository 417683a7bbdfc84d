/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl: the operator CLI of a running Sluice (control path; like
 * ovs-ofctl and ovs-appctl together).
 *
 *   sluicectl [OPTIONS] COMMAND [ARGS...]
 *
 * OpenFlow commands (show, dump-*, add-flow(s), mod-flows, del-flows) talk
 * to the switch's OpenFlow listener through src/ctl (blocking client) and
 * src/ofp (the one OpenFlow codec); flows are read and printed with
 * src/flowfile (the one flow syntax).  Telemetry commands (stats, monitor,
 * capture, log, telemetry) call the switch's DPDK telemetry commands
 * (docs/telemetry.md).  Output is text for people or, with --json, one JSON
 * document for scripts (field names: docs/sluicectl.md).
 *
 * Exit codes: 0 ok; 1 the switch refused (OFPT_ERROR, a telemetry error
 * or null reply) or sent a malformed reply; 2 usage or syntax error; 3 the
 * switch cannot be reached (no socket, refused, timed out, closed).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "sl_config.h"
#include "../src/core/core.h"
#include "../src/ctl/ctl.h"
#include "../src/flowfile/flowfile.h"
#include "../src/fwd/fwd.h"
#include "../src/ofp/ofp.h"
#include "../src/tls/tls.h"

#define EXIT_REFUSED 1
#define EXIT_USAGE 2
#define EXIT_UNREACHABLE 3

#define ERR_MAX 512

/* Options of the command line (global and per command). */
struct opts {
	const char *name;
	const char *target;
	const char *telemetry;
	struct sl_tls_files tls; /* -p/--private-key, -c/--certificate, -C/--ca-cert */
	bool json;
	int timeout_ms;
	/* Per command; checked against the command after parsing. */
	bool strict;
	bool all;
	const char *interval;
	const char *count;
	const char *dir;
	const char *file;
	const char *bytes;
	const char *snaplen;
	const char *hex;       /* trace --hex FRAME */
	const char *live;      /* trace --live N */
	const char *filter;    /* capture start --filter EXPR */
	double live_wait;      /* trace --live: seconds to wait for the packets (--timeout) */
	bool no_stats;         /* dump-flows: no counters (ovs-ofctl --no-stats) */
	int sort;              /* dump-flows: 1 --sort, -1 --rsort (by priority), 0 as sent */
	bool names;            /* --names: port names instead of numbers in flows and groups */
	char target_buf[160];
	char tel_buf[256];
};

static struct opts o;
static struct sl_ctl_jw jw;

static void __attribute__((format(printf, 1, 2))) errmsg(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("sluicectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int __attribute__((format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("sluicectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'sluicectl --help'.\n", stderr);
	return EXIT_USAGE;
}

static void
usage(FILE *f)
{
	fprintf(f,
	        "Usage: sluicectl [OPTIONS] COMMAND [ARGS...]\n"
	        "Operate a running Sluice switch: OpenFlow tables and ports, telemetry.\n\n"
	        "Options:\n"
	        "  -n, --name NAME       switch instance (default \"sluice\"): OpenFlow at\n"
	        "                        unix:/run/sluice/NAME.mgmt, telemetry at\n"
	        "                        /var/run/dpdk/NAME/dpdk_telemetry.v2 (non-root:\n"
	        "                        $XDG_RUNTIME_DIR/dpdk/NAME, else /tmp/dpdk/NAME)\n"
	        "  -t, --target TARGET   OpenFlow target instead: unix:PATH | tcp:HOST[:PORT] |\n"
	        "                        ssl:HOST[:PORT] (a pssl: listener; needs -p, -c, -C)\n"
	        "  -p, --private-key FILE  TLS: our private key (PEM), for ssl: targets\n"
	        "  -c, --certificate FILE  TLS: our certificate (PEM)\n"
	        "  -C, --ca-cert FILE    TLS: the CA certificate the switch's must chain to\n"
	        "      --telemetry PATH  telemetry socket instead\n"
	        "  -j, --json            JSON output (one document on stdout)\n"
	        "      --names           port names instead of numbers in flows and groups\n"
	        "                        (names are read in input either way); --no-names\n"
	        "      --timeout SEC     how long to wait for the switch (default 5)\n"
	        "  -O OpenFlow13         accepted (the only version Sluice speaks)\n"
	        "  -h, --help            this help\n"
	        "  -V, --version         print the version\n\n"
	        "OpenFlow commands:\n"
	        "  show                       switch features and ports\n"
	        "  dump-flows [FILTER]        flows; FILTER: table=N, cookie=V/M, out_port=P,\n"
	        "                             out_group=G, match fields (ovs-ofctl syntax);\n"
	        "                             --no-stats, --sort / --rsort (by priority)\n"
	        "  dump-tables [--all]        table counters (tables in use, or all)\n"
	        "  dump-ports [PORT]          port counters; PORT a number, a name or LOCAL\n"
	        "  dump-groups                groups, buckets and their counters\n"
	        "  dump-group-stats           the same (ovs-ofctl's name)\n"
	        "  add-group GROUP            add a group: \"group_id=1,type=all,bucket=output:2,\n"
	        "                             bucket=output:3\" (ovs-ofctl add-groups syntax)\n"
	        "  mod-group GROUP            replace a group's type and buckets\n"
	        "  del-groups [group_id=N]    delete a group (all without an id)\n"
	        "  dump-meters                meters, bands and their counters\n"
	        "  meter-stats                the same (ovs-ofctl's name)\n"
	        "  meter-features             what the switch's meters support\n"
	        "  add-meter METER            add a meter: \"meter=1,pktps,burst,bands=type=drop,\n"
	        "                             rate=1000,burst_size=10\" (ovs-ofctl add-meter syntax)\n"
	        "  mod-meter METER            replace a meter's flags and bands\n"
	        "  del-meters [meter=N]       delete a meter and its flows (all without an id)\n"
	        "  add-flow FLOW              add one flow (\"priority=10,ip actions=output:2\")\n"
	        "  add-flows FILE|-           add a flow file (table declarations and\n"
	        "                             fwd-mode= lines too)\n"
	        "  set-fwd-mode MODES         set the forwarding modes (openflow, or e.g.\n"
	        "                             \"hypercube:addr=5,nbr=4@1;keyflow:key=13\")\n"
	        "  fwd-mode                   print the forwarding modes\n"
	        "  mod-flows [--strict] FLOW  change the actions of matching flows\n"
	        "  del-flows [--strict] [FILTER]  delete flows (all without FILTER)\n"
	        "  diff-flows SOURCE1 SOURCE2 flows only in SOURCE1 (-), only in SOURCE2 (+),\n"
	        "                             or in both but different; a SOURCE is a flow file\n"
	        "                             or a switch (a target or an instance name); exit\n"
	        "                             2 when they differ\n"
	        "  replace-flows [SWITCH] FILE  make the switch's flows FILE's: deletes, modifies\n"
	        "                             and adds only what differs, then a barrier\n"
	        "  dump-states TABLE          entries and counters of a state table\n"
	        "  set-state TABLE KEY STATE [idle_ms=N] [hard_ms=N] [rollback=S]\n"
	        "                             set a flow's state; KEY: exact lookup-scope\n"
	        "                             fields (\"ip,nw_src=10.0.0.1\")\n"
	        "  add-states FILE|-          set-state arguments, one set per line\n"
	        "  del-states TABLE [KEY]     delete a flow's state (all without KEY)\n\n"
	        "Telemetry commands:\n"
	        "  stats [ports|tables|drops|datapath|latency|controller|flow_cache|ffp|info|all]\n"
	        "  monitor [--interval SEC] [--count N]   live rates (q or Ctrl-C to stop)\n"
	        "  capture start PORT [PORT...] [--dir rx|tx|both] [--file PATH] [--count N]\n"
	        "                [--bytes N] [--snaplen N] [--filter EXPR]\n"
	        "                             up to 8 ports into one pcapng file; EXPR: a pcap\n"
	        "                             filter (tcpdump syntax: 'tcp port 80')\n"
	        "  capture stop | capture status\n"
	        "  log [TYPE LEVEL]           show log levels, or set TYPE (may end in *)\n"
	        "  workers                    dispatch and per-worker counters\n"
	        "  fdb-show                   output:NORMAL's learned addresses (port, VLAN, MAC, age)\n"
	        "  trace FLOW | --hex FRAME [in_port=N]\n"
	        "                             one packet through the pipeline, nothing changed: each\n"
	        "                             table, the entry it wins, the outputs, the verdict\n"
	        "  trace --live N [PORT]      the same for the next N packets received (1..64; only\n"
	        "                             on PORT, a name or number, if given); waits --timeout\n"
	        "                             seconds (default 10) and prints what arrived\n"
	        "  save FILE                  tables, modes, meters, groups and flows as a flow file\n"
	        "                             (sluice --restore FILE, or add-flows FILE, loads it)\n"
	        "  add-port DEVARGS [name=NAME] [ofport=N]\n"
	        "                             add a port at run time (DPDK devargs, as sluice -p);\n"
	        "                             controllers get a port_status ADD\n"
	        "  del-port NAME|N            delete a port (port_status DELETE); LOCAL stays\n"
	        "  set-queue PORT QUEUE max_rate=KBPS [burst=KBIT]\n"
	        "                             add or change a queue (a max-rate policer that\n"
	        "                             set_queue:QUEUE selects before output:PORT)\n"
	        "  del-queue PORT QUEUE       delete a queue\n"
	        "  dump-queues                the queues, their rates and counters\n"
	        "  dispatch [SCHED] [THRESHOLD]  show or set the I/O core's scheduler (rr, crc32,\n"
	        "                             hrw, adaptive, ordered) and load threshold (0..1)\n"
	        "  telemetry CMD[,PARAMS]     raw telemetry call, prints the reply\n\n"
	        "Exit codes: 0 ok, 1 the switch refused (its error is printed), 2 usage or\n"
	        "syntax error, 3 the switch cannot be reached.\n");
}

/*
 * Small parsers.
 */

/* A decimal or 0x integer in [lo, hi]; false if @s is anything else. */
static bool
parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || s[0] == '\0' || s[0] == '-' || s[0] == '+' || s[0] == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end != '\0' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static bool
parse_seconds(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	if (s == NULL || s[0] == '\0')
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end != '\0' || !(v >= lo && v <= hi))
		return false;
	*out = v;
	return true;
}

/* Join argv[from..argc) with spaces (the flow syntax treats blanks like commas). */
static char *
join_args(int argc, char **argv, int from)
{
	size_t n = 1;
	char *s;

	for (int i = from; i < argc; i++)
		n += strlen(argv[i]) + 1;
	s = malloc(n);
	if (s == NULL)
		return NULL;
	s[0] = '\0';
	for (int i = from; i < argc; i++) {
		if (i > from)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static void
fmt_duration(uint32_t sec, uint32_t nsec, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRIu32 ".%03" PRIu32 "s", sec,
	         nsec < 1000000000u ? nsec / 1000000u : 999u);
}

static double
duration_d(uint32_t sec, uint32_t nsec)
{
	return sec + (nsec < 1000000000u ? nsec : 999999999u) / 1e9;
}

static void
fmt_mac(const uint8_t *m, char *buf, size_t size)
{
	snprintf(buf, size, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* Names of the set bits of @v from @names (bit i), joined by @sep; "0" when none. */
static void
fmt_bits(uint32_t v, const char *const *names, unsigned n, const char *sep, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < 32 && len < size; i++) {
		if (!(v & (1u << i)))
			continue;
		if (i < n && names[i])
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? sep : "",
			                        names[i]);
		else
			len += (size_t)snprintf(buf + len, size - len, "%s0x%x", len ? sep : "",
			                        1u << i);
	}
	if (buf[0] == '\0')
		snprintf(buf, size, "0");
}

static void
jw_bits(const char *key, uint32_t v, const char *const *names, unsigned n)
{
	sl_ctl_jw_array_begin(&jw, key);
	for (unsigned i = 0; i < 32; i++) {
		if (!(v & (1u << i)))
			continue;
		if (i < n && names[i])
			sl_ctl_jw_string(&jw, NULL, names[i]);
		else
			sl_ctl_jw_stringf(&jw, NULL, "0x%x", 1u << i);
	}
	sl_ctl_jw_array_end(&jw);
}

static const char *const cap_names[] = {"FLOW_STATS",  "TABLE_STATS", "PORT_STATS",
                                        "GROUP_STATS", NULL,          "IP_REASM",
                                        "QUEUE_STATS", NULL,          "PORT_BLOCKED"};
static const char *const config_names[] = {"PORT_DOWN", NULL,     "NO_RECV",     NULL,
                                           NULL,        "NO_FWD", "NO_PACKET_IN"};
static const char *const state_names[] = {"LINK_DOWN", "BLOCKED", "LIVE"};
static const char *const feature_names[] = {
    "10MB_HD",  "10MB_FD", "100MB_HD", "100MB_FD", "1GB_HD", "1GB_FD",  "10GB_FD", "40GB_FD",
    "100GB_FD", "1TB_FD",  "OTHER",    "COPPER",   "FIBER",  "AUTONEG", "PAUSE",   "PAUSE_ASYM"};
static const char *const flag_names[] = {"send_flow_rem", "check_overlap", "reset_counts",
                                         "no_packet_counts", "no_byte_counts"};

/* A port speed in kbps as "10G", "100M", "-" for 0. */
static void
fmt_speed(uint32_t kbps, char *buf, size_t size)
{
	if (kbps == 0)
		snprintf(buf, size, "-");
	else if (kbps % 1000000 == 0)
		snprintf(buf, size, "%" PRIu32 "G", kbps / 1000000);
	else if (kbps % 1000 == 0)
		snprintf(buf, size, "%" PRIu32 "M", kbps / 1000);
	else
		snprintf(buf, size, "%" PRIu32 "k", kbps);
}

/*
 * OpenFlow plumbing.
 */

/* Exit code and message for a failure to reach the switch over OpenFlow. */
static int
of_unreachable(int rc, const char *err)
{
	if (rc == -EINVAL)
		return usage_error("%s", err);
	errmsg("%s", err);
	/* -EPROTO: something answered but refused us (TLS, hello): running, then. */
	if (rc != -EPROTO)
		fprintf(stderr, "sluicectl: is the switch running? Pick it with --name NAME or "
		                "--target unix:PATH|tcp:HOST[:PORT]|ssl:HOST[:PORT]\n");
	return EXIT_UNREACHABLE;
}

static struct sl_tls_ctx *tls_ctx;

static void
tls_ctx_free(void)
{
	sl_tls_ctx_destroy(tls_ctx);
	tls_ctx = NULL;
}

/* The TLS context of ssl: targets, loaded once; exit code on a configuration error. */
static int
tls_load(void)
{
	const struct sl_tls_files *f = &o.tls;
	char err[ERR_MAX];

	if (tls_ctx != NULL)
		return 0;
	if (f->private_key == NULL || f->certificate == NULL || f->ca_cert == NULL)
		return usage_error("%s: TLS needs -p/--private-key, -c/--certificate and "
		                   "-C/--ca-cert (%s is missing)",
		                   o.target,
		                   f->private_key == NULL   ? "--private-key"
		                   : f->certificate == NULL ? "--certificate"
		                                            : "--ca-cert");
	if (sl_tls_ctx_create(f, &tls_ctx, err, sizeof(err)) < 0)
		return usage_error("TLS: %s", err);
	atexit(tls_ctx_free);
	return 0;
}

static int
of_connect(struct sl_ctl_of **c)
{
	char err[ERR_MAX];
	int rc, ex;

	if (strncmp(o.target, "ssl:", 4) == 0 && (ex = tls_load()) != 0)
		return ex;
	rc = sl_ctl_of_open_tls(o.target, tls_ctx, o.timeout_ms, c, err, sizeof(err));
	return rc < 0 ? of_unreachable(rc, err) : 0;
}

/* Exit code for a failed request or batch (after connecting). */
static int
of_failed(const char *what, int rc, const char *err)
{
	switch (rc) {
	case -EREMOTEIO:
		errmsg("%s: the switch refused: %s", what, err);
		return EXIT_REFUSED;
	case -ETIMEDOUT:
	case -ECONNRESET:
	case -EPIPE:
		errmsg("%s: %s", what, err);
		return EXIT_UNREACHABLE;
	default:
		errmsg("%s: %s", what, err[0] ? err : strerror(-rc));
		return EXIT_REFUSED;
	}
}

/* Send one multipart request of @type (body from @req) and feed every reply message to @fn. */
static int
of_multipart(struct sl_ctl_of *c, struct sl_ofp_mp_request *req, sl_ctl_of_reply_fn fn, void *arg,
             struct sl_ofp_error *refused, char *err, size_t err_size)
{
	struct sl_ofp_buf b;
	int rc;

	sl_ofp_buf_init(&b);
	if (sl_ofp_mp_request_encode(&b, sl_ctl_of_next_xid(c), req) < 0) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	rc = sl_ctl_of_request(c, b.data, b.len, fn, arg, refused, err, err_size);
	sl_ofp_buf_free(&b);
	return rc;
}

/*
 * Decoding helpers: each reply callback checks the multipart type and
 * decodes the entries, reporting malformed data as -EBADMSG with a message.
 */
/*
 * Room for element @n of a growable array: @v, or @v reallocated to twice
 * its capacity (*cap, @first to begin with) when it is full.  Returns the
 * array (the element at @n zeroed) or NULL, leaving @v and *cap as they
 * were, out of memory.
 */
static void *
grow_array(void *v, size_t n, size_t *cap, size_t size, size_t first)
{
	if (n == *cap) {
		size_t ncap = *cap ? *cap * 2 : first;
		void *nv = realloc(v, ncap * size);
		if (nv == NULL)
			return NULL;
		v = nv;
		*cap = ncap;
	}
	memset((char *)v + n * size, 0, size);
	return v;
}

struct mp_ctx {
	uint16_t type;
	char *err; /* ERR_MAX bytes */
	int (*entry)(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
	             struct sl_ofp_error *e);
	void *user;
};

/* grow_array for a multipart entry callback: out of memory goes into @m's error. */
static void *
mp_grow(struct mp_ctx *m, void *v, size_t n, size_t *cap, size_t size)
{
	void *nv = grow_array(v, n, cap, size, 16);

	if (nv == NULL)
		snprintf(m->err, ERR_MAX, "out of memory");
	return nv;
}

static int
mp_reply(void *arg, const uint8_t *msg, size_t len)
{
	struct mp_ctx *m = arg;
	struct sl_ofp_mp_reply r;
	struct sl_ofp_error e;

	if (sl_ofp_mp_reply_decode(msg, len, &r, &e) < 0 || r.type != m->type) {
		snprintf(m->err, ERR_MAX, "malformed reply: expected %s, got message type %u",
		         sl_ofp_mp_type_name(m->type), msg[1]);
		return -EBADMSG;
	}
	for (size_t ofs = 0; ofs < r.body_len;) {
		int rc = m->entry(m, r.body, r.body_len, &ofs, &e);
		if (rc == -1) {
			snprintf(m->err, ERR_MAX, "malformed %s entry at byte %zu: %s",
			         sl_ofp_mp_type_name(m->type), ofs, sl_ofp_error_name(&e));
			return -EBADMSG;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * show
 */

struct port_list {
	struct sl_ofp_port_desc *ports;
	size_t n, cap;
};

static int
port_desc_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
                struct sl_ofp_error *e)
{
	struct port_list *pl = m->user;

	void *np = mp_grow(m, pl->ports, pl->n, &pl->cap, sizeof(*pl->ports));

	if (np == NULL)
		return -ENOMEM;
	pl->ports = np;
	if (sl_ofp_port_desc_entry_decode(body, len, ofs, &pl->ports[pl->n], e) < 0)
		return -1;
	pl->n++;
	return 0;
}

static int
get_ports(struct sl_ctl_of *c, struct port_list *pl, char *err)
{
	struct mp_ctx m = {
	    .type = SL_OFPMP_PORT_DESC, .err = err, .entry = port_desc_entry, .user = pl};

	return of_multipart(c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_PORT_DESC}, mp_reply,
	                    &m, NULL, err, ERR_MAX);
}

static const char *
port_name_of(const struct port_list *pl, uint32_t port_no)
{
	for (size_t i = 0; i < pl->n; i++)
		if (pl->ports[i].port_no == port_no)
			return pl->ports[i].name;
	return NULL;
}

/*
 * Port names (ovs-ofctl --names): flows, filters and groups may name a port
 * wherever they take a number, and --names prints names.  The switch's port
 * descriptions are read once, when first needed, so a command without names
 * costs no request.
 */
static struct {
	bool loaded;
	int ex; /* exit code of a failed read, else 0 */
	struct port_list pl;
} portmap;

/* Read the port names over @c, or over a connection of their own when @c is NULL. */
static int
portmap_load(struct sl_ctl_of *c)
{
	struct sl_ctl_of *own = NULL;
	char err[ERR_MAX] = "";
	int rc;

	if (portmap.loaded)
		return portmap.ex;
	portmap.loaded = true;
	if (c == NULL) {
		if ((portmap.ex = of_connect(&own)) != 0)
			return portmap.ex;
		c = own;
	}
	if ((rc = get_ports(c, &portmap.pl, err)) < 0)
		portmap.ex = of_failed("port description request", rc, err);
	sl_ctl_of_close(own);
	return portmap.ex;
}

static int
portmap_to_number(void *arg, const char *name, size_t len, uint32_t *port)
{
	(void)arg;
	if (portmap_load(NULL) != 0)
		return -ENOENT;
	for (size_t i = 0; i < portmap.pl.n; i++) {
		const char *n = portmap.pl.ports[i].name;
		if (strlen(n) == len && memcmp(n, name, len) == 0) {
			*port = portmap.pl.ports[i].port_no;
			return 0;
		}
	}
	return -ENOENT;
}

static const char *
portmap_to_name(void *arg, uint32_t port)
{
	(void)arg;
	return portmap.loaded && portmap.ex == 0 ? port_name_of(&portmap.pl, port) : NULL;
}

/* Names read in every flow, filter and group; printed with --names only (out_names()). */
static const struct sl_port_names in_names = {portmap_to_number, portmap_to_name, NULL};

static const struct sl_port_names *
out_names(void)
{
	return o.names ? &in_names : NULL;
}

static int
got_features(void *arg, const uint8_t *msg, size_t len)
{
	struct sl_ofp_error e;

	return sl_ofp_features_reply_decode(msg, len, arg, &e) < 0 ? -EBADMSG : 0;
}

static int
cmd_show(struct sl_ctl_of *c)
{
	struct port_list pl = {0};
	struct sl_ofp_features f;
	struct sl_ofp_buf b;
	char err[ERR_MAX] = "", buf[256];
	int rc;

	sl_ofp_buf_init(&b);
	sl_ofp_empty_encode(&b, SL_OFPT_FEATURES_REQUEST, sl_ctl_of_next_xid(c));
	rc = sl_ctl_of_request(c, b.data, b.len, got_features, &f, NULL, err, sizeof(err));
	sl_ofp_buf_free(&b);
	if (rc == -EBADMSG && err[0] == '\0')
		snprintf(err, sizeof(err), "malformed features reply");
	if (rc < 0)
		return of_failed("features request", rc, err);
	if ((rc = get_ports(c, &pl, err)) < 0) {
		free(pl.ports);
		return of_failed("port description request", rc, err);
	}

	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_stringf(&jw, "datapath_id", "%016" PRIx64, f.datapath_id);
		sl_ctl_jw_u64(&jw, "n_tables", f.n_tables);
		sl_ctl_jw_u64(&jw, "n_buffers", f.n_buffers);
		jw_bits("capabilities", f.capabilities, cap_names, SL_ARRAY_SIZE(cap_names));
		sl_ctl_jw_array_begin(&jw, "ports");
		for (size_t i = 0; i < pl.n; i++) {
			const struct sl_ofp_port_desc *p = &pl.ports[i];
			sl_ctl_jw_object_begin(&jw, NULL);
			sl_ctl_jw_u64(&jw, "port_no", p->port_no);
			sl_ctl_jw_string(&jw, "name", p->name);
			fmt_mac(p->hw_addr, buf, sizeof(buf));
			sl_ctl_jw_string(&jw, "hw_addr", buf);
			jw_bits("config", p->config, config_names, SL_ARRAY_SIZE(config_names));
			jw_bits("state", p->state, state_names, SL_ARRAY_SIZE(state_names));
			jw_bits("curr", p->curr, feature_names, SL_ARRAY_SIZE(feature_names));
			sl_ctl_jw_u64(&jw, "curr_speed_kbps", p->curr_speed);
			sl_ctl_jw_u64(&jw, "max_speed_kbps", p->max_speed);
			sl_ctl_jw_object_end(&jw);
		}
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_object_end(&jw);
	} else {
		static const char *const heads[] = {"port",  "name",   "mac",
		                                    "state", "config", "speed"};
		struct sl_ctl_table *t;

		printf("datapath_id: %016" PRIx64 "\n", f.datapath_id);
		printf("n_tables: %u, n_buffers: %" PRIu32 "\n", f.n_tables, f.n_buffers);
		fmt_bits(f.capabilities, cap_names, SL_ARRAY_SIZE(cap_names), " ", buf,
		         sizeof(buf));
		printf("capabilities: %s\n", buf);
		if (sl_ctl_table_create(heads, 6, "rlllll", &t) == 0) {
			for (size_t i = 0; i < pl.n; i++) {
				const struct sl_ofp_port_desc *p = &pl.ports[i];
				if (p->port_no == SL_PORT_LOCAL)
					sl_ctl_table_add(t, "LOCAL");
				else
					sl_ctl_table_addf(t, "%" PRIu32, p->port_no);
				sl_ctl_sanitize(buf, sizeof(buf), p->name, strnlen(p->name, sizeof(p->name)));
				sl_ctl_table_add(t, buf);
				fmt_mac(p->hw_addr, buf, sizeof(buf));
				sl_ctl_table_add(t, buf);
				fmt_bits(p->state, state_names, SL_ARRAY_SIZE(state_names), ",",
				         buf, sizeof(buf));
				sl_ctl_table_add(t, buf);
				fmt_bits(p->config, config_names, SL_ARRAY_SIZE(config_names), ",",
				         buf, sizeof(buf));
				sl_ctl_table_add(t, buf);
				fmt_speed(p->curr_speed, buf, sizeof(buf));
				sl_ctl_table_add(t, buf);
			}
			sl_ctl_table_print(t, stdout, 0);
			sl_ctl_table_destroy(t);
		}
	}
	free(pl.ports);
	return 0;
}

/*
 * dump-flows
 */

/* dump-flows --sort/--rsort: the lines, printed once the reply is complete. */
struct flow_lines {
	struct flow_line {
		uint16_t priority;
		size_t seq; /* reply order: equal priorities keep it */
		char *text;
	} *v;
	size_t n, cap;
};

static int
flow_line_keep(struct flow_lines *fl, uint16_t priority, const char *text)
{
	struct flow_line *nv = grow_array(fl->v, fl->n, &fl->cap, sizeof(*fl->v), 256);

	if (nv == NULL)
		return -1;
	fl->v = nv;
	if ((fl->v[fl->n].text = strdup(text)) == NULL)
		return -1;
	fl->v[fl->n].priority = priority;
	fl->v[fl->n].seq = fl->n;
	fl->n++;
	return 0;
}

static int
flow_line_cmp(const void *a, const void *b)
{
	const struct flow_line *x = a, *y = b;
	int d = ((int)x->priority - (int)y->priority) * o.sort;

	return d != 0 ? d : (x->seq > y->seq) - (x->seq < y->seq);
}

static int
flow_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs, struct sl_ofp_error *e)
{
	static struct sl_flow_spec fs; /* large: keep it off the stack */
	struct sl_ofp_flow_stats st;
	char text[4096], head[64], dur[32];
	const char *rest;
	int n;

	if (sl_ofp_flow_stats_entry_decode(body, len, ofs, &fs, &st, e) < 0)
		return -1;
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_u64(&jw, "table", fs.table_id);
		sl_ctl_jw_u64(&jw, "priority", fs.priority);
		sl_ctl_jw_u64(&jw, "cookie", fs.cookie);
		sl_ctl_jw_double(&jw, "duration", duration_d(st.duration_sec, st.duration_nsec));
		sl_ctl_jw_u64(&jw, "n_packets", st.packet_count);
		sl_ctl_jw_u64(&jw, "n_bytes", st.byte_count);
		sl_ctl_jw_u64(&jw, "idle_timeout", fs.idle_timeout);
		sl_ctl_jw_u64(&jw, "hard_timeout", fs.hard_timeout);
		jw_bits("flags", fs.flags, flag_names, SL_ARRAY_SIZE(flag_names));
		sl_flow_format_match_names(&fs.match, out_names(), text, sizeof(text));
		sl_ctl_jw_string(&jw, "match", text);
		sl_flow_format_actions_names(&fs.insns, out_names(), text, sizeof(text));
		sl_ctl_jw_string(&jw, "actions", text);
		sl_flow_format_names(&fs, out_names(), text, sizeof(text));
		sl_ctl_jw_string(&jw, "flow", text);
		sl_ctl_jw_object_end(&jw);
		return 0;
	}
	/*
	 * sl_flow_format prints "table=N, [timeouts, flags, ]priority=... actions=...";
	 * with the cookie cleared it starts exactly with "table=N, ", which the
	 * counters go in front of, ovs-ofctl style.
	 */
	fs.cookie_mask = 0;
	{
		uint64_t cookie = fs.cookie;
		fs.cookie = 0;
		sl_flow_format_names(&fs, out_names(), text, sizeof(text));
		fs.cookie = cookie;
	}
	n = snprintf(head, sizeof(head), "table=%u, ", fs.table_id);
	rest = strncmp(text, head, (size_t)n) == 0 ? text + n : text;
	fmt_duration(st.duration_sec, st.duration_nsec, dur, sizeof(dur));
	char line[4352];
	if (o.no_stats) /* ovs-ofctl --no-stats: no duration or counters */
		n = fs.cookie != 0 ? snprintf(line, sizeof(line), " cookie=0x%" PRIx64 ", %s", fs.cookie,
		                              text)
		                   : snprintf(line, sizeof(line), " %s", text);
	else
		n = snprintf(line, sizeof(line),
		             " cookie=0x%" PRIx64 ", duration=%s, table=%u, n_packets=%" PRIu64
		             ", n_bytes=%" PRIu64 ", %s",
		             fs.cookie, dur, fs.table_id, st.packet_count, st.byte_count, rest);
	if (o.sort == 0) {
		printf("%s\n", line);
		return 0;
	}
	return flow_line_keep(m->user, fs.priority, line);
}

/* Parse a FILTER (dump-flows, del-flows); exit code 0 or EXIT_USAGE. */
static int
parse_filter(const char *cmd, const char *text, struct sl_flow_spec *fs, uint32_t *out_port,
             uint32_t *out_group)
{
	struct sl_parse_error pe;
	char buf[ERR_MAX];

	if (sl_flow_parse_filter_names(text, &in_names, fs, out_port, out_group, &pe) < 0) {
		if (portmap.ex) /* the names were needed and could not be read */
			return portmap.ex;
		sl_parse_error_format(&pe, buf, sizeof(buf));
		return usage_error("%s: bad filter: %s", cmd, buf);
	}
	return 0;
}

static int
cmd_dump_flows(struct sl_ctl_of *c, const char *filter_text)
{
	static struct sl_flow_spec fs;
	static struct sl_ofp_mp_request req;
	struct flow_lines lines = {0};
	struct mp_ctx m = {.type = SL_OFPMP_FLOW, .entry = flow_entry, .user = &lines};
	char err[ERR_MAX] = "";
	int rc;

	/* Already validated by the caller before connecting. */
	parse_filter("dump-flows", filter_text, &fs, &req.flow.out_port, &req.flow.out_group);
	req.type = SL_OFPMP_FLOW;
	req.flow.table_id = fs.table_id;
	req.flow.cookie = fs.cookie;
	req.flow.cookie_mask = fs.cookie_mask;
	req.flow.match = fs.match;
	m.err = err;
	if (o.names && (rc = portmap_load(c)) != 0)
		return rc;
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_array_begin(&jw, "flows");
	}
	rc = of_multipart(c, &req, mp_reply, &m, NULL, err, sizeof(err));
	if (o.json) {
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_object_end(&jw);
	}
	if (lines.n > 0) {
		qsort(lines.v, lines.n, sizeof(lines.v[0]), flow_line_cmp);
		for (size_t i = 0; i < lines.n; i++) {
			if (rc >= 0)
				printf("%s\n", lines.v[i].text);
			free(lines.v[i].text);
		}
	}
	free(lines.v);
	return rc < 0 ? of_failed("flow stats request", rc, err) : 0;
}

/*
 * dump-tables
 */

struct table_row {
	struct sl_ofp_table_stats st;
	char name[32];
};

struct table_list {
	struct table_row rows[SL_OFPTT_ALL + 1];
	bool seen[SL_OFPTT_ALL + 1];
};

static int
table_stats_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
                  struct sl_ofp_error *e)
{
	struct table_list *tl = m->user;
	struct sl_ofp_table_stats ts;

	if (sl_ofp_table_stats_entry_decode(body, len, ofs, &ts, e) < 0)
		return -1;
	tl->rows[ts.table_id].st = ts;
	tl->seen[ts.table_id] = true;
	return 0;
}

static int
table_features_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
                     struct sl_ofp_error *e)
{
	static struct sl_ofp_table_features tf;
	struct table_list *tl = m->user;

	if (sl_ofp_table_features_entry_decode(body, len, ofs, &tf, e) < 0)
		return -1;
	snprintf(tl->rows[tf.table_id].name, sizeof(tl->rows[0].name), "%s", tf.name);
	return 0;
}

static int
cmd_dump_tables(struct sl_ctl_of *c)
{
	static struct table_list tl;
	struct mp_ctx m = {.type = SL_OFPMP_TABLE, .entry = table_stats_entry, .user = &tl};
	char err[ERR_MAX] = "";
	struct sl_ctl_table *t = NULL;
	int rc;

	m.err = err;
	rc = of_multipart(c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_TABLE}, mp_reply, &m,
	                  NULL, err, sizeof(err));
	if (rc < 0)
		return of_failed("table stats request", rc, err);
	/* Names come from table features (about 200 KB for 254 tables); optional. */
	m.type = SL_OFPMP_TABLE_FEATURES;
	m.entry = table_features_entry;
	rc = of_multipart(c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_TABLE_FEATURES}, mp_reply,
	                  &m, NULL, err, sizeof(err));
	if (rc == -ETIMEDOUT || rc == -ECONNRESET)
		return of_failed("table features request", rc, err);

	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_array_begin(&jw, "tables");
	} else {
		static const char *const heads[] = {"table", "name", "active", "lookups",
		                                    "matched"};
		sl_ctl_table_create(heads, 5, "rlrrr", &t);
	}
	for (unsigned id = 0; id <= SL_OFPTT_ALL; id++) {
		const struct table_row *r = &tl.rows[id];
		if (!tl.seen[id] || (!o.all && r->st.active_count == 0 && r->st.lookup_count == 0))
			continue;
		if (o.json) {
			sl_ctl_jw_object_begin(&jw, NULL);
			sl_ctl_jw_u64(&jw, "table_id", id);
			if (r->name[0])
				sl_ctl_jw_string(&jw, "name", r->name);
			sl_ctl_jw_u64(&jw, "active_count", r->st.active_count);
			sl_ctl_jw_u64(&jw, "lookup_count", r->st.lookup_count);
			sl_ctl_jw_u64(&jw, "matched_count", r->st.matched_count);
			sl_ctl_jw_object_end(&jw);
		} else if (t) {
			sl_ctl_table_addf(t, "%u", id);
			sl_ctl_table_add(t, r->name[0] ? r->name : "-");
			sl_ctl_table_addf(t, "%" PRIu32, r->st.active_count);
			sl_ctl_table_addf(t, "%" PRIu64, r->st.lookup_count);
			sl_ctl_table_addf(t, "%" PRIu64, r->st.matched_count);
		}
	}
	if (o.json) {
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_object_end(&jw);
	} else if (t) {
		if (sl_ctl_table_rows(t))
			sl_ctl_table_print(t, stdout, 0);
		else
			printf("no table has flows or lookups (--all lists every table)\n");
		sl_ctl_table_destroy(t);
	}
	return 0;
}

/*
 * dump-ports
 */

struct port_stats_ctx {
	const struct port_list *names;
	unsigned n;
};

static void
print_counter(const char *key, uint64_t v, bool last)
{
	if (v == UINT64_MAX)
		printf("%s=?%s", key, last ? "" : ", ");
	else
		printf("%s=%" PRIu64 "%s", key, v, last ? "" : ", ");
}

static void
jw_counter(const char *key, uint64_t v)
{
	if (v == UINT64_MAX)
		sl_ctl_jw_null(&jw, key); /* the switch does not count it */
	else
		sl_ctl_jw_u64(&jw, key, v);
}

static int
port_stats_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
                 struct sl_ofp_error *e)
{
	struct port_stats_ctx *pc = m->user;
	struct sl_ofp_port_stats ps;
	const char *name;
	char dur[32], clean[32];

	if (sl_ofp_port_stats_entry_decode(body, len, ofs, &ps, e) < 0)
		return -1;
	pc->n++;
	name = port_name_of(pc->names, ps.port_no);
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_u64(&jw, "port_no", ps.port_no);
		if (name)
			sl_ctl_jw_string(&jw, "name", name);
		jw_counter("rx_packets", ps.rx_packets);
		jw_counter("tx_packets", ps.tx_packets);
		jw_counter("rx_bytes", ps.rx_bytes);
		jw_counter("tx_bytes", ps.tx_bytes);
		jw_counter("rx_dropped", ps.rx_dropped);
		jw_counter("tx_dropped", ps.tx_dropped);
		jw_counter("rx_errors", ps.rx_errors);
		jw_counter("tx_errors", ps.tx_errors);
		jw_counter("rx_frame_err", ps.rx_frame_err);
		jw_counter("rx_over_err", ps.rx_over_err);
		jw_counter("rx_crc_err", ps.rx_crc_err);
		jw_counter("collisions", ps.collisions);
		sl_ctl_jw_double(&jw, "duration", duration_d(ps.duration_sec, ps.duration_nsec));
		sl_ctl_jw_object_end(&jw);
		return 0;
	}
	/* ovs-ofctl dump-ports layout, with the port name. */
	char no[16];
	if (ps.port_no == SL_PORT_LOCAL)
		snprintf(no, sizeof(no), "LOCAL");
	else
		snprintf(no, sizeof(no), "%2" PRIu32, ps.port_no);
	if (name) {
		sl_ctl_sanitize(clean, sizeof(clean), name, strlen(name));
		printf("  port %s (%s): rx ", no, clean);
	} else {
		printf("  port %s: rx ", no);
	}
	print_counter("pkts", ps.rx_packets, false);
	print_counter("bytes", ps.rx_bytes, false);
	print_counter("drop", ps.rx_dropped, false);
	print_counter("errs", ps.rx_errors, false);
	print_counter("frame", ps.rx_frame_err, false);
	print_counter("over", ps.rx_over_err, false);
	print_counter("crc", ps.rx_crc_err, true);
	printf("\n           tx ");
	print_counter("pkts", ps.tx_packets, false);
	print_counter("bytes", ps.tx_bytes, false);
	print_counter("drop", ps.tx_dropped, false);
	print_counter("errs", ps.tx_errors, false);
	print_counter("coll", ps.collisions, true);
	fmt_duration(ps.duration_sec, ps.duration_nsec, dur, sizeof(dur));
	printf("\n           duration=%s\n", dur);
	return 0;
}

static int
cmd_dump_ports(struct sl_ctl_of *c, const char *port_arg)
{
	struct port_list pl = {0};
	struct port_stats_ctx pc = {.names = &pl};
	struct mp_ctx m = {.type = SL_OFPMP_PORT_STATS, .entry = port_stats_entry, .user = &pc};
	struct sl_ofp_mp_request req = {.type = SL_OFPMP_PORT_STATS, .port_no = SL_PORT_ANY};
	char err[ERR_MAX] = "";
	uint64_t v;
	int rc;

	m.err = err;
	/* Names from the port descriptions; a switch without them still gets counters. */
	rc = get_ports(c, &pl, err);
	if (rc == -ETIMEDOUT || rc == -ECONNRESET) {
		free(pl.ports);
		return of_failed("port description request", rc, err);
	}
	if (port_arg) {
		if (parse_u64(port_arg, 1, SL_PORT_MAX_PHYS, &v)) {
			req.port_no = (uint32_t)v;
		} else if (strcmp(port_arg, "LOCAL") == 0) {
			req.port_no = SL_PORT_LOCAL;
		} else {
			size_t i;
			for (i = 0; i < pl.n; i++)
				if (strcmp(pl.ports[i].name, port_arg) == 0)
					break;
			if (i == pl.n) {
				free(pl.ports);
				return usage_error("dump-ports: no port '%s' (expected a port "
				                   "number or the name of a port)",
				                   port_arg);
			}
			req.port_no = pl.ports[i].port_no;
		}
	}
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_array_begin(&jw, "ports");
	}
	rc = of_multipart(c, &req, mp_reply, &m, NULL, err, sizeof(err));
	if (o.json) {
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_object_end(&jw);
	}
	free(pl.ports);
	return rc < 0 ? of_failed("port stats request", rc, err) : 0;
}

/*
 * dump-groups
 */

struct group_row {
	struct sl_group_spec desc;
	struct sl_ofp_group_stats st;
	bool have_stats;
};

struct group_list {
	struct group_row *rows;
	size_t n, cap;
};

static const char *const group_type_names[] = {"all", "select", "indirect", "ff"};

static int
group_desc_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
                 struct sl_ofp_error *e)
{
	struct group_list *gl = m->user;

	void *nr = mp_grow(m, gl->rows, gl->n, &gl->cap, sizeof(*gl->rows));

	if (nr == NULL)
		return -ENOMEM;
	gl->rows = nr;
	if (sl_ofp_group_desc_entry_decode(body, len, ofs, &gl->rows[gl->n].desc, e) < 0)
		return -1;
	gl->n++;
	return 0;
}

static int
group_stats_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
                  struct sl_ofp_error *e)
{
	static struct sl_ofp_group_stats gs;
	struct group_list *gl = m->user;

	if (sl_ofp_group_stats_entry_decode(body, len, ofs, &gs, e) < 0)
		return -1;
	for (size_t i = 0; i < gl->n; i++) {
		if (gl->rows[i].desc.group_id == gs.group_id) {
			gl->rows[i].st = gs;
			gl->rows[i].have_stats = true;
		}
	}
	return 0;
}

/* A bucket's actions in flow syntax. */
static void
fmt_bucket_actions(const struct sl_bucket_spec *b, const struct sl_port_names *pn, char *buf,
                   size_t size)
{
	static struct sl_instructions in;

	memset(&in, 0, sizeof(in));
	in.goto_table = -1;
	in.has_apply = true;
	in.n_apply = b->n_actions;
	memcpy(in.apply, b->actions, b->n_actions * sizeof(b->actions[0]));
	sl_flow_format_actions_names(&in, pn, buf, size);
}

/* A group in add-groups syntax, as dump-groups prints it and add-group reads it. */
static void
print_group_line(FILE *f, const struct sl_group_spec *g, const struct sl_port_names *pn)
{
	static char acts[2048];
	char port[80];
	const char *type = g->type < 4 ? group_type_names[g->type] : "?";

	fprintf(f, "group_id=%" PRIu32 ",type=%s", g->group_id, type);
	for (unsigned k = 0; k < g->n_buckets; k++) {
		const struct sl_bucket_spec *b = &g->buckets[k];
		fprintf(f, ",bucket=");
		if (g->type == SL_GROUP_SELECT)
			fprintf(f, "weight:%u,", b->weight);
		if (b->watch_port != SL_PORT_ANY) {
			sl_port_format(b->watch_port, pn, port, sizeof(port));
			fprintf(f, "watch_port:%s,", port);
		}
		if (b->watch_group != SL_GROUP_ID_ANY)
			fprintf(f, "watch_group:%" PRIu32 ",", b->watch_group);
		fmt_bucket_actions(b, pn, acts, sizeof(acts));
		fprintf(f, "actions=%s", acts);
	}
	fputc('\n', f);
}

static int
group_row_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct group_row *)a)->desc.group_id;
	uint32_t y = ((const struct group_row *)b)->desc.group_id;

	return x < y ? -1 : x > y;
}

/* Is group @id, when in @gl (sorted by id), written already? */
static bool
group_written(const struct group_list *gl, const bool *written, uint32_t id)
{
	struct group_row key = {.desc.group_id = id};
	const struct group_row *r = bsearch(&key, gl->rows, gl->n, sizeof(*gl->rows), group_row_cmp);

	return r == NULL || written[r - gl->rows];
}

/* Are the groups @g chains to (group actions) or watches written already? */
static bool
group_ready(const struct group_list *gl, const bool *written, const struct sl_group_spec *g)
{
	for (unsigned b = 0; b < g->n_buckets; b++) {
		const struct sl_bucket_spec *bs = &g->buckets[b];
		if (bs->watch_group != SL_GROUP_ID_ANY && !group_written(gl, written, bs->watch_group))
			return false;
		for (unsigned k = 0; k < bs->n_actions; k++)
			if (bs->actions[k].type == SL_ACT_GROUP &&
			    !group_written(gl, written, bs->actions[k].group_id))
				return false;
	}
	return true;
}

/*
 * The groups of @gl as add-groups lines, each after the groups it chains to
 * or watches: a restore adds them in file order, and an ADD naming a group
 * not there yet is refused.  Chains are at most 8 deep, so at most 8 passes.
 */
static void
groups_save(FILE *f, struct group_list *gl)
{
	bool *written = calloc(gl->n ? gl->n : 1, sizeof(*written));
	size_t left = gl->n, before;

	qsort(gl->rows, gl->n, sizeof(*gl->rows), group_row_cmp);
	do {
		before = left;
		for (size_t i = 0; i < gl->n; i++) {
			if (written != NULL && (written[i] || !group_ready(gl, written, &gl->rows[i].desc)))
				continue;
			print_group_line(f, &gl->rows[i].desc, NULL);
			if (written != NULL)
				written[i] = true;
			left--;
		}
	} while (left > 0 && left < before);
	/* Out of memory, or a loop no switch accepts: the rest in id order. */
	for (size_t i = 0; written != NULL && left > 0 && i < gl->n; i++)
		if (!written[i])
			print_group_line(f, &gl->rows[i].desc, NULL);
	free(written);
}

static int
cmd_dump_groups(struct sl_ctl_of *c)
{
	struct group_list gl = {0};
	struct mp_ctx m = {.type = SL_OFPMP_GROUP_DESC, .entry = group_desc_entry, .user = &gl};
	char err[ERR_MAX] = "", acts[2048], dur[32];
	int rc;

	m.err = err;
	if (o.names && (rc = portmap_load(c)) != 0)
		return rc;
	rc = of_multipart(c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_GROUP_DESC}, mp_reply, &m,
	                  NULL, err, sizeof(err));
	if (rc < 0) {
		free(gl.rows);
		return of_failed("group description request", rc, err);
	}
	m.type = SL_OFPMP_GROUP;
	m.entry = group_stats_entry;
	rc = of_multipart(
	    c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_GROUP, .group_id = SL_GROUP_ID_ALL},
	    mp_reply, &m, NULL, err, sizeof(err));
	if (rc < 0) {
		free(gl.rows);
		return of_failed("group stats request", rc, err);
	}

	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_array_begin(&jw, "groups");
	}
	for (size_t i = 0; i < gl.n; i++) {
		const struct group_row *g = &gl.rows[i];
		const char *type = g->desc.type < 4 ? group_type_names[g->desc.type] : "?";

		if (o.json) {
			sl_ctl_jw_object_begin(&jw, NULL);
			sl_ctl_jw_u64(&jw, "group_id", g->desc.group_id);
			sl_ctl_jw_string(&jw, "type", type);
			if (g->have_stats) {
				sl_ctl_jw_u64(&jw, "ref_count", g->st.ref_count);
				sl_ctl_jw_u64(&jw, "n_packets", g->st.packet_count);
				sl_ctl_jw_u64(&jw, "n_bytes", g->st.byte_count);
				sl_ctl_jw_double(
				    &jw, "duration",
				    duration_d(g->st.duration_sec, g->st.duration_nsec));
			}
			sl_ctl_jw_array_begin(&jw, "buckets");
			for (unsigned k = 0; k < g->desc.n_buckets; k++) {
				const struct sl_bucket_spec *b = &g->desc.buckets[k];
				sl_ctl_jw_object_begin(&jw, NULL);
				if (g->desc.type == SL_GROUP_SELECT)
					sl_ctl_jw_u64(&jw, "weight", b->weight);
				if (b->watch_port != SL_PORT_ANY)
					sl_ctl_jw_u64(&jw, "watch_port", b->watch_port);
				if (b->watch_group != SL_GROUP_ID_ANY)
					sl_ctl_jw_u64(&jw, "watch_group", b->watch_group);
				fmt_bucket_actions(b, out_names(), acts, sizeof(acts));
				sl_ctl_jw_string(&jw, "actions", acts);
				if (g->have_stats && k < g->st.n_buckets) {
					sl_ctl_jw_u64(&jw, "n_packets",
					              g->st.buckets[k].packet_count);
					sl_ctl_jw_u64(&jw, "n_bytes", g->st.buckets[k].byte_count);
				}
				sl_ctl_jw_object_end(&jw);
			}
			sl_ctl_jw_array_end(&jw);
			sl_ctl_jw_object_end(&jw);
			continue;
		}
		/* ovs-ofctl dump-groups line, then the counters (dump-group-stats). */
		putchar(' ');
		print_group_line(stdout, &g->desc, out_names());
		if (g->have_stats) {
			fmt_duration(g->st.duration_sec, g->st.duration_nsec, dur, sizeof(dur));
			printf("   duration=%s, ref_count=%" PRIu32 ", n_packets=%" PRIu64
			       ", n_bytes=%" PRIu64,
			       dur, g->st.ref_count, g->st.packet_count, g->st.byte_count);
			for (unsigned k = 0; k < g->st.n_buckets; k++)
				printf(", bucket%u: n_packets=%" PRIu64 " n_bytes=%" PRIu64, k,
				       g->st.buckets[k].packet_count, g->st.buckets[k].byte_count);
			printf("\n");
		}
	}
	if (o.json) {
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_object_end(&jw);
	} else if (gl.n == 0) {
		printf("no groups\n");
	}
	free(gl.rows);
	return 0;
}

/*
 * dump-meters, meter-features
 */

struct meter_row {
	struct sl_meter_spec spec;
	struct sl_meter_stats st;
	uint32_t dur_sec, dur_nsec;
	bool have_stats;
};

struct meter_list {
	struct meter_row *rows;
	size_t n, cap;
};

static int
meter_config_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
                   struct sl_ofp_error *e)
{
	struct meter_list *ml = m->user;

	void *nr = mp_grow(m, ml->rows, ml->n, &ml->cap, sizeof(*ml->rows));

	if (nr == NULL)
		return -ENOMEM;
	ml->rows = nr;
	if (sl_ofp_meter_config_entry_decode(body, len, ofs, &ml->rows[ml->n].spec, e) < 0)
		return -1;
	ml->n++;
	return 0;
}

static int
meter_stats_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
                  struct sl_ofp_error *e)
{
	struct meter_list *ml = m->user;
	struct sl_meter_stats st;
	uint32_t id, sec, nsec;

	if (sl_ofp_meter_stats_entry_decode(body, len, ofs, &id, &sec, &nsec, &st, e) < 0)
		return -1;
	for (size_t i = 0; i < ml->n; i++) {
		if (ml->rows[i].spec.meter_id == id) {
			ml->rows[i].st = st;
			ml->rows[i].dur_sec = sec;
			ml->rows[i].dur_nsec = nsec;
			ml->rows[i].have_stats = true;
		}
	}
	return 0;
}

static int
cmd_dump_meters(struct sl_ctl_of *c)
{
	struct meter_list ml = {0};
	struct mp_ctx m = {.type = SL_OFPMP_METER_CONFIG, .entry = meter_config_entry, .user = &ml};
	char err[ERR_MAX] = "", text[1024], dur[32];
	int rc;

	m.err = err;
	rc = of_multipart(
	    c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_METER_CONFIG, .meter_id = SL_METER_ID_ALL},
	    mp_reply, &m, NULL, err, sizeof(err));
	if (rc == 0) {
		m.type = SL_OFPMP_METER;
		m.entry = meter_stats_entry;
		rc = of_multipart(
		    c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_METER, .meter_id = SL_METER_ID_ALL},
		    mp_reply, &m, NULL, err, sizeof(err));
	}
	if (rc < 0) {
		free(ml.rows);
		return of_failed("meter request", rc, err);
	}
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_array_begin(&jw, "meters");
	}
	for (size_t i = 0; i < ml.n; i++) {
		const struct meter_row *r = &ml.rows[i];

		sl_meter_format(&r->spec, text, sizeof(text));
		if (o.json) {
			sl_ctl_jw_object_begin(&jw, NULL);
			sl_ctl_jw_u64(&jw, "meter_id", r->spec.meter_id);
			sl_ctl_jw_string(&jw, "meter", text);
			if (r->have_stats) {
				sl_ctl_jw_u64(&jw, "flow_count", r->st.flow_count);
				sl_ctl_jw_u64(&jw, "n_packets", r->st.packets);
				sl_ctl_jw_u64(&jw, "n_bytes", r->st.bytes);
				sl_ctl_jw_double(&jw, "duration", duration_d(r->dur_sec, r->dur_nsec));
				sl_ctl_jw_array_begin(&jw, "bands");
				for (unsigned k = 0; k < r->st.n_bands; k++) {
					sl_ctl_jw_object_begin(&jw, NULL);
					sl_ctl_jw_u64(&jw, "n_packets", r->st.band_packets[k]);
					sl_ctl_jw_u64(&jw, "n_bytes", r->st.band_bytes[k]);
					sl_ctl_jw_object_end(&jw);
				}
				sl_ctl_jw_array_end(&jw);
			}
			sl_ctl_jw_object_end(&jw);
			continue;
		}
		/* The add-meter syntax, then the counters (ovs-ofctl meter-stats). */
		printf(" %s\n", text);
		if (r->have_stats) {
			fmt_duration(r->dur_sec, r->dur_nsec, dur, sizeof(dur));
			printf("   duration=%s, flow_count=%" PRIu32 ", n_packets=%" PRIu64
			       ", n_bytes=%" PRIu64,
			       dur, r->st.flow_count, r->st.packets, r->st.bytes);
			for (unsigned k = 0; k < r->st.n_bands; k++)
				printf(", band%u: n_packets=%" PRIu64 " n_bytes=%" PRIu64, k,
				       r->st.band_packets[k], r->st.band_bytes[k]);
			printf("\n");
		}
	}
	if (o.json) {
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_object_end(&jw);
	} else if (ml.n == 0) {
		printf("no meters\n");
	}
	free(ml.rows);
	return 0;
}

static int
meter_features_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
                     struct sl_ofp_error *e)
{
	if (sl_ofp_meter_features_decode(body + *ofs, len - *ofs, m->user, e) < 0)
		return -1;
	*ofs = len;
	return 0;
}

static int
cmd_meter_features(struct sl_ctl_of *c)
{
	struct sl_ofp_meter_features mf = {0};
	struct mp_ctx m = {.type = SL_OFPMP_METER_FEATURES, .entry = meter_features_entry,
	                   .user = &mf};
	char err[ERR_MAX] = "";
	int rc;

	m.err = err;
	rc = of_multipart(c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_METER_FEATURES},
	                  mp_reply, &m, NULL, err, sizeof(err));
	if (rc < 0)
		return of_failed("meter features request", rc, err);
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_u64(&jw, "max_meter", mf.max_meter);
		sl_ctl_jw_u64(&jw, "band_types", mf.band_types);
		sl_ctl_jw_u64(&jw, "capabilities", mf.capabilities);
		sl_ctl_jw_u64(&jw, "max_bands", mf.max_bands);
		sl_ctl_jw_u64(&jw, "max_color", mf.max_color);
		sl_ctl_jw_object_end(&jw);
		return 0;
	}
	printf("max_meter=%" PRIu32 " max_bands=%u max_color=%u\nband_types:%s%s\n"
	       "capabilities:%s%s%s%s\n",
	       mf.max_meter, mf.max_bands, mf.max_color,
	       mf.band_types & (1u << SL_BAND_DROP) ? " drop" : "",
	       mf.band_types & (1u << SL_BAND_DSCP_REMARK) ? " dscp_remark" : "",
	       mf.capabilities & SL_METER_KBPS ? " kbps" : "",
	       mf.capabilities & SL_METER_PKTPS ? " pktps" : "",
	       mf.capabilities & SL_METER_BURST ? " burst" : "",
	       mf.capabilities & SL_METER_STATS ? " stats" : "");
	return 0;
}

/*
 * add-flow, add-flows, mod-flows, del-flows: flow_mods sent as one batch
 * closed by a barrier; every OFPT_ERROR is matched to its message by xid.
 */

struct origin {
	char what[160]; /* "FILE:LINE" or "flow" */
};

struct batch {
	struct sl_ofp_buf msgs;
	struct origin *origins; /* one per message, in order */
	size_t n, cap;
	uint32_t first_xid;       /* after assign_xids */
	const char *display_file; /* shown instead of the path (stdin) */
	const char *label;        /* origin of messages not from a file: the command */
	unsigned n_refused;
	unsigned declared_at[SL_TABLES_MAX]; /* add-flows: line declaring each table, 0: none */
	struct sl_queue_spec *queues;        /* add-flows: queue lines, set over telemetry after */
	size_t n_queues, cap_queues;
};

static int
batch_add_origin(struct batch *b, const char *file, unsigned line)
{
	void *no = grow_array(b->origins, b->n, &b->cap, sizeof(*b->origins), 64);

	if (no == NULL)
		return -ENOMEM;
	b->origins = no;
	if (file)
		snprintf(b->origins[b->n].what, sizeof(b->origins[0].what), "%s:%u",
		         b->display_file ? b->display_file : file, line);
	else
		snprintf(b->origins[b->n].what, sizeof(b->origins[0].what), "%s",
		         b->label ? b->label : "request");
	b->n++;
	return 0;
}

static void
flow_mod_init(struct sl_ofp_flow_mod *fm, uint8_t command)
{
	memset(fm, 0, offsetof(struct sl_ofp_flow_mod, spec));
	fm->command = command;
	fm->buffer_id = SL_OFP_NO_BUFFER;
	fm->out_port = SL_PORT_ANY;
	fm->out_group = SL_GROUP_ID_ANY;
}

/*
 * The low_latency keyword is no flow_mod flag: the flow_mod goes without it and an
 * SL_OFPX_LL_SET selecting the same flows (strict for add-flow) follows in the batch.
 */
static int
ll_set_append_cmd(struct batch *b, uint8_t command, const struct sl_flow_spec *fs, bool strict,
                  const char *file, unsigned line)
{
	static struct sl_ofp_ll_set ls;
	int rc;

	memset(&ls, 0, sizeof(ls));
	ls.table_id = fs->table_id;
	ls.command = command;
	ls.flags = strict ? SL_OFPX_LL_STRICT : 0;
	ls.priority = fs->priority;
	ls.cookie = fs->cookie;
	ls.cookie_mask = fs->cookie_mask;
	ls.match = fs->match;
	rc = sl_ofp_ll_set_encode(&b->msgs, 0, &ls);
	return rc == 0 ? batch_add_origin(b, file, line) : rc;
}

static int
ll_set_append(struct batch *b, const struct sl_flow_spec *fs, bool strict, const char *file,
              unsigned line)
{
	return ll_set_append_cmd(b, SL_OFPX_LL_SET_ON, fs, strict, file, line);
}

/* Loader callbacks: encode each item with xid 0 (assigned once connected). */
static int
on_table_decl(void *arg, const struct sl_table_spec *ts, struct sl_parse_error *err)
{
	struct batch *b = arg;

	if (ts->table_id < SL_TABLES_MAX && b->declared_at[ts->table_id] != 0) {
		snprintf(err->msg, sizeof(err->msg), "table %u is already declared (line %u)",
		         ts->table_id, b->declared_at[ts->table_id]);
		return -EEXIST;
	}
	if (ts->table_id < SL_TABLES_MAX)
		b->declared_at[ts->table_id] = err->line;
	int rc = ts->kind == SL_TABLE_STATE ? sl_ofp_state_table_encode(&b->msgs, 0, ts) /* #9 */
	                                    : sl_ofp_table_declare_encode(&b->msgs, 0, ts);

	if (rc == -EINVAL) {
		snprintf(err->msg, sizeof(err->msg),
		         "this table declaration cannot be sent over OpenFlow");
		return rc;
	}
	if (rc == 0)
		rc = batch_add_origin(b, err->file, err->line);
	return rc;
}

/* A group line: a group_mod ADD in the batch. */
static int
on_group(void *arg, const struct sl_group_spec *gs, struct sl_parse_error *err)
{
	static struct sl_ofp_group_mod gm;
	struct batch *b = arg;
	int rc;

	gm.command = SL_OFPGC_ADD;
	gm.spec = *gs;
	rc = sl_ofp_group_mod_encode(&b->msgs, 0, &gm);
	if (rc == -EMSGSIZE) {
		snprintf(err->msg, sizeof(err->msg), "group too large for one OpenFlow message");
		return rc;
	}
	if (rc == 0)
		rc = batch_add_origin(b, err->file, err->line);
	return rc;
}

/* A meter line: a meter_mod ADD in the batch. */
static int
on_meter(void *arg, const struct sl_meter_spec *ms, struct sl_parse_error *err)
{
	struct sl_ofp_meter_mod mm = {.command = SL_OFPMC_ADD, .spec = *ms};
	struct batch *b = arg;
	int rc;

	rc = sl_ofp_meter_mod_encode(&b->msgs, 0, &mm);
	if (rc == 0)
		rc = batch_add_origin(b, err->file, err->line);
	return rc;
}

/* A state line: an SL_OFPX_STATE_SET in the batch. */
static int
on_state(void *arg, uint8_t table_id, const struct sl_match *key, const struct sl_state_set *set,
         struct sl_parse_error *err)
{
	static struct sl_ofp_state_mod m;
	struct batch *b = arg;
	int rc;

	memset(&m, 0, sizeof(m));
	m.table_id = table_id;
	m.key = *key;
	m.set = *set;
	rc = sl_ofp_state_mod_encode(&b->msgs, 0, SL_OFPX_STATE_SET, &m);
	if (rc == 0)
		rc = batch_add_origin(b, err->file, err->line);
	return rc;
}

/* A "fwd-mode=MODES" line: an SL_OFPX_SET_FWD_MODE message in the batch. */
static int
on_directive(void *arg, const char *name, const char *value, struct sl_parse_error *err)
{
	struct batch *b = arg;
	struct sl_fwd_params fp;
	int rc;

	if (strcmp(name, "fwd-mode") != 0 ||
	    sl_fwd_params_parse(value, &fp, err->msg, sizeof(err->msg)) < 0)
		return -EINVAL;
	rc = sl_ofp_fwd_mode_encode(&b->msgs, 0, SL_OFPX_SET_FWD_MODE, &fp);
	if (rc == 0)
		rc = batch_add_origin(b, err->file, err->line);
	return rc;
}

static int
on_flow(void *arg, const struct sl_flow_spec *fs, struct sl_parse_error *err)
{
	static struct sl_ofp_flow_mod fm;
	struct batch *b = arg;
	int rc;

	flow_mod_init(&fm, SL_OFPFC_ADD);
	fm.spec = *fs;
	/* low_latency is no flow_mod flag: an SL_OFPX_LL_SET follows in the same batch. */
	fm.spec.flags &= (uint16_t)~SL_FF_LOW_LATENCY;
	rc = sl_ofp_flow_mod_encode(&b->msgs, 0, &fm);
	if (rc == -EMSGSIZE) {
		snprintf(err->msg, sizeof(err->msg), "flow too large for one OpenFlow message");
		return rc;
	}
	if (rc == 0)
		rc = batch_add_origin(b, err->file, err->line);
	if (rc == 0 && (fs->flags & SL_FF_LOW_LATENCY))
		rc = ll_set_append(b, fs, true, err->file, err->line);
	return rc;
}

/* Give the batch's messages consecutive xids of connection @c. */
static void
assign_xids(struct batch *b, struct sl_ctl_of *c)
{
	size_t ofs = 0;

	for (size_t i = 0; i < b->n; i++) {
		uint8_t *m = b->msgs.data + ofs;
		uint32_t xid = sl_ctl_of_next_xid(c);

		if (i == 0)
			b->first_xid = xid;
		m[4] = (uint8_t)(xid >> 24);
		m[5] = (uint8_t)(xid >> 16);
		m[6] = (uint8_t)(xid >> 8);
		m[7] = (uint8_t)xid;
		ofs += (size_t)m[2] << 8 | m[3];
	}
}

static void
on_refused(void *arg, uint32_t xid, const struct sl_ofp_error *e, const uint8_t *data,
           size_t data_len)
{
	struct batch *b = arg;
	size_t idx = (size_t)(xid - b->first_xid);
	char name[128];

	(void)data;
	(void)data_len;
	b->n_refused++;
	sl_ctl_of_error_format(e, name, sizeof(name));
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		if (idx < b->n)
			sl_ctl_jw_string(&jw, "origin", b->origins[idx].what);
		sl_ctl_jw_u64(&jw, "xid", xid);
		sl_ctl_jw_string(&jw, "error", sl_ofp_error_name(e));
		sl_ctl_jw_u64(&jw, "type", e->type);
		sl_ctl_jw_u64(&jw, "code", e->code);
		sl_ctl_jw_object_end(&jw);
	}
	if (idx < b->n)
		errmsg("%s: the switch refused it: %s", b->origins[idx].what, name);
	else
		errmsg("the switch refused a message (xid %" PRIu32 "): %s", xid, name);
}

/*
 * Send the batch and the barrier over @c, report refusals; returns the exit
 * code.  With --json it writes "messages" and "errors" into the open object.
 */
static int
batch_send(struct batch *b, struct sl_ctl_of *c)
{
	char err[ERR_MAX] = "";
	unsigned n_err = 0;
	int rc;

	assign_xids(b, c);
	if (o.json) {
		sl_ctl_jw_u64(&jw, "messages", b->n);
		sl_ctl_jw_array_begin(&jw, "errors");
	}
	rc = sl_ctl_of_batch(c, b->msgs.data, b->msgs.len, on_refused, b, &n_err, err, sizeof(err));
	if (o.json)
		sl_ctl_jw_array_end(&jw);
	if (rc < 0)
		return of_failed("sending flows", rc, err);
	return n_err ? EXIT_REFUSED : 0;
}

/* Connect, send the batch and the barrier, report refusals; returns the exit code. */
static int
run_batch(struct batch *b)
{
	struct sl_ctl_of *c;
	int ex;

	if ((ex = of_connect(&c)) != 0)
		return ex;
	if (o.json)
		sl_ctl_jw_object_begin(&jw, NULL);
	ex = batch_send(b, c);
	if (o.json)
		sl_ctl_jw_object_end(&jw);
	sl_ctl_of_close(c);
	return ex;
}

static void
batch_free(struct batch *b)
{
	sl_ofp_buf_free(&b->msgs);
	free(b->origins);
}

static int
cmd_add_flow(const char *cmd, const char *text, uint8_t command)
{
	static struct sl_ofp_flow_mod fm;
	struct sl_parse_error pe;
	struct batch b = {.label = cmd};
	char buf[ERR_MAX];
	int rc;

	flow_mod_init(&fm, command);
	if (sl_flow_parse_names(text, &in_names, &fm.spec, &pe) < 0) {
		if (portmap.ex)
			return portmap.ex;
		sl_parse_error_format(&pe, buf, sizeof(buf));
		return usage_error("%s: %s", cmd, buf);
	}
	sl_ofp_buf_init(&b.msgs);
	bool ll = fm.spec.flags & SL_FF_LOW_LATENCY;
	fm.spec.flags &= (uint16_t)~SL_FF_LOW_LATENCY;
	rc = sl_ofp_flow_mod_encode(&b.msgs, 0, &fm);
	if (rc == 0)
		rc = batch_add_origin(&b, NULL, 0);
	if (rc == 0 && ll)
		rc = ll_set_append(&b, &fm.spec, command != SL_OFPFC_MODIFY, NULL, 0);
	if (rc < 0) {
		batch_free(&b);
		if (rc == -EMSGSIZE)
			return usage_error("%s: flow too large for one OpenFlow message", cmd);
		errmsg("out of memory");
		return EXIT_REFUSED;
	}
	rc = run_batch(&b);
	batch_free(&b);
	return rc;
}

/* set-fwd-mode MODES: the forwarding modes (src/fwd text form) in one experimenter message. */
static int
cmd_set_fwd_mode(const char *text)
{
	struct sl_fwd_params fp;
	struct batch b = {.label = "set-fwd-mode"};
	char buf[ERR_MAX];
	int rc;

	if (sl_fwd_params_parse(text, &fp, buf, sizeof(buf)) < 0)
		return usage_error("set-fwd-mode: %s", buf);
	sl_ofp_buf_init(&b.msgs);
	rc = sl_ofp_fwd_mode_encode(&b.msgs, 0, SL_OFPX_SET_FWD_MODE, &fp);
	if (rc == 0)
		rc = batch_add_origin(&b, NULL, 0);
	if (rc < 0) {
		batch_free(&b);
		errmsg("set-fwd-mode: cannot encode the message");
		return EXIT_REFUSED;
	}
	rc = run_batch(&b);
	batch_free(&b);
	return rc;
}

static int
fwd_mode_reply(void *arg, const uint8_t *msg, size_t len)
{
	struct sl_fwd_params *fp = arg;
	struct sl_ofp_error e;
	uint32_t t;

	return sl_ofp_fwd_mode_decode(msg, len, &t, fp, &e) == 0 && t == SL_OFPX_FWD_MODE
		       ? 0
		       : -EBADMSG;
}

/* fwd-mode: print the forwarding modes (SL_OFPX_FWD_MODE request). */
static int
cmd_fwd_mode(struct sl_ctl_of *c)
{
	struct sl_fwd_params req = {0}, fp = {0};
	struct sl_ofp_buf b;
	struct sl_ofp_error e;
	char err[ERR_MAX], text[2048];
	int rc;

	sl_ofp_buf_init(&b);
	if (sl_ofp_fwd_mode_encode(&b, sl_ctl_of_next_xid(c), SL_OFPX_FWD_MODE, &req) < 0) {
		sl_ofp_buf_free(&b);
		errmsg("out of memory");
		return EXIT_REFUSED;
	}
	rc = sl_ctl_of_request(c, b.data, b.len, fwd_mode_reply, &fp, &e, err, sizeof(err));
	sl_ofp_buf_free(&b);
	if (rc < 0)
		return of_failed("fwd-mode", rc, err);
	if (sl_fwd_params_format(&fp, text, sizeof(text)) < 0)
		snprintf(text, sizeof(text), "(too long)");
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_string(&jw, "modes", text);
		sl_ctl_jw_object_end(&jw);
	} else {
		printf("%s\n", text);
	}
	return 0;
}

/*
 * save FILE: what the switch holds, as a flow file that `sluice --restore`
 * and `sluicectl add-flows` load: declared tables (read over telemetry),
 * forwarding modes, meters, groups, then flows with their cookies, timeouts
 * and flags (low_latency included), sorted by table and priority, then the
 * state tables' entries as "state" lines.  Written to FILE.tmp and renamed:
 * a failed save leaves FILE as it was.
 */

static int tel_connect(struct sl_ctl_tel **t);
static int tel_get(struct sl_ctl_tel *t, const char *cmd, const char *params,
                   struct sl_ctl_json_doc **doc, const struct sl_ctl_json **v);

/* Flows as flow-file lines, sorted for a stable file. */
static int
save_flow_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
                struct sl_ofp_error *e)
{
	static struct sl_flow_spec fs;
	struct sl_ofp_flow_stats st;
	char text[4096], line[4200];

	if (sl_ofp_flow_stats_entry_decode(body, len, ofs, &fs, &st, e) < 0)
		return -1;
	fs.cookie_mask = 0;
	sl_flow_format(&fs, text, sizeof(text));
	/* Table first, then priority high to low: the key sorts as text. */
	snprintf(line, sizeof(line), "%03u %05u %s", fs.table_id, 65535u - fs.priority, text);
	return flow_line_keep(m->user, 0, line) < 0 ? -ENOMEM : 0;
}

static int
save_line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct flow_line *)a)->text, ((const struct flow_line *)b)->text);
}

/* Declared tables, from telemetry's /sluice/tables and /sluice/table,N; state tables' ids too. */
static int
save_tables(FILE *f, uint8_t *state_ids, unsigned *n_state)
{
	struct sl_ctl_json_doc *doc = NULL, *one = NULL;
	const struct sl_ctl_json *v, *t;
	struct sl_ctl_tel *tel;
	int ex;

	if ((ex = tel_connect(&tel)) != 0)
		return ex;
	if ((ex = tel_get(tel, "/sluice/tables", NULL, &doc, &v)) == 0) {
		for (const struct sl_ctl_json *m = v->child; m != NULL && ex == 0; m = m->next) {
			if ((ex = tel_get(tel, "/sluice/table", m->key, &one, &t)) != 0)
				break;
			const struct sl_ctl_json *spec = sl_ctl_json_get(t, "spec");
			if (sl_ctl_json_get_u64(t, "declared", 0) && spec != NULL &&
			    spec->type == SL_CTL_JSON_STRING) {
				fprintf(f, "%s\n", spec->str);
				if (strstr(spec->str, ",kind=state") != NULL)
					state_ids[(*n_state)++] = (uint8_t)strtoul(m->key, NULL, 10);
			}
			sl_ctl_json_free(one);
			one = NULL;
		}
	}
	sl_ctl_json_free(doc);
	sl_ctl_tel_close(tel);
	return ex;
}

static int save_states(struct sl_ctl_of *c, FILE *f, uint8_t table_id, char *err);

/* Queues, from telemetry's /sluice/queues, as "queue=" lines. */
static int
save_queues(FILE *f)
{
	struct sl_ctl_json_doc *doc = NULL;
	const struct sl_ctl_json *v;
	struct sl_ctl_tel *tel;
	char text[256];
	int ex;

	if ((ex = tel_connect(&tel)) != 0)
		return ex;
	if ((ex = tel_get(tel, "/sluice/queues", NULL, &doc, &v)) == 0) {
		for (const struct sl_ctl_json *q = v->child; q != NULL; q = q->next) {
			struct sl_queue_spec qs = {
				.port_no = (uint32_t)sl_ctl_json_get_u64(q, "port", 0),
				.queue_id = (uint32_t)sl_ctl_json_get_u64(q, "queue", 0),
				.max_rate = sl_ctl_json_get_u64(q, "max_rate_kbps", 0),
				.burst = sl_ctl_json_get_u64(q, "burst_kbit", 0)};
			sl_queue_format(&qs, text, sizeof(text));
			fprintf(f, "%s\n", text);
		}
		sl_ctl_json_free(doc);
	}
	sl_ctl_tel_close(tel);
	return ex;
}

static int
cmd_save(struct sl_ctl_of *c, const char *path)
{
	uint8_t state_ids[SL_TABLES_MAX];
	unsigned n_state = 0;
	static struct sl_ofp_mp_request req;
	struct flow_lines lines = {0};
	struct meter_list ml = {0};
	struct group_list gl = {0};
	struct mp_ctx m = {.err = NULL};
	struct sl_fwd_params none = {0}, fp = {0};
	struct sl_ofp_buf b;
	struct sl_ofp_error e;
	char err[ERR_MAX] = "", tmp[4096], text[2048];
	const char *what = "flow stats request";
	FILE *f;
	int rc, ex;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return usage_error("save: file name too long: '%s'", path);
	if ((f = fopen(tmp, "w")) == NULL) {
		errmsg("save: %s: %s", tmp, strerror(errno));
		return EXIT_REFUSED;
	}
	fprintf(f, "# sluicectl save: load with sluice --restore FILE or sluicectl add-flows FILE\n");
	ex = save_tables(f, state_ids, &n_state);
	if (ex == 0)
		ex = save_queues(f);
	m.err = err;
	/* Forwarding modes: only when not plain OpenFlow. */
	sl_ofp_buf_init(&b);
	rc = ex ? 0 : sl_ofp_fwd_mode_encode(&b, sl_ctl_of_next_xid(c), SL_OFPX_FWD_MODE, &none);
	if (ex == 0 && rc == 0)
		rc = sl_ctl_of_request(c, b.data, b.len, fwd_mode_reply, &fp, &e, err, sizeof(err));
	sl_ofp_buf_free(&b);
	if (ex == 0 && rc == 0 && sl_fwd_params_format(&fp, text, sizeof(text)) >= 0 &&
	    strcmp(text, "openflow") != 0)
		fprintf(f, "fwd-mode=%s\n", text);
	what = "fwd-mode request";
	if (ex == 0 && rc == 0) {
		what = "meter config request";
		m.type = SL_OFPMP_METER_CONFIG;
		m.entry = meter_config_entry;
		m.user = &ml;
		rc = of_multipart(c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_METER_CONFIG,
		                                                 .meter_id = SL_METER_ID_ALL},
		                  mp_reply, &m, NULL, err, sizeof(err));
	}
	for (size_t i = 0; ex == 0 && rc == 0 && i < ml.n; i++) {
		sl_meter_format(&ml.rows[i].spec, text, sizeof(text));
		fprintf(f, "%s\n", text);
	}
	if (ex == 0 && rc == 0) {
		what = "group description request";
		m.type = SL_OFPMP_GROUP_DESC;
		m.entry = group_desc_entry;
		m.user = &gl;
		rc = of_multipart(c, &(struct sl_ofp_mp_request){.type = SL_OFPMP_GROUP_DESC}, mp_reply,
		                  &m, NULL, err, sizeof(err));
	}
	if (ex == 0 && rc == 0)
		groups_save(f, &gl);
	if (ex == 0 && rc == 0) {
		what = "flow stats request";
		memset(&req, 0, sizeof(req));
		req.type = SL_OFPMP_FLOW;
		req.flow.table_id = 0xff;
		req.flow.out_port = SL_PORT_ANY;
		req.flow.out_group = SL_GROUP_ID_ANY;
		m.type = SL_OFPMP_FLOW;
		m.entry = save_flow_entry;
		m.user = &lines;
		rc = of_multipart(c, &req, mp_reply, &m, NULL, err, sizeof(err));
	}
	qsort(lines.v, lines.n, sizeof(lines.v[0]), save_line_cmp);
	for (size_t i = 0; i < lines.n; i++) {
		if (ex == 0 && rc == 0)
			fprintf(f, "%s\n", lines.v[i].text + 10); /* past the sort key */
		free(lines.v[i].text);
	}
	for (unsigned i = 0; ex == 0 && rc == 0 && i < n_state; i++) {
		what = "state dump request";
		rc = save_states(c, f, state_ids[i], err);
	}
	free(lines.v);
	free(ml.rows);
	free(gl.rows);
	if (fclose(f) != 0 && ex == 0 && rc == 0) {
		errmsg("save: %s: %s", tmp, strerror(errno));
		ex = EXIT_REFUSED;
	}
	if (ex == 0 && rc < 0)
		ex = of_failed(what, rc, err);
	if (ex == 0 && rename(tmp, path) != 0) {
		errmsg("save: %s: %s", path, strerror(errno));
		ex = EXIT_REFUSED;
	}
	if (ex != 0)
		unlink(tmp);
	else if (!o.json)
		printf("saved %zu meters, %zu groups, %zu flows to %s\n", ml.n, gl.n, lines.n, path);
	return ex;
}

/*
 * add-group GROUP, mod-group GROUP (ovs-ofctl add-groups syntax) and
 * del-groups [group_id=N]: one group_mod.
 */
static int
cmd_group_mod(const char *cmd, const char *text)
{
	static struct sl_ofp_group_mod gm;
	struct sl_parse_error pe;
	struct batch b = {.label = cmd};
	char buf[ERR_MAX];
	int rc;

	memset(&gm, 0, sizeof(gm));
	if (strcmp(cmd, "del-groups") == 0) {
		unsigned long long id = SL_GROUP_ID_ALL;
		char *end;
		gm.command = SL_OFPGC_DELETE;
		if (*text != '\0') {
			if (strncmp(text, "group_id=", 9) != 0 || text[9] == '\0' ||
			    (id = strtoull(text + 9, &end, 0), *end != '\0') || id > SL_GROUP_ID_MAX)
				return usage_error("del-groups: bad group '%s' (expected group_id=N, "
				                   "N 0..0xffffff00)",
				                   text);
		}
		gm.spec.group_id = (uint32_t)id;
	} else {
		gm.command = strcmp(cmd, "add-group") == 0 ? SL_OFPGC_ADD : SL_OFPGC_MODIFY;
		if (sl_group_parse_names(text, &in_names, &gm.spec, &pe) < 0) {
			if (portmap.ex)
				return portmap.ex;
			sl_parse_error_format(&pe, buf, sizeof(buf));
			return usage_error("%s: %s", cmd, buf);
		}
	}
	sl_ofp_buf_init(&b.msgs);
	rc = sl_ofp_group_mod_encode(&b.msgs, 0, &gm);
	if (rc == 0)
		rc = batch_add_origin(&b, NULL, 0);
	if (rc < 0) {
		batch_free(&b);
		if (rc == -EMSGSIZE)
			return usage_error("%s: group too large for one OpenFlow message", cmd);
		errmsg("out of memory");
		return EXIT_REFUSED;
	}
	rc = run_batch(&b);
	batch_free(&b);
	return rc;
}

/*
 * add-meter METER, mod-meter METER (ovs-ofctl add-meter syntax) and
 * del-meters [meter=N]: one meter_mod.
 */
static int
cmd_meter_mod(const char *cmd, const char *text)
{
	struct sl_ofp_meter_mod mm;
	struct sl_parse_error pe;
	struct batch b = {.label = cmd};
	char buf[ERR_MAX];
	int rc;

	memset(&mm, 0, sizeof(mm));
	if (strcmp(cmd, "del-meters") == 0) {
		unsigned long long id = SL_METER_ID_ALL;
		char *end;
		mm.command = SL_OFPMC_DELETE;
		if (*text != '\0' && strcmp(text, "meter=all") != 0) {
			if (strncmp(text, "meter=", 6) != 0 || text[6] == '\0' ||
			    (id = strtoull(text + 6, &end, 0), *end != '\0') || id == 0 ||
			    id > SL_METER_ID_MAX)
				return usage_error("del-meters: bad meter '%s' (expected meter=N, "
				                   "N 1..0xffff0000, or meter=all)",
				                   text);
		}
		mm.spec.meter_id = (uint32_t)id;
	} else {
		mm.command = strcmp(cmd, "add-meter") == 0 ? SL_OFPMC_ADD : SL_OFPMC_MODIFY;
		if (sl_meter_parse(text, &mm.spec, &pe) < 0) {
			sl_parse_error_format(&pe, buf, sizeof(buf));
			return usage_error("%s: %s", cmd, buf);
		}
	}
	sl_ofp_buf_init(&b.msgs);
	rc = sl_ofp_meter_mod_encode(&b.msgs, 0, &mm);
	if (rc == 0)
		rc = batch_add_origin(&b, NULL, 0);
	if (rc < 0) {
		batch_free(&b);
		errmsg("out of memory");
		return EXIT_REFUSED;
	}
	rc = run_batch(&b);
	batch_free(&b);
	return rc;
}

static int tel_simple(const char *cmd, const char *params,
                      void (*print)(const struct sl_ctl_json *));
static bool param_ok(const char *s);

/* A "queue=" line: not OpenFlow (pipeline.h "Queues"); set over telemetry once the batch ran. */
static int
on_queue(void *arg, const struct sl_queue_spec *qs, struct sl_parse_error *err)
{
	struct batch *b = arg;
	void *n = grow_array(b->queues, b->n_queues, &b->cap_queues, sizeof(*b->queues), 8);

	(void)err;
	if (n == NULL)
		return -ENOMEM;
	b->queues = n;
	b->queues[b->n_queues++] = *qs;
	return 0;
}

static void
print_nothing(const struct sl_ctl_json *v)
{
	(void)v;
}

static int
cmd_add_flows(const char *path)
{
	struct sl_parse_error pe;
	struct batch b = {0};
	const char *file = path;
	char buf[ERR_MAX];
	int rc;

	if (strcmp(path, "-") == 0) {
		file = "/dev/stdin";
		b.display_file = "-";
	}
	sl_ofp_buf_init(&b.msgs);
	/* The whole file is checked and encoded before anything is sent. */
	const struct sl_flowfile_callbacks cb = {on_table_decl, on_flow,  on_directive, on_group,
	                                         on_meter,      on_state, on_queue,     &in_names};
	rc = sl_flowfile_load_cb(file, &cb, &b, &pe);
	if (rc < 0 && portmap.ex) {
		batch_free(&b);
		return portmap.ex;
	}
	if (rc < 0) {
		if (b.display_file)
			snprintf(pe.file, sizeof(pe.file), "%s", b.display_file);
		sl_parse_error_format(&pe, buf, sizeof(buf));
		batch_free(&b);
		free(b.queues);
		if (rc == -ENOMEM) {
			errmsg("%s", buf);
			return EXIT_REFUSED;
		}
		return usage_error("add-flows: %s", buf);
	}
	rc = run_batch(&b);
	for (size_t i = 0; rc == 0 && i < b.n_queues; i++) {
		sl_queue_format(&b.queues[i], buf, sizeof(buf));
		rc = tel_simple("/sluice/queue/set", buf, print_nothing);
	}
	batch_free(&b);
	free(b.queues);
	return rc;
}

static int
cmd_del_flows(const char *filter_text)
{
	static struct sl_ofp_flow_mod fm;
	struct batch b = {.label = "del-flows"};
	int rc;

	flow_mod_init(&fm, o.strict ? SL_OFPFC_DELETE_STRICT : SL_OFPFC_DELETE);
	if ((rc = parse_filter("del-flows", filter_text, &fm.spec, &fm.out_port, &fm.out_group)))
		return rc;
	sl_ofp_buf_init(&b.msgs);
	if (sl_ofp_flow_mod_encode(&b.msgs, 0, &fm) < 0 || batch_add_origin(&b, NULL, 0) < 0) {
		batch_free(&b);
		return usage_error("del-flows: filter too large for one OpenFlow message");
	}
	rc = run_batch(&b);
	batch_free(&b);
	return rc;
}

/*
 * diff-flows SOURCE1 SOURCE2 and replace-flows [SWITCH] FILE (ovs-ofctl's).
 * A source is a switch (every table's flows, by flow stats) or a flow file
 * (its flow lines; table declarations, groups, meters, states and fwd-mode
 * lines are checked and left alone).  A flow's identity is its table,
 * priority and match; the rest (cookie, timeouts, flags, actions) is its
 * version.  Both are compared as canonical text (sl_flow_format prints equal
 * specs alike), with the flags that are requests rather than state
 * (check_overlap, reset_counts) left out.
 */

struct fset_entry {
	char *key;        /* "TTT PPPPP MATCH": table, then priority high to low */
	char *text;       /* the flow (sl_flow_format, port numbers) */
	const char *file; /* flow file and line it came from, or NULL (a switch) */
	unsigned line;
	size_t seq;       /* reading order: of two equal keys in a file the last wins */
};

struct flow_set {
	struct fset_entry *v;
	size_t n, cap;
	const char *file; /* a file source: its name as given, for FILE:LINE */
};

static void
fset_free(struct flow_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].text);
	}
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static int
fset_add(struct flow_set *s, const struct sl_flow_spec *fs, const char *file, unsigned line)
{
	static struct sl_flow_spec n; /* large: off the stack */
	char match[4096], text[4096], key[4200];
	struct fset_entry *v = grow_array(s->v, s->n, &s->cap, sizeof(*s->v), 256);

	if (v == NULL)
		return -ENOMEM;
	s->v = v;
	n = *fs;
	n.cookie_mask = 0;
	n.flags &= (uint16_t)~(SL_FF_CHECK_OVERLAP | SL_FF_RESET_COUNTS);
	sl_flow_format_match(&n.match, match, sizeof(match));
	sl_flow_format(&n, text, sizeof(text));
	snprintf(key, sizeof(key), "%03u %05u %s", n.table_id, 65535u - n.priority, match);
	v[s->n].key = strdup(key);
	v[s->n].text = strdup(text);
	if (v[s->n].key == NULL || v[s->n].text == NULL) {
		free(v[s->n].key);
		free(v[s->n].text);
		return -ENOMEM;
	}
	v[s->n].file = file;
	v[s->n].line = line;
	v[s->n].seq = s->n;
	s->n++;
	return 0;
}

static int
fset_cmp(const void *a, const void *b)
{
	const struct fset_entry *x = a, *y = b;
	int d = strcmp(x->key, y->key);

	return d != 0 ? d : (x->seq > y->seq) - (x->seq < y->seq);
}

/* Sort by key; of entries with one key keep the last read (ovs-ofctl does the same). */
static void
fset_sort(struct flow_set *s)
{
	size_t k = 0;

	qsort(s->v, s->n, sizeof(s->v[0]), fset_cmp);
	for (size_t i = 0; i < s->n; i++) {
		if (i + 1 < s->n && strcmp(s->v[i].key, s->v[i + 1].key) == 0) {
			free(s->v[i].key);
			free(s->v[i].text);
			continue;
		}
		s->v[k++] = s->v[i];
	}
	s->n = k;
}

static int
fset_stats_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
                 struct sl_ofp_error *e)
{
	static struct sl_flow_spec fs;
	struct sl_ofp_flow_stats st;

	if (sl_ofp_flow_stats_entry_decode(body, len, ofs, &fs, &st, e) < 0)
		return -1;
	if (fset_add(m->user, &fs, NULL, 0) < 0) {
		snprintf(m->err, ERR_MAX, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* Every flow of the switch behind @c; exit code. */
static int
fset_read_switch(struct flow_set *s, struct sl_ctl_of *c)
{
	static struct sl_ofp_mp_request req;
	struct mp_ctx m = {.type = SL_OFPMP_FLOW, .entry = fset_stats_entry, .user = s};
	char err[ERR_MAX] = "";
	int rc;

	memset(&req, 0, sizeof(req));
	req.type = SL_OFPMP_FLOW;
	req.flow.table_id = SL_OFPTT_ALL;
	req.flow.out_port = SL_PORT_ANY;
	req.flow.out_group = SL_GROUP_ID_ANY;
	m.err = err;
	rc = of_multipart(c, &req, mp_reply, &m, NULL, err, sizeof(err));
	if (rc < 0)
		return of_failed("flow stats request", rc, err);
	fset_sort(s);
	return 0;
}

static int
fset_on_flow(void *arg, const struct sl_flow_spec *fs, struct sl_parse_error *err)
{
	struct flow_set *s = arg;

	if (fset_add(s, fs, s->file, err->line) < 0) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* The flow lines of @path ("-": stdin); exit code (2 for a syntax error, naming FILE:LINE). */
static int
fset_read_file(struct flow_set *s, const char *cmd, const char *path)
{
	const struct sl_flowfile_callbacks cb = {.on_flow = fset_on_flow, .ports = &in_names};
	struct sl_parse_error pe;
	char buf[ERR_MAX];
	int rc;

	s->file = path;
	rc = sl_flowfile_load_cb(strcmp(path, "-") == 0 ? "/dev/stdin" : path, &cb, s, &pe);
	if (rc < 0 && portmap.ex)
		return portmap.ex;
	if (rc < 0) {
		if (strcmp(path, "-") == 0)
			snprintf(pe.file, sizeof(pe.file), "-");
		sl_parse_error_format(&pe, buf, sizeof(buf));
		if (rc == -ENOMEM) {
			errmsg("%s", buf);
			return EXIT_REFUSED;
		}
		return usage_error("%s: %s", cmd, buf);
	}
	fset_sort(s);
	return 0;
}

/*
 * What a SOURCE names, by ovs-ofctl's rule: a file when it starts with '/'
 * or '.' (or is "-"), a switch target when it holds a ':', else a file when
 * one exists by that name, else a switch's instance name (--name).  Fills
 * @target (a switch) and returns true for a file; exit code in *ex.
 */
static bool
source_is_file(const char *src, char *target, size_t size, int *ex)
{
	*ex = 0;
	if (src[0] == '/' || src[0] == '.' || strcmp(src, "-") == 0)
		return true;
	if (strchr(src, ':') != NULL) {
		snprintf(target, size, "%s", src);
		return false;
	}
	if (access(src, F_OK) == 0)
		return true;
	if (sl_ctl_default_target(src, target, size) < 0)
		*ex = usage_error("'%s' is neither a file nor a switch name (1..64 characters of "
		                  "A-Z a-z 0-9 _ . -)",
		                  src);
	return false;
}

/* Read SOURCE @src into @s: a file, or the switch it names (connecting to it). */
static int
fset_read_source(struct flow_set *s, const char *cmd, const char *src, char *target,
                 size_t size)
{
	struct sl_ctl_of *c;
	int ex;

	if (source_is_file(src, target, size, &ex))
		return fset_read_file(s, cmd, src);
	if (ex != 0)
		return ex;
	o.target = target;
	if ((ex = of_connect(&c)) != 0)
		return ex;
	ex = fset_read_switch(s, c);
	sl_ctl_of_close(c);
	return ex;
}

/* A diff line: the flow with its sign, port names with --names. */
static void
fset_print(char sign, const struct fset_entry *e)
{
	static struct sl_flow_spec fs;
	char text[4096];
	const char *t = e->text;

	if (o.names && sl_flow_parse(e->text, &fs, NULL) == 0 &&
	    sl_flow_format_names(&fs, out_names(), text, sizeof(text)) < (int)sizeof(text))
		t = text;
	if (o.json)
		sl_ctl_jw_stringf(&jw, NULL, "%c%s", sign, t);
	else
		printf("%c%s\n", sign, t);
}

/* ovs-ofctl's exit code for "the sources differ". */
#define EXIT_DIFFERENT 2

static int
cmd_diff_flows(const char *src1, const char *src2)
{
	struct flow_set a = {0}, b = {0};
	char t1[160], t2[160];
	size_t i = 0, j = 0, n_diff = 0;
	int ex, d;

	/* Port names in the files are the first switch's, read once it is the target. */
	if (!source_is_file(src1, t1, sizeof(t1), &ex) && ex == 0)
		o.target = t1;
	else if (ex == 0 && !source_is_file(src2, t2, sizeof(t2), &ex) && ex == 0)
		o.target = t2;
	if (ex != 0)
		return ex;
	if ((ex = fset_read_source(&a, "diff-flows", src1, t1, sizeof(t1))) != 0 ||
	    (ex = fset_read_source(&b, "diff-flows", src2, t2, sizeof(t2))) != 0)
		goto out;
	if (o.names && (ex = portmap_load(NULL)) != 0)
		goto out;
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_array_begin(&jw, "lines");
	}
	while (i < a.n || j < b.n) {
		d = i == a.n ? 1 : j == b.n ? -1 : strcmp(a.v[i].key, b.v[j].key);
		if (d < 0) {
			fset_print('-', &a.v[i++]);
			n_diff++;
		} else if (d > 0) {
			fset_print('+', &b.v[j++]);
			n_diff++;
		} else {
			if (strcmp(a.v[i].text, b.v[j].text) != 0) {
				fset_print('-', &a.v[i]);
				fset_print('+', &b.v[j]);
				n_diff++;
			}
			i++;
			j++;
		}
	}
	if (o.json) {
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_u64(&jw, "differences", n_diff);
		sl_ctl_jw_object_end(&jw);
	}
	ex = n_diff ? EXIT_DIFFERENT : 0;
out:
	fset_free(&a);
	fset_free(&b);
	return ex;
}

/* The flow of @e as a spec (its text reads back: sl_flow_format's promise). */
static int
fset_spec(const struct fset_entry *e, struct sl_flow_spec *fs)
{
	struct sl_parse_error pe;
	char buf[ERR_MAX];

	if (sl_flow_parse(e->text, fs, &pe) == 0)
		return 0;
	sl_parse_error_format(&pe, buf, sizeof(buf));
	errmsg("replace-flows: cannot restate the switch's flow '%s': %s", e->text, buf);
	return -EINVAL;
}

/* Does @text carry the low_latency keyword?  (Flags print before "priority=".) */
static bool
text_low_latency(const char *text)
{
	const char *p = strstr(text, "priority=");
	const char *ll = strstr(text, "low_latency, ");

	return ll != NULL && p != NULL && ll < p;
}

/* One flow_mod of replace-flows, plus its low_latency mark when that changes. */
static int
replace_append(struct batch *b, uint8_t command, const struct fset_entry *e, bool ll_was)
{
	static struct sl_ofp_flow_mod fm;
	bool ll;
	int rc;

	flow_mod_init(&fm, command);
	if (fset_spec(e, &fm.spec) < 0)
		return -EINVAL;
	ll = fm.spec.flags & SL_FF_LOW_LATENCY;
	fm.spec.flags &= (uint16_t)~SL_FF_LOW_LATENCY;
	if ((rc = sl_ofp_flow_mod_encode(&b->msgs, 0, &fm)) == 0 &&
	    (rc = batch_add_origin(b, e->file, e->line)) == 0 && e->file == NULL)
		snprintf(b->origins[b->n - 1].what, sizeof(b->origins[0].what), "deleting %s",
		         e->text);
	if (rc == 0 && command != SL_OFPFC_DELETE_STRICT && ll != ll_was)
		rc = ll_set_append_cmd(b, ll ? SL_OFPX_LL_SET_ON : SL_OFPX_LL_SET_OFF, &fm.spec,
		                       true, e->file, e->line);
	if (rc == -EMSGSIZE)
		errmsg("replace-flows: %s:%u: flow too large for one OpenFlow message", e->file,
		       e->line);
	else if (rc == -ENOMEM)
		errmsg("out of memory");
	return rc;
}

/* The text of a flow up to its actions: equal heads differ in the actions alone. */
static bool
same_but_actions(const char *x, const char *y)
{
	const char *ax = strstr(x, " actions="), *ay = strstr(y, " actions=");

	return ax && ay && ax - x == ay - y && strncmp(x, y, (size_t)(ax - x)) == 0;
}

/*
 * replace-flows [SWITCH] FILE: make the switch's flows FILE's with the
 * fewest flow_mods, in one batch closed by a barrier: a DELETE_STRICT for
 * each flow only the switch has, then a MODIFY_STRICT where only the actions
 * differ (counters and duration kept), an ADD where the cookie, a timeout or
 * a flag differs or the flow is new.  Equal flows are not touched.
 */
static int
cmd_replace_flows(int argc, char **argv)
{
	const char *path = argv[argc - 1];
	struct flow_set file = {0}, sw = {0};
	struct batch b = {.label = "replace-flows"};
	unsigned n_add = 0, n_mod = 0, n_del = 0, n_same = 0;
	struct sl_ctl_of *c = NULL;
	char target[160];
	size_t i = 0, j = 0;
	int ex, rc = 0, d;

	if (argc == 2) {
		if (source_is_file(argv[0], target, sizeof(target), &ex) && ex == 0)
			return usage_error("replace-flows: '%s' is no switch (SWITCH is a target "
			                   "such as unix:PATH or tcp:HOST:PORT, or an instance name)",
			                   argv[0]);
		if (ex != 0)
			return ex;
		o.target = target;
	}
	sl_ofp_buf_init(&b.msgs);
	if ((ex = fset_read_file(&file, "replace-flows", path)) != 0 || (ex = of_connect(&c)) != 0 ||
	    (ex = fset_read_switch(&sw, c)) != 0)
		goto out;
	/* Deletes first, as ovs-ofctl: an ADD below never collides with a flow on its way out. */
	for (i = 0, j = 0; j < sw.n && rc == 0; j++) {
		while (i < file.n && strcmp(file.v[i].key, sw.v[j].key) < 0)
			i++;
		if (i == file.n || strcmp(file.v[i].key, sw.v[j].key) != 0) {
			rc = replace_append(&b, SL_OFPFC_DELETE_STRICT, &sw.v[j], false);
			n_del++;
		}
	}
	for (i = 0, j = 0; i < file.n && rc == 0; i++) {
		while (j < sw.n && strcmp(sw.v[j].key, file.v[i].key) < 0)
			j++;
		d = j == sw.n ? -1 : strcmp(file.v[i].key, sw.v[j].key);
		if (d != 0) {
			rc = replace_append(&b, SL_OFPFC_ADD, &file.v[i], false);
			n_add++;
		} else if (strcmp(file.v[i].text, sw.v[j].text) == 0) {
			n_same++;
		} else {
			bool mod = same_but_actions(file.v[i].text, sw.v[j].text);
			rc = replace_append(&b, mod ? SL_OFPFC_MODIFY_STRICT : SL_OFPFC_ADD,
			                    &file.v[i], text_low_latency(sw.v[j].text));
			if (mod)
				n_mod++;
			else
				n_add++;
		}
	}
	if (rc < 0) {
		ex = EXIT_REFUSED; /* replace_append said why */
		goto out;
	}
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_u64(&jw, "added", n_add);
		sl_ctl_jw_u64(&jw, "modified", n_mod);
		sl_ctl_jw_u64(&jw, "deleted", n_del);
		sl_ctl_jw_u64(&jw, "unchanged", n_same);
	}
	ex = batch_send(&b, c);
	if (o.json)
		sl_ctl_jw_object_end(&jw);
out:
	sl_ctl_of_close(c);
	batch_free(&b);
	fset_free(&file);
	fset_free(&sw);
	return ex;
}

/*
 * State tables (OpenState, issue #9): set-state, del-states, dump-states.
 */

static int
parse_state_table(const char *cmd, const char *arg, uint8_t *table_id)
{
	uint64_t v;

	if (!parse_u64(arg, 0, SL_TABLES_MAX - 1, &v))
		return usage_error("%s: bad table '%s': expected 0..%u", cmd, arg,
		                   SL_TABLES_MAX - 1);
	*table_id = (uint8_t)v;
	return 0;
}

static int
parse_state_key(const char *cmd, const char *text, struct sl_match *key)
{
	static struct sl_flow_spec fs;
	uint32_t op, og;
	int rc;

	if ((rc = parse_filter(cmd, text, &fs, &op, &og)))
		return rc;
	if (fs.table_id != 255 || op != SL_PORT_ANY || og != SL_GROUP_ID_ANY || fs.cookie_mask)
		return usage_error("%s: the key holds match fields only: '%s'", cmd, text);
	*key = fs.match;
	return 0;
}

/* TABLE KEY STATE [idle_ms=N] [hard_ms=N] [rollback=S] -> @m; usage error otherwise. */
static int
parse_state_set(const char *cmd, int argc, char **argv, struct sl_ofp_state_mod *mp)
{
	struct sl_ofp_state_mod m = {0};
	uint64_t v;
	int rc;

	if (argc < 3 || argc > 6)
		return usage_error("%s: expected TABLE KEY STATE [idle_ms=N] [hard_ms=N] "
		                   "[rollback=S]",
		                   cmd);
	if ((rc = parse_state_table(cmd, argv[0], &m.table_id)) ||
	    (rc = parse_state_key(cmd, argv[1], &m.key)))
		return rc;
	if (!parse_u64(argv[2], 0, UINT32_MAX, &v))
		return usage_error("%s: bad state '%s': expected 0..4294967295", cmd, argv[2]);
	m.set.state = (uint32_t)v;
	for (int i = 3; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		uint32_t *dst = NULL;

		if (eq && strncmp(argv[i], "idle_ms=", 8) == 0)
			dst = &m.set.idle_ms;
		else if (eq && strncmp(argv[i], "hard_ms=", 8) == 0)
			dst = &m.set.hard_ms;
		else if (eq && strncmp(argv[i], "rollback=", 9) == 0)
			dst = &m.set.rollback;
		if (dst == NULL || !parse_u64(eq + 1, 0, UINT32_MAX, &v))
			return usage_error("%s: bad argument '%s': expected idle_ms=N, "
			                   "hard_ms=N or rollback=S",
			                   cmd, argv[i]);
		*dst = (uint32_t)v;
	}
	*mp = m;
	return 0;
}

static int
cmd_set_state(int argc, char **argv)
{
	static struct sl_ofp_state_mod m;
	struct batch b = {.label = "set-state"};
	int rc;

	if ((rc = parse_state_set("set-state", argc, argv, &m)))
		return rc;
	sl_ofp_buf_init(&b.msgs);
	if (sl_ofp_state_mod_encode(&b.msgs, 0, SL_OFPX_STATE_SET, &m) < 0 ||
	    batch_add_origin(&b, NULL, 0) < 0) {
		batch_free(&b);
		errmsg("out of memory");
		return EXIT_REFUSED;
	}
	rc = run_batch(&b);
	batch_free(&b);
	return rc;
}

/*
 * add-states FILE|-: one "TABLE KEY STATE [idle_ms=N] [hard_ms=N] [rollback=S]"
 * per line ('#' comments, blank lines skipped), checked and encoded before
 * anything is sent, then sent as one batch closed by a barrier.
 */
static int
cmd_add_states(const char *path)
{
	static struct sl_ofp_state_mod m;
	struct batch b = {.label = "add-states"};
	const char *file = strcmp(path, "-") == 0 ? "/dev/stdin" : path;
	FILE *f = fopen(file, "r");
	char *line = NULL, *argv[8], where[300];
	size_t cap = 0;
	unsigned lineno = 0;
	long got;
	int rc = 0;

	if (f == NULL) {
		errmsg("add-states: cannot open %s: %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	sl_ofp_buf_init(&b.msgs);
	while ((got = sl_read_line(f, &line, &cap, SL_LINE_MAX)) != 0) {
		int argc = 0;
		char *save = NULL, *tok;

		lineno++;
		if (got < 0) { /* never a silent end: name the line and the cause */
			errmsg("add-states: %s:%u: %s", path, lineno,
			       got == -E2BIG    ? "line too long"
			       : got == -EILSEQ ? "NUL byte in the line"
						: strerror((int)-got));
			rc = got == -E2BIG || got == -EILSEQ ? EXIT_USAGE : EXIT_REFUSED;
			break;
		}
		line[strcspn(line, "#\n")] = '\0';
		for (tok = strtok_r(line, " \t", &save); tok && argc < 8;
		     tok = strtok_r(NULL, " \t", &save))
			argv[argc++] = tok;
		if (argc == 0)
			continue;
		snprintf(where, sizeof(where), "add-states: %s:%u", path, lineno);
		if ((rc = parse_state_set(where, argc, argv, &m)))
			break;
		if (sl_ofp_state_mod_encode(&b.msgs, 0, SL_OFPX_STATE_SET, &m) < 0 ||
		    batch_add_origin(&b, path, lineno) < 0) {
			errmsg("out of memory");
			rc = EXIT_REFUSED;
			break;
		}
	}
	free(line);
	fclose(f);
	if (rc == 0)
		rc = run_batch(&b);
	batch_free(&b);
	return rc;
}

static int
cmd_del_states(int argc, char **argv)
{
	static struct sl_ofp_state_mod m;
	struct batch b = {.label = "del-states"};
	int rc;

	memset(&m, 0, sizeof(m));
	if ((rc = parse_state_table("del-states", argv[0], &m.table_id)))
		return rc;
	m.all = argc < 2;
	if (!m.all && (rc = parse_state_key("del-states", argv[1], &m.key)))
		return rc;
	sl_ofp_buf_init(&b.msgs);
	if (sl_ofp_state_mod_encode(&b.msgs, 0, SL_OFPX_STATE_DEL, &m) < 0 ||
	    batch_add_origin(&b, NULL, 0) < 0) {
		batch_free(&b);
		errmsg("out of memory");
		return EXIT_REFUSED;
	}
	rc = run_batch(&b);
	batch_free(&b);
	return rc;
}

struct state_dump_ctx {
	char *err;
	bool have_stats;
	struct sl_state_stats st;
	unsigned n;
	/* save: each entry as a state line to @f instead of printed (NULL: print) */
	FILE *f;
	uint8_t table_id;
};

/* save: one entry as a flow-file state line (the timeouts start again on restore). */
static void
state_entry_save(struct state_dump_ctx *d, const struct sl_ofp_state_entry *e)
{
	char key[1024];

	sl_flow_format_match(&e->key, key, sizeof(key));
	fprintf(d->f, "state %u %s %" PRIu32, d->table_id, key, e->state);
	if (e->idle_ms)
		fprintf(d->f, " idle_ms=%" PRIu32, e->idle_ms);
	if (e->hard_ms)
		fprintf(d->f, " hard_ms=%" PRIu32, e->hard_ms);
	if (e->rollback)
		fprintf(d->f, " rollback=%" PRIu32, e->rollback);
	fputc('\n', d->f);
}

static int
state_entry_print(void *arg, const struct sl_ofp_state_entry *e)
{
	struct state_dump_ctx *d = arg;
	char key[1024], clean[1024];

	d->n++;
	if (d->f != NULL) {
		state_entry_save(d, e);
		return 0;
	}
	sl_flow_format_match(&e->key, key, sizeof(key));
	sl_ctl_sanitize(clean, sizeof(clean), key, strlen(key));
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_string(&jw, "key", clean);
		sl_ctl_jw_u64(&jw, "state", e->state);
		sl_ctl_jw_u64(&jw, "rollback", e->rollback);
		sl_ctl_jw_u64(&jw, "idle_ms", e->idle_ms);
		sl_ctl_jw_u64(&jw, "hard_ms", e->hard_ms);
		sl_ctl_jw_u64(&jw, "idle_left_ms", e->idle_left_ms);
		sl_ctl_jw_u64(&jw, "hard_left_ms", e->hard_left_ms);
		sl_ctl_jw_object_end(&jw);
		return 0;
	}
	printf(" %s state=%" PRIu32, clean, e->state);
	if (e->idle_ms)
		printf(" idle_ms=%" PRIu32 " (%" PRIu32 " left)", e->idle_ms, e->idle_left_ms);
	if (e->hard_ms)
		printf(" hard_ms=%" PRIu32 " (%" PRIu32 " left)", e->hard_ms, e->hard_left_ms);
	if (e->rollback)
		printf(" rollback=%" PRIu32, e->rollback);
	putchar('\n');
	return 0;
}

static int
state_reply(void *arg, const uint8_t *msg, size_t len)
{
	struct state_dump_ctx *d = arg;
	struct sl_ofp_error e;
	uint16_t flags;
	uint8_t table_id;
	int rc;

	if (msg[1] != SL_OFPT_EXPERIMENTER || len < 16)
		return 0;
	if (!d->have_stats) {
		if (sl_ofp_state_stats_reply_decode(msg, len, &table_id, &d->st, &e) < 0) {
			snprintf(d->err, ERR_MAX, "malformed state stats reply: %s",
			         sl_ofp_error_name(&e));
			return -EBADMSG;
		}
		d->have_stats = true;
		return 0;
	}
	rc = sl_ofp_state_dump_reply_decode(msg, len, &table_id, &flags, state_entry_print, d, &e);
	if (rc < 0) {
		snprintf(d->err, ERR_MAX, "malformed state dump reply: %s", sl_ofp_error_name(&e));
		return -EBADMSG;
	}
	return 0;
}

static int
cmd_dump_states(struct sl_ctl_of *c, const char *table_arg)
{
	struct state_dump_ctx d = {0};
	char err[ERR_MAX] = "";
	struct sl_ofp_buf b;
	uint8_t table_id;
	int rc;

	if ((rc = parse_state_table("dump-states", table_arg, &table_id)))
		return rc;
	d.err = err;
	sl_ofp_buf_init(&b);
	rc = sl_ofp_state_request_encode(&b, sl_ctl_of_next_xid(c), SL_OFPX_STATE_STATS, table_id);
	if (rc == 0)
		rc = sl_ctl_of_request(c, b.data, b.len, state_reply, &d, NULL, err, sizeof(err));
	if (rc < 0) {
		sl_ofp_buf_free(&b);
		return of_failed("state stats request", rc, err);
	}
	const struct sl_state_stats *st = &d.st;
	if (o.json) {
		sl_ctl_jw_object_begin(&jw, NULL);
		sl_ctl_jw_u64(&jw, "table_id", table_id);
		sl_ctl_jw_u64(&jw, "capacity", st->capacity);
		sl_ctl_jw_u64(&jw, "n_entries", st->n_entries);
		sl_ctl_jw_u64(&jw, "lookups", st->lookups);
		sl_ctl_jw_u64(&jw, "hits", st->hits);
		sl_ctl_jw_u64(&jw, "inserts", st->inserts);
		sl_ctl_jw_u64(&jw, "sets", st->sets);
		sl_ctl_jw_u64(&jw, "deletes", st->deletes);
		sl_ctl_jw_u64(&jw, "expired", st->expired);
		sl_ctl_jw_u64(&jw, "evicted", st->evicted);
		sl_ctl_jw_u64(&jw, "refused", st->refused);
		sl_ctl_jw_u64(&jw, "commands", st->commands);
		sl_ctl_jw_u64(&jw, "bytes", st->bytes);
		sl_ctl_jw_u64(&jw, "foreign", st->foreign);
		sl_ctl_jw_array_begin(&jw, "entries");
	} else {
		printf("state table %u: %" PRIu32 " entries of %" PRIu32 ", lookups=%" PRIu64
		       " hits=%" PRIu64 " inserts=%" PRIu64 " sets=%" PRIu64 " deletes=%" PRIu64
		       " expired=%" PRIu64 " evicted=%" PRIu64 " refused=%" PRIu64 " foreign=%" PRIu64 " bytes=%" PRIu64
		       "\n",
		       table_id, st->n_entries, st->capacity, st->lookups, st->hits, st->inserts,
		       st->sets, st->deletes, st->expired, st->evicted, st->refused, st->foreign, st->bytes);
	}
	sl_ofp_buf_reset(&b);
	rc = sl_ofp_state_request_encode(&b, sl_ctl_of_next_xid(c), SL_OFPX_STATE_DUMP, table_id);
	if (rc == 0)
		rc = sl_ctl_of_request(c, b.data, b.len, state_reply, &d, NULL, err, sizeof(err));
	sl_ofp_buf_free(&b);
	if (o.json) {
		sl_ctl_jw_array_end(&jw);
		sl_ctl_jw_object_end(&jw);
	}
	if (rc < 0)
		return of_failed("state dump request", rc, err);
	return 0;
}

/* save: the states of state table @table_id as flow-file state lines. */
static int
save_states(struct sl_ctl_of *c, FILE *f, uint8_t table_id, char *err)
{
	struct state_dump_ctx d = {.err = err, .have_stats = true, .f = f, .table_id = table_id};
	struct sl_ofp_buf b;
	int rc;

	sl_ofp_buf_init(&b);
	rc = sl_ofp_state_request_encode(&b, sl_ctl_of_next_xid(c), SL_OFPX_STATE_DUMP, table_id);
	if (rc == 0)
		rc = sl_ctl_of_request(c, b.data, b.len, state_reply, &d, NULL, err, ERR_MAX);
	sl_ofp_buf_free(&b);
	return rc;
}

/*
 * Telemetry plumbing.
 */

static int
tel_connect(struct sl_ctl_tel **t)
{
	char err[ERR_MAX];
	int rc = sl_ctl_tel_open(o.telemetry, o.timeout_ms, t, err, sizeof(err));

	if (rc == 0)
		return 0;
	errmsg("%s", err);
	if (rc != -EBADMSG)
		fprintf(stderr, "sluicectl: is the switch running? Pick it with --name NAME or "
		                "--telemetry PATH\n");
	return rc == -EBADMSG ? EXIT_REFUSED : EXIT_UNREACHABLE;
}

/* Exit code for a failed telemetry call. */
static int
tel_failed(const char *cmd, int rc, const char *err)
{
	switch (rc) {
	case -EREMOTEIO:
		errmsg("%s: the switch refused: %s", cmd, err);
		return EXIT_REFUSED;
	case -EINVAL:
		return usage_error("%s", err);
	case -ETIMEDOUT:
	case -ECONNRESET:
		errmsg("%s", err);
		return EXIT_UNREACHABLE;
	default:
		errmsg("%s", err);
		return EXIT_REFUSED;
	}
}

/* Call @cmd; on success *doc and *v are set (free *doc). */
static int
tel_get(struct sl_ctl_tel *t, const char *cmd, const char *params, struct sl_ctl_json_doc **doc,
        const struct sl_ctl_json **v)
{
	char err[ERR_MAX];
	int rc = sl_ctl_tel_call(t, cmd, params, doc, v, err, sizeof(err));

	if (rc < 0) {
		sl_ctl_json_free(*doc);
		*doc = NULL;
		return tel_failed(cmd, rc, err);
	}
	if ((*v)->type != SL_CTL_JSON_OBJECT) {
		errmsg("%s: malformed reply: the value is not a JSON object", cmd);
		sl_ctl_json_free(*doc);
		*doc = NULL;
		return EXIT_REFUSED;
	}
	return 0;
}

/* A JSON value as short text for a table cell. */
static void
fmt_value(const struct sl_ctl_json *v, char *buf, size_t size)
{
	switch (v ? v->type : SL_CTL_JSON_NULL) {
	case SL_CTL_JSON_NUMBER:
		if (v->is_int)
			snprintf(buf, size, "%s%" PRIu64, v->negative ? "-" : "", v->u);
		else
			snprintf(buf, size, "%g", v->d);
		break;
	case SL_CTL_JSON_STRING:
		sl_ctl_sanitize(buf, size, v->str, v->str_len);
		break;
	case SL_CTL_JSON_TRUE:
		snprintf(buf, size, "true");
		break;
	case SL_CTL_JSON_FALSE:
		snprintf(buf, size, "false");
		break;
	case SL_CTL_JSON_ARRAY:
	case SL_CTL_JSON_OBJECT:
		snprintf(buf, size, "(%zu items)", v->n);
		break;
	default:
		snprintf(buf, size, "-");
		break;
	}
}

/* Integer member as text, "-" when absent. */
static void
fmt_member(const struct sl_ctl_json *obj, const char *key, char *buf, size_t size)
{
	fmt_value(sl_ctl_json_get(obj, key), buf, size);
}

static void
fmt_ns(uint64_t ns, char *buf, size_t size)
{
	if (ns < 1000)
		snprintf(buf, size, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.2fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.2fms", ns / 1e6);
	else
		snprintf(buf, size, "%.2fs", ns / 1e9);
}

static void
fmt_uptime(uint64_t ms, char *buf, size_t size)
{
	uint64_t s = ms / 1000;

	if (s >= 86400)
		snprintf(buf, size, "%" PRIu64 "d%02" PRIu64 "h%02" PRIu64 "m", s / 86400,
		         s / 3600 % 24, s / 60 % 60);
	else if (s >= 3600)
		snprintf(buf, size, "%" PRIu64 "h%02" PRIu64 "m%02" PRIu64 "s", s / 3600,
		         s / 60 % 60, s % 60);
	else if (s >= 60)
		snprintf(buf, size, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
	else
		snprintf(buf, size, "%" PRIu64 ".%03" PRIu64 "s", s, ms % 1000);
}

/* Members of @obj that are objects, sorted by numeric key (ports, tables). */
static size_t
sorted_entries(const struct sl_ctl_json *obj, const struct sl_ctl_json **out, size_t max)
{
	size_t n = 0;

	for (const struct sl_ctl_json *m = obj->child; m && n < max; m = m->next)
		if (m->type == SL_CTL_JSON_OBJECT)
			out[n++] = m;
	/* Insertion sort: at most a few hundred entries. */
	for (size_t i = 1; i < n; i++) {
		const struct sl_ctl_json *x = out[i];
		unsigned long kx = strtoul(x->key, NULL, 10);
		size_t j = i;
		while (j > 0 && strtoul(out[j - 1]->key, NULL, 10) > kx) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = x;
	}
	return n;
}

/*
 * Print every member of @obj as "key: value" lines, then @n_extra derived
 * lines (@extra: key, value, key, value ...).
 */
static void
print_kv_extra(const struct sl_ctl_json *obj, const char *const *extra, unsigned n_extra)
{
	static const char *const heads[] = {"", ""};
	struct sl_ctl_table *t;
	char buf[256];

	if (sl_ctl_table_create(heads, 2, "ll", &t) < 0)
		return;
	for (const struct sl_ctl_json *m = obj->child; m; m = m->next) {
		fmt_value(m, buf, sizeof(buf));
		sl_ctl_table_addf(t, "%s:", m->key);
		sl_ctl_table_add(t, buf);
	}
	for (unsigned i = 0; i < n_extra; i++) {
		sl_ctl_table_addf(t, "%s:", extra[2 * i]);
		sl_ctl_table_add(t, extra[2 * i + 1]);
	}
	sl_ctl_table_print(t, stdout, 0);
	sl_ctl_table_destroy(t);
}

static void
print_kv(const struct sl_ctl_json *obj)
{
	print_kv_extra(obj, NULL, 0);
}

/*
 * stats
 */

static void
stats_info(const struct sl_ctl_json *v)
{
	uint64_t ms;
	char buf[64];
	const char *extra[2] = {"uptime", buf};

	if (sl_ctl_json_u64(sl_ctl_json_get(v, "uptime_ms"), &ms)) {
		fmt_uptime(ms, buf, sizeof(buf));
		print_kv_extra(v, extra, 1);
	} else {
		print_kv(v);
	}
}

static void
stats_ports(const struct sl_ctl_json *v)
{
	static const char *const heads[] = {"port",    "name",     "state",   "rx_pkts", "rx_bytes",
	                                    "tx_pkts", "tx_bytes", "tx_drop", "rx_miss"};
	static const char *const keys[] = {"rx_packets", "rx_bytes",   "tx_packets",
	                                   "tx_bytes",   "tx_dropped", "rx_missed"};
	const struct sl_ctl_json *rows[1024];
	struct sl_ctl_table *t;
	size_t n = sorted_entries(v, rows, SL_ARRAY_SIZE(rows));
	char buf[64];

	if (sl_ctl_table_create(heads, 9, "rllrrrrrr", &t) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct sl_ctl_json *p = rows[i];
		uint64_t link = sl_ctl_json_get_u64(p, "link", 0),
		         live = sl_ctl_json_get_u64(p, "live", 1);

		sl_ctl_table_add(t, p->key);
		fmt_member(p, "name", buf, sizeof(buf));
		sl_ctl_table_add(t, buf);
		sl_ctl_table_add(t, !link ? "down" : !live ? "admin-down" : "up");
		for (unsigned k = 0; k < SL_ARRAY_SIZE(keys); k++) {
			fmt_member(p, keys[k], buf, sizeof(buf));
			sl_ctl_table_add(t, buf);
		}
	}
	sl_ctl_table_print(t, stdout, 0);
	sl_ctl_table_destroy(t);
	if (sl_ctl_json_get_u64(v, "truncated", 0))
		printf("(list cut by the switch: use 'telemetry /sluice/port,N' for the rest)\n");
}

static void
stats_tables(const struct sl_ctl_json *v)
{
	static const char *const heads[] = {"table",   "name",    "kind",  "flows",
	                                    "lookups", "matched", "missed"};
	static const char *const keys[] = {"name", "kind", "flows", "lookups", "matched", "missed"};
	const struct sl_ctl_json *rows[256];
	struct sl_ctl_table *t;
	size_t n = sorted_entries(v, rows, SL_ARRAY_SIZE(rows));
	char buf[64];

	if (sl_ctl_table_create(heads, 7, "rllrrrr", &t) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		sl_ctl_table_add(t, rows[i]->key);
		for (unsigned k = 0; k < SL_ARRAY_SIZE(keys); k++) {
			fmt_member(rows[i], keys[k], buf, sizeof(buf));
			sl_ctl_table_add(t, buf[0] ? buf : "-");
		}
	}
	if (n)
		sl_ctl_table_print(t, stdout, 0);
	else
		printf("no tables in use\n");
	sl_ctl_table_destroy(t);
	if (sl_ctl_json_get_u64(v, "truncated", 0))
		printf("(list cut by the switch: use 'telemetry /sluice/table,N' for the rest)\n");
}

/* /sluice/ffp: the scalar members, then one row per table_N container. */
static void
stats_ffp(const struct sl_ctl_json *v)
{
	static const char *const heads[] = {"table", "active", "adaptive", "search ns", "probe ns",
	                                    "LL entries", "LUT entries", "hits", "misses",
	                                    "verified", "invalidated", "evicted"};
	static const char *const keys[] = {"active", "adaptive", "search_ns", "probe_ns",
	                                   "low_latency_entries", "entries", "hits", "misses",
	                                   "verifications", "invalidations", "evictions"};
	struct sl_ctl_table *kv, *t;
	char buf[64];
	static const char *const kvh[] = {"", ""};
	unsigned rows = 0;

	if (sl_ctl_table_create(kvh, 2, "ll", &kv) < 0)
		return;
	if (sl_ctl_table_create(heads, SL_ARRAY_SIZE(heads), "rrrrrrrrrrrr", &t) < 0) {
		sl_ctl_table_destroy(kv);
		return;
	}
	for (const struct sl_ctl_json *m = v->child; m; m = m->next) {
		if (strncmp(m->key, "table_", 6) == 0 && m->child != NULL) {
			sl_ctl_table_add(t, m->key + 6);
			for (unsigned k = 0; k < SL_ARRAY_SIZE(keys); k++) {
				fmt_member(m, keys[k], buf, sizeof(buf));
				sl_ctl_table_add(t, buf[0] ? buf : "-");
			}
			rows++;
			continue;
		}
		if (m->child != NULL) {
			/* The path records (docs/ffp.md): one line, "key value" pairs. */
			char line[512];
			size_t used = 0;
			line[0] = '\0';
			for (const struct sl_ctl_json *c = m->child; c && used < sizeof(line); c = c->next) {
				fmt_value(c, buf, sizeof(buf));
				int w = snprintf(line + used, sizeof(line) - used, "%s%s %s",
						 used ? ", " : "", c->key, buf);
				if (w < 0)
					break;
				used += (size_t)w;
			}
			sl_ctl_table_addf(kv, "%s:", m->key);
			sl_ctl_table_add(kv, line);
			continue;
		}
		fmt_value(m, buf, sizeof(buf));
		sl_ctl_table_addf(kv, "%s:", m->key);
		sl_ctl_table_add(kv, buf);
	}
	sl_ctl_table_print(kv, stdout, 0);
	if (rows) {
		printf("\n");
		sl_ctl_table_print(t, stdout, 0);
	}
	sl_ctl_table_destroy(kv);
	sl_ctl_table_destroy(t);
}

static void
stats_drops(const struct sl_ctl_json *v)
{
	static const char *const heads[] = {"reason", "packets"};
	struct sl_ctl_table *t;
	char buf[64];

	if (sl_ctl_table_create(heads, 2, "lr", &t) < 0)
		return;
	for (const struct sl_ctl_json *m = v->child; m; m = m->next) {
		if (strcmp(m->key, "total") == 0)
			continue;
		sl_ctl_table_add(t, m->key);
		fmt_value(m, buf, sizeof(buf));
		sl_ctl_table_add(t, buf);
	}
	if (sl_ctl_json_get(v, "total")) {
		sl_ctl_table_add(t, "total");
		fmt_member(v, "total", buf, sizeof(buf));
		sl_ctl_table_add(t, buf);
	}
	sl_ctl_table_print(t, stdout, 0);
	sl_ctl_table_destroy(t);
}

static void
stats_datapath(const struct sl_ctl_json *v)
{
	uint64_t packets = sl_ctl_json_get_u64(v, "packets", 0);
	uint64_t bursts = sl_ctl_json_get_u64(v, "bursts", 0);
	uint64_t cycles = sl_ctl_json_get_u64(v, "busy_cycles", 0);
	uint64_t iter = sl_ctl_json_get_u64(v, "iterations", 0);
	uint64_t busy = sl_ctl_json_get_u64(v, "busy_rounds", 0);
	char cpp[32] = "-", burst[32] = "-", pct[32] = "-";
	const char *extra[6] = {"cycles/packet", cpp, "mean burst", burst, "busy rounds", pct};

	/* Derived: busy_cycles / packets is the datapath's cost per packet. */
	if (packets) {
		snprintf(cpp, sizeof(cpp), "%.1f", (double)cycles / packets);
		if (bursts)
			snprintf(burst, sizeof(burst), "%.1f", (double)packets / bursts);
	}
	if (iter)
		snprintf(pct, sizeof(pct), "%.1f%%", 100.0 * busy / iter);
	print_kv_extra(v, extra, 3);
}

static void
stats_latency(const struct sl_ctl_json *v)
{
	static const char *const heads[] = {"class", "count", "mean",  "p50",
	                                    "p90",   "p99",   "p99.9", "max"};
	static const char *const keys[] = {"mean_ns", "p50_ns",  "p90_ns",
	                                   "p99_ns",  "p999_ns", "max_ns"};
	struct sl_ctl_table *t;
	char buf[64];

	if (sl_ctl_table_create(heads, 8, "lrrrrrrr", &t) < 0)
		return;
	for (const struct sl_ctl_json *c = v->child; c; c = c->next) {
		if (c->type != SL_CTL_JSON_OBJECT)
			continue;
		sl_ctl_table_add(t, c->key);
		fmt_member(c, "count", buf, sizeof(buf));
		sl_ctl_table_add(t, buf);
		for (unsigned k = 0; k < SL_ARRAY_SIZE(keys); k++) {
			uint64_t ns;
			if (sl_ctl_json_u64(sl_ctl_json_get(c, keys[k]), &ns))
				fmt_ns(ns, buf, sizeof(buf));
			else
				snprintf(buf, sizeof(buf), "-");
			sl_ctl_table_add(t, buf);
		}
	}
	sl_ctl_table_print(t, stdout, 0);
	sl_ctl_table_destroy(t);
}

static const struct stats_section {
	const char *what;
	const char *cmd;
	void (*print)(const struct sl_ctl_json *v);
} sections[] = {
    {"info", "/sluice/info", stats_info},
    {"ports", "/sluice/ports", stats_ports},
    {"tables", "/sluice/tables", stats_tables},
    {"drops", "/sluice/drops", stats_drops},
    {"datapath", "/sluice/datapath", stats_datapath},
    {"latency", "/sluice/latency", stats_latency},
    {"controller", "/sluice/controller", NULL}, /* key/value */
    {"flow_cache", "/sluice/flow_cache", NULL}, /* key/value */
    {"ffp", "/sluice/ffp", stats_ffp},          /* fast forwarding path (issue 6) */
};

static int
cmd_stats(const char *what)
{
	struct sl_ctl_tel *t;
	int ex, worst = 0;
	bool all = strcmp(what, "all") == 0, found = false;

	for (unsigned i = 0; i < SL_ARRAY_SIZE(sections); i++)
		found |= strcmp(sections[i].what, what) == 0;
	if (!all && !found)
		return usage_error("stats: unknown section '%s' (expected ports, tables, drops, "
		                   "datapath, latency, controller, flow_cache, ffp, info or all)",
		                   what);
	if ((ex = tel_connect(&t)) != 0)
		return ex;
	if (o.json && all)
		sl_ctl_jw_object_begin(&jw, NULL);
	for (unsigned i = 0; i < SL_ARRAY_SIZE(sections); i++) {
		const struct stats_section *s = &sections[i];
		struct sl_ctl_json_doc *doc;
		const struct sl_ctl_json *v;

		if (!all && strcmp(s->what, what) != 0)
			continue;
		if (all && strcmp(s->what, "ffp") == 0)
			continue; /* only on request: 'stats all' keeps its sections */
		ex = tel_get(t, s->cmd, NULL, &doc, &v);
		if (ex) {
			worst = worst ? worst : ex;
			if (ex == EXIT_UNREACHABLE)
				break;
			continue;
		}
		if (o.json) {
			sl_ctl_jw_json(&jw, all ? s->what : NULL, v);
		} else {
			if (all)
				printf("%s== %s ==\n", i ? "\n" : "", s->what);
			if (s->print)
				s->print(v);
			else
				print_kv(v);
		}
		sl_ctl_json_free(doc);
	}
	if (o.json && all)
		sl_ctl_jw_object_end(&jw);
	sl_ctl_tel_close(t);
	return worst;
}

/*
 * monitor
 */

static volatile sig_atomic_t stop_signal;

static void
on_stop(int sig)
{
	stop_signal = sig;
}

/* One sample of the counters monitor shows. */
struct sample {
	double t; /* monotonic seconds */
	struct sl_ctl_json_doc *info, *ports, *tables, *drops, *dp;
	const struct sl_ctl_json *vinfo, *vports, *vtables, *vdrops, *vdp;
};

static void
sample_free(struct sample *s)
{
	sl_ctl_json_free(s->info);
	sl_ctl_json_free(s->ports);
	sl_ctl_json_free(s->tables);
	sl_ctl_json_free(s->drops);
	sl_ctl_json_free(s->dp);
	memset(s, 0, sizeof(*s));
}

static double
mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
sample_take(struct sl_ctl_tel *t, struct sample *s)
{
	int ex;

	memset(s, 0, sizeof(*s));
	s->t = mono_now();
	if ((ex = tel_get(t, "/sluice/info", NULL, &s->info, &s->vinfo)) ||
	    (ex = tel_get(t, "/sluice/ports", NULL, &s->ports, &s->vports)) ||
	    (ex = tel_get(t, "/sluice/tables", NULL, &s->tables, &s->vtables)) ||
	    (ex = tel_get(t, "/sluice/drops", NULL, &s->drops, &s->vdrops)) ||
	    (ex = tel_get(t, "/sluice/datapath", NULL, &s->dp, &s->vdp))) {
		sample_free(s);
		return ex;
	}
	return 0;
}

/* Rate of counter @key of @now vs @then over @dt seconds; 0 when it went backwards. */
static double
rate(const struct sl_ctl_json *now, const struct sl_ctl_json *then, const char *key, double dt)
{
	uint64_t a = sl_ctl_json_get_u64(now, key, 0), b = sl_ctl_json_get_u64(then, key, 0);

	return a >= b && dt > 0 ? (double)(a - b) / dt : 0;
}

static void
monitor_print(const struct sample *cur, const struct sample *prev, bool tty)
{
	const struct sl_ctl_json *rows[1024];
	double dt = cur->t - prev->t;
	char a[32], b[32], c[32], d[32], e[32], name[32], when[64];
	time_t now = time(NULL);
	struct tm tm;
	size_t n;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	fmt_member(cur->vinfo, "name", name, sizeof(name));
	fmt_uptime(sl_ctl_json_get_u64(cur->vinfo, "uptime_ms", 0), a, sizeof(a));
	fmt_member(cur->vinfo, "datapath_id", b, sizeof(b));
	printf("%s  dpid %s  up %s  %s%s\n", name, b, a, when, tty ? "  (q: quit)" : "");

	printf("\n%4s %-15s %9s %9s %9s %9s %10s\n", "PORT", "NAME", "RX pps", "RX Mbps", "TX pps",
	       "TX Mbps", "TX drop/s");
	n = sorted_entries(cur->vports, rows, SL_ARRAY_SIZE(rows));
	for (size_t i = 0; i < n; i++) {
		const struct sl_ctl_json *p = rows[i];
		const struct sl_ctl_json *q = sl_ctl_json_get(prev->vports, p->key);
		char key[8];

		sl_ctl_sanitize(key, sizeof(key), p->key, strlen(p->key));
		fmt_member(p, "name", name, sizeof(name));
		sl_ctl_fmt_si(rate(p, q, "rx_packets", dt), a, sizeof(a));
		snprintf(b, sizeof(b), "%.1f", rate(p, q, "rx_bytes", dt) * 8 / 1e6);
		sl_ctl_fmt_si(rate(p, q, "tx_packets", dt), c, sizeof(c));
		snprintf(d, sizeof(d), "%.1f", rate(p, q, "tx_bytes", dt) * 8 / 1e6);
		sl_ctl_fmt_si(rate(p, q, "tx_dropped", dt), e, sizeof(e));
		printf("%4s %-15.15s %9s %9s %9s %9s %10s\n", key, name, a, b, c, d, e);
	}

	printf("\n%5s %-15s %8s %10s %10s\n", "TABLE", "NAME", "FLOWS", "LOOKUP/s", "MATCH/s");
	n = sorted_entries(cur->vtables, rows, SL_ARRAY_SIZE(rows));
	for (size_t i = 0; i < n; i++) {
		const struct sl_ctl_json *p = rows[i];
		const struct sl_ctl_json *q = sl_ctl_json_get(prev->vtables, p->key);
		char key[8];

		sl_ctl_sanitize(key, sizeof(key), p->key, strlen(p->key));
		fmt_member(p, "name", name, sizeof(name));
		fmt_member(p, "flows", c, sizeof(c));
		sl_ctl_fmt_si(rate(p, q, "lookups", dt), a, sizeof(a));
		sl_ctl_fmt_si(rate(p, q, "matched", dt), b, sizeof(b));
		printf("%5s %-15.15s %8s %10s %10s\n", key, name[0] ? name : "-", c, a, b);
	}

	{
		/* Drops per second by reason, non-zero ones on as few lines as fit 80 columns. */
		size_t col = printf("\nDROPS/s:");
		bool any = false;
		for (const struct sl_ctl_json *m = cur->vdrops->child; m; m = m->next) {
			double r;
			char item[64], key[32];
			if (strcmp(m->key, "total") == 0 || m->type != SL_CTL_JSON_NUMBER)
				continue;
			r = rate(cur->vdrops, prev->vdrops, m->key, dt);
			if (r <= 0)
				continue;
			sl_ctl_sanitize(key, sizeof(key), m->key, m->key_len);
			snprintf(item, sizeof(item), " %s %s", key, sl_ctl_fmt_si(r, a, sizeof(a)));
			if (col + strlen(item) > 79) {
				printf("\n        ");
				col = 8;
			}
			col += (size_t)printf("%s", item);
			any = true;
		}
		printf("%s\n", any ? "" : " none");
	}
	{
		/* Per-packet ratios from the counter deltas (dt = 1), not from rates, so
		 * the same counters always print the same figures. */
		double pk = rate(cur->vdp, prev->vdp, "packets", 1.0);
		double cy = rate(cur->vdp, prev->vdp, "busy_cycles", 1.0);
		double bu = rate(cur->vdp, prev->vdp, "bursts", 1.0);
		sl_ctl_fmt_si(rate(cur->vdp, prev->vdp, "packets", dt), a, sizeof(a));
		if (pk > 0)
			printf("DATAPATH: %s pkt/s, %.1f cycles/pkt, burst %.1f\n", a, cy / pk,
			       bu > 0 ? pk / bu : 0.0);
		else
			printf("DATAPATH: 0 pkt/s, - cycles/pkt (idle)\n");
	}
}

static void
monitor_json(const struct sample *cur, const struct sample *prev)
{
	const struct sl_ctl_json *rows[1024];
	double dt = cur->t - prev->t;
	size_t n;

	sl_ctl_jw_object_begin(&jw, NULL);
	sl_ctl_jw_double(&jw, "time", (double)time(NULL));
	sl_ctl_jw_double(&jw, "interval", dt);
	sl_ctl_jw_json(&jw, "name", sl_ctl_json_get(cur->vinfo, "name"));
	sl_ctl_jw_json(&jw, "datapath_id", sl_ctl_json_get(cur->vinfo, "datapath_id"));
	sl_ctl_jw_json(&jw, "uptime_ms", sl_ctl_json_get(cur->vinfo, "uptime_ms"));
	sl_ctl_jw_object_begin(&jw, "ports");
	n = sorted_entries(cur->vports, rows, SL_ARRAY_SIZE(rows));
	for (size_t i = 0; i < n; i++) {
		const struct sl_ctl_json *q = sl_ctl_json_get(prev->vports, rows[i]->key);
		sl_ctl_jw_object_begin(&jw, rows[i]->key);
		sl_ctl_jw_json(&jw, "name", sl_ctl_json_get(rows[i], "name"));
		sl_ctl_jw_double(&jw, "rx_pps", rate(rows[i], q, "rx_packets", dt));
		sl_ctl_jw_double(&jw, "rx_mbps", rate(rows[i], q, "rx_bytes", dt) * 8 / 1e6);
		sl_ctl_jw_double(&jw, "tx_pps", rate(rows[i], q, "tx_packets", dt));
		sl_ctl_jw_double(&jw, "tx_mbps", rate(rows[i], q, "tx_bytes", dt) * 8 / 1e6);
		sl_ctl_jw_double(&jw, "tx_dropped_pps", rate(rows[i], q, "tx_dropped", dt));
		sl_ctl_jw_object_end(&jw);
	}
	sl_ctl_jw_object_end(&jw);
	sl_ctl_jw_object_begin(&jw, "tables");
	n = sorted_entries(cur->vtables, rows, SL_ARRAY_SIZE(rows));
	for (size_t i = 0; i < n; i++) {
		const struct sl_ctl_json *q = sl_ctl_json_get(prev->vtables, rows[i]->key);
		sl_ctl_jw_object_begin(&jw, rows[i]->key);
		sl_ctl_jw_json(&jw, "name", sl_ctl_json_get(rows[i], "name"));
		sl_ctl_jw_json(&jw, "flows", sl_ctl_json_get(rows[i], "flows"));
		sl_ctl_jw_double(&jw, "lookups_per_sec", rate(rows[i], q, "lookups", dt));
		sl_ctl_jw_double(&jw, "matched_per_sec", rate(rows[i], q, "matched", dt));
		sl_ctl_jw_object_end(&jw);
	}
	sl_ctl_jw_object_end(&jw);
	sl_ctl_jw_object_begin(&jw, "drops_per_sec");
	for (const struct sl_ctl_json *m = cur->vdrops->child; m; m = m->next)
		if (m->type == SL_CTL_JSON_NUMBER && m->key_len == strlen(m->key))
			sl_ctl_jw_double(&jw, m->key, rate(cur->vdrops, prev->vdrops, m->key, dt));
	sl_ctl_jw_object_end(&jw);
	{
		double pk = rate(cur->vdp, prev->vdp, "packets", dt);
		double cy = rate(cur->vdp, prev->vdp, "busy_cycles", dt);
		sl_ctl_jw_object_begin(&jw, "datapath");
		sl_ctl_jw_double(&jw, "packets_per_sec", pk);
		if (pk > 0)
			sl_ctl_jw_double(&jw, "cycles_per_packet", cy / pk);
		else
			sl_ctl_jw_null(&jw, "cycles_per_packet");
		sl_ctl_jw_object_end(&jw);
	}
	sl_ctl_jw_object_end(&jw);
}

/* Sleep @sec seconds unless a stop signal (or 'q' on a tty) comes first; false to stop. */
static bool
monitor_sleep(double sec, bool tty)
{
	double end = mono_now() + sec;

	while (!stop_signal) {
		double left = end - mono_now();
		struct timespec ts;

		if (left <= 0)
			return true;
		if (tty) {
			/* Poll stdin for 'q' in 100 ms steps. */
			fd_set rfds;
			struct timeval tv = {0, (suseconds_t)(SL_MIN(left, 0.1) * 1e6)};
			char ch;
			FD_ZERO(&rfds);
			FD_SET(STDIN_FILENO, &rfds);
			if (select(STDIN_FILENO + 1, &rfds, NULL, NULL, &tv) > 0 &&
			    read(STDIN_FILENO, &ch, 1) == 1 && (ch == 'q' || ch == 'Q'))
				return false;
			continue;
		}
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
	return false;
}

static struct termios saved_tio;
static bool tio_saved;
static bool cursor_hidden;

static void
terminal_restore(void)
{
	/* Cursor back on, and the terminal's line mode as it was. */
	if (cursor_hidden) {
		fputs("\033[?25h", stdout);
		fflush(stdout);
		cursor_hidden = false;
	}
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	tio_saved = false;
}

static int
cmd_monitor(void)
{
	struct sample prev, cur;
	struct sl_ctl_tel *t;
	struct sigaction sa;
	double interval = 1.0;
	uint64_t count = 0, done = 0;
	bool tty = !o.json && isatty(STDOUT_FILENO);
	int ex;

	if (o.interval && !parse_seconds(o.interval, 0.1, 3600, &interval))
		return usage_error("monitor: bad --interval '%s' (expected 0.1..3600 seconds)",
		                   o.interval);
	if (o.count && !parse_u64(o.count, 1, UINT32_MAX, &count))
		return usage_error("monitor: bad --count '%s' (expected a positive integer)",
		                   o.count);
	if ((ex = tel_connect(&t)) != 0)
		return ex;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a signal ends the sleep at once. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (tty) {
		if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
			struct termios raw = saved_tio;
			/* Keys without Enter and without echo; ISIG keeps Ctrl-C a signal. */
			raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
			raw.c_cc[VMIN] = 0;
			raw.c_cc[VTIME] = 0;
			if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0)
				tio_saved = true;
		}
		fputs("\033[?25l", stdout);
		cursor_hidden = true;
		atexit(terminal_restore);
	}
	if (o.json)
		sl_ctl_jw_array_begin(&jw, NULL);

	if ((ex = sample_take(t, &prev)) != 0)
		goto out;
	while (!stop_signal && (count == 0 || done < count)) {
		if (!monitor_sleep(interval, tty))
			break;
		if ((ex = sample_take(t, &cur)) != 0)
			break;
		if (o.json) {
			monitor_json(&cur, &prev);
		} else {
			if (tty)
				fputs("\033[H\033[J", stdout); /* home, clear to the end */
			else if (done)
				fputc('\n', stdout);
			monitor_print(&cur, &prev, tty);
		}
		fflush(stdout);
		sample_free(&prev);
		prev = cur;
		done++;
	}
	sample_free(&prev);
out:
	if (o.json)
		sl_ctl_jw_array_end(&jw);
	if (tty)
		terminal_restore();
	sl_ctl_tel_close(t);
	return ex;
}

/*
 * capture, log, telemetry
 */

static void
print_kv_top(const struct sl_ctl_json *v)
{
	print_kv(v);
}

/* trace: the report's lines; a piece starting with '+' continues the line before. */
static void
print_trace(const struct sl_ctl_json *v)
{
	const struct sl_ctl_json *lines = sl_ctl_json_get(v, "lines");
	bool open = false;

	for (const struct sl_ctl_json *e = lines ? lines->child : NULL; e; e = e->next) {
		if (e->type != SL_CTL_JSON_STRING)
			continue;
		if (e->str[0] == '+') {
			fputs(e->str + 1, stdout);
			continue;
		}
		if (open)
			putchar('\n');
		fputs(e->str, stdout);
		open = true;
	}
	if (open)
		putchar('\n');
}

static int tel_simple(const char *cmd, const char *params,
                      void (*print)(const struct sl_ctl_json *));

static const struct sl_ctl_json *
json_get_u(const struct sl_ctl_json *v, const char *key, uint64_t *out)
{
	const struct sl_ctl_json *e = sl_ctl_json_get(v, key);

	*out = e != NULL && e->type == SL_CTL_JSON_NUMBER && e->is_int ? e->u : 0;
	return e;
}

static double
mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * trace --live N [PORT]: arm a live trace, poll its state until N packets
 * are traced or --timeout passes, print each packet's report, stop it.
 */
static int
cmd_trace_live(const char *port)
{
	struct sl_ctl_json_doc *doc;
	const struct sl_ctl_json *v;
	struct sl_ctl_tel *t;
	uint64_t count, id = 0, traced = 0;
	char params[96];
	double deadline;
	int ex;

	if (!parse_u64(o.live, 1, 64, &count))
		return usage_error("trace --live: bad count '%s' (expected 1..64 packets)", o.live);
	if (port != NULL && (!param_ok(port) || strlen(port) > 32 || strchr(port, ' ')))
		return usage_error("trace --live N: then one PORT (a number or name), not '%s'", port);
	snprintf(params, sizeof(params), "count=%" PRIu64 "%s%s", count, port ? ",port=" : "",
	         port ? port : "");
	if ((ex = tel_connect(&t)) != 0)
		return ex;
	if ((ex = tel_get(t, "/sluice/trace/live/start", params, &doc, &v)) != 0)
		goto close;
	json_get_u(v, "id", &id);
	sl_ctl_json_free(doc);
	snprintf(params, sizeof(params), "%" PRIu64, id);
	deadline = mono_s() + o.live_wait;
	for (;;) {
		if ((ex = tel_get(t, "/sluice/trace/live", params, &doc, &v)) != 0)
			goto close;
		json_get_u(v, "traced", &traced);
		sl_ctl_json_free(doc);
		if (traced >= count || mono_s() >= deadline)
			break;
		usleep(50000);
	}
	if (o.json)
		sl_ctl_jw_array_begin(&jw, NULL);
	for (uint64_t i = 0; i < traced; i++) {
		char pp[64];
		snprintf(pp, sizeof(pp), "%" PRIu64 ",%" PRIu64, id, i);
		if ((ex = tel_get(t, "/sluice/trace/live/packet", pp, &doc, &v)) != 0)
			break;
		if (o.json) {
			sl_ctl_jw_json(&jw, NULL, v);
		} else {
			if (i > 0)
				putchar('\n');
			print_trace(v);
		}
		sl_ctl_json_free(doc);
	}
	if (o.json)
		sl_ctl_jw_array_end(&jw);
	if (tel_get(t, "/sluice/trace/live/stop", params, &doc, &v) == 0)
		sl_ctl_json_free(doc);
	if (ex == 0 && traced < count) {
		errmsg("trace --live: %" PRIu64 " of %" PRIu64 " packets arrived%s%s within %g s "
		       "(--timeout)", traced, count, port ? " on port " : "", port ? port : "",
		       o.live_wait);
		ex = EXIT_REFUSED;
	}
close:
	sl_ctl_tel_close(t);
	return ex;
}

/* trace FLOW | trace --hex FRAME [in_port=N] | trace --live N [PORT] */
static int
cmd_trace(const char *text)
{
	char params[1000];

	if (o.live != NULL) {
		if (o.hex != NULL)
			return usage_error("trace: --live and --hex do not go together");
		return cmd_trace_live(text);
	}
	if (o.hex != NULL) {
		unsigned long port = 0;
		char *end;
		if (text != NULL && (strncmp(text, "in_port=", 8) != 0 ||
		                     (port = strtoul(text + 8, &end, 0), *end != '\0') || port == 0))
			return usage_error("trace --hex FRAME: then in_port=N only, not '%s'", text);
		if (snprintf(params, sizeof(params), "hex=%s%s%s", o.hex, text ? "," : "",
		             text ? text : "") >= (int)sizeof(params))
			return usage_error("trace --hex: the frame is too long for one telemetry request "
			                   "(at most about 490 bytes)");
	} else {
		if (text == NULL)
			return usage_error("trace: give a flow (in_port=1,tcp,tp_dst=80) or --hex FRAME");
		if (snprintf(params, sizeof(params), "%s", text) >= (int)sizeof(params))
			return usage_error("trace: flow too long");
	}
	return tel_simple("/sluice/trace", params, print_trace);
}

/* fdb-show: as ovs-appctl fdb/show prints it. */
static void
print_fdb(const struct sl_ctl_json *v)
{
	const struct sl_ctl_json *ents = NULL, *tr = NULL;

	for (const struct sl_ctl_json *m = v->child; m; m = m->next) {
		if (strcmp(m->key, "entries") == 0)
			ents = m;
		else if (strcmp(m->key, "truncated") == 0)
			tr = m;
	}
	printf(" port  VLAN  MAC                Age\n");
	for (const struct sl_ctl_json *e = ents ? ents->child : NULL; e; e = e->next) {
		unsigned port, vlan, age;
		char mac[18];
		if (e->type == SL_CTL_JSON_STRING &&
		    sscanf(e->str, "%u %u %17s %u", &port, &vlan, mac, &age) == 4)
			printf("%5u  %4u  %s  %3u\n", port, vlan, mac, age);
	}
	if (tr != NULL && tr->u != 0)
		printf("(more addresses than listed)\n");
}

static int
tel_simple(const char *cmd, const char *params, void (*print)(const struct sl_ctl_json *))
{
	struct sl_ctl_json_doc *doc;
	const struct sl_ctl_json *v;
	struct sl_ctl_tel *t;
	int ex;

	if ((ex = tel_connect(&t)) != 0)
		return ex;
	ex = tel_get(t, cmd, params, &doc, &v);
	if (ex == 0) {
		if (o.json)
			sl_ctl_jw_json(&jw, NULL, v);
		else
			print(v);
		sl_ctl_json_free(doc);
	}
	sl_ctl_tel_close(t);
	return ex;
}

/* A telemetry parameter value: no ',' (the separator) and printable. */
static bool
param_ok(const char *s)
{
	if (s[0] == '\0')
		return false;
	for (const char *p = s; *p; p++)
		if (*p == ',' || (unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

static int
cmd_capture(int argc, char **argv)
{
	const char *sub = argc > 0 ? argv[0] : NULL;

	if (sub == NULL)
		return usage_error("capture: expected start, stop or status");
	if (strcmp(sub, "start") == 0) {
		char params[SL_CTL_TEL_REQUEST_MAX + 1];
		size_t n;
		uint64_t v;

		if (argc < 2 || argc > 9)
			return usage_error("capture start: expected 1 to 8 PORTs, got %d", argc - 1);
		n = 0;
		for (int i = 1; i < argc; i++) {
			if (!param_ok(argv[i]) || strlen(argv[i]) > 32)
				return usage_error("capture start: bad PORT '%s' (expected a port "
				                   "number or name)",
				                   argv[i]);
			n += (size_t)snprintf(params + n, sizeof(params) - n, "%sport=%s",
			                      i > 1 ? "," : "", argv[i]);
		}
		if (o.dir) {
			if (strcmp(o.dir, "rx") && strcmp(o.dir, "tx") && strcmp(o.dir, "both"))
				return usage_error("capture start: bad --dir '%s' (expected rx, tx "
				                   "or both)",
				                   o.dir);
			n += (size_t)snprintf(params + n, sizeof(params) - n, ",dir=%s", o.dir);
		}
		if (o.file) {
			if (!param_ok(o.file))
				return usage_error("capture start: bad --file '%s' (no commas or "
				                   "control characters)",
				                   o.file);
			n += (size_t)snprintf(params + n, sizeof(params) - n, ",file=%s", o.file);
		}
		if (o.count) {
			if (!parse_u64(o.count, 1, UINT64_MAX, &v))
				return usage_error("capture start: bad --count '%s'", o.count);
			n += (size_t)snprintf(params + n, sizeof(params) - n, ",count=%" PRIu64, v);
		}
		if (o.bytes) {
			if (!parse_u64(o.bytes, 1, UINT64_MAX, &v))
				return usage_error("capture start: bad --bytes '%s'", o.bytes);
			n += (size_t)snprintf(params + n, sizeof(params) - n, ",bytes=%" PRIu64, v);
		}
		if (o.snaplen) {
			if (!parse_u64(o.snaplen, 1, 65535, &v))
				return usage_error("capture start: bad --snaplen '%s' (expected "
				                   "1..65535)",
				                   o.snaplen);
			n += (size_t)snprintf(params + n, sizeof(params) - n, ",snaplen=%" PRIu64,
			                      v);
		}
		if (o.filter) {
			/* Last: the switch takes the rest of the request as the expression. */
			for (const char *c = o.filter; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					return usage_error("capture start: bad --filter (control "
					                   "characters)");
			if (o.filter[0] != '\0')
				n += (size_t)snprintf(params + n, sizeof(params) - n, ",filter=%s",
				                      o.filter);
		}
		if (n >= sizeof(params) || n + strlen("/sluice/capture/start,") > SL_CTL_TEL_REQUEST_MAX)
			return usage_error("capture start: request too long (path or filter too long?)");
		return tel_simple("/sluice/capture/start", params, print_kv_top);
	}
	if (o.dir || o.file || o.count || o.bytes || o.snaplen || o.filter)
		return usage_error("capture %s: --dir, --file, --count, --bytes, --snaplen and "
		                   "--filter belong to 'capture start'",
		                   sub);
	if (argc != 1)
		return usage_error("capture %s: unexpected argument '%s'", sub, argv[1]);
	if (strcmp(sub, "stop") == 0)
		return tel_simple("/sluice/capture/stop", NULL, print_kv_top);
	if (strcmp(sub, "status") == 0)
		return tel_simple("/sluice/capture", NULL, print_kv_top);
	return usage_error("capture: unknown subcommand '%s' (expected start, stop or status)",
	                   sub);
}

static void
print_log(const struct sl_ctl_json *v)
{
	static const char *const heads[] = {"type", "level"};
	struct sl_ctl_table *t;
	char buf[64];

	if (sl_ctl_table_create(heads, 2, "ll", &t) < 0)
		return;
	for (const struct sl_ctl_json *m = v->child; m; m = m->next) {
		sl_ctl_table_add(t, m->key);
		fmt_value(m, buf, sizeof(buf));
		sl_ctl_table_add(t, buf);
	}
	sl_ctl_table_print(t, stdout, 0);
	sl_ctl_table_destroy(t);
}

static int
cmd_log(int argc, char **argv)
{
	char params[256];

	if (argc == 0)
		return tel_simple("/sluice/log", NULL, print_log);
	if (argc != 2)
		return usage_error("log: expected no arguments or TYPE LEVEL");
	if (!param_ok(argv[0]) || strlen(argv[0]) > 100)
		return usage_error("log: bad TYPE '%s'", argv[0]);
	if (!param_ok(argv[1]) || strlen(argv[1]) > 16)
		return usage_error("log: bad LEVEL '%s'", argv[1]);
	snprintf(params, sizeof(params), "%s,%s", argv[0], argv[1]);
	return tel_simple("/sluice/log/level", params, print_log);
}

/* Scalars of the dispatch, then one row per worker (objects keyed "0", "1", ...). */
static void
print_workers(const struct sl_ctl_json *v)
{
	static const char *const heads[] = {"worker",   "packets",  "pl_drops", "tx_drop",
	                                    "dispatched", "ring_full", "ring",     "adj_from",
	                                    "adj_to",   "moves"};
	static const char *const keys[] = {"packets",   "pipeline_dropped", "tx_dropped", "dispatched",
	                                   "ring_full", NULL,               "adjust_from", "adjust_to",
	                                   "moves"};
	struct sl_ctl_table *kv, *t;
	char buf[64];

	if (sl_ctl_table_create(heads, 10, "lrrrrrrrrr", &t) < 0)
		return;
	if (sl_ctl_table_create((const char *const[]){"", ""}, 2, "ll", &kv) < 0) {
		sl_ctl_table_destroy(t);
		return;
	}
	for (const struct sl_ctl_json *m = v->child; m; m = m->next) {
		if (m->type != SL_CTL_JSON_OBJECT) {
			fmt_value(m, buf, sizeof(buf));
			sl_ctl_table_addf(kv, "%s:", m->key);
			sl_ctl_table_add(kv, buf);
			continue;
		}
		sl_ctl_table_add(t, m->key);
		for (unsigned k = 0; k < SL_ARRAY_SIZE(keys); k++) {
			const struct sl_ctl_json *f;
			if (keys[k] == NULL) {
				uint64_t used = 0, size = 0;
				sl_ctl_json_u64(sl_ctl_json_get(m, "ring_used"), &used);
				if (sl_ctl_json_u64(sl_ctl_json_get(m, "ring_size"), &size))
					sl_ctl_table_addf(t, "%" PRIu64 "/%" PRIu64, used, size);
				else
					sl_ctl_table_add(t, "-");
				continue;
			}
			f = sl_ctl_json_get(m, keys[k]);
			if (f != NULL)
				fmt_value(f, buf, sizeof(buf));
			sl_ctl_table_add(t, f != NULL ? buf : "-");
		}
	}
	sl_ctl_table_print(kv, stdout, 0);
	sl_ctl_table_print(t, stdout, 0);
	sl_ctl_table_destroy(kv);
	sl_ctl_table_destroy(t);
}

/* dispatch [SCHEDULER] [THRESHOLD]: show or change the I/O core's scheduler. */
static int
cmd_dispatch(int argc, char **argv)
{
	char params[128];
	size_t n = 0;

	params[0] = '\0';
	for (int i = 0; i < argc; i++) {
		char *end;
		double thr = strtod(argv[i], &end);
		if (end != argv[i] && *end == '\0') {
			if (!(thr >= 0 && thr <= 1))
				return usage_error("dispatch: threshold '%s' outside 0..1", argv[i]);
			n += (size_t)snprintf(params + n, sizeof(params) - n, "%sthreshold=%s",
			                      n ? "," : "", argv[i]);
		} else {
			if (!param_ok(argv[i]) || strlen(argv[i]) > 16)
				return usage_error("dispatch: bad scheduler '%s'", argv[i]);
			n += (size_t)snprintf(params + n, sizeof(params) - n, "%sscheduler=%s",
			                      n ? "," : "", argv[i]);
		}
	}
	return tel_simple("/sluice/dispatch", n ? params : NULL, print_kv_top);
}

/* add-port: "port N (NAME) added"; del-port: "port N (NAME) deleted". */
static void
print_port_change(const struct sl_ctl_json *v, const char *what)
{
	const struct sl_ctl_json *no = sl_ctl_json_get(v, "port_no");
	const struct sl_ctl_json *name = sl_ctl_json_get(v, "name");
	char n[32] = "?", clean[64] = "?";

	if (no != NULL && no->type == SL_CTL_JSON_NUMBER)
		snprintf(n, sizeof(n), "%" PRIu64, no->u);
	if (name != NULL && name->type == SL_CTL_JSON_STRING)
		sl_ctl_sanitize(clean, sizeof(clean), name->str, name->str_len);
	printf("port %s (%s) %s\n", n, clean, what);
}

static void
print_port_added(const struct sl_ctl_json *v)
{
	print_port_change(v, "added");
}

static void
print_port_deleted(const struct sl_ctl_json *v)
{
	print_port_change(v, "deleted");
}

/* add-port DEVARGS [name=NAME] [ofport=N] | del-port NAME|N */
static int
cmd_port(const char *cmd, int argc, char **argv)
{
	char params[SL_CTL_TEL_REQUEST_MAX + 1];
	size_t n = 0;

	if (strcmp(cmd, "del-port") == 0) {
		if (!param_ok(argv[0]))
			return usage_error("del-port: bad port '%s' (a name or a number)", argv[0]);
		return tel_simple("/sluice/port/del", argv[0], print_port_deleted);
	}
	for (int i = 0; i < argc; i++) {
		if (i > 0 && strncmp(argv[i], "name=", 5) != 0 && strncmp(argv[i], "ofport=", 7) != 0)
			return usage_error("add-port: '%s': expected name=NAME or ofport=N after the "
			                   "devargs",
			                   argv[i]);
		if (argv[i][0] == '\0' || strpbrk(argv[i], " \t\n") != NULL)
			return usage_error("add-port: bad argument '%s'", argv[i]);
		n += (size_t)snprintf(params + n, sizeof(params) - n, "%s%s", i ? "," : "", argv[i]);
		if (n >= sizeof(params) - 16) /* the command's name goes in the request too */
			return usage_error("add-port: arguments too long");
	}
	return tel_simple("/sluice/port/add", params, print_port_added);
}

/* dump-queues: one line a queue, as ovs-ofctl queue-stats prints its entries. */
static void
print_queues(const struct sl_ctl_json *v)
{
	for (const struct sl_ctl_json *q = v->child; q != NULL; q = q->next)
		printf("port %" PRIu64 " queue %" PRIu64 ": max_rate=%" PRIu64 " kbit/s burst=%" PRIu64
		       " kbit tx_packets=%" PRIu64 " tx_bytes=%" PRIu64 " tx_errors=%" PRIu64
		       " duration=%.3fs\n",
		       sl_ctl_json_get_u64(q, "port", 0), sl_ctl_json_get_u64(q, "queue", 0),
		       sl_ctl_json_get_u64(q, "max_rate_kbps", 0), sl_ctl_json_get_u64(q, "burst_kbit", 0),
		       sl_ctl_json_get_u64(q, "tx_packets", 0), sl_ctl_json_get_u64(q, "tx_bytes", 0),
		       sl_ctl_json_get_u64(q, "tx_errors", 0),
		       (double)sl_ctl_json_get_u64(q, "age_ms", 0) / 1000);
}

static void
print_queue_set(const struct sl_ctl_json *v)
{
	printf("port %" PRIu64 " queue %" PRIu64 " set\n", sl_ctl_json_get_u64(v, "port", 0),
	       sl_ctl_json_get_u64(v, "queue", 0));
}

static void
print_queue_deleted(const struct sl_ctl_json *v)
{
	printf("port %" PRIu64 " queue %" PRIu64 " deleted\n", sl_ctl_json_get_u64(v, "port", 0),
	       sl_ctl_json_get_u64(v, "queue", 0));
}

/* set-queue PORT QUEUE max_rate=KBPS [burst=KBIT] | del-queue PORT QUEUE */
static int
cmd_queue(const char *cmd, int argc, char **argv)
{
	char params[SL_CTL_TEL_REQUEST_MAX + 1], *end;
	unsigned long port, queue;

	port = strtoul(argv[0], &end, 10);
	if (*end != '\0' || argv[0][0] == '\0' || port == 0 || port > 1024)
		return usage_error("%s: bad port '%s' (1..1024)", cmd, argv[0]);
	queue = strtoul(argv[1], &end, 0);
	if (*end != '\0' || argv[1][0] == '\0' || queue >= UINT32_MAX)
		return usage_error("%s: bad queue '%s' (0..0xfffffffe)", cmd, argv[1]);
	if (strcmp(cmd, "del-queue") == 0) {
		snprintf(params, sizeof(params), "port=%lu,queue=%lu", port, queue);
		return tel_simple("/sluice/queue/del", params, print_queue_deleted);
	}
	size_t n = (size_t)snprintf(params, sizeof(params), "queue=%lu,port=%lu", queue, port);
	for (int i = 2; i < argc; i++) {
		if ((strncmp(argv[i], "max_rate=", 9) != 0 && strncmp(argv[i], "burst=", 6) != 0) ||
		    !param_ok(argv[i]))
			return usage_error("set-queue: '%s': expected max_rate=KBPS or burst=KBIT",
			                   argv[i]);
		n += (size_t)snprintf(params + n, sizeof(params) - n, ",%s", argv[i]);
		if (n >= sizeof(params) - 24)
			return usage_error("set-queue: arguments too long");
	}
	return tel_simple("/sluice/queue/set", params, print_queue_set);
}

static int
cmd_telemetry(const char *request)
{
	struct sl_ctl_json_doc *doc = NULL;
	const struct sl_ctl_json *root, *v = NULL;
	struct sl_ctl_tel *t;
	char err[ERR_MAX], cmd[SL_CTL_TEL_REQUEST_MAX + 1], *reply;
	size_t len;
	int rc, ex = 0;

	if (request[0] != '/' || strlen(request) > SL_CTL_TEL_REQUEST_MAX)
		return usage_error("telemetry: bad command '%s' (expected /CMD[,PARAMS], at most "
		                   "%d bytes)",
		                   request, SL_CTL_TEL_REQUEST_MAX);
	snprintf(cmd, sizeof(cmd), "%s", request);
	cmd[strcspn(cmd, ",")] = '\0';
	if ((ex = tel_connect(&t)) != 0)
		return ex;
	rc = sl_ctl_tel_raw(t, request, &reply, &len, err, sizeof(err));
	sl_ctl_tel_close(t);
	if (rc < 0)
		return tel_failed(request, rc, err);
	if (sl_ctl_json_parse(reply, len, NULL, &doc, err, sizeof(err)) < 0) {
		char clean[256];
		sl_ctl_sanitize(clean, sizeof(clean), reply, len);
		errmsg("%s: the reply is not JSON (%s): %s", request, err, clean);
		free(reply);
		return EXIT_REFUSED;
	}
	free(reply);
	/* Re-written by the JSON writer: valid, and safe for a terminal. */
	root = sl_ctl_json_root(doc);
	sl_ctl_jw_json(&jw, NULL, root);
	v = sl_ctl_json_get(root, cmd);
	if (sl_ctl_json_get(root, "error") ||
	    (v && v->type == SL_CTL_JSON_OBJECT && sl_ctl_json_get(v, "error"))) {
		const struct sl_ctl_json *e = sl_ctl_json_get(root, "error");
		char clean[256];
		if (e == NULL)
			e = sl_ctl_json_get(v, "error");
		fmt_value(e, clean, sizeof(clean));
		errmsg("%s: the switch refused: %s", request, clean);
		ex = EXIT_REFUSED;
	} else if (v == NULL || v->type == SL_CTL_JSON_NULL) {
		errmsg("%s: the switch answered null: unknown command, or it failed", request);
		ex = EXIT_REFUSED;
	}
	sl_ctl_json_free(doc);
	return ex;
}

/*
 * main
 */

enum {
	OPT_TELEMETRY = 256,
	OPT_TIMEOUT,
	OPT_STRICT,
	OPT_ALL,
	OPT_INTERVAL,
	OPT_COUNT,
	OPT_DIR,
	OPT_FILE,
	OPT_BYTES,
	OPT_SNAPLEN,
	OPT_NO_STATS,
	OPT_SORT,
	OPT_RSORT,
	OPT_HEX,
	OPT_LIVE,
	OPT_FILTER,
	OPT_NAMES, /* global, like --json: no per-command bit */
	OPT_NO_NAMES,
};

/* Which per-command options each command takes. */
static const struct {
	const char *cmd;
	bool openflow;          /* needs the OpenFlow target (else telemetry) */
	unsigned opts;          /* bits (1 << (OPT_x - OPT_STRICT)) */
	int min_args, max_args; /* -1: unlimited */
} commands[] = {
    {"show", true, 0, 0, 0},
    {"dump-flows", true,
     (1u << (OPT_NO_STATS - OPT_STRICT)) | (1u << (OPT_SORT - OPT_STRICT)) |
         (1u << (OPT_RSORT - OPT_STRICT)),
     0, -1},
    {"dump-tables", true, 1u << (OPT_ALL - OPT_STRICT), 0, 0},
    {"dump-ports", true, 0, 0, 1},
    {"dump-groups", true, 0, 0, 0},
    {"dump-group-stats", true, 0, 0, 0},
    {"add-group", true, 0, 1, -1},
    {"mod-group", true, 0, 1, -1},
    {"del-groups", true, 0, 0, -1},
    {"dump-meters", true, 0, 0, 0},
    {"meter-stats", true, 0, 0, 0},
    {"meter-features", true, 0, 0, 0},
    {"add-meter", true, 0, 1, -1},
    {"mod-meter", true, 0, 1, -1},
    {"del-meters", true, 0, 0, -1},
    {"add-flow", true, 0, 1, -1},
    {"add-flows", true, 0, 1, 1},
    {"set-fwd-mode", true, 0, 1, -1},
    {"fwd-mode", true, 0, 0, 0},
    {"mod-flows", true, 1u << (OPT_STRICT - OPT_STRICT), 1, -1},
    {"del-flows", true, 1u << (OPT_STRICT - OPT_STRICT), 0, -1},
    {"diff-flows", true, 0, 2, 2},
    {"replace-flows", true, 0, 1, 2},
    {"dump-states", true, 0, 1, 1},
    {"set-state", true, 0, 3, 6},
    {"add-states", true, 0, 1, 1},
    {"del-states", true, 0, 1, 2},
    {"stats", false, 0, 0, 1},
    {"monitor", false, (1u << (OPT_INTERVAL - OPT_STRICT)) | (1u << (OPT_COUNT - OPT_STRICT)), 0,
     0},
    {"capture", false,
     (1u << (OPT_COUNT - OPT_STRICT)) | (1u << (OPT_DIR - OPT_STRICT)) |
         (1u << (OPT_FILE - OPT_STRICT)) | (1u << (OPT_BYTES - OPT_STRICT)) |
         (1u << (OPT_SNAPLEN - OPT_STRICT)) | (1u << (OPT_FILTER - OPT_STRICT)),
     1, 9},
    {"log", false, 0, 0, 2},
    {"workers", false, 0, 0, 0},
    {"fdb-show", false, 0, 0, 0},
    {"save", true, 0, 1, 1},
    {"trace", false, (1u << (OPT_HEX - OPT_STRICT)) | (1u << (OPT_LIVE - OPT_STRICT)), 0, -1},
    {"dispatch", false, 0, 0, 2},
    {"add-port", false, 0, 1, 3},
    {"del-port", false, 0, 1, 1},
    {"set-queue", false, 0, 3, 4},
    {"del-queue", false, 0, 2, 2},
    {"dump-queues", false, 0, 0, 0},
    {"telemetry", false, 0, 1, 1},
};

static const char *const opt_names[] = {"--strict", "--all",   "--interval", "--count",
                                        "--dir",    "--file",  "--bytes",    "--snaplen",
                                        "--no-stats", "--sort", "--rsort",  "--hex",
                                        "--live",   "--filter"};

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"name", required_argument, NULL, 'n'},
	    {"target", required_argument, NULL, 't'},
	    {"telemetry", required_argument, NULL, OPT_TELEMETRY},
	    {"private-key", required_argument, NULL, 'p'},
	    {"certificate", required_argument, NULL, 'c'},
	    {"ca-cert", required_argument, NULL, 'C'},
	    {"json", no_argument, NULL, 'j'},
	    {"timeout", required_argument, NULL, OPT_TIMEOUT},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {"strict", no_argument, NULL, OPT_STRICT},
	    {"all", no_argument, NULL, OPT_ALL},
	    {"interval", required_argument, NULL, OPT_INTERVAL},
	    {"count", required_argument, NULL, OPT_COUNT},
	    {"dir", required_argument, NULL, OPT_DIR},
	    {"file", required_argument, NULL, OPT_FILE},
	    {"bytes", required_argument, NULL, OPT_BYTES},
	    {"snaplen", required_argument, NULL, OPT_SNAPLEN},
	    {"no-stats", no_argument, NULL, OPT_NO_STATS},
	    {"sort", optional_argument, NULL, OPT_SORT},
	    {"rsort", optional_argument, NULL, OPT_RSORT},
	    {"hex", required_argument, NULL, OPT_HEX},
	    {"live", required_argument, NULL, OPT_LIVE},
	    {"filter", required_argument, NULL, OPT_FILTER},
	    {"names", no_argument, NULL, OPT_NAMES},
	    {"no-names", no_argument, NULL, OPT_NO_NAMES},
	    {NULL, 0, NULL, 0},
	};
	unsigned given = 0, ci;
	const char *cmd;
	char *text = NULL;
	double timeout = 5;
	bool timeout_given = false;
	int opt, nargs, ex;
	struct sl_ctl_of *c;

	o.name = SL_CTL_DEFAULT_NAME;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":n:t:jhVO:p:c:C:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			o.name = optarg;
			break;
		case 't':
			o.target = optarg;
			break;
		case OPT_TELEMETRY:
			o.telemetry = optarg;
			break;
		case 'p':
			o.tls.private_key = optarg;
			break;
		case 'c':
			o.tls.certificate = optarg;
			break;
		case 'C':
			o.tls.ca_cert = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case OPT_TIMEOUT:
			timeout_given = true;
			if (!parse_seconds(optarg, 0.001, 3600, &timeout))
				return usage_error(
				    "--timeout: bad value '%s' (expected 0.001..3600 "
				    "seconds)",
				    optarg);
			break;
		case 'O':
			if (strcmp(optarg, "OpenFlow13") != 0)
				return usage_error("-O: unsupported protocol '%s' (Sluice speaks "
				                   "OpenFlow13 only)",
				                   optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("sluicectl %s\n", SL_VERSION);
			return 0;
		case OPT_STRICT:
			o.strict = true;
			given |= 1u << (opt - OPT_STRICT);
			break;
		case OPT_ALL:
			o.all = true;
			given |= 1u << (opt - OPT_STRICT);
			break;
		case OPT_INTERVAL:
		case OPT_COUNT:
		case OPT_DIR:
		case OPT_FILE:
		case OPT_BYTES:
		case OPT_SNAPLEN:
			*(opt == OPT_INTERVAL ? &o.interval
			  : opt == OPT_COUNT  ? &o.count
			  : opt == OPT_DIR    ? &o.dir
			  : opt == OPT_FILE   ? &o.file
			  : opt == OPT_BYTES  ? &o.bytes
			                      : &o.snaplen) = optarg;
			given |= 1u << (opt - OPT_STRICT);
			break;
		case OPT_NO_STATS:
			o.no_stats = true;
			given |= 1u << (opt - OPT_STRICT);
			break;
		case OPT_NAMES:
		case OPT_NO_NAMES:
			o.names = opt == OPT_NAMES;
			break;
		case OPT_HEX:
			o.hex = optarg;
			given |= 1u << (opt - OPT_STRICT);
			break;
		case OPT_FILTER:
			o.filter = optarg;
			given |= 1u << (opt - OPT_STRICT);
			break;
		case OPT_LIVE:
			o.live = optarg;
			given |= 1u << (opt - OPT_STRICT);
			break;
		case OPT_SORT:
		case OPT_RSORT:
			/* ovs-ofctl sorts by any field; priority, its default, is what Sluice offers. */
			if (optarg != NULL && strcmp(optarg, "priority") != 0)
				return usage_error("%s: can sort by priority only (got '%s')",
				                   opt == OPT_SORT ? "--sort" : "--rsort", optarg);
			o.sort = opt == OPT_SORT ? 1 : -1;
			given |= 1u << (opt - OPT_STRICT);
			break;
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("no command given");
	cmd = argv[optind];
	nargs = argc - optind - 1;
	for (ci = 0; ci < SL_ARRAY_SIZE(commands); ci++)
		if (strcmp(commands[ci].cmd, cmd) == 0)
			break;
	if (ci == SL_ARRAY_SIZE(commands))
		return usage_error("unknown command '%s'", cmd);
	for (unsigned b = 0; b < SL_ARRAY_SIZE(opt_names); b++)
		if ((given & (1u << b)) && !(commands[ci].opts & (1u << b)))
			return usage_error("%s: option %s does not apply", cmd, opt_names[b]);
	if (nargs < commands[ci].min_args)
		return usage_error("%s: missing argument", cmd);
	if (commands[ci].max_args >= 0 && nargs > commands[ci].max_args)
		return usage_error("%s: unexpected argument '%s'", cmd,
		                   argv[optind + 1 + commands[ci].max_args]);

	o.timeout_ms = (int)ceil(timeout * 1000);
	/* trace --live waits for packets, --timeout long; each request waits 5 s at most. */
	o.live_wait = timeout_given ? timeout : 10;
	if (o.live != NULL)
		o.timeout_ms = 5000;
	if (commands[ci].openflow) {
		if (o.target == NULL) {
			if (sl_ctl_default_target(o.name, o.target_buf, sizeof(o.target_buf)) < 0)
				return usage_error(
				    "--name: bad instance name '%s' (1..64 characters "
				    "of A-Z a-z 0-9 _ . -)",
				    o.name);
			o.target = o.target_buf;
		}
	}
	/* save reads the table declarations over telemetry: it needs both. */
	if ((!commands[ci].openflow || strcmp(cmd, "save") == 0) && o.telemetry == NULL) {
		if (sl_ctl_default_telemetry(o.name, o.tel_buf, sizeof(o.tel_buf)) < 0)
			return usage_error("--name: bad instance name '%s' (1..64 characters of "
			                   "A-Z a-z 0-9 _ . -)",
			                   o.name);
		o.telemetry = o.tel_buf;
	}
	if (commands[ci].max_args < 0 && nargs > 0 &&
	    (text = join_args(argc, argv, optind + 1)) == NULL) {
		errmsg("out of memory");
		return EXIT_REFUSED;
	}
	sl_ctl_jw_init(&jw, stdout, true);

	/* Commands that check their arguments before connecting. */
	if (strcmp(cmd, "add-flow") == 0) {
		ex = cmd_add_flow("add-flow", text, SL_OFPFC_ADD);
	} else if (strcmp(cmd, "add-group") == 0 || strcmp(cmd, "mod-group") == 0 ||
	           strcmp(cmd, "del-groups") == 0) {
		ex = cmd_group_mod(cmd, text ? text : "");
	} else if (strcmp(cmd, "add-meter") == 0 || strcmp(cmd, "mod-meter") == 0 ||
	           strcmp(cmd, "del-meters") == 0) {
		ex = cmd_meter_mod(cmd, text ? text : "");
	} else if (strcmp(cmd, "mod-flows") == 0) {
		ex = cmd_add_flow("mod-flows", text,
		                  o.strict ? SL_OFPFC_MODIFY_STRICT : SL_OFPFC_MODIFY);
	} else if (strcmp(cmd, "add-flows") == 0) {
		ex = cmd_add_flows(argv[optind + 1]);
	} else if (strcmp(cmd, "set-fwd-mode") == 0) {
		ex = cmd_set_fwd_mode(text);
	} else if (strcmp(cmd, "del-flows") == 0) {
		ex = cmd_del_flows(text ? text : "");
	} else if (strcmp(cmd, "diff-flows") == 0) {
		ex = cmd_diff_flows(argv[optind + 1], argv[optind + 2]);
	} else if (strcmp(cmd, "replace-flows") == 0) {
		ex = cmd_replace_flows(nargs, argv + optind + 1);
	} else if (strcmp(cmd, "add-states") == 0) {
		ex = cmd_add_states(argv[optind + 1]);
	} else if (strcmp(cmd, "set-state") == 0) {
		ex = cmd_set_state(nargs, argv + optind + 1);
	} else if (strcmp(cmd, "del-states") == 0) {
		ex = cmd_del_states(nargs, argv + optind + 1);
	} else if (strcmp(cmd, "stats") == 0) {
		ex = cmd_stats(nargs ? argv[optind + 1] : "all");
	} else if (strcmp(cmd, "monitor") == 0) {
		ex = cmd_monitor();
	} else if (strcmp(cmd, "capture") == 0) {
		ex = cmd_capture(nargs, argv + optind + 1);
	} else if (strcmp(cmd, "log") == 0) {
		ex = cmd_log(nargs, argv + optind + 1);
	} else if (strcmp(cmd, "workers") == 0) {
		ex = tel_simple("/sluice/workers", NULL, print_workers);
	} else if (strcmp(cmd, "trace") == 0) {
		ex = cmd_trace(text);
	} else if (strcmp(cmd, "fdb-show") == 0) {
		ex = tel_simple("/sluice/fdb", NULL, print_fdb);
	} else if (strcmp(cmd, "dispatch") == 0) {
		ex = cmd_dispatch(nargs, argv + optind + 1);
	} else if (strcmp(cmd, "add-port") == 0 || strcmp(cmd, "del-port") == 0) {
		/* Probing a device may take seconds: the switch waits up to 10 s. */
		if (!timeout_given)
			o.timeout_ms = 12000;
		ex = cmd_port(cmd, nargs, argv + optind + 1);
	} else if (strcmp(cmd, "set-queue") == 0 || strcmp(cmd, "del-queue") == 0) {
		ex = cmd_queue(cmd, nargs, argv + optind + 1);
	} else if (strcmp(cmd, "dump-queues") == 0) {
		ex = tel_simple("/sluice/queues", NULL, print_queues);
	} else if (strcmp(cmd, "telemetry") == 0) {
		ex = cmd_telemetry(argv[optind + 1]);
	} else {
		/* Read-only OpenFlow commands: validate, connect, run. */
		if (strcmp(cmd, "dump-flows") == 0) {
			static struct sl_flow_spec fs;
			uint32_t op, og;
			if ((ex = parse_filter("dump-flows", text ? text : "", &fs, &op, &og)))
				goto out;
		}
		if ((ex = of_connect(&c)) != 0)
			goto out;
		if (strcmp(cmd, "show") == 0)
			ex = cmd_show(c);
		else if (strcmp(cmd, "dump-flows") == 0)
			ex = cmd_dump_flows(c, text ? text : "");
		else if (strcmp(cmd, "dump-tables") == 0)
			ex = cmd_dump_tables(c);
		else if (strcmp(cmd, "dump-ports") == 0)
			ex = cmd_dump_ports(c, nargs ? argv[optind + 1] : NULL);
		else if (strcmp(cmd, "dump-states") == 0)
			ex = cmd_dump_states(c, argv[optind + 1]);
		else if (strcmp(cmd, "fwd-mode") == 0)
			ex = cmd_fwd_mode(c);
		else if (strcmp(cmd, "dump-meters") == 0 || strcmp(cmd, "meter-stats") == 0)
			ex = cmd_dump_meters(c);
		else if (strcmp(cmd, "meter-features") == 0)
			ex = cmd_meter_features(c);
		else if (strcmp(cmd, "save") == 0)
			ex = cmd_save(c, argv[optind + 1]);
		else
			ex = cmd_dump_groups(c);
		sl_ctl_of_close(c);
	}
out:
	free(text);
	/* One JSON document on stdout whenever the command produced one. */
	if (jw.depth || jw.done) {
		while (jw.depth && !jw.error) {
			if (jw.is_object[jw.depth - 1])
				sl_ctl_jw_object_end(&jw);
			else
				sl_ctl_jw_array_end(&jw);
		}
		if (sl_ctl_jw_finish(&jw) < 0 && ex == 0) {
			errmsg("writing the JSON output failed");
			ex = EXIT_REFUSED;
		}
	}
	if (fflush(stdout) != 0 && ex == 0)
		ex = EXIT_REFUSED;
	return ex;
}
