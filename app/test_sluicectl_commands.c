/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* open_memstream, popen */
#endif
/*
 * test_sluicectl_commands: the command table is the one list of sluicectl's
 * commands.  Every row is well formed, found by its name, listed by --help
 * (which is built from it), documented in docs/sluicectl.md (the source of
 * the man page) and offered by the bash completion (which reads --help).
 *
 * Usage: test_sluicectl_commands DOC COMPLETION SLUICECTL
 */
#include "sluicectl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/core/sl_test.h"

/* The whole of file @path, NUL-terminated (NULL when unreadable). */
static char *
read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t size = 0;
	FILE *m;

	if (f == NULL)
		return NULL;
	m = open_memstream(&text, &size);
	for (int c; (c = getc(f)) != EOF;)
		putc(c, m);
	fclose(f);
	fclose(m);
	return text;
}

/* Whether @text has a line starting with @prefix followed by @ends (one of its characters). */
static bool
has_line(const char *text, const char *prefix, const char *ends)
{
	size_t n = strlen(prefix);

	for (const char *l = text; l != NULL; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, prefix, n) == 0 && l[n] != '\0' && strchr(ends, l[n]) != NULL)
			return true;
	return false;
}

/* Whether @text holds "`NAME" followed by ' ' or '`' (a command as the docs quote it). */
static bool
documented(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strchr(text, '`'); p != NULL; p = strchr(p + 1, '`'))
		if (strncmp(p + 1, name, n) == 0 && (p[n + 1] == ' ' || p[n + 1] == '`'))
			return true;
	return false;
}

static void
test_rows(void)
{
	for (size_t i = 0; i < sl_ctl_n_commands; i++) {
		const struct sl_ctl_command *c = &sl_ctl_commands[i];

		CHECK(sl_ctl_command_find(c->name) == c, "%s: found, and only once", c->name);
		CHECK((c->run == NULL) != (c->run_of == NULL), "%s: one run function", c->name);
		CHECK(c->args != NULL && c->needs != 0, "%s: synopsis and needs", c->name);
		CHECK(c->min_args >= 0 && (c->max_args < 0 || c->max_args >= c->min_args),
		      "%s: %d..%d arguments", c->name, c->min_args, c->max_args);
		CHECK(c->opts < (1u << CMD_OPT__MAX), "%s: options", c->name);
	}
	CHECK(sl_ctl_command_find("bogus") == NULL && sl_ctl_command_find("") == NULL, "unknown");
	CHECK(sl_ctl_n_commands >= 40, "%zu commands", sl_ctl_n_commands);
}

static void
test_help_and_docs(const char *doc_path)
{
	char *help = NULL, *doc = read_file(doc_path), prefix[64];
	size_t size = 0;
	FILE *f = open_memstream(&help, &size);

	usage(f);
	fclose(f);
	CHECK(doc != NULL, "cannot read %s", doc_path);
	for (size_t i = 0; i < sl_ctl_n_commands && doc != NULL; i++) {
		const char *name = sl_ctl_commands[i].name;

		snprintf(prefix, sizeof(prefix), "  %s", name);
		CHECK(has_line(help, prefix, " \n"), "--help lists %s", name);
		CHECK(documented(doc, name), "%s documents %s", doc_path, name);
	}
	free(help);
	free(doc);
}

/* The completion's commands: what it offers for an empty first word. */
static void
test_completion(const char *completion, const char *exe)
{
	char cmd[4096], line[256];
	unsigned n = 0;
	bool seen[256] = {false};
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "bash -c 'source \"$0\" && COMP_WORDS=(\"$1\" \"\") COMP_CWORD=1 && _sluicectl && "
		 "printf \"%%s\\n\" \"${COMPREPLY[@]}\"' '%s' '%s'",
		 completion, exe);
	p = popen(cmd, "r");
	CHECK(p != NULL, "popen");
	if (p == NULL)
		return;
	while (fgets(line, sizeof(line), p) != NULL) {
		const struct sl_ctl_command *c;

		line[strcspn(line, "\n")] = '\0';
		c = sl_ctl_command_find(line);
		CHECK(c != NULL, "the completion offers '%s', no command", line);
		if (c != NULL)
			seen[c - sl_ctl_commands] = true;
		n++;
	}
	CHECK(pclose(p) == 0, "bash exit status");
	for (size_t i = 0; i < sl_ctl_n_commands; i++)
		CHECK(seen[i], "the completion offers %s", sl_ctl_commands[i].name);
	CHECK(n == sl_ctl_n_commands, "%u completions for %zu commands", n, sl_ctl_n_commands);
}

int
main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s DOC COMPLETION SLUICECTL\n", argv[0]);
		return 2;
	}
	test_rows();
	test_help_and_docs(argv[1]);
	test_completion(argv[2], argv[3]);
	return sl_test_summary();
}
