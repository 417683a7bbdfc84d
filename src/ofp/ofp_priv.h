/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofp_priv.h: OpenFlow 1.3 wire structs and helpers shared by the codec's
 * .c files.  Never include this outside src/ofp/ (and fuzz/, which tests
 * the codec from the outside through ofp.h only).
 *
 * Wire structs are packed, so any pointer into a received buffer may be
 * cast to them whatever its alignment; their fields are network order
 * (sl_be*) and read through sl_ofp_ntoh*.  Every struct's size is pinned by
 * a static_assert against the size the specification gives.
 */
#ifndef SL_OFP_PRIV_H
#define SL_OFP_PRIV_H

#include "ofp.h"

#include <string.h>

#define SL_OFP_PACKED __attribute__((packed))

/*
 * Byte order.
 */
static inline uint16_t
sl_ofp_ntoh16(sl_be16 v)
{
	return __builtin_bswap16(v);
}
static inline uint32_t
sl_ofp_ntoh32(sl_be32 v)
{
	return __builtin_bswap32(v);
}
static inline uint64_t
sl_ofp_ntoh64(sl_be64 v)
{
	return __builtin_bswap64(v);
}
#define sl_ofp_hton16 sl_ofp_ntoh16
#define sl_ofp_hton32 sl_ofp_ntoh32
#define sl_ofp_hton64 sl_ofp_ntoh64

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void
wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline size_t
pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static inline bool
all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Wire structs (OpenFlow 1.3.5 appendix A).
 */

struct ofp_header {
	uint8_t version;
	uint8_t type;
	sl_be16 length;
	sl_be32 xid;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_header) == 8, "ofp_header");

/* Hello element header (OFPHET_VERSIONBITMAP = 1). */
struct ofp_hello_elem_header {
	sl_be16 type;
	sl_be16 length;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_hello_elem_header) == 4, "ofp_hello_elem_header");
#define OFPHET_VERSIONBITMAP 1

struct ofp_error_msg {
	struct ofp_header header;
	sl_be16 type;
	sl_be16 code;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_error_msg) == 12, "ofp_error_msg");

struct ofp_error_experimenter_msg {
	struct ofp_header header;
	sl_be16 type; /* OFPET_EXPERIMENTER */
	sl_be16 exp_type;
	sl_be32 experimenter;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_error_experimenter_msg) == 16, "ofp_error_experimenter_msg");

struct ofp_experimenter_header {
	struct ofp_header header;
	sl_be32 experimenter;
	sl_be32 exp_type;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_experimenter_header) == 16, "ofp_experimenter_header");

struct ofp_switch_features {
	struct ofp_header header;
	sl_be64 datapath_id;
	sl_be32 n_buffers;
	uint8_t n_tables;
	uint8_t auxiliary_id;
	uint8_t pad[2];
	sl_be32 capabilities;
	sl_be32 reserved;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_switch_features) == 32, "ofp_switch_features");

struct ofp_switch_config {
	struct ofp_header header;
	sl_be16 flags;
	sl_be16 miss_send_len;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_switch_config) == 12, "ofp_switch_config");

struct ofp_table_mod {
	struct ofp_header header;
	uint8_t table_id;
	uint8_t pad[3];
	sl_be32 config;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_table_mod) == 16, "ofp_table_mod");

struct ofp_port {
	sl_be32 port_no;
	uint8_t pad[4];
	uint8_t hw_addr[6];
	uint8_t pad2[2];
	char name[16];
	sl_be32 config;
	sl_be32 state;
	sl_be32 curr;
	sl_be32 advertised;
	sl_be32 supported;
	sl_be32 peer;
	sl_be32 curr_speed;
	sl_be32 max_speed;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_port) == 64, "ofp_port");

struct ofp_port_mod {
	struct ofp_header header;
	sl_be32 port_no;
	uint8_t pad[4];
	uint8_t hw_addr[6];
	uint8_t pad2[2];
	sl_be32 config;
	sl_be32 mask;
	sl_be32 advertise;
	uint8_t pad3[4];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_port_mod) == 40, "ofp_port_mod");

struct ofp_port_status {
	struct ofp_header header;
	uint8_t reason;
	uint8_t pad[7];
	struct ofp_port desc;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_port_status) == 80, "ofp_port_status");

/* ofp_match without its OXM payload. */
struct ofp_match {
	sl_be16 type;   /* OFPMT_OXM */
	sl_be16 length; /* excluding padding */
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_match) == 4, "ofp_match header");
#define OFPMT_OXM 1
#define OFP_MATCH_EMPTY_LEN 8 /* an ofp_match with no OXM, padded */

