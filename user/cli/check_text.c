/* SPDX-License-Identifier: MIT */
/*
 * `pysb-bpf check`: the text form, rendered from the JSON document. See check.c.
 */
#include "check_int.h"
#include "utf8.h"

/* ---------------- text, rendered from the document */

static const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* Control characters as \xNN, so one entry stays on one line; C1 ones too (U+0080 to
 * U+009F, 8-bit CSI and OSC, which terminals run: a link on the interpreter's way that a
 * program re-pointed in its rw tree is listed by name, found by an adversary, round 29):
 * what utf8_printable() does not pass. Bytes that are not UTF-8 came as \xNN already
 * (json_bytes.h's display form). */
static void put_text(FILE *f, const char *s)
{
	for (const char *end = s + strlen(s); *s;) {
		size_t n = utf8_printable(s, (size_t)(end - s));

		if (!n) {
			fprintf(f, "\\x%02X", (unsigned char)*s++);
			continue;
		}
		fwrite(s, 1, n, f);
		s += n;
	}
}

/* "file:line" of a source object. */
static void put_at(FILE *f, const json_t *src)
{
	put_text(f, jstr(src, "file"));
	fprintf(f, ":%lld", json_integer_value(json_object_get(src, "line")));
}

/* "  (file:line: key=value)" of a rule object {"rule", "file", "line", "col"}. */
static void put_rule_source(FILE *f, const json_t *rule)
{
	if (!json_object_get(rule, "file"))
		return;
	fputs("  (", f);
	put_at(f, rule);
	fputs(": ", f);
	put_text(f, jstr(rule, "rule"));
	fputc(')', f);
}

/* "  (implicit: why)", "  (file:line: rule)" or "  (file:line)" of an entry. */
static void put_source(FILE *f, const json_t *v)
{
	const char *imp = json_string_value(json_object_get(v, "implicit"));

	if (imp) {
		fputs("  (implicit: ", f);
		put_text(f, imp);
		fputc(')', f);
	} else if (json_object_get(v, "rule")) {
		put_rule_source(f, v);
	} else if (json_object_get(v, "file")) {
		fputs("  (", f);
		put_at(f, v);
		fputc(')', f);
	}
}

/* "  (file:line)" of a rule object, its text being already printed. */
static void put_rule_origin(FILE *f, const json_t *rule)
{
	if (!json_object_get(rule, "file"))
		return;
	fputs("  (", f);
	put_at(f, rule);
	fputc(')', f);
}

static void put_access(FILE *f, const json_t *acc)
{
	char buf[64] = "";
	size_t i;
	json_t *v;

	json_array_foreach(acc, i, v)
	{
		if (i)
			strcat(buf, ",");
		strncat(buf, json_string_value(v) ? json_string_value(v) : "?", 12);
	}
	fprintf(f, "%-15s ", buf[0] ? buf : "none");
}

static void put_ports(FILE *f, const json_t *ranges)
{
	size_t i;
	json_t *v;

	if (!json_array_size(ranges)) {
		fputs("none", f);
		return;
	}
	json_array_foreach(ranges, i, v)
	{
		json_int_t lo = json_integer_value(json_array_get(v, 0));
		json_int_t hi = json_integer_value(json_array_get(v, 1));

		if (i)
			fputc(',', f);
		if (lo == 0 && hi == 65535)
			fputc('*', f);
		else if (lo == hi)
			fprintf(f, "%lld", lo);
		else
			fprintf(f, "%lld-%lld", lo, hi);
	}
}

/* The exec decision, and the rule that made it. */
static void render_exec(FILE *f, const json_t *k)
{
	const json_t *exec = json_object_get(k, "exec");
	const json_t *by = json_object_get(exec, "decided_by");

	fputs("== kernel: exec\n", f);
	fprintf(f, "exec    %-16s",
		json_is_true(json_object_get(exec, "allowed")) ? "allowed" : "denied");
	put_text(f, jstr(exec, "effect"));
	if (json_is_object(by))
		put_rule_source(f, by);
	else
		fputs("  (default: no python-api line allows process-exec)", f);
	fputc('\n', f);
}

/* File entries, ignore= patterns and what they hide, file systems, mounts (-v). */
static void render_files(FILE *f, const json_t *k, bool verbose)
{
	const json_t *arr, *v, *w;
	size_t i, j;

	arr = json_object_get(k, "files");
	fprintf(f,
		"== kernel: files (%zu entries; the nearest entry above a file decides, "
		"none: denied)\n",
		json_array_size(arr));
	json_array_foreach(arr, i, v)
	{
		fputs("file    ", f);
		put_access(f, json_object_get(v, "access"));
		put_text(f, jstr(v, "path"));
		fprintf(f, "  [dev %s ino %lld]", jstr(v, "dev"),
			json_integer_value(json_object_get(v, "ino")));
		put_source(f, v);
		fputc('\n', f);
	}

	arr = json_object_get(k, "ignores");
	if (json_array_size(arr))
		fputs("== kernel: ignore= (hidden: denied even below an exposed directory)\n", f);
	json_array_foreach(arr, i, v)
	{
		fputs("ignore  ", f);
		put_text(f, jstr(v, "rule"));
		fputs(": ", f);
		put_text(f, jstr(v, "effect"));
		put_rule_origin(f, v);
		fputc('\n', f);
		json_array_foreach(json_object_get(v, "hidden"), j, w)
		{
			fputs("hidden  ", f);
			put_text(f, jstr(w, "path"));
			fprintf(f, "  [dev %s ino %lld]\n", jstr(w, "dev"),
				json_integer_value(json_object_get(w, "ino")));
		}
	}

	arr = json_object_get(k, "file_systems");
	if (json_array_size(arr))
		fputs("== kernel: file systems (a rule names an inode object, held open while the "
		      "sandbox runs: umount of these waits, or use umount -l)\n",
		      f);
	json_array_foreach(arr, i, v)
	{
		fprintf(f, "fs      %-8s dev %-7s (", jstr(v, "type"), jstr(v, "dev"));
		put_text(f, jstr(v, "example"));
		fputs("): ", f);
		put_text(f, jstr(v, "identity"));
		fputc('\n', f);
	}

	if (verbose) {
		arr = json_object_get(k, "mounts");
		fprintf(f, "== kernel: mounts (%zu file systems; what their mount point grants)\n",
			json_array_size(arr));
		json_array_foreach(arr, i, v)
		{
			fputs("mount   ", f);
			put_access(f, json_object_get(v, "access"));
			fprintf(f, "dev %s\n", jstr(v, "dev"));
		}
	}
}

/* net= rules, the prefixes they folded into, socket families. */
static void render_net(FILE *f, const json_t *k)
{
	const json_t *net, *v;
	size_t i;

	net = json_object_get(k, "net");
	fputs("== kernel: network (deny by default)\n", f);
	if (!json_array_size(json_object_get(net, "rules")))
		fputs("net     no net= rule: every TCP and UDP connect, send and bind over IPv4 "
		      "and IPv6 is denied\n",
		      f);
	json_array_foreach(json_object_get(net, "rules"), i, v)
	{
		fputs("net     ", f);
		put_text(f, jstr(v, "rule"));
		if (json_is_true(json_object_get(v, "dropped")))
			fputs("  DROPPED: the host name did not resolve", f);
		else
			fprintf(f, "  -> %lld prefix(es)",
				json_integer_value(json_object_get(v, "prefixes")));
		if (json_object_get(v, "implicit"))
			put_source(f, v);
		else
			put_rule_origin(f, v);
		fputc('\n', f);
	}
	json_array_foreach(json_object_get(net, "prefixes"), i, v)
	{
		const json_t *ap = json_object_get(v, "allowed_ports");

		fprintf(f, "prefix  %s:", jstr(v, "prefix"));
		for (unsigned s = 0; s < PYSB_NET_SLOTS; s++) {
			fprintf(f, "  %s ", slot_keys[s]);
			put_ports(f, json_object_get(ap, slot_keys[s]));
		}
		fputc('\n', f);
	}
	json_array_foreach(json_object_get(net, "socket_families"), i, v)
		fprintf(f, "family  %s (%lld) allowed\n", jstr(v, "name"),
			json_integer_value(json_object_get(v, "family")));
	fprintf(f, "unix    abstract sockets %s\n",
		json_is_true(json_object_get(net, "unix_abstract")) ? "allowed" : "denied");
	if (json_is_true(json_object_get(net, "inet_raw")))
		fputs("family  raw IPv4/IPv6 sockets allowed\n", f);
	if (json_is_true(json_object_get(net, "icmp")))
		fputs("family  ICMP ping sockets allowed\n", f);
	if (json_is_true(json_object_get(net, "sctp")))
		fputs("family  SCTP sockets allowed\n", f);
	for (int v6 = 0; v6 < 2; v6++)
		fprintf(f, "mcast   %s multicast groups: %s\n", v6 ? "IPv6" : "IPv4",
			json_is_true(json_object_get(net, v6 ? "multicast_ipv6" : "multicast_ipv4"))
				? "joins allowed, any group (a UDP IN rule names a group)"
				: "joins refused (no UDP IN rule on a group)");
}

static void render_kernel(FILE *f, const json_t *k, bool verbose)
{
	render_exec(f, k);
	render_files(f, k, verbose);
	render_net(f, k);
}

/* The policy's files, the program as resolved. */
static void render_head(FILE *f, const json_t *root)
{
	const json_t *pol = json_object_get(root, "policy"), *v;
	size_t i;

	fputs("policy  ", f);
	put_text(f, jstr(pol, "path"));
	fputs("  (read:", f);
	json_array_foreach(json_object_get(pol, "files"), i, v)
	{
		fputs(i ? ", " : " ", f);
		put_text(f, jstr(v, "name"));
	}
	fputs(")\n", f);
	v = json_object_get(root, "program");
	if (json_is_string(json_object_get(v, "interpreter"))) {
		fputs("program ", f);
		put_text(f, jstr(v, "interpreter"));
		if (json_is_string(json_object_get(v, "script"))) {
			fputs(" ", f);
			put_text(f, jstr(v, "script"));
		}
		fputs("  (", f);
		put_text(f, jstr(v, "resolved"));
		fputs(")\n", f);
		if (json_is_string(json_object_get(v, "exec_after_start"))) {
			fputs("program exec after the start: ", f);
			put_text(f, jstr(v, "exec_after_start"));
			fputc('\n', f);
		}
	}
}

/* env= and what reaches the program; the bpf.* parameters. */
static void render_environment(FILE *f, const json_t *root)
{
	const json_t *env, *arr, *v;
	size_t i;

	env = json_object_get(root, "environment");
	fputs("== pysb-bpf: the program's environment (only what env= grants is passed)\n", f);
	json_array_foreach(json_object_get(env, "rules"), i, v)
	{
		fputs("env     ", f);
		put_text(f, jstr(v, "rule"));
		put_rule_origin(f, v);
		fputc('\n', f);
	}
	arr = json_object_get(env, "passed");
	fprintf(f, "env     %zu variable(s) passed (values not shown):", json_array_size(arr));
	json_array_foreach(arr, i, v)
	{
		fputs(i ? ", " : " ", f);
		put_text(f, jstr(v, "name"));
	}
	fputc('\n', f);

	fputs("== bpf.* parameters\n", f);
	json_array_foreach(json_object_get(root, "bpf_params"), i, v)
	{
		fputs("bpf     ", f);
		put_text(f, jstr(v, "key"));
		fputc('=', f);
		put_text(f, jstr(v, "value"));
		fputs(": ", f);
		put_text(f, jstr(v, "effect"));
		if (json_is_true(json_object_get(v, "default")))
			fputs("  (default)", f);
		else
			put_rule_origin(f, v);
		fputc('\n', f);
	}
}

/* What is left to the Python layer, then the warnings. */
static void render_python_and_warnings(FILE *f, const json_t *root)
{
	const json_t *arr, *v;
	size_t i;

	arr = json_object_get(root, "python_layer");
	fprintf(f, "== left to the Python layer (%zu rules pysb-bpf does not enforce)\n",
		json_array_size(arr));
	json_array_foreach(arr, i, v)
	{
		fputs("python  ", f);
		put_text(f, jstr(v, "rule"));
		fputs(": ", f);
		put_text(f, jstr(v, "why"));
		if (json_object_get(v, "kernel_part")) {
			fputs("; ", f);
			put_text(f, jstr(v, "kernel_part"));
		}
		put_rule_origin(f, v);
		fputc('\n', f);
	}

	arr = json_object_get(root, "warnings");
	fprintf(f, "== warnings (%zu)\n", json_array_size(arr));
	json_array_foreach(arr, i, v)
	{
		fputs("warning: ", f);
		if (json_object_get(v, "file")) {
			put_text(f, jstr(v, "file"));
			if (json_integer_value(json_object_get(v, "line"))) /* 0: the whole file */
				fprintf(f, ":%lld", json_integer_value(json_object_get(v, "line")));
			fputc(':', f);
			if (json_object_get(v, "col"))
				fprintf(f, "%lld:", json_integer_value(json_object_get(v, "col")));
			fputc(' ', f);
		}
		put_text(f, jstr(v, "message"));
		fputc('\n', f);
	}
}

void render_text(FILE *f, const json_t *root, bool verbose)
{
	render_head(f, root);
	render_kernel(f, json_object_get(root, "kernel"), verbose);
	render_environment(f, root);
	render_python_and_warnings(f, root);
}

/* Errors of an invalid policy, as `run` prints them (file:line:col: error: ...). */
void render_errors(FILE *f, const json_t *root)
{
	for (int e = 0; e < 2; e++) {
		const json_t *arr = json_object_get(root, e ? "errors" : "warnings"), *v;
		size_t i;

		json_array_foreach(arr, i, v)
		{
			if (json_object_get(v, "file")) {
				put_text(f, jstr(v, "file"));
				if (json_object_get(v, "line"))
					fprintf(f, ":%lld",
						json_integer_value(json_object_get(v, "line")));
				if (json_object_get(v, "col"))
					fprintf(f, ":%lld",
						json_integer_value(json_object_get(v, "col")));
				fputs(": ", f);
			} else {
				fputs("pysb-bpf: ", f);
			}
			fputs(e ? "error: " : "warning: ", f);
			put_text(f, jstr(v, "message"));
			if (json_object_get(v, "hint")) {
				fputs("; ", f);
				put_text(f, jstr(v, "hint"));
			}
			fputc('\n', f);
			if (json_object_get(v, "text")) {
				fputs("    ", f);
				put_text(f, jstr(v, "text"));
				fputc('\n', f);
			}
		}
	}
}
