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
 *
 * This file parses the options and runs a command of the table in
 * sluicectl_commands.c; sluicectl.h maps the other files.
 */
#include "sluicectl.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* getopt_long values of the long options without a short form. */
enum {
	OPT_TELEMETRY = 256,
	OPT_TIMEOUT,
	OPT_NAMES, /* global, like --json: no per-command bit */
	OPT_NO_NAMES,
	OPT_CMD, /* OPT_CMD + enum cmd_opt: the per-command options */
};

/* Resolve the OpenFlow target and the telemetry socket @cmd needs; 0 or EXIT_USAGE. */
static int
resolve_targets(const struct sl_ctl_command *cmd)
{
	if ((cmd->needs & CMD_NEEDS_OPENFLOW) && o.target == NULL) {
		if (sl_ctl_default_target(o.name, o.target_buf, sizeof(o.target_buf)) < 0)
			return usage_error("--name: bad instance name '%s' (1..64 characters "
					   "of A-Z a-z 0-9 _ . -)",
					   o.name);
		o.target = o.target_buf;
	}
	if ((cmd->needs & CMD_NEEDS_TELEMETRY) && o.telemetry == NULL) {
		if (sl_ctl_default_telemetry(o.name, o.tel_buf, sizeof(o.tel_buf)) < 0)
			return usage_error("--name: bad instance name '%s' (1..64 characters of "
					   "A-Z a-z 0-9 _ . -)",
					   o.name);
		o.telemetry = o.tel_buf;
	}
	return 0;
}

/* Run @cmd: on its own, or on a connection opened for it. */
static int
run_command(const struct sl_ctl_command *cmd, const struct cmd_call *a)
{
	struct sl_ctl_of *c;
	int ex;

	if (cmd->run != NULL)
		return cmd->run(a);
	if ((ex = of_connect(&c)) != 0)
		return ex;
	ex = cmd->run_of(c, a);
	sl_ctl_of_close(c);
	return ex;
}

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
		{"strict", no_argument, NULL, OPT_CMD + CMD_OPT_STRICT},
		{"all", no_argument, NULL, OPT_CMD + CMD_OPT_ALL},
		{"interval", required_argument, NULL, OPT_CMD + CMD_OPT_INTERVAL},
		{"count", required_argument, NULL, OPT_CMD + CMD_OPT_COUNT},
		{"dir", required_argument, NULL, OPT_CMD + CMD_OPT_DIR},
		{"file", required_argument, NULL, OPT_CMD + CMD_OPT_FILE},
		{"bytes", required_argument, NULL, OPT_CMD + CMD_OPT_BYTES},
		{"snaplen", required_argument, NULL, OPT_CMD + CMD_OPT_SNAPLEN},
		{"no-stats", no_argument, NULL, OPT_CMD + CMD_OPT_NO_STATS},
		{"sort", optional_argument, NULL, OPT_CMD + CMD_OPT_SORT},
		{"rsort", optional_argument, NULL, OPT_CMD + CMD_OPT_RSORT},
		{"hex", required_argument, NULL, OPT_CMD + CMD_OPT_HEX},
		{"live", required_argument, NULL, OPT_CMD + CMD_OPT_LIVE},
		{"filter", required_argument, NULL, OPT_CMD + CMD_OPT_FILTER},
		{"names", no_argument, NULL, OPT_NAMES},
		{"no-names", no_argument, NULL, OPT_NO_NAMES},
		{NULL, 0, NULL, 0},
	};
	const struct sl_ctl_command *cmd;
	struct cmd_call call;
	unsigned given = 0;
	char *text = NULL;
	double timeout = 5;
	bool timeout_given = false;
	int opt, ex;

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
		case OPT_NAMES:
		case OPT_NO_NAMES:
			o.names = opt == OPT_NAMES;
			break;
		case OPT_CMD + CMD_OPT_STRICT:
			o.strict = true;
			given |= 1u << CMD_OPT_STRICT;
			break;
		case OPT_CMD + CMD_OPT_ALL:
			o.all = true;
			given |= 1u << CMD_OPT_ALL;
			break;
		case OPT_CMD + CMD_OPT_INTERVAL:
		case OPT_CMD + CMD_OPT_COUNT:
		case OPT_CMD + CMD_OPT_DIR:
		case OPT_CMD + CMD_OPT_FILE:
		case OPT_CMD + CMD_OPT_BYTES:
		case OPT_CMD + CMD_OPT_SNAPLEN:
		case OPT_CMD + CMD_OPT_HEX:
		case OPT_CMD + CMD_OPT_LIVE:
		case OPT_CMD + CMD_OPT_FILTER: {
			const char **value[CMD_OPT__MAX] = {
				[CMD_OPT_INTERVAL] = &o.interval, [CMD_OPT_COUNT] = &o.count,
				[CMD_OPT_DIR] = &o.dir,           [CMD_OPT_FILE] = &o.file,
				[CMD_OPT_BYTES] = &o.bytes,       [CMD_OPT_SNAPLEN] = &o.snaplen,
				[CMD_OPT_HEX] = &o.hex,           [CMD_OPT_LIVE] = &o.live,
				[CMD_OPT_FILTER] = &o.filter,
			};
			*value[opt - OPT_CMD] = optarg;
			given |= 1u << (opt - OPT_CMD);
			break;
		}
		case OPT_CMD + CMD_OPT_NO_STATS:
			o.no_stats = true;
			given |= 1u << CMD_OPT_NO_STATS;
			break;
		case OPT_CMD + CMD_OPT_SORT:
		case OPT_CMD + CMD_OPT_RSORT:
			/* ovs-ofctl sorts by any field; priority, its default, is what Sluice offers. */
			if (optarg != NULL && strcmp(optarg, "priority") != 0)
				return usage_error("%s: can sort by priority only (got '%s')",
						   cmd_opt_names[opt - OPT_CMD], optarg);
			o.sort = opt == OPT_CMD + CMD_OPT_SORT ? 1 : -1;
			given |= 1u << (opt - OPT_CMD);
			break;
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("no command given");
	if ((cmd = sl_ctl_command_find(argv[optind])) == NULL)
		return usage_error("unknown command '%s'", argv[optind]);
	call = (struct cmd_call){
		.name = cmd->name, .argc = argc - optind - 1, .argv = argv + optind + 1};
	for (unsigned b = 0; b < CMD_OPT__MAX; b++)
		if ((given & (1u << b)) && !(cmd->opts & (1u << b)))
			return usage_error("%s: option %s does not apply", cmd->name,
					   cmd_opt_names[b]);
	if (call.argc < cmd->min_args)
		return usage_error("%s: missing argument", cmd->name);
	if (cmd->max_args >= 0 && call.argc > cmd->max_args)
		return usage_error("%s: unexpected argument '%s'", cmd->name,
				   call.argv[cmd->max_args]);

	o.timeout_ms = (int)ceil(timeout * 1000);
	if (cmd->timeout_ms && !timeout_given)
		o.timeout_ms = cmd->timeout_ms;
	o.timeout = timeout;
	o.timeout_given = timeout_given;
	if ((ex = resolve_targets(cmd)) != 0)
		return ex;
	if (cmd->max_args < 0 && call.argc > 0 &&
	    (text = join_args(argc, argv, optind + 1)) == NULL) {
		errmsg("out of memory");
		return EXIT_REFUSED;
	}
	call.text = text;
	sl_ctl_jw_init(&jw, stdout, true);
	ex = run_command(cmd, &call);

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
