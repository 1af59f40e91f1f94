/* SPDX-License-Identifier: MIT */
/*
 * The daemon's bindings: one JSON file per binding in the configuration directory, as
 * a ConfigMap or a configuration-management tool ships them (docs/fleet.md):
 *
 *   { "policy": "web.py-sandboxes", "unit": "web.service", "mode": "enforce" }
 *
 * "policy" (relative to the directory or absolute) and exactly one target: "cgroup" (a
 * directory of the cgroup2 tree, relative to its mount or absolute), "unit" (a systemd
 * unit) or "cgroup_pattern" (a glob(7) pattern of cgroup directories). Optional: "mode"
 * (enforce | audit), "interpreter" and "script" (the implicit paths of the service's
 * Python, docs/policy.md), "confine_at" (exec | creation | scan: when a new cgroup of a
 * unit or pattern starts being enforced, bpf/watch.bpf.c). Any other key is an error: a
 * typo must not weaken a policy.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"

static int abs_under(const char *base, const char *v, char *out, size_t len)
{
	int n = v[0] == '/' ? snprintf(out, len, "%s", v) : snprintf(out, len, "%s/%s", base, v);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* A cgroup path: absolute under the mount, or relative to it; never outside. */
static int cgroup_path(const char *cgroot, const char *v, char *out, size_t len)
{
	size_t rl = strlen(cgroot);

	if (strstr(v, "/../") || !strncmp(v, "../", 3) || !strcmp(v, "..") ||
	    (strlen(v) >= 3 && !strcmp(v + strlen(v) - 3, "/..")))
		return -1;
	if (v[0] == '/' && !strncmp(v, cgroot, rl) && (v[rl] == '/' || !v[rl]))
		return abs_under("", v, out, len);
	if (v[0] == '/')
		return abs_under(cgroot, v + 1, out, len); /* "/system.slice/x": systemd's form */
	return abs_under(cgroot, v, out, len);
}

/* Every key a binding knows, each a string. 0, or -1 after naming the bad one. */
static int keys_known(json_t *root, const char *file)
{
	static const char *const known[] = { "policy",	       "cgroup",  "unit",
					     "cgroup_pattern", "mode",	  "interpreter",
					     "script",	       "comment", "confine_at" };
	const char *key;
	json_t *v;

	json_object_foreach(root, key, v)
	{
		bool ok = false;

		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			ok |= !strcmp(key, known[i]);
		if (!ok) {
			pr_err("%s: unknown key \"%s\": a binding knows policy, cgroup, unit, "
			       "cgroup_pattern, mode, interpreter, script, comment, confine_at",
			       file, key);
			return -1;
		}
		if (!json_is_string(v)) {
			pr_err("%s: \"%s\" must be a string", file, key);
			return -1;
		}
	}
	return 0;
}

/* Exactly one target: "cgroup", "unit" or "cgroup_pattern", into out->kind and
 * out->target. 0, or -1 after saying what is wrong. */
static int read_target(json_t *root, const char *cgroot, struct binding_conf *out)
{
	size_t targets = 0;
	const char *s;

	if ((s = json_string_value(json_object_get(root, "cgroup")))) {
		targets++;
		out->kind = TARGET_CGROUP;
		if (cgroup_path(cgroot, s, out->target, sizeof(out->target))) {
			pr_err("%s: \"cgroup\": \"%s\" is not a cgroup path under %s", out->file, s,
			       cgroot);
			return -1;
		}
	}
	if ((s = json_string_value(json_object_get(root, "unit")))) {
		targets++;
		out->kind = TARGET_UNIT;
		if (!*s || strchr(s, '/') || strlen(s) >= sizeof(out->target)) {
			pr_err("%s: \"unit\": \"%s\" is not a unit name (e.g. web.service)",
			       out->file, s);
			return -1;
		}
		snprintf(out->target, sizeof(out->target), "%s", s);
	}
	if ((s = json_string_value(json_object_get(root, "cgroup_pattern")))) {
		targets++;
		out->kind = TARGET_PATTERN;
		if (cgroup_path(cgroot, s, out->target, sizeof(out->target))) {
			pr_err("%s: \"cgroup_pattern\": \"%s\" is not a cgroup path under %s",
			       out->file, s, cgroot);
			return -1;
		}
	}
	if (targets != 1) {
		pr_err("%s: %s target: give exactly one of \"cgroup\", \"unit\", \"cgroup_pattern\"",
		       out->file, targets ? "more than one" : "no");
		return -1;
	}
	return 0;
}

