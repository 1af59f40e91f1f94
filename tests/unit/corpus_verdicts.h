/* SPDX-License-Identifier: MIT */
/*
 * The verdict py-sandboxes' newest parser gives on each corpus file
 * (tests/corpus/pysandboxes, grammar in its FORMAT-NOTES.md), in the scratch checkout that
 * test_corpus.c builds (a fresh clone, a fresh HOME, no .local.py-sandboxes, no user or
 * global profile). An invalid file records one of its errors: the file holding it (NULL:
 * the file itself), its line and a substring of the message. `why` says where the verdict
 * comes from.
 */
#ifndef PYSB_CORPUS_VERDICTS_H
#define PYSB_CORPUS_VERDICTS_H

#include <stdbool.h>

struct corpus_verdict {
	const char *file;
	bool valid;
	const char *err_file;
	unsigned line;
	const char *msg;
	const char *why;
	bool not_policy; /* documentation beside the corpus, not a policy file */
};

#define VALID(f, w)                                \
	{                                          \
		.file = f, .valid = true, .why = w \
	}
#define INVALID(f, l, m, w)                              \
	{                                                \
		.file = f, .line = l, .msg = m, .why = w \
	}
#define INVALID_IN(f, e, l, m, w)                                       \
	{                                                               \
		.file = f, .err_file = e, .line = l, .msg = m, .why = w \
	}

/* Reasons, FORMAT-NOTES sections in brackets */
#define W_DASHDASH "first generation: every line starts with '--' [1.4 legacy]"
#define W_BIND	   "bind=/ro-bind= of the old generation [1.4 legacy]"
#define W_SETENV   "set-env= of the old generation [1.4 legacy]"
#define W_LOCAL                                                                  \
	"include of ./.local.py-sandboxes, absent from a checkout: a mandatory " \
	"include of a missing file is an error [1.2]"
#define W_USERPROF "include of the user profile, absent on a fresh account [1.2]"
#define W_PYCHARM  "include of a .py-sandboxes.pycharm the corpus does not hold [1.2]"
#define W_LEARNED  "learned profile: env=, python-import=, net=, expose-ro=../.. etc. [1.4, 3]"
#define W_SIMPLE   "current syntax only"