#define OFPXMC_OPENFLOW_BASIC 0x8000
#define OFPXMC_EXPERIMENTER 0xffff
#define OXM_HEADER(class_, field, hm, len)                                                         \
	((uint32_t)(class_) << 16 | (uint32_t)(field) << 9 | (uint32_t)(hm) << 8 | (uint32_t)(len))
#define OXM_CLASS(h) ((h) >> 16)
#define OXM_FIELD(h) (((h) >> 9) & 0x7f)
#define OXM_HASMASK(h) (((h) >> 8) & 1)
#define OXM_LENGTH(h) ((h)&0xff)

struct ofp_flow_mod {
	struct ofp_header header;
	sl_be64 cookie;
	sl_be64 cookie_mask;
	uint8_t table_id;
	uint8_t command;
	sl_be16 idle_timeout;
	sl_be16 hard_timeout;
	sl_be16 priority;
	sl_be32 buffer_id;
	sl_be32 out_port;
	sl_be32 out_group;
	sl_be16 flags;
	uint8_t pad[2];
	/* struct ofp_match match; instructions */
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_flow_mod) == 48, "ofp_flow_mod without match");

struct ofp_instruction {
	sl_be16 type;
	sl_be16 len;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_instruction) == 4, "ofp_instruction");

struct ofp_instruction_goto_table {
	sl_be16 type;
	sl_be16 len;
	uint8_t table_id;
	uint8_t pad[3];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_instruction_goto_table) == 8, "goto_table");

struct ofp_instruction_write_metadata {
	sl_be16 type;
	sl_be16 len;
	uint8_t pad[4];
	sl_be64 metadata;
	sl_be64 metadata_mask;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_instruction_write_metadata) == 24, "write_metadata");

struct ofp_instruction_meter {
	sl_be16 type; /* OFPIT_METER */
	sl_be16 len;  /* 8 */
	sl_be32 meter_id;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_instruction_meter) == 8, "ofp_instruction_meter");

struct ofp_instruction_actions {
	sl_be16 type;
	sl_be16 len;
	uint8_t pad[4];
	/* actions */
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_instruction_actions) == 8, "instruction_actions");

struct ofp_action_header {
	sl_be16 type;
	sl_be16 len;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_action_header) == 4, "ofp_action_header");

struct ofp_action_output {
	sl_be16 type;
	sl_be16 len;
	sl_be32 port;
	sl_be16 max_len;
	uint8_t pad[6];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_action_output) == 16, "ofp_action_output");

/* Actions with one 32-bit argument (set_queue, group, experimenter id) or none. */
struct ofp_action_u32 {
	sl_be16 type;
	sl_be16 len;
	sl_be32 arg;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_action_u32) == 8, "ofp_action_u32");

/* Sluice experimenter action set_state (SL_OFPXAT_SET_STATE). */
struct sl_ofpx_action_set_state {
	sl_be16 type;         /* OFPAT_EXPERIMENTER (0xffff) */
	sl_be16 len;          /* 32 */
	sl_be32 experimenter; /* SL_OFP_EXPERIMENTER_ID */
	sl_be16 subtype;      /* SL_OFPXAT_SET_STATE */
	uint8_t table_id;     /* a state table, or 0xff: the one the packet last passed */
	uint8_t pad;
	sl_be32 state;
	sl_be32 rollback;
	sl_be32 idle_ms;
	sl_be32 hard_ms;
	uint8_t pad2[4]; /* zero */
} SL_OFP_PACKED;
static_assert(sizeof(struct sl_ofpx_action_set_state) == 32, "set_state action");

struct ofp_action_push {
	sl_be16 type;
	sl_be16 len;
	sl_be16 ethertype;
	uint8_t pad[2];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_action_push) == 8, "ofp_action_push");

struct ofp_action_nw_ttl {
	sl_be16 type;
	sl_be16 len;
	uint8_t nw_ttl;
	uint8_t pad[3];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_action_nw_ttl) == 8, "ofp_action_nw_ttl");

struct ofp_packet_out {
	struct ofp_header header;
	sl_be32 buffer_id;
	sl_be32 in_port;
	sl_be16 actions_len;
	uint8_t pad[6];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_packet_out) == 24, "ofp_packet_out");

struct ofp_packet_in {
	struct ofp_header header;
	sl_be32 buffer_id;
	sl_be16 total_len;
	uint8_t reason;
	uint8_t table_id;
	sl_be64 cookie;
	/* match, 2 pad bytes, data */
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_packet_in) == 24, "ofp_packet_in without match");

