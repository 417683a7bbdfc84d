/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The datapath loop (fast path), plus its init/fini and stats readers.
 *
 * Per burst: rx -> packet contexts -> sl_pipeline_run_burst -> group by
 * output port -> tx_burst per port.  Dropped mbufs are freed in one bulk
 * call per burst.
 */
#include "worker_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_pause.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "../capture/capture.h"

/* Packet_out descriptors in flight. */
#define POUT_SLOTS 256
/* Packet_outs a loop round takes, so they cannot starve rx. */
#define POUT_PER_ROUND 16

/* How many packets ahead the context-fill loop prefetches frame data. */
#define PREFETCH_OFFSET 4
/* Busy rounds a worker may keep deferred credits (and skip quiescent states). */
#define CREDIT_ROUNDS 256

int
sl_worker_init(struct sl_worker *w, struct sl_pipeline *pl, struct sl_port *ports,
	       struct rte_mempool *mp, uint16_t burst)
{
	memset(w, 0, sizeof(*w));
	w->pin_wake_fd = -1;
	w->pl = pl;
	w->ports = ports;
	w->mp = mp;
	w->burst = burst == 0 ? SL_BURST_DEFAULT : SL_MIN(burst, SL_BURST_MAX);
	w->lat_mult = sl_lat_ns_mult(rte_get_tsc_hz());
	w->lead = w;
	w->group = w;
	w->n_group = 1;
	w->rx_tsc_off = -1;
	memset(w->port_idx, 0xff, sizeof(w->port_idx));
	/* The ports open now; LOCAL joins when its link comes up (sl_worker_port_attach). */
	for (unsigned s = 0; s < SL_PORT_SLOTS; s++) {
		if (ports[s].of_no == 0)
			continue;
		if (ports[s].dpdk_id < sizeof(w->port_idx))
			w->port_idx[ports[s].dpdk_id] = (uint8_t)s;
		if (s != SL_PORT_SLOT_LOCAL)
			w->pset_buf[0].slots[w->pset_buf[0].n++] = (uint8_t)s;
	}
	w->pset_pub = &w->pset_buf[0];
	w->pset = w->pset_pub;
	w->ctx = sl_pipeline_ctx_create(pl);
	/* The per-packet low-latency flag: a one-byte mbuf dynfield. */
	static const struct rte_mbuf_dynfield ll_desc = {
		.name = SL_WORKER_LL_DYNFIELD, .size = 1, .align = 1};
	w->ll_dynfield = rte_mbuf_dynfield_register(&ll_desc);
	return w->ctx != NULL ? 0 : -ENOMEM;
}

/* Worker i of @ws[0..n-1] joins the group of worker 0. */
static int
group_init(struct sl_worker *ws, unsigned n, struct sl_pipeline *pl, struct sl_port *ports,
	   struct rte_mempool *mp, uint16_t burst)
{
	for (unsigned i = 0; i < n; i++) {
		if (sl_worker_init(&ws[i], pl, ports, mp, burst) < 0) {
			for (unsigned j = 0; j <= i; j++)
				sl_worker_fini(&ws[j]);
			return -ENOMEM;
		}
		ws[i].lead = &ws[0];
		ws[i].group = ws;
		ws[i].n_group = n;
		ws[i].id = i;
		ws[i].queue = (uint16_t)i;
		ws[i].pset = ws[0].pset_pub; /* every worker reads the lead's set */
	}
	return 0;
}

int
sl_worker_group_create(unsigned n, struct sl_pipeline *pl, struct sl_port *ports,
		       struct rte_mempool *mp, uint16_t burst, unsigned pin_queue,
		       struct sl_worker **lead)
{
	/* Cache-line aligned: each worker's counters stay on lines of their own. */
	struct sl_worker *ws = aligned_alloc(64, RTE_ALIGN(sizeof(*ws) * n, 64));

	*lead = NULL;
	if (ws == NULL)
		return -ENOMEM;
	if (group_init(ws, n, pl, ports, mp, burst) < 0) {
		free(ws);
		return -ENOMEM;
	}
	*lead = ws;
	if (sl_worker_ctrl_init(ws, pin_queue) < 0) {
		sl_worker_group_destroy(ws);
		*lead = NULL;
		return -ENOMEM;
	}
	return 0;
}

void
sl_worker_group_destroy(struct sl_worker *lead)
{
	if (lead == NULL)
		return;
	if (lead->io != NULL) {
		sl_worker_io_fini(lead->io);
		free(lead->io);
	}
	for (unsigned i = 0; i < lead->n_group; i++) {
		sl_fwd_ctx_destroy(lead->group[i].fwd);
		sl_worker_fini(&lead->group[i]);
	}
	free(lead->group);
}

unsigned
sl_worker_group_size(const struct sl_worker *w)
{
	return w->n_group;
}

struct sl_worker *
sl_worker_group_member(struct sl_worker *w, unsigned i)
{
	return i < w->n_group ? &w->lead->group[i] : NULL;
}

int
sl_worker_fwd_attach(struct sl_worker *w, struct sl_fwd *fwd)
{
	struct sl_worker *l = w->lead;

	for (unsigned i = 0; i < l->n_group; i++)
		if ((l->group[i].fwd = sl_fwd_ctx_create(fwd)) == NULL)
			return -ENOMEM; /* the contexts made so far go with the group */
	return 0;
}

struct sl_fwd *
sl_worker_fwd(const struct sl_worker *w)
{
	return w->fwd != NULL ? sl_fwd_ctx_fwd(w->fwd) : NULL;
}

unsigned
sl_worker_fwd_ctxs(const struct sl_worker *w, const struct sl_fwd_ctx *ctxs[], unsigned max)
{
	const struct sl_worker *l = w->lead;
	unsigned n = SL_MIN(l->n_group, max);

	for (unsigned i = 0; i < n; i++)
		ctxs[i] = l->group[i].fwd;
	return n;
}

void
sl_worker_idle_set(struct sl_worker *w, unsigned max_us)
{
	struct sl_worker *l = w->lead;

	for (unsigned i = 0; i < l->n_group; i++)
		sl_idle_init(&l->group[i].idle, max_us);
}

bool
sl_worker_idle_longest(const struct sl_worker *w)
{
	return w->idle.max_us != 0 && w->idle.next_us >= w->idle.max_us;
}

uint16_t
sl_worker_burst(const struct sl_worker *w)
{
	return w->burst;
}

void
sl_worker_stop(struct sl_worker *w)
{
	w->stop = true;
}

void
sl_worker_controller_up_set(struct sl_worker *w, bool up)
{
	w->lead->controller_up = up;
}

unsigned
sl_worker_pout_pending(const struct sl_worker *w)
{
	const struct sl_worker *l = w->lead;

	return l->pout_ring != NULL ? rte_ring_count(l->pout_ring) : 0;
}

