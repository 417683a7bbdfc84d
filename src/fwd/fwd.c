/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Forwarding modes: the published configuration and the burst dispatcher
 * (fast path, sl_fwd_run_burst), and the checks (control path).  The engine
 * table and the text form are in fwd_params.c, which sluicectl links
 * without the datapath.
 */
#include "fwd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fwd_priv.h"

/*
 * ============================================================================
 * Configuration (control thread)
 * ============================================================================
 */

/* Build (and check) a configuration; NULL-free: *c is caller storage. */
static enum sl_fwd_fail
conf_build(struct fwd_conf *c, const struct sl_fwd_params *p, unsigned n_ports, char *err,
	   size_t err_size)
{
	bool seen[SL_FWD__MAX] = {false};

	memset(c, 0, sizeof(*c));
	if (p->n_modes > SL_ARRAY_SIZE(p->modes))
		return fwd_fail(SL_FWD_FAIL_BAD_PARAM, err, err_size, "%u modes: at most %zu",
				p->n_modes, SL_ARRAY_SIZE(p->modes));
	c->params = *p;
	c->params.n_modes = 0;
	for (unsigned i = 0; i < p->n_modes; i++) {
		const struct sl_fwd_mode_params *mp = &p->modes[i];
		const struct sl_fwd_engine *e = sl_fwd_engine_get(mp->mode);
		enum sl_fwd_fail f;

		if (e == NULL)
			return fwd_fail(SL_FWD_FAIL_UNKNOWN_MODE, err, err_size,
					"unknown forwarding mode %u", (unsigned)mp->mode);
		if (seen[mp->mode])
			return fwd_fail(SL_FWD_FAIL_DUP_MODE, err, err_size, "mode %s given twice",
					e->name);
		seen[mp->mode] = true;
		if (e->process_burst == NULL)
			continue; /* openflow: the pipeline is always there */
		if (c->engine_of_tag[mp->tag] != 0)
			return fwd_fail(SL_FWD_FAIL_DUP_TAG, err, err_size,
					"tag 0x%02x used by %s and %s", mp->tag,
					c->eng[c->engine_of_tag[mp->tag] - 1].e->name, e->name);
		f = e->init(c->eng[c->n_engines].state, mp, n_ports, err, err_size);
		if (f != SL_FWD_FAIL_NONE)
			return f;
		c->eng[c->n_engines].e = e;
		c->n_engines++;
		c->engine_of_tag[mp->tag] = (uint8_t)c->n_engines;
		c->params.modes[c->params.n_modes++] = *mp;
	}
	return SL_FWD_FAIL_NONE;
}

int
sl_fwd_create(unsigned n_ports, struct sl_fwd **out)
{
	struct sl_fwd *f;

	*out = NULL;
	if (n_ports == 0 || n_ports > SL_FWD_PORTS_MAX)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	f->n_ports = n_ports;
	f->live = calloc(1, sizeof(*f->live)); /* zeroed: no engine = openflow */
	if (f->live == NULL) {
		free(f);
		return -ENOMEM;
	}
	*out = f;
	return 0;
}

void
sl_fwd_destroy(struct sl_fwd *f)
{
	if (f == NULL)
		return;
	free(f->live);
	free(f);
}

void
sl_fwd_set_sync(struct sl_fwd *f, sl_pipeline_sync_fn fn, void *arg)
{
	f->sync = fn;
	f->sync_arg = arg;
}

enum sl_fwd_fail
sl_fwd_params_check(const struct sl_fwd *f, const struct sl_fwd_params *p, char *err,
		    size_t err_size)
{
	struct fwd_conf *c = malloc(sizeof(*c));
	enum sl_fwd_fail r;

	if (c == NULL)
		return fwd_fail(SL_FWD_FAIL_BAD_PARAM, err, err_size, "out of memory");
	r = conf_build(c, p, f->n_ports, err, err_size);
	free(c);
	return r;
}

