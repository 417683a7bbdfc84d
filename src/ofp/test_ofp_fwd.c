/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Golden tests for the forwarding-mode experimenter messages
 * (SL_OFPX_SET_FWD_MODE, SL_OFPX_FWD_MODE): hex -> decode -> text, text ->
 * encode -> hex (the docs/openflow.md 12.9 examples), and every refusal.
 */
#include "ofp.h"

#include <string.h>

#include "../core/sl_test.h"
#include "../fwd/fwd.h"

/* One golden vector: the text form and the message bytes. */
struct golden {
	uint32_t exp_type;
	const char *text;
	const char *bytes;
};

static const struct golden goldens[] = {
	{SL_OFPX_SET_FWD_MODE, "hypercube:tag=0xf1,addr=0x5,nbr=0x4@1,nbr=0x7@2,nbr=0x1@3",
	 "04 04 00 38 00 00 00 07 53 4c 55 43 00 00 00 04"
	 "00 01 00 28 f1 00 00 00 00 00 00 05 00 03 00 00"
	 "00 00 00 04 00 00 00 01 00 00 00 07 00 00 00 02"
	 "00 00 00 01 00 00 00 03"},
	{SL_OFPX_SET_FWD_MODE, "keyflow:tag=0xf2,key=13",
	 "04 04 00 20 00 00 00 07 53 4c 55 43 00 00 00 04"
	 "00 02 00 10 f2 00 00 00 00 00 00 0d 00 00 00 00"},
	{SL_OFPX_SET_FWD_MODE, "openflow", "04 04 00 10 00 00 00 07 53 4c 55 43 00 00 00 04"},
	{SL_OFPX_FWD_MODE, "hypercube:tag=0xf1,addr=0x0;keyflow:tag=0xc2,key=7",
	 "04 04 00 30 00 00 00 07 53 4c 55 43 00 00 00 05"
	 "00 01 00 10 f1 00 00 00 00 00 00 00 00 00 00 00"
	 "00 02 00 10 c2 00 00 00 00 00 00 07 00 00 00 00"},
};

/* Messages the decoder refuses, with the error it must give. */
struct bad {
	const char *what;
	const char *bytes;
	uint16_t type, code;
};

#define EXP SL_OFPET_EXPERIMENTER
static const struct bad bads[] = {
	{"unknown mode 3",
	 "04 04 00 18 00 00 00 01 53 4c 55 43 00 00 00 04 00 03 00 08 00 00 00 00", EXP,
	 SL_OFPXFE_UNKNOWN_MODE},
	{"mode twice",
	 "04 04 00 30 00 00 00 01 53 4c 55 43 00 00 00 04"
	 "00 02 00 10 f2 00 00 00 00 00 00 0d 00 00 00 00"
	 "00 02 00 10 f2 00 00 00 00 00 00 0d 00 00 00 00",
	 EXP, SL_OFPXFE_DUP_MODE},
	{"TLV length 12",
	 "04 04 00 1c 00 00 00 01 53 4c 55 43 00 00 00 04 00 00 00 0c 00 00 00 00 00 00 00 00",
	 SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN},
	{"TLV past the end",
	 "04 04 00 18 00 00 00 01 53 4c 55 43 00 00 00 04 00 00 00 10 00 00 00 00",
	 SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN},
	{"TLV shorter than its header",
	 "04 04 00 14 00 00 00 01 53 4c 55 43 00 00 00 04 00 00 00 08", SL_OFPET_BAD_REQUEST,
	 SL_OFPBRC_BAD_LEN},
	{"TLV length 0", "04 04 00 18 00 00 00 01 53 4c 55 43 00 00 00 04 00 00 00 00 00 00 00 00",
	 SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN},
	{"keyflow TLV of 8 bytes",
	 "04 04 00 18 00 00 00 01 53 4c 55 43 00 00 00 04 00 02 00 08 f2 00 00 00",
	 SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN},
	{"hypercube: 2 neighbours announced, 1 given",
	 "04 04 00 28 00 00 00 01 53 4c 55 43 00 00 00 04"
	 "00 01 00 18 f1 00 00 00 00 00 00 00 00 02 00 00 00 00 00 01 00 00 00 01",
	 SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN},
	{"hypercube: 33 neighbours",
	 "04 04 00 20 00 00 00 01 53 4c 55 43 00 00 00 04"
	 "00 01 00 10 f1 00 00 00 00 00 00 00 00 21 00 00",
	 EXP, SL_OFPXFE_BAD_PARAM},
	{"non-zero pad",
	 "04 04 00 20 00 00 00 01 53 4c 55 43 00 00 00 04"
	 "00 02 00 10 f2 00 01 00 00 00 00 0d 00 00 00 00",
	 EXP, SL_OFPXFE_BAD_PARAM},
	{"keyflow non-zero pad",
	 "04 04 00 20 00 00 00 01 53 4c 55 43 00 00 00 04"
	 "00 02 00 10 f2 00 00 00 00 00 00 0d 00 00 00 01",
	 EXP, SL_OFPXFE_BAD_PARAM},
	{"exp_type 6", "04 04 00 10 00 00 00 01 53 4c 55 43 00 00 00 06", SL_OFPET_BAD_REQUEST,
	 SL_OFPBRC_BAD_EXP_TYPE},
	{"table declare is not a mode message",
	 "04 04 00 38 00 00 00 01 53 4c 55 43 00 00 00 01 02 02 00 00 00 00 10 00"
	 "66 69 62 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	 "00 00 00 00 00 00 00 00",
	 SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_EXP_TYPE},
	{"other experimenter", "04 04 00 10 00 00 00 01 00 00 23 20 00 00 00 04",
	 SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_EXPERIMENTER},
	{"header only", "04 04 00 08 00 00 00 01", SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN},
};

