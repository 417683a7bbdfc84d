/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_flow: the spec helpers every producer of specs shares: the match
 * prerequisite check names the offending field by index (the flow syntax
 * points its error at that field's token), the action-set slot rule, and
 * the table kind names.  No DPDK: this links sl_flow alone.
 */
#include "flow.h"

#include <string.h>

#include "../core/sl_test.h"

/* Add an exactly matched field: @v is its value, big-endian in its last 8 bytes at most. */
static void
set_exact(struct sl_match *m, enum sl_field_id id, uint64_t v)
{
	struct sl_field f = {.id = (uint8_t)id};
	unsigned size = sl_field_size(&f);
	uint8_t value[SL_FIELD_SIZE_MAX], mask[SL_FIELD_SIZE_MAX];

	for (unsigned i = 0; i < size; i++) {
		unsigned byte = size - 1 - i; /* from the end: wider fields are zero on the left */
		value[i] = byte < 8 ? (uint8_t)(v >> (8 * byte)) : 0;
		mask[i] = 0xff;
	}
	CHECK(sl_match_set(m, &f, value, mask) == 0, "set field %d", id);
}

static void
test_prereq_check(void)
{
	struct sl_match m;
	char err[128];

	/* Nothing to require, and every prerequisite present. */
	memset(&m, 0, sizeof(m));
	CHECK(sl_match_prereq_check(&m, err, sizeof(err)) == -1, "empty match");
	set_exact(&m, SL_FIELD_ETH_TYPE, 0x0800);
	set_exact(&m, SL_FIELD_IP_PROTO, 6);
	set_exact(&m, SL_FIELD_TCP_DST, 80);
	CHECK(sl_match_prereq_check(&m, err, sizeof(err)) == -1, "tcp with ip, tcp");

	/* tcp_dst without ip_proto: field 1, after the dl_type it does have. */
	memset(&m, 0, sizeof(m));
	set_exact(&m, SL_FIELD_ETH_TYPE, 0x0800);
	set_exact(&m, SL_FIELD_TCP_DST, 80);
	err[0] = '\0';
	CHECK(sl_match_prereq_check(&m, err, sizeof(err)) == 1 &&
		      strstr(err, "tcp_dst requires nw_proto=6") != NULL,
	      "tcp_dst without nw_proto: '%s'", err);

	/* dl_vlan_pcp without a VLAN tag, as field 2 of 3: the index, not a name search. */
	memset(&m, 0, sizeof(m));
	set_exact(&m, SL_FIELD_ETH_SRC, 1);
	set_exact(&m, SL_FIELD_METADATA, 7);
	set_exact(&m, SL_FIELD_VLAN_PCP, 3);
	CHECK(sl_match_prereq_check(&m, err, sizeof(err)) == 2 &&
		      strstr(err, "requires a VLAN tag") != NULL,
	      "pcp without vlan: '%s'", err);
	set_exact(&m, SL_FIELD_VLAN_VID, 0x1000 | 5);
	CHECK(sl_match_prereq_check(&m, err, sizeof(err)) == -1, "pcp with vlan");

	/* The first failing field wins: nd_sll needs a solicitation (135), here 136. */
	memset(&m, 0, sizeof(m));
	set_exact(&m, SL_FIELD_ETH_TYPE, 0x86dd);
	set_exact(&m, SL_FIELD_IP_PROTO, 58);
	set_exact(&m, SL_FIELD_ICMPV6_TYPE, 136);
	set_exact(&m, SL_FIELD_IPV6_ND_SLL, 1);
	set_exact(&m, SL_FIELD_IPV6_ND_TARGET, 0);
	CHECK(sl_match_prereq_check(&m, err, sizeof(err)) == 3 &&
		      strstr(err, "nd_sll requires icmpv6_type=135") != NULL,
	      "nd_sll with an advertisement: '%s'", err);
}

static void
test_same_set_slot(void)
{
	struct sl_action out1 = {.type = SL_ACT_OUTPUT, .output = {.port = 1}};
	struct sl_action out2 = {.type = SL_ACT_OUTPUT, .output = {.port = 2}};
	struct sl_action grp = {.type = SL_ACT_GROUP, .group_id = 1};
	struct sl_action sf_dst = {.type = SL_ACT_SET_FIELD,
				   .set_field = {.f = {.id = SL_FIELD_ETH_DST}}};
	struct sl_action sf_dst2 = sf_dst;
	struct sl_action sf_src = {.type = SL_ACT_SET_FIELD,
				   .set_field = {.f = {.id = SL_FIELD_ETH_SRC}}};

	sf_dst2.set_field.value[5] = 9;
	CHECK(sl_action_same_set_slot(&out1, &out2), "two outputs share the output slot");
	CHECK(!sl_action_same_set_slot(&out1, &grp), "output and group: two slots");
	CHECK(sl_action_same_set_slot(&sf_dst, &sf_dst2), "set_field on one field: one slot");
	CHECK(!sl_action_same_set_slot(&sf_dst, &sf_src), "set_field on two fields: two slots");
	CHECK(!sl_action_same_set_slot(&sf_dst, &out1), "set_field and output: two slots");
}

static void
test_table_kinds(void)
{
	static const char *const names[] = {"direct", "exact", "lpm", "mask", "state"};

	for (unsigned i = 0; i < SL_ARRAY_SIZE(names); i++) {
		int k = sl_table_kind_parse(names[i]);
		CHECK(k >= 0 && strcmp(sl_table_kind_name((enum sl_table_kind)k), names[i]) == 0,
		      "kind '%s' round trip: %d", names[i], k);
	}
	CHECK(sl_table_kind_parse("ternary") == SL_TABLE_MASK, "ternary is mask");
	CHECK(sl_table_kind_parse("hash") == -1, "unknown kind");
}

int
main(void)
{
	test_prereq_check();
	test_same_set_slot();
	test_table_kinds();
	return sl_test_summary();
}
