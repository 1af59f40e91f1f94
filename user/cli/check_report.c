/* SPDX-License-Identifier: MIT */
/*
 * `pysb-bpf check`: the sections of the report (files, network, environment, bpf.* parameters, what is left to the Python layer), each built as JSON. See check.c.
 */
#include "check_int.h"

/* The JSON names of the port slots (check_text.c renders them in this order). */
const char *const slot_keys[PYSB_NET_SLOTS] = {
	[PYSB_NET_TCP_OUT] = "tcp_out",
	[PYSB_NET_TCP_IN] = "tcp_in",
	[PYSB_NET_UDP_OUT] = "udp_out",
	[PYSB_NET_UDP_IN] = "udp_in",
};

/* ---------------- the sections */

static bool same_src(const struct policy_src *a, const struct policy_src *b)
{
	return a->file == b->file && a->line == b->line && a->col == b->col;
}

static json_t *rule_json(struct report *r, const struct policy_src *s, const char *key,
			 const char *value)
{
	json_t *o = json_object();
	char *text = NULL;

	if (!o || asprintf(&text, "%s=%s", key, value ? value : "") < 0) {
		r->oom = true;
		json_decref(o);
		return NULL;
	}
	set_bytes(r, o, "rule", text);
	set_src(r, o, s);
	free(text);
	return o;
}

/* The python-api line at src, or NULL. */
static const struct policy_kv *python_at(const struct policy *p, const struct policy_src *s)
{
	for (size_t i = 0; i < p->n_python; i++)
		if (same_src(&p->python[i].src, s))
			return &p->python[i];
	return NULL;
}

void add_exec(struct report *r, json_t *kernel)
{
	const struct compiled *c = r->c;
	json_t *e = new_object(r, kernel, "exec");
	const struct policy_kv *kv = c->exec_src.file ? python_at(r->p, &c->exec_src) : NULL;

	if (!e)
		return;
	set_new(r, e, "allowed", json_boolean(c->exec_allowed));
	set_new(r, e, "effect",
		json_string(c->exec_allowed
				    ? "execve after the program's start is allowed for files with "
				      "exec access (below an exposed directory)"
				    : "every execve after the program's own start is denied"));
	if (kv)
		set_new(r, e, "decided_by", rule_json(r, &kv->src, kv->key, kv->value));
	else
		set_new(r, e, "decided_by", json_null());
}

void add_files(struct report *r, json_t *kernel)
{
	const struct policy *p = r->p;
	json_t *arr = new_array(r, kernel, "files");
	size_t j = 0;

	for (size_t i = 0; arr && i < r->c->n_files; i++) {
		const struct compiled_file *f = &r->c->files[i];
		json_t *o = json_object();

		if (!o) {
			r->oom = true;
			break;
		}
		set_bytes(r, o, "path", f->path);
		set_new(r, o, "access", access_json(r, f->access));
		set_new(r, o, "dev", dev_json(f->dev));
		set_new(r, o, "ino", json_integer((json_int_t)f->ino));
		if (f->implicit) {
			set_new(r, o, "implicit", json_string(f->why ? f->why : "implicit"));
		} else {
			char *rule = NULL;

			/* explicit entries come in the order of p->paths (a subsequence of it) */
			while (j < p->n_paths && !same_src(&p->paths[j].src, &f->src))
				j++;
			if (j < p->n_paths &&
			    asprintf(&rule, "expose-%s=%s",
				     p->paths[j].access == POLICY_RW ? "rw" : "ro",
				     p->paths[j].spelled) < 0)
				r->oom = true;
			else if (rule)
				set_bytes(r, o, "rule", rule);
			free(rule);
			set_src(r, o, &f->src);
		}
		push(r, arr, o);
	}
}