int
main(void)
{
	struct sl_ofp_buf b;
	uint8_t m[512];

	sl_ofp_buf_init(&b);
	for (unsigned k = 0; k < SL_ARRAY_SIZE(goldens); k++) {
		const struct golden *g = &goldens[k];
		struct sl_fwd_params fp, fp2;
		struct sl_ofp_error e;
		char text[512], err[256];
		uint32_t t = 0;
		size_t n = sl_test_hex(g->bytes, m, sizeof(m));

		/* Bytes -> decode -> text. */
		CHECK(sl_ofp_fwd_mode_decode(m, n, &t, &fp, &e) == 0, "golden %u decodes: %s", k,
		      sl_ofp_error_name(&e));
		CHECK(t == g->exp_type, "golden %u exp_type %u", k, t);
		CHECK(sl_fwd_params_format(&fp, text, sizeof(text)) > 0 &&
			      strcmp(text, g->text) == 0,
		      "golden %u prints '%s', want '%s'", k, text, g->text);
		/* Text -> encode -> the same bytes. */
		CHECK(sl_fwd_params_parse(g->text, &fp2, err, sizeof(err)) == 0, "%s", err);
		sl_ofp_buf_reset(&b);
		CHECK(sl_ofp_fwd_mode_encode(&b, 7, g->exp_type, &fp2) == 0, "encode %u", k);
		CHECK(b.len == n && memcmp(b.data, m, n) == 0,
		      "golden %u encodes to its bytes (%zu/%zu)", k, b.len, n);
		/* Every truncation is refused, never read past the end. */
		for (size_t cut = 8; cut < n; cut += 4) {
			uint8_t c[512];
			memcpy(c, m, cut);
			c[2] = (uint8_t)(cut >> 8);
			c[3] = (uint8_t)cut;
			/* Valid shorter messages: no TLV (16), or golden 3's first TLV only (32).
			 */
			bool whole_tlvs = cut == 16 || (k == 3 && cut == 32);
			CHECK((sl_ofp_fwd_mode_decode(c, cut, &t, &fp, &e) == 0) == whole_tlvs,
			      "golden %u cut at %zu", k, cut);
		}
	}
	for (unsigned k = 0; k < SL_ARRAY_SIZE(bads); k++) {
		const struct bad *bd = &bads[k];
		struct sl_fwd_params fp;
		struct sl_ofp_error e = {0};
		uint32_t t;
		size_t n = sl_test_hex(bd->bytes, m, sizeof(m));

		CHECK(sl_ofp_fwd_mode_decode(m, n, &t, &fp, &e) == -1 && e.type == bd->type &&
			      e.code == bd->code &&
			      (e.type != EXP || e.experimenter == SL_OFP_EXPERIMENTER_ID),
		      "%s: got type 0x%x code 0x%x, want 0x%x 0x%x", bd->what, e.type, e.code,
		      bd->type, bd->code);
	}
	/* Semantic refusals map to their codes; the error message encodes as an experimenter error.
	 */
	CHECK(sl_ofp_fwd_fail_code(SL_FWD_FAIL_DUP_NEIGHBOR) == SL_OFPXFE_DUP_NEIGHBOR, "dup nbr");
	CHECK(sl_ofp_fwd_fail_code(SL_FWD_FAIL_BAD_PARAM) == SL_OFPXFE_BAD_PARAM, "bad param");
	CHECK(sl_ofp_fwd_fail_code(SL_FWD_FAIL_BAD_PORT) == SL_OFPXFE_BAD_PORT, "bad port");
	CHECK(sl_ofp_fwd_fail_code(SL_FWD_FAIL_DUP_TAG) == SL_OFPXFE_DUP_TAG, "dup tag");
	{
		struct sl_ofp_error e = {EXP, SL_OFPXFE_DUP_NEIGHBOR, SL_OFP_EXPERIMENTER_ID};
		uint8_t want[32];
		size_t n = sl_test_hex(
			"04 01 00 1c 00 00 00 09 ff ff 04 03 53 4c 55 43 04 04 00 10 00 00 00 09"
			"53 4c 55 43",
			want, sizeof(want));

		sl_ofp_buf_reset(&b);
		sl_test_hex("04 04 00 10 00 00 00 09 53 4c 55 43 00 00 00 04", m, sizeof(m));
		CHECK(sl_ofp_error_encode(&b, 9, &e, m, 12) == 0 && b.len == n &&
			      memcmp(b.data, want, n) == 0,
		      "OFPT_ERROR experimenter bytes (%zu)", b.len);
	}
	sl_ofp_buf_free(&b);
	return sl_test_summary();
}
