/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the policy parser (user/policy/): one table per family (valid values per
 * key, errors with their file:line:column and message), ${VAR} substitution, include, env
 * building, and hostile input. No root needed: everything lives in a scratch directory that
 * is also the `cwd` of every parse, with HOME inside it, so no result depends on the machine.
 */
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "compile.h"
#include "policy.h"

static char tmp[] = "/tmp/pysb-test-policy-XXXXXX";
static char home_var[PATH_MAX + 8], incdir_var[PATH_MAX + 16];
/* The environment every parse sees: HOME points into the scratch directory. */
static char *envp[] = { home_var, incdir_var,	      "A=1", "EMPTY=", "H=example.com",
			"P=tcp",  "OS_SANDBOX=bwrap", NULL };

/* ---------------- fixture */

#include "fixture.h"

static int group_setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmp))
		return -1;
	snprintf(home_var, sizeof(home_var), "HOME=%s/home", tmp);
	snprintf(incdir_var, sizeof(incdir_var), "INCDIR=%s/sub", tmp);
	mkdir(tpath("d"), 0755);
	mkdir(tpath("sub"), 0755);
	mkdir(tpath("home"), 0755);
	mkdir(tpath("home/x"), 0755);
	put("f", "a file\n");
	return symlink(tpath("d"), tpath("link"));
}

/* ---------------- helpers */

struct parsed {
	struct policy *p;
	struct diag_list d;
	int ret;
};

static void dump(const struct diag_list *d)
{
	diag_print(stderr, d);
}

static struct parsed parse_len(const char *text, size_t len)
{
	struct parsed r = { 0 };

	r.ret = policy_parse_buffer("t.pysb", text, len, envp, tmp, &r.p, &r.d);
	/* The contract: a complete policy and no error, or no policy and errors. */
	assert_int_equal(r.ret == 0, r.p != NULL);
	assert_int_equal(r.ret == 0, r.d.n_errors == 0);
	return r;
}

static struct parsed parse(const char *text)
{
	return parse_len(text, strlen(text));
}

static void done(struct parsed *r)
{
	policy_free(r->p);
	diag_free(&r->d);
}

static struct parsed parse_ok(const char *text)
{
	struct parsed r = parse(text);

	if (r.ret)
		dump(&r.d);
	assert_int_equal(r.ret, 0);
	return r;
}

/* True when an error at file:line:col holds `msg` (file NULL: t.pysb; col 0: any). */
static bool has_error_in(const struct diag_list *d, const char *file, unsigned line, unsigned col,
			 const char *msg)
{
	for (size_t i = 0; i < d->n_errors; i++) {
		const struct diag *m = &d->errors[i];

		if (m->file && strcmp(m->file, file ? file : "t.pysb") == 0 && m->line == line &&
		    (!col || m->col == col) && m->msg && strstr(m->msg, msg))
			return true;
	}
	return false;
}

static bool has_error(const struct diag_list *d, unsigned line, unsigned col, const char *msg)
{
	return has_error_in(d, NULL, line, col, msg);
}

static void expect_error(const char *text, size_t len, unsigned line, unsigned col,
			 const char *msg);

/* For NUL-free text. */
static void expect_err(const char *text, unsigned line, unsigned col, const char *msg)
{
	expect_error(text, strlen(text), line, col, msg);
}

static void expect_error(const char *text, size_t len, unsigned line, unsigned col, const char *msg)
{
	struct parsed r = parse_len(text, len);

	if (!has_error(&r.d, line, col, msg)) {
		fprintf(stderr, "input: %.200s\nwanted %u:%u '%s', got:\n", text, line, col, msg);
		dump(&r.d);
		fail();
	}
	done(&r);
}

/* ---------------- valid values per key */

struct kv_case {
	const char *text;
	const char *key;
	const char *value; /* policy_get(key) after the parse */
};

static const struct kv_case KV_CASES[] = {
	{ "py-sandbox=true", "py-sandbox", "true" },
	{ "py-sandbox=True", "py-sandbox", "true" }, /* kept as py-sandboxes reads it */
	{ "py-sandbox=false", "py-sandbox", "false" },
	{ "os-sandbox=${OS_SANDBOX:-subprocess}", "os-sandbox", "bwrap" },
	{ "os-sandbox=${NO_SUCH_VAR:-subprocess}", "os-sandbox", "subprocess" },
	{ "os-sandbox=landlock", "os-sandbox", "landlock" },
	{ "os-sandbox=none", "os-sandbox", "none" },
	{ "os-sandbox=qemu", "os-sandbox", "qemu" },
	{ "remote-result-guard=false", "remote-result-guard", "false" },
	{ "remote-result-mode=data-only", "remote-result-mode", "data-only" },
	{ "remote-result-mode=objects", "remote-result-mode", "objects" },
	{ "learn=false", "learn", "false" },
	{ "learn=sub/learned.pysb", "learn", "sub/learned.pysb" },
	{ "port=8000", "port", "8000" },
	{ "port=0", "port", "0" },
	{ "python-import=json, re, typing", "python-import", "json, re, typing" },
	{ "python-import=*", "python-import", "*" },
	{ "python-import=_pyrepl,_pydev_bundle", "python-import", "_pyrepl,_pydev_bundle" },
	{ "python-api=ALLOW:threads", "python-api", "ALLOW:threads" },
	{ "python-api=DENY:os.system", "python-api", "DENY:os.system" },
	{ "python-api=ALLOW:*", "python-api", "ALLOW:*" },
	{ "eval-syntax=arith, compare", "eval-syntax", "arith, compare" },
	{ "eval-call=DENY:open", "eval-call", "DENY:open" },
	{ "eval-attribute=get*, str-methods", "eval-attribute", "get*, str-methods" },
	{ "eval-import=json.*", "eval-import", "json.*" },
	{ "eval-magic=__name__", "eval-magic", "__name__" },
	{ "eval-namespace=closed", "eval-namespace", "closed" },
	{ "eval-timeout=2s", "eval-timeout", "2s" },
	{ "eval-timeout=250ms", "eval-timeout", "250ms" },
	{ "eval-timeout=0.5s", "eval-timeout", "0.5s" },
	{ "eval-timeout=1_000ms", "eval-timeout", "1_000ms" },
	{ "eval-max-iterations=100_000", "eval-max-iterations", "100_000" },
	{ "eval-max-alloc=10MB", "eval-max-alloc", "10MB" },
	{ "eval-max-call-depth=10", "eval-max-call-depth", "10" },
	{ "eval-timeout:llm=2s", "eval-timeout:llm", "2s" },
	{ "bpf.mode=enforce", "bpf.mode", "enforce" },
	{ "qemu.show_boot_console=${QEMU_SHOW_BOOT_CONSOLE:-false}", "qemu.show_boot_console",
	  "false" },
	{ "firejail.seccomp.keep=read,write", "firejail.seccomp.keep", "read,write" },
	{ "bwrap.share-net=yes  # a comment", "bwrap.share-net", "yes" },
	{ "firejail.net=br0  # Use specific bridge", "firejail.net", "br0" },
	{ "unshare.hostname=", "unshare.hostname", "" },
	/* policy_get: the last line wins, across the Python and provider tables */
	{ "python-import=json\npython-import=re", "python-import", "re" },
	{ "bpf.x=1\nbpf.x=2", "bpf.x", "2" },
	/* quote-aware comments: '#' inside quotes is text, a backslash escapes a quote */
	{ "bpf.v=\"a#b\" # c", "bpf.v", "\"a#b\"" },
	{ "bpf.v='#' #c", "bpf.v", "'#'" },
	{ "bpf.v=\"a\\\"#b\"", "bpf.v", "\"a\\\"#b\"" },
	{ "bpf.v=x#y", "bpf.v", "x" },
	{ "   bpf.v=spaced\t  ", "bpf.v", "spaced" },
	{ "bpf.v=\xc2\xa0nbsp\xc2\xa0", "bpf.v", "\xc2\xa0nbsp" },
	{ "\xe2\x80\x83"
	  "bpf.v=em-space\xe2\x80\x83",
	  "bpf.v", "em-space" },
	/* every white space Python's str.strip() removes, and neighbours it keeps */
	{ "bpf.v=x\xc2\x85", "bpf.v", "x" },
	{ "bpf.v=x\xc2\xa0", "bpf.v", "x" },
	{ "bpf.v=x\xe1\x9a\x80", "bpf.v", "x" },
	{ "bpf.v=x\xe2\x80\x80", "bpf.v", "x" },
	{ "bpf.v=x\xe2\x80\x8a", "bpf.v", "x" },
	{ "bpf.v=x\xe2\x80\xa8", "bpf.v", "x" },
	{ "bpf.v=x\xe2\x80\xa9", "bpf.v", "x" },
	{ "bpf.v=x\xe2\x80\xaf", "bpf.v", "x" },
	{ "bpf.v=x\xe2\x81\x9f", "bpf.v", "x" },
	{ "bpf.v=x\xe3\x80\x80", "bpf.v", "x" },
	{ "bpf.v=x\x1c", "bpf.v", "x" },
	{ "bpf.v=x\x1f", "bpf.v", "x" },
	{ "bpf.v=x\v", "bpf.v", "x" },
	{ "bpf.v=x\f", "bpf.v", "x" },
	{ "bpf.v=x\xc2\x84", "bpf.v", "x\xc2\x84" },
	{ "bpf.v=x\xc2\xa1", "bpf.v", "x\xc2\xa1" },
	{ "bpf.v=x\xe1\x9a\x81", "bpf.v", "x\xe1\x9a\x81" },
	{ "bpf.v=x\xe2\x80\x8b", "bpf.v", "x\xe2\x80\x8b" },
	{ "bpf.v=x\xe2\x80\xa7", "bpf.v", "x\xe2\x80\xa7" },
	{ "bpf.v=x\xe2\x80\xb0", "bpf.v", "x\xe2\x80\xb0" },
	{ "bpf.v=x\xe2\x81\x9e", "bpf.v", "x\xe2\x81\x9e" },
	{ "bpf.v=x\xe3\x80\x81", "bpf.v", "x\xe3\x80\x81" },
	/* substitution applies to provider parameters too; substituted text is not rescanned */
	{ "bpf.v=${H}:${A}", "bpf.v", "example.com:1" },
};

