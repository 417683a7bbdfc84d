/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwd: forwarding modes (FlexForward).  Besides the OpenFlow pipeline, a
 * switch can forward "tableless": the destination MAC of a packet carries
 * an encoding that a small engine turns into an output port with a few
 * instructions and no table lookup.
 *
 * Engines (one file each, struct sl_fwd_engine):
 *   openflow   the pipeline (src/pipeline); always present, the default.
 *   hypercube  dst MAC bytes 0-3 = destination node address.  XOR with the
 *              switch's own address; equal -> local delivery; else output to
 *              the neighbour across the lowest differing bit.
 *   keyflow    dst MAC bytes 0-3 = route ID.  r = route ID mod the switch's
 *              local key; r == 0 -> local delivery; 1 <= r <= n_ports ->
 *              output to port r.
 *
 * The encoding.  dst MAC = [value: 4 bytes][tag: 1 byte][hops: 1 byte].  The
 * tag selects the engine (each enabled engine has its own tag), so several
 * engines can be enabled at once and a network can change mode without
 * loss: (1) every switch enables the new engine beside the old one, (2) the
 * edges start encoding for the new engine, (3) after the packets encoded
 * for the old engine have drained, switches disable it.  Packets whose tag
 * no enabled engine owns, and packets an engine delivers locally, go to the
 * OpenFlow pipeline (which restores the real MAC at the egress edge).
 * Every tableless hop decrements the hops byte and drops the packet at 0
 * (SL_DROP_FWD_HOP_LIMIT), so a wrong address or route ID can never make a
 * packet loop forever; output to the ingress port is refused
 * (SL_DROP_FWD_LOOP); an address or residue without a port is
 * SL_DROP_FWD_NO_ROUTE.
 *
 * Concurrency: one writer (the control thread) builds a complete new
 * configuration, publishes it with one pointer store and waits for a grace
 * period (the sync hook) before freeing the old one.  Workers load the
 * pointer once per burst, so every burst sees exactly one configuration.
 * Each worker has a struct sl_fwd_ctx with its counters.
 *
 * No DPDK here: the engines read frames through struct sl_pkt.
 */
#ifndef SL_FWD_H
#define SL_FWD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/core.h"
#include "../flow/flow.h"
#include "../pipeline/pipeline.h"

/* The parameters (struct sl_fwd_params, enum sl_fwd_fail) are specs: src/flow/flow.h. */

/** Most ports a switch may have for the tableless engines. */
#define SL_FWD_PORTS_MAX 255
/** Byte offsets in the destination MAC. */
#define SL_FWD_TAG_OFS 4
#define SL_FWD_HOPS_OFS 5

/** Out-port value meaning "deliver locally": handled by the OpenFlow pipeline. */
#define SL_FWD_LOCAL 0xfffffff0u

/**
 * One forwarding engine.  A new mode is one file defining one of these
 * and a line in fwd.c's engine table.
 */
struct sl_fwd_engine {
	const char *name;
	enum sl_fwd_mode mode;
	uint8_t default_tag;
	/*
	 * Check @p against a switch with @n_ports ports and precompute @state
	 * (at most SL_FWD_STATE_MAX bytes).  Returns 0 or an enum sl_fwd_fail
	 * with a message naming the offending value in @err.  Control thread.
	 */
	enum sl_fwd_fail (*init)(void *state, const struct sl_fwd_mode_params *p, unsigned n_ports,
				 char *err, size_t err_size);
	/*
	 * Forward the packets at @lanes[0..n): set out_ports[i] to a port,
	 * SL_FWD_LOCAL or SL_PORT_DROP (then drops[i] = the reason).  The tag
	 * is checked and the frame is at least 14 bytes.  Any worker.
	 */
	void (*process_burst)(const void *state, struct sl_pkt *pkts, const uint8_t lanes[],
			      unsigned n, uint32_t out_ports[], uint8_t drops[]);
	/* Parse one key=value of this mode's text form; 0 or -EINVAL.  Control thread. */
	int (*parse_kv)(struct sl_fwd_mode_params *p, const char *key, const char *value);
	/* The keys the text form must give (NULL-terminated), e.g. hypercube's "addr". */
	const char *const *required;
	/* Append this mode's key=value list (no mode name, no tag).  Control thread. */
	int (*format)(const struct sl_fwd_mode_params *p, char *buf, size_t size);
};

#define SL_FWD_STATE_MAX 256

/** The engines, indexed by enum sl_fwd_mode (openflow has no process_burst). */
const struct sl_fwd_engine *sl_fwd_engine_get(enum sl_fwd_mode mode);
/** Engine by name; NULL when unknown.  Thread-safe. */
const struct sl_fwd_engine *sl_fwd_engine_find(const char *name);

