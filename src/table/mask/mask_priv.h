/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mask: knobs and introspection of the mask table kind, for its tests
 * and benchmarks.  Everything else uses table.h.
 *
 * All functions take the implementation pointer (struct sl_table::impl of a
 * table created with kind SL_TABLE_MASK) and are control thread only.
 */
#ifndef SL_MASK_PRIV_H
#define SL_MASK_PRIV_H

#include "../table.h"

/** Policy of the rte_acl snapshot accelerator (see mask.c for the defaults). */
struct sl_mask_tuning {
	bool snap_enable;       /* false: tuple space search only */
	uint32_t snap_min_subs; /* build and use a snapshot from this many masks on */
	uint32_t delta_min;     /* rebuild when delta rules > max(delta_min, n / delta_div) */
	uint32_t delta_div;
	uint32_t dead_min; /* rebuild when deleted snapshot rules > max(dead_min, n / dead_div) */
	uint32_t dead_div;
	uint32_t soft_max;       /* also rebuild when delta masks or dead rules > soft_max ... */
	uint32_t soft_duty_pct;  /* ... if the time since the last build end is at least this
				 * percentage of that build's duration (100: <= 50 % of the
				 * control thread's time goes to builds); 0 = no soft trigger */
	bool generic_lookup;     /* use the generic TSS pass only, not the ones specialised
				 * for 1-4 mask words (tests compare the two; default false) */
	bool build_sync;         /* build snapshots in the calling thread, inside add/del/
				 * commit (tests, benches); default false: the builder thread */
	uint32_t snap_max_odd;   /* no snapshot when the rules have more distinct non-prefix
				 * 4-byte field masks than this (rte_acl's tries explode on
				 * them); 0 = no limit; at most 64 are told apart */
	uint64_t snap_max_bytes; /* rte_acl run-time memory bound (max_size); 0 = none */
};

/** What the table looks like right now. */
struct sl_mask_info {
	bool eal;              /* EAL was up at create time, so a snapshot is possible */
	bool snap;             /* lookups use the snapshot + delta */
	uint32_t n_rules;      /* live rules */
	uint32_t n_subs;       /* masks (subtables) of the authoritative structure */
	uint32_t snap_rules;   /* rules compiled into the snapshot */
	uint32_t snap_dead;    /* of which deleted since the build */
	uint32_t delta_rules;  /* rules added since the build */
	uint32_t delta_subs;   /* masks among them */
	uint32_t snap_fields;  /* rte_acl fields of the snapshot */
	uint64_t n_rebuilds;   /* successful snapshot builds */
	uint64_t n_build_fail; /* failed snapshot builds (table stayed correct) */
	uint64_t n_build_skip; /* builds not tried: masks unsuited to rte_acl (snap_max_odd) */
	bool build_pending;    /* a build is in flight on the builder thread */
};

/** Read the current tuning. */
void sl_mask_tuning_get(const void *impl, struct sl_mask_tuning *tu);

/**
 * Change the tuning; the snapshot policy is re-evaluated at once.
 *
 * @return 0, or -EINVAL for a zero divisor.
 */
int sl_mask_tuning_set(void *impl, const struct sl_mask_tuning *tu);

/**
 * Build a snapshot of the current rules now and switch lookups to it
 * (regardless of snap_min_subs).
 *
 * @return 0; -ENOTSUP without EAL or with the snapshot disabled; -ENOMEM or
 *         an rte_acl error (the table keeps working on what it had).
 */
int sl_mask_snapshot_build(void *impl);

/**
 * Fold pending changes into a new snapshot where the policy wants one and
 * it is out of date: queued for the builder thread (or built now with
 * tuning.build_sync).  sl_table_commit() calls it.
 *
 * @return 0, or the build's -errno with build_sync.
 */
int sl_mask_commit(void *impl);

/**
 * Install a snapshot the builder thread finished (sl_table_poll() calls it).
 * Only on a table no worker reads.
 *
 * @return 1 when one was installed, else 0.
 */
int sl_mask_poll(void *impl);

/** Fill @info. */
void sl_mask_info_get(const void *impl, struct sl_mask_info *info);

#endif /* SL_MASK_PRIV_H */