static void test_values_per_key(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(KV_CASES) / sizeof(KV_CASES[0]); i++) {
		struct parsed r = parse_ok(KV_CASES[i].text);
		const char *v = policy_get(r.p, KV_CASES[i].key);

		if (!v || strcmp(v, KV_CASES[i].value) != 0) {
			fprintf(stderr, "case '%s': got '%s'\n", KV_CASES[i].text,
				v ? v : "(null)");
			fail();
		}
		done(&r);
	}
}

static void test_comments_blank_and_template_lines(void **state)
{
	struct parsed r;

	(void)state;
	r = parse_ok("\n# comment\n   # indented comment\n{{ template }}\n  {x\n\n#foo=bar\n"
		     "py-sandbox=true # trailing\n");
	assert_int_equal(r.p->n_python, 1);
	assert_int_equal(r.p->python[0].src.line, 8);
	assert_int_equal(r.p->python[0].src.col, 12);
	done(&r);
	r = parse_ok("");
	assert_int_equal(r.p->n_files, 1);
	assert_string_equal(r.p->files[0], "t.pysb");
	assert_int_equal(r.d.n_warnings, 0);
	done(&r);
	/* nothing but template lines: most likely JSON (a daemon binding), said */
	r = parse_ok("{\"policy\": \"w.py-sandboxes\", \"cgroup\": \"worker.slice\"}\n");
	assert_int_equal(r.d.n_warnings, 1);
	assert_non_null(strstr(r.d.warnings[0].msg, "no rule: every line starts with '{'"));
	assert_int_equal(r.d.warnings[0].line, 0);
	done(&r);
	/* with a rule beside them: not said */
	r = parse_ok("{{ template }}\npy-sandbox=true\n");
	assert_int_equal(r.d.n_warnings, 0);
	done(&r);
}

/* \n, \r\n and \r all end a line, as Python's universal newlines. */
static void test_line_endings(void **state)
{
	(void)state;
	expect_err("py-sandbox=true\r\nfoo=1", 2, 1, "unknown key 'foo'");
	expect_err("py-sandbox=true\rfoo=1", 2, 1, "unknown key 'foo'");
	expect_err("bpf.a=1\r\n\r\nfoo=1", 3, 1, "unknown key 'foo'");
}

/* ---------------- expose-ro / expose-rw / ignore */

static void test_expose_paths(void **state)
{
	struct parsed r;
	char real[PATH_MAX];

	(void)state;
	assert_non_null(realpath(tmp, real));
	r = parse_ok("expose-ro=.\nexpose-rw=~/x\nexpose-ro=f\nexpose-ro=link\n"
		     "expose-rw=sub/../home\nexpose-ro=/\n");
	assert_int_equal(r.p->n_paths, 6);
	assert_string_equal(r.p->paths[0].path, real);
	assert_string_equal(r.p->paths[0].spelled, ".");
	assert_int_equal(r.p->paths[0].access, POLICY_RO);
	assert_int_equal(r.p->paths[0].src.line, 1);
	assert_int_equal(r.p->paths[0].src.col, 11);
	assert_string_equal(r.p->paths[1].path,
			    strcat(strcpy((char[PATH_MAX]){ 0 }, real), "/home/x"));
	assert_int_equal(r.p->paths[1].access, POLICY_RW);
	assert_string_equal(r.p->paths[1].spelled, "~/x");
	/* a file is accepted (newest grammar), a symlink is resolved */
	assert_string_equal(r.p->paths[2].path, strcat(strcpy((char[PATH_MAX]){ 0 }, real), "/f"));
	assert_string_equal(r.p->paths[3].path, strcat(strcpy((char[PATH_MAX]){ 0 }, real), "/d"));
	assert_string_equal(r.p->paths[4].path,
			    strcat(strcpy((char[PATH_MAX]){ 0 }, real), "/home"));
	assert_string_equal(r.p->paths[5].path, "/");
	done(&r);
}

static void test_expose_dedup_and_legacy_pair(void **state)
{
	struct parsed r;

	(void)state;
	/* same path, same mode: one rule, whatever the spelling */
	r = parse_ok("expose-ro=d\nexpose-ro=./d/\nexpose-ro=link");
	assert_int_equal(r.p->n_paths, 1);
	done(&r);
	/* the legacy pair is accepted when both halves are equal, with a warning */
	r = parse_ok("expose-rw=/,/");
	assert_int_equal(r.p->n_paths, 1);
	assert_string_equal(r.p->paths[0].path, "/");
	assert_int_equal(r.d.n_warnings, 1);
	assert_non_null(strstr(r.d.warnings[0].msg, "modern form is expose-rw=/"));
	assert_int_equal(r.d.warnings[0].line, 1);
	done(&r);
	/* the path comes from the substituted text */
	r = parse_ok("expose-rw=${TMPDIR:-${TEMP:-${TMP:-/tmp}}}");
	assert_string_equal(r.p->paths[0].spelled, "/tmp");
	done(&r);
}

static void test_ignore(void **state)
{
	struct parsed r;

	(void)state;
	r = parse_ok("ignore=.env\nignore=*.log # logs");
	assert_int_equal(r.p->n_ignores, 2);
	assert_string_equal(r.p->ignores[1].glob, "*.log");
	assert_int_equal(r.p->ignores[1].src.col, 8);
	done(&r);
}

/* ---------------- net= */

