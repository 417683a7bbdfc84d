/* SPDX-License-Identifier: BSD-3-Clause */
/* test_log: level names, TYPE:LEVEL parsing, patterns.  No EAL needed. */
#include <errno.h>
#include <string.h>

#include "../core/sl_test.h"
#include "log.h"

int
main(void)
{
	char err[256];

	CHECK(sl_log_level_parse("debug") == RTE_LOG_DEBUG, "%s", err);
	CHECK(sl_log_level_parse("ERROR") == RTE_LOG_ERR, "%s", err);
	CHECK(sl_log_level_parse("warn") == RTE_LOG_WARNING, "%s", err);
	CHECK(sl_log_level_parse("7") == RTE_LOG_INFO, "%s", err);
	CHECK(sl_log_level_parse("9") < 0, "%s", err);
	CHECK(sl_log_level_parse("loud") < 0, "%s", err);
	CHECK(strcmp(sl_log_level_name(RTE_LOG_NOTICE), "notice") == 0, "%s", err);

	/* Default NOTICE; a glob sets all eight, a bare name one. */
	CHECK(rte_log_get_level(sl_logtype_ofswitch) == RTE_LOG_NOTICE, "%s", err);
	CHECK(sl_log_set("sluice.*", "debug", err, sizeof(err)) == 8, "%s", err);
	CHECK(rte_log_get_level(sl_logtype_port) == RTE_LOG_DEBUG, "%s", err);
	CHECK(sl_log_set("ofconn:err", NULL, err, sizeof(err)) == 1, "%s", err);
	CHECK(rte_log_get_level(sl_logtype_ofconn) == RTE_LOG_ERR, "%s", err);
	CHECK(rte_log_get_level(sl_logtype_app) == RTE_LOG_DEBUG, "%s", err);

	/* Errors name the offending value. */
	CHECK(sl_log_set("sluice.app", "loud", err, sizeof(err)) == -EINVAL, "%s", err);
	CHECK(strstr(err, "'loud'") != NULL, "%s", err);
	CHECK(sl_log_set("sluice.nosuch", "info", err, sizeof(err)) == -EINVAL, "%s", err);
	CHECK(strstr(err, "sluice.nosuch") != NULL, "%s", err);
	CHECK(sl_log_set("noleveltoken", NULL, err, sizeof(err)) == -EINVAL, "%s", err);
	CHECK(strstr(err, "TYPE:LEVEL") != NULL, "%s", err);
	return sl_test_summary();
}
