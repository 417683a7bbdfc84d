/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: AF_PACKET fanout group ids that do not collide.
 *
 * DPDK 22.11's af_packet PMD puts every queue socket of a port in the fanout
 * group (getpid() ^ ifindex) & 0xffff, and has no devarg to choose another.
 * Group ids are per network namespace, and the kernel refuses (EINVAL) to
 * join a group that exists for another device or mode: a second switch in
 * the namespace whose PID ^ ifindex equals the first's, or any other program
 * holding that id, made the port (and so the switch) fail at start.
 *
 * The PMD asks through setsockopt(), so Sluice defines setsockopt() itself
 * (the build exports it, so the dlopen'ed PMD binds to it) and forwards
 * every call to the next definition (libc's, or a sanitizer's), unchanged,
 * with one exception: a PACKET_FANOUT join that fails with EINVAL is made
 * again with PACKET_FANOUT_FLAG_UNIQUEID, so the kernel picks an id no group
 * of the namespace has, with the same mode and flags.  The original
 * (argument, interface) -> new id pair is remembered with one of the group's
 * sockets, so the port's other queue sockets, which the PMD sends with the
 * same argument, join that group instead of trying the taken id.
 *
 * Why this is safe: only a join the kernel refused changes; the new id is
 * free when taken, so no other program's group is joined; the kernel itself
 * lets a socket join a group only for the same device and mode, so a stale
 * pair can never merge two ports (it is dropped when its socket is no longer
 * in the group); and the id is the kernel's and the PMD's business only:
 * nothing outside this process, nor the PMD after probing, reads it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../log/log.h"

typedef int (*setsockopt_fn)(int fd, int level, int optname, const void *optval, socklen_t optlen);

/* Remembered remaps: one per colliding port, a handful per process. */
#define REMAPS_MAX 64

struct remap {
	uint32_t arg;     /* what the PMD asked: id | (mode | flags) << 16 */
	unsigned ifindex; /* the interface its socket is bound to */
	uint32_t new_arg; /* the same with the kernel's free id */
	int anchor_fd;    /* a socket that joined new_arg's group */
};

static struct remap remaps[REMAPS_MAX];
static unsigned n_remaps;
static pthread_mutex_t remaps_lock = PTHREAD_MUTEX_INITIALIZER;

static int
raw_setsockopt(int fd, int level, int optname, const void *optval, socklen_t optlen)
{
	return (int)syscall(SYS_setsockopt, fd, level, optname, optval, optlen);
}

/* The definition this one hides: libc's, or an interposer's loaded before libc. */
static setsockopt_fn
next_setsockopt(void)
{
	static setsockopt_fn next;
	setsockopt_fn fn = __atomic_load_n(&next, __ATOMIC_ACQUIRE);

	if (fn == NULL) {
		fn = (setsockopt_fn)dlsym(RTLD_NEXT, "setsockopt");
		if (fn == NULL)
			fn = raw_setsockopt; /* a static build: no next definition to find */
		__atomic_store_n(&next, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

static unsigned
bound_ifindex(int fd)
{
	struct sockaddr_ll sll;
	socklen_t len = sizeof(sll);

	memset(&sll, 0, sizeof(sll));
	if (getsockname(fd, (struct sockaddr *)&sll, &len) < 0 || sll.sll_family != AF_PACKET)
		return 0;
	return (unsigned)sll.sll_ifindex;
}

/* Whether @r's socket is still in its group (else the group may be gone, its id free). */
static bool
remap_alive(const struct remap *r)
{
	uint32_t v = 0;
	socklen_t len = sizeof(v);

	return getsockopt(r->anchor_fd, SOL_PACKET, PACKET_FANOUT, &v, &len) == 0 &&
	       v == r->new_arg && bound_ifindex(r->anchor_fd) == r->ifindex;
}

static struct remap *
remap_find(uint32_t arg, unsigned ifindex)
{
	for (unsigned i = 0; i < n_remaps; i++)
		if (remaps[i].arg == arg && remaps[i].ifindex == ifindex)
			return &remaps[i];
	return NULL;
}

static void
remap_save(uint32_t arg, unsigned ifindex, uint32_t new_arg, int fd)
{
	struct remap *r = remap_find(arg, ifindex);

	for (unsigned i = 0; r == NULL && i < n_remaps; i++)
		if (!remap_alive(&remaps[i]))
			r = &remaps[i]; /* a port gone since: reuse its slot */
	if (r == NULL && n_remaps < REMAPS_MAX)
		r = &remaps[n_remaps++];
	if (r == NULL)
		return; /* more sockets then try the taken id first, and get a group each */
	*r = (struct remap){.arg = arg, .ifindex = ifindex, .new_arg = new_arg, .anchor_fd = fd};
}

/*
 * A PACKET_FANOUT join (SOL_PACKET, an int argument).  Returns what
 * setsockopt returns; errno is the first attempt's when every attempt fails.
 */
static int
fanout_join(setsockopt_fn next, int fd, uint32_t arg)
{
	const uint32_t unique = PACKET_FANOUT_FLAG_UNIQUEID << 16;
	unsigned ifindex = bound_ifindex(fd);
	uint32_t new_arg = 0;
	socklen_t len = sizeof(new_arg);
	char ifname[IF_NAMESIZE] = "?";
	struct remap *r;
	int rc, err;

	if (arg & unique)
		return next(fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg));
	pthread_mutex_lock(&remaps_lock);
	r = remap_find(arg, ifindex);
	if (r != NULL && remap_alive(r) &&
	    next(fd, SOL_PACKET, PACKET_FANOUT, &r->new_arg, sizeof(r->new_arg)) == 0) {
		pthread_mutex_unlock(&remaps_lock);
		return 0;
	}
	rc = next(fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg));
	err = errno;
	if (rc == 0 || err != EINVAL) {
		pthread_mutex_unlock(&remaps_lock);
		errno = err;
		return rc;
	}
	/* The id is another group's (another device or mode): the kernel picks a free one. */
	new_arg = (arg & 0xffff0000u) | unique;
	if (next(fd, SOL_PACKET, PACKET_FANOUT, &new_arg, sizeof(new_arg)) < 0 ||
	    getsockopt(fd, SOL_PACKET, PACKET_FANOUT, &new_arg, &len) < 0) {
		pthread_mutex_unlock(&remaps_lock);
		errno = err;
		return -1;
	}
	remap_save(arg, ifindex, new_arg, fd);
	pthread_mutex_unlock(&remaps_lock);
	if_indextoname(ifindex, ifname);
	SL_LOG(INFO, port,
	       "AF_PACKET fanout group 0x%04x on %s (ifindex %u) is taken in this network "
	       "namespace: the port's sockets use group 0x%04x",
	       arg & 0xffff, ifname, ifindex, new_arg & 0xffff);
	return 0;
}

/* Every setsockopt of the process comes here; all but PACKET_FANOUT go straight on. */
int
setsockopt(int fd, int level, int optname, const void *optval, socklen_t optlen)
{
	setsockopt_fn next = next_setsockopt();
	uint32_t arg;

	if (level != SOL_PACKET || optname != PACKET_FANOUT || optval == NULL ||
	    optlen != sizeof(arg))
		return next(fd, level, optname, optval, optlen);
	memcpy(&arg, optval, sizeof(arg));
	return fanout_join(next, fd, arg);
}