/* Every worker of the group mirrors its bursts (the capture's ring is multi-producer). */
void
sl_worker_capture_set(struct sl_worker *w, struct sl_capture *c)
{
	struct sl_worker *l = w->lead;
	struct sl_capture *old = l->capture;
	bool running = false;

	for (unsigned i = 0; i < l->n_group; i++) {
		__atomic_store_n(&l->group[i].capture, c, __ATOMIC_RELEASE);
		running |= l->group[i].running;
	}
	if (old != NULL && running && l->qs != NULL)
		sl_worker_sync(l);
}

/* The same publication for the live trace recorder. */
void
sl_worker_trace_set(struct sl_worker *w, struct sl_trace_live *lt)
{
	struct sl_worker *l = w->lead;
	struct sl_trace_live *old = l->trace;
	bool running = false;

	for (unsigned i = 0; i < l->n_group; i++) {
		__atomic_store_n(&l->group[i].trace, lt, __ATOMIC_RELEASE);
		running |= l->group[i].running;
	}
	if (old != NULL && running && l->qs != NULL)
		sl_worker_sync(l);
}

void
sl_worker_fini(struct sl_worker *w)
{
	struct rte_mbuf *m;
	void *d;

	sl_pipeline_ctx_destroy(w->ctx);
	w->ctx = NULL;
	if (w->pin_ring != NULL)
		while (rte_ring_dequeue(w->pin_ring, (void **)&m) == 0)
			rte_pktmbuf_free(m);
	if (w->pout_ring != NULL)
		while (rte_ring_dequeue(w->pout_ring, &d) == 0)
			rte_pktmbuf_free(((struct sl_worker_pout *)d)->m);
	rte_ring_free(w->pin_ring);
	if (w->pin_wake_fd >= 0) /* only a group's lead made one */
		close(w->pin_wake_fd);
	w->pin_wake_fd = -1;
	rte_ring_free(w->pout_ring);
	rte_ring_free(w->pout_free);
	rte_mempool_free(w->pin_mp);
	rte_free(w->pouts);
	rte_free(w->qs);
	w->pin_ring = w->pout_ring = w->pout_free = NULL;
	w->pin_mp = NULL;
	w->pouts = NULL;
	w->qs = NULL;
}

