/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofp: the OpenFlow 1.3 wire codec (control path only, DPDK-free).
 *
 * This component turns OpenFlow 1.3 (wire version 0x04) messages into the
 * host-order structs the rest of Sluice uses (struct sl_flow_spec,
 * sl_group_spec, sl_table_spec from pipeline.h) and builds the messages a
 * switch sends back.  It is the only place where OpenFlow wire structs
 * (packed, big-endian) exist; they live in ofp_priv.h and never leave
 * src/ofp/.  The split follows Open vSwitch: lib/ofp-*.c decode into
 * struct ofputil_* before ofproto/ sees a message.
 *
 * ----------------------------------------------------------------------------
 * Decoding
 * ----------------------------------------------------------------------------
 *
 * Every decoder takes the whole message (msg, len), 8-byte header included,
 * exactly as it came off the channel, and returns 0 or -1.  On -1 it fills
 * a struct sl_ofp_error with the OpenFlow type/code the switch must send
 * back (sl_ofp_error_encode builds that reply).  No length field is trusted:
 * the header length must equal @len, and every inner length (match, OXM,
 * instruction, action, bucket, hello element, property) is checked against
 * what is left of the buffer before it is used, and against the padding
 * rules of OpenFlow 1.3 (match padded to 8, actions and instructions
 * multiples of 8, padding bytes of set_field zero).  Decoders never read
 * outside [msg, msg + len), never allocate, and may be fed arbitrary bytes
 * (fuzz/fuzz_ofp_decode.c does exactly that).  Output structs are undefined
 * after a failure.
 *
 * Typical agent loop:
 *
 *	struct sl_ofp_header h;
 *	struct sl_ofp_error e;
 *	if (sl_ofp_header_decode(msg, len, &h, &e) < 0)
 *		reply error e;
 *	switch (h.type) {
 *	case SL_OFPT_FLOW_MOD: {
 *		struct sl_ofp_flow_mod fm;
 *		if (sl_ofp_flow_mod_decode(msg, len, &fm, &e) < 0)
 *			reply error e with data msg (sl_ofp_error_encode keeps 64 bytes);
 *		...
 *	}
 *
 * Match semantics (sl_ofp_match_decode): OXM TLVs of class
 * OFPXMC_OPENFLOW_BASIC for every field of pkt.h's registry that has an OXM
 * number, plus Sluice experimenter OXMs (class 0xffff, experimenter
 * SL_OFP_EXPERIMENTER_ID) for nw_ttl and raw fields (layout in
 * docs/openflow-experimenter.md).  Values keep the OpenFlow encoding, so
 * vlan_vid carries OFPVID_PRESENT (0x1000): 0x0000 matches untagged frames,
 * 0x1000/0x1000 any tagged frame, 0x1000|VID one VID.  Value bits outside
 * the mask are cleared (no OFPBMC_BAD_WILDCARDS); a field with an all-zero
 * mask is a wildcard and is dropped; a value with bits above the field's
 * width (ip_dscp 64, vlan_vid 0x2000, ipv6_flabel 0x100000) is
 * OFPBMC_BAD_VALUE.  Masks are accepted where the flow-file syntax accepts
 * them (metadata, MACs, IPv4/IPv6 addresses, arp_spa/tpa/sha/tha, vlan_vid,
 * TCP/UDP/SCTP ports (an OVS extension to 1.3), ipv6_flabel and raw
 * fields); a non-exact mask elsewhere is OFPBMC_BAD_MASK, an exact one is
 * treated as no mask.  Then OpenFlow prerequisites are checked with
 * sl_match_prereq_check (OFPBMC_BAD_PREREQ); their order in the match does
 * not matter.
 *
 * Instruction semantics: at most one instruction of each type
 * (a duplicate is the ONF extension error SL_OFPET_EXPERIMENTER /
 * SL_ONFBIC_DUP_INSTRUCTION with experimenter SL_ONF_EXPERIMENTER_ID, as OVS
 * sends it to OpenFlow 1.3 peers).  Actions of write_actions are merged as
 * the specification merges them into an action set: a later action of the
 * same type (same field for set_field) replaces the earlier one in place.
 * apply_actions keeps its list as is (at most SL_ACTIONS_MAX actions, else
 * OFPBAC_TOO_MANY).  A meter instruction names any meter id but 0 (0 is
 * OFPMMFC_INVALID_METER); whether the meter exists is the pipeline's
 * question (OFPMMFC_UNKNOWN_METER), not the codec's.
 *
 * ----------------------------------------------------------------------------
 * Encoding
 * ----------------------------------------------------------------------------
 *
 * Encoders append whole messages to a growable struct sl_ofp_buf and fix up
 * each message's header length.  They return 0, -ENOMEM (the buffer is left
 * as it was before the call) or -EMSGSIZE (the message would exceed 65535
 * bytes; buffer unchanged).  Multipart replies that may not fit one message
 * are written through struct sl_ofp_mp_writer, which splits them into
 * several messages with OFPMPF_REPLY_MORE set on all but the last.
 *
 * ----------------------------------------------------------------------------
 * Thread safety
 * ----------------------------------------------------------------------------
 *
 * The codec keeps no global mutable state.  Every function is safe to call
 * from any thread on its own arguments ("any thread" below); a struct
 * sl_ofp_buf or sl_ofp_mp_writer belongs to one thread at a time.
 */
#ifndef SL_OFP_H
#define SL_OFP_H

#include "../core/core.h"
#include "../flow/flow.h"

#include <errno.h>

/*
 * ============================================================================
 * Protocol constants (OpenFlow 1.3.5, section 7 and appendix A)
 * ============================================================================
 */

/** The one wire version Sluice speaks (OpenFlow 1.3). */
#define SL_OFP_VERSION 0x04
/** Size of struct ofp_header on the wire. */
#define SL_OFP_HEADER_LEN 8
/** Largest OpenFlow message (the header's 16-bit length). */
#define SL_OFP_MSG_MAX 65535
/** Bytes of the offending request an error reply carries. */
#define SL_OFP_ERROR_DATA_MAX 64

/** Message types (ofp_header.type). */
enum sl_ofp_type {
	SL_OFPT_HELLO = 0,
	SL_OFPT_ERROR = 1,
	SL_OFPT_ECHO_REQUEST = 2,
	SL_OFPT_ECHO_REPLY = 3,
	SL_OFPT_EXPERIMENTER = 4,
	SL_OFPT_FEATURES_REQUEST = 5,
	SL_OFPT_FEATURES_REPLY = 6,
	SL_OFPT_GET_CONFIG_REQUEST = 7,
	SL_OFPT_GET_CONFIG_REPLY = 8,
	SL_OFPT_SET_CONFIG = 9,
	SL_OFPT_PACKET_IN = 10,
	SL_OFPT_FLOW_REMOVED = 11,
	SL_OFPT_PORT_STATUS = 12,
	SL_OFPT_PACKET_OUT = 13,
	SL_OFPT_FLOW_MOD = 14,
	SL_OFPT_GROUP_MOD = 15,
	SL_OFPT_PORT_MOD = 16,
	SL_OFPT_TABLE_MOD = 17,
	SL_OFPT_MULTIPART_REQUEST = 18,
	SL_OFPT_MULTIPART_REPLY = 19,
	SL_OFPT_BARRIER_REQUEST = 20,
	SL_OFPT_BARRIER_REPLY = 21,
	SL_OFPT_QUEUE_GET_CONFIG_REQUEST = 22,
	SL_OFPT_QUEUE_GET_CONFIG_REPLY = 23,
	SL_OFPT_ROLE_REQUEST = 24,
	SL_OFPT_ROLE_REPLY = 25,
	SL_OFPT_GET_ASYNC_REQUEST = 26,
	SL_OFPT_GET_ASYNC_REPLY = 27,
	SL_OFPT_SET_ASYNC = 28,
	SL_OFPT_METER_MOD = 29,
	SL_OFPT__MAX = 29 /* highest type OpenFlow 1.3 defines */
};

/** Multipart types (ofp_multipart_request.type). */
enum sl_ofp_mp_type {
	SL_OFPMP_DESC = 0,
	SL_OFPMP_FLOW = 1,
	SL_OFPMP_AGGREGATE = 2,
	SL_OFPMP_TABLE = 3,
	SL_OFPMP_PORT_STATS = 4,
	SL_OFPMP_QUEUE = 5,
	SL_OFPMP_GROUP = 6,
	SL_OFPMP_GROUP_DESC = 7,
	SL_OFPMP_GROUP_FEATURES = 8,
	SL_OFPMP_METER = 9,
	SL_OFPMP_METER_CONFIG = 10,
	SL_OFPMP_METER_FEATURES = 11,
	SL_OFPMP_TABLE_FEATURES = 12,
	SL_OFPMP_PORT_DESC = 13,
	SL_OFPMP_EXPERIMENTER = 0xffff,
};
/** Multipart flags: more requests / replies follow. */
#define SL_OFPMPF_REQ_MORE 0x1
#define SL_OFPMPF_REPLY_MORE 0x1

/** Error types (ofp_error_msg.type). */
enum sl_ofp_error_type {
	SL_OFPET_HELLO_FAILED = 0,
	SL_OFPET_BAD_REQUEST = 1,
	SL_OFPET_BAD_ACTION = 2,
	SL_OFPET_BAD_INSTRUCTION = 3,
	SL_OFPET_BAD_MATCH = 4,
	SL_OFPET_FLOW_MOD_FAILED = 5,
	SL_OFPET_GROUP_MOD_FAILED = 6,
	SL_OFPET_PORT_MOD_FAILED = 7,
	SL_OFPET_TABLE_MOD_FAILED = 8,
	SL_OFPET_QUEUE_OP_FAILED = 9,
	SL_OFPET_SWITCH_CONFIG_FAILED = 10,
	SL_OFPET_ROLE_REQUEST_FAILED = 11,
	SL_OFPET_METER_MOD_FAILED = 12,
	SL_OFPET_TABLE_FEATURES_FAILED = 13,
	SL_OFPET_EXPERIMENTER = 0xffff, /* code = exp_type; see sl_ofp_error.experimenter */
};

/** OFPET_HELLO_FAILED codes (data: ASCII text). */
enum { SL_OFPHFC_INCOMPATIBLE = 0, SL_OFPHFC_EPERM = 1 };

/** OFPET_BAD_REQUEST codes. */
enum {
	SL_OFPBRC_BAD_VERSION = 0,
	SL_OFPBRC_BAD_TYPE = 1,
	SL_OFPBRC_BAD_MULTIPART = 2,
	SL_OFPBRC_BAD_EXPERIMENTER = 3,
	SL_OFPBRC_BAD_EXP_TYPE = 4,
	SL_OFPBRC_EPERM = 5,
	SL_OFPBRC_BAD_LEN = 6,
	SL_OFPBRC_BUFFER_EMPTY = 7,
	SL_OFPBRC_BUFFER_UNKNOWN = 8,
	SL_OFPBRC_BAD_TABLE_ID = 9,
	SL_OFPBRC_IS_SLAVE = 10,
	SL_OFPBRC_BAD_PORT = 11,
	SL_OFPBRC_BAD_PACKET = 12,
	SL_OFPBRC_MULTIPART_BUFFER_OVERFLOW = 13,
};

/** OFPET_BAD_ACTION codes. */
enum {
	SL_OFPBAC_BAD_TYPE = 0,
	SL_OFPBAC_BAD_LEN = 1,
	SL_OFPBAC_BAD_EXPERIMENTER = 2,
	SL_OFPBAC_BAD_EXP_TYPE = 3,
	SL_OFPBAC_BAD_OUT_PORT = 4,
	SL_OFPBAC_BAD_ARGUMENT = 5,
	SL_OFPBAC_EPERM = 6,
	SL_OFPBAC_TOO_MANY = 7,
	SL_OFPBAC_BAD_QUEUE = 8,
	SL_OFPBAC_BAD_OUT_GROUP = 9,
	SL_OFPBAC_MATCH_INCONSISTENT = 10,
	SL_OFPBAC_UNSUPPORTED_ORDER = 11,
	SL_OFPBAC_BAD_TAG = 12,
	SL_OFPBAC_BAD_SET_TYPE = 13,
	SL_OFPBAC_BAD_SET_LEN = 14,
	SL_OFPBAC_BAD_SET_ARGUMENT = 15,
};

