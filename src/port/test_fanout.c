/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_fanout: PACKET_FANOUT joins through Sluice's setsockopt (fanout.c),
 * on lo of a network namespace of its own (skipped without CAP_SYS_ADMIN).
 */
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "../core/sl_test.h"

#define SKIP 77 /* meson: the test was skipped */

static int
packet_socket(void)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_ALL),
				  .sll_ifindex = (int)if_nametoindex("lo")};
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
join(int fd, uint32_t arg)
{
	return setsockopt(fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg));
}

static uint32_t
group_of(int fd)
{
	uint32_t v = 0;
	socklen_t len = sizeof(v);

	getsockopt(fd, SOL_PACKET, PACKET_FANOUT, &v, &len);
	return v;
}

int
main(void)
{
	/* What DPDK's af_packet PMD asks for. */
	const uint32_t mode =
		(PACKET_FANOUT_HASH | PACKET_FANOUT_FLAG_DEFRAG | PACKET_FANOUT_FLAG_ROLLOVER)
		<< 16;
	const uint32_t taken = 0x1234, free_id = 0x4321;
	struct ifreq ifr;
	int other, q0, q1, q2, fd;

	if (unshare(CLONE_NEWNET) < 0) {
		printf("skipped: unshare(CLONE_NEWNET): %s\n", strerror(errno));
		return SKIP;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	ifr.ifr_flags = IFF_UP;
	CHECK(fd >= 0 && ioctl(fd, SIOCSIFFLAGS, &ifr) == 0, "lo up: %s", strerror(errno));
	close(fd);

	/* Another program holds the id in another mode: the kernel refuses ours (EINVAL). */
	other = packet_socket();
	CHECK(other >= 0 && join(other, taken | PACKET_FANOUT_LB << 16) == 0, "%s",
	      strerror(errno));

	/* A port's two queue sockets: both join, one group, the same mode, another id. */
	q0 = packet_socket();
	q1 = packet_socket();
	CHECK(join(q0, taken | mode) == 0, "queue 0: %s", strerror(errno));
	CHECK(join(q1, taken | mode) == 0, "queue 1: %s", strerror(errno));
	CHECK(group_of(q0) == group_of(q1), "%#x vs %#x", group_of(q0), group_of(q1));
	CHECK((group_of(q0) & 0xffff) != taken, "%#x", group_of(q0));
	CHECK((group_of(q0) & 0xffff0000u) == mode, "%#x", group_of(q0));
	CHECK(group_of(other) == (taken | PACKET_FANOUT_LB << 16), "%#x", group_of(other));

	/* The port closes; opened again, its first socket makes a group again. */
	close(q0);
	close(q1);
	q2 = packet_socket();
	CHECK(join(q2, taken | mode) == 0, "%s", strerror(errno));
	CHECK((group_of(q2) & 0xffff) != taken && (group_of(q2) & 0xffff0000u) == mode, "%#x",
	      group_of(q2));

	/* A free id is joined as asked; other errors stay what the kernel said. */
	fd = packet_socket();
	CHECK(join(fd, free_id | mode) == 0 && group_of(fd) == (free_id | mode), "%#x",
	      group_of(fd));
	errno = 0;
	CHECK(join(fd, taken | mode) < 0 && errno == EALREADY, "%s", strerror(errno));
	close(fd);
	close(q2);
	close(other);
	return sl_test_summary();
}
