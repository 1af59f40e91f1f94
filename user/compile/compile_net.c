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
#include "net_int.h"

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
			      struct diag_list *d, const char *item)
{
	char *end;
	unsigned long n;

	if (!*item) {
		return diag_add(d, DIAG_ERROR, (struct diag_at){ kv->src.file, kv->src.line, 0 },
				"expected a comma list such as netlink,packet",
				"%s=%s: empty family name", kv->key, kv->value);
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
	if (!strcasecmp(item, "unix") || !strcasecmp(item, "inet") || !strcasecmp(item, "inet6")) {
		return diag_add(
			d, DIAG_ERROR, (struct diag_at){ kv->src.file, kv->src.line, 0 }, NULL,
			"%s=%s: '%s' is not a family to allow here: unix sockets follow the "
			"file rules, TCP and UDP the net= rules",
			kv->key, kv->value, item);
	}
	errno = 0;
	n = strtoul(item, &end, 10);
	if (item[0] >= '0' && item[0] <= '9' && !*end && !errno && n < 64 && n != 1 && n != 2 &&
	    n != 10 && n != 0) {
		cfg->families |= 1ull << n;
		return 0;
	}
	return diag_add(d, DIAG_ERROR, (struct diag_at){ kv->src.file, kv->src.line, 0 },
			"expected names such as netlink, packet, vsock, bluetooth, can, alg, raw, "
			"icmp, sctp, or an AF_ number (3-63); see docs/network.md",
			"%s=%s: unknown socket family '%s'", kv->key, kv->value, item);
}

int net_unix_abstract_value(const struct policy_kv *kv, struct pysb_net_cfg *cfg,
			    struct diag_list *d)
{
	if (!strcasecmp(kv->value, "allow")) {
		cfg->flags |= PYSB_NET_UNIX_ABSTRACT;
		return 0;
	}
	if (!strcasecmp(kv->value, "deny")) {
		cfg->flags &= ~PYSB_NET_UNIX_ABSTRACT;
		return 0;
	}
	return diag_add(d, DIAG_ERROR, (struct diag_at){ kv->src.file, kv->src.line, 0 }, NULL,
			"%s=%s: expected allow or deny", kv->key, kv->value);
}

int net_families_value(const struct policy_kv *kv, struct pysb_net_cfg *cfg, struct diag_list *d)
{
	char *list = strdup(kv->value), *tok, *next;
	int ret = 0;

	if (!list)
		return -1;
	/* strsep, not strtok: "a,,b" has an empty item, which is an error */
	for (next = list; next && !ret;) {
		tok = strsep(&next, ",");
		tok += strspn(tok, " \t");
		tok[strcspn(tok, " \t")] = '\0';
		ret = socket_family_item(cfg, kv, d, tok);
	}
	free(list);
	return ret ? -1 : 0;
}

/* ---------------- entry points */

int net_compile(const struct policy *p, const struct compile_opts *o, struct compiled *c)
{
	struct net_build b = { .p = p, .c = c, .diag = o ? o->diag : NULL };
	bool names_hosts = false;
	size_t n4 = 0;
	int ret = -1;

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

		diag_add(b.diag, DIAG_ERROR, (struct diag_at){ r->src.file, r->src.line, 0 },
			 "use wider networks or port ranges", "more than %d net= rules",
			 PYSB_NET_MAX_RULES);
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
	diag_add(b.diag, DIAG_ERROR, (struct diag_at){ 0 }, NULL,
		 "out of memory compiling the net= rules");
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

/* ---------------- multicast memberships (bpf/multicast.bpf.h) */

static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned plen)
{
	unsigned n = plen / 8;

	if (memcmp(a, b, n))
		return false;
	return plen % 8 == 0 || !((a[n] ^ b[n]) & (0xff00u >> (plen % 8)));
}

static bool udp_in_allows_a_port(const struct compiled *c, const struct compiled_net_prefix *e)
{
	uint16_t id = e->value.ports[PYSB_NET_UDP_IN];
	const struct pysb_net_ports *ps;

	if (id >= c->n_net_ports)
		return false;
	ps = &c->net_ports[id];
	for (uint32_t i = 0; i < ps->n && i < PYSB_NET_MAX_RANGES; i++)
		if (ps->r[i].verdict & PYSB_NET_ALLOW)
			return true;
	return false;
}

/*
 * Does some address under (addr, plen) of family af find, by the kernel's longest-prefix
 * lookup, an entry whose UDP IN ports allow one? Split in halves while an entry lies
 * strictly under the prefix (a DENY on part of a range allowed wider shows so).
 */
static bool udp_in_allowed_under(const struct compiled *c, int af, const uint8_t *addr,
				 unsigned plen)
{
	const struct compiled_net_prefix *best = NULL;
	bool split = false;
	uint8_t half[16];

	for (size_t i = 0; i < c->n_net_prefixes; i++) {
		const struct compiled_net_prefix *e = &c->net_prefixes[i];

		if (e->af != af)
			continue;
		if (e->plen <= plen && prefix_match(e->addr, addr, e->plen))
			best = !best || e->plen > best->plen ? e : best;
		else if (e->plen > plen && prefix_match(e->addr, addr, plen))
			split = true;
	}
	if (!split)
		return best && udp_in_allows_a_port(c, best);
	memcpy(half, addr, sizeof(half));
	if (udp_in_allowed_under(c, af, half, plen + 1))
		return true;
	half[plen / 8] |= 0x80u >> (plen % 8);
	return udp_in_allowed_under(c, af, half, plen + 1);
}

bool net_multicast_allowed(const struct compiled *c, int af)
{
	/* 224.0.0.0/4, ff00::/8 */
	const uint8_t v4[16] = { 224 }, v6[16] = { 0xff };

	return af == AF_INET6 ? udp_in_allowed_under(c, af, v6, 8)
			      : udp_in_allowed_under(c, AF_INET, v4, 4);
}

bool net_prefix_is_host(const struct compiled_net_prefix *e)
{
	return e->plen == (e->af == AF_INET6 ? 128u : 32u);
}

bool net_hosts_indexed(const struct compiled *c)
{
	size_t hosts = 0;

	for (size_t i = 0; i < c->n_net_prefixes && hosts < PYSB_NET_HOSTS_MIN; i++)
		hosts += net_prefix_is_host(&c->net_prefixes[i]);
	return hosts >= PYSB_NET_HOSTS_MIN;
}

const struct compiled_net_rule *net_rule_at(const struct compiled *c, uint32_t verdict)
{
	uint32_t i = verdict & ~PYSB_NET_ALLOW;

	if (!c || !i || i > c->n_net_rules)
		return NULL;
	return &c->net_rules[i - 1];
}
