/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Table kind names (control path).  Here, not in src/table, which creates
 * tables (and with them rte_acl), so that the flow syntax and sluicectl can
 * name kinds without linking DPDK.
 */
#include "flow.h"

#include <string.h>

static const char *const kind_names[SL_TABLE__KIND_MAX] = {"direct", "exact", "lpm", "mask"};

const char *
sl_table_kind_name(enum sl_table_kind k)
{
	if (k == SL_TABLE_STATE)
		return "state";
	return (unsigned)k < SL_TABLE__KIND_MAX ? kind_names[k] : "unknown";
}

int
sl_table_kind_parse(const char *name)
{
	for (unsigned i = 0; i < SL_TABLE__KIND_MAX; i++)
		if (strcmp(name, kind_names[i]) == 0)
			return (int)i;
	if (strcmp(name, "ternary") == 0)
		return SL_TABLE_MASK;
	if (strcmp(name, "linear") == 0)
		return SL_TABLE_DIRECT;
	if (strcmp(name, "em") == 0)
		return SL_TABLE_EXACT;
	if (strcmp(name, "state") == 0)
		return SL_TABLE_STATE;
	return -1;
}