/** OFPET_BAD_INSTRUCTION codes. */
enum {
	SL_OFPBIC_UNKNOWN_INST = 0,
	SL_OFPBIC_UNSUP_INST = 1,
	SL_OFPBIC_BAD_TABLE_ID = 2,
	SL_OFPBIC_UNSUP_METADATA = 3,
	SL_OFPBIC_UNSUP_METADATA_MASK = 4,
	SL_OFPBIC_BAD_EXPERIMENTER = 5,
	SL_OFPBIC_BAD_EXP_TYPE = 6,
	SL_OFPBIC_BAD_LEN = 7,
	SL_OFPBIC_EPERM = 8,
};

/** OFPET_BAD_MATCH codes. */
enum {
	SL_OFPBMC_BAD_TYPE = 0,
	SL_OFPBMC_BAD_LEN = 1,
	SL_OFPBMC_BAD_TAG = 2,
	SL_OFPBMC_BAD_DL_ADDR_MASK = 3,
	SL_OFPBMC_BAD_NW_ADDR_MASK = 4,
	SL_OFPBMC_BAD_WILDCARDS = 5,
	SL_OFPBMC_BAD_FIELD = 6,
	SL_OFPBMC_BAD_VALUE = 7,
	SL_OFPBMC_BAD_MASK = 8,
	SL_OFPBMC_BAD_PREREQ = 9,
	SL_OFPBMC_DUP_FIELD = 10,
	SL_OFPBMC_EPERM = 11,
};

/** OFPET_FLOW_MOD_FAILED codes. */
enum {
	SL_OFPFMFC_UNKNOWN = 0,
	SL_OFPFMFC_TABLE_FULL = 1,
	SL_OFPFMFC_BAD_TABLE_ID = 2,
	SL_OFPFMFC_OVERLAP = 3,
	SL_OFPFMFC_EPERM = 4,
	SL_OFPFMFC_BAD_TIMEOUT = 5,
	SL_OFPFMFC_BAD_COMMAND = 6,
	SL_OFPFMFC_BAD_FLAGS = 7,
};

/** OFPET_GROUP_MOD_FAILED codes. */
enum {
	SL_OFPGMFC_GROUP_EXISTS = 0,
	SL_OFPGMFC_INVALID_GROUP = 1,
	SL_OFPGMFC_WEIGHT_UNSUPPORTED = 2,
	SL_OFPGMFC_OUT_OF_GROUPS = 3,
	SL_OFPGMFC_OUT_OF_BUCKETS = 4,
	SL_OFPGMFC_CHAINING_UNSUPPORTED = 5,
	SL_OFPGMFC_WATCH_UNSUPPORTED = 6,
	SL_OFPGMFC_LOOP = 7,
	SL_OFPGMFC_UNKNOWN_GROUP = 8,
	SL_OFPGMFC_CHAINED_GROUP = 9,
	SL_OFPGMFC_BAD_TYPE = 10,
	SL_OFPGMFC_BAD_COMMAND = 11,
	SL_OFPGMFC_BAD_BUCKET = 12,
	SL_OFPGMFC_BAD_WATCH = 13,
	SL_OFPGMFC_EPERM = 14,
};

/** OFPET_PORT_MOD_FAILED codes. */
enum {
	SL_OFPPMFC_BAD_PORT = 0,
	SL_OFPPMFC_BAD_HW_ADDR = 1,
	SL_OFPPMFC_BAD_CONFIG = 2,
	SL_OFPPMFC_BAD_ADVERTISE = 3,
	SL_OFPPMFC_EPERM = 4,
};

/** OFPET_TABLE_MOD_FAILED codes. */
enum { SL_OFPTMFC_BAD_TABLE = 0, SL_OFPTMFC_BAD_CONFIG = 1, SL_OFPTMFC_EPERM = 2 };

/** OFPET_QUEUE_OP_FAILED codes. */
enum { SL_OFPQOFC_BAD_PORT = 0, SL_OFPQOFC_BAD_QUEUE = 1, SL_OFPQOFC_EPERM = 2 };

/** OFPET_SWITCH_CONFIG_FAILED codes. */
enum { SL_OFPSCFC_BAD_FLAGS = 0, SL_OFPSCFC_BAD_LEN = 1, SL_OFPSCFC_EPERM = 2 };

/** OFPET_ROLE_REQUEST_FAILED codes. */
enum { SL_OFPRRFC_STALE = 0, SL_OFPRRFC_UNSUP = 1, SL_OFPRRFC_BAD_ROLE = 2 };

/** OFPET_METER_MOD_FAILED codes (meter_mod, and a meter instruction naming meter 0). */
enum {
	SL_OFPMMFC_UNKNOWN = 0,
	SL_OFPMMFC_METER_EXISTS = 1,
	SL_OFPMMFC_INVALID_METER = 2,
	SL_OFPMMFC_UNKNOWN_METER = 3,
	SL_OFPMMFC_BAD_COMMAND = 4,
	SL_OFPMMFC_BAD_FLAGS = 5,
	SL_OFPMMFC_BAD_RATE = 6,
	SL_OFPMMFC_BAD_BURST = 7,
	SL_OFPMMFC_BAD_BAND = 8,
	SL_OFPMMFC_BAD_BAND_VALUE = 9,
	SL_OFPMMFC_OUT_OF_METERS = 10,
	SL_OFPMMFC_OUT_OF_BANDS = 11,
};

/** OFPET_TABLE_FEATURES_FAILED codes. */
enum {
	SL_OFPTFFC_BAD_TABLE = 0,
	SL_OFPTFFC_BAD_METADATA = 1,
	SL_OFPTFFC_BAD_TYPE = 2,
	SL_OFPTFFC_BAD_LEN = 3,
	SL_OFPTFFC_BAD_ARGUMENT = 4,
	SL_OFPTFFC_EPERM = 5,
};

/**
 * ONF experimenter id and the ONF extension error OVS uses for a duplicate
 * instruction in OpenFlow 1.2/1.3 (EXT-260; OpenFlow 1.4 made it
 * OFPBIC_DUP_INST 3,9).
 */
#define SL_ONF_EXPERIMENTER_ID 0x4f4e4600u
#define SL_ONFBIC_DUP_INSTRUCTION 2600

/** Flow-mod commands (ofp_flow_mod.command). */
enum {
	SL_OFPFC_ADD = 0,
	SL_OFPFC_MODIFY = 1,
	SL_OFPFC_MODIFY_STRICT = 2,
	SL_OFPFC_DELETE = 3,
	SL_OFPFC_DELETE_STRICT = 4,
};

/** Group-mod commands (ofp_group_mod.command). */
enum { SL_OFPGC_ADD = 0, SL_OFPGC_MODIFY = 1, SL_OFPGC_DELETE = 2 };

/** Meter-mod commands (ofp_meter_mod.command). */
enum { SL_OFPMC_ADD = 0, SL_OFPMC_MODIFY = 1, SL_OFPMC_DELETE = 2 };
/**
 * The experimenter band type (OFPMBT_EXPERIMENTER); DROP and DSCP_REMARK
 * are enum sl_meter_band_type, whose values are the wire ones.
 */
#define SL_OFPMBT_EXPERIMENTER 0xffff

/** Table numbers: last usable table and "all tables". */
#define SL_OFPTT_MAX 0xfe
#define SL_OFPTT_ALL 0xff

/** Packet-in reasons (ofp_packet_in.reason). */
enum { SL_OFPR_NO_MATCH = 0, SL_OFPR_ACTION = 1, SL_OFPR_INVALID_TTL = 2 };

/** Flow-removed reasons (ofp_flow_removed.reason). */
enum {
	SL_OFPRR_IDLE_TIMEOUT = 0,
	SL_OFPRR_HARD_TIMEOUT = 1,
	SL_OFPRR_DELETE = 2,
	SL_OFPRR_GROUP_DELETE = 3,
};

/** Port-status reasons (ofp_port_status.reason). */
enum { SL_OFPPR_ADD = 0, SL_OFPPR_DELETE = 1, SL_OFPPR_MODIFY = 2 };

/** Port config bits (ofp_port.config, port_mod config/mask). */
#define SL_OFPPC_PORT_DOWN 0x01
#define SL_OFPPC_NO_RECV 0x04
#define SL_OFPPC_NO_FWD 0x20
#define SL_OFPPC_NO_PACKET_IN 0x40
#define SL_OFPPC_ALL                                                                               \
	(SL_OFPPC_PORT_DOWN | SL_OFPPC_NO_RECV | SL_OFPPC_NO_FWD | SL_OFPPC_NO_PACKET_IN)

/** Port state bits (ofp_port.state). */
#define SL_OFPPS_LINK_DOWN 0x1
#define SL_OFPPS_BLOCKED 0x2
#define SL_OFPPS_LIVE 0x4

/** Port feature bits (ofp_port.curr/advertised/supported/peer). */
#define SL_OFPPF_10MB_HD (1u << 0)
#define SL_OFPPF_10MB_FD (1u << 1)
#define SL_OFPPF_100MB_HD (1u << 2)
#define SL_OFPPF_100MB_FD (1u << 3)
#define SL_OFPPF_1GB_HD (1u << 4)
#define SL_OFPPF_1GB_FD (1u << 5)
#define SL_OFPPF_10GB_FD (1u << 6)
#define SL_OFPPF_40GB_FD (1u << 7)
#define SL_OFPPF_100GB_FD (1u << 8)
#define SL_OFPPF_1TB_FD (1u << 9)
#define SL_OFPPF_OTHER (1u << 10)
#define SL_OFPPF_COPPER (1u << 11)
#define SL_OFPPF_FIBER (1u << 12)
#define SL_OFPPF_AUTONEG (1u << 13)
#define SL_OFPPF_PAUSE (1u << 14)
#define SL_OFPPF_PAUSE_ASYM (1u << 15)

/** Buffer id meaning "not buffered" (Sluice never buffers: n_buffers is 0). */
#define SL_OFP_NO_BUFFER 0xffffffffu
/** Controller max_len: send the whole packet, do not buffer. */
#define SL_OFPCML_NO_BUFFER 0xffff
/** Largest max_len that asks for buffering (unused by Sluice). */
#define SL_OFPCML_MAX 0xffe5

/** Switch capabilities (features_reply.capabilities). */
#define SL_OFPC_FLOW_STATS 0x001
#define SL_OFPC_TABLE_STATS 0x002
#define SL_OFPC_PORT_STATS 0x004
#define SL_OFPC_GROUP_STATS 0x008
#define SL_OFPC_IP_REASM 0x020
#define SL_OFPC_QUEUE_STATS 0x040
#define SL_OFPC_PORT_BLOCKED 0x100

/** Switch config flags (set_config / get_config_reply). */
#define SL_OFPC_FRAG_NORMAL 0
#define SL_OFPC_FRAG_DROP 1
#define SL_OFPC_FRAG_REASM 2
#define SL_OFPC_FRAG_MASK 3

/** Controller roles (role_request.role). */
enum {
	SL_OFPCR_ROLE_NOCHANGE = 0,
	SL_OFPCR_ROLE_EQUAL = 1,
	SL_OFPCR_ROLE_MASTER = 2,
	SL_OFPCR_ROLE_SLAVE = 3,
};

/** Group capabilities (group_features.capabilities). */
#define SL_OFPGFC_SELECT_WEIGHT 0x1
#define SL_OFPGFC_SELECT_LIVENESS 0x2
#define SL_OFPGFC_CHAINING 0x4
#define SL_OFPGFC_CHAINING_CHECKS 0x8

