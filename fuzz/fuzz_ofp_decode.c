/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_ofp_decode: every OpenFlow decoder on arbitrary bytes (libFuzzer).
 *
 * The input is one OpenFlow message.  Its header length is set to the input
 * size (a channel frames messages by that field, so a wrong one never
 * reaches a decoder; header_decode's own check is still exercised by inputs
 * shorter than 4 bytes and by the corpus), then the message goes to the
 * decoder its type selects, and the reusable pieces (match, actions,
 * instructions) also run on the body bytes directly.  Multipart replies go
 * through the client-side entry decoders (sluicectl reads them from a
 * switch it does not trust), entry after entry to the end of the body.
 *
 * Oracle beyond ASan/UBSan: whatever decodes must re-encode, decode again
 * to the same thing and re-encode to the same bytes (encode is idempotent
 * on decoded values); a failure aborts.  Multipart requests also go
 * through the reassembler in two pieces (mp_assemble_split).
 */
#include "../src/ofp/ofp.h"

#include <string.h>

static struct sl_ofp_flow_mod fm, fm2;
static struct sl_ofp_group_mod gm, gm2;
static struct sl_ofp_meter_mod mm, mm2;
static struct sl_ofp_packet_out po, po2;
static struct sl_ofp_mp_request req, req2;
static struct sl_table_spec ts, ts2;
static struct sl_ofp_ll_set ls, ls2;
static struct sl_ofp_ffp_config fcf, fcf2;
static struct sl_instructions insns;
static struct sl_match match;
static struct sl_action acts[SL_ACTIONS_MAX];
static struct sl_ofp_buf b1, b2;

/* Encode twice through a decode; the two encodings must match byte for byte. */
#define ROUND_TRIP(encode, decode, x, y)                                                           \
	do {                                                                                       \
		struct sl_ofp_error e2_;                                                           \
		sl_ofp_buf_reset(&b1);                                                             \
		sl_ofp_buf_reset(&b2);                                                             \
		if (encode(&b1, 1, &(x)) != 0)                                                     \
			break; /* -EMSGSIZE: a decoded message may grow when re-encoded */         \
		if (decode(b1.data, b1.len, &(y), &e2_) != 0) {                                    \
			fprintf(stderr, "re-decode failed: %s\n", sl_ofp_error_name(&e2_));        \
			abort();                                                                   \
		}                                                                                  \
		if (encode(&b2, 1, &(y)) != 0 || b1.len != b2.len ||                               \
		    memcmp(b1.data, b2.data, b1.len) != 0)                                         \
			abort();                                                                   \
	} while (0)

static void
decode_pieces(const uint8_t *p, size_t n)
{
	struct sl_ofp_error e;
	size_t used;
	uint8_t n_acts;

	if (sl_ofp_match_decode(p, n, &match, &used, &e) == 0 && used > n)
		abort();
	(void)sl_ofp_actions_decode(p, n & ~(size_t)7, SL_OFP_ACTX_PACKET_OUT, NULL, acts, &n_acts,
				    &e);
	(void)sl_ofp_instructions_decode(p, n, 0, &match, &insns, &e);
}

/* Forwarding-mode messages: decode, re-encode, decode again to the same bytes. */
static void
fwd_mode_round_trip(const uint8_t *msg, size_t size)
{
	static struct sl_fwd_params fp, fp2;
	struct sl_ofp_error e;
	uint32_t t, t2;

	if (sl_ofp_fwd_mode_decode(msg, size, &t, &fp, &e) != 0)
		return;
	sl_ofp_buf_reset(&b1);
	sl_ofp_buf_reset(&b2);
	if (sl_ofp_fwd_mode_encode(&b1, 1, t, &fp) != 0)
		return;
	if (sl_ofp_fwd_mode_decode(b1.data, b1.len, &t2, &fp2, &e) != 0 || t2 != t)
		abort();
	if (sl_ofp_fwd_mode_encode(&b2, 1, t2, &fp2) != 0 || b1.len != b2.len ||
	    memcmp(b1.data, b2.data, b1.len) != 0)
		abort();
}