int
sl_worker_ctrl_init(struct sl_worker *w, unsigned pin_queue)
{
	char name[RTE_RING_NAMESIZE];
	/* One more reader than workers: an I/O core, when there is one (sl_worker_io_init). */
	size_t qs_size = rte_rcu_qsbr_get_memsize(w->n_group + 1);
	unsigned id = (unsigned)w->queue;

	snprintf(name, sizeof(name), "sl_pin%u", id);
	/* Every worker of a group queues packet-ins here: multi-producer then. */
	w->pin_ring = rte_ring_create(name, pin_queue, SOCKET_ID_ANY,
				      (w->n_group > 1 ? 0 : RING_F_SP_ENQ) | RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "sl_pinmp%u", id);
	/* Data room holds a full-size frame: max_len 0xffff sends whole packets. */
	w->pin_mp = rte_pktmbuf_pool_create(
		name, pin_queue * 2 - 1, 0,
		RTE_ALIGN(sizeof(struct sl_worker_pin), RTE_MBUF_PRIV_ALIGN),
		RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	snprintf(name, sizeof(name), "sl_pout%u", id);
	w->pout_ring =
		rte_ring_create(name, POUT_SLOTS, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "sl_poutf%u", id);
	w->pout_free =
		rte_ring_create(name, POUT_SLOTS, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	w->pouts = rte_zmalloc("sl_pouts", POUT_SLOTS * sizeof(*w->pouts), RTE_CACHE_LINE_SIZE);
	w->qs = rte_zmalloc("sl_qsbr", qs_size, RTE_CACHE_LINE_SIZE);
	w->pin_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->pin_ring == NULL || w->pin_mp == NULL || w->pout_ring == NULL ||
	    w->pin_wake_fd < 0 || w->pout_free == NULL || w->pouts == NULL || w->qs == NULL ||
	    rte_rcu_qsbr_init(w->qs, w->n_group + 1) != 0) {
		sl_worker_fini(w);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < POUT_SLOTS - 1; i++)
		rte_ring_enqueue(w->pout_free, &w->pouts[i]);
	/* Every worker reads the tables: each one is a QSBR thread (its group index). */
	for (unsigned i = 0; i < w->n_group; i++)
		rte_rcu_qsbr_thread_register(w->qs, i);
	sl_pipeline_set_sync(w->pl, sl_worker_sync, w);
	return 0;
}

void
sl_worker_sync(void *arg)
{
	struct sl_worker *w = arg;

	/*
	 * Returns at once while the loop is offline (not started or stopped).  Spins
	 * briefly (a worker on another core reports within a round), then polls with
	 * a short sleep instead of rte_rcu_qsbr_synchronize's endless spin: with
	 * several switches sharing a core, a spinning control thread starves the
	 * datapath it waits for (seen as packet loss during mode changes on the
	 * emulated hypercube).
	 */
	if (w->qs != NULL) {
		uint64_t token = rte_rcu_qsbr_start(w->qs);

		for (unsigned spins = 0; rte_rcu_qsbr_check(w->qs, token, false) == 0; spins++) {
			if (spins < 1000)
				rte_pause();
			else
				rte_delay_us_sleep(10);
		}
	}
}

unsigned
sl_worker_pin_pending(const struct sl_worker *w)
{
	return w->pin_ring != NULL ? rte_ring_count(w->pin_ring) : 0;
}

unsigned
sl_worker_pin_dequeue(struct sl_worker *w, struct rte_mbuf **ms, unsigned n)
{
	if (w->pin_ring == NULL)
		return 0;
	return rte_ring_sc_dequeue_burst(w->pin_ring, (void **)ms, n, NULL);
}

int
sl_worker_packet_out(struct sl_worker *w, uint32_t in_port, const struct sl_action *actions,
		     unsigned n_actions, const void *data, size_t len)
{
	struct sl_worker_pout *d;
	struct rte_mbuf *m;
	char *dst;

	if (n_actions > SL_ACTIONS_MAX)
		return -EINVAL;
	if (w->pout_ring == NULL || rte_ring_sc_dequeue(w->pout_free, (void **)&d) != 0)
		return -ENOBUFS;
	m = rte_pktmbuf_alloc(w->mp);
	if (m == NULL) {
		rte_ring_sp_enqueue(w->pout_free, d);
		return -ENOBUFS;
	}
	dst = rte_pktmbuf_append(m, (uint16_t)len);
	if (len > UINT16_MAX || dst == NULL) {
		rte_pktmbuf_free(m);
		rte_ring_sp_enqueue(w->pout_free, d);
		return -EINVAL;
	}
	memcpy(dst, data, len);
	const struct sl_port *ip = sl_port_get(w->ports, in_port);
	m->port = ip != NULL ? ip->dpdk_id : 0;
	d->m = m;
	d->in_port = in_port;
	d->n_actions = (uint8_t)n_actions;
	memcpy(d->actions, actions, n_actions * sizeof(*actions));
	if (rte_ring_sp_enqueue(w->pout_ring, d) != 0) {
		rte_pktmbuf_free(m);
		rte_ring_sp_enqueue(w->pout_free, d);
		return -ENOBUFS;
	}
	return 0;
}

void
sl_worker_set_pin_rate(struct sl_worker *w, uint64_t pps)
{
	struct sl_worker *l = w->lead;

	/* Each worker has its share of the rate (rounded up: a limit never becomes 0 = none). */
	for (unsigned i = 0; i < l->n_group; i++)
		l->group[i].pin_rate = pps == 0 ? 0 : (pps + l->n_group - 1) / l->n_group;
}

/*
 * Copy @len bytes of @src into a fresh mbuf of @mp, chaining segments when
 * they do not fit one.  NULL when the pool runs dry.
 */
static struct rte_mbuf *
copy_chained(struct rte_mempool *mp, const uint8_t *src, unsigned len)
{
	struct rte_mbuf *head = NULL;

	do {
		struct rte_mbuf *seg = rte_pktmbuf_alloc(mp);
		unsigned n;
		char *dst;

		if (seg == NULL)
			goto fail;
		n = RTE_MIN(len, (unsigned)rte_pktmbuf_tailroom(seg));
		dst = rte_pktmbuf_append(seg, (uint16_t)n);
		rte_memcpy(dst, src, n);
		if (head == NULL) {
			head = seg;
		} else if (rte_pktmbuf_chain(head, seg) != 0) {
			rte_pktmbuf_free(seg);
			goto fail;
		}
		src += n;
		len -= n;
	} while (len > 0);
	return head;
fail:
	rte_pktmbuf_free(head);
	return NULL;
}

/*
 * Queue a packet-in: a copy of the whole packet.  Sluice buffers nothing,
 * and an unbuffered packet-in carries the entire packet whatever the
 * output's max_len (OpenFlow 1.3.5 section 7.4.1).  Its fate is counted on
 * the controller port: tx when queued, tx_drops with a reason otherwise.
 */
static void
to_controller(struct sl_worker *w, const struct sl_pkt *p, const struct sl_pin *pin)
{
	struct sl_worker *l = w->lead; /* owns the packet-in ring and pool */
	struct rte_mbuf *m;
	struct sl_worker_pin *info;

	if (!l->controller_up || l->pin_ring == NULL) {
		w->pin_drops.no_controller++;
		w->ctrl.tx_drops++;
		return;
	}
	if (w->pin_rate != 0) {
		/* Token bucket in TSC units: one packet costs hz tokens, burst = rate/8 + 1 packets. */
		uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();
		uint64_t cap = (w->pin_rate / 8 + 1) * hz;
		w->pin_tokens += (now - w->pin_last_tsc) * w->pin_rate;
		if (w->pin_tokens > cap)
			w->pin_tokens = cap;
		w->pin_last_tsc = now;
		if (w->pin_tokens < hz) {
			w->pin_drops.rate_limited++;
			w->ctrl.tx_drops++;
			return;
		}
		w->pin_tokens -= hz;
	}
	m = copy_chained(l->pin_mp, p->data, p->len);
	if (m == NULL) {
		w->pin_drops.no_mbuf++;
		w->ctrl.tx_drops++;
		return;
	}
	info = rte_mbuf_to_priv(m);
	info->pin = *pin;
	info->total_len = p->len;
	info->rx_tsc = w->burst_tsc;
	if (rte_ring_enqueue(l->pin_ring, m) != 0) {
		rte_pktmbuf_free(m);
		w->pin_drops.queue_full++;
		w->ctrl.tx_drops++;
		return;
	}
	/*
	 * Wake the agent only when it sleeps in poll(), once per sleep: a
	 * write costs the datapath a syscall and an IPI (about 14 us in a VM),
	 * and an awake agent takes the packet-in in its next round anyway.
	 * The fence orders the enqueue before the flag's load, as the agent
	 * orders its store of the flag before its look at the ring
	 * (sl_worker_pin_agent_sleep): one of the two sees the other.
	 */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&l->pin_agent_asleep, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&l->pin_agent_asleep, false, __ATOMIC_RELAXED)) {
		uint64_t one = 1;
		if (write(l->pin_wake_fd, &one, sizeof(one)) < 0)
			w->pin_wake_fails++; /* the agent still polls every 1-4 ms */
	}
	w->ctrl.tx_packets++;
	w->ctrl.tx_bytes += p->len;
}

int
sl_worker_pin_wake_fd(const struct sl_worker *w)
{
	return w->pin_wake_fd;
}

bool
sl_worker_pin_agent_sleep(struct sl_worker *w)
{
	if (w->pin_ring == NULL)
		return true;
	__atomic_store_n(&w->pin_agent_asleep, true, __ATOMIC_SEQ_CST);
	if (rte_ring_count(w->pin_ring) == 0)
		return true;
	__atomic_store_n(&w->pin_agent_asleep, false, __ATOMIC_RELAXED);
	return false;
}

void
sl_worker_pin_agent_awake(struct sl_worker *w)
{
	__atomic_store_n(&w->pin_agent_asleep, false, __ATOMIC_RELAXED);
}

/* The capture the control thread published (an acquire load: its fields are set). */
static inline struct sl_capture *
capture_get(const struct sl_worker *w)
{
	return __atomic_load_n(&w->capture, __ATOMIC_ACQUIRE);
}

/*
 * Live trace: the burst's frames, before they are forwarded, through the
 * recorder (it copies what it traces).  Called only while a recorder is
 * published: the loop's cost when none is, is one pointer test per burst.
 */
static inline struct sl_trace_live *
trace_get(const struct sl_worker *w)
{
	return __atomic_load_n(&w->trace, __ATOMIC_ACQUIRE);
}

static void
trace_live_burst(struct sl_worker *w, struct sl_trace_live *lt, uint32_t in_port,
		 struct rte_mbuf *const *ms, unsigned n)
{
	const uint8_t *frames[SL_BURST_MAX];
	uint16_t lens[SL_BURST_MAX];

	for (unsigned i = 0; i < n; i++) {
		frames[i] = rte_pktmbuf_mtod(ms[i], const uint8_t *);
		lens[i] = rte_pktmbuf_data_len(ms[i]);
	}
	sl_trace_live_burst(lt, w->id, in_port, frames, lens, n, w->burst_tsc);
}

