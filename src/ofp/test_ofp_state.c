/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Golden tests for the OpenState experimenter messages, the set_state
 * action and the `state` OXM (docs/openflow.md section 12): hex bytes ->
 * decode -> print -> compare, encode -> the same bytes, and every error a
 * malformed variant must give.
 */
#include "ofp.h"

#include <string.h>

#include "../core/sl_test.h"
#include "../flowfile/flowfile.h"

static void
check_bytes(const char *name, const struct sl_ofp_buf *b, const char *want_hex)
{
	sl_test_check_bytes(name, b->data, b->len, want_hex);
}

static bool
is_err(const struct sl_ofp_error *e, uint16_t type, uint16_t code)
{
	return e->type == type && e->code == code;
}

static const char *const set_golden =
	"04 04 00 40 00 00 00 07 53 4c 55 43 00 00 00 0b"
	"00 00 00 00 00 00 00 03 00 00 00 01 00 00 00 64 00 00 00 00 00 00 00 00"
	"00 01 00 12 80 00 0a 02 08 00 80 00 16 04 0a 00 00 01 00 00 00 00 00 00";

static void
test_state_mod(void)
{
	uint8_t m[256];
	size_t n = sl_test_hex(set_golden, m, sizeof(m));
	struct sl_ofp_state_mod sm;
	struct sl_ofp_error e;
	struct sl_ofp_buf b;
	char text[256];

	CHECK(sl_ofp_state_mod_decode(m, n, SL_OFPX_STATE_SET, &sm, &e) == 0, "decode: %s",
	      sl_ofp_error_name(&e));
	sl_flow_format_match(&sm.key, text, sizeof(text));
	CHECK(sm.table_id == 0 && sm.set.state == 3 && sm.set.rollback == 1 &&
		      sm.set.idle_ms == 100 && sm.set.hard_ms == 0 && !sm.all,
	      "fields");
	CHECK(strcmp(text, "ip,nw_src=10.0.0.1") == 0, "key %s", text);
	sl_ofp_buf_init(&b);
	CHECK(sl_ofp_state_mod_encode(&b, 7, SL_OFPX_STATE_SET, &sm) == 0, "encode");
	check_bytes("state set", &b, set_golden);

	/* Errors. */
	CHECK(sl_ofp_state_mod_decode(m, n, SL_OFPX_STATE_DEL, &sm, &e) < 0 &&
		      is_err(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_EXP_TYPE),
	      "set decoded as del");
	m[16] = 254;
	CHECK(sl_ofp_state_mod_decode(m, n, SL_OFPX_STATE_SET, &sm, &e) < 0 &&
		      is_err(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_TABLE_ID),
	      "table 254");
	m[16] = 0;
	m[18] = 1;
	CHECK(sl_ofp_state_mod_decode(m, n, SL_OFPX_STATE_SET, &sm, &e) < 0 &&
		      is_err(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_EPERM),
	      "pad");
	m[18] = 0;
	m[17] = 1;
	CHECK(sl_ofp_state_mod_decode(m, n, SL_OFPX_STATE_SET, &sm, &e) < 0 &&
		      is_err(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_EPERM),
	      "flags on a set");
	m[17] = 0;
	m[3] = 0x38; /* cut inside the match */
	CHECK(sl_ofp_state_mod_decode(m, 0x38, SL_OFPX_STATE_SET, &sm, &e) < 0 &&
		      e.type == SL_OFPET_BAD_MATCH,
	      "truncated match: %s", sl_ofp_error_name(&e));
	m[3] = 0x20;
	CHECK(sl_ofp_state_mod_decode(m, 0x20, SL_OFPX_STATE_SET, &sm, &e) < 0 &&
		      is_err(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN),
	      "no match at all");
	m[3] = 0x40;

	/* Delete all: flag set, match empty. */
	sl_ofp_buf_reset(&b);
	memset(&sm, 0, sizeof(sm));
	sm.table_id = 2;
	sm.all = true;
	CHECK(sl_ofp_state_mod_encode(&b, 8, SL_OFPX_STATE_DEL, &sm) == 0, "encode del");
	check_bytes("state del all", &b,
		    "04 04 00 30 00 00 00 08 53 4c 55 43 00 00 00 0c"
		    "02 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
		    "00 01 00 04 00 00 00 00");
	CHECK(sl_ofp_state_mod_decode(b.data, b.len, SL_OFPX_STATE_DEL, &sm, &e) == 0 && sm.all &&
		      sm.table_id == 2,
	      "decode del all");
	/* DEL_ALL with a key is refused. */
	n = sl_test_hex(set_golden, m, sizeof(m));
	m[15] = 0x0c;
	m[17] = 1;
	m[23] = m[27] = m[31] = 0;
	CHECK(sl_ofp_state_mod_decode(m, n, SL_OFPX_STATE_DEL, &sm, &e) < 0 &&
		      is_err(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_EPERM),
	      "del all with a key");
	sl_ofp_buf_free(&b);
}