/*
 * Multipart request reassembly (sl_ofp_mp_assemble).  Oracle: the request
 * cut in two pieces (an empty first piece; for TABLE_FEATURES, whose body
 * is an array, a cut anywhere in the body) comes back as its own bytes
 * with REQ_MORE clear, or, for a type with a fixed body, with the error
 * the body decoder gives the whole request; a lone piece with REQ_MORE is
 * never answered; nothing stays open afterwards.
 */
static void
mp_assemble_split(const uint8_t *msg, size_t size)
{
	static struct sl_ofp_mp_assembler a;
	static uint8_t whole[65536], p1[65536], p2[65536];
	struct sl_ofp_error e, e2;
	const uint8_t *r;
	size_t rl;
	int rc;

	if (size < 16 || size > 65535)
		return;
	rc = sl_ofp_mp_assemble(&a, msg, size, &r, &rl, &e);
	if (rc == 1 && ((msg[11] & SL_OFPMPF_REQ_MORE) || r != msg || rl != size))
		abort();
	sl_ofp_mp_assembler_clear(&a);

	memcpy(whole, msg, size);
	whole[10] = whole[11] = 0; /* flags */
	if (sl_ofp_mp_assemble(&a, whole, size, &r, &rl, &e) != 1)
		goto out; /* the header's error */
	size_t blen = size - 16, cut = 0;
	bool array = whole[8] == 0 && whole[9] == SL_OFPMP_TABLE_FEATURES;
	if (array && blen > 0)
		cut = whole[size - 1] % (blen + 1);
	memcpy(p1, whole, 16 + cut);
	p1[2] = (uint8_t)((16 + cut) >> 8);
	p1[3] = (uint8_t)(16 + cut);
	p1[11] = SL_OFPMPF_REQ_MORE;
	memcpy(p2, whole, 16);
	memcpy(p2 + 16, whole + 16 + cut, blen - cut);
	p2[2] = (uint8_t)((16 + blen - cut) >> 8);
	p2[3] = (uint8_t)(16 + blen - cut);
	if (sl_ofp_mp_assemble(&a, p1, 16 + cut, &r, &rl, &e) != 0)
		abort();
	rc = sl_ofp_mp_assemble(&a, p2, 16 + blen - cut, &r, &rl, &e);
	if (!array && blen > 0 && sl_ofp_mp_request_decode(whole, size, &req, &e2) != 0) {
		if (rc != -1 || e.type != e2.type || e.code != e2.code)
			abort();
	} else if (rc != 1 || rl != size || memcmp(r, whole, size) != 0) {
		abort();
	}
out:
	if (a.n_open != 0 || a.held != 0)
		abort();
	sl_ofp_mp_assembler_clear(&a);
}

/*
 * A multipart reply: every entry of its body through the decoder of its
 * type.  Oracle: a decoder that succeeds moves the offset forward and
 * never past the body; one that fails leaves it alone.
 */
