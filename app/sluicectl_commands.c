/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl: the command table and the --help built from it (control path).
 * Adding a command is adding a row here (and its line in docs/sluicectl.md:
 * test_sluicectl_commands checks both, and that bash completion offers it).
 */
#include "sluicectl.h"

#include <string.h>

/* Column where --help starts a command's description. */
#define HELP_COLUMN 29

#define OF CMD_SECTION_OPENFLOW, CMD_NEEDS_OPENFLOW
#define TEL CMD_SECTION_TELEMETRY, CMD_NEEDS_TELEMETRY
#define OPT(x) (1u << CMD_OPT_##x)

const char *const cmd_opt_names[CMD_OPT__MAX] = {
	[CMD_OPT_STRICT] = "--strict",     [CMD_OPT_ALL] = "--all",
	[CMD_OPT_INTERVAL] = "--interval", [CMD_OPT_COUNT] = "--count",
	[CMD_OPT_DIR] = "--dir",           [CMD_OPT_FILE] = "--file",
	[CMD_OPT_BYTES] = "--bytes",       [CMD_OPT_SNAPLEN] = "--snaplen",
	[CMD_OPT_NO_STATS] = "--no-stats", [CMD_OPT_SORT] = "--sort",
	[CMD_OPT_RSORT] = "--rsort",       [CMD_OPT_HEX] = "--hex",
	[CMD_OPT_LIVE] = "--live",         [CMD_OPT_FILTER] = "--filter",
};