/** Action types (ofp_action_header.type); bit positions of group_features.actions. */
enum {
	SL_OFPAT_OUTPUT = 0,
	SL_OFPAT_COPY_TTL_OUT = 11,
	SL_OFPAT_COPY_TTL_IN = 12,
	SL_OFPAT_SET_MPLS_TTL = 15,
	SL_OFPAT_DEC_MPLS_TTL = 16,
	SL_OFPAT_PUSH_VLAN = 17,
	SL_OFPAT_POP_VLAN = 18,
	SL_OFPAT_PUSH_MPLS = 19,
	SL_OFPAT_POP_MPLS = 20,
	SL_OFPAT_SET_QUEUE = 21,
	SL_OFPAT_GROUP = 22,
	SL_OFPAT_SET_NW_TTL = 23,
	SL_OFPAT_DEC_NW_TTL = 24,
	SL_OFPAT_SET_FIELD = 25,
	SL_OFPAT_PUSH_PBB = 26,
	SL_OFPAT_POP_PBB = 27,
	SL_OFPAT_EXPERIMENTER = 0xffff,
};
/** Bitmap (1 << SL_OFPAT_*) of the actions Sluice decodes and executes. */
#define SL_OFP_ACTIONS_SUPPORTED                                                                   \
	((1u << SL_OFPAT_OUTPUT) | (1u << SL_OFPAT_COPY_TTL_OUT) | (1u << SL_OFPAT_COPY_TTL_IN) |  \
	 (1u << SL_OFPAT_PUSH_VLAN) | (1u << SL_OFPAT_POP_VLAN) | (1u << SL_OFPAT_SET_QUEUE) |     \
	 (1u << SL_OFPAT_GROUP) | (1u << SL_OFPAT_SET_NW_TTL) | (1u << SL_OFPAT_DEC_NW_TTL) |      \
	 (1u << SL_OFPAT_SET_FIELD) | (1u << SL_OFPAT_SET_MPLS_TTL) |                              \
	 (1u << SL_OFPAT_DEC_MPLS_TTL) | (1u << SL_OFPAT_PUSH_MPLS) | (1u << SL_OFPAT_POP_MPLS) |  \
	 (1u << SL_OFPAT_PUSH_PBB) | (1u << SL_OFPAT_POP_PBB))

/** Instruction types (ofp_instruction.type). */
enum {
	SL_OFPIT_GOTO_TABLE = 1,
	SL_OFPIT_WRITE_METADATA = 2,
	SL_OFPIT_WRITE_ACTIONS = 3,
	SL_OFPIT_APPLY_ACTIONS = 4,
	SL_OFPIT_CLEAR_ACTIONS = 5,
	SL_OFPIT_METER = 6,
	SL_OFPIT_EXPERIMENTER = 0xffff,
};

/*
 * ============================================================================
 * Sluice experimenter extension (docs/openflow-experimenter.md)
 * ============================================================================
 */

/**
 * Sluice's experimenter id: ASCII "SLUC".  NOT a registered IEEE OUI (an
 * OUI-based id would have a zero top byte); it only has to differ from the
 * ids controllers know (Nicira 0x00002320, ONF 0x4f4e4600, ...).
 */
#define SL_OFP_EXPERIMENTER_ID 0x534c5543u

/** Experimenter message types (ofp_experimenter_header.exp_type) under SL_OFP_EXPERIMENTER_ID. */
enum {
	SL_OFPX_TABLE_DECLARE = 1, /* declare a table: body in docs/openflow-experimenter.md */
	/* OpenState state tables (10..19; layouts in docs/openflow.md section 12). */
	SL_OFPX_STATE_TABLE = 10,       /* declare a state table: scopes, capacity */
	SL_OFPX_STATE_SET = 11,         /* set one flow's state */
	SL_OFPX_STATE_DEL = 12,         /* delete one flow's state, or every state */
	SL_OFPX_STATE_DUMP = 13,        /* request: the entries of a state table */
	SL_OFPX_STATE_DUMP_REPLY = 14,  /* reply parts (flag MORE on all but the last) */
	SL_OFPX_STATE_STATS = 15,       /* request: a state table's counters */
	SL_OFPX_STATE_STATS_REPLY = 16, /* reply */
	/* Forwarding modes (docs/openflow.md 12.9). */
	SL_OFPX_SET_FWD_MODE = 4, /* set the forwarding modes */
	SL_OFPX_FWD_MODE = 5,     /* get the forwarding modes: empty request, reply with TLVs */
};

/**
 * Experimenter action subtypes (OFPAT_EXPERIMENTER with SL_OFP_EXPERIMENTER_ID;
 * OpenState owns 1..9).  Layouts in docs/openflow.md section 12.
 */
enum sl_ofpx_action {
	SL_OFPXAT_SET_STATE = 1, /* set_state: 32 bytes (struct sl_ofpx_action_set_state) */
};
/* Fast forwarding path (docs/openflow.md 12.7, 12.8). */
enum {
	SL_OFPX_LL_SET = 2,     /* set or clear the low-latency mark of selected flows */
	SL_OFPX_FFP_CONFIG = 3, /* FFP on/off, cost model, auto-promotion policy */
};

/** Experimenter OXM fields (class 0xffff, experimenter SL_OFP_EXPERIMENTER_ID). */
enum {
	SL_OXM_SL_RAW = 0,    /* raw field: base u8, n_bits u8, bit_off be16, value[, mask] */
	SL_OXM_SL_IP_TTL = 1, /* nw_ttl: value u8[, mask u8] */
	SL_OXM_SL_STATE = 2,  /* state (OpenState): value be32[, mask be32] */
};

/** Table kinds on the wire (SL_OFPX_TABLE_DECLARE.kind); mapped explicitly to enum sl_table_kind. */
enum {
	SL_OFPX_KIND_DIRECT = 0, /* SL_TABLE_DIRECT */
	SL_OFPX_KIND_EXACT = 1,  /* SL_TABLE_EXACT */
	SL_OFPX_KIND_LPM = 2,    /* SL_TABLE_LPM */
	SL_OFPX_KIND_MASK = 3,   /* SL_TABLE_MASK */
};

/*
 * ============================================================================
 * Errors
 * ============================================================================
 */

/** What a decoder rejected, as the OpenFlow error the switch replies with. */
struct sl_ofp_error {
	uint16_t type; /* SL_OFPET_* */
	uint16_t code; /* the type's code (SL_OFPBRC_*, ...), or exp_type for experimenter errors */
	uint32_t experimenter; /* type SL_OFPET_EXPERIMENTER only, else 0 */
};

/**
 * Symbolic name of an error for logs and tests ("OFPBMC_BAD_PREREQ",
 * "ONFBIC_DUP_INSTRUCTION").
 *
 * @param e  The error.
 * @return a static string; "UNKNOWN_ERROR" for pairs OpenFlow 1.3 does not
 *         define.  Never NULL.  Any thread.
 */
const char *sl_ofp_error_name(const struct sl_ofp_error *e);

/**
 * Name of a message type for logs ("OFPT_FLOW_MOD"), "OFPT_UNKNOWN" for
 * types OpenFlow 1.3 does not define.  Any thread.
 */
const char *sl_ofp_type_name(uint8_t type);

/** Name of a multipart type ("OFPMP_FLOW"), "OFPMP_UNKNOWN" otherwise.  Any thread. */
const char *sl_ofp_mp_type_name(uint16_t type);

/*
 * ============================================================================
 * Growable message buffer
 * ============================================================================
 */

/** Bytes of one or more encoded messages, back to back. */
struct sl_ofp_buf {
	uint8_t *data; /* malloc'd; NULL while empty and never grown */
	size_t len;    /* bytes used */
	size_t cap;    /* bytes allocated */
};

/** Initialise an empty buffer (no allocation).  Any thread. */
void sl_ofp_buf_init(struct sl_ofp_buf *b);
/** Forget the contents, keep the allocation.  Any thread. */
void sl_ofp_buf_reset(struct sl_ofp_buf *b);
/** Free the allocation; the buffer is empty and reusable after.  NULL-safe.  Any thread. */
void sl_ofp_buf_free(struct sl_ofp_buf *b);

/*
 * ============================================================================
 * Header, hello, error, echo, experimenter
 * ============================================================================
 */

/** The fixed header of every message, host order. */
struct sl_ofp_header {
	uint8_t version;
	uint8_t type;    /* enum sl_ofp_type */
	uint16_t length; /* whole message, header included */
	uint32_t xid;
};

/**
 * Decode and check the header of one whole message.
 *
 * @param msg  The message (at least @len bytes readable).
 * @param len  Its length as framed by the channel.
 * @param h    Out: the header fields.
 * @param err  Out: filled on failure.
 * @return 0, or -1 with: OFPBRC_BAD_LEN when len < 8 or h->length != len;
 *         OFPBRC_BAD_VERSION when version != SL_OFP_VERSION (not for
 *         OFPT_HELLO, whose version takes part in negotiation);
 *         OFPBRC_BAD_TYPE when the type is above SL_OFPT__MAX.  @h is
 *         filled whenever len >= 8, so the reply can copy the xid.
 *         Any thread.
 */
int sl_ofp_header_decode(const void *msg, size_t len, struct sl_ofp_header *h,
			 struct sl_ofp_error *err);

/**
 * Decode a hello.  The version bitmap element is optional: without it the
 * peer is taken to support every version from 1 to header.version (so a
 * version-4 hello without a bitmap gives bit 4), as OpenFlow 1.3.5 section
 * 6.3.1 negotiates; with it, only bitmap word 0 (versions 0..31) is kept.
 * Unknown element types are skipped.
 *
 * @param version_bitmap  Out: bit v set when the peer supports wire version v.
 * @return 0, or -1 with OFPBRC_BAD_LEN (element length < 4 or past the
 *         message, bitmap length not a multiple of 4), OFPBRC_BAD_TYPE (not
 *         a hello).  Any thread.
 */
int sl_ofp_hello_decode(const void *msg, size_t len, uint32_t *version_bitmap,
			struct sl_ofp_error *err);

/**
 * Decode an error message (a controller may send one).
 *
 * @param e         Out: type/code (experimenter errors: code = exp_type).
 * @param data      Out: the error's data, pointing into @msg.
 * @param data_len  Out: its length.
 * @return 0, or -1 with OFPBRC_BAD_LEN/BAD_TYPE.  Any thread.
 */
int sl_ofp_error_decode(const void *msg, size_t len, struct sl_ofp_error *e, const uint8_t **data,
			size_t *data_len, struct sl_ofp_error *err);

/**
 * Decode an echo request or reply.
 *
 * @param data      Out: payload, pointing into @msg (NULL when empty).
 * @param data_len  Out: payload length.
 * @return 0, or -1 with OFPBRC_BAD_LEN/BAD_TYPE.  Any thread.
 */
int sl_ofp_echo_decode(const void *msg, size_t len, const uint8_t **data, size_t *data_len,
		       struct sl_ofp_error *err);

/**
 * Check a message that has no body: features request, get_config request,
 * barrier request, get_async request (and their replies).
 *
 * @return 0, or -1 with OFPBRC_BAD_LEN (length != 8).  Any thread.
 */
int sl_ofp_empty_decode(const void *msg, size_t len, struct sl_ofp_error *err);

/*
 * ============================================================================
 * OpenState experimenter messages (exp_types 10..16)
 * ============================================================================
 *
 * Every message starts with ofp_experimenter_header (16 bytes, experimenter
 * SL_OFP_EXPERIMENTER_ID); bodies are listed in docs/openflow.md section 12.
 * Decoders check every length, pad byte and range and return the OpenFlow
 * error to send (-1 with @err), never trusting the peer.
 */

/** True for the exp_types of this section. */
bool sl_ofp_state_exp_type(uint32_t exp_type);

/** Flags of SL_OFPX_STATE_DEL. */
#define SL_OFPX_STATE_DEL_ALL 0x1 /* every state of the table; the match must be empty */
/** Flags of SL_OFPX_STATE_DUMP_REPLY. */
#define SL_OFPX_STATE_REPLY_MORE 0x1 /* more parts follow */

/** SL_OFPX_STATE_SET / SL_OFPX_STATE_DEL, decoded. */
struct sl_ofp_state_mod {
	uint8_t table_id;
	bool all;                /* DEL only: every state */
	struct sl_state_set set; /* SET only */
	struct sl_match key;     /* exact values of the lookup-scope fields (+ prerequisites) */
};

