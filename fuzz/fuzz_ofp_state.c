/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_ofp_state: the OpenState experimenter decoders (exp_types 10..16)
 * and the set_state experimenter action on arbitrary bytes (libFuzzer).
 *
 * The input becomes the body of a Sluice experimenter message: the header
 * (version, type, length, experimenter id) is forced, and an exp_type that
 * is not a state one becomes one (from byte 15), so every input reaches a
 * state decoder.  Oracle beyond
 * ASan/UBSan: whatever decodes must re-encode to bytes that decode to the
 * same encoding again; a failure aborts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/ofp/ofp.h"

static struct sl_ofp_buf b1, b2;
static struct sl_ofp_state_mod m1, m2;
static struct sl_table_spec t1, t2;

static void
same(void)
{
	if (b1.len != b2.len || memcmp(b1.data, b2.data, b1.len) != 0)
		abort();
}

static int
flush_into(void *arg, const uint8_t *msg, size_t len)
{
	struct sl_ofp_buf *out = arg;
	uint8_t *p = realloc(out->data, out->len + len);

	if (p == NULL)
		return -1;
	memcpy(p + out->len, msg, len);
	out->data = p;
	out->len += len;
	return 0;
}

static struct sl_ofp_state_dump_writer dw;
static int
reencode(void *arg, const struct sl_ofp_state_entry *e)
{
	(void)arg;
	return sl_ofp_state_dump_append(&dw, e) != 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_ofp_error e;
	struct sl_action acts[SL_ACTIONS_MAX];
	struct sl_state_stats st, st2;
	uint8_t n_acts, tid, tid2;
	uint16_t flags;
	uint32_t exp_type;
	uint8_t *msg;

	if (size < 16 || size > SL_OFP_MSG_MAX)
		return 0;
	msg = malloc(size);
	if (msg == NULL)
		return 0;
	memcpy(msg, data, size);
	exp_type = (uint32_t)msg[12] << 24 | (uint32_t)msg[13] << 16 | (uint32_t)msg[14] << 8 |
		   msg[15];
	if (!sl_ofp_state_exp_type(exp_type))
		exp_type = SL_OFPX_STATE_TABLE + msg[15] % 7;
	msg[0] = 4;
	msg[1] = SL_OFPT_EXPERIMENTER;
	msg[2] = (uint8_t)(size >> 8);
	msg[3] = (uint8_t)size;
	msg[8] = 0x53, msg[9] = 0x4c, msg[10] = 0x55, msg[11] = 0x43;
	msg[12] = msg[13] = msg[14] = 0;
	msg[15] = (uint8_t)exp_type;
	sl_ofp_buf_reset(&b1);
	sl_ofp_buf_reset(&b2);
	/* The body as an action list: reaches the set_state action decoder. */
	(void)sl_ofp_actions_decode(msg + 16, (size - 16) & ~(size_t)7, SL_OFP_ACTX_PACKET_OUT,
				    NULL, acts, &n_acts, &e);
	switch (exp_type) {
	case SL_OFPX_STATE_TABLE:
		if (sl_ofp_state_table_decode(msg, size, &t1, &e) == 0 &&
		    sl_ofp_state_table_encode(&b1, 1, &t1) == 0) {
			if (sl_ofp_state_table_decode(b1.data, b1.len, &t2, &e) != 0 ||
			    sl_ofp_state_table_encode(&b2, 1, &t2) != 0)
				abort();
			same();
		}
		break;
	case SL_OFPX_STATE_SET:
	case SL_OFPX_STATE_DEL:
		if (sl_ofp_state_mod_decode(msg, size, exp_type, &m1, &e) == 0 &&
		    sl_ofp_state_mod_encode(&b1, 1, exp_type, &m1) == 0) {
			if (sl_ofp_state_mod_decode(b1.data, b1.len, exp_type, &m2, &e) != 0 ||
			    sl_ofp_state_mod_encode(&b2, 1, exp_type, &m2) != 0)
				abort();
			same();
		}
		break;
	case SL_OFPX_STATE_DUMP:
	case SL_OFPX_STATE_STATS:
		if (sl_ofp_state_request_decode(msg, size, exp_type, &tid, &e) == 0) {
			if (sl_ofp_state_request_encode(&b1, 1, exp_type, tid) != 0 ||
			    sl_ofp_state_request_decode(b1.data, b1.len, exp_type, &tid2, &e) !=
				    0 ||
			    tid != tid2)
				abort();
		}
		break;
	case SL_OFPX_STATE_DUMP_REPLY: {
		struct sl_ofp_buf out = {0};
		struct sl_ofp_buf scratch;
		sl_ofp_buf_init(&scratch);
		sl_ofp_state_dump_begin(&dw, &scratch, 1, 0, flush_into, &out);
		if (sl_ofp_state_dump_reply_decode(msg, size, &tid, &flags, reencode, NULL, &e) ==
		    0) {
			if (sl_ofp_state_dump_end(&dw) != 0)
				abort();
			/* Every re-encoded part decodes. */
			for (size_t ofs = 0; ofs < out.len;) {
				size_t len = (size_t)out.data[ofs + 2] << 8 | out.data[ofs + 3];
				if (sl_ofp_state_dump_reply_decode(out.data + ofs, len, &tid2,
								   &flags, NULL, NULL, &e) != 0)
					abort();
				ofs += len;
			}
		}
		free(out.data);
		sl_ofp_buf_free(&scratch);
		break;
	}
	default:
		if (sl_ofp_state_stats_reply_decode(msg, size, &tid, &st, &e) == 0) {
			if (sl_ofp_state_stats_reply_encode(&b1, 1, tid, &st) != 0 ||
			    sl_ofp_state_stats_reply_decode(b1.data, b1.len, &tid2, &st2, &e) !=
				    0 ||
			    memcmp(&st, &st2, sizeof(st)) != 0)
				abort();
		}
		break;
	}
	free(msg);
	return 0;
}