static const char *const table_golden = "04 04 00 48 00 00 00 05 53 4c 55 43 00 00 00 0a"
					"00 02 02 00 00 00 03 e8"
					"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
					"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
					"80 00 16 04 80 00 18 04 80 00 18 04 80 00 16 04";

static void
test_state_table(void)
{
	uint8_t m[256];
	size_t n = sl_test_hex(table_golden, m, sizeof(m));
	struct sl_table_spec ts;
	struct sl_ofp_error e;
	struct sl_ofp_buf b;
	char text[256];

	CHECK(sl_ofp_state_table_decode(m, n, &ts, &e) == 0, "decode: %s", sl_ofp_error_name(&e));
	sl_table_spec_format(&ts, text, sizeof(text));
	CHECK(strcmp(text, "table=0,kind=state,lookup=nw_src+nw_dst,update=nw_dst+nw_src,"
			   "size=1000") == 0,
	      "spec %s", text);
	sl_ofp_buf_init(&b);
	CHECK(sl_ofp_state_table_encode(&b, 5, &ts) == 0, "encode");
	check_bytes("state table", &b, table_golden);
	m[18] = 3; /* two lookup and three update fields announced, four ids sent */
	CHECK(sl_ofp_state_table_decode(m, n, &ts, &e) < 0 &&
		      is_err(&e, SL_OFPET_TABLE_MOD_FAILED, SL_OFPTMFC_BAD_CONFIG),
	      "counts do not add up");
	m[18] = 2;
	m[17] = 3; /* three lookup fields: the third id repeats nw_dst */
	CHECK(sl_ofp_state_table_decode(m, n, &ts, &e) < 0 &&
		      is_err(&e, SL_OFPET_BAD_MATCH, SL_OFPBMC_DUP_FIELD),
	      "duplicate field in a scope");
	m[17] = 2;
	m[18] = 1; /* ids left over */
	CHECK(sl_ofp_state_table_decode(m, n, &ts, &e) < 0 &&
		      is_err(&e, SL_OFPET_TABLE_MOD_FAILED, SL_OFPTMFC_BAD_CONFIG),
	      "ids left over");
	m[18] = 2;
	m[17] = 0;
	CHECK(sl_ofp_state_table_decode(m, n, &ts, &e) < 0, "no lookup scope");
	m[17] = 2;
	m[16] = 254;
	CHECK(sl_ofp_state_table_decode(m, n, &ts, &e) < 0 &&
		      is_err(&e, SL_OFPET_TABLE_MOD_FAILED, SL_OFPTMFC_BAD_TABLE),
	      "table 254");
	m[16] = 0;
	memset(m + 24, 'x', 32); /* name without NUL */
	CHECK(sl_ofp_state_table_decode(m, n, &ts, &e) < 0 &&
		      is_err(&e, SL_OFPET_TABLE_MOD_FAILED, SL_OFPTMFC_BAD_CONFIG),
	      "name not terminated");
	sl_ofp_buf_free(&b);
}