int
sl_fwd_set(struct sl_fwd *f, const struct sl_fwd_params *p, enum sl_fwd_fail *fail, char *err,
	   size_t err_size)
{
	struct fwd_conf *c = malloc(sizeof(*c)), *old;
	enum sl_fwd_fail r;

	if (fail != NULL)
		*fail = SL_FWD_FAIL_NONE;
	if (c == NULL)
		return -ENOMEM;
	r = conf_build(c, p, f->n_ports, err, err_size);
	if (r != SL_FWD_FAIL_NONE) {
		if (fail != NULL)
			*fail = r;
		free(c);
		return -EINVAL;
	}
	/* Release: the workers that load the pointer see a complete configuration. */
	old = f->live;
	__atomic_store_n(&f->live, c, __ATOMIC_RELEASE);
	if (f->sync != NULL)
		f->sync(f->sync_arg);
	free(old);
	f->changes++;
	return 0;
}

void
sl_fwd_get(const struct sl_fwd *f, struct sl_fwd_params *p)
{
	*p = f->live->params;
}

/*
 * ============================================================================
 * Worker contexts and counters
 * ============================================================================
 */

struct sl_fwd_ctx *
sl_fwd_ctx_create(struct sl_fwd *f)
{
	struct sl_fwd_ctx *c;

	if (posix_memalign((void **)&c, 64, sizeof(*c)) != 0)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->fwd = f;
	return c;
}

struct sl_fwd *
sl_fwd_ctx_fwd(const struct sl_fwd_ctx *c)
{
	return c->fwd;
}

void
sl_fwd_ctx_destroy(struct sl_fwd_ctx *c)
{
	free(c);
}

void
sl_fwd_stats_read(const struct sl_fwd_ctx *const ctxs[], unsigned n, struct sl_fwd_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned k = 0; k < n; k++) {
		const struct sl_fwd_ctx *c = ctxs[k];

		if (c == NULL)
			continue;
		for (unsigned m = 0; m < SL_FWD__MAX; m++) {
			st->packets[m] += c->packets[m];
			st->local[m] += c->local[m];
			st->drops[m] += c->mode_drops[m];
		}
		st->bursts_mixed += c->bursts_mixed;
		if (k == 0 && c->fwd != NULL)
			st->changes = c->fwd->changes;
	}
}

void
sl_fwd_drop_stats(const struct sl_fwd_ctx *c, uint64_t drops[SL_DROP__MAX])
{
	if (c == NULL)
		return;
	drops[SL_DROP_FWD_NO_ROUTE] += c->drops[FWD_DROP_NO_ROUTE];
	drops[SL_DROP_FWD_HOP_LIMIT] += c->drops[FWD_DROP_HOP_LIMIT];
	drops[SL_DROP_FWD_LOOP] += c->drops[FWD_DROP_LOOP];
}

/*
 * ============================================================================
 * Fast path
 * ============================================================================
 */

static inline void
count_drop(struct sl_fwd_ctx *c, unsigned mode, uint8_t reason)
{
	c->mode_drops[mode]++;
	switch (reason) {
	case SL_DROP_FWD_NO_ROUTE:
		c->drops[FWD_DROP_NO_ROUTE]++;
		break;
	case SL_DROP_FWD_HOP_LIMIT:
		c->drops[FWD_DROP_HOP_LIMIT]++;
		break;
	default:
		c->drops[FWD_DROP_LOOP]++;
		break;
	}
}

