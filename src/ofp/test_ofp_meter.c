/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ofp_meter: the meter parts of the codec (OpenFlow 1.3.5 sections
 * 5.7, 7.2.4, 7.3.4.5, 7.3.5.12 to 7.3.5.14).
 *
 * 1. The meter instruction: golden flow_mod, every error, round trips
 *    through flow_mod and flow stats.
 * 2. meter_mod: golden add and delete, every error with its exact
 *    type/code, seeded random round trips, every truncation and byte
 *    corruption (exact-size heap copies: ASan sees any over-read).
 * 3. Multipart: the meter stats, meter config and meter features replies
 *    and the three requests, byte for byte (the client-side decoders of
 *    the replies are in test_ofp_client with the other entry decoders).
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

/* Compare encoder output with a golden hex string. */
static void
check_bytes(const char *name, const uint8_t *got, size_t n_got, const char *want_hex)
{
	sl_test_check_bytes(name, got, n_got, want_hex);
}

static bool
err_is(const struct sl_ofp_error *e, uint16_t type, uint16_t code)
{
	return e->type == type && e->code == code;
}

#define CHECK_ERR(rc, e, t, c, what)                                                               \
	CHECK((rc) < 0 && err_is(&(e), (t), (c)), "%s: want %s, got rc %d %s", what,               \
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

/* A whole message from hex: header (version 4, @type, xid 1) then @body; length fixed up. */
static size_t
msg_hex(uint8_t *m, size_t max, uint8_t type, const char *body)
{
	size_t n;

	SL_VERIFY(max >= 8);
	m[0] = SL_OFP_VERSION;
	m[1] = type;
	wr32(m + 4, 1);
	n = 8 + sl_test_hex(body, m + 8, max - 8);
	wr16(m + 2, (uint16_t)n);
	return n;
}

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Shared outputs (too big for the stack of a fuzz-sized test loop). */
static struct sl_ofp_flow_mod fm, fm2;
static struct sl_ofp_meter_mod mm, mm2;

static bool
meter_spec_equal(const struct sl_meter_spec *a, const struct sl_meter_spec *b)
{
	if (a->meter_id != b->meter_id || a->flags != b->flags || a->n_bands != b->n_bands)
		return false;
	for (unsigned i = 0; i < a->n_bands; i++) {
		const struct sl_meter_band_spec *x = &a->bands[i], *y = &b->bands[i];
		if (x->type != y->type || x->rate != y->rate || x->burst != y->burst ||
		    x->prec_level != y->prec_level)
			return false;
	}
	return true;
}

/*
 * 1. The meter instruction.
 */

/*
 * spec: "priority=100,ip actions=meter:1,output:2" as a flow_mod: the meter
 * instruction first, then apply_actions.
 */
static const char *const meter_flow_mod =
	"04 0e 00 60 00 00 00 01" /* header: flow_mod, length 96, xid 1 */
	"00 00 00 00 00 00 00 00" /* cookie */
	"00 00 00 00 00 00 00 00" /* cookie_mask */
	"00 00 00 00 00 00 00 64" /* table 0, ADD, idle 0, hard 0, priority 100 */
	"ff ff ff ff ff ff ff ff" /* buffer_id NO_BUFFER, out_port ANY */
	"ff ff ff ff 00 00 00 00" /* out_group ANY, flags 0, pad */
	"00 01 00 0a 80 00 0a 02" /* match: OXM, length 10; eth_type */
	"08 00 00 00 00 00 00 00" /*   0x0800, padding to 16 */
	"00 06 00 08 00 00 00 01" /* meter instruction: length 8, meter 1 */
	"00 04 00 18 00 00 00 00" /* apply_actions, 24 bytes */
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

/*
 * 2. meter_mod.
 */

/*
 * spec: what `ovs-ofctl -O OpenFlow13 add-meter br0 'meter=1,kbps,burst,
 * stats,bands=type=drop,rate=1000,burst_size=100
 * type=dscp_remark,rate=500,prec_level=1'` sends.
 */
static const char *const meter_mod_golden =
	"04 1d 00 30 00 00 00 05"  /* header: meter_mod, length 48, xid 5 */
	"00 00 00 0d 00 00 00 01"  /* ADD, flags KBPS|BURST|STATS, meter 1 */
	"00 01 00 10 00 00 03 e8"  /* band DROP, length 16, rate 1000 */
	"00 00 00 64 00 00 00 00"  /*   burst_size 100, pad */
	"00 02 00 10 00 00 01 f4"  /* band DSCP_REMARK, length 16, rate 500 */
	"00 00 00 00 01 00 00 00"; /*   burst_size 0, prec_level 1, pad */

static void
test_meter_mod_golden(void)
{
	struct sl_ofp_error e;
	struct sl_ofp_buf b;
	uint8_t m[256];
	size_t n = sl_test_hex(meter_mod_golden, m, sizeof(m));
	const struct sl_meter_spec *ms = &mm.spec;
	int rc;

	rc = sl_ofp_meter_mod_decode(m, n, &mm, &e);
	CHECK(rc == 0, "golden meter_mod: %s", sl_ofp_error_name(&e));
	CHECK(mm.command == SL_OFPMC_ADD && ms->meter_id == 1 &&
		      ms->flags == (SL_METER_KBPS | SL_METER_BURST | SL_METER_STATS) &&
		      ms->n_bands == 2 && ms->bands[0].type == SL_BAND_DROP &&
		      ms->bands[0].rate == 1000 && ms->bands[0].burst == 100 &&
		      ms->bands[0].prec_level == 0 && ms->bands[1].type == SL_BAND_DSCP_REMARK &&
		      ms->bands[1].rate == 500 && ms->bands[1].burst == 0 &&
		      ms->bands[1].prec_level == 1,
	      "golden meter_mod fields");
	sl_ofp_buf_init(&b);
	CHECK(sl_ofp_meter_mod_encode(&b, 5, &mm) == 0, "encode");
	check_bytes("meter_mod re-encode", b.data, b.len, meter_mod_golden);

	/* spec: delete meter 7; delete every meter (OFPM_ALL). */
	sl_ofp_buf_reset(&b);
	mm = (struct sl_ofp_meter_mod){.command = SL_OFPMC_DELETE, .spec = {.meter_id = 7}};
	CHECK(sl_ofp_meter_mod_encode(&b, 6, &mm) == 0, "encode delete");
	check_bytes("meter_mod delete", b.data, b.len,
		    "04 1d 00 10 00 00 00 06 00 02 00 00 00 00 00 07");
	n = sl_test_hex("04 1d 00 10 00 00 00 06 00 02 00 00 ff ff ff ff", m, sizeof(m));
	CHECK(sl_ofp_meter_mod_decode(m, n, &mm2, &e) == 0 && mm2.command == SL_OFPMC_DELETE &&
		      mm2.spec.meter_id == SL_METER_ID_ALL && mm2.spec.n_bands == 0,
	      "delete all meters: %s", sl_ofp_error_name(&e));

	/* spec: modify meter OFPM_MAX to 100 packets/s, no bands (a meter may have none). */
	n = sl_test_hex("04 1d 00 10 00 00 00 07 00 01 00 02 ff ff 00 00", m, sizeof(m));
	CHECK(sl_ofp_meter_mod_decode(m, n, &mm2, &e) == 0 && mm2.command == SL_OFPMC_MODIFY &&
		      mm2.spec.meter_id == SL_METER_ID_MAX && mm2.spec.flags == SL_METER_PKTPS &&
		      mm2.spec.n_bands == 0,
	      "modify, no bands: %s", sl_ofp_error_name(&e));
	sl_ofp_buf_reset(&b);
	sl_ofp_meter_mod_encode(&b, 7, &mm2);
	CHECK(b.len == n && memcmp(b.data, m, n) == 0, "modify re-encodes");
	sl_ofp_buf_free(&b);
}

/* A drop band of rate 1000, burst 100 (16 bytes of hex). */
#define DROP "0001 0010 000003e8 00000064 00000000"

struct mm_case {
	const char *body;    /* after the header */
	uint16_t type, code; /* code 0xffff: success */
	const char *what;
};
#define MMFC(c) SL_OFPET_METER_MOD_FAILED, SL_OFPMMFC_##c
#define BRC(c) SL_OFPET_BAD_REQUEST, SL_OFPBRC_##c
#define OK 0, 0xffff

static void
test_meter_mod_errors(void)
{
	static const struct mm_case cases[] = {
		/* Command and meter id. */
		{"0003 0001 00000001", MMFC(BAD_COMMAND), "command 3"},
		{"ffff 0001 00000001", MMFC(BAD_COMMAND), "command 0xffff"},
		{"0003 0000 00000000", MMFC(BAD_COMMAND), "command checked before the id"},
		{"0000 0001 00000000", MMFC(INVALID_METER), "add 0"},
		{"0001 0001 00000000", MMFC(INVALID_METER), "modify 0"},
		{"0002 0001 00000000", MMFC(INVALID_METER), "delete 0"},
		{"0000 0001 ffff0000", OK, "add OFPM_MAX"},
		{"0000 0001 ffff0001", MMFC(INVALID_METER), "add OFPM_MAX + 1"},
		{"0000 0001 fffffffd", MMFC(INVALID_METER), "add OFPM_SLOWPATH"},
		{"0000 0001 fffffffe", MMFC(INVALID_METER), "add OFPM_CONTROLLER"},
		{"0002 0001 fffffffe", MMFC(INVALID_METER), "delete OFPM_CONTROLLER"},
		{"0000 0001 ffffffff", MMFC(INVALID_METER), "add OFPM_ALL"},
		{"0001 0001 ffffffff", MMFC(INVALID_METER), "modify OFPM_ALL"},
		{"0002 0001 ffffffff", OK, "delete OFPM_ALL"},
		{"0000 0000 00000000", MMFC(INVALID_METER), "id checked before flags"},
		/* Flags. */
		{"0000 0000 00000001", MMFC(BAD_FLAGS), "no unit"},
		{"0000 0003 00000001", MMFC(BAD_FLAGS), "two units"},
		{"0000 000c 00000001", MMFC(BAD_FLAGS), "burst and stats, no unit"},
		{"0001 0011 00000001", MMFC(BAD_FLAGS), "flag 0x10"},
		{"0000 8002 00000001", MMFC(BAD_FLAGS), "flag 0x8000"},
		{"0000 000e 00000001", OK, "pktps burst stats"},
		{"0000 0010 00000001 " DROP, MMFC(BAD_FLAGS), "flags checked before bands"},
		/* Delete looks at nothing but the id (as OVS). */
		{"0002 ffff 00000001", OK, "delete with any flags"},
		{"0002 0000 00000001 0001 0008 0000", OK, "delete with junk bands"},
		/* Band framing. */
		{"0000 0001 00000001 0001 0008 000003e8", BRC(BAD_LEN), "band of 8 bytes"},
		{"0000 0001 00000001 0001 000c 000003e8 00000064", BRC(BAD_LEN), "band length 12"},
		{"0000 0001 00000001 0001 0000 000003e8 00000064 00000000", BRC(BAD_LEN),
		 "band length 0"},
		{"0000 0001 00000001 0001 0018 000003e8 00000064 00000000 00000000 00000000",
		 BRC(BAD_LEN), "band length 24"},
		{"0000 0001 00000001 0001 0020 000003e8 00000064 00000000", BRC(BAD_LEN),
		 "band length past the message"},
		{"0000 0001 00000001 " DROP " 0001", BRC(BAD_LEN), "2 trailing bytes"},
		{"0000 0001 00000001 " DROP " 0001 0010 000003e8", BRC(BAD_LEN),
		 "second band cut at 8 bytes"},
		/* Band contents. */
		{"0000 0001 00000001 ffff 0010 000003e8 00000064 00002320", MMFC(BAD_BAND),
		 "experimenter band"},
		{"0000 0001 00000001 0003 0010 000003e8 00000064 00000000", MMFC(BAD_BAND),
		 "band type 3"},
		{"0000 0001 00000001 0000 0010 000003e8 00000064 00000000", MMFC(BAD_BAND),
		 "band type 0"},
		{"0000 0001 00000001 0001 0010 00000000 00000064 00000000", MMFC(BAD_RATE),
		 "drop rate 0"},
		{"0000 0001 00000001 0002 0010 00000000 00000064 01000000", MMFC(BAD_RATE),
		 "dscp rate 0"},
		{"0000 0005 00000001 0001 0010 00000001 00000000 00000000", OK, "burst 0, BURST"},
		{"0000 0001 00000001 0001 0010 ffffffff ffffffff ffffffff", OK,
		 "drop: largest rate and burst, pad ignored"},
		{"0000 0001 00000001 0002 0010 000003e8 00000064 00000000", MMFC(BAD_BAND_VALUE),
		 "prec_level 0"},
		{"0000 0001 00000001 0002 0010 000003e8 00000064 04000000", MMFC(BAD_BAND_VALUE),
		 "prec_level 4"},
		{"0000 0001 00000001 0002 0010 000003e8 00000064 ff000000", MMFC(BAD_BAND_VALUE),
		 "prec_level 255"},
		{"0000 0001 00000001 0002 0010 000003e8 00000064 03000000", OK, "prec_level 3"},
		{"0000 0001 00000001 0002 0010 00000000 00000064 00000000", MMFC(BAD_RATE),
		 "rate checked before prec_level"},
		{"0000 0001 00000001 " DROP " 0001 0010 00000000 00000000 00000000", MMFC(BAD_RATE),
		 "second band's rate 0"},
		/* Band count. */
		{"0000 0001 00000001 " DROP DROP DROP DROP DROP DROP DROP DROP, OK, "8 bands"},
		{"0000 0001 00000001 " DROP DROP DROP DROP DROP DROP DROP DROP DROP,
		 MMFC(OUT_OF_BANDS), "9 bands"},
		{"0000 0001 00000001 " DROP DROP DROP DROP DROP DROP DROP DROP " ffff 0010",
		 BRC(BAD_LEN), "a 9th band cut short is BAD_LEN"},
		/* Fixed part. */
		{"0000 0001", BRC(BAD_LEN), "12-byte meter_mod"},
		{"", BRC(BAD_LEN), "header only"},
	};
	struct sl_ofp_error e;
	uint8_t m[512];
	int rc;

	for (unsigned i = 0; i < SL_ARRAY_SIZE(cases); i++) {
		const struct mm_case *c = &cases[i];
		size_t n = msg_hex(m, sizeof(m), SL_OFPT_METER_MOD, c->body);

		rc = sl_ofp_meter_mod_decode(m, n, &mm, &e);
		if (c->code == 0xffff)
			CHECK(rc == 0, "%s: %s", c->what, sl_ofp_error_name(&e));
		else
			CHECK_ERR(rc, e, c->type, c->code, c->what);
	}
	/* What the successes decoded to. */
	msg_hex(m, sizeof(m), SL_OFPT_METER_MOD, "0002 ffff 00000001 0001 0008 0000");
	CHECK(sl_ofp_meter_mod_decode(m, rd16(m + 2), &mm, &e) == 0 && mm.spec.flags == 0xffff &&
		      mm.spec.n_bands == 0,
	      "delete keeps flags as sent, no bands");
	msg_hex(m, sizeof(m), SL_OFPT_METER_MOD,
		"0000 0001 00000001 0001 0010 ffffffff ffffffff ffffffff");
	CHECK(sl_ofp_meter_mod_decode(m, rd16(m + 2), &mm, &e) == 0 && mm.spec.n_bands == 1 &&
		      mm.spec.bands[0].rate == UINT32_MAX && mm.spec.bands[0].burst == UINT32_MAX &&
		      mm.spec.bands[0].prec_level == 0,
	      "drop band: the pad byte is not a prec_level");
	msg_hex(m, sizeof(m), SL_OFPT_METER_MOD,
		"0000 0001 00000001 " DROP DROP DROP DROP DROP DROP DROP DROP);
	CHECK(sl_ofp_meter_mod_decode(m, rd16(m + 2), &mm, &e) == 0 &&
		      mm.spec.n_bands == SL_METER_BANDS_MAX,
	      "8 bands decoded");
	/* Framing: wrong type, header length disagreeing with the message. */
	rc = sl_ofp_meter_mod_decode(m, rd16(m + 2) - 1, &mm, &e);
	CHECK_ERR(rc, e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN, "header length mismatch");
	m[1] = SL_OFPT_GROUP_MOD;
	rc = sl_ofp_meter_mod_decode(m, rd16(m + 2), &mm, &e);
	CHECK_ERR(rc, e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_TYPE, "group_mod to meter_mod");
	CHECK(strcmp(sl_ofp_error_name(&(struct sl_ofp_error){SL_OFPET_METER_MOD_FAILED,
							      SL_OFPMMFC_OUT_OF_BANDS, 0}),
		     "OFPMMFC_OUT_OF_BANDS") == 0,
	      "error names");
}

/* A random valid meter_mod (add or modify). */
static void
random_meter_mod(struct sl_ofp_meter_mod *x)
{
	memset(x, 0, sizeof(*x));
	x->command = (uint16_t)(rnd() % 2);
	x->spec.meter_id = (uint32_t)(rnd() % SL_METER_ID_MAX) + 1;
	x->spec.flags = (rnd() % 2 ? SL_METER_KBPS : SL_METER_PKTPS) |
			(rnd() % 2 ? SL_METER_BURST : 0) | (rnd() % 2 ? SL_METER_STATS : 0);
	x->spec.n_bands = (uint8_t)(rnd() % (SL_METER_BANDS_MAX + 1));
	for (unsigned i = 0; i < x->spec.n_bands; i++) {
		struct sl_meter_band_spec *bs = &x->spec.bands[i];
		bs->type = rnd() % 2 ? SL_BAND_DROP : SL_BAND_DSCP_REMARK;
		bs->rate = (uint32_t)(rnd() % UINT32_MAX) + 1;
		bs->burst = (uint32_t)rnd();
		bs->prec_level = bs->type == SL_BAND_DSCP_REMARK ? (uint8_t)(rnd() % 3 + 1) : 0;
	}
}

static void
test_meter_mod_roundtrip(void)
{
	struct sl_ofp_error e;
	struct sl_ofp_buf b, b2;
	unsigned n_ok = 0;

	sl_ofp_buf_init(&b);
	sl_ofp_buf_init(&b2);
	for (unsigned i = 0; i < 2000; i++) {
		bool ok;

		random_meter_mod(&mm);
		sl_ofp_buf_reset(&b);
		sl_ofp_buf_reset(&b2);
		ok = sl_ofp_meter_mod_encode(&b, i, &mm) == 0 &&
		     b.len == 16 + 16u * mm.spec.n_bands &&
		     sl_ofp_meter_mod_decode(b.data, b.len, &mm2, &e) == 0 &&
		     mm2.command == mm.command && meter_spec_equal(&mm.spec, &mm2.spec) &&
		     sl_ofp_meter_mod_encode(&b2, i, &mm2) == 0 && b.len == b2.len &&
		     memcmp(b.data, b2.data, b.len) == 0;
		CHECK(ok, "meter_mod round trip %u: %s", i, sl_ofp_error_name(&e));
		n_ok += ok;
	}
	CHECK(n_ok == 2000, "%u meter_mod round trips", n_ok);
	sl_ofp_buf_free(&b);
	sl_ofp_buf_free(&b2);
}

static void
test_meter_mod_truncation(void)
{
	uint8_t m[256];
	size_t n = sl_test_hex(meter_mod_golden, m, sizeof(m));
	unsigned bad = 0, n_runs = 0, n_ok = 0;
	struct sl_ofp_error e;
	struct sl_ofp_buf b;

	for (size_t len = 0; len < n; len++) {
		uint8_t *cut = malloc(len ? len : 1); /* exact size: ASan sees any over-read */
		int rc;

		SL_VERIFY(cut != NULL);
		memcpy(cut, m, len);
		/* As framed by a channel that lost bytes: the header length disagrees. */
		rc = sl_ofp_meter_mod_decode(cut, len, &mm, &e);
		bad += rc == 0 || !err_is(&e, BRC(BAD_LEN));
		/*
		 * Header length patched too: a cut at a band boundary is a valid
		 * meter with fewer bands, anything else BAD_LEN.
		 */
		if (len >= 8) {
			wr16(cut + 2, (uint16_t)len);
			rc = sl_ofp_meter_mod_decode(cut, len, &mm, &e);
			if (len >= 16 && len % 16 == 0)
				bad += rc != 0 || mm.spec.n_bands != (len - 16) / 16;
			else
				bad += rc == 0 || !err_is(&e, BRC(BAD_LEN));
		}
		free(cut);
	}
	CHECK(bad == 0, "%u truncations misdecoded", bad);

	/* Every single-byte corruption: no crash; whatever decodes re-encodes to itself. */
	sl_ofp_buf_init(&b);
	for (size_t pos = 0; pos < n; pos++) {
		static const uint8_t xs[] = {0x01, 0x02, 0x10, 0x80, 0xff};
		for (unsigned k = 0; k < SL_ARRAY_SIZE(xs); k++) {
			uint8_t *p = malloc(n);

			SL_VERIFY(p != NULL);
			memcpy(p, m, n);
			p[pos] ^= xs[k];
			n_runs++;
			if (sl_ofp_meter_mod_decode(p, n, &mm, &e) == 0) {
				n_ok++;
				sl_ofp_buf_reset(&b);
				bad += sl_ofp_meter_mod_encode(&b, 5, &mm) != 0 ||
				       sl_ofp_meter_mod_decode(b.data, b.len, &mm2, &e) != 0 ||
				       mm2.command != mm.command ||
				       !meter_spec_equal(&mm.spec, &mm2.spec);
			}
			free(p);
		}
	}
	CHECK(bad == 0 && n_runs == n * 5, "%u corrupted decodes (%u accepted), %u bad", n_runs,
	      n_ok, bad);
	sl_ofp_buf_free(&b);
}

/*
 * 3. Multipart.
 */

static void
test_multipart_golden(void)
{
	struct sl_meter_stats st = {.flow_count = 2,
				    .packets = 100,
				    .bytes = 6400,
				    .created_tsc = 12345, /* not on the wire */
				    .n_bands = 2,
				    .band_packets = {10, 5},
				    .band_bytes = {640, 320}};
	struct sl_ofp_meter_features mf = {.max_meter = 1024,
					   .band_types = (1u << SL_BAND_DROP) |
							 (1u << SL_BAND_DSCP_REMARK),
					   .capabilities = SL_METER_KBPS | SL_METER_PKTPS |
							   SL_METER_BURST | SL_METER_STATS,
					   .max_bands = SL_METER_BANDS_MAX,
					   .max_color = 0},
				     mf2;
	struct sl_ofp_mp_request req, req2;
	struct sl_ofp_mp_writer w;
	struct sl_ofp_mp_reply r;
	struct sl_ofp_error e;
	struct sl_ofp_buf b;
	uint8_t m[256];
	size_t n;

	sl_ofp_buf_init(&b);
	/* spec: OFPMP_METER reply, meter 1 with two bands, meter 42 with none. */
	sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_METER, 3, NULL, NULL);
	CHECK(sl_ofp_mp_meter_stats_append(&w, 1, 10, 500000000, &st) == 0, "meter stats 1");
	CHECK(sl_ofp_mp_meter_stats_append(&w, 42, 0, 0, &(struct sl_meter_stats){0}) == 0,
	      "meter stats 42");
	CHECK(sl_ofp_mp_writer_end(&w) == 0, "meter stats end");
	check_bytes("meter stats", b.data, b.len,
		    "04 13 00 80 00 00 00 03 00 09 00 00 00 00 00 00" /* reply, 128, OFPMP_METER */
		    "00 00 00 01 00 48 00 00 00 00 00 00"             /* meter 1, len 72, pad */
		    "00 00 00 02"                                     /* flow_count 2 */
		    "00 00 00 00 00 00 00 64 00 00 00 00 00 00 19 00" /* packets 100, bytes 6400 */
		    "00 00 00 0a 1d cd 65 00"                         /* duration 10.5 s */
		    "00 00 00 00 00 00 00 0a 00 00 00 00 00 00 02 80" /* band 0: 10, 640 */
		    "00 00 00 00 00 00 00 05 00 00 00 00 00 00 01 40" /* band 1: 5, 320 */
		    "00 00 00 2a 00 28 00 00 00 00 00 00"             /* meter 42, len 40, pad */
		    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
		    "00 00 00 00 00 00 00 00 00 00 00 00");

	/* spec: OFPMP_METER_CONFIG reply, the golden meter_mod's meter, meter 2 without bands. */
	n = sl_test_hex(meter_mod_golden, m, sizeof(m));
	SL_VERIFY(sl_ofp_meter_mod_decode(m, n, &mm, &e) == 0);
	sl_ofp_buf_reset(&b);
	sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_METER_CONFIG, 4, NULL, NULL);
	CHECK(sl_ofp_mp_meter_config_append(&w, &mm.spec) == 0, "meter config 1");
	CHECK(sl_ofp_mp_meter_config_append(
		      &w, &(struct sl_meter_spec){.meter_id = 2, .flags = SL_METER_PKTPS}) == 0,
	      "meter config 2");
	CHECK(sl_ofp_mp_writer_end(&w) == 0, "meter config end");
	check_bytes("meter config", b.data, b.len,
		    "04 13 00 40 00 00 00 04 00 0a 00 00 00 00 00 00" /* reply, 64, METER_CONFIG */
		    "00 28 00 0d 00 00 00 01" /* length 40, flags 0xd, meter 1 */
		    "00 01 00 10 00 00 03 e8 00 00 00 64 00 00 00 00" /* drop 1000/100 */
		    "00 02 00 10 00 00 01 f4 00 00 00 00 01 00 00 00" /* dscp_remark 500, prec 1 */
		    "00 08 00 02 00 00 00 02");                       /* length 8, PKTPS, meter 2 */

	/* spec: OFPMP_METER_FEATURES reply; all zero for a zeroed struct ("no meters"). */
	sl_ofp_buf_reset(&b);
	CHECK(sl_ofp_meter_features_reply_encode(&b, 5, &mf) == 0, "meter features");
	check_bytes("meter features", b.data, b.len,
		    "04 13 00 20 00 00 00 05 00 0b 00 00 00 00 00 00"
		    "00 00 04 00 00 00 00 06 00 00 00 0f 08 00 00 00");
	CHECK(sl_ofp_mp_reply_decode(b.data, b.len, &r, &e) == 0 &&
		      r.type == SL_OFPMP_METER_FEATURES &&
		      sl_ofp_meter_features_decode(r.body, r.body_len, &mf2, &e) == 0 &&
		      mf2.max_meter == 1024 && mf2.band_types == 0x6 && mf2.capabilities == 0xf &&
		      mf2.max_bands == SL_METER_BANDS_MAX && mf2.max_color == 0,
	      "meter features decode: %s", sl_ofp_error_name(&e));
	CHECK_ERR(sl_ofp_meter_features_decode(r.body, r.body_len - 1, &mf2, &e), e,
		  SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN, "meter features of 15 bytes");
	CHECK_ERR(sl_ofp_meter_features_decode(NULL, 0, &mf2, &e), e, SL_OFPET_BAD_REQUEST,
		  SL_OFPBRC_BAD_LEN, "meter features, empty body");
	sl_ofp_buf_reset(&b);
	sl_ofp_meter_features_reply_encode(&b, 5, &(struct sl_ofp_meter_features){0});
	check_bytes("meter features, none", b.data, b.len,
		    "04 13 00 20 00 00 00 05 00 0b 00 00 00 00 00 00"
		    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");

	/* spec: the requests, as a client sends them, and back. */
	static const struct {
		uint16_t type;
		uint32_t meter_id;
		const char *hex;
	} reqs[] = {
		{SL_OFPMP_METER, 1,
		 "04 12 00 18 00 00 00 06 00 09 00 00 00 00 00 00"
		 "00 00 00 01 00 00 00 00"},
		{SL_OFPMP_METER, SL_METER_ID_ALL,
		 "04 12 00 18 00 00 00 06 00 09 00 00 00 00 00 00"
		 "ff ff ff ff 00 00 00 00"},
		{SL_OFPMP_METER_CONFIG, SL_METER_ID_ALL,
		 "04 12 00 18 00 00 00 06 00 0a 00 00 00 00 00 00 ff ff ff ff 00 00 00 00"},
		{SL_OFPMP_METER_FEATURES, 0, "04 12 00 10 00 00 00 06 00 0b 00 00 00 00 00 00"},
	};
	for (unsigned i = 0; i < SL_ARRAY_SIZE(reqs); i++) {
		memset(&req, 0, sizeof(req));
		req.type = reqs[i].type;
		req.meter_id = reqs[i].meter_id;
		sl_ofp_buf_reset(&b);
		CHECK(sl_ofp_mp_request_encode(&b, 6, &req) == 0, "request %u", i);
		check_bytes(sl_ofp_mp_type_name(req.type), b.data, b.len, reqs[i].hex);
		CHECK(sl_ofp_mp_request_decode(b.data, b.len, &req2, &e) == 0 &&
			      req2.type == req.type &&
			      (req.type == SL_OFPMP_METER_FEATURES ||
			       req2.meter_id == req.meter_id),
		      "request %u decodes: %s", i, sl_ofp_error_name(&e));
	}
	sl_ofp_buf_free(&b);
}

int
main(void)
{
	test_instruction_golden();
	test_instruction_errors();
	test_instruction_roundtrip();
	test_meter_mod_golden();
	test_meter_mod_errors();
	test_meter_mod_roundtrip();
	test_meter_mod_truncation();
	test_multipart_golden();
	return sl_test_summary();
}