/**
 * Decode SL_OFPX_STATE_TABLE into a table spec of kind SL_TABLE_STATE.
 *
 * @return 0 or -1 with: the sl_ofp_experimenter_decode errors;
 *         OFPBRC_BAD_LEN; OFPTMFC_BAD_TABLE (table id >= SL_TABLES_MAX);
 *         OFPTMFC_BAD_CONFIG (pad bytes, name not terminated, more than
 *         SL_STATE_FIELDS_MAX fields per scope, OXM ids not matching the
 *         counts); OFPBMC_BAD_FIELD / BAD_LEN / DUP_FIELD for the OXM ids.
 *         Any thread.
 */
int sl_ofp_state_table_decode(const void *msg, size_t len, struct sl_table_spec *ts,
			      struct sl_ofp_error *err);
/** Append SL_OFPX_STATE_TABLE for @ts (kind state).  @return 0, -EINVAL, -ENOMEM. */
int sl_ofp_state_table_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_table_spec *ts);

/**
 * Decode SL_OFPX_STATE_SET or SL_OFPX_STATE_DEL (@exp_type says which the
 * message must be).
 *
 * @return 0 or -1 with: the experimenter errors; OFPBRC_BAD_LEN;
 *         OFPBRC_BAD_TABLE_ID; OFPBRC_BAD_EXP_TYPE (@exp_type mismatch);
 *         OFPBRC_EPERM (unknown flags, non-zero pad, DEL_ALL with a match);
 *         the ofp_match errors (OFPET_BAD_MATCH).  Any thread.
 */
int sl_ofp_state_mod_decode(const void *msg, size_t len, uint32_t exp_type,
			    struct sl_ofp_state_mod *m, struct sl_ofp_error *err);
/** Append SL_OFPX_STATE_SET or _DEL.  @return 0, -EINVAL, -ENOMEM. */
int sl_ofp_state_mod_encode(struct sl_ofp_buf *b, uint32_t xid, uint32_t exp_type,
			    const struct sl_ofp_state_mod *m);

/**
 * Decode SL_OFPX_STATE_DUMP or SL_OFPX_STATE_STATS (@exp_type) requests.
 *
 * @return 0 or -1 (experimenter errors, BAD_LEN, BAD_TABLE_ID, EPERM for pad).
 */
int sl_ofp_state_request_decode(const void *msg, size_t len, uint32_t exp_type, uint8_t *table_id,
				struct sl_ofp_error *err);
/** Append a dump or stats request.  @return 0, -ENOMEM. */
int sl_ofp_state_request_encode(struct sl_ofp_buf *b, uint32_t xid, uint32_t exp_type,
				uint8_t table_id);

/** One entry of a dump reply. */
struct sl_ofp_state_entry {
	struct sl_match key;
	uint32_t state, rollback;
	uint32_t idle_ms, hard_ms;           /* configured timeouts, 0 = none */
	uint32_t idle_left_ms, hard_left_ms; /* until they fire */
};

/**
 * Writes dump-reply parts: entries are appended to @b; a part that would
 * pass SL_OFPX_STATE_PART_MAX bytes is closed (flag MORE) and handed to
 * @flush, which sends it.  sl_ofp_state_dump_end closes the last part.
 */
#define SL_OFPX_STATE_PART_MAX 16384
struct sl_ofp_state_dump_writer {
	struct sl_ofp_buf *b;
	uint32_t xid;
	uint8_t table_id;
	size_t start;       /* offset of the open part in b */
	uint32_t n_entries; /* in the open part */
	int (*flush)(void *arg, const uint8_t *msg, size_t len);
	void *arg;
};
/** Start a reply (opens its first part).  @return 0, -ENOMEM.  Any thread. */
int sl_ofp_state_dump_begin(struct sl_ofp_state_dump_writer *w, struct sl_ofp_buf *b, uint32_t xid,
			    uint8_t table_id,
			    int (*flush)(void *arg, const uint8_t *msg, size_t len), void *arg);
/** Append one entry.  @return 0, -ENOMEM, or @flush's error. */
int sl_ofp_state_dump_append(struct sl_ofp_state_dump_writer *w,
			     const struct sl_ofp_state_entry *e);
/** Close the last part (no MORE flag) and flush it.  @return 0 or an error. */
int sl_ofp_state_dump_end(struct sl_ofp_state_dump_writer *w);

/** Dump-reply entry callback; return non-zero to stop. */
typedef int (*sl_ofp_state_entry_fn)(void *arg, const struct sl_ofp_state_entry *e);
/**
 * Decode one dump-reply part, calling @fn per entry.
 *
 * @param flags  Out: SL_OFPX_STATE_REPLY_* of the part.
 * @return 0, @fn's non-zero value, or -1 with @err (lengths, counts, pad,
 *         match errors).  Any thread.
 */
int sl_ofp_state_dump_reply_decode(const void *msg, size_t len, uint8_t *table_id, uint16_t *flags,
				   sl_ofp_state_entry_fn fn, void *arg, struct sl_ofp_error *err);

/** Append SL_OFPX_STATE_STATS_REPLY.  @return 0, -ENOMEM. */
int sl_ofp_state_stats_reply_encode(struct sl_ofp_buf *b, uint32_t xid, uint8_t table_id,
				    const struct sl_state_stats *st);
/** Decode SL_OFPX_STATE_STATS_REPLY.  @return 0 or -1 with @err. */
int sl_ofp_state_stats_reply_decode(const void *msg, size_t len, uint8_t *table_id,
				    struct sl_state_stats *st, struct sl_ofp_error *err);

/** An experimenter message's routing fields. */
struct sl_ofp_experimenter {
	uint32_t experimenter; /* SL_OFP_EXPERIMENTER_ID for Sluice's own */
	uint32_t exp_type;     /* SL_OFPX_* */
	const uint8_t *data;   /* body after exp_type, pointing into msg */
	size_t data_len;
};

/**
 * Decode an OFPT_EXPERIMENTER message and check it is one Sluice knows.
 *
 * @return 0, or -1 with OFPBRC_BAD_LEN (shorter than 16 bytes),
 *         OFPBRC_BAD_EXPERIMENTER (experimenter != SL_OFP_EXPERIMENTER_ID),
 *         OFPBRC_BAD_EXP_TYPE (unknown SL_OFPX_* type).  @x is filled
 *         whenever the length is valid.  Any thread.
 */
int sl_ofp_experimenter_decode(const void *msg, size_t len, struct sl_ofp_experimenter *x,
			       struct sl_ofp_error *err);

/**
 * Decode an SL_OFPX_TABLE_DECLARE experimenter message into a table spec
 * (byte layout: docs/openflow-experimenter.md).
 *
 * @param ts  Out: table_id, kind, max_entries, name, fields (n_fields 0 =
 *            derive from the table's first flows).
 * @return 0, or -1 with: the sl_ofp_experimenter_decode errors;
 *         OFPBRC_BAD_LEN (body shorter than 40 bytes, or OXM ids not
 *         exactly filling the message); OFPTMFC_BAD_TABLE (table_id >=
 *         SL_TABLES_MAX); OFPTMFC_BAD_CONFIG (unknown kind, name not
 *         NUL-terminated within 32 bytes, non-zero pad); OFPBMC_BAD_FIELD
 *         (unknown OXM id, or more than SL_KEY_FIELDS_MAX fields);
 *         OFPBMC_DUP_FIELD; OFPBMC_BAD_LEN (OXM id length inconsistent with
 *         its field).  Any thread.
 */
int sl_ofp_table_declare_decode(const void *msg, size_t len, struct sl_table_spec *ts,
				struct sl_ofp_error *err);

/*
 * Forwarding modes (src/fwd): SL_OFPX_SET_FWD_MODE and SL_OFPX_FWD_MODE
 * (docs/openflow.md section 12.9).  Errors for refused parameters are
 * experimenter errors (type SL_OFPET_EXPERIMENTER, experimenter
 * SL_OFP_EXPERIMENTER_ID) with these codes (the exp_type field):
 */
enum sl_ofpx_fwd_error {
	SL_OFPXFE_UNKNOWN_MODE = 0x0400, /* mode number not known */
	SL_OFPXFE_DUP_MODE = 0x0401,     /* a mode given twice */
	SL_OFPXFE_DUP_TAG = 0x0402,      /* two modes with one tag */
	SL_OFPXFE_DUP_NEIGHBOR = 0x0403, /* a hypercube neighbour listed twice */
	SL_OFPXFE_BAD_PORT = 0x0404,     /* a port the switch does not have, or used twice */
	SL_OFPXFE_BAD_PARAM = 0x0405,    /* key <= port count, neighbour not one bit away, pad */
};

/**
 * Decode SL_OFPX_SET_FWD_MODE or SL_OFPX_FWD_MODE (request: no TLV; reply:
 * the current modes).
 *
 * @param exp_type  Out: which of the two.
 * @return 0, or -1 with: the sl_ofp_experimenter_decode errors;
 *         OFPBRC_BAD_EXP_TYPE (another exp_type); OFPBRC_BAD_LEN (a TLV
 *         shorter than 8 bytes, not a multiple of 8, past the end, or of
 *         the wrong size for its mode); SL_OFPXFE_UNKNOWN_MODE;
 *         SL_OFPXFE_DUP_MODE; SL_OFPXFE_BAD_PARAM (non-zero pad, more than
 *         SL_FWD_NEIGH_MAX neighbours).  Any thread.
 */
int sl_ofp_fwd_mode_decode(const void *msg, size_t len, uint32_t *exp_type,
			   struct sl_fwd_params *fp, struct sl_ofp_error *err);
/**
 * Append an SL_OFPX_SET_FWD_MODE or SL_OFPX_FWD_MODE message carrying @fp.
 * @return 0, -ENOMEM, -EINVAL (unknown mode, too many neighbours).  Any thread.
 */
int sl_ofp_fwd_mode_encode(struct sl_ofp_buf *b, uint32_t xid, uint32_t exp_type,
			   const struct sl_fwd_params *fp);
/** The SL_OFPXFE_* code for a refusal by sl_fwd_set.  Any thread. */
uint16_t sl_ofp_fwd_fail_code(enum sl_fwd_fail f);

/** Append a hello with a version-bitmap element.  @return 0, -ENOMEM.  Any thread. */
int sl_ofp_hello_encode(struct sl_ofp_buf *b, uint32_t xid, uint32_t version_bitmap);

/**
 * Append an error reply.
 *
 * @param e         Error; type SL_OFPET_EXPERIMENTER builds an
 *                  ofp_error_experimenter_msg (exp_type = e->code).
 * @param data      For SL_OFPET_HELLO_FAILED an ASCII reason (all of it is
 *                  sent); for any other type the offending message, of
 *                  which the first SL_OFP_ERROR_DATA_MAX bytes are sent.
 * @param data_len  Bytes at @data (0 allowed, @data may then be NULL).
 * @return 0, -ENOMEM, -EMSGSIZE.  Any thread.
 */
int sl_ofp_error_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_error *e,
			const void *data, size_t data_len);

/** Append an echo request / reply carrying @data.  @return 0, -ENOMEM, -EMSGSIZE.  Any thread. */
int sl_ofp_echo_request_encode(struct sl_ofp_buf *b, uint32_t xid, const void *data,
			       size_t data_len);
int sl_ofp_echo_reply_encode(struct sl_ofp_buf *b, uint32_t xid, const void *data, size_t data_len);

/**
 * Append a body-less message of any type (features/get_config/barrier/
 * get_async requests, barrier reply).  @return 0, -ENOMEM.  Any thread.
 */
int sl_ofp_empty_encode(struct sl_ofp_buf *b, uint8_t type, uint32_t xid);
/** Append a barrier reply (sl_ofp_empty_encode with SL_OFPT_BARRIER_REPLY). */
int sl_ofp_barrier_reply_encode(struct sl_ofp_buf *b, uint32_t xid);

/**
 * Append an SL_OFPX_TABLE_DECLARE experimenter message for @ts (for
 * controllers and tests).
 *
 * @return 0, -ENOMEM; -EINVAL when @ts cannot be expressed (kind out of
 *         range, a field without an OXM encoding).  Any thread.
 */
int sl_ofp_table_declare_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_table_spec *ts);

/*
 * ============================================================================
 * Switch configuration and control messages
 * ============================================================================
 */

