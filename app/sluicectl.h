/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl: what its files share (control path; a tool, one thread).
 *
 *   sluicectl.c           main: options, the command lookup and its checks
 *   sluicectl_commands.c  the command table and the --help built from it
 *   sluicectl_util.c      messages and small parsers
 *   sluicectl_of.c        OpenFlow plumbing: connect, multipart, ports, names
 *   sluicectl_tel.c       telemetry plumbing: connect, request, print values
 *   sluicectl_dump.c      show, dump-flows/tables/ports/groups/meters, fwd-mode
 *   sluicectl_flowmod.c   the batch; add/mod/del flows, groups and meters
 *   sluicectl_save.c      save, diff-flows, replace-flows
 *   sluicectl_state.c     state tables
 *   sluicectl_stats.c     stats, monitor
 *   sluicectl_mgmt.c      trace, fdb-show, capture, log, workers, dispatch,
 *                         ports, queues, telemetry
 *
 * A command is one row of sl_ctl_commands[]: its name, synopsis, help, how
 * many arguments and which options it takes, and the function that runs
 * it.  Every command function returns the exit code below; output goes to
 * stdout (text, or with --json one document through the writer jw), errors
 * to stderr through errmsg() and usage_error().
 */
#ifndef SL_SLUICECTL_H
#define SL_SLUICECTL_H

#include "sl_config.h"
#include "../src/core/core.h"
#include "../src/ctl/ctl.h"
#include "../src/flowfile/flowfile.h"
#include "../src/fwd/fwd.h"
#include "../src/ofp/ofp.h"
#include "../src/tls/tls.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes (docs/sluicectl.md): the switch refused, usage, unreachable. */
#define EXIT_REFUSED 1
#define EXIT_USAGE 2
#define EXIT_UNREACHABLE 3

/* Size of every error message buffer. */
#define ERR_MAX 512

/*
 * ============================================================================
 * The command line and the commands
 * ============================================================================
 */

/* Options of the command line (global and per command). */
struct opts {
	const char *name;
	const char *target;
	const char *telemetry;
	struct sl_tls_files tls; /* -p/--private-key, -c/--certificate, -C/--ca-cert */
	bool json;
	int timeout_ms;
	double timeout; /* --timeout SEC as given (trace --live waits that long) */
	bool timeout_given;
	/* Per command; checked against the command after parsing. */
	bool strict;
	bool all;
	const char *interval;
	const char *count;
	const char *dir;
	const char *file;
	const char *bytes;
	const char *snaplen;
	const char *hex;    /* trace --hex FRAME */
	const char *live;   /* trace --live N */
	const char *filter; /* capture start --filter EXPR */
	bool no_stats;      /* dump-flows: no counters (ovs-ofctl --no-stats) */
	int sort;           /* dump-flows: 1 --sort, -1 --rsort (by priority), 0 as sent */
	bool names;         /* --names: port names instead of numbers in flows and groups */
	char target_buf[160];
	char tel_buf[256];
};

/* The options, set by main before a command runs. */
extern struct opts o;
/* The JSON writer on stdout (--json); main closes what a command left open. */
extern struct sl_ctl_jw jw;

/* Options that only some commands take: bit CMD_OPT_x of struct sl_ctl_command.opts. */
enum cmd_opt {
	CMD_OPT_STRICT,
	CMD_OPT_ALL,
	CMD_OPT_INTERVAL,
	CMD_OPT_COUNT,
	CMD_OPT_DIR,
	CMD_OPT_FILE,
	CMD_OPT_BYTES,
	CMD_OPT_SNAPLEN,
	CMD_OPT_NO_STATS,
	CMD_OPT_SORT,
	CMD_OPT_RSORT,
	CMD_OPT_HEX,
	CMD_OPT_LIVE,
	CMD_OPT_FILTER,
	CMD_OPT__MAX,
};

/* Each per-command option as typed ("--strict"), by enum cmd_opt. */
extern const char *const cmd_opt_names[CMD_OPT__MAX];

/* One command as invoked: what a command function gets. */
struct cmd_call {
	const char *name; /* the command */
	int argc;         /* its arguments, within the table's min_args..max_args */
	char **argv;
	const char *text; /* commands with max_args -1: the arguments joined with
	                     spaces (flow syntax), NULL when there are none */
};

