/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Forwarding-mode experimenter messages (control path): SL_OFPX_SET_FWD_MODE
 * and SL_OFPX_FWD_MODE (get request / reply).  Byte layout:
 * docs/openflow.md section 12.9.  Decoders check every length and field;
 * the parameter semantics (neighbours one bit away, key > port count, ...)
 * are checked by sl_fwd_params_check on the switch.
 */
#include <errno.h>
#include <string.h>

#include "ofp.h"
#include "ofp_priv.h"

/* TLV header: mode, len, tag, pad[3]. */
#define FWD_TLV_HDR 8
#define FWD_HC_FIXED 16
#define FWD_KF_LEN 16

static int
fail_fwd(struct sl_ofp_error *err, uint16_t code)
{
	if (err != NULL) {
		err->type = SL_OFPET_EXPERIMENTER;
		err->code = code;
		err->experimenter = SL_OFP_EXPERIMENTER_ID;
	}
	return -1;
}

uint16_t
sl_ofp_fwd_fail_code(enum sl_fwd_fail f)
{
	switch (f) {
	case SL_FWD_FAIL_UNKNOWN_MODE:
		return SL_OFPXFE_UNKNOWN_MODE;
	case SL_FWD_FAIL_DUP_MODE:
		return SL_OFPXFE_DUP_MODE;
	case SL_FWD_FAIL_DUP_TAG:
		return SL_OFPXFE_DUP_TAG;
	case SL_FWD_FAIL_DUP_NEIGHBOR:
		return SL_OFPXFE_DUP_NEIGHBOR;
	case SL_FWD_FAIL_BAD_PORT:
		return SL_OFPXFE_BAD_PORT;
	default:
		return SL_OFPXFE_BAD_PARAM;
	}
}

static int
decode_tlvs(const uint8_t *p, size_t len, struct sl_fwd_params *fp, struct sl_ofp_error *err)
{
	bool seen[SL_FWD__MAX] = {false};

	memset(fp, 0, sizeof(*fp));
	while (len > 0) {
		uint16_t mode, tlen;
		struct sl_fwd_mode_params *mp;

		if (len < FWD_TLV_HDR)
			return FAIL_BRC(err, BAD_LEN);
		mode = rd16(p);
		tlen = rd16(p + 2);
		if (tlen < FWD_TLV_HDR || tlen % 8 != 0 || tlen > len)
			return FAIL_BRC(err, BAD_LEN);
		if (mode >= SL_FWD__MAX)
			return fail_fwd(err, SL_OFPXFE_UNKNOWN_MODE);
		if (seen[mode])
			return fail_fwd(err, SL_OFPXFE_DUP_MODE);
		seen[mode] = true;
		if (!all_zero(p + 5, 3))
			return fail_fwd(err, SL_OFPXFE_BAD_PARAM);
		switch (mode) {
		case SL_FWD_OPENFLOW:
			if (tlen != FWD_TLV_HDR)
				return FAIL_BRC(err, BAD_LEN);
			break;
		case SL_FWD_HYPERCUBE: {
			unsigned n;

			if (tlen < FWD_HC_FIXED)
				return FAIL_BRC(err, BAD_LEN);
			n = rd16(p + 12);
			if (n > SL_FWD_NEIGH_MAX)
				return fail_fwd(err, SL_OFPXFE_BAD_PARAM);
			if (tlen != FWD_HC_FIXED + 8 * n)
				return FAIL_BRC(err, BAD_LEN);
			if (!all_zero(p + 14, 2))
				return fail_fwd(err, SL_OFPXFE_BAD_PARAM);
			mp = &fp->modes[fp->n_modes++];
			mp->mode = SL_FWD_HYPERCUBE;
			mp->tag = p[4];
			mp->hc.addr = rd32(p + 8);
			mp->hc.n_neigh = (uint16_t)n;
			for (unsigned i = 0; i < n; i++) {
				mp->hc.neigh[i].addr = rd32(p + FWD_HC_FIXED + 8 * i);
				mp->hc.neigh[i].port = rd32(p + FWD_HC_FIXED + 8 * i + 4);
			}
			break;
		}
		case SL_FWD_KEYFLOW:
			if (tlen != FWD_KF_LEN)
				return FAIL_BRC(err, BAD_LEN);
			if (!all_zero(p + 12, 4))
				return fail_fwd(err, SL_OFPXFE_BAD_PARAM);
			mp = &fp->modes[fp->n_modes++];
			mp->mode = SL_FWD_KEYFLOW;
			mp->tag = p[4];
			mp->kf.key = rd32(p + 8);
			break;
		}
		p += tlen;
		len -= tlen;
	}
	return 0;
}

int
sl_ofp_fwd_mode_decode(const void *msg, size_t len, uint32_t *exp_type, struct sl_fwd_params *fp,
		       struct sl_ofp_error *err)
{
	struct sl_ofp_experimenter x;

	if (sl_ofp_experimenter_decode(msg, len, &x, err) < 0)
		return -1;
	if (x.exp_type != SL_OFPX_SET_FWD_MODE && x.exp_type != SL_OFPX_FWD_MODE)
		return FAIL_BRC(err, BAD_EXP_TYPE);
	*exp_type = x.exp_type;
	return decode_tlvs(x.data, x.data_len, fp, err);
}

int
sl_ofp_fwd_mode_encode(struct sl_ofp_buf *b, uint32_t xid, uint32_t exp_type,
		       const struct sl_fwd_params *fp)
{
	size_t start = b->len;
	uint8_t *p;

	if ((exp_type != SL_OFPX_SET_FWD_MODE && exp_type != SL_OFPX_FWD_MODE) ||
	    fp->n_modes > SL_ARRAY_SIZE(fp->modes))
		return -EINVAL;
	p = ofp_msg_start(b, SL_OFPT_EXPERIMENTER, xid, sizeof(struct ofp_experimenter_header));
	if (p == NULL)
		return -ENOMEM;
	wr32(p + 8, SL_OFP_EXPERIMENTER_ID);
	wr32(p + 12, exp_type);
	for (unsigned i = 0; i < fp->n_modes; i++) {
		const struct sl_fwd_mode_params *mp = &fp->modes[i];
		size_t tlen;

		switch (mp->mode) {
		case SL_FWD_OPENFLOW:
			tlen = FWD_TLV_HDR;
			break;
		case SL_FWD_HYPERCUBE:
			if (mp->hc.n_neigh > SL_FWD_NEIGH_MAX)
				goto inval;
			tlen = FWD_HC_FIXED + 8u * mp->hc.n_neigh;
			break;
		case SL_FWD_KEYFLOW:
			tlen = FWD_KF_LEN;
			break;
		default:
			goto inval;
		}
		p = ofp_buf_put(b, tlen);
		if (p == NULL) {
			b->len = start;
			return -ENOMEM;
		}
		wr16(p, (uint16_t)mp->mode);
		wr16(p + 2, (uint16_t)tlen);
		p[4] = mp->tag;
		if (mp->mode == SL_FWD_HYPERCUBE) {
			wr32(p + 8, mp->hc.addr);
			wr16(p + 12, mp->hc.n_neigh);
			for (unsigned k = 0; k < mp->hc.n_neigh; k++) {
				wr32(p + FWD_HC_FIXED + 8 * k, mp->hc.neigh[k].addr);
				wr32(p + FWD_HC_FIXED + 8 * k + 4, mp->hc.neigh[k].port);
			}
		} else if (mp->mode == SL_FWD_KEYFLOW) {
			wr32(p + 8, mp->kf.key);
		}
	}
	return ofp_msg_end(b, start);
inval:
	b->len = start;
	return -EINVAL;
}