/** Body of a features reply. */
struct sl_ofp_features {
	uint64_t datapath_id;
	uint32_t n_buffers;    /* 0: Sluice does not buffer */
	uint8_t n_tables;      /* tables the controller may use (SL_TABLES_MAX) */
	uint8_t auxiliary_id;  /* 0: main connection */
	uint32_t capabilities; /* SL_OFPC_* */
};

/** Append a features reply.  @return 0, -ENOMEM.  Any thread. */
int sl_ofp_features_reply_encode(struct sl_ofp_buf *b, uint32_t xid,
				 const struct sl_ofp_features *f);

/** set_config / get_config_reply body. */
struct sl_ofp_switch_config {
	uint16_t flags;         /* SL_OFPC_FRAG_* */
	uint16_t miss_send_len; /* bytes of a table-miss packet sent to the controller */
};

/**
 * Decode a set_config.
 * @return 0, or -1 with OFPBRC_BAD_LEN (length != 12), OFPSCFC_BAD_FLAGS
 *         (flags outside SL_OFPC_FRAG_MASK).  Any thread.
 */
int sl_ofp_set_config_decode(const void *msg, size_t len, struct sl_ofp_switch_config *c,
			     struct sl_ofp_error *err);
/** Append a get_config reply.  @return 0, -ENOMEM.  Any thread. */
int sl_ofp_get_config_reply_encode(struct sl_ofp_buf *b, uint32_t xid,
				   const struct sl_ofp_switch_config *c);

/** role_request / role_reply body. */
struct sl_ofp_role {
	uint32_t role; /* SL_OFPCR_ROLE_* */
	uint64_t generation_id;
};

/**
 * Decode a role request.
 * @return 0, or -1 with OFPBRC_BAD_LEN (length != 24), OFPRRFC_BAD_ROLE
 *         (role above SLAVE).  Any thread.
 */
int sl_ofp_role_request_decode(const void *msg, size_t len, struct sl_ofp_role *r,
			       struct sl_ofp_error *err);
/** Append a role reply.  @return 0, -ENOMEM.  Any thread. */
int sl_ofp_role_reply_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_role *r);

/** Asynchronous message filters; index 0: master/equal role, 1: slave. */
struct sl_ofp_async_config {
	uint32_t packet_in_mask[2];    /* bit (1 << SL_OFPR_*) */
	uint32_t port_status_mask[2];  /* bit (1 << SL_OFPPR_*) */
	uint32_t flow_removed_mask[2]; /* bit (1 << SL_OFPRR_*) */
};

/**
 * Decode a set_async.
 * @return 0, or -1 with OFPBRC_BAD_LEN (length != 32).  Any thread.
 */
int sl_ofp_set_async_decode(const void *msg, size_t len, struct sl_ofp_async_config *c,
			    struct sl_ofp_error *err);
/** Append a get_async reply.  @return 0, -ENOMEM.  Any thread. */
int sl_ofp_get_async_reply_encode(struct sl_ofp_buf *b, uint32_t xid,
				  const struct sl_ofp_async_config *c);

/** A port_mod. */
struct sl_ofp_port_mod {
	uint32_t port_no;
	uint8_t hw_addr[6]; /* must match the port's address (agent checks: OFPPMFC_BAD_HW_ADDR) */
	uint32_t config;    /* SL_OFPPC_* values */
	uint32_t mask;      /* SL_OFPPC_* bits to change */
	uint32_t advertise; /* SL_OFPPF_*; 0: do not change */
};

/**
 * Decode a port_mod.
 * @return 0, or -1 with OFPBRC_BAD_LEN (length != 40), OFPPMFC_BAD_PORT
 *         (port 0 or a reserved number other than LOCAL), OFPPMFC_BAD_CONFIG
 *         (config or mask bits outside SL_OFPPC_ALL).  Any thread.
 */
int sl_ofp_port_mod_decode(const void *msg, size_t len, struct sl_ofp_port_mod *pm,
			   struct sl_ofp_error *err);

/** A table_mod (OpenFlow 1.3: config is reserved; decoded for completeness). */
struct sl_ofp_table_mod {
	uint8_t table_id; /* SL_OFPTT_ALL allowed */
	uint32_t config;
};

/**
 * Decode a table_mod.
 * @return 0, or -1 with OFPBRC_BAD_LEN (length != 16), OFPTMFC_BAD_TABLE
 *         (table_id >= SL_TABLES_MAX and not SL_OFPTT_ALL).  Any thread.
 */
int sl_ofp_table_mod_decode(const void *msg, size_t len, struct sl_ofp_table_mod *tm,
			    struct sl_ofp_error *err);

/**
 * Decode a queue_get_config request (Sluice has no queues: the agent replies
 * with sl_ofp_queue_get_config_reply_encode, which lists none).
 * @return 0, or -1 with OFPBRC_BAD_LEN (length != 16).  Any thread.
 */
int sl_ofp_queue_get_config_decode(const void *msg, size_t len, uint32_t *port,
				   struct sl_ofp_error *err);
/** One queue of a queue_get_config reply (ofp_packet_queue with one OFPQT_MAX_RATE property). */
struct sl_ofp_queue {
	uint32_t port_no, queue_id;
	uint16_t max_rate; /* 1/10 of a percent of the port's speed; > 1000: disabled */
};
/**
 * Append a queue_get_config reply for @port (SL_PORT_ANY: the request's
 * OFPP_ANY) listing @n queues.  @return 0, -ENOMEM, -EMSGSIZE.  Any thread.
 */
int sl_ofp_queue_get_config_reply_encode(struct sl_ofp_buf *b, uint32_t xid, uint32_t port,
					 const struct sl_ofp_queue *qs, unsigned n);
/** One OFPMP_QUEUE reply entry (ofp_queue_stats). */
struct sl_ofp_queue_stats {
	uint32_t port_no, queue_id;
	uint64_t tx_bytes, tx_packets, tx_errors;
	uint32_t duration_sec, duration_nsec;
};

/*
 * ============================================================================
 * Match, actions, instructions (reusable pieces)
 * ============================================================================
 */

/**
 * Decode an ofp_match (type OFPMT_OXM) at @p.
 *
 * @param p         First byte of the ofp_match.
 * @param avail     Bytes available from @p (the match and what follows).
 * @param m         Out: the match (see the file comment for semantics).
 * @param consumed  Out: bytes the match takes, padding included (multiple of 8).
 * @return 0, or -1 with: OFPBMC_BAD_TYPE (type != OFPMT_OXM);
 *         OFPBMC_BAD_LEN (length < 4, padded length past @avail, an OXM
 *         TLV past the match or with a length wrong for its field, non-zero
 *         padding); OFPBMC_BAD_FIELD (unknown class or field, or more than
 *         SL_KEY_FIELDS_MAX fields); OFPBMC_DUP_FIELD; OFPBMC_BAD_VALUE;
 *         OFPBMC_BAD_MASK; OFPBMC_BAD_PREREQ.  Any thread.
 */
int sl_ofp_match_decode(const uint8_t *p, size_t avail, struct sl_match *m, size_t *consumed,
			struct sl_ofp_error *err);

/**
 * Append an ofp_match (padded to 8) for @m to @b: OXM basic TLVs for
 * fields with an OXM number, Sluice experimenter OXMs for nw_ttl and raw
 * fields; a full mask is sent as an unmasked TLV.
 *
 * @return 0, -ENOMEM.  Any thread.
 */
int sl_ofp_match_encode(struct sl_ofp_buf *b, const struct sl_match *m);

/** Where an action list is used: decides what an output port may be. */
enum sl_ofp_action_ctx {
	SL_OFP_ACTX_FLOW,       /* flow instruction or group bucket: no OFPP_TABLE */
	SL_OFP_ACTX_PACKET_OUT, /* packet-out: OFPP_TABLE allowed */
};

/**
 * Decode a list of actions occupying exactly @len bytes at @p.
 *
 * @param p          First action.
 * @param len        Bytes of the list (multiple of 8).
 * @param ctx        Context (output port rules).
 * @param match      For set_field prerequisite checks (flow_mod), or NULL
 *                   to skip them (packet-out, groups).
 * @param acts       Out: up to SL_ACTIONS_MAX actions.
 * @param n_acts     Out: their number.
 * @return 0, or -1 with: OFPBAC_BAD_LEN (action length < 8, not a multiple
 *         of 8, past the list, or wrong for its type); OFPBAC_BAD_TYPE
 *         (unknown type, or a type Sluice does not execute: MPLS and PBB
 *         push/pop, MPLS TTL); OFPBAC_BAD_EXPERIMENTER; OFPBAC_TOO_MANY;
 *         OFPBAC_BAD_OUT_PORT (port 0, ANY, an undefined reserved number,
 *         TABLE outside packet-out); OFPBAC_BAD_OUT_GROUP (group id above
 *         OFPG_MAX); OFPBAC_BAD_ARGUMENT (push_vlan ethertype not 0x8100 /
 *         0x88a8); OFPBAC_BAD_SET_TYPE (unknown or read-only field);
 *         OFPBAC_BAD_SET_LEN (OXM length wrong, or padding longer than 7);
 *         OFPBAC_BAD_SET_ARGUMENT (masked set_field, value out of range,
 *         non-zero padding); OFPBAC_MATCH_INCONSISTENT (set_field
 *         prerequisites missing from @match).  Any thread.
 */
int sl_ofp_actions_decode(const uint8_t *p, size_t len, enum sl_ofp_action_ctx ctx,
			  const struct sl_match *match, struct sl_action *acts, uint8_t *n_acts,
			  struct sl_ofp_error *err);

/** Append @n actions (each padded to 8).  @return 0, -ENOMEM.  Any thread. */
int sl_ofp_actions_encode(struct sl_ofp_buf *b, const struct sl_action *acts, unsigned n);

/**
 * Decode an instruction list occupying exactly @len bytes at @p.
 *
 * @param table_id  The flow's table, for the goto_table check; SL_OFPTT_ALL
 *                  skips it (delete requests).
 * @param match     For set_field prerequisite checks.
 * @param in        Out: the instructions (goto_table -1 when absent,
 *                  meter_id 0 when absent).
 * @return 0, or -1 with: OFPBIC_BAD_LEN (length < 8, not a multiple of 8,
 *         past the list, wrong for its type: meter must be 8);
 *         OFPBIC_UNKNOWN_INST; OFPBIC_BAD_EXPERIMENTER;
 *         OFPBIC_BAD_TABLE_ID (goto_table not above @table_id or
 *         >= SL_TABLES_MAX); OFPMMFC_INVALID_METER (meter id 0; any other
 *         id is accepted, the virtual OFPM_CONTROLLER and OFPM_SLOWPATH
 *         included); the ONF duplicate-instruction error (see the file
 *         comment); and every sl_ofp_actions_decode error.  Any thread.
 */
int sl_ofp_instructions_decode(const uint8_t *p, size_t len, uint8_t table_id,
			       const struct sl_match *match, struct sl_instructions *in,
			       struct sl_ofp_error *err);

/**
 * Append instructions for @in in OVS's order: meter (when meter_id is not
 * 0), apply_actions (when has_apply or n_apply), clear_actions,
 * write_actions (when has_write or n_write), write_metadata, goto_table.
 * Order has no meaning on the wire.
 * @return 0, -ENOMEM.  Any thread.
 */
int sl_ofp_instructions_encode(struct sl_ofp_buf *b, const struct sl_instructions *in);

/*
 * ============================================================================
 * Controller commands: flow_mod, packet_out, group_mod, meter_mod
 * ============================================================================
 */

/** A decoded flow_mod. */
struct sl_ofp_flow_mod {
	uint8_t command;          /* SL_OFPFC_* */
	uint32_t buffer_id;       /* SL_OFP_NO_BUFFER expected (the agent answers others with
			       OFPBRC_BUFFER_UNKNOWN) */
	uint32_t out_port;        /* delete filters; SL_PORT_ANY = no filter */
	uint32_t out_group;       /* delete filters; SL_GROUP_ID_ANY = no filter */
	struct sl_flow_spec spec; /* table_id, priority, timeouts, flags, cookie[_mask], match,
				     instructions */
};