const struct sl_ctl_command sl_ctl_commands[] = {
	/* OpenFlow commands */
	{"show", "", "switch features and ports", OF, 0, 0, 0, 0, NULL, cmd_show},
	{"dump-flows", "[FILTER]",
	 "flows; FILTER: table=N, cookie=V/M, out_port=P,\n"
	 "out_group=G, match fields (ovs-ofctl syntax);\n"
	 "--no-stats, --sort / --rsort (by priority)",
	 OF, OPT(NO_STATS) | OPT(SORT) | OPT(RSORT), 0, -1, 0, cmd_dump_flows, NULL},
	{"dump-tables", "[--all]", "table counters (tables in use, or all)", OF, OPT(ALL), 0, 0, 0,
	 NULL, cmd_dump_tables},
	{"dump-ports", "[PORT]", "port counters; PORT a number, a name or LOCAL", OF, 0, 0, 1, 0,
	 NULL, cmd_dump_ports},
	{"dump-groups", "", "groups, buckets and their counters", OF, 0, 0, 0, 0, NULL,
	 cmd_dump_groups},
	{"dump-group-stats", "", "the same (ovs-ofctl's name)", OF, 0, 0, 0, 0, NULL,
	 cmd_dump_groups},
	{"add-group", "GROUP",
	 "add a group: \"group_id=1,type=all,bucket=output:2,\n"
	 "bucket=output:3\" (ovs-ofctl add-groups syntax)",
	 OF, 0, 1, -1, 0, cmd_group_mod, NULL},
	{"mod-group", "GROUP", "replace a group's type and buckets", OF, 0, 1, -1, 0, cmd_group_mod,
	 NULL},
	{"del-groups", "[group_id=N]", "delete a group (all without an id)", OF, 0, 0, -1, 0,
	 cmd_group_mod, NULL},
	{"dump-meters", "", "meters, bands and their counters", OF, 0, 0, 0, 0, NULL,
	 cmd_dump_meters},
	{"meter-stats", "", "the same (ovs-ofctl's name)", OF, 0, 0, 0, 0, NULL, cmd_dump_meters},
	{"meter-features", "", "what the switch's meters support", OF, 0, 0, 0, 0, NULL,
	 cmd_meter_features},
	{"add-meter", "METER",
	 "add a meter: \"meter=1,pktps,burst,bands=type=drop,\n"
	 "rate=1000,burst_size=10\" (ovs-ofctl add-meter syntax)",
	 OF, 0, 1, -1, 0, cmd_meter_mod, NULL},
	{"mod-meter", "METER", "replace a meter's flags and bands", OF, 0, 1, -1, 0, cmd_meter_mod,
	 NULL},
	{"del-meters", "[meter=N]", "delete a meter and its flows (all without an id)", OF, 0, 0,
	 -1, 0, cmd_meter_mod, NULL},
	{"add-flow", "FLOW", "add one flow (\"priority=10,ip actions=output:2\")", OF, 0, 1, -1, 0,
	 cmd_add_flow, NULL},
	/* Its queue lines are set over telemetry once the flows are in. */
	{"add-flows", "FILE|-",
	 "add a flow file (table declarations and\n"
	 "fwd-mode= lines too)",
	 CMD_SECTION_OPENFLOW, CMD_NEEDS_OPENFLOW | CMD_NEEDS_TELEMETRY, 0, 1, 1, 0, cmd_add_flows,
	 NULL},
	{"set-fwd-mode", "MODES",
	 "set the forwarding modes (openflow, or e.g.\n"
	 "\"hypercube:addr=5,nbr=4@1;keyflow:key=13\")",
	 OF, 0, 1, -1, 0, cmd_set_fwd_mode, NULL},
	{"fwd-mode", "", "print the forwarding modes", OF, 0, 0, 0, 0, NULL, cmd_fwd_mode},
	{"mod-flows", "[--strict] FLOW", "change the actions of matching flows", OF, OPT(STRICT), 1,
	 -1, 0, cmd_mod_flows, NULL},
	{"del-flows", "[--strict] [FILTER]", "delete flows (all without FILTER)", OF, OPT(STRICT),
	 0, -1, 0, cmd_del_flows, NULL},
	{"diff-flows", "SOURCE1 SOURCE2",
	 "flows only in SOURCE1 (-), only in SOURCE2 (+),\n"
	 "or in both but different; a SOURCE is a flow file\n"
	 "or a switch (a target or an instance name); exit\n"
	 "2 when they differ",
	 OF, 0, 2, 2, 0, cmd_diff_flows, NULL},
	{"replace-flows", "[SWITCH] FILE",
	 "make the switch's flows FILE's: deletes, modifies\n"
	 "and adds only what differs, then a barrier",
	 OF, 0, 1, 2, 0, cmd_replace_flows, NULL},
	{"dump-states", "TABLE", "entries and counters of a state table", OF, 0, 1, 1, 0, NULL,
	 cmd_dump_states},
	{"set-state", "TABLE KEY STATE [idle_ms=N] [hard_ms=N] [rollback=S]",
	 "\nset a flow's state; KEY: exact lookup-scope\n"
	 "fields (\"ip,nw_src=10.0.0.1\")",
	 OF, 0, 3, 6, 0, cmd_set_state, NULL},
	{"add-states", "FILE|-", "set-state arguments, one set per line", OF, 0, 1, 1, 0,
	 cmd_add_states, NULL},
	{"del-states", "TABLE [KEY]", "delete a flow's state (all without KEY)", OF, 0, 1, 2, 0,
	 cmd_del_states, NULL},

	/* Telemetry commands */
	{"stats", "[ports|tables|drops|datapath|latency|controller|flow_cache|ffp|info|all]", NULL,
	 TEL, 0, 0, 1, 0, cmd_stats, NULL},
	/* The description's own leading blank keeps the column --help always had. */
	{"monitor", "[--interval SEC] [--count N]", " live rates (q or Ctrl-C to stop)", TEL,
	 OPT(INTERVAL) | OPT(COUNT), 0, 0, 0, cmd_monitor, NULL},
	{"capture",
	 "start PORT [PORT...] [--dir rx|tx|both] [--file PATH] [--count N]\n"
	 "                [--bytes N] [--snaplen N] [--filter EXPR]",
	 "\nup to 8 ports into one pcapng file; EXPR: a pcap\n"
	 "filter (tcpdump syntax: 'tcp port 80')",
	 TEL, OPT(COUNT) | OPT(DIR) | OPT(FILE) | OPT(BYTES) | OPT(SNAPLEN) | OPT(FILTER), 1, 9, 0,
	 cmd_capture, NULL, .args2 = "stop | capture status"},
	{"log", "[TYPE LEVEL]", "show log levels, or set TYPE (may end in *)", TEL, 0, 0, 2, 0,
	 cmd_log, NULL},
	{"workers", "", "dispatch and per-worker counters", TEL, 0, 0, 0, 0, cmd_workers, NULL},
	{"fdb-show", "", "output:NORMAL's learned addresses (port, VLAN, MAC, age)", TEL, 0, 0, 0,
	 0, cmd_fdb_show, NULL},
	/* --live sets its own timeouts: 5 s a request, --timeout (10 s) for the packets. */
	{"trace", "FLOW | --hex FRAME [in_port=N]",
	 "\none packet through the pipeline, nothing changed: each\n"
	 "table, the entry it wins, the outputs, the verdict",
	 TEL, OPT(HEX) | OPT(LIVE), 0, -1, 0, cmd_trace, NULL, .args2 = "--live N [PORT]",
	 .help2 = "the same for the next N packets received (1..64; only\n"
		  "on PORT, a name or number, if given); waits --timeout\n"
		  "seconds (default 10) and prints what arrived"},
	/* Listed with telemetry; it needs both: the table declarations come over telemetry. */
	{"save", "FILE",
	 "tables, modes, meters, groups and flows as a flow file\n"
	 "(sluice --restore FILE, or add-flows FILE, loads it)",
	 CMD_SECTION_TELEMETRY, CMD_NEEDS_OPENFLOW | CMD_NEEDS_TELEMETRY, 0, 1, 1, 0, NULL,
	 cmd_save},
	/* Probing a device may take seconds: the switch waits up to 10 s. */
	{"add-port", "DEVARGS [name=NAME] [ofport=N]",
	 "\nadd a port at run time (DPDK devargs, as sluice -p);\n"
	 "controllers get a port_status ADD",
	 TEL, 0, 1, 3, 12000, cmd_port, NULL},
	{"del-port", "NAME|N", "delete a port (port_status DELETE); LOCAL stays", TEL, 0, 1, 1,
	 12000, cmd_port, NULL},
	{"set-queue", "PORT QUEUE max_rate=KBPS [burst=KBIT]",
	 "\nadd or change a queue (a max-rate policer that\n"
	 "set_queue:QUEUE selects before output:PORT)",
	 TEL, 0, 3, 4, 0, cmd_queue, NULL},
	{"del-queue", "PORT QUEUE", "delete a queue", TEL, 0, 2, 2, 0, cmd_queue, NULL},
	{"dump-queues", "", "the queues, their rates and counters", TEL, 0, 0, 0, 0,
	 cmd_dump_queues, NULL},
	{"dispatch", "[SCHED] [THRESHOLD]",
	 "show or set the I/O core's scheduler (rr, crc32,\n"
	 "hrw, adaptive, ordered) and load threshold (0..1)",
	 TEL, 0, 0, 2, 0, cmd_dispatch, NULL},
	{"telemetry", "CMD[,PARAMS]", "raw telemetry call, prints the reply", TEL, 0, 1, 1, 0,
	 cmd_telemetry, NULL},
};