static void test_net_fields(void **state)
{
	struct parsed r;
	const struct policy_net *n;

	(void)state;
	r = parse_ok("net=DENY|tcp,UDP|10.0.0.0/8|80, 443-450 ,1000-|IN,OUT\n"
		     "net=ALLOW|*|*|*|*\n"
		     "net=ALLOW|any|::/0||OUT\n"
		     "net=ALLOW|TCP|${MY_IP:-localhost}|8000|OUT\n"
		     "net=ALLOW|tcp|10.0.0.0/255.0.0.0|0|IN\n"
		     "net=ALLOW|udp|ip6-localhost|12346,12345|OUT\n"
		     "net=ALLOW|TCP|0.0.0.0/32|48000|IN  # sandbox <-> parent\n"
		     "net=ALLOW|${P}|${H}|443|OUT\n"
		     "net=ALLOW|tcp,|fe80::1|1-1|IN,*\n");
	assert_int_equal(r.p->n_nets, 9);
	n = &r.p->nets[0];
	assert_true(n->deny);
	assert_int_equal(n->protos, POLICY_PROTO_TCP | POLICY_PROTO_UDP);
	assert_string_equal(n->network, "10.0.0.0/8");
	assert_int_equal(n->n_ports, 3);
	assert_int_equal(n->ports[0].lo, 80);
	assert_int_equal(n->ports[0].hi, 80);
	assert_int_equal(n->ports[1].lo, 443);
	assert_int_equal(n->ports[1].hi, 450);
	assert_int_equal(n->ports[2].lo, 1000);
	assert_int_equal(n->ports[2].hi, 65535);
	assert_int_equal(n->dirs, POLICY_DIR_IN | POLICY_DIR_OUT);
	n = &r.p->nets[1];
	assert_false(n->deny);
	assert_int_equal(n->protos, POLICY_PROTO_TCP | POLICY_PROTO_UDP);
	assert_string_equal(n->network, "*");
	assert_int_equal(n->n_ports, 1);
	assert_int_equal(n->ports[0].lo, 0);
	assert_int_equal(n->ports[0].hi, 65535);
	assert_int_equal(n->dirs, POLICY_DIR_IN | POLICY_DIR_OUT);
	assert_int_equal(r.p->nets[2].n_ports, 0); /* empty field: no port at all */
	assert_int_equal(r.p->nets[2].dirs, POLICY_DIR_OUT);
	assert_string_equal(r.p->nets[3].network, "localhost");
	assert_int_equal(r.p->nets[4].ports[0].hi, 0);
	assert_int_equal(r.p->nets[4].dirs, POLICY_DIR_IN);
	assert_int_equal(r.p->nets[5].protos, POLICY_PROTO_UDP);
	assert_int_equal(r.p->nets[5].n_ports, 2);
	assert_int_equal(r.p->nets[6].ports[0].lo, 48000);
	assert_string_equal(r.p->nets[7].network, "example.com");
	assert_int_equal(r.p->nets[7].protos, POLICY_PROTO_TCP);
	assert_int_equal(r.p->nets[7].src.col, 5);
	assert_int_equal(r.p->nets[8].protos, POLICY_PROTO_TCP);
	done(&r);
}

/* ---------------- env= / unenv= */

static void test_env_rules_kept_raw(void **state)
{
	struct parsed r;

	(void)state;
	r = parse_ok("env=A=${A}\nenv=*_API_KEY=${*_API_KEY}\nunenv=OPENAI_*\n"
		     "env=HTTP_PROXY=\"socks5://192.168.1.10:9050\"\nenv=E=\nenv=Q=a=b");
	assert_int_equal(r.p->n_envs, 6);
	assert_string_equal(r.p->envs[0].name, "A");
	assert_string_equal(r.p->envs[0].value, "${A}");
	assert_int_equal(r.p->envs[0].src.col, 5);
	assert_string_equal(r.p->envs[1].name, "*_API_KEY");
	assert_true(r.p->envs[2].unset);
	assert_null(r.p->envs[2].value);
	assert_string_equal(r.p->envs[2].name, "OPENAI_*");
	assert_string_equal(r.p->envs[3].value, "\"socks5://192.168.1.10:9050\"");
	assert_string_equal(r.p->envs[4].value, "");
	assert_string_equal(r.p->envs[5].name, "Q");
	assert_string_equal(r.p->envs[5].value, "a=b");
	done(&r);
}

/* ---------------- errors */

struct err_case {
	const char *text;
	unsigned line, col;
	const char *msg; /* substring of the message */
};