/* The file systems the file rules are on, and what pysb-bpf assumes about each. */
void add_file_systems(struct report *r, json_t *kernel)
{
	json_t *arr = new_array(r, kernel, "file_systems");
	uint32_t seen[64];
	size_t n_seen = 0;

	for (size_t i = 0; arr && i < r->c->n_files + r->c->n_hidden; i++) {
		bool hidden = i >= r->c->n_files;
		const char *path = hidden ? r->c->hidden[i - r->c->n_files].path
					  : r->c->files[i].path;
		uint32_t dev = hidden ? r->c->hidden[i - r->c->n_files].dev : r->c->files[i].dev;
		const char *name;
		struct statfs sfs;
		json_t *o;
		size_t k;

		for (k = 0; k < n_seen && seen[k] != dev; k++)
			;
		if (k < n_seen || statfs(path, &sfs))
			continue;
		if (n_seen < sizeof(seen) / sizeof(seen[0]))
			seen[n_seen++] = dev;
		o = json_object();
		if (!o) {
			r->oom = true;
			break;
		}
		name = fs_type_name((long)sfs.f_type);
		set_new(r, o, "dev", dev_json(dev));
		if (name)
			set_new(r, o, "type", json_string(name));
		else
			set_new(r, o, "type", json_sprintf("0x%lx", (unsigned long)sfs.f_type));
		set_bytes(r, o, "example", path);
		set_new(r, o, "identity", json_string(fs_identity_note((long)sfs.f_type)));
		push(r, arr, o);
	}
}

static const char *ignore_kind(const char *g, char *desc, size_t len)
{
	size_t n = strlen(g);

	if (g[0] == '/') {
		snprintf(desc, len, "existing paths matching it now are hidden");
		return "absolute";
	}
	if (!strcmp(g, "*")) {
		snprintf(desc, len, "every name below the granting rule is hidden");
		return "any";
	}
	if (!strchr(g, '*')) {
		snprintf(desc, len, "names equal to \"%s\" are hidden below the granting rule", g);
		return "name";
	}
	if (g[n - 1] == '*') {
		snprintf(desc, len,
			 "names starting with \"%.*s\" are hidden below the granting rule",
			 (int)(n - 1), g);
		return "prefix";
	}
	snprintf(desc, len, "names ending with \"%s\" are hidden below the granting rule", g + 1);
	return "suffix";
}

void add_ignores(struct report *r, json_t *kernel)
{
	const struct policy *p = r->p;
	json_t *arr = new_array(r, kernel, "ignores");

	for (size_t i = 0; arr && i < p->n_ignores; i++) {
		const struct policy_ignore *ig = &p->ignores[i];
		json_t *o = rule_json(r, &ig->src, "ignore", ig->glob), *hidden;
		char desc[512];
		size_t n = 0;

		if (!o)
			break;
		set_new(r, o, "kind", json_string(ignore_kind(ig->glob, desc, sizeof(desc))));
		set_bytes(r, o, "effect", desc);
		push(r, arr, o);
		if (ig->glob[0] != '/')
			continue;
		hidden = new_array(r, o, "hidden");
		for (size_t k = 0; hidden && k < r->c->n_hidden; k++) {
			const struct compiled_hidden *h = &r->c->hidden[k];
			json_t *ho;

			if (!same_src(&h->src, &ig->src))
				continue;
			n++;
			ho = json_object();
			if (!ho) {
				r->oom = true;
				break;
			}
			set_bytes(r, ho, "path", h->path);
			set_new(r, ho, "dev", dev_json(h->dev));
			set_new(r, ho, "ino", json_integer((json_int_t)h->ino));
			push(r, hidden, ho);
		}
		if (n)
			warn(r, &ig->src,
			     "ignore=%s is expanded when the policy is loaded (%zu path%s hidden now): "
			     "a file created later that matches it is NOT hidden by the kernel",
			     ig->glob, n, n == 1 ? "" : "s");
		else
			warn(r, &ig->src,
			     "ignore=%s matches nothing now, so the kernel hides nothing for it; a "
			     "file created later that matches it is NOT hidden",
			     ig->glob);
	}
}

void add_mounts(struct report *r, json_t *kernel)
{
	json_t *arr = new_array(r, kernel, "mounts");

	for (size_t i = 0; arr && i < r->c->n_mounts; i++) {
		json_t *o = json_object();

		if (!o) {
			r->oom = true;
			break;
		}
		set_new(r, o, "dev", dev_json(r->c->mounts[i].dev));
		set_new(r, o, "access", access_json(r, r->c->mounts[i].access));
		push(r, arr, o);
	}
}

/* ---------------- network: reads the fields user/compile/compile_net.c fills (compile.h) */

/* The allowed port intervals of a port set, as [[lo, hi], ...] (adjacent ones merged). */
static json_t *ports_json(struct report *r, const struct pysb_net_ports *ps)
{
	json_t *arr = json_array(), *last = NULL;

	if (!arr)
		return NULL;
	for (uint32_t i = 0; i < ps->n && i < PYSB_NET_MAX_RANGES; i++) {
		uint32_t lo = ps->r[i].start;
		uint32_t hi = i + 1 < ps->n ? ps->r[i + 1].start - 1u : 65535;

		if (!(ps->r[i].verdict & PYSB_NET_ALLOW)) {
			last = NULL;
			continue;
		}
		if (last) { /* continues the previous allowed interval */
			json_array_set_new(last, 1, json_integer(hi));
			continue;
		}
		last = json_pack("[ii]", (int)lo, (int)hi);
		push(r, arr, last);
	}
	return arr;
}