struct ofp_flow_removed {
	struct ofp_header header;
	sl_be64 cookie;
	sl_be16 priority;
	uint8_t reason;
	uint8_t table_id;
	sl_be32 duration_sec;
	sl_be32 duration_nsec;
	sl_be16 idle_timeout;
	sl_be16 hard_timeout;
	sl_be64 packet_count;
	sl_be64 byte_count;
	/* match */
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_flow_removed) == 48, "ofp_flow_removed without match");

struct ofp_group_mod {
	struct ofp_header header;
	sl_be16 command;
	uint8_t type;
	uint8_t pad;
	sl_be32 group_id;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_group_mod) == 16, "ofp_group_mod");

struct ofp_bucket {
	sl_be16 len;
	sl_be16 weight;
	sl_be32 watch_port;
	sl_be32 watch_group;
	uint8_t pad[4];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_bucket) == 16, "ofp_bucket");

struct ofp_meter_mod {
	struct ofp_header header;
	sl_be16 command;
	sl_be16 flags;
	sl_be32 meter_id;
	/* bands */
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_meter_mod) == 16, "ofp_meter_mod");

/*
 * A meter band: ofp_meter_band_drop (pad[4]), ofp_meter_band_dscp_remark
 * (prec_level, pad[3]) and ofp_meter_band_experimenter (experimenter) share
 * this 16-byte layout; only the last word differs.
 */
struct ofp_meter_band {
	sl_be16 type;
	sl_be16 len;
	sl_be32 rate;
	sl_be32 burst_size;
	uint8_t prec_level; /* DSCP remark; pad for drop */
	uint8_t pad[3];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_meter_band) == 16, "ofp_meter_band_drop/dscp_remark");

struct ofp_role_request {
	struct ofp_header header;
	sl_be32 role;
	uint8_t pad[4];
	sl_be64 generation_id;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_role_request) == 24, "ofp_role_request");

struct ofp_async_config {
	struct ofp_header header;
	sl_be32 packet_in_mask[2];
	sl_be32 port_status_mask[2];
	sl_be32 flow_removed_mask[2];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_async_config) == 32, "ofp_async_config");

struct ofp_queue_get_config {
	struct ofp_header header;
	sl_be32 port;
	uint8_t pad[4];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_queue_get_config) == 16, "ofp_queue_get_config_request/reply");

/* Multipart. */
struct ofp_multipart {
	struct ofp_header header;
	sl_be16 type;
	sl_be16 flags;
	uint8_t pad[4];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_multipart) == 16, "ofp_multipart_request/reply");

struct ofp_desc {
	char mfr_desc[256];
	char hw_desc[256];
	char sw_desc[256];
	char serial_num[32];
	char dp_desc[256];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_desc) == 1056, "ofp_desc");

struct ofp_flow_stats_request {
	uint8_t table_id;
	uint8_t pad[3];
	sl_be32 out_port;
	sl_be32 out_group;
	uint8_t pad2[4];
	sl_be64 cookie;
	sl_be64 cookie_mask;
	/* match */
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_flow_stats_request) == 32, "ofp_flow_stats_request w/o match");

struct ofp_flow_stats {
	sl_be16 length;
	uint8_t table_id;
	uint8_t pad;
	sl_be32 duration_sec;
	sl_be32 duration_nsec;
	sl_be16 priority;
	sl_be16 idle_timeout;
	sl_be16 hard_timeout;
	sl_be16 flags;
	uint8_t pad2[4];
	sl_be64 cookie;
	sl_be64 packet_count;
	sl_be64 byte_count;
	/* match, instructions */
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_flow_stats) == 48, "ofp_flow_stats without match");

struct ofp_aggregate_stats_reply {
	sl_be64 packet_count;
	sl_be64 byte_count;
	sl_be32 flow_count;
	uint8_t pad[4];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_aggregate_stats_reply) == 24, "ofp_aggregate_stats_reply");

struct ofp_table_stats {
	uint8_t table_id;
	uint8_t pad[3];
	sl_be32 active_count;
	sl_be64 lookup_count;
	sl_be64 matched_count;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_table_stats) == 24, "ofp_table_stats");

struct ofp_port_stats_request {
	sl_be32 port_no;
	uint8_t pad[4];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_port_stats_request) == 8, "ofp_port_stats_request");

struct ofp_port_stats {
	sl_be32 port_no;
	uint8_t pad[4];
	sl_be64 rx_packets;
	sl_be64 tx_packets;
	sl_be64 rx_bytes;
	sl_be64 tx_bytes;
	sl_be64 rx_dropped;
	sl_be64 tx_dropped;
	sl_be64 rx_errors;
	sl_be64 tx_errors;
	sl_be64 rx_frame_err;
	sl_be64 rx_over_err;
	sl_be64 rx_crc_err;
	sl_be64 collisions;
	sl_be32 duration_sec;
	sl_be32 duration_nsec;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_port_stats) == 112, "ofp_port_stats");

