/* SPDX-License-Identifier: MIT */
/*
 * Rule storage, the values of the Python layer's keys, the key table and the legacy
 * syntaxes. See policy.c.
 */
#include "parser.h"

/* ---------------- rule storage */

struct policy_src line_src(const struct line *ln, size_t off)
{
	return (struct policy_src){ .file = ln->file, .line = ln->no, .col = line_col(ln, off) };
}

static void add_kv(struct parser *ps, struct policy_kv **arr, size_t *n, const struct line *ln,
		   const char *key, size_t voff)
{
	struct policy_kv *kv = vec_push(arr, n, sizeof(**arr));

	if (!kv) {
		ps->oom = true;
		return;
	}
	kv->key = strdup(key);
	kv->value = strdup(ln->text + voff);
	kv->src = line_src(ln, voff);
	if (!kv->key || !kv->value)
		ps->oom = true;
}

static const struct policy_kv *find_kv(const struct policy_kv *a, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(a[i].key, key) == 0)
			return &a[i];
	return NULL;
}

/* ---------------- values of the Python layer */

bool in_list(const char *v, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(v, *list) == 0)
			return true;
	return false;
}

/*
 * guard_provider.parse_rules(): py-sandbox= and remote-result-guard= take "", true, 1 and
 * false, none, 0, any case; remote-result-guard also on and off. 1 true, 0 false, -1 neither.
 */
static int provider_bool(const char *v, bool on_off)
{
	static const char *const yes[] = { "", "true", "1", "on" }, *const no[] = { "false", "none",
										    "0", "off" };
	const size_t n = on_off ? 4 : 3;

	for (size_t i = 0; i < n; i++) {
		if (!strcasecmp(v, yes[i]))
			return 1;
		if (!strcasecmp(v, no[i]))
			return 0;
	}
	return -1;
}

/* Python's int() of a stripped string: a sign, digits, single '_' between digits. */
/* After a run of digits with '_' between two digits, as Python's int() reads it; NULL
 * when `v` does not start with one. */
static const char *int_digits(const char *v)
{
	bool digit = false;

	for (; *v; v++) {
		if (isdigit((unsigned char)*v))
			digit = true;
		else if (*v == '_' && digit && isdigit((unsigned char)v[1]))
			digit = false;
		else
			break;
	}
	return digit ? v : NULL;
}

static bool python_int(const char *v, bool *negative)
{
	*negative = *v == '-';
	if (*v == '+' || *v == '-')
		v++;
	v = int_digits(v);
	return v && !*v;
}

/*
 * A scalar of the eval layer (wiki/eval.md): digits with '_' separators as Python's int()
 * takes them, an optional fraction when `fraction`, then one of `units` ("" = none).
 */
static bool is_scalar(const char *v, bool fraction, const char *const *units)
{
	v = int_digits(v);
	if (!v)
		return false;
	if (fraction && *v == '.') {
		if (!isdigit((unsigned char)v[1]))
			return false;
		for (v++; isdigit((unsigned char)*v); v++)
			;
	}
	return in_list(v, units);
}

static const char *const DURATION_UNITS[] = { "", "ms", "s", "m", NULL };
static const char *const SIZE_UNITS[] = { "", "KB", "MB", "GB", NULL };
static const char *const NO_UNITS[] = { "", NULL };
static const char *const NAMESPACES[] = { "adaptive", "closed", "caller", NULL };
/* guard_provider: any case */
static const char *const RESULT_MODES[] = { "data-only", "data_only", "objects", "default", NULL };
static const char *const OS_SANDBOXES[] = { "none",	"subprocess", "landlock", "bwrap",
					    "firejail", "unshare",    "qemu",	  NULL };

