/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * notify: the datagram arrives, whole, at a path socket and at an abstract
 * one; nothing happens without $NOTIFY_SOCKET; a relative path is refused.
 */
#include "notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);   \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* Bind a datagram socket at @name (a path, or "@..." abstract). */
static int
bind_at(const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len = strlen(name);
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	memcpy(sa.sun_path, name, len);
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa,
			   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0) {
		perror("bind");
		exit(1);
	}
	return fd;
}

static void
expect(int fd, const char *want)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	CHECK(n == (ssize_t)strlen(want));
	if (n >= 0) {
		buf[n] = '\0';
		CHECK(strcmp(buf, want) == 0);
	}
}

int
main(void)
{
	char path[108], abstract[64];
	int fd;

	unsetenv("NOTIFY_SOCKET");
	CHECK(sl_notify("READY=1") == 0);

	snprintf(path, sizeof(path), "/tmp/sl_notify_test.%d", (int)getpid());
	unlink(path);
	fd = bind_at(path);
	setenv("NOTIFY_SOCKET", path, 1);
	CHECK(sl_notify("READY=1") == 1);
	expect(fd, "READY=1");
	CHECK(sl_notifyf("RELOADING=1\nSTATUS=%s", "reloading") == 1);
	expect(fd, "RELOADING=1\nSTATUS=reloading");
	close(fd);
	unlink(path);
	CHECK(sl_notify("READY=1") == -ENOENT || sl_notify("READY=1") == -ECONNREFUSED);

	snprintf(abstract, sizeof(abstract), "@sl_notify_test.%d", (int)getpid());
	fd = bind_at(abstract);
	setenv("NOTIFY_SOCKET", abstract, 1);
	CHECK(sl_notify("STOPPING=1") == 1);
	expect(fd, "STOPPING=1");
	close(fd);

	setenv("NOTIFY_SOCKET", "relative/path", 1);
	CHECK(sl_notify("READY=1") == -EINVAL);
	if (failures == 0)
		printf("test_notify: OK\n");
	return failures != 0;
}