static const struct err_case ERR_CASES[] = {
	/* keys */
	{ "foo=bar", 1, 1, "unknown key 'foo'" },
	{ "expose-r=/tmp", 1, 1, "did you mean 'expose-ro'" },
	{ "Expose-RO=/tmp", 1, 1, "did you mean 'expose-ro'" },
	{ "pyton-import=json", 1, 1, "did you mean 'python-import'" },
	{ "expose-ro =/tmp", 1, 1, "did you mean 'expose-ro'" },
	{ "justtext", 1, 1, "expected key=value" },
	{ "expose-ro", 1, 1, "expected key=value; did you mean 'expose-ro='" },
	{ "=x", 1, 1, "missing key" },
	{ "  foo=1", 1, 3, "unknown key 'foo'" },
	{ "py-sandbox=true\n\n  bar=2", 3, 3, "unknown key 'bar'" },
	/* legacy syntaxes name their modern equivalent */
	{ "bind=/,/", 1, 1, "expose-rw=" },
	{ "ro-bind=/a,/a", 1, 1, "expose-ro=" },
	{ "rw-bind=/a,/a", 1, 1, "expose-rw=" },
	{ "set-env=A=b", 1, 1, "env=NAME=value" },
	{ "unset-env=A", 1, 1, "unenv=NAME" },
	{ "--sandbox-provider=firejail", 1, 1, "os-sandbox=" },
	{ "sandbox-provider=firejail", 1, 1, "os-sandbox=" },
	{ "python-api-import=ALLOW:numpy.*", 1, 1, "python-import=" },
	{ "--os-sandbox=bwrap", 1, 1, "drop it and write 'os-sandbox=bwrap'" },
	{ "--set-env=A=b", 1, 1, "drop the leading '--' and write env=NAME=value" },
	{ "expose-ro=${A:=b}", 1, 11, "write ${NAME:-default}" },
	/* substitution */
	{ "expose-ro=${A:B}", 1, 11, "use ${NAME} or ${NAME:-default}, found '${A:B}'" },
	{ "os-sandbox=${A-b}", 1, 12, "invalid variable reference" },
	{ "os-sandbox=x${}", 1, 13, "invalid variable reference" },
	{ "bpf.x=${A:-{x}}", 1, 7, "invalid variable reference" },
	/* expose-ro / expose-rw */
	{ "expose-ro=", 1, 11, "path must be set" },
	{ "expose-rw=${UNSET}", 1, 11, "path must be set" },
	{ "expose-ro=/nonexistent-pysb/x", 1, 11, "path '/nonexistent-pysb/x' must exist" },
	{ "expose-ro=~/nope", 1, 11, "path '~/nope' must exist" },
	{ "expose-ro=~no-such-user-pysb/x", 1, 11, "path '~no-such-user-pysb/x' must exist" },
	{ "expose-ro=f/inside-a-file", 1, 11, "must exist" },
	{ "expose-ro=/nonexistent-pysb/x#y", 1, 11, "the rule (a '#' starts a comment" },
	{ "expose-ro=x#y", 1, 11, "the rule (a '#' starts a comment" },
	{ "expose-ro=d,sub", 1, 12, "single path (no comma)" },
	{ "expose-ro=d,d,d", 1, 12, "single path (no comma)" },
	{ "expose-ro=,", 1, 11, "single path (no comma)" },
	{ "expose-ro=d\nexpose-rw=d", 2, 11, "invalidates another rule" },
	{ "expose-rw=d\n# x\nexpose-ro=link", 3, 11, "invalidates another rule: t.pysb:1" },
	{ "ignore=", 1, 8, "glob pattern" },
	/* net= */
	{ "net=ALLOW|tcp|*|443", 1, 5, "5 fields" },
	{ "net=ALLOW|tcp|*|443|OUT|x", 1, 24, "too many '|'" },
	{ "net=", 1, 5, "5 fields" },
	{ "net=allow|tcp|*|443|OUT", 1, 5, "invalid action 'allow'" },
	{ "net=ALLOW||*|443|OUT", 1, 11, "empty protocol" },
	{ "net=ALLOW|icmp|*|443|OUT", 1, 11, "unknown protocol 'icmp'" },
	{ "net=ALLOW|any,tcp|*|443|OUT", 1, 11, "must be used alone" },
	{ "net=ALLOW|tcp,*|*|443|OUT", 1, 15, "must be used alone" },
	{ "net=ALLOW|tcp||443|OUT", 1, 15, "network part" },
	{ "net=ALLOW|tcp|${NOPE}|443|OUT", 1, 15, "network part" },
	{ "net=ALLOW|tcp|10.0.0.0/33|443|OUT", 1, 15, "invalid CIDR" },
	{ "net=ALLOW|tcp|300.1.2.3|443|OUT", 1, 15, "invalid IPv4 address '300.1.2.3'" },
	{ "net=ALLOW|tcp|127.0.0.1/32/32|443|OUT", 1, 15, "invalid CIDR" },
	{ "net=ALLOW|tcp|::/129|443|OUT", 1, 15, "invalid CIDR" },
	{ "net=ALLOW|tcp|10.0.0.0/255.0.255.0|443|OUT", 1, 15, "invalid CIDR" },
	{ "net=ALLOW|tcp|fe80::1::2|443|OUT", 1, 15, "invalid IPv6" },
	{ "net=ALLOW|tcp|bad host|443|OUT", 1, 15, "invalid host name" },
	{ "net=ALLOW|tcp|*|70000|OUT", 1, 17, "invalid port '70000'" },
	{ "net=ALLOW|tcp|*|a,b|OUT", 1, 17, "invalid port 'a'" },
	{ "net=ALLOW|tcp|*|80,b|OUT", 1, 20, "invalid port 'b'" },
	{ "net=ALLOW|tcp|*|90-80|OUT", 1, 17, "start is greater than end" },
	{ "net=ALLOW|tcp|*|-80|OUT", 1, 17, "invalid port range" },
	{ "net=ALLOW|tcp|*|*,80|OUT", 1, 17, "invalid port '*'" },
	{ "net=ALLOW|tcp|*|443|", 1, 21, "invalid direction" },
	{ "net=ALLOW|tcp|*|443|UP", 1, 21, "invalid direction 'UP'" },
	{ "net=ALLOW|tcp|*|443|IN, OUT", 1, 21, "invalid direction" },
	{ "net=ALLOW|tcp|*|443|in", 1, 21, "invalid direction" },
	/* columns count characters and point into the raw line, before substitution */
	{ "net=ALLOW|tcp|\xc3\xa9|x|OUT", 1, 17, "invalid port 'x'" },
	{ "net=ALLOW|${P}|${H}|99999|OUT", 1, 21, "invalid port '99999'" },
	{ "\tnet=ALLOW|tcp|*|99999|OUT", 1, 18, "invalid port" },
	/* env= / unenv= */
	{ "env=FOO", 1, 8, "missing '=' after the variable name" },
	{ "env==x", 1, 5, "missing variable name" },
	{ "env=A=${B:=c}", 1, 7, "write ${NAME:-default}" },
	{ "env=A=x${B:C}", 1, 8, "invalid variable reference" },
	{ "unenv=", 1, 7, "unenv= takes" },
	{ "unenv=A=b", 1, 7, "unenv= takes" },
	/* Python-layer keys */
	{ "python-api=threads", 1, 12, "ALLOW:" },
	{ "python-api=ALLOW:", 1, 18, "empty target" },
	{ "eval-namespace=open", 1, 16, "adaptive, closed or caller" },
	{ "eval-timeout=10MB", 1, 14, "duration" },
	{ "eval-timeout=DENY:5s", 1, 14, "duration" },
	{ "eval-timeout=1.s", 1, 14, "duration" },
	{ "eval-max-iterations=5s", 1, 21, "whole number" },
	{ "eval-max-iterations=1__0", 1, 21, "whole number" },
	{ "eval-max-alloc=1TB", 1, 16, "size" },
	{ "eval-syntax=Bin*", 1, 13, "no pattern" },
	{ "eval-syntaxe=arith", 1, 1, "did you mean 'eval-syntax'" },
	{ "eval-timeout=2s\neval-timeout=3s", 2, 1, "already set at t.pysb:1" },
	{ "eval-timeout:llm=2s\neval-timeout:llm=3s", 2, 1, "already set" },
	{ "remote-result-mode=data-only\nremote-result-mode=objects", 2, 1, "already set" },
	{ "remote-result-mode=pickle", 1, 20, "data-only or objects" },
	{ "remote-result-guard=maybe", 1, 21, "true or false" },
	{ "py-sandbox=abc", 1, 12, "true or false" },
	{ "os-sandbox=toto", 1, 12, "unknown os-sandbox" },
	{ "os-sandbox=${NOPE:-toto}", 1, 12, "unknown os-sandbox" },
	{ "learn=true", 1, 7, "use the filename instead" },
	{ "port=80x", 1, 6, "port number" },
	{ "port=8O", 1, 6, "port number" },
	{ "port=-1", 1, 6, "positive value" },
	{ "python-api=ALLOW:dynamic-code\neval-syntax=arith", 1, 12, "lifts the guard" },
	/* provider parameters */
	{ ".x=1", 1, 1, "provider parameter" },
	{ "qemu.=1", 1, 1, "provider parameter" },
	/* include syntax */
	{ "include \"missing.pysb\"", 1, 10, "included file 'missing.pysb' not found" },
	{ "include missing", 1, 9, "expected include \"PATH\"" },
	{ "include", 1, 8, "expected include \"PATH\"" },
	{ "include \"a\" trailing", 1, 12, "unexpected text" },
	{ "include \"unterminated", 1, 9, "unterminated quote" },
	{ "include=x", 1, 1, "no '='" },
	{ "include \"${A:=x}\"", 1, 10, "is literal" },
	{ "include\"x\"", 1, 8, "a blank after the keyword" },
	{ "include 'x'", 1, 9, "double quotes" },
	{ "include \"\"", 1, 10, "include path is empty" },
	{ "include \"d\"", 1, 10, "Is a directory" },
	{ "include? \"d\"", 1, 11, "Is a directory" },
	/* not text */
	{ "\xef\xbb\xbfpy-sandbox=true", 1, 1, "byte-order mark" },
	{ "expose-ro=\xff", 1, 11, "invalid UTF-8 byte 0xff" },
	{ "# comment \xc0\xaf", 1, 11, "invalid UTF-8" },
	{ "bpf.x=\xed\xa0\x80", 1, 7, "invalid UTF-8" },
};

static void test_error_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ERR_CASES) / sizeof(ERR_CASES[0]); i++)
		expect_err(ERR_CASES[i].text, ERR_CASES[i].line, ERR_CASES[i].col,
			   ERR_CASES[i].msg);
}

/* Every error of the file is reported, with the offending text, and none is fatal. */
static void test_all_errors_collected(void **state)
{
	struct parsed r;

	(void)state;
	r = parse("foo=1\nexpose-ro=d\nnet=x\npy-sandbox=maybe\nbind=/,/\n");
	assert_int_equal(r.d.n_errors, 4);
	assert_true(has_error(&r.d, 1, 1, "unknown key"));
	assert_true(has_error(&r.d, 3, 5, "5 fields"));
	assert_true(has_error(&r.d, 4, 12, "true or false"));
	assert_true(has_error(&r.d, 5, 1, "expose-rw="));
	assert_string_equal(r.d.errors[0].file, "t.pysb");
	assert_string_equal(r.d.errors[1].text, "net=x");
	done(&r);
	/* several errors in one net= rule */
	r = parse("net=allow|icmp|300.0.0.1|x|UP");
	assert_int_equal(r.d.n_errors, 5);
	done(&r);
}