static void
tx_flush(struct sl_worker *w, unsigned port_idx)
{
	uint16_t n = w->n_txb[port_idx];
	uint16_t sent;

	if (n == 0)
		return;
	struct sl_capture *cap = capture_get(w);
	if (sl_unlikely(cap != NULL))
		sl_capture_burst(cap, w->ports[port_idx].dpdk_id, SL_CAPTURE_TX, w->txb[port_idx],
				 n, w->burst_tsc);
	sent = rte_eth_tx_burst(w->ports[port_idx].dpdk_id, w->queue, w->txb[port_idx], n);
	w->pstats[port_idx].tx_packets += sent;
	/* The sent mbufs are the PMD's now: the bytes sent are the burst's less the unsent's. */
	uint32_t bytes = w->txb_bytes[port_idx];
	if (sl_unlikely(sent < n)) {
		for (uint16_t i = sent; i < n; i++)
			bytes -= rte_pktmbuf_pkt_len(w->txb[port_idx][i]);
		w->pstats[port_idx].tx_drops += n - sent;
		rte_pktmbuf_free_bulk(&w->txb[port_idx][sent], n - sent);
	}
	w->pstats[port_idx].tx_bytes += bytes;
	w->n_txb[port_idx] = 0;
	w->txb_bytes[port_idx] = 0;
}

static inline void
tx_enqueue(struct sl_worker *w, unsigned port_idx, struct rte_mbuf *m)
{
	if (sl_unlikely(w->n_txb[port_idx] == SL_BURST_MAX))
		tx_flush(w, port_idx);
	w->txb[port_idx][w->n_txb[port_idx]++] = m;
	w->txb_bytes[port_idx] += rte_pktmbuf_pkt_len(m);
}

/* The slot of output port @port: a numbered port, or LOCAL. */
static inline unsigned
out_slot(uint32_t port)
{
	return sl_unlikely(port == SL_PORT_LOCAL) ? SL_PORT_SLOT_LOCAL : port - 1;
}

/* Pipeline hook: copy a packet as it is now and queue the copy for @port. */
static int
emit_copy(void *arg, const struct sl_pkt *p, uint32_t port, const struct sl_pin *pin)
{
	struct sl_worker *w = arg;
	struct rte_mbuf *m;
	char *dst;

	if (port == SL_PORT_CONTROLLER) {
		to_controller(w, p, pin);
		return 0;
	}
	if (port == SL_PORT_TABLE && w->n_reinject == SL_BURST_MAX)
		return -ENOMEM;
	m = rte_pktmbuf_alloc(w->mp);
	if (m == NULL)
		return -ENOMEM;
	dst = rte_pktmbuf_append(m, p->len);
	if (dst == NULL) {
		rte_pktmbuf_free(m);
		return -ENOMEM;
	}
	rte_memcpy(dst, p->data, p->len);
	m->port = ((struct rte_mbuf *)p->opaque)->port;
	if (port == SL_PORT_TABLE)
		w->reinject[w->n_reinject++] = m;
	else
		tx_enqueue(w, out_slot(port), m);
	return 0;
}

/* Make the mbuf match the packet context (headers may have moved: push/pop VLAN). */
static inline void
mbuf_sync(struct rte_mbuf *m, const struct sl_pkt *p)
{
	if (sl_unlikely(p->data != rte_pktmbuf_mtod(m, uint8_t *) ||
			p->len != rte_pktmbuf_data_len(m))) {
		int32_t delta = (int32_t)p->len - (int32_t)rte_pktmbuf_data_len(m);
		m->data_off = (uint16_t)(p->data - (uint8_t *)m->buf_addr);
		m->data_len = p->len;
		m->pkt_len = (uint32_t)((int32_t)m->pkt_len + delta);
	}
}

/*
 * A burst whose packets all go to one port, unresized (VPP's speculative
 * enqueue): its mbufs join that port's tx burst in one copy, with the
 * bytes counted at rx.  One compare of the out ports instead of a lane's
 * grouping per packet.  Returns false, having done nothing, otherwise.
 */
static inline bool
enqueue_whole(struct sl_worker *w, struct rte_mbuf **mbufs, const uint32_t *out_ports, unsigned n,
	      uint64_t bytes)
{
	uint32_t out, differ = 0;

	if (n == 0)
		return true;
	out = out_ports[0];
	for (unsigned i = 1; i < n; i++)
		differ |= out_ports[i] ^ out;
	if (differ != 0 || out == SL_PORT_DROP || out > SL_PORTS_MAX)
		return false;
	unsigned slot = out - 1, have = w->n_txb[slot];
	if (have + n > SL_BURST_MAX)
		return false;
	memcpy(&w->txb[slot][have], mbufs, n * sizeof(mbufs[0]));
	w->n_txb[slot] = (uint16_t)(have + n);
	w->txb_bytes[slot] += (uint32_t)bytes;
	return true;
}

/*
 * Stage 3's general case: each packet joins its port's tx burst, a drop
 * is freed, a packet for the controller goes up.  Headers that moved
 * (@resized) are synced into their mbufs first.
 */
static void
enqueue_by_port(struct sl_worker *w, const struct sl_pkt *pkts, struct rte_mbuf **mbufs,
		const uint32_t *out_ports, unsigned n, bool resized)
{
	struct rte_mbuf *dropped[SL_BURST_MAX];
	unsigned n_dropped = 0;

	/*
	 * The slot being filled keeps its count and bytes in registers (a
	 * burst mostly goes to one port): no load-increment-store of n_txb
	 * chained from packet to packet.
	 */
	unsigned cur = SL_PORT_SLOTS, n_cur = 0;
	uint32_t bytes_cur = 0;
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = mbufs[i];
		uint32_t out = out_ports[i];

		if (out == SL_PORT_DROP) {
			dropped[n_dropped++] = m;
			continue;
		}
		unsigned slot = out - 1;
		if (sl_unlikely(out > SL_PORTS_MAX)) { /* reserved: CONTROLLER, LOCAL */
			if (out == SL_PORT_CONTROLLER) {
				to_controller(w, &pkts[i], sl_pipeline_pin(w->ctx, i));
				dropped[n_dropped++] = m; /* counted on the controller port */
				continue;
			}
			slot = SL_PORT_SLOT_LOCAL;
		}
		if (resized)
			mbuf_sync(m, &pkts[i]);
		if (slot != cur) {
			if (cur != SL_PORT_SLOTS) {
				w->n_txb[cur] = (uint16_t)n_cur;
				w->txb_bytes[cur] = bytes_cur;
			}
			cur = slot;
			n_cur = w->n_txb[cur];
			bytes_cur = w->txb_bytes[cur];
		}
		if (sl_unlikely(n_cur == SL_BURST_MAX)) {
			w->n_txb[cur] = (uint16_t)n_cur;
			w->txb_bytes[cur] = bytes_cur;
			tx_flush(w, cur);
			n_cur = bytes_cur = 0;
		}
		w->txb[cur][n_cur++] = m;
		bytes_cur += rte_pktmbuf_pkt_len(m);
	}
	if (cur != SL_PORT_SLOTS) {
		w->n_txb[cur] = (uint16_t)n_cur;
		w->txb_bytes[cur] = bytes_cur;
	}
	if (n_dropped)
		rte_pktmbuf_free_bulk(dropped, n_dropped);
}