static int
mp_reply_entries(const uint8_t *msg, size_t size, struct sl_ofp_error *e)
{
	static struct sl_flow_spec fs;
	static struct sl_group_spec gd;
	static struct sl_ofp_group_stats gst;
	static struct sl_ofp_table_features tf;
	static struct sl_meter_stats mst;
	static struct sl_meter_spec mc;
	struct sl_ofp_meter_features mf;
	struct sl_ofp_flow_stats fst;
	struct sl_ofp_table_stats ts_;
	struct sl_ofp_port_stats ps;
	struct sl_ofp_port_desc pd;
	struct sl_ofp_mp_reply r;
	uint32_t id, sec, nsec;

	if (sl_ofp_mp_reply_decode(msg, size, &r, e) != 0)
		return -1;
	if (r.type == SL_OFPMP_METER_FEATURES)
		return sl_ofp_meter_features_decode(r.body, r.body_len, &mf, e);
	for (size_t ofs = 0; ofs < r.body_len;) {
		size_t before = ofs;
		int rc;

		switch (r.type) {
		case SL_OFPMP_FLOW:
			rc = sl_ofp_flow_stats_entry_decode(r.body, r.body_len, &ofs, &fs, &fst, e);
			break;
		case SL_OFPMP_TABLE:
			rc = sl_ofp_table_stats_entry_decode(r.body, r.body_len, &ofs, &ts_, e);
			break;
		case SL_OFPMP_PORT_STATS:
			rc = sl_ofp_port_stats_entry_decode(r.body, r.body_len, &ofs, &ps, e);
			break;
		case SL_OFPMP_PORT_DESC:
			rc = sl_ofp_port_desc_entry_decode(r.body, r.body_len, &ofs, &pd, e);
			break;
		case SL_OFPMP_GROUP:
			rc = sl_ofp_group_stats_entry_decode(r.body, r.body_len, &ofs, &gst, e);
			break;
		case SL_OFPMP_GROUP_DESC:
			rc = sl_ofp_group_desc_entry_decode(r.body, r.body_len, &ofs, &gd, e);
			break;
		case SL_OFPMP_TABLE_FEATURES:
			rc = sl_ofp_table_features_entry_decode(r.body, r.body_len, &ofs, &tf, e);
			break;
		case SL_OFPMP_METER:
			rc = sl_ofp_meter_stats_entry_decode(r.body, r.body_len, &ofs, &id, &sec,
							     &nsec, &mst, e);
			if (rc == 0 && mst.n_bands > SL_METER_BANDS_MAX)
				abort();
			break;
		case SL_OFPMP_METER_CONFIG:
			rc = sl_ofp_meter_config_entry_decode(r.body, r.body_len, &ofs, &mc, e);
			if (rc == 0 && mc.n_bands > SL_METER_BANDS_MAX)
				abort();
			break;
		default:
			return 0; /* no client-side decoder */
		}
		if (rc != 0) {
			if (ofs != before)
				abort();
			return rc;
		}
		if (ofs <= before || ofs > r.body_len)
			abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_ofp_experimenter x;
	struct sl_ofp_header h;
	struct sl_ofp_error e, got;
	int rc;
	const uint8_t *d;
	size_t dlen;
	uint8_t *msg;
	union {
		struct sl_ofp_switch_config sc;
		struct sl_ofp_role role;
		struct sl_ofp_async_config ac;
		struct sl_ofp_port_mod pm;
		struct sl_ofp_table_mod tm;
		uint32_t u32;
	} u;

	if (size > SL_OFP_MSG_MAX)
		size = SL_OFP_MSG_MAX;
	/* An exact-size copy: any read past the message is an ASan report. */
	msg = malloc(size ? size : 1);
	if (msg == NULL)
		return 0;
	memcpy(msg, data, size);
	if (size >= 4) {
		msg[2] = (uint8_t)(size >> 8);
		msg[3] = (uint8_t)size;
	}
	if (size > 8)
		decode_pieces(msg + 8, size - 8);
	if (sl_ofp_header_decode(msg, size, &h, &e) != 0)
		goto out;
	rc = 0;

	switch (h.type) {
	case SL_OFPT_HELLO:
		rc = sl_ofp_hello_decode(msg, size, &u.u32, &e);
		break;
	case SL_OFPT_ERROR:
		rc = sl_ofp_error_decode(msg, size, &got, &d, &dlen, &e);
		break;
	case SL_OFPT_ECHO_REQUEST:
	case SL_OFPT_ECHO_REPLY:
		rc = sl_ofp_echo_decode(msg, size, &d, &dlen, &e);
		break;
	case SL_OFPT_EXPERIMENTER:
		if ((rc = sl_ofp_experimenter_decode(msg, size, &x, &e)) != 0)
			break;
		if (x.exp_type == SL_OFPX_LL_SET) {
			if ((rc = sl_ofp_ll_set_decode(msg, size, &ls, &e)) == 0)
				ROUND_TRIP(sl_ofp_ll_set_encode, sl_ofp_ll_set_decode, ls, ls2);
		} else if (x.exp_type == SL_OFPX_FFP_CONFIG) {
			if ((rc = sl_ofp_ffp_config_decode(msg, size, &fcf, &e)) == 0)
				ROUND_TRIP(sl_ofp_ffp_config_encode, sl_ofp_ffp_config_decode, fcf,
					   fcf2);
		} else if (x.exp_type == SL_OFPX_SET_FWD_MODE || x.exp_type == SL_OFPX_FWD_MODE) {
			fwd_mode_round_trip(msg, size);
		} else if ((rc = sl_ofp_table_declare_decode(msg, size, &ts, &e)) == 0) {
			ROUND_TRIP(sl_ofp_table_declare_encode, sl_ofp_table_declare_decode, ts,
				   ts2);
		}
		break;
	case SL_OFPT_SET_CONFIG:
		rc = sl_ofp_set_config_decode(msg, size, &u.sc, &e);
		break;
	case SL_OFPT_PACKET_OUT:
		if ((rc = sl_ofp_packet_out_decode(msg, size, &po, &e)) == 0)
			ROUND_TRIP(sl_ofp_packet_out_encode, sl_ofp_packet_out_decode, po, po2);
		break;
	case SL_OFPT_FLOW_MOD:
		if ((rc = sl_ofp_flow_mod_decode(msg, size, &fm, &e)) == 0)
			ROUND_TRIP(sl_ofp_flow_mod_encode, sl_ofp_flow_mod_decode, fm, fm2);
		break;
	case SL_OFPT_GROUP_MOD:
		if ((rc = sl_ofp_group_mod_decode(msg, size, &gm, &e)) == 0)
			ROUND_TRIP(sl_ofp_group_mod_encode, sl_ofp_group_mod_decode, gm, gm2);
		break;
	case SL_OFPT_METER_MOD:
		if ((rc = sl_ofp_meter_mod_decode(msg, size, &mm, &e)) == 0)
			ROUND_TRIP(sl_ofp_meter_mod_encode, sl_ofp_meter_mod_decode, mm, mm2);
		break;
	case SL_OFPT_MULTIPART_REPLY:
		rc = mp_reply_entries(msg, size, &e);
		break;
	case SL_OFPT_PORT_MOD:
		rc = sl_ofp_port_mod_decode(msg, size, &u.pm, &e);
		break;
	case SL_OFPT_TABLE_MOD:
		rc = sl_ofp_table_mod_decode(msg, size, &u.tm, &e);
		break;
	case SL_OFPT_MULTIPART_REQUEST:
		if ((rc = sl_ofp_mp_request_decode(msg, size, &req, &e)) == 0)
			ROUND_TRIP(sl_ofp_mp_request_encode, sl_ofp_mp_request_decode, req, req2);
		mp_assemble_split(msg, size);
		break;
	case SL_OFPT_ROLE_REQUEST:
		rc = sl_ofp_role_request_decode(msg, size, &u.role, &e);
		break;
	case SL_OFPT_SET_ASYNC:
		rc = sl_ofp_set_async_decode(msg, size, &u.ac, &e);
		break;
	case SL_OFPT_QUEUE_GET_CONFIG_REQUEST:
		rc = sl_ofp_queue_get_config_decode(msg, size, &u.u32, &e);
		break;
	default:
		rc = sl_ofp_empty_decode(msg, size, &e);
		break;
	}
	/* Every error a decoder reports is one OpenFlow 1.3 defines (or the ONF one). */
	if (rc != 0 && strcmp(sl_ofp_error_name(&e), "UNKNOWN_ERROR") == 0)
		abort();
out:
	free(msg);
	return 0;
}