const size_t sl_ctl_n_commands = SL_ARRAY_SIZE(sl_ctl_commands);

const struct sl_ctl_command *
sl_ctl_command_find(const char *name)
{
	for (size_t i = 0; i < sl_ctl_n_commands; i++)
		if (strcmp(sl_ctl_commands[i].name, name) == 0)
			return &sl_ctl_commands[i];
	return NULL;
}

/* One form of a command in --help: the synopsis, then the description from HELP_COLUMN on. */
static void
print_form(FILE *f, const char *name, const char *args, const char *help)
{
	int col = fprintf(f, "  %s%s%s", name, args[0] ? " " : "", args);

	if (help != NULL) {
		if (help[0] != '\n')
			fprintf(f, "%*s", col < HELP_COLUMN ? HELP_COLUMN - col : 2, "");
		for (const char *p = help; *p; p++) {
			fputc(*p, f);
			if (*p == '\n')
				fprintf(f, "%*s", HELP_COLUMN, "");
		}
	}
	fputc('\n', f);
}

static void
print_command(FILE *f, const struct sl_ctl_command *c)
{
	print_form(f, c->name, c->args, c->help);
	if (c->args2 != NULL)
		print_form(f, c->name, c->args2, c->help2);
}

void
usage(FILE *f)
{
	static const char *const headings[] = {
		[CMD_SECTION_OPENFLOW] = "OpenFlow commands:\n",
		[CMD_SECTION_TELEMETRY] = "Telemetry commands:\n",
	};

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
		"  -V, --version         print the version\n\n");
	for (size_t s = 0; s < SL_ARRAY_SIZE(headings); s++) {
		fputs(headings[s], f);
		for (size_t i = 0; i < sl_ctl_n_commands; i++)
			if (sl_ctl_commands[i].section == s)
				print_command(f, &sl_ctl_commands[i]);
		fputc('\n', f);
	}
	fprintf(f, "Exit codes: 0 ok, 1 the switch refused (its error is printed), 2 usage or\n"
		   "syntax error, 3 the switch cannot be reached.\n");
}