/* Packet @p for mbuf @m, like @t (the burst's in_port); returns its bytes. */
static SL_ALWAYS_INLINE uint32_t
pkt_of_mbuf(struct sl_pkt *p, struct rte_mbuf *m, const struct sl_pkt *t)
{
	/* Multi-segment frames are matched on their first segment only. */
	sl_pkt_init_like(p, t, rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m),
			 rte_pktmbuf_headroom(m));
	if (sl_unlikely(m->nb_segs > 1)) /* the rest still counts for IP lengths */
		p->tail = (uint16_t)RTE_MIN(rte_pktmbuf_pkt_len(m) - m->data_len,
					    (uint32_t)UINT16_MAX);
	p->opaque = m;
	return rte_pktmbuf_pkt_len(m);
}

/*
 * Process one burst entering at OpenFlow port @in_port; @ps counts its rx
 * (NULL for packets already counted: packet_out reinjections).  @now is
 * the time just read (rte_rdtsc), or 0.
 */
static void
process_burst(struct sl_worker *w, uint32_t in_port, struct sl_worker_port_stats *ps,
	      struct rte_mbuf **mbufs, uint16_t n, uint64_t now)
{
	struct sl_pkt pkts[SL_BURST_MAX];
	uint32_t out_ports[SL_BURST_MAX];
	uint8_t drops[SL_BURST_MAX];
	/* A burst enters on one port with metadata 0: the same registers in every lane. */
	const struct sl_pipeline_hooks hooks = {.emit_copy = emit_copy,
						.arg = w,
						.keeping_up = w->keeping_up,
						.same_registers = true,
						.now = now};
	uint64_t rx_bytes = 0;
	struct sl_pkt like;

	memset(&like, 0, sizeof(like));
	sl_pkt_init(&like, NULL, 0, 0, in_port);

	/*
	 * Stage 1: packet contexts; prefetch frame data a few packets ahead (a
	 * loop of its own for the packets that have one ahead: no test a packet).
	 */
	unsigned i = 0, ahead = n > PREFETCH_OFFSET ? n - PREFETCH_OFFSET : 0;
	for (unsigned k = 0; k < n && k < PREFETCH_OFFSET; k++)
		rte_prefetch0(rte_pktmbuf_mtod(mbufs[k], void *));
	for (; i < ahead; i++) {
		rte_prefetch0(rte_pktmbuf_mtod(mbufs[i + PREFETCH_OFFSET], void *));
		rx_bytes += pkt_of_mbuf(&pkts[i], mbufs[i], &like);
	}
	for (; i < n; i++)
		rx_bytes += pkt_of_mbuf(&pkts[i], mbufs[i], &like);
	if (ps != NULL) {
		ps->rx_packets += n;
		ps->rx_bytes += rx_bytes;
	}

	/* Stage 2: the pipeline over the whole burst. */
	sl_fwd_run_burst(w->fwd, w->pl, w->ctx, pkts, n, &hooks, out_ports, drops);
	/*
	 * Low-latency until it hits a normal entry (set once, here).  Until an
	 * entry is ever marked every packet is normal, and the field is still 0
	 * from the pool's initialisation: no write (a line per packet, ~10 % of
	 * TC1's cycles).
	 */
	if (w->ll_dynfield >= 0 && sl_pipeline_ll_ever(w->pl)) {
		uint64_t ll = sl_pipeline_ll_lanes(w->ctx);
		for (unsigned i = 0; i < n; i++)
			*RTE_MBUF_DYNFIELD(mbufs[i], w->ll_dynfield, uint8_t *) =
				(uint8_t)(ll >> i & 1);
	}

	/*
	 * Stage 3: group by output port.  Headers may have moved (push/pop of
	 * a VLAN, MPLS or PBB header): then the mbufs follow.  The tableless
	 * engines never move one, so a burst they took whole may read the last
	 * pipeline burst's answer: at worst a sync that changes nothing.
	 */
	bool resized = sl_pipeline_resized(w->ctx);
	if (resized || !enqueue_whole(w, mbufs, out_ports, n, rx_bytes))
		enqueue_by_port(w, pkts, mbufs, out_ports, n, resized);

	/* Stage 4: transmit. */
	for (unsigned k = 0; k < w->pset->n; k++)
		tx_flush(w, w->pset->slots[k]);
}

/* Run packet_out output:TABLE packets through the pipeline. */
static void
reinject_flush(struct sl_worker *w)
{
	while (w->n_reinject > 0) {
		struct rte_mbuf *ms[SL_BURST_MAX];
		uint16_t n = (uint16_t)w->n_reinject;

		memcpy(ms, w->reinject, n * sizeof(ms[0]));
		w->n_reinject = 0;
		process_burst(w, w->reinject_port, NULL, ms, n, 0);
	}
}

/* Execute queued packet_outs (a few per round). */
static bool
packet_outs_run(struct sl_worker *w)
{
	const struct sl_pipeline_hooks hooks = {.emit_copy = emit_copy, .arg = w};
	struct sl_worker_pout *ds[POUT_PER_ROUND];
	unsigned n;

	if (w->pout_ring == NULL)
		return false;
	n = rte_ring_sc_dequeue_burst(w->pout_ring, (void **)ds, POUT_PER_ROUND, NULL);
	for (unsigned k = 0; k < n; k++) {
		struct sl_worker_pout *d = ds[k];
		struct rte_mbuf *m = d->m;
		struct sl_pkt p;
		uint32_t out;
		uint8_t drop;

		w->ctrl.rx_packets++;
		w->ctrl.rx_bytes += rte_pktmbuf_pkt_len(m);
		sl_pkt_init(&p, rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m),
			    rte_pktmbuf_headroom(m), d->in_port);
		if (m->nb_segs > 1)
			p.tail = (uint16_t)RTE_MIN(rte_pktmbuf_pkt_len(m) - m->data_len,
						   (uint32_t)UINT16_MAX);
		p.opaque = m;
		w->reinject_port = d->in_port;
		sl_pipeline_exec_actions(w->pl, w->ctx, &p, d->actions, d->n_actions, &hooks, &out,
					 &drop);
		if (out == SL_PORT_DROP) {
			rte_pktmbuf_free(m);
		} else if (out == SL_PORT_CONTROLLER) {
			to_controller(w, &p, sl_pipeline_pin(w->ctx, 0));
			rte_pktmbuf_free(m);
		} else if (out == SL_PORT_TABLE) {
			mbuf_sync(m, &p);
			if (w->n_reinject < SL_BURST_MAX)
				w->reinject[w->n_reinject++] = m;
			else
				rte_pktmbuf_free(m); /* cannot happen: emit_copy keeps a slot */
		} else {
			mbuf_sync(m, &p);
			tx_enqueue(w, out_slot(out), m);
		}
		reinject_flush(w);
		d->m = NULL;
		rte_ring_sp_enqueue(w->pout_free, d);
	}
	for (unsigned k = 0; n > 0 && k < w->pset->n; k++)
		tx_flush(w, w->pset->slots[k]);
	return n > 0;
}

