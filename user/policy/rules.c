/* SPDX-License-Identifier: MIT */
/*
 * The file and network rules: expose-ro= / expose-rw= / ignore= and net=. See policy.c.
 */
#include "parser.h"

/* ---------------- expose-ro / expose-rw / ignore */

/* The legacy "src,dst" form is kept only when both halves are the same path. */
static char *single_path(struct parser *ps, struct line *ln, const char *key, size_t voff)
{
	const char *v = ln->text + voff, *comma = strchr(v, ',');
	size_t l = comma ? (size_t)(comma - v) : 0;

	if (!comma)
		return strdup(v);
	if (l == 0 || strlen(comma + 1) != l || strncmp(v, comma + 1, l) != 0) {
		lerror(ps, ln, voff + l,
		       "expected a single path (no comma) in %s=; the two-path form 'src,dst' "
		       "of bind= is gone: write one %s=PATH line per path",
		       key, key);
		return NULL;
	}
	/* a deliberate difference (docs/policy.md): py-sandboxes refuses any comma */
	lwarn(ps, ln, voff,
	      "legacy two-path form '%.120s': the modern form is %s=%.*s (differs from "
	      "py-sandboxes, whose newest parser refuses it; pysb-bpf reads one path)",
	      v, key, (int)(l > 120 ? 120 : l), v);
	return strndup(v, l);
}

static const char *path_key(const void *paths, size_t i)
{
	return ((const struct policy_path *)paths)[i].path;
}

/* Was `spelled` cut short by a '#' right after it (found by users: a directory named
 * with '#' read as a path ending before it)? */
static bool hash_cut(const struct line *ln, const char *spelled)
{
	const char *eq = memchr(ln->raw, '=', ln->raw_len); /* the value is after the key */
	size_t n = strlen(spelled);
	const char *at =
		n && eq ? memmem(eq + 1, ln->raw_len - (size_t)(eq + 1 - ln->raw), spelled, n)
			: NULL;

	return at && at + n < ln->raw + ln->raw_len && at[n] == '#';
}

static void store_path(struct parser *ps, struct line *ln, const struct keydef *kd, size_t voff,
		       char *spelled, char *named, char *canon)
{
	struct policy *p = ps->p;
	struct policy_path *pp, *prev;
	size_t *slot;

	if (str_index_reserve(&ps->path_index, p->n_paths, path_key, p->paths)) {
		ps->oom = true;
		goto drop;
	}
	slot = str_index_slot(&ps->path_index, canon, path_key, p->paths);
	if (*slot) {
		prev = &p->paths[*slot - 1];
		if (prev->access != (enum policy_access)kd->arg)
			lerror(ps, ln, voff,
			       "%s=%.120s invalidates another rule: %s:%u exposes '%.120s' %s; "
			       "keep one "
			       "mode per path",
			       kd->key, spelled, prev->src.file, prev->src.line, canon,
			       prev->access == POLICY_RO ? "read-only" : "read-write");
		/* same mode: a duplicate, dropped; its spelling is kept for compile */
		if (named) {
			char **also = vec_push(&p->also_named, &p->n_also_named, sizeof(*also));

			if (!also) {
				ps->oom = true;
				goto drop;
			}
			*also = named;
			named = NULL;
		}
		goto drop;
	}
	pp = vec_push(&p->paths, &p->n_paths, sizeof(*pp));
	if (!pp) {
		ps->oom = true;
		goto drop;
	}
	*pp = (struct policy_path){ .path = canon,
				    .spelled = spelled,
				    .named = named,
				    .access = (enum policy_access)kd->arg,
				    .src = line_src(ln, voff) };
	*slot = p->n_paths;
	return;
drop:
	free(spelled);
	free(named);
	free(canon);
}