/* What a command needs resolved before it runs (bits). */
#define CMD_NEEDS_OPENFLOW 1u  /* the OpenFlow target (--name, --target) */
#define CMD_NEEDS_TELEMETRY 2u /* the telemetry socket (--name, --telemetry) */

/* Which heading of --help a command is listed under. */
enum cmd_section {
	CMD_SECTION_OPENFLOW,
	CMD_SECTION_TELEMETRY,
};

struct sl_ctl_command {
	const char *name;
	const char *args; /* the synopsis after the name, as --help prints it */
	const char *help; /* what it does, lines split by '\n'; a leading '\n'
	                               starts it below the synopsis; NULL: none */
	enum cmd_section section;
	unsigned needs;         /* CMD_NEEDS_* */
	unsigned opts;          /* bits 1u << CMD_OPT_x it accepts */
	int min_args, max_args; /* max -1: any number, joined into cmd_call.text */
	int timeout_ms;         /* when no --timeout is given; 0: the default (5 s) */
	/* One of the two: run on its own, or on a connection main opened (and closes). */
	int (*run)(const struct cmd_call *a);
	int (*run_of)(struct sl_ctl_of *c, const struct cmd_call *a);
	/* A second form (capture stop, trace --live), listed on the line after the
	   first's help as "  NAME ARGS2" and HELP2 the same way; NULL: none. */
	const char *args2, *help2;
};

/* Every command, in --help order. */
extern const struct sl_ctl_command sl_ctl_commands[];
extern const size_t sl_ctl_n_commands;

/* The command called @name, or NULL. */
const struct sl_ctl_command *sl_ctl_command_find(const char *name);

/* Print --help: the options, then every command of the table. */
void usage(FILE *f);

/*
 * ============================================================================
 * Messages and small parsers (sluicectl_util.c)
 * ============================================================================
 */

/* "sluicectl: MESSAGE" on stderr (stdout flushed first). */
void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "sluicectl: MESSAGE" and the --help hint on stderr; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A decimal or 0x integer in [lo, hi]; false if @s is anything else. */
bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* A number of seconds in [lo, hi]. */
bool parse_seconds(const char *s, double lo, double hi, double *out);
/* argv[from..argc) joined with spaces (malloc'ed; NULL out of memory). */
char *join_args(int argc, char **argv, int from);
/* Seconds on the monotonic clock (monitor's intervals, trace --live's wait). */
double mono_now(void);

/*
 * ============================================================================
 * OpenFlow plumbing (sluicectl_of.c)
 * ============================================================================
 */

/* Connect to o.target (TLS for ssl:); 0 or the exit code, the failure printed. */
int of_connect(struct sl_ctl_of **c);
/* Exit code for a failed request or batch (after connecting), the failure printed. */
int of_failed(const char *what, int rc, const char *err);
/* Send one multipart request (body from @req) and feed every reply message to @fn. */
int of_multipart(struct sl_ctl_of *c, struct sl_ofp_mp_request *req, sl_ctl_of_reply_fn fn,
		 void *arg, struct sl_ofp_error *refused, char *err, size_t err_size);

/*
 * A multipart reply decoded entry by entry: mp_reply (a sl_ctl_of_reply_fn
 * with a struct mp_ctx argument) checks the type and calls @entry for each
 * entry.  @entry returns 0, -1 for a malformed entry (described by @e) or
 * another negative errno with a message in @err.
 */
struct mp_ctx {
	uint16_t type;
	char *err; /* ERR_MAX bytes */
	int (*entry)(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
		     struct sl_ofp_error *e);
	void *user;
};

int mp_reply(void *arg, const uint8_t *msg, size_t len);
/* For an entry callback out of memory: the message in @m's error; returns -ENOMEM. */
int mp_oom(struct mp_ctx *m);

/* The switch's ports (port descriptions), a vector (core.h sl_vec). */
struct port_list {
	struct sl_ofp_port_desc *v;
	size_t n, cap;
};

int get_ports(struct sl_ctl_of *c, struct port_list *pl, char *err);
/* The name of port @port_no in @pl, or NULL. */
const char *port_name_of(const struct port_list *pl, uint32_t port_no);

/*
 * Port names (ovs-ofctl --names): read once, when first needed, over @c or
 * (NULL) a connection of their own; 0 or the exit code of a failed read.
 */
