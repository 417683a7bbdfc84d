/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: pipeline length (the pipeline-decomposition study's procedure).
 * The installed chain is the longest path of goto_table edges from table 0;
 * goto only moves forward, so one ascending pass over the tables finds it.
 */
#include "pipeline.h"
#include "pipeline_priv.h"

unsigned
sl_pipeline_chain_installed(const struct sl_pipeline *pl)
{
	unsigned reach[SL_TABLES_MAX + 1] = {
		0}; /* longest chain reaching a table, 0: unreachable */
	unsigned longest = 0;

	if (pl->tables[0].n_flows == 0)
		return 0;
	reach[0] = 1;
	for (unsigned t = 0; t < SL_TABLES_MAX; t++) {
		const struct pl_table *pt = &pl->tables[t];

		if (reach[t] == 0)
			continue;
		if (reach[t] > longest)
			longest = reach[t]; /* an empty table still costs its (missing) lookup */
		for (unsigned i = 0; i < pt->n_flows; i++) {
			int g = pt->flows[i]->goto_table;
			if (g > (int)t && g < SL_TABLES_MAX && reach[g] < reach[t] + 1)
				reach[g] = reach[t] + 1;
		}
	}
	return longest;
}

unsigned
sl_pipeline_chain_traversed(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs)
{
	unsigned m = 0;

	for (unsigned c = 0; c < n_ctxs; c++)
		if (ctxs[c]->chain_max > m)
			m = ctxs[c]->chain_max;
	return m;
}
