/* SPDX-License-Identifier: BSD-3-Clause */
/* idle: the backoff sequence, the reset on work, and the off switch (no timing asserted). */
#include "idle.h"

#include <errno.h>

#include "../core/sl_test.h"

int
main(void)
{
	struct sl_idle s;

	CHECK(sl_idle_init(&s, SL_IDLE_MAX_US + 1) == -EINVAL, "max too big");
	CHECK(sl_idle_init(&s, 0) == 0, "off");
	for (unsigned i = 0; i < 1000; i++)
		sl_idle_round(&s, false);
	CHECK(s.sleeps == 0, "max 0 never sleeps");

	CHECK(sl_idle_init(&s, 8) == 0, "max 8 us");
	for (unsigned i = 0; i < SL_IDLE_POLL_ROUNDS; i++)
		sl_idle_round(&s, false);
	CHECK(s.sleeps == 0, "polls %u rounds first", SL_IDLE_POLL_ROUNDS);
	sl_idle_round(&s, false);
	CHECK(s.sleeps == 1 && s.next_us == 2, "first sleep 1 us, next 2");
	sl_idle_round(&s, false);
	sl_idle_round(&s, false);
	CHECK(s.sleeps == 3 && s.next_us == 8, "doubles: next %u", s.next_us);
	sl_idle_round(&s, false);
	CHECK(s.next_us == 8, "capped at max");
	CHECK(s.slept_ns > 0, "sleep time measured");
	sl_idle_round(&s, true);
	CHECK(s.empty == 0 && s.next_us == 1, "work resets the backoff");
	sl_idle_round(&s, false);
	CHECK(s.sleeps == 4, "polls again after work");
	return sl_test_summary();
}
