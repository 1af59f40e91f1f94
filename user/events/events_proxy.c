/* SPDX-License-Identifier: MIT */
/*
 * The proxies the policy passes the program (env=HTTPS_PROXY=..., HTTP_PROXY, ALL_PROXY,
 * in either case): a program that uses one connects to the proxy, not to the hosts it
 * asks for, so a net= rule on those hosts never applies and the connect's deny line named
 * no rule a user would think of (found by a user, round 32). Resolved once, before the
 * program starts; the line then names the variable and the rule, and says what allowing
 * it gives away: the proxy, not net=, decides which hosts the program reaches.
 */
#include <netdb.h>

#include "events_int.h"

#define MAX_PROXIES 6
#define MAX_ADDRS   4

struct proxy {
	char var[16];
	char host[256];
	unsigned port;
	int n_addrs;
	struct {
		int af;
		uint8_t a[16];
	} addrs[MAX_ADDRS];
};

static struct proxy proxies[MAX_PROXIES];
static size_t n_proxies;

/* host and port of a proxy URL, [SCHEME://][USER[:PASSWORD]@]HOST[:PORT][/...]; the port
 * the scheme implies when none is written (http 80, https 443, socks 1080). 0, or -1. */
static int proxy_host_port(const char *v, char *host, size_t hlen, unsigned *port)
{
	const char *sep = strstr(v, "://"), *h = sep ? sep + 3 : v, *end, *at, *hend, *colon;
	size_t n;

	*port = !sep || !strncmp(v, "http://", 7) ? 80
		: !strncmp(v, "https://", 8)	  ? 443
		: !strncmp(v, "socks", 5)	  ? 1080
						  : 0;
	end = h + strcspn(h, "/?#");
	for (at = end; at > h && at[-1] != '@'; at--)
		;
	h = at > h ? at : h;
	if (*h == '[') {
		hend = memchr(h, ']', (size_t)(end - h));
		if (!hend)
			return -1;
		h++;
		colon = hend[1] == ':' ? hend + 1 : NULL;
	} else {
		colon = memchr(h, ':', (size_t)(end - h));
		hend = colon ? colon : end;
	}
	n = (size_t)(hend - h);
	if (!n || n >= hlen)
		return -1;
	memcpy(host, h, n);
	host[n] = '\0';
	if (colon && colon + 1 < end) {
		char *e;
		unsigned long p = strtoul(colon + 1, &e, 10);

		if (e != end || !p || p > 65535)
			return -1;
		*port = (unsigned)p;
	}
	return *port ? 0 : -1;
}

static void add_proxy(const char *var, const char *value)
{
	struct proxy *p = &proxies[n_proxies];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;

	if (n_proxies == MAX_PROXIES || proxy_host_port(value, p->host, sizeof(p->host), &p->port))
		return;
	snprintf(p->var, sizeof(p->var), "%s", var);
	p->n_addrs = 0;
	if (getaddrinfo(p->host, NULL, &hints, &res))
		return;
	for (struct addrinfo *a = res; a && p->n_addrs < MAX_ADDRS; a = a->ai_next) {
		int i = p->n_addrs;

		p->addrs[i].af = a->ai_family;
		if (a->ai_family == AF_INET)
			memcpy(p->addrs[i].a, &((struct sockaddr_in *)a->ai_addr)->sin_addr, 4);
		else if (a->ai_family == AF_INET6)
			memcpy(p->addrs[i].a, &((struct sockaddr_in6 *)a->ai_addr)->sin6_addr, 16);
		else
			continue;
		p->n_addrs++;
	}
	freeaddrinfo(res);
	if (p->n_addrs)
		n_proxies++;
}

void events_set_proxies(char *const *envp)
{
	static const char *const vars[] = { "https_proxy", "HTTPS_PROXY", "http_proxy",
					    "HTTP_PROXY",  "all_proxy",	  "ALL_PROXY" };

	n_proxies = 0;
	for (size_t k = 0; k < sizeof(vars) / sizeof(vars[0]); k++) {
		size_t l = strlen(vars[k]);

		for (size_t i = 0; envp && envp[i]; i++)
			if (!strncmp(envp[i], vars[k], l) && envp[i][l] == '=' && envp[i][l + 1])
				add_proxy(vars[k], envp[i] + l + 1);
	}
}

/* Is the event's address (an IPv4-mapped one as IPv4) a of family af? */
static bool same_address(const struct pysb_net_event *n, int af, const uint8_t *a)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (n->family == AF_INET6 && af == AF_INET && !memcmp(n->addr, mapped, 12))
		return !memcmp(n->addr + 12, a, 4);
	if (n->family != af)
		return false;
	return !memcmp(n->addr, a, af == AF_INET ? 4 : 16);
}

void events_print_proxy_hint(FILE *f, const struct pysb_event *e)
{
	const struct pysb_net_event *n = &e->net;

	if (e->op != PYSB_OP_CONNECT || n->dir != PYSB_NET_OUT || n->protocol != IPPROTO_TCP)
		return;
	for (size_t i = 0; i < n_proxies; i++) {
		const struct proxy *p = &proxies[i];

		if (p->port != n->port)
			continue;
		for (int k = 0; k < p->n_addrs; k++) {
			if (!same_address(n, p->addrs[k].af, p->addrs[k].a))
				continue;
			fprintf(f,
				" (the proxy of %s, which the policy passes: a program that uses it "
				"connects there, not to the hosts it asks for, which net= rules on "
				"them do not allow; net=ALLOW|TCP|%s|%u|OUT allows it, and the proxy "
				"then decides which hosts the program reaches; without that env= line "
				"the program connects to them itself, as net= judges)",
				p->var, p->host, p->port);
			return;
		}
	}
}
