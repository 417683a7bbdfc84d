/* SPDX-License-Identifier: BSD-3-Clause */
#include "core.h"

static const char *const drop_names[] = {
#define SL_DROP_NAME_(n, s) s,
	SL_FOREACH_DROP_REASON(SL_DROP_NAME_)
#undef SL_DROP_NAME_
};

const char *
sl_drop_reason_name(enum sl_drop_reason r)
{
	return (unsigned)r < SL_ARRAY_SIZE(drop_names) ? drop_names[r] : "unknown";
}
