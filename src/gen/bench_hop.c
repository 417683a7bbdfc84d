/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_hop: what one frame costs to cross from the generator's core to the
 * switch's core, without DPDK, so the harness's transport can be judged
 * against the hardware it runs on.
 *
 *   1. one cache line bounced between two threads pinned to CPUs A and B:
 *      the round trip of a line, the unit every cross-core hop pays;
 *   2. a single-producer single-consumer ring of SLOTS entries, A -> B,
 *      carrying either 128-byte copies in slots of 2 KB (what net_memif does
 *      with its shared buffers) or pointers to 2 KB buffers whose first two
 *      lines the consumer reads (what an rte_ring of mbufs would do);
 *   3. the longest gap between two iterations of each loop: a thread that
 *      does not run for that long (descheduled) cannot drain or fill a ring,
 *      so on a shared machine a ring of S slots at R frames/s loses frames
 *      whenever a gap exceeds S / R, however cheap the hop is.
 *
 * Usage: bench_hop [CPU_A CPU_B [FRAMES]]  (default 0 1 20000000)
 *        bench_hop --placement [MS]  (CPUs 0 and 1, default 20 ms)
 *
 * --placement prints only the line's round trip ("line_rt_cycles N"): the
 * decomposition benchmark's probe of where the host runs the two vCPUs
 * (about 300 cycles when they share a core's caches, 1,300 when not, and the
 * memif hop's cost follows it; docs/sluice-gen.md).  N is the 5th percentile
 * of the single pings over MS: a switch polling on CPU 1 between trials
 * time-slices the ponger, and only the pings while both run tell the caches.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>

#define SLOTS 1024
#define SLOT_SIZE 2048
#define FRAME 128
#define BURST 32
#define PINGS 1000000
#define PLACEMENT_SAMPLES (1 << 18)

struct ring {
	_Alignas(64) uint64_t head; /* written by the producer */
	_Alignas(64) uint64_t tail; /* written by the consumer */
};

static struct ring q;
static _Alignas(64) uint64_t ping;
static _Alignas(64) uint64_t pong;
static uint8_t *slots; /* copy mode: the shared buffers */
static uint8_t *bufs;  /* pointer mode: the producer's buffers */
static uint8_t *ptrs[SLOTS];
static int cpu_a, cpu_b, copy_mode;
static uint64_t n_frames, gap_cons;
static volatile bool pong_stop;

static void
pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

static void *
ponger(void *arg)
{
	pin(cpu_b);
	for (uint64_t i = 1; !pong_stop; i++) {
		while (__atomic_load_n(&ping, __ATOMIC_ACQUIRE) != i)
			if (pong_stop)
				return arg;
		__atomic_store_n(&pong, i, __ATOMIC_RELEASE);
	}
	return arg;
}

static void *
consumer(void *arg)
{
	uint64_t t = 0, last = rte_rdtsc(), sum = 0;
	uint8_t tmp[FRAME];

	pin(cpu_b);
	while (t < n_frames) {
		uint64_t h = __atomic_load_n(&q.head, __ATOMIC_ACQUIRE), now = rte_rdtsc();

		if (now - last > gap_cons)
			gap_cons = now - last;
		last = now;
		for (; t < h; t++) {
			if (copy_mode) {
				memcpy(tmp, slots + (t % SLOTS) * SLOT_SIZE, FRAME);
				sum += tmp[0] + tmp[FRAME - 1];
			} else {
				const uint8_t *p = ptrs[t % SLOTS];
				sum += p[0] +
				       p[64]; /* the mbuf header and the frame's first line */
			}
		}
		__atomic_store_n(&q.tail, t, __ATOMIC_RELEASE);
	}
	*(volatile uint64_t *)arg = sum;
	return NULL;
}

static void
ring_run(int mode, double hz)
{
	uint8_t frame[FRAME];
	uint64_t h = 0, gap_prod = 0, sum;
	pthread_t th;

	memset(frame, 7, sizeof(frame));
	copy_mode = mode;
	q.head = q.tail = 0;
	gap_cons = 0;
	pthread_create(&th, NULL, consumer, &sum);
	uint64_t t0 = rte_rdtsc(), last = t0;
	while (h < n_frames) {
		uint64_t tl = __atomic_load_n(&q.tail, __ATOMIC_ACQUIRE), now = rte_rdtsc();
		uint64_t end = h + BURST < tl + SLOTS ? h + BURST : tl + SLOTS;

		if (end > n_frames)
			end = n_frames;
		if (now - last > gap_prod)
			gap_prod = now - last;
		last = now;
		for (; h < end; h++) {
			if (mode) {
				memcpy(slots + (h % SLOTS) * SLOT_SIZE, frame, FRAME);
			} else {
				uint8_t *p = bufs + (h % SLOTS) * SLOT_SIZE;
				p[0] = (uint8_t)h;
				p[64] = 1;
				ptrs[h % SLOTS] = p;
			}
		}
		__atomic_store_n(&q.head, h, __ATOMIC_RELEASE);
	}
	pthread_join(th, NULL);
	double cyc = (double)(rte_rdtsc() - t0) / (double)n_frames;
	printf("%-34s %7.1f TSC cycles/frame = %6.1f Mpps; longest stall: producer %.2f ms, "
	       "consumer %.2f ms\n",
	       mode ? "128-byte copies (memif-like)" : "pointers, 2 lines read (ring-like)", cyc,
	       hz / cyc / 1e6, (double)gap_prod * 1e3 / hz, (double)gap_cons * 1e3 / hz);
}

/* The TSC rate, without EAL: @secs against CLOCK_MONOTONIC. */
static double
tsc_hz_over(double secs)
{
	struct timespec ts0, ts1;
	double d;

	clock_gettime(CLOCK_MONOTONIC, &ts0);
	uint64_t c0 = rte_rdtsc();
	do {
		clock_gettime(CLOCK_MONOTONIC, &ts1);
		d = (double)(ts1.tv_sec - ts0.tv_sec) + (double)(ts1.tv_nsec - ts0.tv_nsec) / 1e9;
	} while (d < secs);
	return (double)(rte_rdtsc() - c0) / d;
}

static double
tsc_hz(void)
{
	return tsc_hz_over(0.2);
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 * The cache line's round trip between CPUs cpu_a and cpu_b, TSC cycles: the
 * mean of @n pings, or (@samples) their 5th percentile within @cycles.
 */
static double
line_round_trip(uint64_t n, uint64_t cycles, uint32_t *samples)
{
	uint64_t i = 0, t0, t_end, k = 0;
	pthread_t th;

	ping = pong = 0;
	pong_stop = false;
	pthread_create(&th, NULL, ponger, NULL);
	t0 = rte_rdtsc();
	t_end = t0 + cycles;
	for (;;) {
		uint64_t s = rte_rdtsc();
		if (samples != NULL ? s >= t_end : i == n)
			break;
		__atomic_store_n(&ping, ++i, __ATOMIC_RELEASE);
		while (__atomic_load_n(&pong, __ATOMIC_ACQUIRE) != i)
			;
		if (samples != NULL && k < PLACEMENT_SAMPLES)
			samples[k++] = (uint32_t)RTE_MIN(rte_rdtsc() - s, (uint64_t)UINT32_MAX);
	}
	uint64_t t1 = rte_rdtsc();
	pong_stop = true;
	pthread_join(th, NULL);
	if (samples == NULL)
		return (double)(t1 - t0) / (double)n;
	qsort(samples, k, sizeof(*samples), cmp_u32);
	return k ? samples[k / 20] : 0;
}

int
main(int argc, char **argv)
{

	if (argc > 1 && strcmp(argv[1], "--placement") == 0) {
		double ms = argc > 2 ? atof(argv[2]) : 20;
		uint32_t *samples = malloc(PLACEMENT_SAMPLES * sizeof(*samples));

		if (!(ms > 0 && ms <= 10000) || samples == NULL)
			return 2;
		cpu_a = 0;
		cpu_b = 1;
		pin(cpu_a);
		printf("line_rt_cycles %.0f\n",
		       line_round_trip(0, (uint64_t)(ms * 1e-3 * tsc_hz_over(0.01)), samples));
		free(samples);
		return 0;
	}
	cpu_a = argc > 2 ? atoi(argv[1]) : 0;
	cpu_b = argc > 2 ? atoi(argv[2]) : 1;
	n_frames = argc > 3 ? strtoull(argv[3], NULL, 10) : 20000000ULL;
	double hz = tsc_hz();

	slots = aligned_alloc(4096, (size_t)SLOTS * SLOT_SIZE);
	bufs = aligned_alloc(4096, (size_t)SLOTS * SLOT_SIZE);
	if (slots == NULL || bufs == NULL)
		return 1;
	memset(slots, 1, (size_t)SLOTS * SLOT_SIZE);
	memset(bufs, 1, (size_t)SLOTS * SLOT_SIZE);
	pin(cpu_a);
	printf("TSC %.2f GHz, CPUs %d -> %d, %d-slot ring, bursts of %d\n", hz / 1e9, cpu_a, cpu_b,
	       SLOTS, BURST);

	double rt = line_round_trip(PINGS, 0, NULL);
	printf("%-34s %7.1f TSC cycles round trip (%.0f ns)\n", "cache line ping-pong", rt,
	       rt * 1e9 / hz);
	ring_run(1, hz);
	ring_run(0, hz);
	free(slots);
	free(bufs);
	return 0;
}
