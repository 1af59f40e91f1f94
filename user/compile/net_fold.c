/* SPDX-License-Identifier: MIT */
/*
 * Folding the atoms of every rule into the longest-prefix entries and interned port sets the kernel looks up. See compile_net.c.
 */
#include "net_int.h"

static const char *const slot_names[PYSB_NET_SLOTS] = {
	[PYSB_NET_TCP_OUT] = "tcp OUT",
	[PYSB_NET_TCP_IN] = "tcp IN",
	[PYSB_NET_UDP_OUT] = "udp OUT",
	[PYSB_NET_UDP_IN] = "udp IN",
};

/* ---------------- folding: prefix entries and port sets */

int atom_cmp(const void *x, const void *y)
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

/* The rules of every prefix covering atom v[i], itself included, sorted, into *rules
 * (*nr of them); only the lengths `lens` marks are looked for (the family's atoms have no
 * other). 0, or -2: out of memory. */
static int covering_rules(const struct atom *v, size_t n, size_t i, const bool *lens,
			  uint32_t **rules, size_t *rcap, size_t *nr)
{
	int af = v[i].af;
	unsigned max_plen = af == AF_INET ? 32 : 128;

	*nr = 0;
	for (unsigned len = 0; len <= v[i].plen && len <= max_plen; len++) {
		uint8_t m[16];
		size_t k;

		if (!lens[len])
			continue; /* no atom of the family is that long: nothing to find */
		memcpy(m, v[i].addr, 16);
		mask_prefix(m, af == AF_INET ? 4 : 16, len);
		k = find_prefix(v, n, af, len, m);
		for (; k < n && v[k].plen == len && !memcmp(v[k].addr, m, 16); k++) {
			uint32_t *nv = grow(*rules, rcap, *nr, sizeof(**rules));

			if (!nv)
				return -2;
			*rules = nv;
			(*rules)[(*nr)++] = v[k].rule;
		}
	}
	qsort(*rules, *nr, sizeof(**rules), u32_cmp);
	return 0;
}

/* The port set of each slot of entry e, from the rules that apply to it. 0, -1 after
 * saying which rules are too many, or -2: out of memory. */
static int fill_slots(struct net_build *b, struct compiled_net_prefix *e, const uint32_t *rules,
		      size_t nr, uint32_t **bounds, size_t *bcap)
{
	struct compiled *c = b->c;
	struct pysb_net_ports ps;

	for (unsigned slot = 0; slot < PYSB_NET_SLOTS; slot++) {
		char where[64], lines[512];
		int r = partition(c, rules, nr, slot, &ps, bounds, bcap), id;

		if (r == -2)
			return -2;
		if (r < 0) {
			prefix_text(where, sizeof(where), e->af, e->addr, e->plen);
			lines_text(lines, sizeof(lines), c, rules, nr, slot);
			return diag_add(b->diag, DIAG_ERROR, (struct diag_at){ 0 },
					"merge ports into ranges",
					"%s: the net= rules covering %s split the %s ports into "
					"more than %d ranges",
					lines, where, slot_names[slot], PYSB_NET_MAX_RANGES);
		}
		id = intern_ports(b, &ps);
		if (id == -2)
			return -2;
		if (id < 0) {
			prefix_text(where, sizeof(where), e->af, e->addr, e->plen);
			lines_text(lines, sizeof(lines), c, rules, nr, slot);
			return diag_add(b->diag, DIAG_ERROR, (struct diag_at){ 0 },
					"use fewer distinct port lists",
					"%s: the net= rules need more than %d distinct port sets "
					"(at %s, %s)",
					lines, PYSB_NET_MAX_PORTSETS, where, slot_names[slot]);
		}
		e->value.ports[slot] = (uint16_t)id;
	}
	return 0;
}

/* Folds the sorted atoms of one family into prefix entries. */
int fold_family(struct net_build *b, const struct atom *v, size_t n, int af)
{
	struct compiled *c = b->c;
	uint32_t *rules = NULL, *bounds = NULL;
	size_t rcap = 0, bcap = 0, n_prefixes = 0;
	bool lens[129] = { false }; /* the prefix lengths the family's atoms have */
	int ret = -1;

	for (size_t i = 0; i < n; i++)
		if (v[i].af == af && v[i].plen <= 128)
			lens[v[i].plen] = true;
	for (size_t i = 0; i < n; i++) {
		struct compiled_net_prefix *e;
		size_t nr;
		int r;

		if (v[i].af != af)
			continue;
		if (i && v[i - 1].af == af && v[i - 1].plen == v[i].plen &&
		    !memcmp(v[i - 1].addr, v[i].addr, 16))
			continue; /* same prefix as the previous atom: done */
		if (++n_prefixes > PYSB_NET_MAX_PREFIXES) {
			const struct compiled_net_rule *rr = &c->net_rules[v[i].rule - 1];

			diag_add(b->diag, DIAG_ERROR,
				 (struct diag_at){ rr->implicit ? "(implicit)" : rr->src.file,
						   rr->src.line, 0 },
				 "use wider networks",
				 "net=%s: the policy needs more than %d %s prefixes", rr->text,
				 PYSB_NET_MAX_PREFIXES, af == AF_INET ? "IPv4" : "IPv6");
			goto out;
		}
		if (covering_rules(v, n, i, lens, &rules, &rcap, &nr))
			goto nomem;
		e = grow(c->net_prefixes, &b->cap_prefixes, c->n_net_prefixes, sizeof(*e));
		if (!e)
			goto nomem;
		c->net_prefixes = e;
		e = &c->net_prefixes[c->n_net_prefixes];
		memset(e, 0, sizeof(*e));
		e->af = af;
		e->plen = v[i].plen;
		memcpy(e->addr, v[i].addr, 16);
		r = fill_slots(b, e, rules, nr, &bounds, &bcap);
		if (r == -2)
			goto nomem;
		if (r)
			goto out;
		c->n_net_prefixes++;
	}
	ret = 0;
	goto out;
nomem:
	diag_add(b->diag, DIAG_ERROR, (struct diag_at){ 0 }, NULL,
		 "out of memory compiling the net= rules");
out:
	free(rules);
	free(bounds);
	return ret;
}