/**
 * Decode a flow_mod.
 *
 * @param fm  Out.  spec.table_id may be SL_OFPTT_ALL for the delete commands.
 * @return 0, or -1 with: OFPBRC_BAD_LEN (shorter than 56 bytes);
 *         OFPFMFC_BAD_COMMAND; OFPFMFC_BAD_TABLE_ID (add/modify with a
 *         table >= SL_TABLES_MAX); OFPFMFC_BAD_FLAGS (bits outside
 *         SL_FF_*); every sl_ofp_match_decode error; every
 *         sl_ofp_instructions_decode error.  Any thread.
 */
int sl_ofp_flow_mod_decode(const void *msg, size_t len, struct sl_ofp_flow_mod *fm,
			   struct sl_ofp_error *err);

/** Append a flow_mod (controllers, tests, the fuzz corpus).  @return 0, -ENOMEM, -EMSGSIZE. */
int sl_ofp_flow_mod_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_flow_mod *fm);

/** A decoded packet_out. */
struct sl_ofp_packet_out {
	uint32_t buffer_id; /* SL_OFP_NO_BUFFER expected */
	uint32_t in_port;   /* 1..SL_PORT_MAX_PHYS, LOCAL, CONTROLLER or ANY */
	uint8_t n_actions;
	struct sl_action actions[SL_ACTIONS_MAX];
	const uint8_t *data; /* the frame, pointing into the message (NULL when empty) */
	size_t data_len;
};

/**
 * Decode a packet_out.
 *
 * @return 0, or -1 with: OFPBRC_BAD_LEN (shorter than 24, actions_len not a
 *         multiple of 8 or past the message); OFPBRC_BAD_PORT (in_port 0 or
 *         an undefined reserved number); every sl_ofp_actions_decode error
 *         (context SL_OFP_ACTX_PACKET_OUT).  Any thread.
 */
int sl_ofp_packet_out_decode(const void *msg, size_t len, struct sl_ofp_packet_out *po,
			     struct sl_ofp_error *err);
/** Append a packet_out.  @return 0, -ENOMEM, -EMSGSIZE.  Any thread. */
int sl_ofp_packet_out_encode(struct sl_ofp_buf *b, uint32_t xid,
			     const struct sl_ofp_packet_out *po);

/** A decoded group_mod. */
struct sl_ofp_group_mod {
	uint16_t command; /* SL_OFPGC_* */
	struct sl_group_spec spec;
};

/**
 * Decode a group_mod.
 *
 * Bucket weights are kept as sent; the specification defines them for
 * select groups only and Sluice ignores them elsewhere.  Fast-failover
 * buckets must watch a port or a group.
 *
 * @return 0, or -1 with: OFPBRC_BAD_LEN (shorter than 16 bytes);
 *         OFPGMFC_BAD_COMMAND; OFPGMFC_BAD_TYPE (type above FF);
 *         OFPGMFC_INVALID_GROUP (group id above OFPG_MAX, except
 *         OFPG_ALL for delete; an indirect group without exactly one
 *         bucket on add/modify); OFPGMFC_BAD_BUCKET (bucket length < 16,
 *         not a multiple of 8, past the message); OFPGMFC_OUT_OF_BUCKETS
 *         (more than SL_GROUP_BUCKETS_MAX); OFPGMFC_BAD_WATCH (invalid
 *         watch port or group; FF bucket watching nothing); every
 *         sl_ofp_actions_decode error.  Any thread.
 */
int sl_ofp_group_mod_decode(const void *msg, size_t len, struct sl_ofp_group_mod *gm,
			    struct sl_ofp_error *err);
/** Append a group_mod.  @return 0, -ENOMEM, -EMSGSIZE.  Any thread. */
int sl_ofp_group_mod_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_group_mod *gm);

/** A decoded meter_mod. */
struct sl_ofp_meter_mod {
	uint16_t command;          /* SL_OFPMC_* */
	struct sl_meter_spec spec; /* meter_id, flags, bands; delete: n_bands 0 */
};

/**
 * Decode a meter_mod.
 *
 * Every band is 16 bytes (ofp_meter_band_drop / _dscp_remark).  Flags are
 * stored as sent; burst sizes too (0 is allowed, and the specification
 * ignores them without SL_METER_BURST).  A meter with no bands is valid.
 * Delete names a meter id (or SL_METER_ID_ALL) and nothing else: its flags
 * and bands are not looked at (spec.flags keeps the value sent, n_bands is
 * 0), as OVS does.  The virtual meters OFPM_SLOWPATH and OFPM_CONTROLLER
 * are refused: Sluice does not implement them.
 *
 * Checks, in this order: OFPBRC_BAD_LEN (shorter than 16 bytes);
 * OFPMMFC_BAD_COMMAND; OFPMMFC_INVALID_METER (meter id 0, or above
 * SL_METER_ID_MAX except SL_METER_ID_ALL for delete); then for add and
 * modify: OFPMMFC_BAD_FLAGS (bits outside SL_METER_KBPS | PKTPS | BURST |
 * STATS, or not exactly one of KBPS and PKTPS); then band by band:
 * OFPBRC_BAD_LEN (fewer than 16 bytes left, band length not 16);
 * OFPMMFC_OUT_OF_BANDS (more than SL_METER_BANDS_MAX); OFPMMFC_BAD_BAND
 * (type not DROP or DSCP_REMARK: experimenter bands included);
 * OFPMMFC_BAD_RATE (rate 0); OFPMMFC_BAD_BAND_VALUE (DSCP remark
 * prec_level not 1..3: the drop precedences of RFC 2597 are three).
 *
 * @param mm  Out.
 * @return 0, or -1 with one of the errors above.  Any thread.
 */
int sl_ofp_meter_mod_decode(const void *msg, size_t len, struct sl_ofp_meter_mod *mm,
			    struct sl_ofp_error *err);
/**
 * Append a meter_mod (controllers, tests, the fuzz corpus).  Fields are
 * written as given, unchecked; at most SL_METER_BANDS_MAX bands, the
 * prec_level byte only for DSCP remark bands.  @return 0, -ENOMEM.  Any thread.
 */
int sl_ofp_meter_mod_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_meter_mod *mm);

/*
 * ============================================================================
 * Asynchronous messages (switch -> controller)
 * ============================================================================
 */

/** What a packet_in carries. */
struct sl_ofp_packet_in {
	uint32_t buffer_id; /* SL_OFP_NO_BUFFER */
	uint8_t reason;     /* SL_OFPR_* */
	uint8_t table_id;
	uint64_t cookie; /* of the flow that sent it; all ones for a miss without entry */
	uint32_t in_port;
	uint64_t metadata;   /* put in the match when non-zero */
	uint64_t tunnel_id;  /* likewise */
	const uint8_t *data; /* the frame */
	size_t data_len;     /* its full length (total_len) */
	uint16_t max_len;    /* bytes of the frame to send; SL_OFPCML_NO_BUFFER = all */
};

/**
 * Append a packet_in: match with in_port (and metadata when non-zero), two
 * zero pad bytes, then min(data_len, max_len) bytes of the frame, further
 * cut so the message fits 65535 bytes.  total_len is data_len (capped at
 * 65535).  @return 0, -ENOMEM.  Any thread.
 */
int sl_ofp_packet_in_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_packet_in *pi);

/** Counters a flow-removed message and a flow stats entry report. */
struct sl_ofp_flow_stats {
	uint32_t duration_sec;
	uint32_t duration_nsec;
	uint64_t packet_count;
	uint64_t byte_count;
};

/**
 * Append a flow_removed for @fs (cookie, priority, table_id, timeouts,
 * match are taken from it).
 *
 * @param reason  SL_OFPRR_*.
 * @return 0, -ENOMEM.  Any thread.
 */
int sl_ofp_flow_removed_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_flow_spec *fs,
			       uint8_t reason, const struct sl_ofp_flow_stats *st);

/** A port description (ofp_port). */
struct sl_ofp_port_desc {
	uint32_t port_no;
	uint8_t hw_addr[6];
	char name[16];   /* NUL-terminated; at most 15 characters are sent */
	uint32_t config; /* SL_OFPPC_* */
	uint32_t state;  /* SL_OFPPS_* */
	uint32_t curr, advertised, supported, peer; /* SL_OFPPF_* */
	uint32_t curr_speed;                        /* kbps */
	uint32_t max_speed;                         /* kbps */
};

/** Append a port_status.  @param reason SL_OFPPR_*.  @return 0, -ENOMEM.  Any thread. */
int sl_ofp_port_status_encode(struct sl_ofp_buf *b, uint32_t xid, uint8_t reason,
			      const struct sl_ofp_port_desc *pd);

/*
 * ============================================================================
 * Multipart requests
 * ============================================================================
 */

/** Body of an OFPMP_FLOW or OFPMP_AGGREGATE request. */
struct sl_ofp_flow_stats_request {
	uint8_t table_id;   /* SL_OFPTT_ALL: all tables */
	uint32_t out_port;  /* SL_PORT_ANY: no filter */
	uint32_t out_group; /* SL_GROUP_ID_ANY: no filter */
	uint64_t cookie;
	uint64_t cookie_mask;  /* 0: no cookie filter */
	struct sl_match match; /* flows at least as specific as this (non-strict) */
};

/** A decoded multipart request. */
struct sl_ofp_mp_request {
	uint16_t type;  /* SL_OFPMP_* */
	uint16_t flags; /* SL_OFPMPF_REQ_MORE: one piece of a longer request; the agent
			   puts the pieces together first (sl_ofp_mp_assemble) */
	union {
		struct sl_ofp_flow_stats_request flow; /* FLOW, AGGREGATE */
		uint32_t port_no;                      /* PORT_STATS (SL_PORT_ANY: all) */
		struct {
			uint32_t port_no;  /* SL_PORT_ANY: all */
			uint32_t queue_id; /* 0xffffffff (OFPQ_ALL): all */
		} queue;                   /* QUEUE */
		uint32_t group_id;         /* GROUP (SL_GROUP_ID_ALL: all) */
		uint32_t meter_id;         /* METER, METER_CONFIG (SL_METER_ID_ALL) */
	};
};

/**
 * Decode a multipart request.
 *
 * Body rules: DESC, TABLE, GROUP_DESC, GROUP_FEATURES, METER_FEATURES and
 * PORT_DESC take an empty body; PORT_STATS, QUEUE, GROUP, METER and
 * METER_CONFIG exactly 8 bytes; FLOW and AGGREGATE 32 bytes plus a match
 * (its padded length exactly filling the message).  A TABLE_FEATURES
 * request must be empty (a "get"); a body would set the table
 * features, which Sluice does not allow: OFPTFFC_EPERM.
 *
 * @return 0, or -1 with: OFPBRC_BAD_LEN (shorter than 16, body of the
 *         wrong size); OFPBRC_BAD_TABLE_ID (FLOW/AGGREGATE table_id >=
 *         SL_TABLES_MAX and not SL_OFPTT_ALL); OFPBRC_BAD_MULTIPART (unknown type);
 *         OFPBRC_BAD_EXPERIMENTER (OFPMP_EXPERIMENTER: Sluice defines
 *         none); OFPTFFC_EPERM; sl_ofp_match_decode errors (FLOW,
 *         AGGREGATE).  Any thread.
 */
int sl_ofp_mp_request_decode(const void *msg, size_t len, struct sl_ofp_mp_request *req,
			     struct sl_ofp_error *err);

/** Append a multipart request (controllers, tests, corpus).  @return 0, -ENOMEM. */
int sl_ofp_mp_request_encode(struct sl_ofp_buf *b, uint32_t xid,
			     const struct sl_ofp_mp_request *req);