int binding_read(const char *dir, const char *fname, const char *cgroot, struct binding_conf *out)
{
	json_error_t jerr;
	json_t *root;
	const char *s;
	size_t n = strlen(fname);
	int ret = -1;

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%.*s", (int)(n > 5 ? n - 5 : n), fname);
	if (abs_under(dir, fname, out->file, sizeof(out->file)))
		return -1;
	root = json_load_file(out->file, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		pr_err("%s:%d:%d: %s", out->file, jerr.line, jerr.column, jerr.text);
		return -1;
	}
	if (!json_is_object(root)) {
		pr_err("%s: a binding is a JSON object: {\"policy\": FILE, \"cgroup\"|\"unit\"|"
		       "\"cgroup_pattern\": TARGET}",
		       out->file);
		goto out;
	}
	if (keys_known(root, out->file))
		goto out;
	s = json_string_value(json_object_get(root, "policy"));
	if (!s || !*s) {
		pr_err("%s: no \"policy\": name the .py-sandboxes file to enforce", out->file);
		goto out;
	}
	if (abs_under(dir, s, out->policy, sizeof(out->policy)))
		goto out;
	if (read_target(root, cgroot, out))
		goto out;
	s = json_string_value(json_object_get(root, "mode"));
	if (s && strcmp(s, "enforce") && strcmp(s, "audit")) {
		pr_err("%s: \"mode\": \"%s\": expected \"enforce\" or \"audit\"", out->file, s);
		goto out;
	}
	out->audit = s && !strcmp(s, "audit");
	s = json_string_value(json_object_get(root, "confine_at"));
	if (s && strcmp(s, "exec") && strcmp(s, "creation") && strcmp(s, "scan")) {
		pr_err("%s: \"confine_at\": \"%s\": expected \"exec\" (the default), \"creation\" "
		       "or \"scan\"",
		       out->file, s);
		goto out;
	}
	out->confine_at = !s || !strcmp(s, "exec") ? CONFINE_EXEC
			  : !strcmp(s, "creation") ? CONFINE_CREATION
						   : CONFINE_SCAN;
	if ((s = json_string_value(json_object_get(root, "interpreter"))) &&
	    abs_under(dir, s, out->interpreter, sizeof(out->interpreter)))
		goto out;
	if ((s = json_string_value(json_object_get(root, "script"))) &&
	    abs_under(dir, s, out->script, sizeof(out->script)))
		goto out;
	ret = 0;
out:
	json_decref(root);
	return ret;
}

int unit_cgroup(const char *unit, const char *cgroot, char *out, size_t len)
{
	char cg[PATH_MAX];

	if (systemd_unit_property(unit, "ControlGroup", cg, sizeof(cg)) || (cg[0] && cg[0] != '/'))
		return -1; /* no answer (systemd re-executing, no bus, a time-out) */
	if (!cg[0])
		return 1; /* the unit runs in no cgroup: stopped, or unknown to systemd */
	return cgroup_path(cgroot, cg, out, len) ? -1 : 0;
}

/* The cgroup of a slice computed from its name, as systemd places it: "a-b-c.slice" is
 * a.slice/a-b.slice/a-b-c.slice; "-.slice" is the root. */
static int slice_path(const char *slice, const char *cgroot, char *out, size_t len)
{
	size_t n = strlen(slice), off;
	char rel[PATH_MAX] = "";

	if (n <= 6 || strcmp(slice + n - 6, ".slice") || strchr(slice, '/'))
		return -1;
	if (!strcmp(slice, "-.slice"))
		return abs_under("", cgroot, out, len);
	off = 0;
	for (size_t i = 0; i + 6 <= n; i++) {
		if (slice[i] != '-' && i + 6 != n)
			continue;
		int w = snprintf(rel + off, sizeof(rel) - off, "%s%.*s.slice", off ? "/" : "",
				 (int)i, slice);

		if (w < 0 || (size_t)w >= sizeof(rel) - off)
			return -1;
		off += (size_t)w;
		if (i + 6 == n)
			break;
	}
	return cgroup_path(cgroot, rel, out, len);
}

int unit_future_cgroup(const char *unit, const char *cgroot, char *out, size_t len)
{
	char slice[256], sp[PATH_MAX];
	int n;

	if (systemd_unit_property(unit, "Slice", slice, sizeof(slice)) || !slice[0] ||
	    strchr(slice, '/'))
		return -1;
	/* The slice's cgroup as systemd says (a slice that runs anything is realized);
	 * else from its name. */
	if (unit_cgroup(slice, cgroot, sp, sizeof(sp)) && slice_path(slice, cgroot, sp, sizeof(sp)))
		return -1;
	n = snprintf(out, len, "%s/%s", sp, unit);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
