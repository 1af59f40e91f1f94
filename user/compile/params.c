/* SPDX-License-Identifier: MIT */
/*
 * The bpf.<key>= parameters (docs/policy.md), in one table: each key's default, what the
 * default does, how a value is checked, read and what it does. policy_compile() reads them
 * through the rows (struct compiled: audit_mode, events_buffer, implicit paths, net_cfg,
 * caps), `check` documents them from the same rows; nobody else reads a bpf.* key. The
 * rows' readers of the network and capability values live with what they compile
 * (compile_net.c, caps.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "caps.h"
#include "compile.h"

static int check_mode(const struct policy_kv *kv, struct diag_list *d)
{
	if (!strcmp(kv->value, "enforce") || !strcmp(kv->value, "audit"))
		return 0;
	return diag_add(d, DIAG_ERROR, src_at(&kv->src), NULL,
			"bpf.mode=%s: expected enforce or audit", kv->value);
}

static int check_bool(const struct policy_kv *kv, struct diag_list *d)
{
	if (policy_bpf_bool(kv->value) >= 0)
		return 0;
	return diag_add(d, DIAG_ERROR, src_at(&kv->src), NULL, "%s=%s: expected true or false",
			kv->key, kv->value);
}

static int check_buffer(const struct policy_kv *kv, struct diag_list *d)
{
	uint64_t n = parse_size(kv->value);

	if (n >= PYSB_EVENTS_BUFFER_MIN && n <= PYSB_EVENTS_BUFFER_MAX && !(n & (n - 1)))
		return 0;
	return diag_add(d, DIAG_ERROR, src_at(&kv->src), NULL,
			"bpf.events-buffer=%s: expected a power of two from 64K to 1G (e.g. 4M, "
			"64M)",
			kv->value);
}

static int apply_mode(const struct policy_kv *kv, struct compiled *out, struct diag_list *d)
{
	(void)d;
	out->audit_mode = !strcmp(kv->value, "audit"); /* the last line wins */
	return 0;
}

static int apply_buffer(const struct policy_kv *kv, struct compiled *out, struct diag_list *d)
{
	(void)d;
	out->events_buffer = (uint32_t)parse_size(kv->value); /* the last line wins */
	return 0;
}

static int apply_families(const struct policy_kv *kv, struct compiled *out, struct diag_list *d)
{
	return net_families_value(kv, &out->net_cfg, d);
}

static int apply_abstract(const struct policy_kv *kv, struct compiled *out, struct diag_list *d)
{
	return net_unix_abstract_value(kv, &out->net_cfg, d);
}

static int apply_caps(const struct policy_kv *kv, struct compiled *out, struct diag_list *d)
{
	return caps_value(kv, &out->caps, d);
}

static const char *effect_mode(const struct policy_kv *kv, char *buf, size_t len)
{
	(void)buf, (void)len;
	return strcmp(kv->value, "audit") ? BPF_PARAMS[0].def_effect
					  : "audit: nothing is denied; what would be denied is "
					    "reported";
}

static const char *effect_implicit(const struct policy_kv *kv, char *buf, size_t len)
{
	(void)buf, (void)len;
	return policy_bpf_bool(kv->value) ? BPF_PARAMS[1].def_effect
					  : "no implicit path: only the policy's own expose rules "
					    "grant files";
}

static const char *effect_families(const struct policy_kv *kv, char *buf, size_t len)
{
	snprintf(buf, len, "socket(2) of these families is allowed: %s", kv->value);
	return buf;
}

static const char *effect_abstract(const struct policy_kv *kv, char *buf, size_t len)
{
	(void)buf, (void)len;
	return strcasecmp(kv->value, "allow") ? BPF_PARAMS[3].def_effect
					      : "abstract unix sockets are allowed";
}

static const char *effect_buffer(const struct policy_kv *kv, char *buf, size_t len)
{
	snprintf(buf, len, "the event ring buffer holds %s (under --learn too)", kv->value);
	return buf;
}

static const char *effect_caps(const struct policy_kv *kv, char *buf, size_t len)
{
	char names[400];
	uint64_t m = 0;

	if (caps_value(kv, &m, NULL) || !m)
		return "grants no capability";
	snprintf(buf, len,
		 "the program keeps %s (bpf.capabilities lines add up); every other capability "
		 "is refused",
		 caps_str(m, names, sizeof(names)));
	return buf;
}

static const char *warn_mode(const struct policy_kv *kv, unsigned i, char *buf, size_t len)
{
	(void)buf, (void)len;
	return i || strcmp(kv->value, "audit")
		       ? NULL
		       : "bpf.mode=audit: the kernel denies NOTHING for this "
			 "policy; it only reports what it would deny";
}

static const char *warn_implicit(const struct policy_kv *kv, unsigned i, char *buf, size_t len)
{
	(void)buf, (void)len;
	return i || policy_bpf_bool(kv->value)
		       ? NULL
		       : "bpf.implicit=false: the interpreter, its libraries and "
			 "the dynamic loader must be exposed by the policy itself, "
			 "or the program cannot start";
}

/* Capabilities that reach past what the other rules confine: said, not refused. */
static const char *warn_caps(const struct policy_kv *kv, unsigned i, char *buf, size_t len)
{
	uint64_t m = 0;

	if (caps_value(kv, &m, NULL)) /* compiled already: no error to say */
		return NULL;
	return caps_wide(m, i, buf, len);
}