/*
 * I/O dispatch: take a burst from the I/O core's ring.  Its packets may come
 * from several ports: a stable counting sort by port keeps each port's
 * order, then each port's packets run as one burst.  Rx was counted by the
 * I/O core.  Returns the packets taken.
 */
static inline unsigned
port_index(const struct sl_worker *w, const struct rte_mbuf *m)
{
	unsigned i = m->port < sizeof(w->port_idx) ? w->port_idx[m->port] : 0xff;

	return i == 0xff ? SL_PORT_SLOTS : i;
}

static unsigned
ring_poll(struct sl_worker *w, struct rte_mbuf **mbufs)
{
	struct rte_mbuf *sorted[SL_BURST_MAX];
	uint16_t count[SL_PORT_SLOTS + 1] = {0}, start[SL_PORT_SLOTS + 1];
	uint8_t idx[SL_BURST_MAX];
	unsigned n = rte_ring_sc_dequeue_burst(w->in_ring, (void **)mbufs, w->burst, NULL);
	struct rte_mbuf **runs = mbufs;

	if (n == 0)
		return 0;
	w->loop.bursts++;
	w->loop.packets += n;
	w->keeping_up = n < w->burst;
	/* The oldest packet's receive time at the I/O core: latency includes the ring wait. */
	w->burst_tsc = w->rx_tsc_off >= 0 ? *RTE_MBUF_DYNFIELD(mbufs[0], w->rx_tsc_off, uint64_t *)
					  : rte_rdtsc();
	for (unsigned i = 0; i < n; i++) {
		idx[i] = (uint8_t)port_index(w, mbufs[i]);
		count[idx[i]]++;
	}
	if (count[idx[0]] != n) {
		uint16_t o = 0;
		for (unsigned p = 0; p <= SL_PORT_SLOTS; p++) {
			start[p] = o;
			o = (uint16_t)(o + count[p]);
		}
		for (unsigned i = 0; i < n; i++)
			sorted[start[idx[i]]++] = mbufs[i];
		runs = sorted;
	}
	for (unsigned i = 0, k; i < n; i += k) {
		unsigned p = port_index(w, runs[i]);
		for (k = 1; i + k < n && runs[i + k]->port == runs[i]->port; k++)
			;
		if (p == SL_PORT_SLOTS) {
			/* The I/O core only receives on our ports: cannot happen; never leak. */
			rte_pktmbuf_free_bulk(&runs[i], k);
			continue;
		}
		struct sl_capture *cap = capture_get(w);
		if (sl_unlikely(cap != NULL))
			sl_capture_burst(cap, w->ports[p].dpdk_id, SL_CAPTURE_RX, &runs[i], k,
					 w->burst_tsc);
		struct sl_trace_live *lt = trace_get(w);
		if (sl_unlikely(lt != NULL))
			trace_live_burst(w, lt, w->ports[p].of_no, &runs[i], k);
		process_burst(w, w->ports[p].of_no, NULL, &runs[i], (uint16_t)k, 0);
	}
	w->round_tsc = rte_rdtsc();
	sl_lat_hist_add(&w->lat_pipeline, sl_cycles_to_ns(w->round_tsc - w->burst_tsc, w->lat_mult),
			n);
	/* Release: the I/O core's ordered scheduler reads it to know these packets left. */
	__atomic_store_n(&w->done, w->done + n, __ATOMIC_RELEASE);
	return n;
}

/* A writer waits for this worker's next quiescent state (rte_rcu_qsbr_quiescent's test). */
static inline bool
rcu_writer_waiting(const struct rte_rcu_qsbr *qs, unsigned id)
{
	return __atomic_load_n(&qs->token, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&qs->qsbr_cnt[id].cnt, __ATOMIC_RELAXED);
}

/*
 * Deferred credits (sl_pipeline_ctx_defer_credits) hold flow entries: flush
 * them before a quiescent state is reported.  While busy, that is every
 * CREDIT_ROUNDS rounds, or at once when a writer waits; an idle round flushes.
 */
static inline void
credits_round(struct sl_worker *w, struct rte_rcu_qsbr *qs, bool busy)
{
	if (sl_pipeline_ctx_credits_pending(w->ctx) &&
	    (!busy || ++w->credit_rounds >= CREDIT_ROUNDS || rcu_writer_waiting(qs, w->id))) {
		sl_pipeline_ctx_flush_credits(w->pl, w->ctx);
		w->credit_rounds = 0;
	}
	if (!sl_pipeline_ctx_credits_pending(w->ctx))
		rte_rcu_qsbr_quiescent(qs, w->id);
}

/* Receive one burst from queue @q of port index @p and run it through the switch. */
static uint16_t
rx_burst_run(struct sl_worker *w, unsigned p, uint16_t q, struct rte_mbuf **mbufs)
{
	uint16_t n = rte_eth_rx_burst(w->ports[p].dpdk_id, q, mbufs, w->burst);

	if (n == 0)
		return 0;
	w->loop.bursts++;
	w->loop.packets += n;
	w->keeping_up = n < w->burst;
	w->burst_tsc = rte_rdtsc();
	struct sl_capture *cap = capture_get(w);
	if (sl_unlikely(cap != NULL))
		sl_capture_burst(cap, w->ports[p].dpdk_id, SL_CAPTURE_RX, mbufs, n, w->burst_tsc);
	struct sl_trace_live *lt = trace_get(w);
	if (sl_unlikely(lt != NULL))
		trace_live_burst(w, lt, w->ports[p].of_no, mbufs, n);
	process_burst(w, w->ports[p].of_no, &w->pstats[p], mbufs, n, w->burst_tsc);
	/* Every packet of the burst spent the burst's time in the switch. */
	w->round_tsc = rte_rdtsc();
	sl_lat_hist_add(&w->lat_pipeline, sl_cycles_to_ns(w->round_tsc - w->burst_tsc, w->lat_mult),
			n);
	return n;
}

