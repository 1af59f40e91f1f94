/* SPDX-License-Identifier: MIT */
/*
 * net= rules into address atoms: prefixes, host names (resolved at compile time), the resolvers of resolv.conf. See compile_net.c.
 */
#include "net_int.h"

/* ---------------- rules: addresses, host names, the resolvers */

void *grow(void *v, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return v;
	ncap = *cap ? *cap * 2 : 16;
	nv = realloc(v, ncap * size);
	if (!nv)
		return NULL;
	*cap = ncap;
	return nv;
}

void mask_prefix(uint8_t *addr, unsigned bytes, unsigned plen)
{
	for (unsigned i = 0; i < bytes; i++) {
		unsigned bit = i * 8;

		if (bit >= plen)
			addr[i] = 0;
		else if (plen - bit < 8)
			addr[i] &= (uint8_t)(0xff << (8 - (plen - bit)));
	}
}

static bool is_v4_mapped(const uint8_t *a)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(a, prefix, sizeof(prefix));
}

/* IPv4-mapped IPv6 (::ffff:a.b.c.d/96+n) is judged as IPv4 (a.b.c.d/n). */
static void normalize(struct atom *a)
{
	if (a->af == AF_INET6 && a->plen >= 96 && is_v4_mapped(a->addr)) {
		memmove(a->addr, a->addr + 12, 4);
		memset(a->addr + 4, 0, 12);
		a->af = AF_INET;
		a->plen -= 96;
	}
	mask_prefix(a->addr, a->af == AF_INET ? 4 : 16, a->plen);
}

/* IPv4 prefix given as a netmask or a hostmask, as Python's ip_network accepts. */
static int v4_mask_len(const char *s, unsigned *plen)
{
	struct in_addr m;
	uint32_t v, inv;

	if (inet_pton(AF_INET, s, &m) != 1)
		return -1;
	v = ntohl(m.s_addr);
	inv = ~v;
	if ((inv & (inv + 1)) == 0) { /* ones then zeros */
		*plen = (unsigned)__builtin_popcount(v);
		return 0;
	}
	if ((v & (v + 1)) == 0) { /* zeros then ones: a hostmask */
		*plen = 32 - (unsigned)__builtin_popcount(v);
		return 0;
	}
	return -1;
}

/* An address or CIDR: 0 and the prefix; 1: not one (a host name); -1: malformed. */
static int parse_prefix(const char *s, struct atom *a)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	char *end;

	if (n >= sizeof(buf))
		return strchr(s, ':') || slash ? -1 : 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	memset(a->addr, 0, sizeof(a->addr));
	if (inet_pton(AF_INET6, buf, a->addr) == 1) {
		a->af = AF_INET6;
		a->plen = 128;
	} else if (inet_pton(AF_INET, buf, a->addr) == 1) {
		a->af = AF_INET;
		a->plen = 32;
	} else {
		return slash || strchr(s, ':') ? -1 : 1;
	}
	if (slash) {
		unsigned long len;

		errno = 0;
		len = strtoul(slash + 1, &end, 10);
		if (slash[1] >= '0' && slash[1] <= '9' && !*end && !errno &&
		    len <= (a->af == AF_INET ? 32u : 128u))
			a->plen = (unsigned)len;
		else if (a->af != AF_INET || v4_mask_len(slash + 1, &a->plen))
			return -1;
	}
	normalize(a);
	return 0;
}

static int add_atom(struct net_build *b, const struct atom *a)
{
	struct atom *v = grow(b->atoms, &b->cap_atoms, b->n_atoms, sizeof(*v));

	if (!v)
		return -1;
	b->atoms = v;
	b->atoms[b->n_atoms++] = *a;
	return 0;
}

/* Appends a rule; its index (1-based) is c->n_net_rules afterwards. */
static struct compiled_net_rule *add_rule(struct net_build *b)
{
	struct compiled *c = b->c;
	struct compiled_net_rule *v = grow(c->net_rules, &b->cap_rules, c->n_net_rules, sizeof(*v));

	if (!v)
		return NULL;
	c->net_rules = v;
	memset(&v[c->n_net_rules], 0, sizeof(*v));
	return &v[c->n_net_rules++];
}

