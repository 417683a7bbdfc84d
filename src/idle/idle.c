/* SPDX-License-Identifier: BSD-3-Clause */
/* Adaptive idle sleep (see idle.h). */
#include "idle.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

int
sl_idle_init(struct sl_idle *s, uint32_t max_us)
{
	memset(s, 0, sizeof(*s));
	if (max_us > SL_IDLE_MAX_US)
		return -EINVAL;
	s->max_us = max_us;
	s->poll_rounds = SL_IDLE_POLL_ROUNDS;
	s->next_us = 1;
	return 0;
}

void
sl_idle_sleep(struct sl_idle *s)
{
	struct timespec t0, t1,
		d = {.tv_sec = s->next_us / 1000000,
		     .tv_nsec = (long)(s->next_us % 1000000) * 1000};

	if (!s->slack_set) {
		/* The default 50 us timer slack would stretch every short sleep (this thread only).
		 */
		prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
		s->slack_set = true;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	nanosleep(&d, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s->sleeps++;
	s->slept_ns +=
		(uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec));
	s->next_us = s->next_us * 2 > s->max_us ? s->max_us : s->next_us * 2;
}