/* The order is the documentation's (check --json lists them so). A row's apply reads a
 * value already checked by its check (when it has one) and reports the errors only it
 * can see: the network keys' names (compile_net.c), the capabilities' (caps.c).
 * bpf.implicit is read by compile_params (it needs compile_opts too). */
const struct bpf_param BPF_PARAMS[] = {
	{ "bpf.mode", "enforce", "denials are enforced (the operation fails) and reported", false,
	  check_mode, apply_mode, effect_mode, warn_mode },
	{ "bpf.implicit", "true",
	  "the implicit paths the interpreter and the C library need are added (marked "
	  "implicit among the file entries)",
	  false, check_bool, NULL, effect_implicit, warn_implicit },
	{ "bpf.socket-family", "",
	  "no socket family besides unix (file rules), TCP/UDP over IPv4/IPv6 (net= rules) and "
	  "read-only NETLINK_ROUTE",
	  true, NULL, apply_families, effect_families, NULL },
	{ "bpf.unix-abstract", "deny", "abstract unix sockets are denied", false, NULL,
	  apply_abstract, effect_abstract, NULL },
	{ "bpf.events-buffer", "4M",
	  "each sandbox's event ring buffer holds 4 MiB (64 MiB under --learn); events that do "
	  "not fit are counted as lost",
	  false, check_buffer, apply_buffer, effect_buffer, NULL },
	{ "bpf.capabilities", "",
	  "no capability: the program starts with empty capability sets (root included) and "
	  "lsm/capable refuses every capability check",
	  true, NULL, apply_caps, effect_caps, warn_caps },
};
const size_t N_BPF_PARAMS = sizeof(BPF_PARAMS) / sizeof(BPF_PARAMS[0]);

const struct bpf_param *bpf_param_find(const char *key)
{
	for (size_t i = 0; i < N_BPF_PARAMS; i++)
		if (!strcmp(key, BPF_PARAMS[i].key))
			return &BPF_PARAMS[i];
	return NULL;
}

int policy_bpf_bool(const char *v)
{
	if (!strcasecmp(v, "true") || !strcmp(v, "1"))
		return 1;
	if (!strcasecmp(v, "false") || !strcmp(v, "0"))
		return 0;
	return -1;
}

uint64_t parse_size(const char *v)
{
	char *end;
	unsigned long long n;

	if (!isdigit((unsigned char)*v))
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || n > (1ull << 40))
		return 0;
	switch (*end) {
	case 'k':
	case 'K':
		n <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		n <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		n <<= 30;
		end++;
		break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	return *end ? 0 : n;
}

/* Every bpf.* line of the policy (only those of key `only`, when not NULL), in order:
 * an unknown key, a value its row's check refuses, or one its apply cannot read is
 * reported; the values go into out. 0, or -1 once every line has been seen. */
static int read_params(const struct policy *p, const char *only, struct compiled *out,
		       struct diag_list *d)
{
	char known[160];
	size_t off = 0;
	int ret = 0;

	for (size_t i = 0; i < N_BPF_PARAMS; i++)
		off += snprintf(known + off, sizeof(known) - off, "%s%s", i ? ", " : "",
				BPF_PARAMS[i].key);
	for (size_t i = 0; i < p->n_params; i++) {
		const struct policy_kv *kv = &p->params[i];
		const struct bpf_param *bp;

		if (strncmp(kv->key, "bpf.", 4) || (only && strcmp(kv->key, only)))
			continue; /* another provider's parameter: the Python layer's */
		bp = bpf_param_find(kv->key);
		if (!bp) {
			/* the column of the key: the value's, less "key=" (no space around '=') */
			size_t klen = strlen(kv->key) + 1;
			size_t kcol = kv->src.col > klen ? kv->src.col - klen : 1;

			ret = diag_add(
				d, DIAG_ERROR,
				(struct diag_at){ kv->src.file, kv->src.line, (unsigned)kcol },
				NULL, "unknown parameter '%s': pysb-bpf knows %s (docs/policy.md)",
				kv->key, known);
		} else if (bp->check && bp->check(kv, d)) {
			ret = -1;
		} else if (bp->apply && bp->apply(kv, out, d)) {
			ret = -1;
		}
	}
	return ret;
}

int policy_check_bpf_params(const struct policy *p, struct diag_list *d)
{
	struct compiled scratch = { 0 };

	return read_params(p, NULL, &scratch, d);
}

int policy_capabilities(const struct policy *p, uint64_t *mask, struct diag_list *d)
{
	struct compiled scratch = { 0 };
	int ret = read_params(p, "bpf.capabilities", &scratch, d);

	*mask = scratch.caps;
	return ret;
}

int compile_params(const struct policy *p, const struct compile_opts *o, struct compiled *out,
		   bool *implicit)
{
	const char *v;

	if (read_params(p, NULL, out, o->diag))
		return -1;
	v = policy_get(p, "bpf.implicit");
	*implicit = o->implicit && (!v || policy_bpf_bool(v) != 0);
	return 0;
}

uint32_t sandbox_flags(const struct compiled *c, bool audit)
{
	return (audit ? PYSB_SB_AUDIT : 0) | (c->exec_allowed ? PYSB_SB_EXEC : 0) |
	       (c->ignores.count ? PYSB_SB_IGNORES : 0) | (c->n_hidden ? PYSB_SB_HIDDEN : 0) |
	       (net_multicast_allowed(c, AF_INET) ? PYSB_SB_MCAST4 : 0) |
	       (net_multicast_allowed(c, AF_INET6) ? PYSB_SB_MCAST6 : 0) |
	       (net_hosts_indexed(c) ? PYSB_SB_NET_HOSTS : 0);
}