static const struct keydef KEYS[] = {
	{ "expose-ro", V_PATH, POLICY_RO },
	{ "expose-rw", V_PATH, POLICY_RW },
	{ "ignore", V_IGNORE, 0 },
	{ "net", V_NET, 0 },
	{ "python-import", V_IMPORT, 0 },
	{ "python-api", V_API, 0 },
	{ "eval-syntax", V_EVAL_SYNTAX, 0 },
	{ "eval-call", V_EVAL_LIST, 0 },
	{ "eval-attribute", V_EVAL_LIST, 0 },
	{ "eval-import", V_EVAL_LIST, 0 },
	{ "eval-magic", V_EVAL_LIST, 0 },
	{ "eval-namespace", V_EVAL_NS, 0 },
	{ "eval-timeout", V_DURATION, 0 },
	{ "eval-max-iterations", V_COUNT, 0 },
	{ "eval-max-call-depth", V_COUNT, 0 },
	{ "eval-max-depth", V_COUNT, 0 },
	{ "eval-max-nodes", V_COUNT, 0 },
	{ "eval-max-leaked-threads", V_COUNT, 0 },
	{ "eval-max-alloc", V_SIZE, 0 },
	{ "remote-result-guard", V_BOOL, 1 },
	{ "remote-result-mode", V_RESULT_MODE, 0 },
	{ "py-sandbox", V_BOOL, 0 },
	{ "os-sandbox", V_OS, 0 },
	{ "learn", V_LEARN, 0 },
	{ "port", V_PORT, 0 },
};
#define N_KEYS (sizeof(KEYS) / sizeof(KEYS[0]))

/* Scalar eval keys may appear once per profile (wiki/eval.md), remote-result-mode once. */
static bool is_single(enum vkind k)
{
	return k == V_EVAL_NS || k == V_DURATION || k == V_COUNT || k == V_SIZE;
}

/* NULL when the value fits the key, else what was expected. */
static const char *python_value_error(const struct keydef *kd, const char *v)
{
	switch (kd->kind) {
	case V_IMPORT:
		/* guard_import.parse_rules() takes any comma list, empty items and all: an
		 * empty one names no module */
		return NULL;
	case V_API:
		return NULL; /* checked by on_python() with policy_api_error() */
	case V_EVAL_LIST:
	case V_EVAL_SYNTAX:
		return NULL; /* checked by on_python() with policy_eval_list_error() */
	case V_EVAL_NS:
		return in_list(v, NAMESPACES) ? NULL : "expected adaptive, closed or caller";
	case V_DURATION:
		return is_scalar(v, true, DURATION_UNITS) ? NULL
							  : "expected a duration such as 2s, 250ms "
							    "or 1m ('_' may separate digits)";
	case V_COUNT:
		return is_scalar(v, false, NO_UNITS)
			       ? NULL
			       : "expected a whole number such as 100_000 (no unit)";
	case V_SIZE:
		return is_scalar(v, false, SIZE_UNITS)
			       ? NULL
			       : "expected a size such as 10MB (KB, MB, GB)";
	case V_BOOL:
		return provider_bool(v, kd->arg) >= 0 ? NULL
		       : kd->arg ? "expected true or false (also 1/0, on/off, none; any case)"
				 : "expected true or false (also 1/0, none; any case)";
	case V_RESULT_MODE:
		for (const char *const *m = RESULT_MODES; *m; m++)
			if (!strcasecmp(v, *m))
				return NULL;
		return "expected data-only or objects";
	case V_OS:
		for (const char *const *m = OS_SANDBOXES; *m; m++)
			if (!strcasecmp(v, *m))
				return NULL;
		return "unknown os-sandbox: use one of none, subprocess, landlock, bwrap, "
		       "firejail, unshare, qemu";
	case V_LEARN:
		if (!strcasecmp(v, "true") || !strcmp(v, "0") || !strcmp(v, "1"))
			return "learn= takes the name of the file to learn into (empty: "
			       ".py-sandboxes), or false to lock the policy; py-sandboxes refuses "
			       "a boolean: use the filename instead";
		return NULL;
	case V_PORT: {
		bool negative;

		if (!python_int(v, &negative))
			return "expected a port number (a whole number, as Python's int() reads "
			       "it)";
		return negative && strspn(v + 1, "0_") != strlen(v + 1)
			       ? "port must be a positive value"
			       : NULL;
	}
	default:
		return "internal error: not a Python-layer key";
	}
}

/* The provider keys guard_provider.parse_rules() takes once (learn=false apart). */
static bool is_provider_single(enum vkind k)
{
	return k == V_BOOL || k == V_OS || k == V_PORT || k == V_LEARN || k == V_RESULT_MODE;
}