/*
 * Multipart request reassembly (OpenFlow 1.3.5 section 7.3.5).  A request
 * may come in pieces: messages of one xid and one type, each but the last
 * flagged OFPMPF_REQ_MORE; the switch answers once the last arrives.  Open
 * vSwitch's ofpmp_assembler (lib/ofp-msgs.c) is the model:
 *
 * - Pieces with an empty body may come anywhere.  TABLE_FEATURES, whose
 *   body is an array, gets its pieces' bodies concatenated; every other type
 *   takes at most one piece with a body (a second: OFPBRC_BAD_MULTIPART, as
 *   OVS's BAD_STAT), and that piece is decoded on arrival, so a bad body is
 *   answered at once instead of after the last piece.
 * - Several xids may be open at once (interleaved); a piece whose type
 *   differs from its xid's first piece is OFPBRC_BAD_MULTIPART.
 * - Bounds, per connection: SL_OFP_MP_HELD_MAX bytes of pieces received for
 *   requests still open (every piece counted whole, all xids together), at
 *   most SL_OFP_MP_OPEN_MAX open requests, and a reassembled request must
 *   fit one message (65535 bytes).  Past a bound the piece is answered
 *   with OFPBRC_MULTIPART_BUFFER_OVERFLOW, as the specification says.
 * - Any error drops that xid's pieces; a later piece of the xid starts a new
 *   request.  Open requests do not time out (OpenFlow 1.3 has no error code
 *   for it): they go with the connection (sl_ofp_mp_assembler_clear).
 *
 * Concurrency: one assembler per connection, used by its control thread.
 */

/** Bytes of pieces one connection may hold for its open multipart requests. */
#define SL_OFP_MP_HELD_MAX (256u * 1024)
/** Open (unfinished) multipart requests one connection may have. */
#define SL_OFP_MP_OPEN_MAX 8

/** One open multipart request. */
struct sl_ofp_mp_open {
	uint32_t xid;
	uint16_t type;         /* SL_OFPMP_*, the first piece's */
	bool has_body;         /* a piece with a body came */
	size_t size;           /* bytes of its pieces so far (counted against the bound) */
	struct sl_ofp_buf msg; /* the request so far: the first header, then the bodies */
};

/** A connection's multipart reassembly state; zeroed or sl_ofp_mp_assembler_init. */
struct sl_ofp_mp_assembler {
	struct sl_ofp_mp_open open[SL_OFP_MP_OPEN_MAX];
	unsigned n_open;
	size_t held;                      /* sum of open[].size */
	struct sl_ofp_buf done;           /* the last request put together */
	struct sl_ofp_mp_request scratch; /* a piece's decode (too big for the stack) */
};

/** Initialise an empty assembler (no allocation).  Control thread. */
void sl_ofp_mp_assembler_init(struct sl_ofp_mp_assembler *a);
/**
 * Drop every open request and free the memory; the assembler is empty and
 * reusable.  Control thread.
 */
void sl_ofp_mp_assembler_clear(struct sl_ofp_mp_assembler *a);

/**
 * Take one multipart request message: a whole request, or a piece of one.
 *
 * @param a        The connection's assembler.
 * @param msg      The message (a channel-framed OFPT_MULTIPART_REQUEST).
 * @param len      Its length.
 * @param req      Out, when 1 is returned: the whole request, REQ_MORE
 *                 clear, its header length @req_len: @msg itself when it
 *                 was not a piece, else a buffer of @a valid until the next
 *                 call.  Decode it with sl_ofp_mp_request_decode.
 * @param req_len  Out: its length.
 * @param err      Out: filled when -1 is returned.
 * @return 1 (a whole request is ready), 0 (a piece was kept: more are to
 *         come, send nothing), or -1 with: the header's errors
 *         (ofp_msg_check: OFPBRC_BAD_LEN, OFPBRC_BAD_VERSION,
 *         OFPBRC_BAD_TYPE); OFPBRC_BAD_MULTIPART (a type other than the
 *         xid's, a second body); OFPBRC_MULTIPART_BUFFER_OVERFLOW (a bound
 *         above); a piece's body errors (sl_ofp_mp_request_decode).
 *         Control thread.
 */
int sl_ofp_mp_assemble(struct sl_ofp_mp_assembler *a, const void *msg, size_t len,
		       const uint8_t **req, size_t *req_len, struct sl_ofp_error *err);

/*
 * ============================================================================
 * Multipart replies
 * ============================================================================
 */

/** OFPMP_DESC reply strings (NUL-terminated; truncated to 255 / 31 characters). */
struct sl_ofp_desc {
	const char *mfr_desc;
	const char *hw_desc;
	const char *sw_desc;
	const char *serial_num;
	const char *dp_desc;
};
/** Append an OFPMP_DESC reply.  @return 0, -ENOMEM.  Any thread. */
int sl_ofp_desc_reply_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_desc *d);

/** Append an OFPMP_AGGREGATE reply.  @return 0, -ENOMEM.  Any thread. */
int sl_ofp_aggregate_reply_encode(struct sl_ofp_buf *b, uint32_t xid, uint64_t packet_count,
				  uint64_t byte_count, uint32_t flow_count);

/** OFPMP_GROUP_FEATURES reply body; arrays indexed by enum sl_group_type. */
struct sl_ofp_group_features {
	uint32_t types;        /* bit (1 << SL_GROUP_*) */
	uint32_t capabilities; /* SL_OFPGFC_* */
	uint32_t max_groups[4];
	uint32_t actions[4]; /* bit (1 << SL_OFPAT_*), e.g. SL_OFP_ACTIONS_SUPPORTED */
};
/** Append an OFPMP_GROUP_FEATURES reply.  @return 0, -ENOMEM.  Any thread. */
int sl_ofp_group_features_reply_encode(struct sl_ofp_buf *b, uint32_t xid,
				       const struct sl_ofp_group_features *gf);

/** OFPMP_METER_FEATURES reply body.  All zero says "no meters". */
struct sl_ofp_meter_features {
	uint32_t max_meter;    /* how many meters the switch can hold */
	uint32_t band_types;   /* bit (1 << SL_BAND_*): DROP 0x2, DSCP_REMARK 0x4 */
	uint32_t capabilities; /* SL_METER_* flags supported (OFPMF_*) */
	uint8_t max_bands;     /* bands per meter */
	uint8_t max_color;     /* colours (0: no colour-aware metering) */
};
/** Append an OFPMP_METER_FEATURES reply.  @return 0, -ENOMEM.  Any thread. */
int sl_ofp_meter_features_reply_encode(struct sl_ofp_buf *b, uint32_t xid,
				       const struct sl_ofp_meter_features *mf);

/** One OFPMP_PORT_STATS entry; unsupported counters are all ones (UINT64_MAX). */
struct sl_ofp_port_stats {
	uint32_t port_no;
	uint64_t rx_packets, tx_packets, rx_bytes, tx_bytes;
	uint64_t rx_dropped, tx_dropped, rx_errors, tx_errors;
	uint64_t rx_frame_err, rx_over_err, rx_crc_err, collisions;
	uint32_t duration_sec, duration_nsec;
};

/** One OFPMP_TABLE entry. */
struct sl_ofp_table_stats {
	uint8_t table_id;
	uint32_t active_count;
	uint64_t lookup_count;
	uint64_t matched_count;
};

/** One OFPMP_GROUP entry. */
struct sl_ofp_group_stats {
	uint32_t group_id;
	uint32_t ref_count; /* flows and groups that point at it */
	uint64_t packet_count, byte_count;
	uint32_t duration_sec, duration_nsec;
	uint16_t n_buckets;
	struct {
		uint64_t packet_count, byte_count;
	} buckets[SL_GROUP_BUCKETS_MAX];
};

/**
 * One OFPMP_TABLE_FEATURES entry.  The codec derives the property lists
 * from what Sluice supports: instructions goto_table (not for the last
 * table), write_metadata, write_actions, apply_actions, clear_actions;
 * next_tables table_id+1 .. SL_TABLES_MAX-1 (the pipeline creates tables on
 * demand); write/apply actions SL_OFP_ACTIONS_SUPPORTED; match: @fields (or
 * every OXM basic field when n_fields is 0); wildcards: the fields the kind
 * can leave out or mask (none for direct/exact, the prefix field for lpm,
 * all for mask tables); write/apply set-field: every writable OXM basic
 * field.  Sluice experimenter fields (raw, nw_ttl) are not listed; _MISS
 * properties are omitted (same as the regular ones, section 7.3.5.18).
 */
struct sl_ofp_table_features {
	uint8_t table_id;
	char name[32];           /* NUL-terminated */
	uint64_t metadata_match; /* bits of metadata the table can match (all ones) */
	uint64_t metadata_write; /* bits write_metadata can write (all ones) */
	uint32_t config;         /* 0 in OpenFlow 1.3 */
	uint32_t max_entries;
	enum sl_table_kind kind;
	uint8_t n_fields; /* 0: any field (a mask table deriving its layout) */
	struct sl_field fields[SL_KEY_FIELDS_MAX];
};

/** Called with each complete reply message; return non-zero to abort the reply. */
typedef int (*sl_ofp_mp_flush_fn)(void *arg, const uint8_t *msg, size_t len);

/**
 * Multipart reply writer.  begin() starts a reply message; each *_append()
 * adds one entry, and when that entry would push the message past 65535
 * bytes the writer closes the message with OFPMPF_REPLY_MORE set and moves
 * the entry into a new message with the same type and xid.  end() closes
 * the last message (REPLY_MORE clear).  A reply with no entries is one
 * message with an empty body.
 *
 * Output: with a flush callback, every completed message is handed to it
 * and removed from the buffer as soon as the next one starts (and at end),
 * so dumping 1,000,000 flows needs one message of memory; without one, all
 * messages accumulate back to back in the buffer for the caller to send.
 *
 * Errors are sticky: after the first failure (-ENOMEM, -EMSGSIZE for an
 * entry larger than a message can hold, or the callback's non-zero return
 * as -ECANCELED) every later call returns it and does nothing.
 */
struct sl_ofp_mp_writer {
	struct sl_ofp_buf *buf;   /* output */
	sl_ofp_mp_flush_fn flush; /* or NULL */
	void *arg;                /* for flush */
	uint16_t type;            /* SL_OFPMP_* */
	uint32_t xid;
	size_t base;      /* buf->len at begin: the reply starts here */
	size_t msg_start; /* offset of the open message in buf */
	unsigned n_msgs;  /* messages started so far */
	int error;        /* sticky error, 0 if none */
};

/**
 * Start a multipart reply.
 * @return 0, -ENOMEM.  Any thread (the writer belongs to the caller).
 */
int sl_ofp_mp_writer_begin(struct sl_ofp_mp_writer *w, struct sl_ofp_buf *b, uint16_t type,
			   uint32_t xid, sl_ofp_mp_flush_fn flush, void *arg);
/** Close the reply (and flush).  @return 0 or the sticky error. */
int sl_ofp_mp_writer_end(struct sl_ofp_mp_writer *w);

/** Append an OFPMP_FLOW entry for @fs (match and instructions re-encoded). */
int sl_ofp_mp_flow_stats_append(struct sl_ofp_mp_writer *w, const struct sl_flow_spec *fs,
				const struct sl_ofp_flow_stats *st);
/** Append an OFPMP_TABLE entry. */
int sl_ofp_mp_table_stats_append(struct sl_ofp_mp_writer *w, const struct sl_ofp_table_stats *ts);
/** Append an OFPMP_PORT_STATS entry. */
int sl_ofp_mp_port_stats_append(struct sl_ofp_mp_writer *w, const struct sl_ofp_port_stats *ps);
int sl_ofp_mp_queue_stats_append(struct sl_ofp_mp_writer *w, const struct sl_ofp_queue_stats *qs);
/** Append an OFPMP_PORT_DESC entry. */
int sl_ofp_mp_port_desc_append(struct sl_ofp_mp_writer *w, const struct sl_ofp_port_desc *pd);
/** Append an OFPMP_GROUP entry. */
int sl_ofp_mp_group_stats_append(struct sl_ofp_mp_writer *w, const struct sl_ofp_group_stats *gs);
/** Append an OFPMP_GROUP_DESC entry for @gs. */
int sl_ofp_mp_group_desc_append(struct sl_ofp_mp_writer *w, const struct sl_group_spec *gs);
/**
 * Append an OFPMP_METER entry (ofp_meter_stats, 40 bytes, then one
 * ofp_meter_band_stats of 16 bytes per band: st->n_bands of them, at most
 * SL_METER_BANDS_MAX).  st->created_tsc is not sent: the caller turns it
 * into @duration_sec and @duration_nsec, as for groups.
 */
int sl_ofp_mp_meter_stats_append(struct sl_ofp_mp_writer *w, uint32_t meter_id,
				 uint32_t duration_sec, uint32_t duration_nsec,
				 const struct sl_meter_stats *st);
