/* SPDX-License-Identifier: MIT */
/*
 * `pysb-bpf check`. The report is built once, as a JSON document (jansson), and printed
 * either as JSON or as text rendered from that document, so both forms always say the same
 * thing. Strings that come from the file system or the policy may hold bytes that are not
 * UTF-8, which JSON cannot carry: such a string S is written as "S" in a display form (each
 * byte that is not UTF-8 as the four characters \xNN) plus "S_b64", the exact bytes in
 * base64. A string without "_b64" is exact.
 *
 * The parser and the compiler report their errors and warnings as records (file, line,
 * col, message, hint) in one diag_list (user/lib/diag.h) that check owns: the report holds
 * them as they are, and nothing is read back from stderr.
 */
#include "check_int.h"

/* ---------------- strings: UTF-8 or display form + base64 (user/lib/json_bytes.c) */

void set_new(struct report *r, json_t *obj, const char *key, json_t *v)
{
	if (!v || json_object_set_new(obj, key, v))
		r->oom = true;
}

/* obj[key] = s, plus obj[key_b64] when s is not UTF-8 (see the file comment). */
void set_bytes(struct report *r, json_t *obj, const char *key, const char *s)
{
	if (json_object_set_bytes(obj, key, s))
		r->oom = true;
}

void push(struct report *r, json_t *arr, json_t *v)
{
	if (!v || json_array_append_new(arr, v))
		r->oom = true;
}

json_t *new_array(struct report *r, json_t *parent, const char *key)
{
	json_t *a = json_array();

	set_new(r, parent, key, a);
	return a;
}

json_t *new_object(struct report *r, json_t *parent, const char *key)
{
	json_t *o = json_object();

	set_new(r, parent, key, o);
	return o;
}

/* o.file, o.line, o.col of a policy line (nothing when there is none). */
void set_src(struct report *r, json_t *o, const struct policy_src *s)
{
	if (!s || !s->file)
		return;
	if (s->file != r->file) {
		json_decref(r->file_json);
		r->file_json = json_object();
		if (!r->file_json) {
			r->oom = true;
			return;
		}
		set_bytes(r, r->file_json, "file", s->file);
		r->file = s->file;
	}
	set_new(r, o, "file", json_incref(json_object_get(r->file_json, "file")));
	if (json_object_get(r->file_json, "file_b64"))
		set_new(r, o, "file_b64", json_incref(json_object_get(r->file_json, "file_b64")));
	set_new(r, o, "line", json_integer(s->line));
	set_new(r, o, "col", json_integer(s->col));
}

/* ["read", "write", "exec", "keep-name"] of access bits (one shared array per
 * combination). */
json_t *access_json(struct report *r, uint32_t acc)
{
	json_t **a = &r->access[acc & 31];

	if (!*a) {
		*a = json_array();
		if (!*a)
			return NULL;
		if (acc & PYSB_ACC_READ)
			push(r, *a, json_string("read"));
		if (acc & PYSB_ACC_WRITE)
			push(r, *a, json_string("write"));
		if (acc & PYSB_ACC_EXEC)
			push(r, *a, json_string("exec"));
		if (acc & PYSB_ACC_KEEP_NAME)
			push(r, *a, json_string("keep-name"));
		if (acc & PYSB_ACC_ALONE) /* a directory's listing, nothing below it */
			push(r, *a, json_string("alone"));
	}
	return json_incref(*a);
}

json_t *dev_json(uint32_t dev)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%u:%u", dev >> 20, dev & 0xfffff);
	return json_string(buf);
}

/* A warning of check's own (or of the parser), with the line it is about. */
__attribute__((format(printf, 3, 4))) void warn(struct report *r, const struct policy_src *s,
						const char *fmt, ...)
{
	json_t *w = json_object();
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!w || !msg) {
		r->oom = true;
		json_decref(w);
		free(msg);
		return;
	}
	set_bytes(r, w, "message", msg);
	set_src(r, w, s);
	push(r, r->warnings, w);
	free(msg);
}