bool is_learn_lock(const struct policy_kv *kv)
{
	return !strcmp(kv->key, "learn") && !strcasecmp(kv->value, "false");
}

/*
 * A provider key given twice is an error (guard_provider: "Multiple <key> parameters"); a
 * command-line rule may replace one line of the files, as `python-sb --KEY=VALUE` does.
 */
static bool provider_twice(struct parser *ps, struct line *ln, const char *key)
{
	const bool cmdline = !strcmp(ln->file, CMDLINE_FILE);
	const struct policy_kv *prev = NULL;
	size_t n = 0;

	for (size_t i = 0; i < ps->p->n_python; i++) {
		const struct policy_kv *kv = &ps->p->python[i];

		if (strcmp(kv->key, key) || is_learn_lock(kv))
			continue;
		n++;
		if (!prev || strcmp(kv->src.file, CMDLINE_FILE))
			prev = kv;
	}
	if (!prev || (cmdline && n < 2))
		return false;
	lerror(ps, ln, 0,
	       "%s is already set at %s:%u: py-sandboxes refuses a second %s= line (keep one "
	       "across all included files; a command-line --%s= may replace it)",
	       key, prev->src.file, prev->src.line, key, key);
	return true;
}

/*
 * learn=FILE as guard_provider resolves it: a bare name is next to the file holding the
 * line, another path is relative to the working directory, empty is .py-sandboxes; its
 * parent directory must exist. Returns the path to store (malloc'ed), NULL on error.
 */
static char *learn_target(struct parser *ps, struct line *ln, size_t voff)
{
	const char *v = ln->text + voff, *rest = v;
	char *path, *dir;
	struct stat st;

	if (!*v)
		return strdup(".py-sandboxes");
	while (starts_with(rest, "./"))
		rest += 2 + strspn(rest + 2, "/");
	path = strchr(rest, '/') ? abs_path(ps, v) : join_path(ln->dir, rest);
	dir = path ? dir_of(path) : NULL;
	if (!path || !dir) {
		ps->oom = true;
	} else if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		lerror(ps, ln, voff,
		       "learn=%.120s: the parent directory '%.120s' must exist (py-sandboxes "
		       "does not expand '~'); create it or name another file",
		       v, dir);
		free(path);
		path = NULL;
	} else if (strchr(rest, '/')) {
		free(path); /* kept as written: relative to the working directory */
		path = strdup(v);
	}
	free(dir);
	return path;
}

/* The value as py-sandboxes reads it, for the keys whose spellings it folds. */
static char *provider_value(const struct keydef *kd, const char *v)
{
	char *out;

	switch (kd->kind) {
	case V_BOOL:
		return strdup(provider_bool(v, kd->arg) ? "true" : "false");
	case V_RESULT_MODE:
		return strdup(!strcasecmp(v, "objects") || !strcasecmp(v, "default") ? "objects"
										     : "data-only");
	case V_OS:
		out = strdup(v);
		for (char *c = out; c && *c; c++)
			*c = (char)tolower((unsigned char)*c);
		return out;
	default:
		return NULL;
	}
}