void on_expose(struct parser *ps, struct line *ln, const struct keydef *kd, const char *key,
	       size_t voff)
{
	char *spelled = NULL, *expanded = NULL, *abs = NULL, *canon = NULL;

	if (!ln->text[voff]) {
		lerror(ps, ln, voff, "%s= path must be set (is it an unset ${VAR}?)", key);
		return;
	}
	spelled = single_path(ps, ln, key, voff);
	if (!spelled)
		goto cleanup;
	expanded = expand_tilde(ps, spelled);
	abs = expanded ? abs_path(ps, expanded) : NULL;
	if (!abs) {
		ps->oom = true;
		goto cleanup;
	}
	canon = canonical_path(ps, abs);
	if (!canon && (errno == ENOENT || errno == ENOTDIR))
		lerror(ps, ln, voff,
		       "path '%.120s' must exist (looked for '%.120s'); create it or remove "
		       "the rule%s",
		       spelled, abs,
		       hash_cut(ln, spelled) ? " (a '#' starts a comment, as in py-sandboxes: a "
					       "path holding one cannot be named; expose the "
					       "directory above it)"
					     : "");
	else if (!canon)
		lerror(ps, ln, voff, "cannot resolve path '%.120s' ('%.120s'): %s", spelled, abs,
		       strerror(errno));
	if (!canon)
		goto cleanup;
	store_path(ps, ln, kd, voff, spelled, abs, canon);
	spelled = abs = canon = NULL;
cleanup:
	free(spelled);
	free(expanded);
	free(abs);
	free(canon);
}

void on_ignore(struct parser *ps, struct line *ln, const struct keydef *kd, const char *key,
	       size_t voff)
{
	struct policy_ignore *ig;

	(void)kd;
	if (!ln->text[voff]) {
		lerror(ps, ln, voff, "%s= needs a glob pattern such as .env or *.log", key);
		return;
	}
	ig = vec_push(&ps->p->ignores, &ps->p->n_ignores, sizeof(*ig));
	if (!ig || !(ig->glob = strdup(ln->text + voff))) {
		ps->oom = true;
		return;
	}
	ig->src = line_src(ln, voff);
}

/* ---------------- net= */

#define NET_FORMAT "ACTION|PROTO|NETWORK|PORTS|DIRECTION"

struct net_ctx {
	struct parser *ps;
	struct line *ln;
	struct policy_net *net;
	bool ok;
};

__attribute__((format(printf, 3, 4))) static void net_error(struct net_ctx *c, size_t off,
							    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(c->ps, false, c->ln, line_col(c->ln, off), fmt, ap);
	va_end(ap);
	c->ok = false;
}

static void net_action(struct net_ctx *c, const char *s, size_t off)
{
	/* py-sandboxes compares the raw field: upper case, no blanks. */
	if (strcmp(s, "ALLOW") == 0 || strcmp(s, "DENY") == 0)
		c->net->deny = s[0] == 'D';
	else
		net_error(c, off, "invalid action '%.120s' in net=: expected ALLOW or DENY", s);
}

/* Items of a comma list that are not blank (py-sandboxes skips the blank ones). */
static unsigned count_items(const char *s)
{
	unsigned n = 0;

	for (;;) {
		size_t l = strcspn(s, ",");

		n += strspn(s, " \t") < l;
		if (!s[l])
			return n;
		s += l + 1;
	}
}

static void net_proto_item(struct net_ctx *c, const char *tok, size_t off, unsigned n_items)
{
	if (strcasecmp(tok, "tcp") == 0)
		c->net->protos |= POLICY_PROTO_TCP;
	else if (strcasecmp(tok, "udp") == 0)
		c->net->protos |= POLICY_PROTO_UDP;
	else if (strcasecmp(tok, "any") != 0 && strcmp(tok, "*") != 0)
		net_error(c, off,
			  "unknown protocol '%.120s' in net=: expected tcp, udp, a comma list "
			  "of them, any or *",
			  tok);
	else if (n_items > 1)
		net_error(c, off, "'%.120s' must be used alone in the protocol field of net=", tok);
	else
		c->net->protos = POLICY_PROTO_TCP | POLICY_PROTO_UDP;
}

