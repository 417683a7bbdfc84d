/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queues (pipeline.h, "Queues"): per port, up to SL_QUEUES_PER_PORT
 * max-rate policers that set_queue selects for the outputs after it.
 *
 * A queue's bucket is GCRA, as a meter band's (meter.c): one theoretical
 * arrival time the workers move by compare-and-swap, so several workers
 * share a queue without a lock and the long-run rate is exact.
 *
 * Memory: a port's queue array is allocated at its first queue and lives
 * until the pipeline is destroyed (at most PL_PORTS_MAX + 1 arrays of
 * SL_QUEUES_PER_PORT lines), so a worker never reads freed memory: a
 * deleted queue is a slot marked unused, reused by the next queue set up.
 */
#include "pipeline.h"
#include "pipeline_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pl_queue {
	uint8_t used; /* atomic: the slot holds a queue (id and rates are set first) */
	uint32_t id;
	uint64_t inc; /* 2^-16 of 1/16 cycles a byte (relaxed: a change may mix for a packet) */
	uint64_t tau; /* burst tolerance, 1/16 cycles */
	uint64_t tat; /* theoretical arrival time, 1/16 cycles (CAS by the workers) */
	uint64_t tx_packets, tx_bytes, tx_errors; /* pl_count */
	struct sl_queue_spec spec;                /* control thread */
	uint64_t born_tsc;
} __attribute__((aligned(64)));

struct pl_queues {
	struct pl_queue *ports[PL_PORTS_MAX + 1]; /* atomic pointers, NULL: no queue yet */
};

void
pl_queues_destroy(struct sl_pipeline *pl)
{
	struct pl_queues *qs = pl->queues;

	if (qs == NULL)
		return;
	for (unsigned p = 0; p <= PL_PORTS_MAX; p++)
		free(qs->ports[p]);
	free(qs);
	pl->queues = NULL;
}

static struct pl_queue *
queue_find(struct pl_queue *arr, uint32_t id)
{
	for (unsigned k = 0; arr != NULL && k < SL_QUEUES_PER_PORT; k++)
		if (__atomic_load_n(&arr[k].used, __ATOMIC_ACQUIRE) && arr[k].id == id)
			return &arr[k];
	return NULL;
}

int
sl_pipeline_queue_set(struct sl_pipeline *pl, const struct sl_queue_spec *qs, char *err,
		      size_t err_size)
{
	unsigned __int128 ups = (unsigned __int128)sl_pipeline_tsc_hz() << 4; /* units a second */
	struct pl_queue *arr, *q;
	unsigned __int128 inc, tau;
	uint64_t burst;

	if (qs->port_no == 0 || qs->port_no > PL_PORTS_MAX)
		return pl_err(pl, SL_FAIL_BAD_OUT_PORT, err, err_size, -EINVAL,
			      "queue %u: port %u out of range 1..%u", qs->queue_id, qs->port_no,
			      PL_PORTS_MAX);
	if (qs->queue_id == UINT32_MAX)
		return pl_err(pl, SL_FAIL_BAD_ACTION, err, err_size, -EINVAL,
			      "port %u: queue id 0xffffffff is OFPQ_ALL, not a queue", qs->port_no);
	if (qs->max_rate == 0)
		return pl_err(pl, SL_FAIL_BAD_RATE, err, err_size, -EINVAL,
			      "port %u queue %u: max_rate must be above 0 kbit/s", qs->port_no,
			      qs->queue_id);
	if (qs->min_rate != 0)
		return pl_err(pl, SL_FAIL_UNSUPPORTED, err, err_size, -EINVAL,
			      "port %u queue %u: min_rate=%llu cannot be guaranteed (a software "
			      "policer has no scheduler); set max_rate only",
			      qs->port_no, qs->queue_id, (unsigned long long)qs->min_rate);
	if (pl->queues == NULL) {
		struct pl_queues *n = calloc(1, sizeof(*n));
		if (n == NULL)
			return pl_err(pl, SL_FAIL_NOMEM, err, err_size, -ENOMEM, "out of memory");
		__atomic_store_n(&pl->queues, n, __ATOMIC_RELEASE);
	}
	arr = pl->queues->ports[qs->port_no];
	if (arr == NULL) {
		arr = aligned_alloc(64, SL_QUEUES_PER_PORT * sizeof(*arr));
		if (arr == NULL)
			return pl_err(pl, SL_FAIL_NOMEM, err, err_size, -ENOMEM, "out of memory");
		memset(arr, 0, SL_QUEUES_PER_PORT * sizeof(*arr));
		__atomic_store_n(&pl->queues->ports[qs->port_no], arr, __ATOMIC_RELEASE);
	}
	q = queue_find(arr, qs->queue_id);
	if (q == NULL) {
		for (unsigned k = 0; k < SL_QUEUES_PER_PORT && q == NULL; k++)
			if (!arr[k].used)
				q = &arr[k];
		if (q == NULL)
			return pl_err(pl, SL_FAIL_UNSUPPORTED, err, err_size, -ENOSPC,
				      "port %u has %u queues already (at most %u)", qs->port_no,
				      SL_QUEUES_PER_PORT, SL_QUEUES_PER_PORT);
		q->id = qs->queue_id;
		q->tx_packets = q->tx_bytes = q->tx_errors = 0;
		q->tat = 0;
		q->born_tsc = sl_pipeline_tsc();
	}
	/* kbit/s: a byte costs 8 / (rate * 1000) s; without a burst, one second of the rate. */
	burst = qs->burst ? qs->burst : qs->max_rate;
	inc = (ups * 8 << 16) / ((unsigned __int128)qs->max_rate * 1000);
	tau = ups * burst / qs->max_rate;
	__atomic_store_n(&q->inc, inc > 0 ? (uint64_t)inc : 1, __ATOMIC_RELAXED);
	__atomic_store_n(&q->tau, tau < (UINT64_C(1) << 62) ? (uint64_t)tau : UINT64_C(1) << 62,
			 __ATOMIC_RELAXED);
	q->spec = *qs;
	q->spec.burst = burst;
	__atomic_store_n(&q->used, 1, __ATOMIC_RELEASE);
	return 0;
}