static void on_python(struct parser *ps, struct line *ln, const struct keydef *kd, const char *key,
		      size_t voff)
{
	const char *v = ln->text + voff;
	const char *why = python_value_error(kd, v);
	const bool lock = kd->kind == V_LEARN && !strcasecmp(v, "false");
	const struct policy_kv *prev;
	char *api, *norm = NULL;
	size_t off;

	if ((kd->kind == V_API && (api = policy_api_error(v, &off))) ||
	    ((kd->kind == V_EVAL_LIST || kd->kind == V_EVAL_SYNTAX) &&
	     (api = policy_eval_list_error(kd->key, v, &off)))) {
		lerror(ps, ln, voff + off, "invalid %s value '%.120s': %s", key, v, api);
		free(api);
		return;
	}
	if (why) {
		lerror(ps, ln, voff, "invalid %s value '%.120s': %s", key, v, why);
		return;
	}
	if (lock && !strcmp(ln->file, CMDLINE_FILE)) {
		lerror(ps, ln, voff,
		       "learn=false only locks a policy file; on the command line learn= takes "
		       "the name of the file to learn into");
		return;
	}
	if (is_provider_single(kd->kind) && !lock && provider_twice(ps, ln, key))
		return;
	prev = is_single(kd->kind) ? find_kv(ps->p->python, ps->p->n_python, key) : NULL;
	if (prev) {
		lerror(ps, ln, 0,
		       "%.120s is already set at %s:%u: keep a single %.120s= line across "
		       "all included files",
		       key, prev->src.file, prev->src.line, key);
		return;
	}
	if (kd->kind == V_LEARN && !lock && !(norm = learn_target(ps, ln, voff)))
		return;
	if (!norm)
		norm = provider_value(kd, v);
	add_kv(ps, &ps->p->python, &ps->p->n_python, ln, key, voff);
	if (norm && !ps->oom) {
		free(ps->p->python[ps->p->n_python - 1].value);
		ps->p->python[ps->p->n_python - 1].value = norm;
	} else {
		free(norm);
	}
}

/* ---------------- keys and legacy syntax */

static const struct {
	const char *key;
	const char *fix;
} LEGACY[] = {
	{ "bind", "write expose-rw=PATH, one path per line" },
	{ "ro-bind", "write expose-ro=PATH, one path per line" },
	{ "rw-bind", "write expose-rw=PATH, one path per line" },
	{ "set-env", "write env=NAME=value" },
	{ "unset-env", "write unenv=NAME" },
	{ "sandbox-provider", "write os-sandbox=NAME" },
	{ "python-api-import", "write python-import= for modules and python-api=ALLOW:... for "
			       "functions" },
};

static const char *legacy_fix(const char *key, size_t len)
{
	for (size_t i = 0; i < sizeof(LEGACY) / sizeof(LEGACY[0]); i++)
		if (strlen(LEGACY[i].key) == len && strncmp(LEGACY[i].key, key, len) == 0)
			return LEGACY[i].fix;
	return NULL;
}

/* "--key=value" lines of the first generation, possibly with a legacy key too. */
void on_dashdash(struct parser *ps, struct line *ln)
{
	const char *key = ln->text + 2;
	size_t klen = strcspn(key, "=");
	const char *fix = key[klen] ? legacy_fix(key, klen) : NULL;

	if (fix)
		lerror(ps, ln, 0, "legacy syntax '--%.*s=': drop the leading '--' and %s",
		       (int)klen, key, fix);
	else
		lerror(ps, ln, 0, "legacy '--' prefix: drop it and write '%.60s%s'", key,
		       strlen(key) > 60 ? "..." : "");
}

bool on_legacy_key(struct parser *ps, struct line *ln)
{
	size_t klen = strcspn(ln->text, "=");
	const char *fix = ln->text[klen] ? legacy_fix(ln->text, klen) : NULL;

	if (fix)
		lerror(ps, ln, 0, "legacy key '%.*s=' is no longer accepted: %s", (int)klen,
		       ln->text, fix);
	return fix != NULL;
}

unsigned policy_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned d[33][33];

	/* Only distances up to 2 matter, and the distance is at least the length difference.
	 * Optimal string alignment: a swap of two neighbours ("plociy") is one edit. */
	if (la > 32 || lb > 32 || la > lb + 2 || lb > la + 2)
		return UINT_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb] > 2 ? UINT_MAX : d[la][lb];
}

/* The known key `key` was most likely meant to be, or NULL. */
const char *policy_closest_key(const char *key)
{
	static const char *const extra[] = { "env", "unenv", "include" };
	const char *best = NULL;
	unsigned best_d = 3;

	for (size_t i = 0; i < N_KEYS + 3; i++) {
		const char *k = i < N_KEYS ? KEYS[i].key : extra[i - N_KEYS];
		unsigned d = strcasecmp(k, key) == 0 ? 0 : policy_edit_distance(k, key);

		if (d < best_d && d * 3 <= strlen(k)) {
			best = k;
			best_d = d;
		}
	}
	return best;
}