static void test_nul_byte(void **state)
{
	static const char text[] = "py-sandbox=true\nabc\0def\nfoo=1";

	(void)state;
	expect_error(text, sizeof(text) - 1, 2, 4, "NUL byte");
	expect_error(text, sizeof(text) - 1, 3, 1, "unknown key"); /* the parse went on */
}

static void test_long_lines(void **state)
{
	const size_t big = 10 * 1024 * 1024;
	char *text = malloc(big + 32);
	struct parsed r;

	(void)state;
	assert_non_null(text);
	/* just over the limit, then a 10 MB line: one clean error each */
	memset(text, 'a', POLICY_MAX_LINE + 1);
	memcpy(text, "bpf.x=", 6);
	expect_error(text, POLICY_MAX_LINE + 1, 1, POLICY_MAX_LINE + 1, "line longer than");
	memset(text, 'a', big);
	memcpy(text, "expose-ro=", 10);
	memcpy(text + big, "\nfoo=1", 7);
	r = parse_len(text, big + 6);
	assert_int_equal(r.d.n_errors, 2);
	assert_true(has_error(&r.d, 1, 0, "line longer than"));
	assert_true(has_error(&r.d, 2, 1, "unknown key"));
	/* the offending text is cut for display */
	assert_true(strlen(r.d.errors[0].text) <= 120 + 3);
	assert_non_null(strstr(r.d.errors[0].text, "..."));
	done(&r);
	/* a line of exactly the limit is parsed */
	memset(text, 'a', POLICY_MAX_LINE);
	memcpy(text, "bpf.x=", 6);
	r = parse_len(text, POLICY_MAX_LINE);
	assert_int_equal(r.ret, 0);
	done(&r);
	free(text);
}

/* Random bytes: errors, never a crash (the fuzzer does this at scale). */
static void test_binary_garbage(void **state)
{
	unsigned char buf[65536];
	uint32_t x = 12345;

	(void)state;
	for (int round = 0; round < 20; round++) {
		struct parsed r;

		for (size_t i = 0; i < sizeof(buf); i++) {
			x = x * 1103515245u + 12345u;
			buf[i] = (unsigned char)(x >> 16);
		}
		r = parse_len((const char *)buf, sizeof(buf));
		assert_int_equal(r.ret, -1);
		done(&r);
	}
}

static void test_error_cap(void **state)
{
	size_t n = 3000;
	char *text = malloc(n * 2 + 1);
	struct parsed r;

	(void)state;
	for (size_t i = 0; i < n; i++)
		memcpy(text + 2 * i, "x\n", 2);
	r = parse_len(text, n * 2);
	assert_int_equal(r.d.n_errors, 1001);
	assert_non_null(strstr(r.d.errors[1000].msg, "too many errors"));
	done(&r);
	free(text);
}

static void test_display_text_escaped(void **state)
{
	struct parsed r;

	(void)state;
	r = parse("foo=\x01\x7f");
	assert_string_equal(r.d.errors[0].text, "foo=\\x01\\x7f");
	done(&r);
}

/* ---------------- ${VAR} substitution */

struct subst_case {
	const char *in;
	const char *out; /* NULL: an error whose message holds `err` */
	const char *err;
};

static char *subst_env[] = { "A=1",	   "EMPTY=", "NESTED=${A}",    "TEMP=/t",   "B=A",
			     "BRACES={x}", "W=a b",  "*_API_KEY=star", "X:Y=colon", NULL };

static const struct subst_case SUBST_CASES[] = {
	{ "${A}", "1", NULL },
	{ "x${A}y${A}z", "x1y1z", NULL },
	{ "${UNSET}", "", NULL },
	{ "${UNSET:-d}", "d", NULL },
	{ "${UNSET:-}", "", NULL },
	{ "${EMPTY:-d}", "", NULL }, /* set but empty: the default is not used */
	{ "${TMPDIR:-${TEMP:-${TMP:-/tmp}}}", "/t", NULL },
	{ "${TMPDIR:-${TMP:-/tmp}}", "/tmp", NULL },
	{ "${UNSET:-${UNSET2:-${A}}}", "1", NULL },
	{ "${NESTED}", "${A}", NULL }, /* a value is never expanded again */
	{ "${UNSET:-${NESTED}}", "${A}", NULL },
	{ "${BRACES}", "{x}", NULL },
	{ "${UNSET:-${BRACES}}", "{x}", NULL },
	{ "${UNSET:-a-b:c}", "a-b:c", NULL },
	{ "${W}", "a b", NULL },
	{ "${*_API_KEY}", "star", NULL }, /* '*' is a name character */
	{ "${${B}}", "1", NULL },	  /* a reference in a name, as py-sandboxes */
	{ "$A ${A", "$A ${A", NULL },	  /* no closing brace: literal */
	{ "$${A}", "$1", NULL },
	{ "{${A}}", "{1}", NULL },
	{ "", "", NULL },
	{ "${A:=b}", NULL, "invalid variable reference" },
	{ "${A:B}", NULL, "invalid variable reference" },
	{ "${}", NULL, "invalid variable reference" },
	{ "${A-b}", NULL, "invalid variable reference" },
	{ "${:-x}", NULL, "invalid variable reference" },
	{ "${A:-{x}}", NULL, "invalid variable reference" },
	{ "${X:Y}", NULL, "invalid variable reference" },
	{ "ok ${A} then ${bad:x}", NULL, "invalid variable reference" },
};

static void test_subst_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(SUBST_CASES) / sizeof(SUBST_CASES[0]); i++) {
		const struct subst_case *c = &SUBST_CASES[i];
		struct policy_subst_error err;
		char *out = policy_subst(c->in, strlen(c->in), policy_envp_lookup, subst_env, NULL,
					 &err);

		if (c->out && (!out || strcmp(out, c->out) != 0)) {
			fprintf(stderr, "'%s': got '%s' (%s)\n", c->in, out ? out : "NULL",
				out ? "" : err.msg);
			fail();
		}
		if (!c->out && (out || !strstr(err.msg, c->err))) {
			fprintf(stderr, "'%s': expected an error, got '%s'\n", c->in,
				out ? out : err.msg);
			fail();
		}
		free(out);
	}
}

static void test_subst_error_location_and_map(void **state)
{
	struct policy_subst_error err;
	size_t *map;
	char *out;

	(void)state;
	out = policy_subst("ab ${A:=x} c", 12, policy_envp_lookup, subst_env, NULL, &err);
	assert_null(out);
	assert_int_equal(err.offset, 3);
	assert_int_equal(err.len, 7);
	out = policy_subst("a${W}b", 6, policy_envp_lookup, subst_env, &map, &err);
	assert_string_equal(out, "aa bb");
	assert_int_equal(map[0], 0);
	assert_int_equal(map[1], 1);
	assert_int_equal(map[3], 1);
	assert_int_equal(map[4], 5);
	assert_int_equal(map[5], 6);
	free(out);
	free(map);
}

static void test_subst_nesting_limit(void **state)
{
	char in[1024] = "", *out;
	struct policy_subst_error err;

	(void)state;
	for (int i = 0; i < 40; i++)
		strcat(in, "${U:-");
	strcat(in, "x");
	for (int i = 0; i < 40; i++)
		strcat(in, "}");
	out = policy_subst(in, strlen(in), NULL, NULL, NULL, &err);
	assert_null(out);
	assert_non_null(strstr(err.msg, "nested"));
	/* 30 levels are fine */
	in[0] = '\0';
	for (int i = 0; i < 30; i++)
		strcat(in, "${U:-");
	strcat(in, "x");
	for (int i = 0; i < 30; i++)
		strcat(in, "}");
	out = policy_subst(in, strlen(in), NULL, NULL, NULL, &err);
	assert_string_equal(out, "x");
	free(out);
}