/* ---------------- the parser's and the compiler's messages */

/* Every record of the diagnostics channel (user/lib/diag.h) into the report, as it is:
 * file, line, col, message, hint, offending text. */
static void take_diag(struct report *r, const struct diag_list *d)
{
	for (int e = 0; e < 2; e++) {
		const struct diag *m = e ? d->errors : d->warnings;
		size_t n = e ? d->n_errors : d->n_warnings;

		for (size_t i = 0; i < n; i++) {
			json_t *o = json_object();

			if (!o) {
				r->oom = true;
				continue;
			}
			set_bytes(r, o, "message", m[i].msg ? m[i].msg : "out of memory");
			if (m[i].file)
				set_bytes(r, o, "file", m[i].file);
			if (m[i].line)
				set_new(r, o, "line", json_integer(m[i].line));
			if (m[i].line && m[i].col)
				set_new(r, o, "col", json_integer(m[i].col));
			if (m[i].hint)
				set_bytes(r, o, "hint", m[i].hint);
			if (m[i].text && m[i].text[0])
				set_bytes(r, o, "text", m[i].text);
			push(r, e ? r->errors : r->warnings, o);
		}
	}
}

/* ---------------- the document */

static json_t *policy_json(struct report *r, const struct check_opts *o, const struct policy *p)
{
	json_t *pol = json_object(), *files;

	if (!pol)
		return NULL;
	set_bytes(r, pol, "path", o->policy);
	files = new_array(r, pol, "files");
	for (size_t i = 0; p && files && i < p->n_files; i++) {
		json_t *f = json_object();

		if (f)
			set_bytes(r, f, "name", p->files[i]);
		push(r, files, f);
	}
	return pol;
}

/* What `run` would execute: the program as typed, the interpreter that really starts
 * (it decides the implicit paths), the script, the chain followed to find them. */
static void add_program(struct report *r, json_t *root)
{
	const struct program *pr = r->prog;
	json_t *o = new_object(r, root, "program"), *argv;

	if (!o || !pr)
		return;
	argv = new_array(r, o, "argv");
	for (int i = 0; argv && pr->argv[i]; i++) {
		json_t *a = json_object(), *v;

		/* plain strings in the array: set_bytes needs an object, so go through one */
		set_bytes(r, a, "v", pr->argv[i]);
		v = json_object_get(a, "v");
		push(r, argv, json_incref(v));
		json_decref(a);
	}
	set_bytes(r, o, "interpreter", pr->interp);
	if (pr->has_script)
		set_bytes(r, o, "script", pr->script);
	else
		set_new(r, o, "script", json_null());
	set_bytes(r, o, "resolved", pr->how);
	if (pr->needs_exec)
		set_bytes(r, o, "exec_after_start", pr->needs_exec);
	else
		set_new(r, o, "exec_after_start", json_null());
}

static void build_report(struct report *r)
{
	json_t *kernel = new_object(r, r->root, "kernel");

	if (kernel) {
		add_exec(r, kernel);
		add_files(r, kernel);
		warn_secrets(r);
		add_ignores(r, kernel);
		add_file_systems(r, kernel);
		if (r->o->verbose)
			add_mounts(r, kernel);
		add_net(r, kernel);
	}
	add_program(r, r->root);
	add_environment(r, r->root);
	add_bpf_params(r, r->root);
	add_python_layer(r, r->root);
}

/* ---------------- entry point */

/* An error of check's own, with no file:line. */
static void add_error(struct report *r, const char *msg)
{
	json_t *e = json_object();

	if (e)
		set_bytes(r, e, "message", msg);
	push(r, r->errors, e);
}

/* Resolves the program (as `run` does) and compiles p, the compiler's messages into d.
 * True when compiled; false after recording why not. */