int
sl_pipeline_queue_del(struct sl_pipeline *pl, uint32_t port_no, uint32_t queue_id)
{
	struct pl_queue *q;

	if (pl->queues == NULL || port_no == 0 || port_no > PL_PORTS_MAX)
		return -ENOENT;
	q = queue_find(pl->queues->ports[port_no], queue_id);
	if (q == NULL)
		return -ENOENT;
	__atomic_store_n(&q->used, 0, __ATOMIC_RELEASE);
	return 0;
}

unsigned
sl_pipeline_queues(const struct sl_pipeline *pl, uint32_t port_no, uint32_t queue_id,
		   struct sl_queue_info *out, unsigned max)
{
	uint64_t hz = sl_pipeline_tsc_hz(), now = sl_pipeline_tsc();
	unsigned n = 0;

	if (pl->queues == NULL)
		return 0;
	for (uint32_t p = 1; p <= PL_PORTS_MAX; p++) {
		const struct pl_queue *arr = pl->queues->ports[p];
		const struct pl_queue *sorted[SL_QUEUES_PER_PORT];
		unsigned m = 0;

		if (arr == NULL || (port_no != SL_PORT_ANY && port_no != p))
			continue;
		/* By id: insertion sort of at most SL_QUEUES_PER_PORT. */
		for (unsigned k = 0; k < SL_QUEUES_PER_PORT; k++) {
			unsigned j = m;
			if (!arr[k].used || (queue_id != UINT32_MAX && arr[k].id != queue_id))
				continue;
			for (; j > 0 && sorted[j - 1]->id > arr[k].id; j--)
				sorted[j] = sorted[j - 1];
			sorted[j] = &arr[k];
			m++;
		}
		for (unsigned k = 0; k < m; k++, n++) {
			const struct pl_queue *q = sorted[k];
			if (n >= max)
				continue;
			out[n] = (struct sl_queue_info){
				.spec = q->spec,
				.tx_packets = __atomic_load_n(&q->tx_packets, __ATOMIC_RELAXED),
				.tx_bytes = __atomic_load_n(&q->tx_bytes, __ATOMIC_RELAXED),
				.tx_errors = __atomic_load_n(&q->tx_errors, __ATOMIC_RELAXED),
				.age_ms = hz ? (now - q->born_tsc) * 1000 / hz : 0};
		}
	}
	return n;
}

/* The rest of this file runs on the workers. */

bool
pl_queue_admit(const struct sl_pipeline *pl, uint32_t port, uint32_t queue_id, uint32_t len,
	       uint64_t tsc)
{
	const struct pl_queues *qs = __atomic_load_n(&pl->queues, __ATOMIC_ACQUIRE);
	struct pl_queue *q;

	if (qs == NULL || port > PL_PORTS_MAX)
		return true;
	q = queue_find(__atomic_load_n(&qs->ports[port], __ATOMIC_ACQUIRE), queue_id);
	if (q == NULL)
		return true; /* no such queue on this port: its default queue, unpoliced */
	uint64_t inc = __atomic_load_n(&q->inc, __ATOMIC_RELAXED);
	uint64_t cost = (uint64_t)(((unsigned __int128)len * inc) >> 16);
	if (!pl_gcra_take(&q->tat, __atomic_load_n(&q->tau, __ATOMIC_RELAXED), tsc << 4, cost)) {
		pl_count(pl, &q->tx_errors, 1);
		return false;
	}
	pl_count(pl, &q->tx_packets, 1);
	pl_count(pl, &q->tx_bytes, len);
	return true;
}