/* ---------------- include */

static struct parsed parse_file_at(const char *rel, const struct policy_override *ov, size_t n_ov)
{
	struct parsed r = { 0 };

	r.ret = policy_parse_file(rel, envp, tmp, ov, n_ov, &r.p, &r.d);
	assert_int_equal(r.ret == 0, r.p != NULL);
	assert_int_equal(r.ret == 0, r.d.n_errors == 0);
	return r;
}

/* Issue 10 item 9: every setting of the FAQ's "generic acceptance" list is accepted with
 * its meaning: the legacy expose-rw=/,/ means expose-rw=/ (with a warning naming it). */
static void test_faq_generic_acceptance_settings(void **state)
{
	struct parsed r;

	(void)state;
	r = parse_ok("env=*=${*}\n"
		     "expose-rw=/,/\n"
		     "net=ALLOW|*|*|*|*\n"
		     "python-import=*\n"
		     "python-api=ALLOW:*\n"
		     "eval-namespace=caller\n"
		     "remote-result-mode=objects\n"
		     "remote-result-guard=false\n"
		     "learn=.py-sandboxes\n"
		     "os-sandbox=none\n");
	assert_int_equal(r.p->n_paths, 1);
	assert_string_equal(r.p->paths[0].path, "/");
	assert_int_equal(r.p->paths[0].access, POLICY_RW);
	assert_int_equal(r.d.n_warnings >= 1, 1);
	assert_non_null(strstr(r.d.warnings[0].msg, "the modern form is expose-rw=/"));
	assert_int_equal(r.p->n_nets, 1);
	assert_int_equal(r.p->nets[0].protos, POLICY_PROTO_TCP | POLICY_PROTO_UDP);
	assert_int_equal(r.p->nets[0].dirs, POLICY_DIR_IN | POLICY_DIR_OUT);
	assert_string_equal(r.p->envs[0].name, "*");
	assert_true(policy_exec_allowed(r.p, NULL));
	/* a bare name is next to the policy (guard_provider.parse_rules) */
	assert_string_equal(policy_get(r.p, "learn"), tpath(".py-sandboxes"));
	assert_string_equal(policy_get(r.p, "os-sandbox"), "none");
	done(&r);
	/* each alone too: python-api=ALLOW:dynamic-code */
	r = parse_ok("python-api=ALLOW:dynamic-code\n");
	done(&r);
}

static void test_include_resolution(void **state)
{
	struct parsed r;

	(void)state;
	put("inc.pysb", "bpf.from=cwd\n");
	put("sub/inc.pysb", "bpf.from=sub\n");
	/* a bare name is looked for next to the including file */
	put("sub/bare.pysb", "include \"inc.pysb\"\n");
	r = parse_file_at("sub/bare.pysb", NULL, 0);
	assert_string_equal(policy_get(r.p, "bpf.from"), "sub");
	assert_int_equal(r.p->n_files, 2);
	assert_string_equal(r.p->files[0], "sub/bare.pysb");
	done(&r);
	/* a path with a '/' is resolved from the cwd, even "./x" */
	put("sub/dot.pysb", "include \"./inc.pysb\"\n");
	r = parse_file_at("sub/dot.pysb", NULL, 0);
	assert_string_equal(policy_get(r.p, "bpf.from"), "cwd");
	done(&r);
	/* ~ in the path; a ${VAR} is literal (py-sandboxes expands includes first) */
	put("home/h.pysb", "bpf.from=home\n");
	r = parse_ok("include \"~/h.pysb\"");
	assert_string_equal(policy_get(r.p, "bpf.from"), "home");
	done(&r);
	expect_err("include \"${INCDIR}/inc.pysb\"", 1, 10,
		   "a ${...} in an include path is literal");
	expect_err("include '${INCDIR}/inc.pysb'", 1, 9, "double quotes");
}

/* Included lines are spliced in place and keep their own file:line. */
static void test_include_splice_and_origin(void **state)
{
	struct parsed r;
	char real[PATH_MAX];

	(void)state;
	put("mid.pysb", "\nbpf.order=2\nexpose-ro=sub\n");
	r = parse_ok("bpf.order=1\nexpose-ro=d\ninclude \"mid.pysb\"\nbpf.order=3\n");
	assert_int_equal(r.p->n_params, 3);
	assert_string_equal(r.p->params[1].value, "2");
	assert_int_equal(r.p->params[1].src.line, 2);
	assert_non_null(realpath(tpath("mid.pysb"), real));
	assert_string_equal(r.p->params[1].src.file, real);
	assert_string_equal(r.p->params[2].src.file, "t.pysb");
	assert_int_equal(r.p->params[2].src.line, 4);
	assert_int_equal(r.p->n_paths, 2);
	assert_string_equal(r.p->paths[1].src.file, real);
	done(&r);
	/* an error inside an include names the included file */
	put("broken.pysb", "py-sandbox=true\nfoo=1\n");
	r = parse("include \"broken.pysb\"\nbar=2");
	assert_int_equal(r.d.n_errors, 2);
	assert_non_null(realpath(tpath("broken.pysb"), real));
	assert_string_equal(r.d.errors[0].file, real);
	assert_int_equal(r.d.errors[0].line, 2);
	assert_string_equal(r.d.errors[1].file, "t.pysb");
	assert_int_equal(r.d.errors[1].line, 2);
	done(&r);
}

static void test_include_loops(void **state)
{
	struct parsed r;

	(void)state;
	put("loop_a.pysb", "include \"loop_b.pysb\"\nbpf.a=1\n");
	put("loop_b.pysb", "include \"loop_a.pysb\"\ninclude \"loop_b.pysb\"\nbpf.b=1\n");
	r = parse_file_at("loop_a.pysb", NULL, 0);
	assert_int_equal(r.p->n_params, 2);
	assert_int_equal(r.p->n_files, 2);
	done(&r);
	/* the root itself counts as loaded; a file included twice is read once */
	put("self.pysb", "include \"self.pysb\"\ninclude \"inc.pysb\"\ninclude \"inc.pysb\"\n");
	put("inc.pysb", "bpf.from=cwd\n");
	r = parse_file_at("self.pysb", NULL, 0);
	assert_int_equal(r.p->n_params, 1);
	done(&r);
	/* a buffer named after an existing file is that file */
	r = (struct parsed){ 0 };
	r.ret = policy_parse_buffer(tpath("self.pysb"), "include \"self.pysb\"", 19, envp, tmp,
				    &r.p, &r.d);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.p->n_params, 0);
	done(&r);
}

static void test_include_optional_missing_unreadable(void **state)
{
	struct parsed r;

	(void)state;
	r = parse_ok("include? \"nope.pysb\"\ninclude? \"./nope\"\ninclude? \"~/nope\"\n"
		     "include? \"/nonexistent-pysb/x\"\ninclude? \"f/x\"");
	assert_int_equal(r.p->n_files, 1);
	done(&r);
	expect_err("include \"/nonexistent-pysb/x\"", 1, 10, "not found");
	expect_err("include \"nope.pysb\"", 1, 10, "write include? \"nope.pysb\"");
	/* not a regular file: an error for include? too */
	assert_int_equal(mkfifo(tpath("fifo"), 0600), 0);
	expect_err("include? \"fifo\"", 1, 11, "not a regular file");
	/* unreadable: an error for include? too (root reads anything: skipped then) */
	put("secret.pysb", "bpf.x=1\n");
	chmod(tpath("secret.pysb"), 0);
	if (geteuid() != 0) {
		expect_err("include? \"secret.pysb\"", 1, 11, "cannot read");
		expect_err("include \"secret.pysb\"", 1, 10, "cannot read");
	}
}