static int ports_text(char *buf, size_t len, const struct policy_port_range *r, size_t n)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++) {
		const char *sep = i ? "," : "";

		if (r[i].lo == 0 && r[i].hi == 65535)
			off += snprintf(buf + off, len - off, "%s*", sep);
		else if (r[i].lo == r[i].hi)
			off += snprintf(buf + off, len - off, "%s%u", sep, r[i].lo);
		else if (r[i].hi == 65535)
			off += snprintf(buf + off, len - off, "%s%u-", sep, r[i].lo);
		else
			off += snprintf(buf + off, len - off, "%s%u-%u", sep, r[i].lo, r[i].hi);
	}
	return 0;
}

/* "DENY|tcp|10.0.0.0/8|443|OUT", for `check` and events. */
static char *rule_text(bool deny, unsigned protos, const char *network,
		       const struct policy_port_range *ports, size_t n_ports, unsigned dirs)
{
	char pbuf[256];
	char *s;

	ports_text(pbuf, sizeof(pbuf), ports, n_ports);
	if (asprintf(&s, "%s|%s|%s|%s|%s", deny ? "DENY" : "ALLOW",
		     protos == (POLICY_PROTO_TCP | POLICY_PROTO_UDP) ? "any"
		     : protos == POLICY_PROTO_TCP		     ? "tcp"
								     : "udp",
		     network, pbuf,
		     dirs == (POLICY_DIR_IN | POLICY_DIR_OUT) ? "*"
		     : dirs == POLICY_DIR_IN		      ? "IN"
							      : "OUT") < 0)
		return NULL;
	return s;
}

static int copy_ports(struct compiled_net_rule *r, const struct policy_port_range *ports, size_t n)
{
	r->n_ports = n;
	if (!n)
		return 0;
	r->ports = malloc(n * sizeof(*ports));
	if (!r->ports)
		return -1;
	memcpy(r->ports, ports, n * sizeof(*ports));
	return 0;
}

static int resolve_name(const struct compile_opts *o, const char *name, struct addrinfo **res)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	static const long backoff_ms[] = { 200, 400 };
	int err;

	/* py-sandboxes' learning writes ip6-localhost (net=ALLOW|TCP|ip6-localhost|0|IN) and
	 * resolves it, with ip6-loopback, to ::1 itself: not every /etc/hosts names them
	 * (Debian's does, Fedora's does not), and a rule must not depend on that. */
	if (!strcasecmp(name, "ip6-localhost") || !strcasecmp(name, "ip6-loopback"))
		return getaddrinfo("::1", NULL,
				   &(struct addrinfo){ .ai_flags = AI_NUMERICHOST,
						       .ai_socktype = SOCK_STREAM },
				   res);
	for (size_t attempt = 0;; attempt++) {
		if (o && o->resolve)
			err = o->resolve(name, &hints, res);
		else
			err = getaddrinfo(name, NULL, &hints, res);
		if ((err != EAI_AGAIN && err != EAI_SYSTEM) || attempt == 2)
			return err;
		nanosleep(&(struct timespec){ .tv_nsec = backoff_ms[attempt] * 1000000 }, NULL);
	}
}