static void unknown_key(struct parser *ps, struct line *ln, const char *key, bool has_eq)
{
	const char *hint = policy_closest_key(key);

	if (hint && strcmp(hint, key) == 0 && strcmp(key, "include") == 0)
		lerror(ps, ln, 0, "expected include \"PATH\" or include? \"PATH\" (no '=')");
	else if (!has_eq && !hint)
		lerror(ps, ln, 0,
		       "invalid rule: expected key=value, include \"PATH\" or a # comment");
	else if (!has_eq)
		lerror(ps, ln, 0, "invalid rule: expected key=value; did you mean '%s='?", hint);
	else if (!key[0])
		lerror(ps, ln, 0, "missing key before '=': expected key=value");
	else if (hint)
		lerror(ps, ln, 0,
		       "unknown key '%.120s': did you mean '%.120s'? (keys are case-sensitive)",
		       key, hint);
	else if (starts_with(key, "eval-"))
		lerror(ps, ln, 0,
		       "unknown key '%.120s': the guarded eval knows eval-syntax, eval-call, "
		       "eval-attribute, eval-import, eval-magic, eval-namespace, eval-timeout, "
		       "eval-max-iterations, eval-max-call-depth, eval-max-depth, eval-max-nodes, "
		       "eval-max-alloc and eval-max-leaked-threads",
		       key);
	else
		lerror(ps, ln, 0,
		       "unknown key '%.120s': see FORMAT-NOTES §1.4 for the keys; a "
		       "provider parameter is written <provider>.<key>=value",
		       key);
}

static const struct keydef *find_key(const char *key)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (strcmp(KEYS[i].key, key) == 0)
			return &KEYS[i];
	return NULL;
}

/* eval-* keys may carry a ":profile" suffix (wiki/eval.md): eval-timeout:llm=2s. */
static const struct keydef *find_eval_key(const char *key)
{
	size_t base = strcspn(key, ":");
	char name[64];
	const struct keydef *kd;

	if (!starts_with(key, "eval-") || base >= sizeof(name) || (key[base] && !key[base + 1]))
		return NULL;
	memcpy(name, key, base);
	name[base] = '\0';
	kd = find_key(name);
	/* eval_rules.parse_rules() knows its 13 keys and no other */
	return kd;
}

bool policy_key_known(const char *key)
{
	const char *dot = strchr(key, '.');

	return find_key(key) || find_eval_key(key) || !strcmp(key, "env") ||
	       !strcmp(key, "unenv") || (dot && dot != key && dot[1]);
}

static void on_param(struct parser *ps, struct line *ln, const char *key, size_t voff)
{
	const char *dot = strchr(key, '.');

	if (dot == key || !dot[1]) {
		lerror(ps, ln, 0,
		       "invalid provider parameter '%.120s': expected <provider>.<key>=value", key);
		return;
	}
	add_kv(ps, &ps->p->params, &ps->p->n_params, ln, key, voff);
}

void dispatch(struct parser *ps, struct line *ln)
{
	const char *eq = strchr(ln->text, '=');
	size_t klen = eq ? (size_t)(eq - ln->text) : strlen(ln->text);
	char *key = strndup(ln->text, klen);
	const struct keydef *kd;

	if (!key) {
		ps->oom = true;
		return;
	}
	kd = eq ? find_key(key) : NULL;
	if (!kd && eq)
		kd = find_eval_key(key);
	/* py-sandboxes strip()s the value of each of its keys (the line's end already is);
	 * provider parameters are the providers' own, kept as written */
	if (kd && kd->kind != V_IGNORE) /* guard_files keeps an ignore= pattern as written */
		klen += lstrip_len(eq + 1, strlen(eq + 1));
	if (kd && kd->kind == V_PATH)
		on_expose(ps, ln, kd, key, klen + 1);
	else if (kd && kd->kind == V_IGNORE)
		on_ignore(ps, ln, kd, key, klen + 1);
	else if (kd && kd->kind == V_NET)
		on_net(ps, ln, kd, key, klen + 1);
	else if (kd)
		on_python(ps, ln, kd, key, klen + 1);
	else if (eq && strchr(key, '.'))
		on_param(ps, ln, key, klen + 1);
	else
		unknown_key(ps, ln, key, eq != NULL);
	free(key);
}