static void test_include_depth_limit(void **state)
{
	char name[32], text[64];
	struct parsed r;

	(void)state;
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "chain%d", i);
		snprintf(text, sizeof(text), "include \"chain%d\"\n", i + 1);
		put(name, text);
	}
	put("chain40", "bpf.end=1\n");
	r = parse_file_at("chain0", NULL, 0);
	assert_int_equal(r.d.n_errors, 1);
	assert_non_null(strstr(r.d.errors[0].msg, "nested more than 32"));
	done(&r);
}

static void test_missing_root_file(void **state)
{
	struct parsed r;

	(void)state;
	r = parse_file_at("no-such.py-sandboxes", NULL, 0);
	assert_int_equal(r.d.n_errors, 1);
	assert_string_equal(r.d.errors[0].file, "no-such.py-sandboxes");
	assert_non_null(strstr(r.d.errors[0].msg, "python-sb --learn"));
	assert_non_null(strstr(r.d.errors[0].msg, "expose-ro="));
	done(&r);
	r = parse_file_at("d", NULL, 0);
	assert_non_null(strstr(r.d.errors[0].msg, "Is a directory"));
	done(&r);
}

/* ---------------- command-line overrides */

static void test_overrides(void **state)
{
	const struct policy_override ov[] = { { "expose-ro=d" }, { "net=ALLOW|tcp|*|443|OUT" } };
	const struct policy_override bad[] = { { "expose-ro=nope" } };
	struct parsed r;

	(void)state;
	put("ov.pysb", "expose-ro=sub\n");
	r = parse_file_at("ov.pysb", ov, 2);
	assert_int_equal(r.p->n_paths, 2);
	assert_string_equal(r.p->paths[1].src.file, "<command line>");
	assert_int_equal(r.p->paths[1].src.line, 1);
	assert_int_equal(r.p->n_nets, 1);
	assert_int_equal(r.p->nets[0].src.line, 2);
	done(&r);
	r = parse_file_at("ov.pysb", bad, 1);
	assert_true(has_error_in(&r.d, "<command line>", 1, 11, "must exist"));
	done(&r);
	/* learn=false refuses every command-line rule */
	put("locked.pysb", "learn=false\nexpose-ro=sub\n");
	r = parse_file_at("locked.pysb", ov, 2);
	assert_int_equal(r.d.n_errors, 1);
	assert_true(has_error_in(&r.d, "locked.pysb", 1, 7, "learn=false locks this policy"));
	done(&r);
	r = parse_file_at("locked.pysb", NULL, 0);
	assert_int_equal(r.ret, 0);
	done(&r);
}

/* ---------------- env building */

static char *host[] = { "A=1",	  "B_API_KEY=k1", "C_API_KEY=k2", "D_API_KEY=", "PATH=/bin",
			"X=${A}", "HOME=/h",	  "A=shadowed",	  NULL };

/* Builds the environment of `text` against host[] and compares it to `want` (";"-joined). */
static void expect_env(const char *text, const char *want)
{
	struct parsed r = parse_ok(text);
	char **env, got[1024] = "";

	assert_int_equal(policy_build_env(r.p, host, &env), 0);
	for (char **e = env; *e; e++) {
		if (got[0])
			strcat(got, ";");
		strcat(got, *e);
	}
	if (strcmp(got, want) != 0) {
		fprintf(stderr, "policy:\n%s\nwanted '%s'\ngot    '%s'\n", text, want, got);
		fail();
	}
	policy_env_free(env);
	done(&r);
}

static void test_build_env(void **state)
{
	(void)state;
	expect_env("", "");		 /* starts empty */
	expect_env("env=A=${A}", "A=1"); /* the first A of the host counts */
	expect_env("env=P=${PATH}:/x", "P=/bin:/x");
	expect_env("env=U=${UNSET}", ""); /* empty result: not set */
	expect_env("env=U=${UNSET:-dflt}", "U=dflt");
	expect_env("env=E=", "E=");				/* a literal empty value is kept */
	expect_env("env=Y=${X}", "Y=${A}");			/* values are not expanded again */
	expect_env("env=Q=\"socks5://x\"", "Q=\"socks5://x\""); /* quotes are kept */
	expect_env("env=A=1\nenv=A=2", "A=2");
	/* wildcards copy matching host variables, empty ones skipped */
	expect_env("env=*_API_KEY=${*_API_KEY}", "B_API_KEY=k1;C_API_KEY=k2");
	/* an exact rule beats a wildcard whatever the order (wildcard copies come first) */
	expect_env("env=B_API_KEY=fixed\nenv=*_API_KEY=${*_API_KEY}",
		   "C_API_KEY=k2;B_API_KEY=fixed");
	expect_env("env=*_API_KEY=${*_API_KEY}\nenv=B_API_KEY=fixed",
		   "C_API_KEY=k2;B_API_KEY=fixed");
	/* a literal value with a wildcard is set on every match */
	expect_env("env=*_API_KEY=hidden", "B_API_KEY=hidden;C_API_KEY=hidden;D_API_KEY=hidden");
	/* unenv= removes wherever it appears, patterns too */
	expect_env("unenv=C_API_KEY\nenv=*_API_KEY=${*_API_KEY}", "B_API_KEY=k1");
	expect_env("env=*_API_KEY=${*_API_KEY}\nenv=A=${A}\nunenv=*_KEY", "A=1");
	expect_env("env=HOME=${HOME}\nunenv=HOME\nenv=HOME=again", "");
	expect_env("env=*=${*}", "A=1;B_API_KEY=k1;C_API_KEY=k2;PATH=/bin;X=${A};HOME=/h");
}

/* Values come from the host environment given to policy_build_env, not the parse one. */
static void test_build_env_uses_host(void **state)
{
	struct parsed r = parse_ok("env=OS=${OS_SANDBOX}");
	char *other[] = { "OS_SANDBOX=firejail", NULL };
	char **env;

	(void)state;
	assert_int_equal(policy_build_env(r.p, other, &env), 0);
	assert_string_equal(env[0], "OS=firejail");
	assert_null(env[1]);
	policy_env_free(env);
	assert_int_equal(policy_build_env(r.p, NULL, &env), 0);
	assert_null(env[0]);
	policy_env_free(env);
	done(&r);
}

static void test_glob(void **state)
{
	char subject[101];

	(void)state;
	assert_true(policy_glob_match("*", ""));
	assert_true(policy_glob_match("*_KEY", "A_KEY"));
	assert_false(policy_glob_match("*_KEY", "A_KEY_X"));
	assert_true(policy_glob_match("a*b*c", "aXbYc"));
	assert_false(policy_glob_match("a?c", "abc")); /* '*' is the only wildcard */
	assert_true(policy_glob_match("A", "A"));
	memset(subject, 'a', 100);
	subject[100] = '\0';
	assert_false(policy_glob_match("*a*a*a*a*a*a*Z*", subject));
}

/*
 * The parser resolves expose paths with a cache of parent directories (and their listings)
 * instead of realpath(3) on every rule: every spelling must still give realpath's answer,
 * whether its parent is seen for the first time, cached, or cached and listed (the third
 * rule is the second lookup in d/ or in the top directory).
 */