static void
test_action_and_oxm(void)
{
	static const char *const action_golden = "ff ff 00 20 53 4c 55 43 00 01 ff 00 00 00 00 05"
						 "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00";
	uint8_t m[128];
	size_t n = sl_test_hex(action_golden, m, sizeof(m));
	struct sl_action acts[SL_ACTIONS_MAX];
	struct sl_ofp_error e;
	struct sl_ofp_buf b;
	uint8_t n_acts;

	CHECK(sl_ofp_actions_decode(m, n, SL_OFP_ACTX_FLOW, NULL, acts, &n_acts, &e) == 0 &&
		      n_acts == 1 && acts[0].type == SL_ACT_SET_STATE &&
		      acts[0].set_state.table_id == SL_STATE_TABLE_AUTO &&
		      acts[0].set_state.set.state == 5,
	      "set_state decode: %s", sl_ofp_error_name(&e));
	sl_ofp_buf_init(&b);
	CHECK(sl_ofp_actions_encode(&b, acts, 1) == 0, "encode");
	check_bytes("set_state action", &b, action_golden);
	m[9] = 2;
	CHECK(sl_ofp_actions_decode(m, n, SL_OFP_ACTX_FLOW, NULL, acts, &n_acts, &e) < 0 &&
		      is_err(&e, SL_OFPET_BAD_ACTION, SL_OFPBAC_BAD_EXP_TYPE),
	      "unknown subtype");
	m[9] = 1;
	m[7] = 0x44;
	CHECK(sl_ofp_actions_decode(m, n, SL_OFP_ACTX_FLOW, NULL, acts, &n_acts, &e) < 0 &&
		      is_err(&e, SL_OFPET_BAD_ACTION, SL_OFPBAC_BAD_EXPERIMENTER),
	      "other experimenter");
	m[7] = 0x43;
	m[10] = 254;
	CHECK(sl_ofp_actions_decode(m, n, SL_OFP_ACTX_FLOW, NULL, acts, &n_acts, &e) < 0 &&
		      is_err(&e, SL_OFPET_BAD_ACTION, SL_OFPBAC_BAD_ARGUMENT),
	      "table 254");
	m[10] = 0;
	m[3] = 0x18;
	CHECK(sl_ofp_actions_decode(m, 0x18, SL_OFP_ACTX_FLOW, NULL, acts, &n_acts, &e) < 0 &&
		      is_err(&e, SL_OFPET_BAD_ACTION, SL_OFPBAC_BAD_LEN),
	      "short");
	m[3] = 0x20;
	m[30] = 1;
	CHECK(sl_ofp_actions_decode(m, n, SL_OFP_ACTX_FLOW, NULL, acts, &n_acts, &e) < 0 &&
		      is_err(&e, SL_OFPET_BAD_ACTION, SL_OFPBAC_BAD_ARGUMENT),
	      "pad");

	/* The state OXM in a match, through the flow syntax. */
	struct sl_flow_spec fs;
	struct sl_parse_error pe;
	struct sl_match back;
	size_t used;
	CHECK(sl_flow_parse("table=1,state=3,ip actions=output:1", &fs, &pe) == 0, "%s", pe.msg);
	sl_ofp_buf_reset(&b);
	CHECK(sl_ofp_match_encode(&b, &fs.match) == 0, "match encode");
	check_bytes("state oxm", &b,
		    "00 01 00 16 ff ff 04 08 53 4c 55 43 00 00 00 03 80 00 0a 02 08 00 00 00");
	CHECK(sl_ofp_match_decode(b.data, b.len, &back, &used, &e) == 0 && back.n_fields == 2,
	      "match decode: %s", sl_ofp_error_name(&e));
	sl_ofp_buf_free(&b);
}

static struct sl_ofp_buf parts;
static unsigned n_parts;

static int
collect(void *arg, const uint8_t *msg, size_t len)
{
	(void)arg;
	CHECK(len <= SL_OFPX_STATE_PART_MAX + 64, "part of %zu bytes", len);
	n_parts++;
	uint8_t *p = realloc(parts.data, parts.len + len);
	SL_VERIFY(p != NULL);
	memcpy(p + parts.len, msg, len);
	parts.data = p;
	parts.len += len;
	return 0;
}

static unsigned n_seen;
static int
count_entry(void *arg, const struct sl_ofp_state_entry *e)
{
	(void)arg;
	CHECK(e->state == n_seen + 1 && e->key.n_fields == 2, "entry %u state %u", n_seen,
	      e->state);
	n_seen++;
	return 0;
}