static void net_proto(struct net_ctx *c, char *s, size_t off)
{
	const unsigned n_items = count_items(s);
	char *p = s;

	if (!n_items) {
		net_error(c, off,
			  "empty protocol in net=: expected tcp, udp, a comma list of "
			  "them, any or *");
		return;
	}
	for (;;) {
		size_t l = strcspn(p, ","), skip;
		const char end = p[l];
		char *tok;

		p[l] = '\0';
		tok = trim(p, &skip);
		if (*tok)
			net_proto_item(c, tok, off + (size_t)(p - s) + skip, n_items);
		if (!end)
			return;
		p += l + 1;
	}
}

/* A CIDR prefix: a length, or for IPv4 a dotted netmask as Python's ip_network accepts. */
static bool valid_prefix(int af, const char *s)
{
	struct in_addr mask;
	char *end;
	long n;

	if (isdigit((unsigned char)s[0]) && !strchr(s, '.')) {
		n = strtol(s, &end, 10);
		return !*end && n >= 0 && n <= (af == AF_INET ? 32 : 128) && strlen(s) <= 3;
	}
	if (af != AF_INET || inet_pton(AF_INET, s, &mask) != 1)
		return false;
	uint32_t m = ntohl(mask.s_addr);
	/* contiguous ones (netmask) or contiguous zeros then ones (hostmask) */
	return (m & (~m >> 1)) == 0 || ((~m) & (m >> 1)) == 0;
}

static bool is_ipv4_like(const char *s)
{
	return strspn(s, "0123456789.") == strlen(s);
}

/* NULL when `s` is a plausible NETWORK field, else what is wrong. Names resolve later. */
static const char *network_error(const char *s)
{
	unsigned char buf[sizeof(struct in6_addr)];
	const char *slash = strchr(s, '/');

	if (strcmp(s, "*") == 0)
		return NULL;
	if (slash) {
		char *addr = strndup(s, (size_t)(slash - s));
		int af = addr && strchr(addr, ':') ? AF_INET6 : AF_INET;
		bool ok = addr && inet_pton(af, addr, buf) == 1 && valid_prefix(af, slash + 1);

		free(addr);
		return ok ? NULL
			  : "invalid CIDR: expected ADDRESS/PREFIX (0-32 for IPv4, 0-128 for IPv6)";
	}
	if (strchr(s, ':'))
		return inet_pton(AF_INET6, s, buf) == 1 ? NULL : "invalid IPv6 address";
	if (is_ipv4_like(s))
		return inet_pton(AF_INET, s, buf) == 1 ? NULL : "invalid IPv4 address";
	if (strlen(s) > 253 || s[0] == '.' || s[0] == '-' || strstr(s, "..") ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") !=
		    strlen(s))
		return "invalid host name";
	return NULL;
}

static void net_network(struct net_ctx *c, const char *s, size_t off)
{
	const char *why;

	if (strspn(s, " \t") == strlen(s)) {
		net_error(c, off,
			  "network part of net= must be set: an address, a CIDR, a host "
			  "name or *");
		return;
	}
	why = network_error(s);
	if (why) {
		net_error(c, off, "%s '%.120s' in net=", why, s);
		return;
	}
	c->net->network = strdup(s);
	if (!c->net->network)
		c->ps->oom = true;
}

/* Decimal 0-65535, digits only. */
static bool parse_port(const char *s, uint16_t *out)
{
	unsigned long n = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return false;
		n = n * 10 + (unsigned long)(*s - '0');
		if (n > 65535)
			return false;
	}
	*out = (uint16_t)n;
	return true;
}

static void add_ports(struct net_ctx *c, uint16_t lo, uint16_t hi)
{
	struct policy_port_range *r =
		vec_push(&c->net->ports, &c->net->n_ports, sizeof(*c->net->ports));

	if (!r) {
		c->ps->oom = true;
		return;
	}
	r->lo = lo;
	r->hi = hi;
}

