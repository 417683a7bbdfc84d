/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * idle: adaptive idle sleep for a polling loop.
 *
 * A datapath loop polls; when a round finds nothing to do it calls
 * sl_idle_round(s, false).  After `poll_rounds` empty rounds in a row it
 * starts sleeping: 1 us, then twice as long after every further empty
 * round, up to max_us.  The first busy round resets it, so a loaded switch
 * never sleeps and an idle one wakes about 1/max_us times a second
 * (DPDK l3fwd-power does the same with rte_delay_us_sleep).  The cost is
 * latency for the first packet after an idle period: up to max_us (the
 * sleeping thread's timer slack is lowered to 1 us at its first sleep).  max_us 0 turns it off
 * (pure polling).
 *
 * The sleep is a syscall: it only happens when the loop has nothing to do.
 * Counters (sleeps, slept_ns) are written by the loop's thread only and
 * read by others (aligned 64-bit words).
 */
#ifndef SL_IDLE_H
#define SL_IDLE_H

#include <stdbool.h>
#include <stdint.h>

/** Longest sleep allowed (us). */
#define SL_IDLE_MAX_US 100000u
/** Empty rounds before the first sleep, by default. */
#define SL_IDLE_POLL_ROUNDS 64u

struct sl_idle {
	uint32_t max_us;      /* longest sleep; 0 = never sleep */
	uint32_t poll_rounds; /* empty rounds polled before sleeping */
	uint32_t empty;       /* consecutive empty rounds */
	uint32_t next_us;     /* the next sleep */
	uint64_t sleeps;      /* sleeps taken */
	uint64_t slept_ns;    /* time spent in them (measured) */
	bool slack_set;       /* the thread's timer slack was lowered to 1 us */
};

/**
 * Configure (counters cleared).  @param max_us  0..SL_IDLE_MAX_US.
 * @return 0, -EINVAL.  Init only.
 */
int sl_idle_init(struct sl_idle *s, uint32_t max_us);

/** Sleep for s->next_us and double it (the slow part of sl_idle_round).  Loop thread. */
void sl_idle_sleep(struct sl_idle *s);

/** Account one loop round; sleeps when idle long enough.  Loop thread. */
static inline void
sl_idle_round(struct sl_idle *s, bool busy)
{
	if (busy) {
		s->empty = 0;
		s->next_us = 1;
		return;
	}
	if (s->max_us != 0 && ++s->empty > s->poll_rounds)
		sl_idle_sleep(s);
}

#endif /* SL_IDLE_H */