unsigned
sl_fwd_run_burst(struct sl_fwd_ctx *c, const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx,
		 struct sl_pkt *pkts, unsigned n, const struct sl_pipeline_hooks *hooks,
		 uint32_t out_ports[], uint8_t drops[])
{
	uint8_t lanes[SL_FWD__MAX][SL_BURST_MAX];
	unsigned n_lanes[SL_FWD__MAX] = {0};
	uint64_t pl_mask = 0;
	unsigned n_pl, n_out = 0;
	const struct fwd_conf *conf;

	if (c == NULL)
		return sl_pipeline_run_burst(pl, ctx, pkts, n, hooks, out_ports, drops);
	/* One load per burst: the whole burst sees one configuration. */
	conf = __atomic_load_n(&c->fwd->live, __ATOMIC_ACQUIRE);
	if (conf->n_engines == 0) {
		c->packets[SL_FWD_OPENFLOW] += n;
		return sl_pipeline_run_burst(pl, ctx, pkts, n, hooks, out_ports, drops);
	}

	/* Stage 1: classify by the tag byte of the destination MAC. */
	for (unsigned i = 0; i < n; i++) {
		unsigned e =
			pkts[i].len >= 14 ? conf->engine_of_tag[pkts[i].data[SL_FWD_TAG_OFS]] : 0;
		if (e == 0)
			pl_mask |= UINT64_C(1) << i;
		else
			lanes[e - 1][n_lanes[e - 1]++] = (uint8_t)i;
	}

	/* Stage 2: each engine over its lanes; local deliveries join the pipeline's lanes. */
	for (unsigned e = 0; e < conf->n_engines; e++) {
		unsigned mode = conf->eng[e].e->mode;

		if (n_lanes[e] == 0)
			continue;
		conf->eng[e].e->process_burst(conf->eng[e].state, pkts, lanes[e], n_lanes[e],
					      out_ports, drops);
		c->packets[mode] += n_lanes[e];
		for (unsigned k = 0; k < n_lanes[e]; k++) {
			unsigned i = lanes[e][k];

			if (out_ports[i] == SL_FWD_LOCAL) {
				c->local[mode]++;
				pl_mask |= UINT64_C(1) << i;
			} else if (out_ports[i] == SL_PORT_DROP) {
				count_drop(c, mode, drops[i]);
			} else {
				n_out++;
			}
		}
	}
	/*
	 * Low-latency flags (FFP) are the pipeline's: a packet a tableless engine
	 * forwards hit no entry, so it carries none.
	 */
	if (pl_mask == 0) {
		sl_pipeline_ll_lanes_set(ctx, 0);
		return n_out;
	}

	/* Stage 3: the pipeline over the rest, in place when it is the whole burst. */
	n_pl = (unsigned)__builtin_popcountll(pl_mask);
	c->packets[SL_FWD_OPENFLOW] += n_pl;
	if (n_pl == n)
		return sl_pipeline_run_burst(pl, ctx, pkts, n, hooks, out_ports, drops);
	c->bursts_mixed++;
	{
		struct sl_pkt sub[SL_BURST_MAX];
		uint32_t sub_out[SL_BURST_MAX];
		uint8_t sub_drops[SL_BURST_MAX];
		uint8_t pl_lanes[SL_BURST_MAX];
		unsigned k = 0, i;

		/* Ascending lane order, so pl_lanes[k] >= k (used below). */
		SL_FOR_EACH_LANE (i, pl_mask) {
			pl_lanes[k] = (uint8_t)i;
			sub[k++] = pkts[i];
		}
		n_out += sl_pipeline_run_burst(pl, ctx, sub, n_pl, hooks, sub_out, sub_drops);
		uint64_t sub_ll = sl_pipeline_ll_lanes(ctx), ll = 0;
		/*
		 * Scatter back, highest lane first.  The caller reads a packet-in's
		 * details with sl_pipeline_pin(ctx, i) for lane i of the whole
		 * burst; the pipeline wrote them for sub-lane k <= i, so move them.
		 * Going down, slot pl_lanes[k] >= k is never a slot still to be read.
		 */
		for (k = n_pl; k-- > 0;) {
			i = pl_lanes[k];
			pkts[i] = sub[k];
			out_ports[i] = sub_out[k];
			drops[i] = sub_drops[k];
			ll |= (sub_ll >> k & 1) << i;
			if (sub_out[k] == SL_PORT_CONTROLLER && i != k)
				*(struct sl_pin *)sl_pipeline_pin(ctx, i) =
					*sl_pipeline_pin(ctx, k);
		}
		sl_pipeline_ll_lanes_set(ctx, ll);
	}
	return n_out;
}