int portmap_load(struct sl_ctl_of *c);
/* The exit code of a failed read of the names, else 0: a parse that needed
 * a name failed for that reason, not for its syntax. */
int portmap_error(void);
/* Names read in every flow, filter and group. */
extern const struct sl_port_names in_names;
/* Names printed: &in_names with --names, else NULL (numbers). */
const struct sl_port_names *out_names(void);

/*
 * ============================================================================
 * OpenFlow reads that save reuses (sluicectl_dump.c)
 * ============================================================================
 */

/* Lines printed once a reply is complete (dump-flows --sort, save). */
struct flow_lines {
	struct flow_line {
		uint16_t priority;
		size_t seq; /* reply order: equal priorities keep it */
		char *text;
	} * v;
	size_t n, cap;
};

int flow_line_keep(struct flow_lines *fl, uint16_t priority, const char *text);
/* Parse a FILTER (dump-flows, del-flows); exit code 0 or EXIT_USAGE. */
int parse_filter(const char *cmd, const char *text, struct sl_flow_spec *fs, uint32_t *out_port,
		 uint32_t *out_group);

struct group_row {
	struct sl_group_spec desc;
	struct sl_ofp_group_stats st;
	bool have_stats;
};

struct group_list {
	struct group_row *v;
	size_t n, cap;
};

/* mp_ctx entry of group descriptions into a struct group_list. */
int group_desc_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
		     struct sl_ofp_error *e);
/* A group in add-groups syntax, as dump-groups prints it and add-group reads it. */
void print_group_line(FILE *f, const struct sl_group_spec *g, const struct sl_port_names *pn);

struct meter_row {
	struct sl_meter_spec spec;
	struct sl_meter_stats st;
	uint32_t dur_sec, dur_nsec;
	bool have_stats;
};

struct meter_list {
	struct meter_row *v;
	size_t n, cap;
};

/* mp_ctx entry of meter configurations into a struct meter_list. */
int meter_config_entry(struct mp_ctx *m, const uint8_t *body, size_t len, size_t *ofs,
		       struct sl_ofp_error *e);
/* sl_ctl_of_reply_fn of an SL_OFPX_FWD_MODE request (@arg a struct sl_fwd_params). */
int fwd_mode_reply(void *arg, const uint8_t *msg, size_t len);

/*
 * ============================================================================
 * Batches of OpenFlow messages (sluicectl_flowmod.c)
 * ============================================================================
 */

struct origin {
	char what[160]; /* "FILE:LINE" or "flow" */
};

/*
 * Messages encoded with xid 0, sent back to back once connected and closed
 * by one barrier; every OFPT_ERROR is matched to its message (and origin)
 * by xid.
 */
struct batch {
	struct sl_ofp_buf msgs;
	SL_VEC(struct origin) origins; /* one per message, in order */
	uint32_t first_xid;            /* after assign_xids */
	const char *display_file;      /* shown instead of the path (stdin) */
	const char *label;             /* origin of messages not from a file: the command */
	unsigned n_refused;
	unsigned declared_at[SL_TABLES_MAX]; /* add-flows: line declaring each table, 0: none */
	SL_VEC(struct sl_queue_spec) queues; /* add-flows: queue lines, set over telemetry after */
};

/* Record the origin of the message just encoded: FILE:LINE, or the label (@file NULL). */
int batch_add_origin(struct batch *b, const char *file, unsigned line);
void flow_mod_init(struct sl_ofp_flow_mod *fm, uint8_t command);
/* Append an SL_OFPX_LL_SET (@command) selecting @fs's flows. */
int ll_set_append_cmd(struct batch *b, uint8_t command, const struct sl_flow_spec *fs, bool strict,
		      const char *file, unsigned line);
/* Flow file loader callback: an OFPFC_ADD (and its LL_SET) in the batch @arg. */
int on_flow(void *arg, const struct sl_flow_spec *fs, struct sl_parse_error *err);
/* Send the batch and the barrier over @c, report refusals; returns the exit code. */
int batch_send(struct batch *b, struct sl_ctl_of *c);
/* Connect, then batch_send(); returns the exit code. */
int run_batch(struct batch *b);
void batch_free(struct batch *b);
/*
 * A batch of the one message just encoded into @b (@rc: what its encoder
 * returned): its origin recorded, sent with run_batch(), and @b freed.
 * Returns run_batch()'s exit code, or, when the message could not be
 * encoded or recorded, that negative errno (nothing sent) for the caller
 * to word.
 */