static void
test_dump_and_stats(void)
{
	struct sl_ofp_state_dump_writer w;
	struct sl_ofp_buf b;
	struct sl_ofp_error e;
	struct sl_flow_spec fs;
	struct sl_parse_error pe;
	uint8_t tid;
	uint16_t flags;

	sl_ofp_buf_init(&b);
	CHECK(sl_flow_parse_filter("ip,nw_src=10.1.2.3", &fs, &pe) == 0, "key");
	CHECK(sl_ofp_state_dump_begin(&w, &b, 9, 4, collect, NULL) == 0, "begin");
	for (unsigned i = 0; i < 2000; i++) {
		struct sl_ofp_state_entry en = {.key = fs.match, .state = i + 1, .idle_ms = 10};
		CHECK(sl_ofp_state_dump_append(&w, &en) == 0, "append %u", i);
	}
	CHECK(sl_ofp_state_dump_end(&w) == 0, "end");
	CHECK(n_parts > 1, "2000 entries need several parts: %u", n_parts);
	unsigned k = 0;
	for (size_t ofs = 0; ofs < parts.len; k++) {
		size_t len = (size_t)parts.data[ofs + 2] << 8 | parts.data[ofs + 3];
		int rc = sl_ofp_state_dump_reply_decode(parts.data + ofs, len, &tid, &flags,
							count_entry, NULL, &e);
		CHECK(rc == 0 && tid == 4, "part %u: %s", k, sl_ofp_error_name(&e));
		CHECK((flags == SL_OFPX_STATE_REPLY_MORE) == (k + 1 < n_parts), "MORE on part %u",
		      k);
		ofs += len;
	}
	CHECK(n_seen == 2000, "entries decoded: %u", n_seen);
	/* A count that disagrees with the entries is malformed. */
	parts.data[16 + 7] ^= 1;
	size_t len0 = (size_t)parts.data[2] << 8 | parts.data[3];
	CHECK(sl_ofp_state_dump_reply_decode(parts.data, len0, &tid, &flags, NULL, NULL, &e) < 0 &&
		      is_err(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN),
	      "count mismatch");

	/* Requests and stats. */
	sl_ofp_buf_reset(&b);
	CHECK(sl_ofp_state_request_encode(&b, 3, SL_OFPX_STATE_DUMP, 7) == 0, "dump request");
	check_bytes("dump request", &b,
		    "04 04 00 18 00 00 00 03 53 4c 55 43 00 00 00 0d 07 00 00 00 00 00 00 00");
	CHECK(sl_ofp_state_request_decode(b.data, b.len, SL_OFPX_STATE_DUMP, &tid, &e) == 0 &&
		      tid == 7,
	      "decode request");
	b.data[20] = 1;
	CHECK(sl_ofp_state_request_decode(b.data, b.len, SL_OFPX_STATE_DUMP, &tid, &e) < 0 &&
		      is_err(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_EPERM),
	      "request pad");
	struct sl_state_stats st = {.lookups = 1,
				    .hits = 2,
				    .sets = 3,
				    .inserts = 4,
				    .deletes = 5,
				    .expired = 6,
				    .evicted = 7,
				    .refused = 8,
				    .commands = 9,
				    .n_entries = 10,
				    .capacity = 11,
				    .bytes = 12,
				    .foreign = 13},
			      st2;
	sl_ofp_buf_reset(&b);
	CHECK(sl_ofp_state_stats_reply_encode(&b, 1, 3, &st) == 0, "stats encode");
	CHECK(b.len == 16 + 104, "stats length %zu", b.len);
	CHECK(sl_ofp_state_stats_reply_decode(b.data, b.len, &tid, &st2, &e) == 0 && tid == 3 &&
		      memcmp(&st, &st2, sizeof(st)) == 0,
	      "stats round trip");
	b.data[3] -= 8;
	CHECK(sl_ofp_state_stats_reply_decode(b.data, b.len - 8, &tid, &st2, &e) < 0,
	      "short stats");
	sl_ofp_buf_free(&b);
	free(parts.data);
}

int
main(void)
{
	test_state_mod();
	test_state_table();
	test_action_and_oxm();
	test_dump_and_stats();
	return sl_test_summary();
}
