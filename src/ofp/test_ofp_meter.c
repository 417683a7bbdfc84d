/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ofp_meter: the meter parts of the codec (OpenFlow 1.3.5 sections
 * 5.7, 7.2.4, 7.3.4.5, 7.3.5.12 to 7.3.5.14).
 *
 * 1. The meter instruction: golden flow_mod, every error, round trips
 *    through flow_mod and flow stats.
 *
 * Golden vectors are assembled by hand from the structure definitions of
 * appendix A and commented field by field.
 */
#include "ofp.h"

#include <string.h>

#include "../core/sl_test.h"
#include "../flowfile/flowfile.h"
#include "ofp_priv.h"

/*
 * Helpers.
 */

static void
dump(const char *what, const uint8_t *p, size_t n)
{
	fprintf(stderr, "  %s (%zu bytes):", what, n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%02x", i % 16 ? " " : "\n    ", p[i]);
	fputc('\n', stderr);
}

/* Compare encoder output with a golden hex string. */
static void
check_bytes(const char *name, const uint8_t *got, size_t n_got, const char *want_hex)
{
	uint8_t want[4096];
	size_t n = sl_test_hex(want_hex, want, sizeof(want));
	bool ok = n == n_got && memcmp(want, got, n) == 0;

	CHECK(ok, "%s: encoding differs from the golden bytes", name);
	if (!ok) {
		dump("want", want, n);
		dump("got", got, n_got);
	}
}

static bool
err_is(const struct sl_ofp_error *e, uint16_t type, uint16_t code)
{
	return e->type == type && e->code == code;
}

#define CHECK_ERR(rc, e, t, c, what)                                                               \
	CHECK((rc) < 0 && err_is(&(e), (t), (c)), "%s: want %s, got rc %d %s", what,              \
	      sl_ofp_error_name(&(struct sl_ofp_error){(t), (c), 0}), rc, sl_ofp_error_name(&(e)))

static void
parse_flow(const char *text, struct sl_flow_spec *fs)
{
	struct sl_parse_error pe;
	int rc = sl_flow_parse(text, fs, &pe);

	if (rc) {
		char buf[512];
		sl_parse_error_format(&pe, buf, sizeof(buf));
		fprintf(stderr, "bad test flow '%s': %s\n", text, buf);
	}
	SL_VERIFY(rc == 0);
}

/* Shared outputs (too big for the stack of a fuzz-sized test loop). */
static struct sl_ofp_flow_mod fm, fm2;

/*
 * 1. The meter instruction.
 */

/*
 * spec: "priority=100,ip actions=meter:1,output:2" as a flow_mod: the meter
 * instruction first, then apply_actions.
 */
static const char *const meter_flow_mod =
	"04 0e 00 60 00 00 00 01"    /* header: flow_mod, length 96, xid 1 */
	"00 00 00 00 00 00 00 00"    /* cookie */
	"00 00 00 00 00 00 00 00"    /* cookie_mask */
	"00 00 00 00 00 00 00 64"    /* table 0, ADD, idle 0, hard 0, priority 100 */
	"ff ff ff ff ff ff ff ff"    /* buffer_id NO_BUFFER, out_port ANY */
	"ff ff ff ff 00 00 00 00"    /* out_group ANY, flags 0, pad */
	"00 01 00 0a 80 00 0a 02"    /* match: OXM, length 10; eth_type */
	"08 00 00 00 00 00 00 00"    /*   0x0800, padding to 16 */
	"00 06 00 08 00 00 00 01"    /* meter instruction: length 8, meter 1 */
	"00 04 00 18 00 00 00 00"    /* apply_actions, 24 bytes */
	"00 00 00 10 00 00 00 02 00 00 00 00 00 00 00 00"; /* output 2 */

static void
test_instruction_golden(void)
{
	struct sl_flow_spec want;
	struct sl_ofp_error e;
	struct sl_ofp_buf b;
	uint8_t m[256];
	size_t n = sl_test_hex(meter_flow_mod, m, sizeof(m));
	int rc;

	rc = sl_ofp_flow_mod_decode(m, n, &fm, &e);
	CHECK(rc == 0, "meter flow_mod: %s", sl_ofp_error_name(&e));
	parse_flow("priority=100,ip actions=output:2", &want);
	CHECK(fm.spec.insns.meter_id == 1 && fm.spec.insns.n_apply == 1 &&
		      sl_action_equal(&fm.spec.insns.apply[0], &want.insns.apply[0]) &&
		      fm.spec.insns.goto_table == -1 && !fm.spec.insns.has_write,
	      "meter flow_mod fields: meter %u", fm.spec.insns.meter_id);
	sl_ofp_buf_init(&b);
	CHECK(sl_ofp_flow_mod_encode(&b, 1, &fm) == 0, "encode");
	check_bytes("meter flow_mod re-encode (meter first)", b.data, b.len, meter_flow_mod);
	/* Without a meter id no meter instruction is written. */
	fm.spec.insns.meter_id = 0;
	sl_ofp_buf_reset(&b);
	sl_ofp_flow_mod_encode(&b, 1, &fm);
	CHECK(b.len == n - 8 && memmem(b.data, b.len, "\x00\x06\x00\x08", 4) == NULL,
	      "no meter instruction for meter_id 0");
	sl_ofp_buf_free(&b);
}

struct insn_case {
	const char *insns;
	uint16_t type, code; /* code 0xffff: success */
	uint32_t meter_id;   /* on success */
	const char *what;
};

static void
test_instruction_errors(void)
{
	static const struct insn_case cases[] = {
		{"0006 0008 00000001", 0, 0xffff, 1, "meter 1"},
		{"0006 0008 ffff0000", 0, 0xffff, SL_METER_ID_MAX, "OFPM_MAX"},
		/* Virtual meters decode: whether they exist is the pipeline's call. */
		{"0006 0008 fffffffd", 0, 0xffff, SL_METER_ID_SLOWPATH, "OFPM_SLOWPATH"},
		{"0006 0008 fffffffe", 0, 0xffff, SL_METER_ID_CONTROLLER, "OFPM_CONTROLLER"},
		{"0006 0008 00000000", SL_OFPET_METER_MOD_FAILED, SL_OFPMMFC_INVALID_METER, 0,
		 "meter 0"},
		{"0006 0010 00000001 00000000", SL_OFPET_BAD_INSTRUCTION, SL_OFPBIC_BAD_LEN, 0,
		 "meter instruction of 16 bytes"},
		{"0006 0004 00000001", SL_OFPET_BAD_INSTRUCTION, SL_OFPBIC_BAD_LEN, 0,
		 "meter instruction of 4 bytes"},
		{"0006 0008 00000001 0006 0008 00000002", SL_OFPET_EXPERIMENTER,
		 SL_ONFBIC_DUP_INSTRUCTION, 0, "two meter instructions"},
		{"0004 0008 00000000 0006 0008 00000007 0001 0008 05000000", 0, 0xffff, 7,
		 "meter after apply, before goto"},
	};
	struct sl_instructions in;
	struct sl_ofp_error e;
	uint8_t p[64];

	for (unsigned i = 0; i < SL_ARRAY_SIZE(cases); i++) {
		const struct insn_case *c = &cases[i];
		size_t n = sl_test_hex(c->insns, p, sizeof(p));
		int rc = sl_ofp_instructions_decode(p, n, 0, NULL, &in, &e);

		if (c->code == 0xffff)
			CHECK(rc == 0 && in.meter_id == c->meter_id, "%s: rc %d %s, meter %u",
			      c->what, rc, sl_ofp_error_name(&e), in.meter_id);
		else
			CHECK_ERR(rc, e, c->type, c->code, c->what);
	}
	/* No meter instruction: meter_id 0, whatever the struct held before. */
	in.meter_id = 99;
	CHECK(sl_ofp_instructions_decode(p, 0, 0, NULL, &in, &e) == 0 && in.meter_id == 0,
	      "empty list clears meter_id");
	/* A delete's instructions must still be well formed. */
	{
		static const char insns[] = "0006 0008 00000000";
		uint8_t msg[128];
		size_t n = sl_test_hex(meter_flow_mod, msg, sizeof(msg));

		msg[25] = SL_OFPFC_DELETE;
		sl_test_hex(insns, msg + 64, 8);
		CHECK_ERR(sl_ofp_flow_mod_decode(msg, n, &fm, &e), e, SL_OFPET_METER_MOD_FAILED,
			  SL_OFPMMFC_INVALID_METER, "delete with meter 0");
	}
}

static void
test_instruction_roundtrip(void)
{
	static const char *const flows[] = {
		"priority=1 actions=drop",
		"table=1,ip,nw_dst=10.0.0.0/8 actions=dec_ttl,output:3,goto_table:2",
		"tcp,tp_dst=80 actions=write_actions(output:1),write_metadata:0x1/0x1",
		"actions=CONTROLLER,clear_actions",
	};
	static const uint32_t ids[] = {1, 2, 0x1234, SL_METER_ID_MAX, SL_METER_ID_CONTROLLER};
	static struct sl_flow_spec fs2;
	struct sl_ofp_flow_stats st = {1, 2, 3, 4}, st2;
	struct sl_ofp_mp_writer w;
	struct sl_ofp_mp_reply r;
	struct sl_ofp_error e;
	struct sl_ofp_buf b, b2;
	unsigned n_ok = 0;

	sl_ofp_buf_init(&b);
	sl_ofp_buf_init(&b2);
	for (unsigned i = 0; i < SL_ARRAY_SIZE(flows); i++) {
		for (unsigned k = 0; k < SL_ARRAY_SIZE(ids); k++) {
			bool ok;
			size_t ofs = 0;

			parse_flow(flows[i], &fm.spec);
			fm.spec.insns.meter_id = ids[k];
			fm.command = SL_OFPFC_ADD;
			fm.buffer_id = SL_OFP_NO_BUFFER;
			fm.out_port = SL_PORT_ANY;
			fm.out_group = SL_GROUP_ID_ANY;
			/* flow_mod: encode, decode, encode again to the same bytes. */
			sl_ofp_buf_reset(&b);
			sl_ofp_buf_reset(&b2);
			ok = sl_ofp_flow_mod_encode(&b, 1, &fm) == 0 &&
			     sl_ofp_flow_mod_decode(b.data, b.len, &fm2, &e) == 0 &&
			     fm2.spec.insns.meter_id == ids[k] &&
			     sl_ofp_flow_mod_encode(&b2, 1, &fm2) == 0 && b.len == b2.len &&
			     memcmp(b.data, b2.data, b.len) == 0;
			/* The meter instruction follows the match. */
			ok = ok && rd16(b.data + 48 + pad8(rd16(b.data + 50))) == SL_OFPIT_METER;
			/* A flow stats reply carries it to sluicectl. */
			sl_ofp_buf_reset(&b);
			sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_FLOW, 2, NULL, NULL);
			sl_ofp_mp_flow_stats_append(&w, &fm.spec, &st);
			ok = ok && sl_ofp_mp_writer_end(&w) == 0 &&
			     sl_ofp_mp_reply_decode(b.data, b.len, &r, &e) == 0 &&
			     sl_ofp_flow_stats_entry_decode(r.body, r.body_len, &ofs, &fs2, &st2,
							    &e) == 0 &&
			     ofs == r.body_len && fs2.insns.meter_id == ids[k] &&
			     fs2.insns.n_apply == fm.spec.insns.n_apply;
			CHECK(ok, "meter %#x on '%s': %s", ids[k], flows[i], sl_ofp_error_name(&e));
			n_ok += ok;
		}
	}
	CHECK(n_ok == SL_ARRAY_SIZE(flows) * SL_ARRAY_SIZE(ids), "%u meter round trips", n_ok);
	sl_ofp_buf_free(&b);
	sl_ofp_buf_free(&b2);
}

int
main(void)
{
	test_instruction_golden();
	test_instruction_errors();
	test_instruction_roundtrip();
	return sl_test_summary();
}