/**
 * Append an OFPMP_METER_CONFIG entry for @ms (ofp_meter_config, 8 bytes:
 * length, flags, meter_id; then its bands as in a meter_mod).
 */
int sl_ofp_mp_meter_config_append(struct sl_ofp_mp_writer *w, const struct sl_meter_spec *ms);
/** Append an OFPMP_TABLE_FEATURES entry. */
int sl_ofp_mp_table_features_append(struct sl_ofp_mp_writer *w,
				    const struct sl_ofp_table_features *tf);

/*
 * ============================================================================
 * Client-side decoders (sluicectl)
 * ============================================================================
 *
 * The other direction of the replies above, for tools that talk to a switch
 * (sluicectl, tests).  Implemented in ofp_client.c.  The same rules as every
 * decoder here: the input is untrusted, every length is checked before it is
 * used, nothing is read outside [msg, msg + len), nothing is allocated, and
 * a failure is -1 with an OpenFlow error naming what was wrong (mostly
 * OFPBRC_BAD_LEN; match, instruction and action errors from the reusable
 * decoders).  Output structs are undefined after a failure.
 *
 * Multipart replies are decoded in two steps: sl_ofp_mp_reply_decode()
 * checks the message and yields its body; an entry decoder then takes one
 * entry at @ofs in that body and moves @ofs past it:
 *
 *	struct sl_ofp_mp_reply r;
 *	if (sl_ofp_mp_reply_decode(msg, len, &r, &e) < 0 || r.type != SL_OFPMP_PORT_STATS)
 *		malformed;
 *	for (size_t ofs = 0; ofs < r.body_len;)
 *		if (sl_ofp_port_stats_entry_decode(r.body, r.body_len, &ofs, &ps, &e) < 0)
 *			malformed;
 *
 * Whether more messages of the same reply follow is r.flags &
 * SL_OFPMPF_REPLY_MORE; collecting them by xid is the caller's job.
 */

/**
 * Decode a features reply (exactly 32 bytes).
 *
 * @return 0, or -1 with OFPBRC_BAD_TYPE (not a features reply) or
 *         OFPBRC_BAD_LEN.  Any thread.
 */
int sl_ofp_features_reply_decode(const void *msg, size_t len, struct sl_ofp_features *f,
				 struct sl_ofp_error *err);

/** A multipart reply's header fields and body. */
struct sl_ofp_mp_reply {
	uint16_t type;       /* SL_OFPMP_* */
	uint16_t flags;      /* SL_OFPMPF_REPLY_MORE: more messages with this xid follow */
	const uint8_t *body; /* entries, pointing into the message (NULL when empty) */
	size_t body_len;
};

/**
 * Decode a multipart reply's header.
 *
 * @return 0, or -1 with OFPBRC_BAD_TYPE (not a multipart reply) or
 *         OFPBRC_BAD_LEN (shorter than 16 bytes).  Any thread.
 */
int sl_ofp_mp_reply_decode(const void *msg, size_t len, struct sl_ofp_mp_reply *r,
			   struct sl_ofp_error *err);

/**
 * Decode the OFPMP_FLOW entry at body[*ofs] and advance *ofs past it.
 *
 * @param body  A multipart reply body (sl_ofp_mp_reply.body).
 * @param len   Its length.
 * @param ofs   In: where the entry starts; out: where the next one starts.
 * @param fs    Out: table_id, priority, timeouts, flags, cookie (cookie_mask
 *              0), match and instructions.
 * @param st    Out: duration and counters.
 * @return 0, or -1 with: OFPBRC_BAD_LEN (entry shorter than 56 bytes, its
 *         length not a multiple of 8 or past the body, match and
 *         instructions not exactly filling it); OFPBRC_BAD_TABLE_ID
 *         (table_id >= SL_TABLES_MAX); every sl_ofp_match_decode and
 *         sl_ofp_instructions_decode error.  Any thread.
 */
int sl_ofp_flow_stats_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
				   struct sl_flow_spec *fs, struct sl_ofp_flow_stats *st,
				   struct sl_ofp_error *err);

/**
 * Decode the OFPMP_TABLE entry (24 bytes) at body[*ofs] and advance *ofs.
 * @return 0, or -1 with OFPBRC_BAD_LEN (fewer than 24 bytes left).  Any thread.
 */
int sl_ofp_table_stats_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
				    struct sl_ofp_table_stats *ts, struct sl_ofp_error *err);

/**
 * Decode the OFPMP_PORT_STATS entry (112 bytes) at body[*ofs] and advance
 * *ofs.  Counters the switch does not support are UINT64_MAX, as sent.
 * @return 0, or -1 with OFPBRC_BAD_LEN (fewer than 112 bytes left).  Any thread.
 */
int sl_ofp_port_stats_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
				   struct sl_ofp_port_stats *ps, struct sl_ofp_error *err);

/**
 * Decode the OFPMP_PORT_DESC entry (an ofp_port, 64 bytes) at body[*ofs]
 * and advance *ofs.  The name is cut at its first NUL and at 15 characters
 * and is always NUL-terminated; its bytes are otherwise as sent (printers
 * must not trust them).
 * @return 0, or -1 with OFPBRC_BAD_LEN (fewer than 64 bytes left).  Any thread.
 */
int sl_ofp_port_desc_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
				  struct sl_ofp_port_desc *pd, struct sl_ofp_error *err);

/**
 * Decode the OFPMP_GROUP entry at body[*ofs] and advance *ofs.
 * @return 0, or -1 with OFPBRC_BAD_LEN (entry shorter than 40 bytes, past
 *         the body, bucket counters not exactly filling it, more than
 *         SL_GROUP_BUCKETS_MAX of them).  Any thread.
 */
int sl_ofp_group_stats_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
				    struct sl_ofp_group_stats *gs, struct sl_ofp_error *err);

/**
 * Decode the OFPMP_GROUP_DESC entry at body[*ofs] and advance *ofs.
 * @param gs  Out: group_id, type, buckets with their actions.
 * @return 0, or -1 with: OFPBRC_BAD_LEN (entry shorter than 8 bytes, length
 *         not a multiple of 8 or past the body); OFPGMFC_BAD_TYPE; the
 *         bucket errors of sl_ofp_group_mod_decode.  Any thread.
 */
int sl_ofp_group_desc_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
				   struct sl_group_spec *gs, struct sl_ofp_error *err);

/**
 * Decode the OFPMP_METER entry at body[*ofs] and advance *ofs.
 *
 * @param meter_id       Out.
 * @param duration_sec   Out: the meter's age, seconds.
 * @param duration_nsec  Out: and nanoseconds beyond them.
 * @param st             Out: flow_count, packets, bytes, n_bands and the band
 *                       counters (created_tsc 0: not on the wire).
 * @return 0, or -1 with OFPBRC_BAD_LEN (entry shorter than 40 bytes, past
 *         the body, band counters not exactly filling it, more than
 *         SL_METER_BANDS_MAX of them).  Any thread.
 */
int sl_ofp_meter_stats_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
				    uint32_t *meter_id, uint32_t *duration_sec,
				    uint32_t *duration_nsec, struct sl_meter_stats *st,
				    struct sl_ofp_error *err);

/**
 * Decode the OFPMP_METER_CONFIG entry at body[*ofs] and advance *ofs.
 * Flags are kept as sent (not checked: a tool shows what the switch says).
 * @param ms  Out: meter_id, flags, bands.
 * @return 0, or -1 with: OFPBRC_BAD_LEN (entry shorter than 8 bytes, past
 *         the body); the band errors of sl_ofp_meter_mod_decode.  Any thread.
 */
int sl_ofp_meter_config_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
				     struct sl_meter_spec *ms, struct sl_ofp_error *err);

/**
 * Decode an OFPMP_METER_FEATURES reply body (sl_ofp_mp_reply.body: one
 * ofp_meter_features, exactly 16 bytes).
 * @return 0, or -1 with OFPBRC_BAD_LEN (@len not 16).  Any thread.
 */
int sl_ofp_meter_features_decode(const uint8_t *body, size_t len, struct sl_ofp_meter_features *mf,
				 struct sl_ofp_error *err);

/**
 * Decode the fixed part of the OFPMP_TABLE_FEATURES entry at body[*ofs] and
 * advance *ofs past the whole entry.  The property list is walked and its
 * lengths checked, but not decoded: tf->kind and tf->n_fields are left 0.
 *
 * @param tf  Out: table_id, name (NUL-terminated, cut at 31 characters),
 *            metadata_match, metadata_write, config, max_entries.
 * @return 0, or -1 with OFPBRC_BAD_LEN (entry shorter than 64 bytes, its
 *         length not a multiple of 8 or past the body, a property shorter
 *         than 4 bytes or past the entry).  Any thread.
 */
int sl_ofp_table_features_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
				       struct sl_ofp_table_features *tf, struct sl_ofp_error *err);

/*
 * Fast forwarding path experimenter messages (ofp_ffp.c; byte layouts in
 * docs/openflow.md sections 12.7 and 12.8).
 */

/** SL_OFPX_LL_SET: set or clear the low-latency mark on the flows a filter selects. */
struct sl_ofp_ll_set {
	uint8_t table_id;  /* OFPTT_ALL (255) only when not strict */
	uint8_t command;   /* SL_OFPX_LL_SET_OFF / _ON */
	uint16_t flags;    /* SL_OFPX_LL_STRICT */
	uint16_t priority; /* strict only */
	uint64_t cookie, cookie_mask;
	struct sl_match match;
};
enum { SL_OFPX_LL_SET_OFF = 0, SL_OFPX_LL_SET_ON = 1 };
#define SL_OFPX_LL_STRICT 0x1

/**
 * Decode SL_OFPX_LL_SET.
 *
 * @return 0, or -1 with: the sl_ofp_experimenter_decode errors;
 *         BAD_REQUEST/BAD_EXP_TYPE (another exp_type); BAD_REQUEST/BAD_LEN
 *         (shorter than 48 bytes, non-zero pad, match not ending the message);
 *         FLOW_MOD_FAILED/BAD_COMMAND (command > 1), /BAD_FLAGS (unknown
 *         flag), /BAD_TABLE_ID (table >= SL_TABLES_MAX, or OFPTT_ALL with
 *         strict); every sl_ofp_match_decode error.  Any thread.
 */
int sl_ofp_ll_set_decode(const void *msg, size_t len, struct sl_ofp_ll_set *ls,
			 struct sl_ofp_error *err);
/** Append an SL_OFPX_LL_SET message.  @return 0, -ENOMEM, -EMSGSIZE. */
int sl_ofp_ll_set_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_ll_set *ls);

/** SL_OFPX_FFP_CONFIG: FFP switch, cost-model bypass, auto-promotion policy. */
struct sl_ofp_ffp_config {
	uint8_t flags; /* SL_OFPX_FFP_* */
	uint16_t
		min_timeout; /* auto-promotion: entries without timeouts or with both >= this (s) */
	uint32_t min_pps;    /* auto-promotion: hits per second */
};
#define SL_OFPX_FFP_ON 0x1       /* the fast path runs */
#define SL_OFPX_FFP_AUTO 0x2     /* auto-promotion on (min_pps must be > 0) */
#define SL_OFPX_FFP_NO_MODEL 0x4 /* ignore the cost model: LUTs wherever eligible */

/**
 * Decode SL_OFPX_FFP_CONFIG (exactly 24 bytes).
 *
 * @return 0, or -1 with: the sl_ofp_experimenter_decode errors;
 *         BAD_REQUEST/BAD_EXP_TYPE; BAD_REQUEST/BAD_LEN (length != 24,
 *         non-zero pad); SWITCH_CONFIG_FAILED/BAD_FLAGS (unknown flag, or
 *         AUTO with min_pps 0).  Any thread.
 */
int sl_ofp_ffp_config_decode(const void *msg, size_t len, struct sl_ofp_ffp_config *fc,
			     struct sl_ofp_error *err);
/** Append an SL_OFPX_FFP_CONFIG message.  @return 0, -ENOMEM. */
int sl_ofp_ffp_config_encode(struct sl_ofp_buf *b, uint32_t xid,
			     const struct sl_ofp_ffp_config *fc);

#endif /* SL_OFP_H */
