/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hypercube forwarding: dst MAC bytes 0-3 are the destination node's
 * address.  x = dst ^ own; x == 0 delivers locally, else the packet goes to
 * the neighbour across the lowest set bit of x (one XOR, one count-trailing-
 * zeros, one array load per packet).  Each hop clears one differing bit, so
 * with consistent addresses a path is at most popcount(x) hops.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fwd_priv.h"

struct hc_state {
	uint32_t addr;
	uint32_t bit_port[32]; /* port towards the neighbour across bit b; 0 = none */
};
static_assert(sizeof(struct hc_state) <= SL_FWD_STATE_MAX, "hypercube state too big");

static enum sl_fwd_fail
hc_init(void *state, const struct sl_fwd_mode_params *p, unsigned n_ports, char *err,
	size_t err_size)
{
	const struct sl_fwd_hypercube *hc = &p->hc;
	struct hc_state *s = state;
	bool port_used[SL_FWD_PORTS_MAX + 1] = {false};

	memset(s, 0, sizeof(*s));
	s->addr = hc->addr;
	if (hc->n_neigh == 0)
		return fwd_fail(SL_FWD_FAIL_BAD_PARAM, err, err_size,
				"hypercube: no neighbours (give nbr=ADDR@PORT for each)");
	if (hc->n_neigh > SL_FWD_NEIGH_MAX)
		return fwd_fail(SL_FWD_FAIL_BAD_PARAM, err, err_size,
				"hypercube: %u neighbours, at most %u", hc->n_neigh,
				SL_FWD_NEIGH_MAX);
	for (unsigned i = 0; i < hc->n_neigh; i++) {
		uint32_t a = hc->neigh[i].addr, port = hc->neigh[i].port, x = a ^ hc->addr;
		unsigned b;

		if (x == 0 || (x & (x - 1)) != 0)
			return fwd_fail(SL_FWD_FAIL_BAD_PARAM, err, err_size,
					"hypercube: neighbour 0x%x is not one bit away from 0x%x",
					a, hc->addr);
		b = (unsigned)__builtin_ctz(x);
		if (s->bit_port[b] != 0)
			return fwd_fail(SL_FWD_FAIL_DUP_NEIGHBOR, err, err_size,
					"hypercube: neighbour 0x%x listed twice", a);
		if (port == 0 || port > n_ports)
			return fwd_fail(
				SL_FWD_FAIL_BAD_PORT, err, err_size,
				"hypercube: neighbour 0x%x on port %u: the switch has ports 1..%u",
				a, port, n_ports);
		if (port_used[port])
			return fwd_fail(SL_FWD_FAIL_BAD_PORT, err, err_size,
					"hypercube: port %u given for two neighbours", port);
		port_used[port] = true;
		s->bit_port[b] = port;
	}
	return SL_FWD_FAIL_NONE;
}

static void
hc_process_burst(const void *state, struct sl_pkt *pkts, const uint8_t lanes[], unsigned n,
		 uint32_t out_ports[], uint8_t drops[])
{
	const struct hc_state *s = state;

	for (unsigned k = 0; k < n; k++) {
		unsigned i = lanes[k];
		uint32_t x = fwd_dst_value(&pkts[i]) ^ s->addr, port;

		if (x == 0) {
			out_ports[i] = SL_FWD_LOCAL;
			continue;
		}
		port = s->bit_port[__builtin_ctz(x)];
		if (sl_unlikely(port == 0)) {
			out_ports[i] = SL_PORT_DROP;
			drops[i] = SL_DROP_FWD_NO_ROUTE;
			continue;
		}
		fwd_emit(&pkts[i], port, &out_ports[i], &drops[i]);
	}
}

static int
hc_parse_kv(struct sl_fwd_mode_params *p, const char *key, const char *value)
{
	struct sl_fwd_hypercube *hc = &p->hc;

	if (strcmp(key, "addr") == 0)
		return fwd_parse_u32(value, &hc->addr);
	if (strcmp(key, "nbr") == 0) {
		char a[32];
		const char *at = strchr(value, '@');

		if (at == NULL || (size_t)(at - value) >= sizeof(a) ||
		    hc->n_neigh >= SL_FWD_NEIGH_MAX)
			return -EINVAL;
		memcpy(a, value, (size_t)(at - value));
		a[at - value] = '\0';
		if (fwd_parse_u32(a, &hc->neigh[hc->n_neigh].addr) < 0 ||
		    fwd_parse_u32(at + 1, &hc->neigh[hc->n_neigh].port) < 0)
			return -EINVAL;
		hc->n_neigh++;
		return 0;
	}
	return -EINVAL;
}

static int
hc_format(const struct sl_fwd_mode_params *p, char *buf, size_t size)
{
	size_t len = 0;
	int n = snprintf(buf, size, ",addr=0x%x", p->hc.addr);

	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	len = (size_t)n;
	for (unsigned i = 0; i < p->hc.n_neigh; i++) {
		n = snprintf(buf + len, size - len, ",nbr=0x%x@%u", p->hc.neigh[i].addr,
			     p->hc.neigh[i].port);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOSPC;
		len += (size_t)n;
	}
	return (int)len;
}

const struct sl_fwd_engine sl_fwd_hypercube_engine = {
	.name = "hypercube",
	.mode = SL_FWD_HYPERCUBE,
	.default_tag = 0xf1,
	.init = hc_init,
	.process_burst = hc_process_burst,
	.parse_kv = hc_parse_kv,
	.required = (const char *const[]){"addr", NULL}, /* and a nbr: hc_init */
	.format = hc_format,
};