static bool compile_checked(struct report *r, struct policy *p, struct program *prog,
			    struct compiled *c, struct diag_list *d)
{
	const struct check_opts *o = r->o;
	int rc;

	if (!o->interpreter) {
		/* as `run` resolves it; python3 by default, and then only shown if found */
		rc = o->program ? program_resolve(o->program, o->n_program, NULL, prog)
				: program_resolve((char *[]){ "python3", NULL }, 1, NULL, prog);
		if (rc && o->program) {
			add_error(r, "the program cannot be resolved (see stderr)");
			return false;
		}
		r->prog = rc ? NULL : prog;
	}
	rc = policy_compile(
		p,
		&(struct compile_opts){
			.interpreter = o->interpreter ? o->interpreter
				       : r->prog      ? prog->interp
						      : NULL,
			.script = r->prog && prog->has_script ? prog->script : NULL,
			.script_named = r->prog && prog->has_script ? prog->script_named : NULL,
			.path0_cwd = r->prog && prog->path0_cwd[0] ? prog->path0_cwd : NULL,
			.implicit = true, /* unless bpf.implicit=false */
			.resolve = o->resolve,
			.resolv_conf = o->resolv_conf,
			.diag = d,
		},
		c);
	if (rc && !d->n_errors) /* a failure that said nothing: still one */
		add_error(r, "the policy does not compile");
	return !rc;
}

/* The document, as JSON or text (errors to stderr when invalid). 0 when valid and
 * written, 1 otherwise. */
static int report_out(struct report *r, bool valid, FILE *out)
{
	set_new(r, r->root, "valid", json_boolean(valid));
	set_new(r, r->root, "warnings", r->warnings);
	set_new(r, r->root, "errors", r->errors);
	if (r->oom) {
		pr_err("check: out of memory building the report");
		return 1;
	}
	if (r->o->json) {
		if (json_dumpf(r->root, out, JSON_INDENT(2)) || fputc('\n', out) == EOF)
			goto write_error;
	} else if (valid) {
		render_text(out, r->root, r->o->verbose);
	} else {
		render_errors(stderr, r->root);
	}
	if (fflush(out))
		goto write_error;
	return valid ? 0 : 1;
write_error:
	pr_err("check: cannot write the report: %s", strerror(errno));
	return 1;
}

int check_main(const struct check_opts *o)
{
	struct report r = { .o = o };
	struct diag_list diag = { 0 };
	struct compiled c = { 0 };
	struct policy *p = NULL;
	struct program prog = { 0 };
	bool valid = false;
	int ret = 1;

	r.root = json_object();
	r.warnings = json_array();
	r.errors = json_array();
	if (!r.root || !r.warnings || !r.errors) {
		json_decref(r.warnings);
		json_decref(r.errors);
		goto out;
	}
	set_new(&r, r.root, "format", json_integer(CHECK_FORMAT));
	ret = policy_parse_file(o->policy, o->envp, o->cwd, o->overrides, o->n_overrides, &p,
				&diag);
	set_new(&r, r.root, "policy", policy_json(&r, o, p));
	if (!ret && compile_checked(&r, p, &prog, &c, &diag)) {
		r.p = p;
		r.c = &c;
		take_diag(&r, &diag); /* the parser's and the compiler's before check's own */
		build_report(&r);
		add_departures(&r);
		valid = !json_array_size(r.errors);
	} else {
		take_diag(&r, &diag);
		if (!p && o->missing_hint)
			add_error(&r, o->missing_hint);
	}
	ret = report_out(&r, valid, o->out ? o->out : stdout);
out:
	for (size_t i = 0; i < sizeof(r.access) / sizeof(r.access[0]); i++)
		json_decref(r.access[i]);
	json_decref(r.file_json);
	json_decref(r.root);
	compiled_free(&c);
	program_free(&prog);
	policy_free(p);
	diag_free(&diag);
	return ret;
}
