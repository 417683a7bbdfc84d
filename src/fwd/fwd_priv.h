/* SPDX-License-Identifier: BSD-3-Clause */
/* fwd: structures shared by the component's files (not a public header). */
#ifndef SL_FWD_PRIV_H
#define SL_FWD_PRIV_H

#include "fwd.h"

/* A published configuration: immutable once live. */
struct fwd_conf {
	unsigned n_engines;         /* tableless engines enabled (0: openflow only) */
	uint8_t engine_of_tag[256]; /* tag -> index + 1 into eng[], 0 = none */
	struct {
		const struct sl_fwd_engine *e;
		unsigned char state[SL_FWD_STATE_MAX] SL_CACHE_ALIGNED;
	} eng[SL_FWD__MAX - 1];
	struct sl_fwd_params params; /* as given, for sl_fwd_get */
};

struct sl_fwd {
	struct fwd_conf *live; /* workers load it once per burst (acquire) */
	unsigned n_ports;
	sl_pipeline_sync_fn sync;
	void *sync_arg;
	uint64_t changes;
};

enum { FWD_DROP_NO_ROUTE, FWD_DROP_HOP_LIMIT, FWD_DROP_LOOP, FWD_DROP__MAX };

struct sl_fwd_ctx {
	struct sl_fwd *fwd;
	uint64_t packets[SL_FWD__MAX];
	uint64_t local[SL_FWD__MAX];
	uint64_t mode_drops[SL_FWD__MAX];
	uint64_t drops[FWD_DROP__MAX];
	uint64_t bursts_mixed;
} SL_CACHE_ALIGNED;

extern const struct sl_fwd_engine sl_fwd_hypercube_engine;
extern const struct sl_fwd_engine sl_fwd_keyflow_engine;

/* Write a message to err (if any) and return f. */
enum sl_fwd_fail fwd_fail(enum sl_fwd_fail f, char *err, size_t err_size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Parse a decimal or 0x-hex uint32: 0 or -EINVAL. */
int fwd_parse_u32(const char *s, uint32_t *v);

/*
 * Forwarding epilogue shared by the engines: refuse the ingress port, spend
 * one hop of the dst MAC's hops byte, or drop.
 */
static inline void
fwd_emit(struct sl_pkt *p, uint32_t port, uint32_t *out_port, uint8_t *drop)
{
	uint8_t *hops = &p->data[SL_FWD_HOPS_OFS];

	if (sl_unlikely(port == p->in_port)) {
		*out_port = SL_PORT_DROP;
		*drop = SL_DROP_FWD_LOOP;
	} else if (sl_unlikely(*hops == 0)) {
		*out_port = SL_PORT_DROP;
		*drop = SL_DROP_FWD_HOP_LIMIT;
	} else {
		(*hops)--;
		*out_port = port;
	}
}

/* The first 32 bits of the destination MAC (network order). */
static inline uint32_t
fwd_dst_value(const struct sl_pkt *p)
{
	const uint8_t *d = p->data;

	return (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
}

#endif /* SL_FWD_PRIV_H */
