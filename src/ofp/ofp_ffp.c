/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sluice experimenter messages of the fast forwarding path:
 * SL_OFPX_LL_SET (exp_type 2) and SL_OFPX_FFP_CONFIG (exp_type 3).  Byte
 * layouts: docs/openflow.md sections 12.7 and 12.8.
 */
#include "ofp.h"
#include "ofp_priv.h"

#include <errno.h>
#include <string.h>

#define HDR 16          /* ofp_header + experimenter + exp_type */
#define LL_SET_FIXED 40 /* through cookie_mask; the ofp_match follows */
#define FFP_CONFIG_LEN 24

static int
exp_check(const void *msg, size_t len, uint32_t exp_type, size_t min_len, struct sl_ofp_error *err)
{
	struct sl_ofp_experimenter x;

	if (sl_ofp_experimenter_decode(msg, len, &x, err) < 0)
		return -1;
	if (x.exp_type != exp_type)
		return FAIL_BRC(err, BAD_EXP_TYPE);
	if (len < min_len)
		return FAIL_BRC(err, BAD_LEN);
	return 0;
}

int
sl_ofp_ll_set_decode(const void *msg, size_t len, struct sl_ofp_ll_set *ls,
		     struct sl_ofp_error *err)
{
	const uint8_t *p = msg;
	size_t consumed = 0;

	memset(ls, 0, sizeof(*ls));
	if (exp_check(msg, len, SL_OFPX_LL_SET, LL_SET_FIXED + 8, err) < 0)
		return -1;
	ls->table_id = p[16];
	ls->command = p[17];
	ls->flags = rd16(p + 18);
	ls->priority = rd16(p + 20);
	ls->cookie = (uint64_t)rd32(p + 24) << 32 | rd32(p + 28);
	ls->cookie_mask = (uint64_t)rd32(p + 32) << 32 | rd32(p + 36);
	if (ls->command > SL_OFPX_LL_SET_ON)
		return ofp_fail(err, SL_OFPET_FLOW_MOD_FAILED, SL_OFPFMFC_BAD_COMMAND);
	if (ls->flags & ~SL_OFPX_LL_STRICT)
		return ofp_fail(err, SL_OFPET_FLOW_MOD_FAILED, SL_OFPFMFC_BAD_FLAGS);
	if (!all_zero(p + 22, 2))
		return FAIL_BRC(err, BAD_LEN);
	if (ls->table_id >= SL_TABLES_MAX &&
	    !(ls->table_id == SL_OFPTT_ALL && !(ls->flags & SL_OFPX_LL_STRICT)))
		return ofp_fail(err, SL_OFPET_FLOW_MOD_FAILED, SL_OFPFMFC_BAD_TABLE_ID);
	if (sl_ofp_match_decode(p + LL_SET_FIXED, len - LL_SET_FIXED, &ls->match, &consumed, err) <
	    0)
		return -1;
	if (LL_SET_FIXED + consumed != len)
		return FAIL_BRC(err, BAD_LEN);
	return 0;
}

int
sl_ofp_ll_set_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_ll_set *ls)
{
	size_t start = b->len;
	uint8_t *p = ofp_msg_start(b, SL_OFPT_EXPERIMENTER, xid, LL_SET_FIXED);
	int rc;

	if (p == NULL)
		return -ENOMEM;
	wr32(p + 8, SL_OFP_EXPERIMENTER_ID);
	wr32(p + 12, SL_OFPX_LL_SET);
	p[16] = ls->table_id;
	p[17] = ls->command;
	wr16(p + 18, ls->flags);
	wr16(p + 20, ls->priority);
	wr32(p + 24, (uint32_t)(ls->cookie >> 32));
	wr32(p + 28, (uint32_t)ls->cookie);
	wr32(p + 32, (uint32_t)(ls->cookie_mask >> 32));
	wr32(p + 36, (uint32_t)ls->cookie_mask);
	if ((rc = sl_ofp_match_encode(b, &ls->match)) < 0) {
		b->len = start;
		return rc;
	}
	return ofp_msg_end(b, start);
}

int
sl_ofp_ffp_config_decode(const void *msg, size_t len, struct sl_ofp_ffp_config *fc,
			 struct sl_ofp_error *err)
{
	const uint8_t *p = msg;

	memset(fc, 0, sizeof(*fc));
	if (exp_check(msg, len, SL_OFPX_FFP_CONFIG, FFP_CONFIG_LEN, err) < 0)
		return -1;
	if (len != FFP_CONFIG_LEN)
		return FAIL_BRC(err, BAD_LEN);
	fc->flags = p[16];
	fc->min_timeout = rd16(p + 18);
	fc->min_pps = rd32(p + 20);
	if (fc->flags & ~(SL_OFPX_FFP_ON | SL_OFPX_FFP_AUTO | SL_OFPX_FFP_NO_MODEL))
		return ofp_fail(err, SL_OFPET_SWITCH_CONFIG_FAILED, SL_OFPSCFC_BAD_FLAGS);
	if (p[17] != 0)
		return FAIL_BRC(err, BAD_LEN);
	if ((fc->flags & SL_OFPX_FFP_AUTO) && fc->min_pps == 0)
		return ofp_fail(err, SL_OFPET_SWITCH_CONFIG_FAILED, SL_OFPSCFC_BAD_FLAGS);
	return 0;
}

int
sl_ofp_ffp_config_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_ffp_config *fc)
{
	size_t start = b->len;
	uint8_t *p = ofp_msg_start(b, SL_OFPT_EXPERIMENTER, xid, FFP_CONFIG_LEN);

	if (p == NULL)
		return -ENOMEM;
	wr32(p + 8, SL_OFP_EXPERIMENTER_ID);
	wr32(p + 12, SL_OFPX_FFP_CONFIG);
	p[16] = fc->flags;
	p[17] = 0;
	wr16(p + 18, fc->min_timeout);
	wr32(p + 20, fc->min_pps);
	return ofp_msg_end(b, start);
}