static void test_canonical_paths(void **state)
{
	static const char *const spellings[] = {
		"d",	     "d/",	  "./d",	 ".//d",	"d/.",	   "link",
		"link/",     "link/.",	  "sub/../d",	 "link/../f",	"f",	   "link/inner",
		"link/lnk2", "lnk2",	  "sub//deep",	 "d/lnk3",	"/",	   "//",
		"link/sl",   "d/inner/.", "sub/deep/..", "home/x/../x", "d/inner", "sub/deep",
	};
	char text[256], want[PATH_MAX];

	(void)state;
	mkdir(tpath("d/inner"), 0755);
	mkdir(tpath("sub/deep"), 0755);
	assert_int_equal(symlink("inner", tpath("d/lnk2")), 0);	      /* a link among siblings */
	assert_int_equal(symlink("d/inner", tpath("lnk2")), 0);	      /* relative, from the top */
	assert_int_equal(symlink("../sub/deep", tpath("d/lnk3")), 0); /* upwards */
	assert_int_equal(symlink("inner", tpath("d/sl")), 0);
	for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
		const char *sp = spellings[i];
		struct parsed r;

		/* the first rule warms the cache of the spelling's parent */
		snprintf(text, sizeof(text), "expose-ro=d/inner\nexpose-ro=sub\nexpose-ro=%s", sp);
		r = parse(text);
		if (r.ret)
			dump(&r.d);
		assert_int_equal(r.ret, 0);
		assert_non_null(realpath(sp[0] == '/' ? sp : tpath(sp), want));
		assert_true(r.p->n_paths >= 2);
		if (strcmp(want, r.p->paths[0].path) && strcmp(want, r.p->paths[1].path)) {
			assert_int_equal(r.p->n_paths, 3);
			if (strcmp(r.p->paths[2].path, want))
				fail_msg("%s: parsed as %s, realpath says %s", sp,
					 r.p->paths[2].path, want);
		}
		done(&r);
	}
	/* a name gone or never there, and a dangling link, whatever the cache holds */
	expect_err("expose-ro=d/inner\nexpose-ro=d/none", 2, 11, "path 'd/none' must exist");
	assert_int_equal(symlink("gone", tpath("d/dangling")), 0);
	expect_err("expose-ro=d/inner\nexpose-ro=d/lnk2\nexpose-ro=d/dangling", 3, 11,
		   "path 'd/dangling' must exist");
	expect_err("expose-ro=d/inner\nexpose-ro=f/x", 2, 11, "path 'f/x' must exist");
}

/* ---------------- unusual environments */

static void test_symlink_loops(void **state)
{
	(void)state;
	assert_int_equal(symlink("sl1", tpath("sl2")), 0);
	assert_int_equal(symlink("sl2", tpath("sl1")), 0);
	expect_err("expose-ro=sl1", 1, 11, "cannot resolve path 'sl1'");
	expect_err("include? \"sl1\"", 1, 11, "cannot read included file");
}

/* Without HOME in envp, ~ is the account's home directory, as os.path.expanduser does. */
static void test_home_from_passwd(void **state)
{
	char *no_home[] = { "A=1", NULL };
	const struct passwd *pw = getpwuid(getuid());
	const char *text = "include? \"~/.no-such-file-pysb\"\nexpose-ro=~";
	char real[PATH_MAX];
	struct parsed r = { 0 };

	(void)state;
	if (!pw || !realpath(pw->pw_dir, real)) {
		fprintf(stderr, "no home directory for uid %u: skipped\n", (unsigned)getuid());
		skip();
	}
	r.ret = policy_parse_buffer("t.pysb", text, strlen(text), no_home, tmp, &r.p, &r.d);
	if (r.ret)
		dump(&r.d);
	assert_int_equal(r.ret, 0);
	assert_string_equal(r.p->paths[0].path, real);
	done(&r);
}

/* cwd NULL is the process's working directory; a relative cwd is taken from there. */
static void test_cwd_argument(void **state)
{
	char here[PATH_MAX], real[PATH_MAX], want[PATH_MAX + 8];
	struct parsed r = { 0 };

	(void)state;
	assert_non_null(getcwd(here, sizeof(here)));
	assert_non_null(realpath(tmp, real));
	assert_int_equal(chdir(tmp), 0);
	r.ret = policy_parse_buffer("t.pysb", "expose-ro=d", 11, envp, NULL, &r.p, &r.d);
	assert_int_equal(r.ret, 0);
	snprintf(want, sizeof(want), "%s/d", real);
	assert_string_equal(r.p->paths[0].path, want);
	done(&r);
	r.ret = policy_parse_buffer("t.pysb", "expose-ro=.", 11, envp, "sub", &r.p, &r.d);
	assert_int_equal(r.ret, 0);
	snprintf(want, sizeof(want), "%s/sub", real);
	assert_string_equal(r.p->paths[0].path, want);
	done(&r);
	assert_int_equal(chdir(here), 0);
}

static const char *big_lookup(void *ctx, const char *name)
{
	(void)name;
	return ctx;
}

static void test_value_size_limit(void **state)
{
	const size_t n = 2 * 1024 * 1024;
	char *big = malloc(n + 1), *out;
	struct policy_subst_error err;

	(void)state;
	assert_non_null(big);
	memset(big, 'v', n);
	big[n] = '\0';
	out = policy_subst("${BIG}", 6, big_lookup, big, NULL, &err);
	assert_null(out);
	assert_non_null(strstr(err.msg, "too long"));
	free(big);
}

/* Policy files are small: anything beyond 16 MiB is refused before it is parsed. */
static void test_file_size_limit(void **state)
{
	FILE *f = fopen(tpath("huge.pysb"), "w");
	struct parsed r;

	(void)state;
	assert_non_null(f);
	assert_int_equal(fseek(f, 17 * 1024 * 1024, SEEK_SET), 0);
	fputc('\n', f);
	fclose(f);
	r = parse_file_at("huge.pysb", NULL, 0);
	assert_true(has_error_in(&r.d, "huge.pysb", 0, 0, "larger than 16 MiB"));
	done(&r);
	expect_err("include \"huge.pysb\"", 1, 10, "larger than 16 MiB");
	remove(tpath("huge.pysb"));
}

/* ---------------- diagnostics output */

static void test_diag_print(void **state)
{
	struct parsed r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	r = parse("expose-rw=/,/\nfoo=1");
	diag_print(f, &r.d);
	fclose(f);
	assert_string_equal(buf,
			    "t.pysb:1:11: warning: legacy two-path form '/,/': the modern "
			    "form is expose-rw=/ (differs from py-sandboxes, whose newest parser "
			    "refuses it; pysb-bpf reads one path)\n    expose-rw=/,/\n"
			    "t.pysb:2:1: error: unknown key 'foo': see FORMAT-NOTES §1.4 for "
			    "the keys; a provider parameter is written <provider>.<key>=value\n"
			    "    foo=1\n");
	free(buf);
	done(&r);
	/* a message tied to a file but no line */
	r = parse_file_at("no-such.pysb", NULL, 0);
	f = open_memstream(&buf, &len);
	diag_print(f, &r.d);
	fclose(f);
	assert_true(strncmp(buf, "no-such.pysb: error: policy file not found", 42) == 0);
	free(buf);
	done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_per_key),
		cmocka_unit_test(test_comments_blank_and_template_lines),
		cmocka_unit_test(test_line_endings),
		cmocka_unit_test(test_expose_paths),
		cmocka_unit_test(test_expose_dedup_and_legacy_pair),
		cmocka_unit_test(test_canonical_paths),
		cmocka_unit_test(test_ignore),
		cmocka_unit_test(test_net_fields),
		cmocka_unit_test(test_env_rules_kept_raw),
		cmocka_unit_test(test_error_table),
		cmocka_unit_test(test_all_errors_collected),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_binary_garbage),
		cmocka_unit_test(test_error_cap),
		cmocka_unit_test(test_display_text_escaped),
		cmocka_unit_test(test_subst_table),
		cmocka_unit_test(test_subst_error_location_and_map),
		cmocka_unit_test(test_subst_nesting_limit),
		cmocka_unit_test(test_include_resolution),
		cmocka_unit_test(test_faq_generic_acceptance_settings),
		cmocka_unit_test(test_include_splice_and_origin),
		cmocka_unit_test(test_include_loops),
		cmocka_unit_test(test_include_optional_missing_unreadable),
		cmocka_unit_test(test_include_depth_limit),
		cmocka_unit_test(test_missing_root_file),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_build_env),
		cmocka_unit_test(test_build_env_uses_host),
		cmocka_unit_test(test_glob),
		cmocka_unit_test(test_symlink_loops),
		cmocka_unit_test(test_home_from_passwd),
		cmocka_unit_test(test_cwd_argument),
		cmocka_unit_test(test_value_size_limit),
		cmocka_unit_test(test_file_size_limit),
		cmocka_unit_test(test_diag_print),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
