/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_dispatch: the I/O core's frame parser and schedulers on arbitrary
 * bytes (libFuzzer).
 *
 * The whole input is first a frame for sl_dispatch_tuple_extract (copied
 * into a buffer of exactly its size, so ASan sees any overread) and its
 * CRC.  Then it drives a dispatcher: byte 0 picks the workers, byte 1 the
 * scheduler, byte 2 the threshold, byte 3 the out-buffer size; the rest is
 * a stream of bursts (a length byte, then 4 hash bytes per packet) with
 * ring occupancies, ring refusals and worker progress taken from the same
 * bytes.
 *
 * Oracles beyond ASan/UBSan (a failure aborts): every target is a worker;
 * per worker, packets == enqueued + refused + still in the out-buffer; the
 * sum of packets is what was sent; in ordered mode no flow overtakes
 * itself (workers drain FIFO in the order the input says).
 */
#include "../src/dispatch/dispatch.h"

#include <stdlib.h>
#include <string.h>

#define QMAX 2048

struct fz {
	const uint8_t *d;
	size_t n, pos;
	unsigned n_workers, ring;
	uint32_t q[SL_DISPATCH_WORKERS_MAX][QMAX]; /* packet ids */
	unsigned head[SL_DISPATCH_WORKERS_MAX], tail[SL_DISPATCH_WORKERS_MAX];
	uint64_t done[SL_DISPATCH_WORKERS_MAX];
	uint64_t refused;
};

static uint8_t
next(struct fz *f)
{
	return f->pos < f->n ? f->d[f->pos++] : 0;
}

static unsigned
fz_enqueue(void *arg, unsigned w, void *const objs[], unsigned n)
{
	struct fz *f = arg;
	unsigned k = 0;

	if ((next(f) & 15) == 0)
		return 0; /* a refusing ring now and then */
	for (; k < n && f->tail[w] - f->head[w] < f->ring; k++)
		f->q[w][f->tail[w]++ % QMAX] = (uint32_t)(uintptr_t)objs[k];
	f->refused += n - k;
	return k;
}

static unsigned
fz_used(void *arg, unsigned w)
{
	struct fz *f = arg;

	return f->tail[w] - f->head[w];
}

static uint64_t
fz_done(void *arg, unsigned w)
{
	return ((struct fz *)arg)->done[w];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz f;
	static uint32_t flow_of[1 << 16], last_seq[512], next_seq[512], seq_of[1 << 16];
	struct sl_dispatch_tuple t, t2;
	struct sl_dispatch *d;
	uint8_t *frame = malloc(size ? size : 1);

	if (frame == NULL)
		return 0;
	memcpy(frame, data, size);
	sl_dispatch_tuple_extract(frame, (uint32_t)size, &t);
	sl_dispatch_tuple_extract(frame, (uint32_t)size, &t2);
	if (memcmp(&t, &t2, sizeof(t)) != 0 || sl_dispatch_crc32(&t) != sl_dispatch_crc32(&t2))
		abort();
	free(frame);

	memset(&f, 0, sizeof(f));
	f.d = data;
	f.n = size;
	f.n_workers = 1 + next(&f) % 16;
	f.ring = 64;
	struct sl_dispatch_params p = {
		.n_workers = f.n_workers,
		.sched = (enum sl_sched)(next(&f) % SL_SCHED__MAX),
		.threshold = next(&f) / 255.0,
		.burst = 32,
		.out_burst = 1 + next(&f) % 32,
		.ring_size = f.ring,
		.order_buckets = 64,
		.ops = {.enqueue = fz_enqueue, .ring_used = fz_used, .done = fz_done, .arg = &f},
	};
	if (sl_dispatch_create(&p, &d) != 0)
		abort();
	memset(last_seq, 0, sizeof(last_seq));
	memset(next_seq, 0, sizeof(next_seq));
	uint32_t id = 0;
	uint64_t sent = 0;
	while (f.pos < f.n && id < (1 << 16) - 64) {
		void *objs[32];
		uint32_t hashes[32];
		uint16_t tg[32];
		unsigned n = next(&f) % 33;

		for (unsigned i = 0; i < n; i++) {
			uint32_t h = (uint32_t)next(&f) << 24 | (uint32_t)next(&f) << 16 |
				     (uint32_t)next(&f) << 8 | next(&f);
			/* Few flows, so buckets and cache entries are shared and moved. */
			h &= 0x80000f0fu;
			hashes[i] = h;
			/* The oracle's flow: exactly the hash (512 values). */
			flow_of[id] = (h >> 31) << 8 | (h >> 4 & 0xf0) | (h & 0xf);
			seq_of[id] = ++next_seq[flow_of[id]];
			objs[i] = (void *)(uintptr_t)id++;
		}
		sl_dispatch_burst(d, objs, hashes, n, tg);
		sent += n;
		for (unsigned i = 0; i < n; i++)
			if (tg[i] >= f.n_workers)
				abort();
		if (next(&f) & 1)
			sl_dispatch_flush(d);
		/* Workers finish a few packets each, FIFO, in an order the input picks. */
		for (unsigned k = next(&f) % 8; k > 0; k--) {
			unsigned w = next(&f) % f.n_workers;
			for (unsigned m = next(&f) % 8; m > 0 && f.head[w] != f.tail[w]; m--) {
				uint32_t pid = f.q[w][f.head[w]++ % QMAX];
				uint32_t fl = flow_of[pid];
				if (p.sched == SL_SCHED_ORDERED && seq_of[pid] < last_seq[fl])
					abort(); /* ordered mode reordered a flow */
				if (seq_of[pid] > last_seq[fl])
					last_seq[fl] = seq_of[pid];
				f.done[w]++;
			}
		}
	}
	uint64_t total = 0;
	for (unsigned w = 0; w < f.n_workers; w++) {
		struct sl_dispatch_worker_stats st;
		sl_dispatch_worker_stats(d, w, &st);
		if (st.packets != st.enqueued + st.ring_full + sl_dispatch_pending(d, w))
			abort();
		total += st.packets;
	}
	if (total != sent)
		abort();
	sl_dispatch_flush(d);
	sl_dispatch_destroy(d);
	return 0;
}