/* One element of a port list: N, A-B or A- (open to 65535). */
static void net_port_item(struct net_ctx *c, char *item, size_t off)
{
	char *dash = strchr(item, '-');
	uint16_t lo, hi = 65535;
	size_t skip;

	if (!dash) {
		if (parse_port(item, &lo))
			add_ports(c, lo, lo);
		else
			net_error(c, off,
				  "invalid port '%.120s' in net=: expected 0-65535, A-B, A- or "
				  "* alone",
				  item);
		return;
	}
	*dash = '\0';
	char *a = trim(item, &skip), *b = trim(dash + 1, &skip);
	if (!parse_port(a, &lo) || (*b && !parse_port(b, &hi))) {
		net_error(c, off,
			  "invalid port range '%.60s-%.60s' in net=: expected A-B or A- with "
			  "ports 0-65535",
			  a, b);
		return;
	}
	if (lo > hi) {
		net_error(c, off,
			  "invalid port range '%.60s-%.60s' in net=: start is greater than end", a,
			  b);
		return;
	}
	add_ports(c, lo, hi);
}

static void net_ports(struct net_ctx *c, char *s, size_t off)
{
	char *save = NULL, *tok;
	size_t skip;
	char *t = trim(s, &skip);

	if (!*t)
		return; /* an empty field allows no port */
	if (strcmp(t, "*") == 0) {
		add_ports(c, 0, 65535);
		return;
	}
	for (char *u = s; (tok = strtok_r(u, ",", &save)); u = NULL) {
		size_t toff = off + (size_t)(tok - s);
		char *item = trim(tok, &skip);

		if (*item)
			net_port_item(c, item, toff + skip);
	}
}

static void net_direction(struct net_ctx *c, const char *s, size_t off)
{
	const char *p = s;

	/* py-sandboxes splits on ',' without trimming: "IN, OUT" is refused there too. */
	for (;;) {
		size_t l = strcspn(p, ",");

		if (l == 1 && p[0] == '*')
			c->net->dirs |= POLICY_DIR_IN | POLICY_DIR_OUT;
		else if (l == 2 && strncmp(p, "IN", 2) == 0)
			c->net->dirs |= POLICY_DIR_IN;
		else if (l == 3 && strncmp(p, "OUT", 3) == 0)
			c->net->dirs |= POLICY_DIR_OUT;
		else {
			net_error(c, off,
				  "invalid direction '%.120s' in net=: expected IN, OUT, * or "
				  "a comma list such as IN,OUT",
				  s);
			return;
		}
		if (!p[l])
			return;
		p += l + 1;
	}
}

void net_free(struct policy_net *n)
{
	free(n->network);
	free(n->ports);
}

void on_net(struct parser *ps, struct line *ln, const struct keydef *kd, const char *key,
	    size_t voff)
{
	struct policy_net net = { .src = line_src(ln, voff) };
	struct net_ctx c = { .ps = ps, .ln = ln, .net = &net, .ok = true };
	char *v = strdup(ln->text + voff), *f[5];
	size_t off[5], n = 0, i;

	(void)kd;
	(void)key;
	if (!v) {
		ps->oom = true;
		return;
	}
	for (i = 0, f[0] = v, off[0] = voff, n = 1; v[i]; i++) {
		if (v[i] != '|')
			continue;
		if (n == 5) {
			net_error(&c, voff + i, "too many '|' in net=: expected %s", NET_FORMAT);
			goto cleanup;
		}
		v[i] = '\0';
		f[n] = v + i + 1;
		off[n++] = voff + i + 1;
	}
	if (n != 5) {
		net_error(&c, voff, "net= needs 5 fields separated by '|', found %zu: expected %s",
			  n, NET_FORMAT);
		goto cleanup;
	}
	net_action(&c, f[0], off[0]);
	net_proto(&c, f[1], off[1]);
	net_network(&c, f[2], off[2]);
	net_ports(&c, f[3], off[3]);
	net_direction(&c, f[4], off[4]);
	if (c.ok && !ps->oom) {
		struct policy_net *slot = vec_push(&ps->p->nets, &ps->p->n_nets, sizeof(*slot));

		if (slot) {
			*slot = net;
			net = (struct policy_net){ 0 };
		} else {
			ps->oom = true;
		}
	}
cleanup:
	net_free(&net);
	free(v);
}
