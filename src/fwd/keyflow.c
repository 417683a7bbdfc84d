/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * KeyFlow forwarding: dst MAC bytes 0-3 carry a route ID R built by the
 * controller with the Chinese remainder theorem so that R mod key(s) is the
 * output port at every switch s of the path.  Residue 0 delivers locally
 * (the egress switch's pipeline restores the real MAC), 1..n_ports is an
 * output port, anything larger has no port (fwd-no-route).  The key must
 * exceed the port count so that every port is reachable.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fwd_priv.h"

struct kf_state {
	uint32_t key;
	uint32_t n_ports;
};
static_assert(sizeof(struct kf_state) <= SL_FWD_STATE_MAX, "keyflow state too big");

static enum sl_fwd_fail
kf_init(void *state, const struct sl_fwd_mode_params *p, unsigned n_ports, char *err,
	size_t err_size)
{
	struct kf_state *s = state;

	if (p->kf.key <= n_ports)
		return fwd_fail(SL_FWD_FAIL_BAD_PARAM, err, err_size,
				"keyflow: key %u must be greater than the port count %u", p->kf.key,
				n_ports);
	s->key = p->kf.key;
	s->n_ports = n_ports;
	return SL_FWD_FAIL_NONE;
}

static void
kf_process_burst(const void *state, struct sl_pkt *pkts, const uint8_t lanes[], unsigned n,
		 uint32_t out_ports[], uint8_t drops[])
{
	const struct kf_state *s = state;

	for (unsigned k = 0; k < n; k++) {
		unsigned i = lanes[k];
		uint32_t r = fwd_dst_value(&pkts[i]) % s->key;

		if (r == 0) {
			out_ports[i] = SL_FWD_LOCAL;
		} else if (sl_unlikely(r > s->n_ports)) {
			out_ports[i] = SL_PORT_DROP;
			drops[i] = SL_DROP_FWD_NO_ROUTE;
		} else {
			fwd_emit(&pkts[i], r, &out_ports[i], &drops[i]);
		}
	}
}

static int
kf_parse_kv(struct sl_fwd_mode_params *p, const char *key, const char *value)
{
	if (strcmp(key, "key") == 0)
		return fwd_parse_u32(value, &p->kf.key);
	return -EINVAL;
}

static int
kf_format(const struct sl_fwd_mode_params *p, char *buf, size_t size)
{
	int n = snprintf(buf, size, ",key=%u", p->kf.key);

	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

const struct sl_fwd_engine sl_fwd_keyflow_engine = {
	.name = "keyflow",
	.mode = SL_FWD_KEYFLOW,
	.default_tag = 0xf2,
	.init = kf_init,
	.process_burst = kf_process_burst,
	.parse_kv = kf_parse_kv,
	.required = (const char *const[]){"key", NULL},
	.format = kf_format,
};
