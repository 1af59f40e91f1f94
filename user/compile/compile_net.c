/* SPDX-License-Identifier: MIT */
/*
 * net= rules -> the network maps (see pysb_abi.h and docs/network.md).
 *
 * 1. Every rule's NETWORK becomes address prefixes: `*` is 0.0.0.0/0 and ::/0, an address
 *    or CIDR is itself (host bits cleared, IPv4-mapped IPv6 turned into IPv4), a host name
 *    is every address getaddrinfo() gives now, each a /32 or /128.
 * 2. When an ALLOW rule names a host, DNS to the resolvers of resolv.conf (udp and tcp,
 *    port 53, OUT) is added as implicit ALLOW rules, so the program can resolve it too.
 * 3. Folding: for every distinct prefix P, the rules that apply to an address whose
 *    longest matching prefix is P are exactly the rules whose prefix covers P (all the
 *    prefixes holding one address are nested). So P's entry is computed from those rules:
 *    per protocol and direction, a partition of the ports into allowed intervals and
 *    denied ones (with the first DENY rule that denies them). One LPM lookup in the kernel
 *    then decides, whatever the number of rules.
 * 4. Port sets are deduplicated; anything beyond a fixed bound is a compile error naming
 *    the lines, never a silent truncation.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "compile.h"
#include "log.h"

#define DEFAULT_RESOLV_CONF "/etc/resolv.conf"
#define DNS_PORT 53

/* One address prefix of one rule. */
struct atom {
	int af; /* AF_INET, AF_INET6 */
	unsigned plen;
	uint8_t addr[16]; /* host bits cleared; IPv4 in addr[0..3] */
	uint32_t rule;	  /* 1-based index in compiled.net_rules */
};

struct net_build {
	const struct policy *p;
	struct compiled *c;
	struct atom *atoms;
	size_t n_atoms, cap_atoms;
	size_t cap_rules, cap_prefixes, cap_ports;
	/* port-set interning: open addressing over indexes in c->net_ports, 0 = empty slot */
	uint32_t *hash;
	size_t hash_size;
};

static const char *const slot_names[PYSB_NET_SLOTS] = {
	[PYSB_NET_TCP_OUT] = "tcp OUT",
	[PYSB_NET_TCP_IN] = "tcp IN",
	[PYSB_NET_UDP_OUT] = "udp OUT",
	[PYSB_NET_UDP_IN] = "udp IN",
};

static void *grow(void *v, size_t *cap, size_t n, size_t size)
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

static void mask_prefix(uint8_t *addr, unsigned bytes, unsigned plen)
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

static int copy_ports(struct compiled_net_rule *r, const struct policy_port_range *ports,
		      size_t n)
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

/* A host name: one /32 or /128 atom per distinct address. 0, or -1 (error printed). */
static int expand_host(struct net_build *b, const struct compile_opts *o,
		       const struct policy_net *n, uint32_t rule)
{
	struct compiled_net_rule *r = &b->c->net_rules[rule - 1];
	struct addrinfo *res = NULL;
	size_t first = b->n_atoms; /* this rule's atoms start here */
	int err = resolve_name(o, n->network, &res);

	if (err) {
		const char *why = err == EAI_SYSTEM ? strerror(errno) : gai_strerror(err);

		if (n->deny) {
			pr_err("%s:%u: net=%s: cannot resolve host name '%s' (%s): an unresolvable "
			       "DENY rule would deny nothing; fix the name or use an address",
			       n->src.file, n->src.line, r->text, n->network, why);
			return -1;
		}
		pr_warn("%s:%u: net=%s: cannot resolve host name '%s' (%s); rule dropped",
			n->src.file, n->src.line, r->text, n->network, why);
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

static int expand_rule(struct net_build *b, const struct compile_opts *o,
		       const struct policy_net *n)
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
		pr_err("%s:%u: net=%s: invalid network '%s'", n->src.file, n->src.line, r->text,
		       n->network);
		return -1;
	}
	if (kind == 0) {
		r->n_addrs = 1;
		return add_atom(b, &a);
	}
	return expand_host(b, o, n, idx);
}