static const struct corpus_verdict CORPUS_VERDICTS[] = {
	{ .file = "FORMAT-NOTES.md", .not_policy = true, .why = "the notes themselves" },
	{ .file = "MANIFEST.tsv", .not_policy = true, .why = "where each file comes from" },

	INVALID(".pysandboxes-template", 32, "drop the leading '--' and write env=NAME=value",
		W_DASHDASH),
	/* The newest allow-all.template still starts with set-env=: refused by the newest
	 * parser all the same (env= since the 2nd generation). */
	INVALID("allow-all.template", 1, "legacy key 'set-env='", W_SETENV),
	INVALID("allow-all.template@62fbc39", 2, "legacy key 'bind='", W_BIND),
	VALID("coding-agents__skills__pysandboxes-review-rules__.py-sandboxes",
	      "learn=false and expose-ro=./scripts [1.4]"),
	INVALID("py-sandbox.template", 31, "legacy '--' prefix", W_DASHDASH),
	INVALID("pycharm.profile", 1, "legacy key 'ro-bind='", W_BIND),
	INVALID("pysandboxes.template", 9, "legacy '--' prefix", W_DASHDASH),
	INVALID("pysandboxes__templates__py-sandbox.template", 36,
		"included file './.local.py-sandboxes' not found", W_LOCAL),
	/* The newest template still includes the user profile with plain include (the wiki
	 * switched to include?): on a fresh account the file does not exist. */
	INVALID("pysandboxes__templates__py-sandboxes.template", 17,
		"included file '~/.config/py-sandboxes/user-py-sandboxes.profile' not found",
		W_USERPROF),
	VALID("pysandboxes__templates__todo.template", "comments only"),
	VALID("samples__agno-demo__.py-sandboxes", W_LEARNED),
	VALID("samples__agno-demo__.py-sandboxes-complete", W_LEARNED),
	VALID("samples__autogen-demo__.py-sandboxes", W_LEARNED),
	VALID("samples__autogen-demo__.py-sandboxes-complete", W_LEARNED),
	VALID("samples__crewai-demo__.py-sandboxes",
	      W_LEARNED "; expose-rw=~/... directories exist in the scratch HOME"),
	VALID("samples__crewai-demo__.py-sandboxes-complete", W_LEARNED),
	INVALID("samples__crewai-demo__crewai_demo__.py-sandboxes", 1,
		"included file '.py-sandboxes.pycharm' not found", W_PYCHARM),
	VALID("samples__google-adk-demo__.py-sandboxes", W_LEARNED),
	VALID("samples__google-adk-demo__.py-sandboxes-complete", W_LEARNED),
	INVALID("samples__google-adk-demo__google_adk_demo__.py-sandboxes", 1,
		"included file '.py-sandboxes.pycharm' not found", W_PYCHARM),
	INVALID("samples__langchain-demo__.py-sandboxes", 42,
		"included file './.local.py-sandboxes' not found", W_LOCAL),
	INVALID("samples__langchain-demo__.py-sandboxes-complete", 41,
		"included file './.local.py-sandboxes' not found", W_LOCAL),
	VALID("samples__langgraph-demo__.py-sandboxes", W_LEARNED),
	VALID("samples__langgraph-demo__.py-sandboxes-complete", W_LEARNED),
	VALID("samples__langgraph-demo__.py-sandboxes-complete.old", W_SIMPLE),
	INVALID("samples__langgraph-demo__langgraph_simple_chatbot__.py-sandboxes", 40,
		"legacy key 'ro-bind='", W_BIND),
	VALID("samples__mcp-client-demo__.py-sandboxes",
	      "include? of a missing file is skipped [1.2]; firejail.* parameters [4.2]"),
	/* Its include finds the .pycharm beside it, which still uses ro-bind=. */
	INVALID_IN("samples__mcp-client-demo__mcp_simple_chatbot__.py-sandboxes",
		   ".py-sandboxes.pycharm", 9, "legacy key 'ro-bind='",
		   W_BIND " in the included file; errors keep its file:line [1.2]"),
	INVALID("samples__mcp-client-demo__mcp_simple_chatbot__.py-sandboxes.pycharm", 9,
		"legacy key 'ro-bind='", W_BIND),
	INVALID("samples__mcp-client__.py-sandboxes", 1,
		"included file '.py-sandboxes.pycharm' not found", W_PYCHARM),
	INVALID("samples__mcp-client__mcp_simple_chatbot__.py-sandboxes", 2,
		"included file './.local.py-sandboxes' not found", W_LOCAL "; ro-bind= too"),
	VALID("samples__mcp-client__mcp_simple_chatbot__.py-sandboxes.pycharm",
	      "python-import= lines only"),
	INVALID("samples__mcp-client__mcp_simple_chatbot__X.py-sandboxes", 71,
		"legacy key 'ro-bind='", W_BIND "; ./.local.py-sandboxes too"),
	VALID("samples__mcp-server-demo__.py-sandboxes", W_LEARNED),
	INVALID("samples__mcp-server-demo__mcp_server__.py-sandboxes", 42,
		"included file './.local.py-sandboxes' not found", W_LOCAL),
	VALID("samples__mcp-server-demo__mcp_server__.py-sandboxes-complete",
	      W_LEARNED "; expose-ro=~/workspace/pysandboxes exists in the scratch HOME"),
	VALID("samples__mcp-server-demo__mcp_server__.py-sandboxes.pycharm",
	      "expose-ro=~/.cache/JetBrains/ (exists in the scratch HOME)"),
	INVALID("samples__mcp-server__mcp_server__.py-sandboxes", 1,
		"included file './.local.py-sandboxes' not found", W_LOCAL),
	INVALID("samples__mcp-server__mcp_server__X.py-sandboxes", 67, "legacy key 'ro-bind='",
		W_BIND "; ./.local.py-sandboxes too"),
	VALID("samples__openai-agents-sdk-demo__.py-sandboxes", W_LEARNED),
	VALID("samples__openai-agents-sdk-demo__.py-sandboxes-complete", W_LEARNED),
	INVALID("samples__openai-agents-sdk-demo__.py-sandboxes@2489f47", 12,
		"legacy key 'ro-bind='", W_BIND),
	VALID("samples__pydantic-ai-demo__.py-sandboxes",
	      "env= with defaults, net=DENY|*|*|*|OUT [2.3]"),
	VALID("samples__pydantic-ai-demo__.py-sandboxes-complete", W_LEARNED),
	VALID("samples__smolagents-demo__.py-sandboxes",
	      W_LEARNED "; env=*_API_KEY wildcards, nested ${TMPDIR:-${TEMP:-${TMP:-/tmp}}} [1.3]"),
	VALID("samples__smolagents-demo__.py-sandboxes-complete", W_LEARNED),
	VALID("samples__strands-agents-demo__.py-sandboxes", W_LEARNED),
	VALID("samples__strands-agents-demo__.py-sandboxes-complete", W_LEARNED),
	INVALID("tests__config__test.py-sandboxes", 11, "legacy key 'bind='", W_BIND),
	VALID("tests__integration_tests__minimal-py-sandbox-test", W_SIMPLE),
	VALID("tests__integration_tests__py-sandbox-test.profile",
	      "include? \"./.local...\", ${PYTHON_BASE_PREFIX:-/usr/local}/lib, qemu.* [1.2, 1.3]"),
	INVALID("tests__integration_tests__py-sandbox-test.profile@044a7cc", 1,
		"included file './.local.py-sandboxes' not found", W_LOCAL),
	INVALID("tests__integration_tests__pycharm.profile", 1, "legacy key 'ro-bind='", W_BIND),
	INVALID("tests__integration_tests__remote__py-sandbox-test.profile", 1,
		"included file './.local.py-sandboxes' not found", W_LOCAL),
	VALID("tests__run_tests__.py-sandboxes", "python-import=* (no final newline)"),
	VALID("tests__test.old", W_LEARNED),
	/* include "${PWD}/.py-sandboxes": py-sandboxes reads includes before it substitutes
	 * variables, so the path is literal: there is no directory named "${PWD}". */
	INVALID("tests__test.py-sandboxes", 1, "included file '${PWD}/.py-sandboxes' not found",
		"${VAR} in an include path is literal [1.2]; no such file"),
	INVALID("tests__test.py-sandboxes@0adf125", 35,
		"included file './.local.py-sandboxes' not found", W_LOCAL "; bind= too"),
	INVALID("tests__unit_tests__syntax-error.profile", 1, "legacy '--' prefix",
		"a deliberate error fixture, '--' syntax [1.4 legacy]"),
	VALID("wiki__configuration__example1.py-sandboxes", "include? of missing files [1.2]"),
	VALID("wiki__configuration__example2.py-sandboxes", "include? of a missing file [1.2]"),
	INVALID("wiki__configuration__example3.py-sandboxes", 2,
		"included file '~/.config/py-sandboxes/user-py-sandboxes.profile' not found",
		W_USERPROF " (the older form of example1, before include?)"),
	VALID("wiki__dns__example1.py-sandboxes", "env= values keep their quotes [2.4]"),
};

#endif /* PYSB_CORPUS_VERDICTS_H */
