/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log: Sluice's rte_log types, one per component, and the log stream.
 *
 * Types are "sluice.<component>" (sluice.app, sluice.ofswitch, ...), so
 * DPDK's own --log-level=sluice.*:debug works, and so do Sluice's
 * --log-level option and the /sluice/log/level telemetry command at run
 * time.  sl_log_init() routes every rte_log message (EAL's included) to
 * stderr with a UTC timestamp in front of each line.
 *
 * The datapath never logs per packet: workers count, the control thread
 * logs.  Levels are rte_log's (RTE_LOG_ERR ... RTE_LOG_DEBUG, syslog + 1).
 */
#ifndef SL_LOG_H
#define SL_LOG_H

#include <stddef.h>
#include <stdint.h>

#include <rte_log.h>

/* The components that log; SL_LOG(level, comp, ...) takes the lower-case name. */
#define SL_FOREACH_LOG_TYPE(_)                                                                     \
	_(app)                                                                                     \
	_(mgmt)                                                                                    \
	_(capture)                                                                                 \
	_(ofswitch)                                                                                \
	_(ofconn)                                                                                  \
	_(pipeline)                                                                                \
	_(worker)                                                                                  \
	_(port)

#define SL_LOG_DECLARE_(c) extern int sl_logtype_##c;
SL_FOREACH_LOG_TYPE(SL_LOG_DECLARE_)
#undef SL_LOG_DECLARE_

/** Log a line (no trailing newline needed) at RTE_LOG_<level> on sluice.<comp>. */
#define SL_LOG(level, comp, fmt, ...)                                                              \
	rte_log(RTE_LOG_##level, sl_logtype_##comp, "sluice." #comp ": " fmt "\n", ##__VA_ARGS__)

/**
 * Send rte_log output to stderr with a timestamp per line.  Call once,
 * before rte_eal_init so EAL's messages get timestamps too.
 * @return 0 or -errno.  Init only.
 */
int sl_log_init(void);

/**
 * Parse a level name ("emerg", "alert", "crit", "err"/"error",
 * "warning"/"warn", "notice", "info", "debug") or number 1..8.
 * @return the RTE_LOG_* value, or -EINVAL.
 */
int sl_log_level_parse(const char *name);

/** Name of an RTE_LOG_* level ("debug"...); "?" when out of range. */
const char *sl_log_level_name(int level);

/**
 * Set the level of every log type matching @pattern (a type name, or a
 * glob such as "sluice.*"; a bare component name "ofswitch" means
 * "sluice.ofswitch").  Also parses "PATTERN:LEVEL" when @level is NULL.
 * @return the number of types changed (>= 1), or -EINVAL with @err naming
 *         the bad level or a pattern that matches no type.  Any thread.
 */
int sl_log_set(const char *pattern, const char *level, char *err, size_t err_size);

/** Call @fn for every sluice.* log type: its name and current level. */
void sl_log_types(void (*fn)(void *arg, const char *name, int level), void *arg);

#endif /* SL_LOG_H */
