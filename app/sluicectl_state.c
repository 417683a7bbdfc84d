/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl: state tables (OpenState): dump-states, set-state, add-states,
 * del-states, and the state lines of save (control path).
 */
#include "sluicectl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * State tables (OpenState): set-state, del-states, dump-states.
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

int
cmd_set_state(const struct cmd_call *a)
{
	static struct sl_ofp_state_mod m;
	struct batch b = {.label = "set-state"};
	int rc;

	if ((rc = parse_state_set("set-state", a->argc, a->argv, &m)))
		return rc;
	sl_ofp_buf_init(&b.msgs);
	rc = batch_run_one(&b, sl_ofp_state_mod_encode(&b.msgs, 0, SL_OFPX_STATE_SET, &m));
	if (rc < 0) {
		errmsg("out of memory");
		return EXIT_REFUSED;
	}
	return rc;
}

/*
 * add-states FILE|-: one "TABLE KEY STATE [idle_ms=N] [hard_ms=N] [rollback=S]"
 * per line ('#' comments, blank lines skipped), checked and encoded before
 * anything is sent, then sent as one batch closed by a barrier.
 */
int
cmd_add_states(const struct cmd_call *a)
{
	const char *path = a->argv[0];
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

int
cmd_del_states(const struct cmd_call *a)
{
	int argc = a->argc;
	char **argv = a->argv;
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
	rc = batch_run_one(&b, sl_ofp_state_mod_encode(&b.msgs, 0, SL_OFPX_STATE_DEL, &m));
	if (rc < 0) {
		errmsg("out of memory");
		return EXIT_REFUSED;
	}
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

int
cmd_dump_states(struct sl_ctl_of *c, const struct cmd_call *a)
{
	const char *table_arg = a->argv[0];
	struct state_dump_ctx d = {0};
	char err[ERR_MAX] = "";
	struct sl_ofp_buf b;
	uint8_t table_id = 0;
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
		       " expired=%" PRIu64 " evicted=%" PRIu64 " refused=%" PRIu64
		       " foreign=%" PRIu64 " bytes=%" PRIu64 "\n",
		       table_id, st->n_entries, st->capacity, st->lookups, st->hits, st->inserts,
		       st->sets, st->deletes, st->expired, st->evicted, st->refused, st->foreign,
		       st->bytes);
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
int
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
