/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl: management over telemetry: trace, fdb-show, capture, log, workers,
 * dispatch, add-port, del-port, queues, and raw telemetry calls (control path).
 */
#include "sluicectl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	uint64_t count, id, traced = 0;
	char params[96];
	double wait, deadline;
	int ex;

	if (!parse_u64(o.live, 1, 64, &count))
		return usage_error("trace --live: bad count '%s' (expected 1..64 packets)", o.live);
	if (port != NULL && (!param_ok(port) || strlen(port) > 32 || strchr(port, ' ')))
		return usage_error("trace --live N: then one PORT (a number or name), not '%s'",
				   port);
	snprintf(params, sizeof(params), "count=%" PRIu64 "%s%s", count, port ? ",port=" : "",
		 port ? port : "");
	/* The packets are waited for --timeout long (10 s by default); each request 5 s at most. */
	wait = o.timeout_given ? o.timeout : 10;
	o.timeout_ms = 5000;
	if ((ex = tel_connect(&t)) != 0)
		return ex;
	if ((ex = tel_get(t, "/sluice/trace/live/start", params, &doc, &v)) != 0)
		goto close;
	id = sl_ctl_json_get_u64(v, "id", 0);
	sl_ctl_json_free(doc);
	snprintf(params, sizeof(params), "%" PRIu64, id);
	deadline = mono_now() + wait;
	for (;;) {
		if ((ex = tel_get(t, "/sluice/trace/live", params, &doc, &v)) != 0)
			goto close;
		traced = sl_ctl_json_get_u64(v, "traced", 0);
		sl_ctl_json_free(doc);
		if (traced >= count || mono_now() >= deadline)
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
		       "(--timeout)",
		       traced, count, port ? " on port " : "", port ? port : "", wait);
		ex = EXIT_REFUSED;
	}
close:
	sl_ctl_tel_close(t);
	return ex;
}

/* trace FLOW | trace --hex FRAME [in_port=N] | trace --live N [PORT] */
int
cmd_trace(const struct cmd_call *a)
{
	const char *text = a->text;
	char params[1000];

	if (o.live != NULL) {
		if (o.hex != NULL)
			return usage_error("trace: --live and --hex do not go together");
		return cmd_trace_live(text);
	}
	if (o.hex != NULL) {
		unsigned long port = 0;
		char *end;
		if (text != NULL &&
		    (strncmp(text, "in_port=", 8) != 0 ||
		     (port = strtoul(text + 8, &end, 0), *end != '\0') || port == 0))
			return usage_error("trace --hex FRAME: then in_port=N only, not '%s'",
					   text);
		if (snprintf(params, sizeof(params), "hex=%s%s%s", o.hex, text ? "," : "",
			     text ? text : "") >= (int)sizeof(params))
			return usage_error(
				"trace --hex: the frame is too long for one telemetry request "
				"(at most about 490 bytes)");
	} else {
		if (text == NULL)
			return usage_error(
				"trace: give a flow (in_port=1,tcp,tp_dst=80) or --hex FRAME");
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

int
cmd_fdb_show(const struct cmd_call *a)
{
	(void)a;
	return tel_simple("/sluice/fdb", NULL, print_fdb);
}

int
cmd_capture(const struct cmd_call *a)
{
	int argc = a->argc;
	char **argv = a->argv;
	const char *sub = argc > 0 ? argv[0] : NULL;

	if (sub == NULL)
		return usage_error("capture: expected start, stop or status");
	if (strcmp(sub, "start") == 0) {
		char params[SL_CTL_TEL_REQUEST_MAX + 1];
		size_t n;
		uint64_t v;

		if (argc < 2 || argc > 9)
			return usage_error("capture start: expected 1 to 8 PORTs, got %d",
					   argc - 1);
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
		if (n >= sizeof(params) ||
		    n + strlen("/sluice/capture/start,") > SL_CTL_TEL_REQUEST_MAX)
			return usage_error(
				"capture start: request too long (path or filter too long?)");
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

int
cmd_log(const struct cmd_call *a)
{
	int argc = a->argc;
	char **argv = a->argv;
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
	static const char *const heads[] = {"worker",     "packets",   "pl_drops", "tx_drop",
					    "dispatched", "ring_full", "ring",     "adj_from",
					    "adj_to",     "moves"};
	static const char *const keys[] = {"packets",     "pipeline_dropped", "tx_dropped",
					   "dispatched",  "ring_full",        NULL,
					   "adjust_from", "adjust_to",        "moves"};
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

int
cmd_workers(const struct cmd_call *a)
{
	(void)a;
	return tel_simple("/sluice/workers", NULL, print_workers);
}

/* dispatch [SCHEDULER] [THRESHOLD]: show or change the I/O core's scheduler. */
int
cmd_dispatch(const struct cmd_call *a)
{
	int argc = a->argc;
	char **argv = a->argv;
	char params[128];
	size_t n = 0;

	params[0] = '\0';
	for (int i = 0; i < argc; i++) {
		char *end;
		double thr = strtod(argv[i], &end);
		if (end != argv[i] && *end == '\0') {
			if (!(thr >= 0 && thr <= 1))
				return usage_error("dispatch: threshold '%s' outside 0..1",
						   argv[i]);
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
int
cmd_port(const struct cmd_call *a)
{
	const char *cmd = a->name;
	int argc = a->argc;
	char **argv = a->argv;
	char params[SL_CTL_TEL_REQUEST_MAX + 1];
	size_t n = 0;

	if (strcmp(cmd, "del-port") == 0) {
		if (!param_ok(argv[0]))
			return usage_error("del-port: bad port '%s' (a name or a number)", argv[0]);
		return tel_simple("/sluice/port/del", argv[0], print_port_deleted);
	}
	for (int i = 0; i < argc; i++) {
		if (i > 0 && strncmp(argv[i], "name=", 5) != 0 &&
		    strncmp(argv[i], "ofport=", 7) != 0)
			return usage_error(
				"add-port: '%s': expected name=NAME or ofport=N after the "
				"devargs",
				argv[i]);
		if (argv[i][0] == '\0' || strpbrk(argv[i], " \t\n") != NULL)
			return usage_error("add-port: bad argument '%s'", argv[i]);
		n += (size_t)snprintf(params + n, sizeof(params) - n, "%s%s", i ? "," : "",
				      argv[i]);
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
		printf("port %" PRIu64 " queue %" PRIu64 ": max_rate=%" PRIu64
		       " kbit/s burst=%" PRIu64 " kbit tx_packets=%" PRIu64 " tx_bytes=%" PRIu64
		       " tx_errors=%" PRIu64 " duration=%.3fs\n",
		       sl_ctl_json_get_u64(q, "port", 0), sl_ctl_json_get_u64(q, "queue", 0),
		       sl_ctl_json_get_u64(q, "max_rate_kbps", 0),
		       sl_ctl_json_get_u64(q, "burst_kbit", 0),
		       sl_ctl_json_get_u64(q, "tx_packets", 0),
		       sl_ctl_json_get_u64(q, "tx_bytes", 0),
		       sl_ctl_json_get_u64(q, "tx_errors", 0),
		       (double)sl_ctl_json_get_u64(q, "age_ms", 0) / 1000);
}

int
cmd_dump_queues(const struct cmd_call *a)
{
	(void)a;
	return tel_simple("/sluice/queues", NULL, print_queues);
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
int
cmd_queue(const struct cmd_call *a)
{
	const char *cmd = a->name;
	int argc = a->argc;
	char **argv = a->argv;
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

int
cmd_telemetry(const struct cmd_call *a)
{
	const char *request = a->argv[0];
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