void add_net(struct report *r, json_t *kernel)
{
	const struct compiled *c = r->c;
	json_t *net = new_object(r, kernel, "net"), *rules, *prefixes, *fams;

	if (!net)
		return;
	rules = new_array(r, net, "rules");
	for (size_t i = 0; rules && i < c->n_net_rules; i++) {
		const struct compiled_net_rule *nr = &c->net_rules[i];
		json_t *o = json_object();

		if (!o) {
			r->oom = true;
			break;
		}
		set_bytes(r, o, "rule", nr->text ? nr->text : "");
		set_new(r, o, "action", json_string(nr->deny ? "DENY" : "ALLOW"));
		set_new(r, o, "prefixes", json_integer((json_int_t)nr->n_addrs));
		if (nr->host)
			set_new(r, o, "host_name", json_true());
		if (nr->dropped)
			set_new(r, o, "dropped", json_true());
		if (nr->implicit)
			set_new(r, o, "implicit", json_string(nr->why ? nr->why : "implicit"));
		else
			set_src(r, o, &nr->src);
		push(r, rules, o);
	}
	prefixes = new_array(r, net, "prefixes");
	for (size_t i = 0; prefixes && i < c->n_net_prefixes; i++) {
		const struct compiled_net_prefix *e = &c->net_prefixes[i];
		char addr[INET6_ADDRSTRLEN] = "?";
		json_t *o = json_object(), *allowed;

		if (!o) {
			r->oom = true;
			break;
		}
		inet_ntop(e->af, e->addr, addr, sizeof(addr));
		set_new(r, o, "prefix", json_sprintf("%s/%u", addr, e->plen));
		allowed = new_object(r, o, "allowed_ports");
		for (unsigned s = 0; allowed && s < PYSB_NET_SLOTS; s++) {
			unsigned id = e->value.ports[s];

			if (id < c->n_net_ports)
				set_new(r, allowed, slot_keys[s], ports_json(r, &c->net_ports[id]));
		}
		push(r, prefixes, o);
	}
	fams = new_array(r, net, "socket_families");
	for (unsigned f = 0; fams && f < 64; f++) {
		const char *name = net_family_name(f);

		if ((c->net_cfg.families >> f) & 1)
			push(r, fams,
			     json_pack("{s:i,s:s}", "family", (int)f, "name", name ? name : "?"));
	}
	set_new(r, net, "unix_abstract", json_boolean(c->net_cfg.flags & PYSB_NET_UNIX_ABSTRACT));
	set_new(r, net, "inet_raw", json_boolean(c->net_cfg.flags & PYSB_NET_INET_RAW));
	set_new(r, net, "icmp", json_boolean(c->net_cfg.flags & PYSB_NET_ICMP));
	set_new(r, net, "sctp", json_boolean(c->net_cfg.flags & PYSB_NET_SCTP));
	/* bpf/multicast.bpf.h: joins need a UDP IN rule on a group of the family */
	set_new(r, net, "multicast_ipv4", json_boolean(net_multicast_allowed(c, AF_INET)));
	set_new(r, net, "multicast_ipv6", json_boolean(net_multicast_allowed(c, AF_INET6)));
}

/* ---------------- what pysb-bpf does before the start: the environment */

/* The policy's expose-rw= of your TMPDIR passes the program no TMPDIR: run's warning. */
static void warn_tmpdir(struct report *r, char *const *built)
{
	const struct policy_src *src = NULL;
	char *msg = policy_tmpdir_warning(r->p, r->o->envp, built, &src);

	if (msg)
		warn(r, src, "%s", msg);
	free(msg);
}

/* Your proxy, not passed, under a net= rule that lets the program connect out: run's
 * warning. */
static void warn_proxy(struct report *r, char *const *built)
{
	const struct policy_src *src = NULL;
	char *msg = policy_proxy_warning(r->p, r->o->envp, built, &src);

	if (msg)
		warn(r, src, "%s", msg);
	free(msg);
}