struct ofp_queue_stats_request {
	sl_be32 port_no;
	sl_be32 queue_id;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_queue_stats_request) == 8, "ofp_queue_stats_request");

struct ofp_group_stats_request {
	sl_be32 group_id;
	uint8_t pad[4];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_group_stats_request) == 8, "ofp_group_stats_request");

struct ofp_group_stats {
	sl_be16 length;
	uint8_t pad[2];
	sl_be32 group_id;
	sl_be32 ref_count;
	uint8_t pad2[4];
	sl_be64 packet_count;
	sl_be64 byte_count;
	sl_be32 duration_sec;
	sl_be32 duration_nsec;
	/* bucket counters */
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_group_stats) == 40, "ofp_group_stats");

struct ofp_bucket_counter {
	sl_be64 packet_count;
	sl_be64 byte_count;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_bucket_counter) == 16, "ofp_bucket_counter");

struct ofp_group_desc {
	sl_be16 length;
	uint8_t type;
	uint8_t pad;
	sl_be32 group_id;
	/* buckets */
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_group_desc) == 8, "ofp_group_desc");

struct ofp_group_features {
	sl_be32 types;
	sl_be32 capabilities;
	sl_be32 max_groups[4];
	sl_be32 actions[4];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_group_features) == 40, "ofp_group_features");

struct ofp_meter_multipart_request {
	sl_be32 meter_id;
	uint8_t pad[4];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_meter_multipart_request) == 8, "ofp_meter_multipart_request");

struct ofp_meter_stats {
	sl_be32 meter_id;
	sl_be16 len;
	uint8_t pad[6];
	sl_be32 flow_count;
	sl_be64 packet_in_count;
	sl_be64 byte_in_count;
	sl_be32 duration_sec;
	sl_be32 duration_nsec;
	/* band counters */
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_meter_stats) == 40, "ofp_meter_stats");

struct ofp_meter_band_stats {
	sl_be64 packet_band_count;
	sl_be64 byte_band_count;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_meter_band_stats) == 16, "ofp_meter_band_stats");

struct ofp_meter_config {
	sl_be16 length;
	sl_be16 flags;
	sl_be32 meter_id;
	/* bands */
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_meter_config) == 8, "ofp_meter_config");

struct ofp_meter_features {
	sl_be32 max_meter;
	sl_be32 band_types;
	sl_be32 capabilities;
	uint8_t max_bands;
	uint8_t max_color;
	uint8_t pad[2];
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_meter_features) == 16, "ofp_meter_features");

struct ofp_table_features {
	sl_be16 length;
	uint8_t table_id;
	uint8_t pad[5];
	char name[32];
	sl_be64 metadata_match;
	sl_be64 metadata_write;
	sl_be32 config;
	sl_be32 max_entries;
	/* properties */
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_table_features) == 64, "ofp_table_features");

struct ofp_table_feature_prop_header {
	sl_be16 type;
	sl_be16 length;
} SL_OFP_PACKED;
static_assert(sizeof(struct ofp_table_feature_prop_header) == 4, "table feature prop header");

enum {
	OFPTFPT_INSTRUCTIONS = 0,
	OFPTFPT_NEXT_TABLES = 2,
	OFPTFPT_WRITE_ACTIONS = 4,
	OFPTFPT_APPLY_ACTIONS = 6,
	OFPTFPT_MATCH = 8,
	OFPTFPT_WILDCARDS = 10,
	OFPTFPT_WRITE_SETFIELD = 12,
	OFPTFPT_APPLY_SETFIELD = 14,
};

/* SL_OFPX_TABLE_DECLARE body (after ofp_experimenter_header). */
struct sl_ofpx_table_declare {
	uint8_t table_id;
	uint8_t kind;
	uint8_t pad[2];
	sl_be32 max_entries;
	char name[32];
	/* OXM ids to the end of the message */
} SL_OFP_PACKED;
static_assert(sizeof(struct sl_ofpx_table_declare) == 40, "sl_ofpx_table_declare");

/*
 * Errors.
 */
static inline int
ofp_fail(struct sl_ofp_error *err, uint16_t type, uint16_t code)
{
	if (err) {
		err->type = type;
		err->code = code;
		err->experimenter = 0;
	}
	return -1;
}
#define FAIL_BRC(err, c) ofp_fail(err, SL_OFPET_BAD_REQUEST, SL_OFPBRC_##c)
#define FAIL_BAC(err, c) ofp_fail(err, SL_OFPET_BAD_ACTION, SL_OFPBAC_##c)
#define FAIL_BIC(err, c) ofp_fail(err, SL_OFPET_BAD_INSTRUCTION, SL_OFPBIC_##c)
#define FAIL_BMC(err, c) ofp_fail(err, SL_OFPET_BAD_MATCH, SL_OFPBMC_##c)