/* The nameservers of resolv.conf (glibc: 127.0.0.1 when there is none). */
static int add_dns_rules(struct net_build *b, const struct compile_opts *o)
{
	static const struct policy_port_range dns = { DNS_PORT, DNS_PORT };
	const char *file = o && o->resolv_conf ? o->resolv_conf : DEFAULT_RESOLV_CONF;
	FILE *f = fopen(file, "re");
	char *line = NULL;
	size_t cap = 0;
	int found = 0, ret = 0;

	if (!f)
		pr_warn("cannot read %s (%s): allowing DNS to 127.0.0.1 only, as the C library "
			"would use it", file, strerror(errno));
	while (f && !ret && getline(&line, &cap, f) > 0) {
		char addr[128];
		struct compiled_net_rule *r;
		struct atom a = { 0 };

		if (sscanf(line, " nameserver %127s", addr) != 1)
			continue;
		addr[strcspn(addr, "%")] = '\0'; /* fe80::1%eth0: the scope is not ours */
		if (parse_prefix(addr, &a) || strchr(addr, '/')) {
			pr_warn("%s: nameserver '%s' is not an address; ignored", file, addr);
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

static int atom_cmp(const void *x, const void *y)
{
	const struct atom *a = x, *b = y;
	int d;

	if (a->af != b->af)
		return a->af < b->af ? -1 : 1;
	if (a->plen != b->plen)
		return a->plen < b->plen ? -1 : 1;
	d = memcmp(a->addr, b->addr, 16);
	if (d)
		return d;
	return a->rule < b->rule ? -1 : a->rule > b->rule;
}

/* First atom with this exact prefix in the sorted array, or n. */
static size_t find_prefix(const struct atom *v, size_t n, int af, unsigned plen,
			  const uint8_t *addr)
{
	size_t lo = 0, hi = n;
	struct atom key = { .af = af, .plen = plen, .rule = 0 };

	memcpy(key.addr, addr, 16);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (atom_cmp(&v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && v[lo].af == af && v[lo].plen == plen && !memcmp(v[lo].addr, addr, 16))
		return lo;
	return n;
}

static bool rule_in_slot(const struct compiled_net_rule *r, unsigned slot)
{
	unsigned proto = slot >= PYSB_NET_UDP_OUT ? POLICY_PROTO_UDP : POLICY_PROTO_TCP;
	unsigned dir = (slot & 1) ? POLICY_DIR_IN : POLICY_DIR_OUT;

	return (r->protos & proto) && (r->dirs & dir);
}

static bool rule_has_port(const struct compiled_net_rule *r, uint32_t port)
{
	for (size_t i = 0; i < r->n_ports; i++)
		if (port >= r->ports[i].lo && port <= r->ports[i].hi)
			return true;
	return false;
}

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * The port partition of one slot given the rules (1-based indexes, ascending) that
 * apply: DENY first (the earliest DENY rule is named), then ALLOW, then denied.
 * Returns 0, or -1 when it needs more than PYSB_NET_MAX_RANGES intervals.
 */
static int partition(const struct compiled *c, const uint32_t *rules, size_t n, unsigned slot,
		     struct pysb_net_ports *out, uint32_t **bounds, size_t *bcap)
{
	size_t nb = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		const struct compiled_net_rule *r = &c->net_rules[rules[i] - 1];

		if (!rule_in_slot(r, slot))
			continue;
		for (size_t k = 0; k < r->n_ports; k++) {
			uint32_t *v = grow(*bounds, bcap, nb + 2, sizeof(**bounds));

			if (!v)
				return -2;
			*bounds = v;
			v[nb++] = r->ports[k].lo;
			v[nb++] = (uint32_t)r->ports[k].hi + 1;
		}
	}
	{
		uint32_t *v = grow(*bounds, bcap, nb + 1, sizeof(**bounds));

		if (!v)
			return -2;
		*bounds = v;
		v[nb++] = 0;
	}
	qsort(*bounds, nb, sizeof(**bounds), u32_cmp);
	for (size_t i = 0; i < nb; i++) {
		uint32_t port = (*bounds)[i];
		uint16_t verdict = 0;
		bool allowed = false, denied = false;

		if (port > 65535 || (i && port == (*bounds)[i - 1]))
			continue;
		for (size_t k = 0; k < n && !denied; k++) {
			const struct compiled_net_rule *r = &c->net_rules[rules[k] - 1];

			if (!rule_in_slot(r, slot) || !rule_has_port(r, port))
				continue;
			if (r->deny) {
				denied = true;
				verdict = (uint16_t)rules[k];
			} else {
				allowed = true;
			}
		}
		if (!denied && allowed)
			verdict = PYSB_NET_ALLOW;
		if (out->n && out->r[out->n - 1].verdict == verdict)
			continue;
		if (out->n == PYSB_NET_MAX_RANGES)
			return -1;
		out->r[out->n].start = (uint16_t)port;
		out->r[out->n].verdict = verdict;
		out->n++;
	}
	return 0;
}

static uint64_t ports_hash(const struct pysb_net_ports *ps)
{
	const unsigned char *p = (const unsigned char *)ps;
	size_t len = sizeof(ps->n) + ps->n * sizeof(ps->r[0]);
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static bool ports_equal(const struct pysb_net_ports *a, const struct pysb_net_ports *b)
{
	return a->n == b->n && !memcmp(a->r, b->r, a->n * sizeof(a->r[0]));
}

/* Index of the port set equal to `ps`, added if new; -1 when the map is full. */
static int intern_ports(struct net_build *b, const struct pysb_net_ports *ps)
{
	struct compiled *c = b->c;
	size_t mask = b->hash_size - 1, i = ports_hash(ps) & mask;
	struct pysb_net_ports *v;

	if (ports_equal(ps, &c->net_ports[0]))
		return 0;
	for (; b->hash[i]; i = (i + 1) & mask)
		if (ports_equal(ps, &c->net_ports[b->hash[i]]))
			return (int)b->hash[i];
	if (c->n_net_ports == PYSB_NET_MAX_PORTSETS)
		return -1;
	v = grow(c->net_ports, &b->cap_ports, c->n_net_ports, sizeof(*v));
	if (!v)
		return -2;
	c->net_ports = v;
	v[c->n_net_ports] = *ps;
	b->hash[i] = (uint32_t)c->n_net_ports;
	return (int)c->n_net_ports++;
}

static void prefix_text(char *buf, size_t len, int af, const uint8_t *addr, unsigned plen)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(af, addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, plen);
}

/* "f:3, f:7, ..." of the rules (up to 6) applying to a slot, for errors. */
static void lines_text(char *buf, size_t len, const struct compiled *c, const uint32_t *rules,
		       size_t n, unsigned slot)
{
	size_t off = 0, shown = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++) {
		const struct compiled_net_rule *r = &c->net_rules[rules[i] - 1];

		if (!rule_in_slot(r, slot) || r->implicit)
			continue;
		if (shown++ == 6) {
			snprintf(buf + off, len - off, ", ...");
			break;
		}
		off += snprintf(buf + off, len - off, "%s%s:%u", off ? ", " : "", r->src.file,
				r->src.line);
	}
}

/* Folds the sorted atoms of one family into prefix entries. */
static int fold_family(struct net_build *b, const struct atom *v, size_t n, int af)
{
	struct compiled *c = b->c;
	unsigned max_plen = af == AF_INET ? 32 : 128;
	uint32_t *rules = NULL, *bounds = NULL;
	size_t rcap = 0, bcap = 0, n_prefixes = 0;
	struct pysb_net_ports ps;
	int ret = -1;

	for (size_t i = 0; i < n; i++) {
		struct compiled_net_prefix *e;
		size_t nr = 0;

		if (v[i].af != af)
			continue;
		if (i && v[i - 1].af == af && v[i - 1].plen == v[i].plen &&
		    !memcmp(v[i - 1].addr, v[i].addr, 16))
			continue; /* same prefix as the previous atom: done */
		if (++n_prefixes > PYSB_NET_MAX_PREFIXES) {
			const struct compiled_net_rule *r = &c->net_rules[v[i].rule - 1];

			pr_err("%s:%u: net=%s: the policy needs more than %d %s prefixes; use "
			       "wider networks", r->implicit ? "(implicit)" : r->src.file,
			       r->src.line, r->text, PYSB_NET_MAX_PREFIXES,
			       af == AF_INET ? "IPv4" : "IPv6");
			goto out;
		}
		/* Every prefix covering this one, itself included: the rules that apply. */
		for (unsigned len = 0; len <= v[i].plen && len <= max_plen; len++) {
			uint8_t m[16];
			size_t k;

			memcpy(m, v[i].addr, 16);
			mask_prefix(m, af == AF_INET ? 4 : 16, len);
			k = find_prefix(v, n, af, len, m);
			for (; k < n && v[k].plen == len && !memcmp(v[k].addr, m, 16); k++) {
				uint32_t *nv = grow(rules, &rcap, nr, sizeof(*rules));

				if (!nv)
					goto nomem;
				rules = nv;
				rules[nr++] = v[k].rule;
			}
		}
		qsort(rules, nr, sizeof(*rules), u32_cmp);
		e = grow(c->net_prefixes, &b->cap_prefixes, c->n_net_prefixes, sizeof(*e));
		if (!e)
			goto nomem;
		c->net_prefixes = e;
		e = &c->net_prefixes[c->n_net_prefixes];
		memset(e, 0, sizeof(*e));
		e->af = af;
		e->plen = v[i].plen;
		memcpy(e->addr, v[i].addr, 16);
		for (unsigned slot = 0; slot < PYSB_NET_SLOTS; slot++) {
			char where[64], lines[512];
			int r = partition(c, rules, nr, slot, &ps, &bounds, &bcap), id;

			if (r == -2)
				goto nomem;
			if (r < 0) {
				prefix_text(where, sizeof(where), af, e->addr, e->plen);
				lines_text(lines, sizeof(lines), c, rules, nr, slot);
				pr_err("%s: the net= rules covering %s split the %s ports into "
				       "more than %d ranges; merge ports into ranges",
				       lines, where, slot_names[slot], PYSB_NET_MAX_RANGES);
				goto out;
			}
			id = intern_ports(b, &ps);
			if (id == -2)
				goto nomem;
			if (id < 0) {
				prefix_text(where, sizeof(where), af, e->addr, e->plen);
				lines_text(lines, sizeof(lines), c, rules, nr, slot);
				pr_err("%s: the net= rules need more than %d distinct port sets "
				       "(at %s, %s); use fewer distinct port lists",
				       lines, PYSB_NET_MAX_PORTSETS, where, slot_names[slot]);
				goto out;
			}
			e->value.ports[slot] = (uint16_t)id;
		}
		c->n_net_prefixes++;
	}
	ret = 0;
	goto out;
nomem:
	pr_err("out of memory compiling the net= rules");
out:
	free(rules);
	free(bounds);
	return ret;
}

/* ---------------- bpf.socket-family, bpf.unix-abstract */

static const struct {
	const char *name;
	int family; /* AF_* number, or -1 with a PYSB_NET_* flag */
	uint32_t flag;
} family_names[] = {
	{ "raw", -1, PYSB_NET_INET_RAW },
	{ "icmp", -1, PYSB_NET_ICMP },
	{ "sctp", -1, PYSB_NET_SCTP },
	{ "ax25", 3, 0 },
	{ "ipx", 4, 0 },
	{ "appletalk", 5, 0 },
	{ "netrom", 6, 0 },
	{ "bridge", 7, 0 },
	{ "atmpvc", 8, 0 },
	{ "x25", 9, 0 },
	{ "rose", 11, 0 },
	{ "decnet", 12, 0 },
	{ "netbeui", 13, 0 },
	{ "security", 14, 0 },
	{ "key", 15, 0 },
	{ "netlink", 16, 0 },
	{ "packet", 17, 0 },
	{ "ash", 18, 0 },
	{ "econet", 19, 0 },
	{ "atmsvc", 20, 0 },
	{ "rds", 21, 0 },
	{ "sna", 22, 0 },
	{ "irda", 23, 0 },
	{ "pppox", 24, 0 },
	{ "wanpipe", 25, 0 },
	{ "llc", 26, 0 },
	{ "ib", 27, 0 },
	{ "mpls", 28, 0 },
	{ "can", 29, 0 },
	{ "tipc", 30, 0 },
	{ "bluetooth", 31, 0 },
	{ "iucv", 32, 0 },
	{ "rxrpc", 33, 0 },
	{ "isdn", 34, 0 },
	{ "phonet", 35, 0 },
	{ "ieee802154", 36, 0 },
	{ "caif", 37, 0 },
	{ "alg", 38, 0 },
	{ "nfc", 39, 0 },
	{ "vsock", 40, 0 },
	{ "kcm", 41, 0 },
	{ "qipcrtr", 42, 0 },
	{ "smc", 43, 0 },
	{ "xdp", 44, 0 },
	{ "mctp", 45, 0 },
};

const char *net_family_name(unsigned family)
{
	static const char *const fixed[] = { [1] = "unix", [2] = "inet", [10] = "inet6" };

	if (family < sizeof(fixed) / sizeof(fixed[0]) && fixed[family])
		return fixed[family];
	for (size_t i = 0; i < sizeof(family_names) / sizeof(family_names[0]); i++)
		if (family_names[i].family == (int)family)
			return family_names[i].name;
	return NULL;
}

static int socket_family_item(struct pysb_net_cfg *cfg, const struct policy_kv *kv,
			      const char *item)
{
	char *end;
	unsigned long n;

	if (!*item) {
		pr_err("%s:%u: %s=%s: empty family name; expected a comma list such as "
		       "netlink,packet", kv->src.file, kv->src.line, kv->key, kv->value);
		return -1;
	}
	for (size_t i = 0; i < sizeof(family_names) / sizeof(family_names[0]); i++) {
		if (strcasecmp(item, family_names[i].name))
			continue;
		if (family_names[i].family < 0)
			cfg->flags |= family_names[i].flag;
		else
			cfg->families |= 1ull << family_names[i].family;
		return 0;
	}
	if (!strcasecmp(item, "unix") || !strcasecmp(item, "inet") ||
	    !strcasecmp(item, "inet6")) {
		pr_err("%s:%u: %s=%s: '%s' is not a family to allow here: unix sockets follow the "
		       "file rules, TCP and UDP the net= rules", kv->src.file, kv->src.line,
		       kv->key, kv->value, item);
		return -1;
	}
	errno = 0;
	n = strtoul(item, &end, 10);
	if (item[0] >= '0' && item[0] <= '9' && !*end && !errno && n < 64 && n != 1 && n != 2 &&
	    n != 10 && n != 0) {
		cfg->families |= 1ull << n;
		return 0;
	}
	pr_err("%s:%u: %s=%s: unknown socket family '%s'; expected names such as netlink, "
	       "packet, vsock, bluetooth, can, alg, raw, icmp, sctp, or an AF_ number (3-63); "
	       "see docs/network.md", kv->src.file, kv->src.line, kv->key, kv->value, item);
	return -1;
}

static int net_params(const struct policy *p, struct pysb_net_cfg *cfg)
{
	for (size_t i = 0; i < p->n_params; i++) {
		const struct policy_kv *kv = &p->params[i];

		if (!strcmp(kv->key, "bpf.unix-abstract")) {
			if (!strcasecmp(kv->value, "allow")) {
				cfg->flags |= PYSB_NET_UNIX_ABSTRACT;
			} else if (!strcasecmp(kv->value, "deny")) {
				cfg->flags &= ~PYSB_NET_UNIX_ABSTRACT;
			} else {
				pr_err("%s:%u: %s=%s: expected allow or deny", kv->src.file,
				       kv->src.line, kv->key, kv->value);
				return -1;
			}
		} else if (!strcmp(kv->key, "bpf.socket-family")) {
			char *list = strdup(kv->value), *tok, *next;
			int ret = 0;

			if (!list)
				return -1;
			/* strsep, not strtok: "a,,b" has an empty item, which is an error */
			for (next = list; next && !ret;) {
				tok = strsep(&next, ",");
				tok += strspn(tok, " \t");
				tok[strcspn(tok, " \t")] = '\0';
				ret = socket_family_item(cfg, kv, tok);
			}
			free(list);
			if (ret)
				return -1;
		}
	}
	return 0;
}

/* ---------------- entry points */

int net_compile(const struct policy *p, const struct compile_opts *o, struct compiled *c)
{
	struct net_build b = { .p = p, .c = c };
	bool names_hosts = false;
	size_t n4 = 0;
	int ret = -1;

	if (net_params(p, &c->net_cfg))
		return -1;
	c->net_ports = calloc(16, sizeof(*c->net_ports));
	if (!c->net_ports)
		goto nomem;
	b.cap_ports = 16;
	c->net_ports[0].n = 1; /* port set 0: every port denied, no rule named */
	c->n_net_ports = 1;

	for (size_t i = 0; i < p->n_nets; i++) {
		if (expand_rule(&b, o, &p->nets[i]))
			goto out;
		if (!p->nets[i].deny && c->net_rules[c->n_net_rules - 1].host &&
		    c->net_rules[c->n_net_rules - 1].n_addrs)
			names_hosts = true;
	}
	if (names_hosts && add_dns_rules(&b, o))
		goto out;
	if (c->n_net_rules > PYSB_NET_MAX_RULES) {
		const struct compiled_net_rule *r = &c->net_rules[PYSB_NET_MAX_RULES];

		pr_err("%s:%u: more than %d net= rules; use wider networks or port ranges",
		       r->src.file, r->src.line, PYSB_NET_MAX_RULES);
		goto out;
	}

	if (!b.n_atoms) {
		ret = 0;
		goto out;
	}
	b.hash_size = 2;
	while (b.hash_size < 2 * PYSB_NET_MAX_PORTSETS)
		b.hash_size *= 2;
	b.hash = calloc(b.hash_size, sizeof(*b.hash));
	if (!b.hash)
		goto nomem;
	qsort(b.atoms, b.n_atoms, sizeof(*b.atoms), atom_cmp);
	while (n4 < b.n_atoms && b.atoms[n4].af == AF_INET)
		n4++;
	if (fold_family(&b, b.atoms, n4, AF_INET) ||
	    fold_family(&b, b.atoms + n4, b.n_atoms - n4, AF_INET6))
		goto out;
	ret = 0;
	goto out;
nomem:
	pr_err("out of memory compiling the net= rules");
out:
	free(b.atoms);
	free(b.hash);
	return ret;
}

void net_compiled_free(struct compiled *c)
{
	for (size_t i = 0; i < c->n_net_rules; i++) {
		free(c->net_rules[i].text);
		free(c->net_rules[i].ports);
	}
	free(c->net_rules);
	free(c->net_prefixes);
	free(c->net_ports);
	c->net_rules = NULL;
	c->net_prefixes = NULL;
	c->net_ports = NULL;
	c->n_net_rules = c->n_net_prefixes = c->n_net_ports = 0;
}

const struct compiled_net_rule *net_rule_at(const struct compiled *c, uint32_t verdict)
{
	uint32_t i = verdict & ~PYSB_NET_ALLOW;

	if (!c || !i || i > c->n_net_rules)
		return NULL;
	return &c->net_rules[i - 1];
}