int add_environment(struct report *r, json_t *root)
{
	const struct policy *p = r->p;
	json_t *env = new_object(r, root, "environment"), *rules, *passed;
	char **built = NULL;

	if (!env)
		return 0;
	rules = new_array(r, env, "rules");
	for (size_t i = 0; rules && i < p->n_envs; i++) {
		const struct policy_env *e = &p->envs[i];
		char *text = NULL;

		if (e->unset ? asprintf(&text, "%s", e->name) < 0
			     : asprintf(&text, "%s=%s", e->name, e->value ? e->value : "") < 0) {
			r->oom = true;
			break;
		}
		push(r, rules, rule_json(r, &e->src, e->unset ? "unenv" : "env", text));
		free(text);
	}
	if (policy_build_env(p, r->o->envp, &built)) {
		json_t *o = json_object();

		if (o) {
			set_bytes(r, o, "message",
				  "cannot build the program's environment from the env= rules");
			push(r, r->errors, o);
		}
		return -1;
	}
	warn_tmpdir(r, built);
	warn_proxy(r, built);
	/* names only: values are often secrets (API keys) */
	passed = new_array(r, env, "passed");
	for (size_t i = 0; passed && built[i]; i++) {
		char *name = strndup(built[i], strcspn(built[i], "="));
		json_t *s = json_object();

		if (!name || !s) {
			r->oom = true;
			free(name);
			json_decref(s);
			break;
		}
		set_bytes(r, s, "name", name);
		push(r, passed, s);
		free(name);
	}
	policy_env_free(built);
	return 0;
}

/* ---------------- bpf.* parameters */

/* Grants that reach well-known secrets (user/policy/secrets.c): said, not refused. */
void warn_secrets(struct report *r)
{
	char home[PATH_MAX] = "", cwd[PATH_MAX] = "", found[2048];
	const char *h = NULL;

	for (size_t i = 0; r->o->envp && r->o->envp[i]; i++)
		if (!strncmp(r->o->envp[i], "HOME=", 5))
			h = r->o->envp[i] + 5;
	if (h && *h && !realpath(h, home))
		snprintf(home, sizeof(home), "%s", h);
	if (!realpath(r->o->cwd ? r->o->cwd : ".", cwd))
		cwd[0] = '\0';
	for (size_t i = 0; i < r->p->n_paths; i++) {
		const struct policy_path *pp = &r->p->paths[i];

		if (!secrets_reached(r->p, pp->path, home, cwd[0] ? cwd : NULL, found,
				     sizeof(found)))
			continue;
		warn(r, &pp->src,
		     "expose-%s=%s grants well-known secrets: %s; expose only what the "
		     "program reads (in /etc and ~, the files themselves, as run --learn writes "
		     "them), or hide them with ignore=",
		     pp->access == POLICY_RW ? "rw" : "ro", pp->spelled, found);
	}
}

void add_bpf_params(struct report *r, json_t *root)
{
	const struct policy *p = r->p;
	json_t *arr = new_array(r, root, "bpf_params");

	for (size_t d = 0; arr && d < N_BPF_PARAMS; d++) {
		const struct bpf_param *bp = &BPF_PARAMS[d];
		const char *key = bp->key;
		bool seen = false, accumulates = bp->accumulates;

		for (size_t i = 0; i < p->n_params; i++) {
			const struct policy_kv *kv = &p->params[i];
			char buf[512];
			bool later = false;
			json_t *o;

			if (strcmp(kv->key, key))
				continue;
			seen = true;
			for (size_t k = i + 1; k < p->n_params && !accumulates; k++)
				later = later || !strcmp(p->params[k].key, key);
			o = rule_json(r, &kv->src, kv->key, kv->value);
			if (!o)
				return;
			set_bytes(r, o, "key", kv->key);
			set_bytes(r, o, "value", kv->value);
			set_new(r, o, "default", json_false());
			set_bytes(r, o, "effect",
				  later ? "superseded by a later line (the last one wins)"
					: bp->effect(kv, buf, sizeof(buf)));
			push(r, arr, o);
			for (unsigned w = 0; !later && bp->warning; w++) {
				const char *msg = bp->warning(kv, w, buf, sizeof(buf));

				if (!msg)
					break;
				warn(r, &kv->src, "%s", msg);
			}
		}
		if (!seen) {
			json_t *o = json_pack("{s:s,s:s,s:b,s:s}", "key", key, "value", bp->def,
					      "default", 1, "effect", bp->def_effect);

			push(r, arr, o);
		}
	}
}