/*
 * Buffer helpers (ofp_buf.c).
 */

/* Append @n zeroed bytes; returns their start or NULL on ENOMEM. */
uint8_t *ofp_buf_put(struct sl_ofp_buf *b, size_t n);
/* Append @n bytes copied from @p; 0 or -ENOMEM. */
int ofp_buf_put_bytes(struct sl_ofp_buf *b, const void *p, size_t n);
/* Make room for @n more bytes without using them; 0 or -ENOMEM. */
int ofp_buf_reserve(struct sl_ofp_buf *b, size_t n);

/* Start a message of @type at the end of @b (header length fixed by msg_end); NULL on ENOMEM. */
uint8_t *ofp_msg_start(struct sl_ofp_buf *b, uint8_t type, uint32_t xid, size_t fixed_len);
/*
 * Finish the message that starts at offset @start: write its length.
 * Returns 0, or -EMSGSIZE after rolling the buffer back to @start.
 */
int ofp_msg_end(struct sl_ofp_buf *b, size_t start);

/*
 * Header check shared by the decoders: full header decode, then type and
 * minimum length.  Returns the message bytes or NULL with @err set.
 */
const uint8_t *ofp_msg_check(const void *msg, size_t len, uint8_t type, size_t min_len,
			     struct sl_ofp_error *err);

/*
 * Fields (ofp_match.c).
 */

/* OXM payload size of a field's value (ipv6_flabel and mpls_label: 4; others sl_field_size). */
unsigned ofp_field_wire_size(const struct sl_field *f);
/* True when the flow syntax / OXM decoder accepts a partial mask on @f. */
/*
 * Decode one OXM TLV at @p (@avail bytes left): field, value and mask in
 * sl_match_field encoding (mask all ones when unmasked).  @tlv_len: bytes
 * the TLV takes.  @ids_only: @p is an OXM id (no value/mask follow; the raw
 * descriptor does).  Errors use the OFPET_BAD_MATCH codes.
 */
int ofp_oxm_decode(const uint8_t *p, size_t avail, bool ids_only, struct sl_match_field *mf,
		   bool *masked, size_t *tlv_len, struct sl_ofp_error *err);
/* Append one OXM TLV (value, and mask when @masked) or, with @id_only, its OXM id. */
int ofp_oxm_encode(struct sl_ofp_buf *b, const struct sl_field *f, const uint8_t *value,
		   const uint8_t *mask, bool masked, bool id_only);

/* Number of bytes an encoded ofp_match for @m takes, padding included. */
size_t ofp_match_wire_len(const struct sl_match *m);

/*
 * Shared by the message and multipart code (ofp_flow.c).
 */

/*
 * Decode a bucket list of exactly @len bytes into gs->buckets (gs->type must
 * be set: fast-failover buckets must watch something).  Used by group_mod
 * and by the client-side group_desc decoder.  0, or -1 with @err set
 * (OFPGMFC_BAD_BUCKET, OUT_OF_BUCKETS, BAD_WATCH, action errors).
 */
int ofp_buckets_decode(const uint8_t *p, size_t len, struct sl_group_spec *gs,
		       struct sl_ofp_error *err);
/* Append the buckets of @gs (ofp_bucket + actions each); 0, -ENOMEM, -EINVAL. */
int ofp_buckets_encode(struct sl_ofp_buf *b, const struct sl_group_spec *gs);
/*
 * Decode a meter band list of exactly @len bytes into ms->bands (n_bands
 * set).  Used by meter_mod and by the client-side meter_config decoder.
 * 0, or -1 with @err set (OFPBRC_BAD_LEN, OFPMMFC_OUT_OF_BANDS, BAD_BAND,
 * BAD_RATE, BAD_BAND_VALUE).
 */
int ofp_meter_bands_decode(const uint8_t *p, size_t len, struct sl_meter_spec *ms,
			   struct sl_ofp_error *err);
/* Append the bands of @ms (16 bytes each); 0 or -ENOMEM. */
int ofp_meter_bands_encode(struct sl_ofp_buf *b, const struct sl_meter_spec *ms);
/* Fill a wire ofp_port from a port description. */
void ofp_port_fill(struct ofp_port *op, const struct sl_ofp_port_desc *pd);

#endif /* SL_OFP_PRIV_H */