int batch_run_one(struct batch *b, int rc);

/*
 * ============================================================================
 * Telemetry plumbing (sluicectl_tel.c)
 * ============================================================================
 */

/* Connect to o.telemetry; 0 or the exit code, the failure printed. */
int tel_connect(struct sl_ctl_tel **t);
/* Exit code for a failed telemetry request, the failure printed. */
int tel_failed(const char *cmd, int rc, const char *err);
/* One request: *@doc to free, *@v the reply's value; 0 or the exit code. */
int tel_get(struct sl_ctl_tel *t, const char *cmd, const char *params, struct sl_ctl_json_doc **doc,
	    const struct sl_ctl_json **v);
/* Connect, request, print the value with @print (--json: as it came); the exit code. */
int tel_simple(const char *cmd, const char *params, void (*print)(const struct sl_ctl_json *));
/* A scalar JSON value as text, "-" when absent. */
void fmt_value(const struct sl_ctl_json *v, char *buf, size_t size);
/* Members of @obj that are objects, sorted by numeric key (ports, tables). */
size_t sorted_entries(const struct sl_ctl_json *obj, const struct sl_ctl_json **out, size_t max);
/* Every member of @obj as "key: value" lines, then @n_extra derived (key, value) pairs. */
void print_kv_extra(const struct sl_ctl_json *obj, const char *const *extra, unsigned n_extra);
void print_kv(const struct sl_ctl_json *obj);

/*
 * ============================================================================
 * State tables in save (sluicectl_state.c)
 * ============================================================================
 */

/* Table @table_id's entries as "state" lines of a flow file. */
int save_states(struct sl_ctl_of *c, FILE *f, uint8_t table_id, char *err);

/*
 * ============================================================================
 * The commands (one function each; the table says which is which)
 * ============================================================================
 */

/* sluicectl_dump.c */
int cmd_show(struct sl_ctl_of *c, const struct cmd_call *a);
int cmd_dump_flows(const struct cmd_call *a);
int cmd_dump_tables(struct sl_ctl_of *c, const struct cmd_call *a);
int cmd_dump_ports(struct sl_ctl_of *c, const struct cmd_call *a);
int cmd_dump_groups(struct sl_ctl_of *c, const struct cmd_call *a);
int cmd_dump_meters(struct sl_ctl_of *c, const struct cmd_call *a);
int cmd_meter_features(struct sl_ctl_of *c, const struct cmd_call *a);
int cmd_fwd_mode(struct sl_ctl_of *c, const struct cmd_call *a);
/* sluicectl_flowmod.c */
int cmd_add_flow(const struct cmd_call *a);
int cmd_add_flows(const struct cmd_call *a);
int cmd_mod_flows(const struct cmd_call *a);
int cmd_del_flows(const struct cmd_call *a);
int cmd_group_mod(const struct cmd_call *a);
int cmd_meter_mod(const struct cmd_call *a);
int cmd_set_fwd_mode(const struct cmd_call *a);
/* sluicectl_save.c */
int cmd_save(struct sl_ctl_of *c, const struct cmd_call *a);
int cmd_diff_flows(const struct cmd_call *a);
int cmd_replace_flows(const struct cmd_call *a);
/* sluicectl_state.c */
int cmd_dump_states(struct sl_ctl_of *c, const struct cmd_call *a);
int cmd_set_state(const struct cmd_call *a);
int cmd_add_states(const struct cmd_call *a);
int cmd_del_states(const struct cmd_call *a);
/* sluicectl_stats.c */
int cmd_stats(const struct cmd_call *a);
int cmd_monitor(const struct cmd_call *a);
/* sluicectl_mgmt.c */
int cmd_trace(const struct cmd_call *a);
int cmd_fdb_show(const struct cmd_call *a);
int cmd_capture(const struct cmd_call *a);
int cmd_log(const struct cmd_call *a);
int cmd_workers(const struct cmd_call *a);
int cmd_dispatch(const struct cmd_call *a);
int cmd_port(const struct cmd_call *a);
int cmd_queue(const struct cmd_call *a);
int cmd_dump_queues(const struct cmd_call *a);
int cmd_telemetry(const struct cmd_call *a);

#endif /* SL_SLUICECTL_H */