/* ---------------- left to the Python layer */

/* Does a python-api value name process-exec or *? *only: it names nothing else. */
static bool api_names_exec(const char *v, bool *only)
{
	const char *t = strchr(v, ':');
	bool any = false;

	*only = true;
	for (t = t ? t + 1 : v; *t;) {
		size_t n = strcspn(t, ",");
		size_t m = n;

		while (m && t[m - 1] == ' ')
			m--;
		if ((m == 12 && !strncmp(t, "process-exec", 12)) || (m == 1 && t[0] == '*'))
			any = true;
		if (!(m == 12 && !strncmp(t, "process-exec", 12)))
			*only = false;
		t += n;
		t += strspn(t, ", ");
	}
	return any;
}

static const char *python_why(const char *key)
{
	static const struct {
		const char *prefix, *why;
	} whys[] = {
		{ "python-import", "which modules Python code may import" },
		{ "python-api", "which Python functions and API categories may be called" },
		{ "eval-", "the guarded eval of py-sandboxes" },
		{ "remote-result-", "how results come back from the py-sandboxes sandbox" },
		{ "py-sandbox", "turns py-sandboxes' Python guards on or off" },
		{ "os-sandbox", "py-sandboxes' OS provider; pysb-bpf enforces in the kernel "
				"whatever it names" },
		{ "learn",
		  "learning mode (pysb-bpf run --learn writes rules too; learn=false locks)" },
		{ "port", "the port of py-sandboxes' SSE transport" },
	};

	for (size_t i = 0; i < sizeof(whys) / sizeof(whys[0]); i++)
		if (!strncmp(key, whys[i].prefix, strlen(whys[i].prefix)))
			return whys[i].why;
	return "a Python-layer rule";
}

void add_python_layer(struct report *r, json_t *root)
{
	const struct policy *p = r->p;
	json_t *arr = new_array(r, root, "python_layer");
	bool has_rules = false;

	for (size_t i = 0; arr && i < p->n_python; i++) {
		const struct policy_kv *kv = &p->python[i];
		bool only = false,
		     exec = !strcmp(kv->key, "python-api") && api_names_exec(kv->value, &only);
		json_t *o;

		if (exec && only)
			continue; /* entirely the kernel's: see kernel.exec */
		o = rule_json(r, &kv->src, kv->key, kv->value);
		if (!o)
			return;
		set_bytes(r, o, "key", kv->key);
		set_bytes(r, o, "value", kv->value);
		set_new(r, o, "why", json_string(python_why(kv->key)));
		if (exec)
			set_new(r, o, "kernel_part",
				json_string("process-exec: decided in the kernel (kernel.exec)"));
		push(r, arr, o);
		has_rules = has_rules || !strncmp(kv->key, "python-", 7) ||
			    !strncmp(kv->key, "eval-", 5);
	}
	for (size_t i = 0; arr && i < p->n_params; i++) {
		const struct policy_kv *kv = &p->params[i];
		char why[160];
		json_t *o;

		if (!strncmp(kv->key, "bpf.", 4))
			continue;
		o = rule_json(r, &kv->src, kv->key, kv->value);
		if (!o)
			return;
		snprintf(why, sizeof(why), "a parameter of py-sandboxes' '%.*s' OS provider",
			 (int)strcspn(kv->key, "."), kv->key);
		set_bytes(r, o, "key", kv->key);
		set_bytes(r, o, "value", kv->value);
		set_bytes(r, o, "why", why);
		push(r, arr, o);
	}
	for (size_t i = 0; has_rules && i < p->n_python; i++) {
		const struct policy_kv *kv = &p->python[i];

		if ((!strcmp(kv->key, "py-sandbox") && !strcasecmp(kv->value, "false")) ||
		    (!strcmp(kv->key, "os-sandbox") && !strcmp(kv->value, "none")))
			warn(r, &kv->src,
			     "%s=%s turns py-sandboxes' Python guards off: its python-*/eval-* "
			     "rules are enforced by nobody (the kernel layer cannot express them)",
			     kv->key, kv->value);
	}
}

/* Each deliberate difference from py-sandboxes a line meets (docs/policy.md). */
void add_departures(struct report *r)
{
	struct policy_departure *d;
	size_t n;

	if (policy_departures(r->p, &d, &n)) {
		r->oom = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		warn(r, &d[i].src, "differs from py-sandboxes: %s", d[i].msg);
	policy_departures_free(d, n);
}
