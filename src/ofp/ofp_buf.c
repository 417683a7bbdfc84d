/* SPDX-License-Identifier: BSD-3-Clause */
/* Control path: the message buffer, header framing and the name tables for logs. */
#include "ofp.h"

#include <string.h>

#include "ofp_priv.h"

void
sl_ofp_buf_init(struct sl_ofp_buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void
sl_ofp_buf_reset(struct sl_ofp_buf *b)
{
	b->len = 0;
}

void
sl_ofp_buf_free(struct sl_ofp_buf *b)
{
	if (b == NULL)
		return;
	free(b->data);
	sl_ofp_buf_init(b);
}

int
ofp_buf_reserve(struct sl_ofp_buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (n <= b->cap - b->len)
		return 0;
	if (n > SIZE_MAX / 2 - b->len)
		return -ENOMEM;
	/* Doubling keeps appends amortised O(1) while a reply grows. */
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n)
		cap *= 2;
	p = realloc(b->data, cap);
	if (p == NULL)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

uint8_t *
ofp_buf_put(struct sl_ofp_buf *b, size_t n)
{
	uint8_t *p;

	if (ofp_buf_reserve(b, n) < 0)
		return NULL;
	p = b->data + b->len;
	memset(p, 0, n);
	b->len += n;
	return p;
}

int
ofp_buf_put_bytes(struct sl_ofp_buf *b, const void *src, size_t n)
{
	uint8_t *p;

	if (n == 0)
		return 0;
	p = ofp_buf_put(b, n);
	if (p == NULL)
		return -ENOMEM;
	memcpy(p, src, n);
	return 0;
}

uint8_t *
ofp_msg_start(struct sl_ofp_buf *b, uint8_t type, uint32_t xid, size_t fixed_len)
{
	struct ofp_header *h = (struct ofp_header *)ofp_buf_put(b, fixed_len);

	if (h == NULL)
		return NULL;
	h->version = SL_OFP_VERSION;
	h->type = type;
	h->xid = sl_ofp_hton32(xid);
	return (uint8_t *)h;
}

int
ofp_msg_end(struct sl_ofp_buf *b, size_t start)
{
	size_t n = b->len - start;

	if (n > SL_OFP_MSG_MAX) {
		b->len = start;
		return -EMSGSIZE;
	}
	wr16(b->data + start + 2, (uint16_t)n);
	return 0;
}

int
sl_ofp_header_decode(const void *msg, size_t len, struct sl_ofp_header *h, struct sl_ofp_error *err)
{
	const uint8_t *p = msg;

	if (len < SL_OFP_HEADER_LEN)
		return FAIL_BRC(err, BAD_LEN);
	h->version = p[0];
	h->type = p[1];
	h->length = rd16(p + 2);
	h->xid = rd32(p + 4);
	if (h->length != len)
		return FAIL_BRC(err, BAD_LEN);
	if (h->version != SL_OFP_VERSION && h->type != SL_OFPT_HELLO)
		return FAIL_BRC(err, BAD_VERSION);
	if (h->type > SL_OFPT__MAX)
		return FAIL_BRC(err, BAD_TYPE);
	return 0;
}

const uint8_t *
ofp_msg_check(const void *msg, size_t len, uint8_t type, size_t min_len, struct sl_ofp_error *err)
{
	struct sl_ofp_header h;

	if (sl_ofp_header_decode(msg, len, &h, err) < 0)
		return NULL;
	if (h.type != type) {
		FAIL_BRC(err, BAD_TYPE);
		return NULL;
	}
	if (len < min_len) {
		FAIL_BRC(err, BAD_LEN);
		return NULL;
	}
	return msg;
}

/*
 * Names.
 */

static const char *const type_names[] = {
	[SL_OFPT_HELLO] = "OFPT_HELLO",
	[SL_OFPT_ERROR] = "OFPT_ERROR",
	[SL_OFPT_ECHO_REQUEST] = "OFPT_ECHO_REQUEST",
	[SL_OFPT_ECHO_REPLY] = "OFPT_ECHO_REPLY",
	[SL_OFPT_EXPERIMENTER] = "OFPT_EXPERIMENTER",
	[SL_OFPT_FEATURES_REQUEST] = "OFPT_FEATURES_REQUEST",
	[SL_OFPT_FEATURES_REPLY] = "OFPT_FEATURES_REPLY",
	[SL_OFPT_GET_CONFIG_REQUEST] = "OFPT_GET_CONFIG_REQUEST",
	[SL_OFPT_GET_CONFIG_REPLY] = "OFPT_GET_CONFIG_REPLY",
	[SL_OFPT_SET_CONFIG] = "OFPT_SET_CONFIG",
	[SL_OFPT_PACKET_IN] = "OFPT_PACKET_IN",
	[SL_OFPT_FLOW_REMOVED] = "OFPT_FLOW_REMOVED",
	[SL_OFPT_PORT_STATUS] = "OFPT_PORT_STATUS",
	[SL_OFPT_PACKET_OUT] = "OFPT_PACKET_OUT",
	[SL_OFPT_FLOW_MOD] = "OFPT_FLOW_MOD",
	[SL_OFPT_GROUP_MOD] = "OFPT_GROUP_MOD",
	[SL_OFPT_PORT_MOD] = "OFPT_PORT_MOD",
	[SL_OFPT_TABLE_MOD] = "OFPT_TABLE_MOD",
	[SL_OFPT_MULTIPART_REQUEST] = "OFPT_MULTIPART_REQUEST",
	[SL_OFPT_MULTIPART_REPLY] = "OFPT_MULTIPART_REPLY",
	[SL_OFPT_BARRIER_REQUEST] = "OFPT_BARRIER_REQUEST",
	[SL_OFPT_BARRIER_REPLY] = "OFPT_BARRIER_REPLY",
	[SL_OFPT_QUEUE_GET_CONFIG_REQUEST] = "OFPT_QUEUE_GET_CONFIG_REQUEST",
	[SL_OFPT_QUEUE_GET_CONFIG_REPLY] = "OFPT_QUEUE_GET_CONFIG_REPLY",
	[SL_OFPT_ROLE_REQUEST] = "OFPT_ROLE_REQUEST",
	[SL_OFPT_ROLE_REPLY] = "OFPT_ROLE_REPLY",
	[SL_OFPT_GET_ASYNC_REQUEST] = "OFPT_GET_ASYNC_REQUEST",
	[SL_OFPT_GET_ASYNC_REPLY] = "OFPT_GET_ASYNC_REPLY",
	[SL_OFPT_SET_ASYNC] = "OFPT_SET_ASYNC",
	[SL_OFPT_METER_MOD] = "OFPT_METER_MOD",
};
static_assert(SL_ARRAY_SIZE(type_names) == SL_OFPT__MAX + 1, "one name per message type");

const char *
sl_ofp_type_name(uint8_t type)
{
	return type < SL_ARRAY_SIZE(type_names) ? type_names[type] : "OFPT_UNKNOWN";
}

static const char *const mp_names[] = {
	[SL_OFPMP_DESC] = "OFPMP_DESC",
	[SL_OFPMP_FLOW] = "OFPMP_FLOW",
	[SL_OFPMP_AGGREGATE] = "OFPMP_AGGREGATE",
	[SL_OFPMP_TABLE] = "OFPMP_TABLE",
	[SL_OFPMP_PORT_STATS] = "OFPMP_PORT_STATS",
	[SL_OFPMP_QUEUE] = "OFPMP_QUEUE",
	[SL_OFPMP_GROUP] = "OFPMP_GROUP",
	[SL_OFPMP_GROUP_DESC] = "OFPMP_GROUP_DESC",
	[SL_OFPMP_GROUP_FEATURES] = "OFPMP_GROUP_FEATURES",
	[SL_OFPMP_METER] = "OFPMP_METER",
	[SL_OFPMP_METER_CONFIG] = "OFPMP_METER_CONFIG",
	[SL_OFPMP_METER_FEATURES] = "OFPMP_METER_FEATURES",
	[SL_OFPMP_TABLE_FEATURES] = "OFPMP_TABLE_FEATURES",
	[SL_OFPMP_PORT_DESC] = "OFPMP_PORT_DESC",
};

const char *
sl_ofp_mp_type_name(uint16_t type)
{
	if (type == SL_OFPMP_EXPERIMENTER)
		return "OFPMP_EXPERIMENTER";
	return type < SL_ARRAY_SIZE(mp_names) ? mp_names[type] : "OFPMP_UNKNOWN";
}

/* Codes of each error type, in code order (OpenFlow 1.3.5 section A.4.4). */
static const char *const hfc[] = {"OFPHFC_INCOMPATIBLE", "OFPHFC_EPERM"};
static const char *const brc[] = {
	"OFPBRC_BAD_VERSION",    "OFPBRC_BAD_TYPE",
	"OFPBRC_BAD_MULTIPART",  "OFPBRC_BAD_EXPERIMENTER",
	"OFPBRC_BAD_EXP_TYPE",   "OFPBRC_EPERM",
	"OFPBRC_BAD_LEN",        "OFPBRC_BUFFER_EMPTY",
	"OFPBRC_BUFFER_UNKNOWN", "OFPBRC_BAD_TABLE_ID",
	"OFPBRC_IS_SLAVE",       "OFPBRC_BAD_PORT",
	"OFPBRC_BAD_PACKET",     "OFPBRC_MULTIPART_BUFFER_OVERFLOW",
};
static const char *const bac[] = {
	"OFPBAC_BAD_TYPE",
	"OFPBAC_BAD_LEN",
	"OFPBAC_BAD_EXPERIMENTER",
	"OFPBAC_BAD_EXP_TYPE",
	"OFPBAC_BAD_OUT_PORT",
	"OFPBAC_BAD_ARGUMENT",
	"OFPBAC_EPERM",
	"OFPBAC_TOO_MANY",
	"OFPBAC_BAD_QUEUE",
	"OFPBAC_BAD_OUT_GROUP",
	"OFPBAC_MATCH_INCONSISTENT",
	"OFPBAC_UNSUPPORTED_ORDER",
	"OFPBAC_BAD_TAG",
	"OFPBAC_BAD_SET_TYPE",
	"OFPBAC_BAD_SET_LEN",
	"OFPBAC_BAD_SET_ARGUMENT",
};
static const char *const bic[] = {
	"OFPBIC_UNKNOWN_INST",
	"OFPBIC_UNSUP_INST",
	"OFPBIC_BAD_TABLE_ID",
	"OFPBIC_UNSUP_METADATA",
	"OFPBIC_UNSUP_METADATA_MASK",
	"OFPBIC_BAD_EXPERIMENTER",
	"OFPBIC_BAD_EXP_TYPE",
	"OFPBIC_BAD_LEN",
	"OFPBIC_EPERM",
};
static const char *const bmc[] = {
	"OFPBMC_BAD_TYPE",         "OFPBMC_BAD_LEN",          "OFPBMC_BAD_TAG",
	"OFPBMC_BAD_DL_ADDR_MASK", "OFPBMC_BAD_NW_ADDR_MASK", "OFPBMC_BAD_WILDCARDS",
	"OFPBMC_BAD_FIELD",        "OFPBMC_BAD_VALUE",        "OFPBMC_BAD_MASK",
	"OFPBMC_BAD_PREREQ",       "OFPBMC_DUP_FIELD",        "OFPBMC_EPERM",
};
static const char *const fmfc[] = {
	"OFPFMFC_UNKNOWN", "OFPFMFC_TABLE_FULL",  "OFPFMFC_BAD_TABLE_ID", "OFPFMFC_OVERLAP",
	"OFPFMFC_EPERM",   "OFPFMFC_BAD_TIMEOUT", "OFPFMFC_BAD_COMMAND",  "OFPFMFC_BAD_FLAGS",
};
static const char *const gmfc[] = {
	"OFPGMFC_GROUP_EXISTS",      "OFPGMFC_INVALID_GROUP",  "OFPGMFC_WEIGHT_UNSUPPORTED",
	"OFPGMFC_OUT_OF_GROUPS",     "OFPGMFC_OUT_OF_BUCKETS", "OFPGMFC_CHAINING_UNSUPPORTED",
	"OFPGMFC_WATCH_UNSUPPORTED", "OFPGMFC_LOOP",           "OFPGMFC_UNKNOWN_GROUP",
	"OFPGMFC_CHAINED_GROUP",     "OFPGMFC_BAD_TYPE",       "OFPGMFC_BAD_COMMAND",
	"OFPGMFC_BAD_BUCKET",        "OFPGMFC_BAD_WATCH",      "OFPGMFC_EPERM",
};
static const char *const pmfc[] = {
	"OFPPMFC_BAD_PORT",      "OFPPMFC_BAD_HW_ADDR", "OFPPMFC_BAD_CONFIG",
	"OFPPMFC_BAD_ADVERTISE", "OFPPMFC_EPERM",
};
static const char *const tmfc[] = {"OFPTMFC_BAD_TABLE", "OFPTMFC_BAD_CONFIG", "OFPTMFC_EPERM"};
static const char *const qofc[] = {"OFPQOFC_BAD_PORT", "OFPQOFC_BAD_QUEUE", "OFPQOFC_EPERM"};
static const char *const scfc[] = {"OFPSCFC_BAD_FLAGS", "OFPSCFC_BAD_LEN", "OFPSCFC_EPERM"};
static const char *const rrfc[] = {"OFPRRFC_STALE", "OFPRRFC_UNSUP", "OFPRRFC_BAD_ROLE"};
static const char *const mmfc[] = {
	"OFPMMFC_UNKNOWN",        "OFPMMFC_METER_EXISTS",  "OFPMMFC_INVALID_METER",
	"OFPMMFC_UNKNOWN_METER",  "OFPMMFC_BAD_COMMAND",   "OFPMMFC_BAD_FLAGS",
	"OFPMMFC_BAD_RATE",       "OFPMMFC_BAD_BURST",     "OFPMMFC_BAD_BAND",
	"OFPMMFC_BAD_BAND_VALUE", "OFPMMFC_OUT_OF_METERS", "OFPMMFC_OUT_OF_BANDS",
};
static const char *const tffc[] = {
	"OFPTFFC_BAD_TABLE", "OFPTFFC_BAD_METADATA", "OFPTFFC_BAD_TYPE",
	"OFPTFFC_BAD_LEN",   "OFPTFFC_BAD_ARGUMENT", "OFPTFFC_EPERM",
};

static const struct {
	const char *const *names;
	unsigned n;
} error_codes[] = {
#define E_(t, a) [t] = {a, SL_ARRAY_SIZE(a)}
	E_(SL_OFPET_HELLO_FAILED, hfc),
	E_(SL_OFPET_BAD_REQUEST, brc),
	E_(SL_OFPET_BAD_ACTION, bac),
	E_(SL_OFPET_BAD_INSTRUCTION, bic),
	E_(SL_OFPET_BAD_MATCH, bmc),
	E_(SL_OFPET_FLOW_MOD_FAILED, fmfc),
	E_(SL_OFPET_GROUP_MOD_FAILED, gmfc),
	E_(SL_OFPET_PORT_MOD_FAILED, pmfc),
	E_(SL_OFPET_TABLE_MOD_FAILED, tmfc),
	E_(SL_OFPET_QUEUE_OP_FAILED, qofc),
	E_(SL_OFPET_SWITCH_CONFIG_FAILED, scfc),
	E_(SL_OFPET_ROLE_REQUEST_FAILED, rrfc),
	E_(SL_OFPET_METER_MOD_FAILED, mmfc),
	E_(SL_OFPET_TABLE_FEATURES_FAILED, tffc),
#undef E_
};

const char *
sl_ofp_error_name(const struct sl_ofp_error *e)
{
	if (e->type == SL_OFPET_EXPERIMENTER) {
		if (e->experimenter == SL_ONF_EXPERIMENTER_ID &&
		    e->code == SL_ONFBIC_DUP_INSTRUCTION)
			return "ONFBIC_DUP_INSTRUCTION";
		if (e->experimenter == SL_OFP_EXPERIMENTER_ID &&
		    e->code >= SL_OFPXFE_UNKNOWN_MODE && e->code <= SL_OFPXFE_BAD_PARAM) {
			static const char *const fwd_names[] = {
				"SLFWD_UNKNOWN_MODE", "SLFWD_DUP_MODE", "SLFWD_DUP_TAG",
				"SLFWD_DUP_NEIGHBOR", "SLFWD_BAD_PORT", "SLFWD_BAD_PARAM"};
			return fwd_names[e->code - SL_OFPXFE_UNKNOWN_MODE];
		}
		return "UNKNOWN_ERROR";
	}
	if (e->type < SL_ARRAY_SIZE(error_codes) && e->code < error_codes[e->type].n)
		return error_codes[e->type].names[e->code];
	return "UNKNOWN_ERROR";
}