int
sl_worker_run(void *arg)
{
	struct sl_worker *w = arg;
	struct rte_mbuf *mbufs[SL_BURST_MAX];
	struct rte_rcu_qsbr *qs = w->lead->qs;

	w->running = true;
	/* Without QSBR no writer waits for this worker: credits go per packet. */
	sl_pipeline_ctx_defer_credits(w->ctx, qs != NULL);
	if (qs != NULL)
		rte_rcu_qsbr_thread_online(qs, w->id);
	/*
	 * A round starts when the last one ended (round_tsc): its last burst's
	 * end, read for the latency histogram anyway, or a read of its own when
	 * no burst ran.  With the pipeline taking the rx time (hooks.now), two
	 * clock reads a burst instead of five (~25 cycles each here).
	 */
	w->round_tsc = rte_rdtsc();
	/* Fed by an I/O core: stop only once its ring is empty (the I/O core stopped first). */
	while (!w->stop || (w->in_ring != NULL && !rte_ring_empty(w->in_ring))) {
		bool busy = false;
		uint64_t t0 = w->round_tsc, bursts0 = w->loop.bursts;

		/* The ports of this round: what the control thread published last. */
		w->pset = __atomic_load_n(&w->lead->pset_pub, __ATOMIC_ACQUIRE);
		if (w->in_ring != NULL)
			busy = ring_poll(w, mbufs) > 0;
		for (unsigned k = 0; w->in_ring == NULL && k < w->pset->n; k++) {
			unsigned p = w->pset->slots[k];
			/* Queues i, i + workers, ... of the port (just i unless --rx-queues). */
			for (unsigned q = w->queue; q < w->ports[p].n_rxq; q += w->n_group)
				busy |= rx_burst_run(w, p, (uint16_t)q, mbufs) > 0;
		}
		busy |= packet_outs_run(w);
		sl_pipeline_service(w->pl, w->ctx); /* state tables: control commands, expiry */
		/* Between rounds the worker holds no table, and no flow once credited. */
		if (qs != NULL)
			credits_round(w, qs, busy);
		w->loop.iterations++;
		if (busy) {
			if (w->loop.bursts == bursts0) /* packet_outs only */
				w->round_tsc = rte_rdtsc();
			w->loop.busy_rounds++;
			w->loop.busy_cycles += w->round_tsc - t0;
		}
		sl_idle_round(&w->idle, busy);
		if (!busy) /* after a sleep, if there was one */
			w->round_tsc = rte_rdtsc();
	}
	for (unsigned k = 0; k < w->pset->n; k++)
		tx_flush(w, w->pset->slots[k]);
	sl_pipeline_ctx_flush_credits(w->pl, w->ctx);
	if (qs != NULL)
		rte_rcu_qsbr_thread_offline(qs, w->id);
	w->running = false;
	return 0;
}

/* ---- ports at run time (control thread) ---- */

/* Publish the set in lead->pset_buf[@next] and wait until every reader runs with it. */
static void
pset_publish(struct sl_worker *l, unsigned next)
{
	__atomic_store_n(&l->pset_pub, &l->pset_buf[next], __ATOMIC_RELEASE);
	/*
	 * A worker takes the set at the start of a round and reports a quiescent
	 * state at its end: after a grace period, none holds the old one (its
	 * buffer is free for the next change).  The I/O core is a reader too.
	 */
	sl_worker_sync(l);
}

/* Build the next set: the published one, plus (@add) or minus @slot. */
static unsigned
pset_build(struct sl_worker *l, unsigned slot, bool add)
{
	const struct sl_worker_pset *cur = l->pset_pub;
	unsigned next = cur == &l->pset_buf[0] ? 1 : 0;
	struct sl_worker_pset *ps = &l->pset_buf[next];
	bool in[SL_PORT_SLOTS] = {false};

	for (unsigned k = 0; k < cur->n; k++)
		in[cur->slots[k]] = true;
	in[slot] = add;
	ps->n = 0;
	for (unsigned s = 0; s < SL_PORT_SLOTS; s++)
		if (in[s])
			ps->slots[ps->n++] = (uint8_t)s;
	return next;
}

bool
sl_worker_port_attached(const struct sl_worker *w, unsigned slot)
{
	const struct sl_worker_pset *ps = w->lead->pset_pub;

	for (unsigned k = 0; k < ps->n; k++)
		if (ps->slots[k] == slot)
			return true;
	return false;
}

void
sl_worker_port_attach(struct sl_worker *w, unsigned slot)
{
	struct sl_worker *l = w->lead;
	const struct sl_port *port = &l->ports[slot];

	if (slot >= SL_PORT_SLOTS || sl_worker_port_attached(l, slot))
		return;
	/*
	 * I/O dispatch maps a packet's DPDK port to its slot.  A packet of a
	 * deleted port that reused this id and still waits in a worker ring
	 * would count on the new port; rings drain in microseconds, a port
	 * takes milliseconds to probe.
	 */
	for (unsigned i = 0; i < l->n_group; i++)
		if (port->dpdk_id < sizeof(l->group[i].port_idx))
			__atomic_store_n(&l->group[i].port_idx[port->dpdk_id], (uint8_t)slot,
					 __ATOMIC_RELAXED);
	pset_publish(l, pset_build(l, slot, true));
}

void
sl_worker_port_detach(struct sl_worker *w, unsigned slot)
{
	struct sl_worker *l = w->lead;

	if (slot >= SL_PORT_SLOTS || !sl_worker_port_attached(l, slot))
		return;
	/*
	 * The pipeline no longer outputs to the port.  A worker that takes the
	 * new set (an acquire after that store) sees it so; one still on the old
	 * set may have queued packets for the port, and flushes them at the end
	 * of its burst, before its quiescent state.
	 */
	pset_publish(l, pset_build(l, slot, false));
}

void
sl_worker_port_retire(struct sl_worker *w, unsigned slot)
{
	struct sl_worker *l = w->lead;
	struct sl_worker_port_stats ps;

	if (slot >= SL_PORT_SLOTS)
		return;
	/* Nobody writes them after detach's grace period. */
	sl_worker_port_read(l, slot, &ps);
	l->retired.rx_packets += ps.rx_packets;
	l->retired.rx_bytes += ps.rx_bytes;
	l->retired.tx_packets += ps.tx_packets;
	l->retired.tx_bytes += ps.tx_bytes;
	l->retired.tx_drops += ps.tx_drops;
	for (unsigned i = 0; i < l->n_group; i++)
		memset(&l->group[i].pstats[slot], 0, sizeof(l->group[i].pstats[slot]));
	if (l->io != NULL)
		memset(&l->io->pstats[slot], 0, sizeof(l->io->pstats[slot]));
}