/* A host name: one /32 or /128 atom per distinct address. 0, or -1 (error reported). */
static int expand_host(struct net_build *b, const struct compile_opts *o,
		       const struct policy_net *n, uint32_t rule)
{
	struct compiled_net_rule *r = &b->c->net_rules[rule - 1];
	struct addrinfo *res = NULL;
	size_t first = b->n_atoms; /* this rule's atoms start here */
	int err = resolve_name(o, n->network, &res);

	if (err) {
		const char *why = err == EAI_SYSTEM ? strerror(errno) : gai_strerror(err);
		struct diag_at at = { n->src.file, n->src.line, 0 };

		if (n->deny) {
			return diag_add(b->diag, DIAG_ERROR, at, "fix the name or use an address",
					"net=%s: cannot resolve host name '%s' (%s): an "
					"unresolvable DENY rule would deny nothing",
					r->text, n->network, why);
		}
		diag_add(b->diag, DIAG_WARNING, at, "rule dropped",
			 "net=%s: cannot resolve host name '%s' (%s)", r->text, n->network, why);
		r->dropped = true;
		return 0;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		struct atom a = { .rule = rule };
		bool dup = false;

		if (ai->ai_family == AF_INET) {
			a.af = AF_INET;
			a.plen = 32;
			memcpy(a.addr, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
		} else if (ai->ai_family == AF_INET6) {
			a.af = AF_INET6;
			a.plen = 128;
			memcpy(a.addr, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
		} else {
			continue;
		}
		normalize(&a);
		for (size_t i = first; i < b->n_atoms && !dup; i++)
			dup = b->atoms[i].af == a.af && !memcmp(b->atoms[i].addr, a.addr, 16);
		if (dup)
			continue;
		if (add_atom(b, &a)) {
			freeaddrinfo(res);
			return -1;
		}
		r->n_addrs++;
	}
	freeaddrinfo(res);
	r->host = true;
	return 0;
}

int expand_rule(struct net_build *b, const struct compile_opts *o, const struct policy_net *n)
{
	struct compiled_net_rule *r = add_rule(b);
	struct atom a = { 0 };
	uint32_t idx;
	int kind;

	if (!r)
		return -1;
	idx = (uint32_t)b->c->n_net_rules;
	r->deny = n->deny;
	r->protos = n->protos;
	r->dirs = n->dirs;
	r->src = n->src;
	r->text = rule_text(n->deny, n->protos, n->network, n->ports, n->n_ports, n->dirs);
	if (!r->text || copy_ports(r, n->ports, n->n_ports))
		return -1;
	a.rule = idx;
	if (!strcmp(n->network, "*")) {
		a.af = AF_INET;
		if (add_atom(b, &a))
			return -1;
		a.af = AF_INET6;
		r->n_addrs = 2;
		return add_atom(b, &a);
	}
	kind = parse_prefix(n->network, &a);
	if (kind < 0) {
		/* The parser refuses these; only a caller building a policy by hand gets here. */
		return diag_add(b->diag, DIAG_ERROR,
				(struct diag_at){ n->src.file, n->src.line, 0 }, NULL,
				"net=%s: invalid network '%s'", r->text, n->network);
	}
	if (kind == 0) {
		r->n_addrs = 1;
		return add_atom(b, &a);
	}
	return expand_host(b, o, n, idx);
}

/* The nameservers of resolv.conf (glibc: 127.0.0.1 when there is none). */
int add_dns_rules(struct net_build *b, const struct compile_opts *o)
{
	static const struct policy_port_range dns = { DNS_PORT, DNS_PORT };
	const char *file = o && o->resolv_conf ? o->resolv_conf : DEFAULT_RESOLV_CONF;
	FILE *f = fopen(file, "re");
	char *line = NULL;
	size_t cap = 0;
	int found = 0, ret = 0;

	if (!f)
		diag_add(b->diag, DIAG_WARNING, (struct diag_at){ 0 }, NULL,
			 "cannot read %s (%s): allowing DNS to 127.0.0.1 only, as the C library "
			 "would use it",
			 file, strerror(errno));
	while (f && !ret && getline(&line, &cap, f) > 0) {
		char addr[128];
		struct compiled_net_rule *r;
		struct atom a = { 0 };

		if (sscanf(line, " nameserver %127s", addr) != 1)
			continue;
		addr[strcspn(addr, "%")] = '\0'; /* fe80::1%eth0: the scope is not ours */
		if (parse_prefix(addr, &a) || strchr(addr, '/')) {
			diag_add(b->diag, DIAG_WARNING, (struct diag_at){ .file = file }, "ignored",
				 "nameserver '%s' is not an address", addr);
			continue;
		}
		ret = -1;
		r = add_rule(b);
		if (!r)
			break;
		r->protos = POLICY_PROTO_TCP | POLICY_PROTO_UDP;
		r->dirs = POLICY_DIR_OUT;
		r->implicit = true;
		r->why = "DNS to a resolver of resolv.conf (the policy names hosts)";
		r->text = rule_text(false, r->protos, addr, &dns, 1, r->dirs);
		r->n_addrs = 1;
		a.rule = (uint32_t)b->c->n_net_rules;
		if (!r->text || copy_ports(r, &dns, 1) || add_atom(b, &a))
			break;
		found++;
		ret = 0;
	}
	free(line);
	if (f)
		fclose(f);
	if (!ret && !found) {
		struct compiled_net_rule *r = add_rule(b);
		struct atom a = { .af = AF_INET, .plen = 32, .addr = { 127, 0, 0, 1 } };

		if (!r)
			return -1;
		r->protos = POLICY_PROTO_TCP | POLICY_PROTO_UDP;
		r->dirs = POLICY_DIR_OUT;
		r->implicit = true;
		r->why = "DNS to the default resolver (resolv.conf names none)";
		r->text = rule_text(false, r->protos, "127.0.0.1", &dns, 1, r->dirs);
		r->n_addrs = 1;
		a.rule = (uint32_t)b->c->n_net_rules;
		if (!r->text || copy_ports(r, &dns, 1) || add_atom(b, &a))
			return -1;
	}
	return ret;
}