struct sl_fwd;
struct sl_fwd_ctx;

/** Counters, summed over workers (sl_fwd_stats_read). */
struct sl_fwd_stats {
	uint64_t packets[SL_FWD__MAX]; /* packets each engine handled (openflow: the pipeline) */
	uint64_t local[SL_FWD__MAX];   /* delivered locally (to the pipeline) by each engine */
	uint64_t drops[SL_FWD__MAX];   /* dropped by each engine */
	uint64_t bursts_mixed;         /* bursts split between engines and the pipeline */
	uint64_t changes;              /* configurations published */
};

/**
 * Create the forwarding state of a switch with @n_ports ports, in
 * openflow mode.  @return 0, -ENOMEM, -EINVAL (n_ports 0 or above
 * SL_FWD_PORTS_MAX).  Init only.
 */
int sl_fwd_create(unsigned n_ports, struct sl_fwd **out);
/** Free it (NULL-safe).  After every worker stopped. */
void sl_fwd_destroy(struct sl_fwd *f);
/** The grace-period hook (like sl_pipeline_set_sync).  Init only. */
void sl_fwd_set_sync(struct sl_fwd *f, sl_pipeline_sync_fn fn, void *arg);

/**
 * Check @p for this switch.  @return 0 or the failure, with a message
 * naming the offending value in @err.  Control thread.
 */
enum sl_fwd_fail sl_fwd_params_check(const struct sl_fwd *f, const struct sl_fwd_params *p,
				     char *err, size_t err_size);

/**
 * Switch to @p: checks it, publishes it in one pointer store and waits for
 * a grace period.  On return no worker uses the previous configuration.
 *
 * @return 0; -EINVAL when @p is refused (*fail and @err say why; the old
 *         configuration stays); -ENOMEM.  Control thread.
 */
int sl_fwd_set(struct sl_fwd *f, const struct sl_fwd_params *p, enum sl_fwd_fail *fail, char *err,
	       size_t err_size);

/** Copy the current configuration.  Control thread. */
void sl_fwd_get(const struct sl_fwd *f, struct sl_fwd_params *p);

/**
 * Parse the text form: "openflow", or one or more "MODE[:K=V,...]"
 * separated by ';', e.g. "hypercube:addr=5,nbr=4@1,nbr=7@2,nbr=1@3,tag=0xf1;keyflow:key=13".
 * Keys: every mode takes tag=N (0..255, default per mode); hypercube:
 * addr=N, nbr=ADDR@PORT (repeatable); keyflow: key=N.  Numbers are
 * decimal or 0x hex.  Only syntax is checked here (sl_fwd_params_check
 * does the rest).
 *
 * @return 0, or -EINVAL with a message naming the offending text in @err.
 *         Thread-safe.
 */
int sl_fwd_params_parse(const char *text, struct sl_fwd_params *p, char *err, size_t err_size);
/** Format @p in the text form sl_fwd_params_parse reads.  @return length, or -ENOSPC. */
int sl_fwd_params_format(const struct sl_fwd_params *p, char *buf, size_t size);

/** A worker's context: counters.  @return NULL on -ENOMEM.  Init only. */
struct sl_fwd_ctx *sl_fwd_ctx_create(struct sl_fwd *f);
/** The forwarding state a context reads (for the control thread holding only a worker). */
struct sl_fwd *sl_fwd_ctx_fwd(const struct sl_fwd_ctx *c);
/** Free a context (NULL-safe). */
void sl_fwd_ctx_destroy(struct sl_fwd_ctx *c);
/** Sum counters over worker contexts.  Any thread. */
void sl_fwd_stats_read(const struct sl_fwd_ctx *const ctxs[], unsigned n, struct sl_fwd_stats *st);
/** Add the drops of @c (by enum sl_drop_reason) to @drops.  NULL-safe.  Any thread. */
void sl_fwd_drop_stats(const struct sl_fwd_ctx *c, uint64_t drops[SL_DROP__MAX]);

/**
 * Forward a burst with the current configuration: tagged packets go to
 * their engine; the others, and packets an engine delivers locally, go
 * through sl_pipeline_run_burst (same arguments and results as there).
 * With @c NULL, or no tableless engine enabled, this is exactly
 * sl_pipeline_run_burst.  Engine drops are counted in @c (reasons
 * SL_DROP_FWD_*), pipeline drops in @ctx.  Any worker.
 */
unsigned sl_fwd_run_burst(struct sl_fwd_ctx *c, const struct sl_pipeline *pl,
			  struct sl_pipeline_ctx *ctx, struct sl_pkt *pkts, unsigned n,
			  const struct sl_pipeline_hooks *hooks, uint32_t out_ports[],
			  uint8_t drops[]);

#endif /* SL_FWD_H */