/* ---- readers (control thread): sums over the group ---- */

void
sl_worker_port_read(const struct sl_worker *w, unsigned port, struct sl_worker_port_stats *out)
{
	const struct sl_worker *l = w->lead;

	memset(out, 0, sizeof(*out));
	if (port >= SL_PORT_SLOTS)
		return;
	for (unsigned i = 0; i < l->n_group; i++) {
		const struct sl_worker_port_stats *ps = &l->group[i].pstats[port];
		out->rx_packets += ps->rx_packets;
		out->rx_bytes += ps->rx_bytes;
		out->tx_packets += ps->tx_packets;
		out->tx_bytes += ps->tx_bytes;
		out->tx_drops += ps->tx_drops;
	}
	if (l->io != NULL) {
		out->rx_packets += l->io->pstats[port].rx_packets;
		out->rx_bytes += l->io->pstats[port].rx_bytes;
	}
}

void
sl_worker_ctrl_read(const struct sl_worker *w, struct sl_worker_port_stats *out)
{
	const struct sl_worker *l = w->lead;

	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < l->n_group; i++) {
		const struct sl_worker_port_stats *ps = &l->group[i].ctrl;
		out->rx_packets += ps->rx_packets;
		out->rx_bytes += ps->rx_bytes;
		out->tx_packets += ps->tx_packets;
		out->tx_bytes += ps->tx_bytes;
		out->tx_drops += ps->tx_drops;
	}
}

void
sl_worker_pin_drops_read(const struct sl_worker *w, struct sl_worker_pin_drops *out)
{
	const struct sl_worker *l = w->lead;

	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < l->n_group; i++) {
		const struct sl_worker_pin_drops *pd = &l->group[i].pin_drops;
		out->no_controller += pd->no_controller;
		out->rate_limited += pd->rate_limited;
		out->queue_full += pd->queue_full;
		out->no_mbuf += pd->no_mbuf;
	}
}

void
sl_worker_loop_read(const struct sl_worker *w, struct sl_worker_loop_stats *out)
{
	const struct sl_worker *l = w->lead;

	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < l->n_group; i++) {
		const struct sl_worker_loop_stats *ls = &l->group[i].loop;
		out->iterations += ls->iterations;
		out->busy_rounds += ls->busy_rounds;
		out->busy_cycles += ls->busy_cycles;
		out->bursts += ls->bursts;
		out->packets += ls->packets;
	}
}

void
sl_worker_lat_read(const struct sl_worker *w, struct sl_lat_hist *out)
{
	const struct sl_worker *l = w->lead;

	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < l->n_group; i++) {
		const struct sl_lat_hist *h = &l->group[i].lat_pipeline;
		out->count += h->count;
		out->sum_ns += h->sum_ns;
		out->max_ns = SL_MAX(out->max_ns, h->max_ns);
		for (unsigned b = 0; b < SL_LAT_BUCKETS; b++)
			out->bucket[b] += h->bucket[b];
	}
}

unsigned
sl_worker_ctxs(const struct sl_worker *w, const struct sl_pipeline_ctx *ctxs[], unsigned max)
{
	const struct sl_worker *l = w->lead;
	unsigned n = SL_MIN(l->n_group, max);

	for (unsigned i = 0; i < n; i++)
		ctxs[i] = l->group[i].ctx;
	return n;
}

void
sl_worker_drops(const struct sl_worker *w, uint64_t drops[SL_DROP__MAX])
{
	const struct sl_pipeline_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned n = sl_worker_ctxs(w, ctxs, SL_DISPATCH_WORKERS_MAX);

	sl_pipeline_drop_stats(ctxs, n, drops);
	if (w->lead->io != NULL)
		drops[SL_DROP_DISPATCH_FULL] += w->lead->io->ring_full;
	for (unsigned i = 0; i < w->lead->n_group; i++)
		sl_fwd_drop_stats(w->lead->group[i].fwd, drops);
}

void
sl_worker_totals(const struct sl_worker *w, struct sl_worker_totals *t)
{
	const struct sl_pipeline_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned n = sl_worker_ctxs(w, ctxs, SL_DISPATCH_WORKERS_MAX);
	struct sl_worker_port_stats ps;
	uint64_t drops[SL_DROP__MAX];

	memset(t, 0, sizeof(*t));
	for (unsigned p = 0; p < SL_PORT_SLOTS; p++) {
		sl_worker_port_read(w, p, &ps);
		t->rx += ps.rx_packets;
		t->tx += ps.tx_packets;
		t->tx_drops += ps.tx_drops;
	}
	/* Deleted ports: their packets went somewhere, and the balance must say so. */
	t->rx += w->lead->retired.rx_packets;
	t->tx += w->lead->retired.tx_packets;
	t->tx_drops += w->lead->retired.tx_drops;
	sl_worker_ctrl_read(w, &ps);
	t->rx += ps.rx_packets;
	t->tx += ps.tx_packets;
	t->tx_drops += ps.tx_drops;
	/* Pipeline drops include the I/O core's dispatch-full drops. */
	sl_worker_drops(w, drops);
	for (unsigned r = 0; r < SL_DROP__MAX; r++)
		t->pipeline_drops += drops[r];
	t->copies = sl_pipeline_copies(ctxs, n);
}

void
sl_worker_retired_read(const struct sl_worker *w, struct sl_worker_port_stats *out)
{
	*out = w->lead->retired;
}

void
sl_worker_member_read(const struct sl_worker *w, unsigned i, struct sl_worker_member_stats *out)
{
	const struct sl_worker *m;

	memset(out, 0, sizeof(*out));
	if (i >= w->lead->n_group)
		return;
	m = &w->lead->group[i];
	for (unsigned p = 0; p < SL_PORT_SLOTS; p++)
		out->tx_drops += m->pstats[p].tx_drops;
	out->packets = m->loop.packets;
	out->bursts = m->loop.bursts;
	out->busy_cycles = m->loop.busy_cycles;
	if (m->io != NULL && m->in_ring != NULL) {
		out->dispatched = true;
		out->ring_used = rte_ring_count(m->in_ring);
	}
}

void
sl_worker_idle_read(const struct sl_worker *w, struct sl_worker_idle_stats *out)
{
	const struct sl_worker *l = w->lead;

	memset(out, 0, sizeof(*out));
	out->max_us = w->idle.max_us;
	for (unsigned i = 0; i < l->n_group; i++) {
		out->sleeps += l->group[i].idle.sleeps;
		out->slept_ns += l->group[i].idle.slept_ns;
	}
}
