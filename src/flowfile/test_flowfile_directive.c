/* SPDX-License-Identifier: BSD-3-Clause */
/* Flow files with a "fwd-mode=" directive line (sl_flowfile_load_cb). */
#include "flowfile.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/sl_test.h"

static unsigned n_flows, n_tables, n_dirs, dir_line;
static char dir_value[256];

static int
on_table(void *arg, const struct sl_table_spec *ts, struct sl_parse_error *err)
{
	(void)arg, (void)ts, (void)err;
	n_tables++;
	return 0;
}

static int
on_flow(void *arg, const struct sl_flow_spec *fs, struct sl_parse_error *err)
{
	(void)arg, (void)fs, (void)err;
	n_flows++;
	return 0;
}

static int
on_directive(void *arg, const char *name, const char *value, struct sl_parse_error *err)
{
	(void)arg;
	if (strcmp(value, "refuse") == 0) {
		snprintf(err->msg, sizeof(err->msg), "refused");
		return -EINVAL;
	}
	CHECK(strcmp(name, "fwd-mode") == 0, "name %s", name);
	snprintf(dir_value, sizeof(dir_value), "%s", value);
	dir_line = err->line;
	n_dirs++;
	return 0;
}

static int
load(const char *text, bool with_directive, struct sl_parse_error *pe)
{
	char path[] = "/tmp/sl_ffdirXXXXXX";
	int fd = mkstemp(path), rc;
	struct sl_flowfile_callbacks cb = {on_table, on_flow, with_directive ? on_directive : NULL};

	SL_VERIFY(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	n_flows = n_tables = n_dirs = 0;
	rc = sl_flowfile_load_cb(path, &cb, NULL, pe);
	unlink(path);
	return rc;
}

int
main(void)
{
	struct sl_parse_error pe;
	char buf[512];

	CHECK(load("table=1,kind=exact,fields=dl_dst\n"
		   "# forwarding modes\n"
		   "  fwd-mode=hypercube:addr=5,nbr=4@1;keyflow:key=13   # comment\n"
		   "priority=1,actions=output:2\n",
		   true, &pe) == 0,
	      "load: %s", pe.msg);
	CHECK(n_tables == 1 && n_flows == 1 && n_dirs == 1, "one of each");
	CHECK(strcmp(dir_value, "hypercube:addr=5,nbr=4@1;keyflow:key=13") == 0, "value '%s'",
	      dir_value);
	CHECK(dir_line == 3, "line %u", dir_line);
	CHECK(load("fwd-mode=hypercube\\\n:addr=1\n", true, &pe) == 0 &&
		      strcmp(dir_value, "hypercube :addr=1") == 0,
	      "continued line joined: '%s'", dir_value);
	CHECK(load("priority=1,actions=drop\nfwd-mode=refuse\n", true, &pe) == -EINVAL, "refused");
	sl_parse_error_format(&pe, buf, sizeof(buf));
	CHECK(strstr(buf, ":2:") != NULL && strstr(buf, "refused") != NULL,
	      "error names line 2: %s", buf);
	CHECK(load("fwd-mode=keyflow:key=5\n", false, &pe) == 0 && n_dirs == 0,
	      "NULL callback accepts directives");
	CHECK(sl_flowfile_load("/dev/null", on_table, on_flow, NULL, &pe) == 0, "plain loader");
	return sl_test_summary();
}
