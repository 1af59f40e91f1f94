/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the net= compiler (user/compile/compile_net.c): folding of overlapping prefixes,
 * DENY carve-outs, ports, protocols and directions, IPv4-mapped IPv6, host names (real
 * resolution of localhost, a fake resolver for names that must not resolve, so no test
 * sends a DNS query), the implicit DNS rules, the bpf. parameters, and the errors. The
 * verdicts are read back with lookup(), a user-space copy of the kernel's decision
 * (longest prefix, then the port set), so what is checked is what bpf/net.bpf.c decides.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "compile.h"
#include "policy.h"

static char tmp[] = "/tmp/pysb-test-net-XXXXXX";
static char resolv[sizeof(tmp) + 16];
static char errfile[sizeof(tmp) + 16];
static char *envp[] = { NULL };

/* Names that resolve without the network: "localhost" really (from /etc/hosts), the
 * rest from this table; anything else does not exist. */
static int fake_resolve(const char *name, const struct addrinfo *hints, struct addrinfo **res)
{
	static const struct {
		const char *name, *addr;
	} table[] = {
		{ "two.test", "192.0.2.10" },
		{ "two.test", "2001:db8::10" },
		{ "mapped.test", "::ffff:198.51.100.7" },
	};
	struct addrinfo *head = NULL, **tail = &head;

	if (!strcmp(name, "localhost"))
		return getaddrinfo(name, NULL, hints, res);
	if (!strcmp(name, "flaky.test"))
		return EAI_AGAIN;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct addrinfo *ai;

		if (strcmp(table[i].name, name))
			continue;
		if (getaddrinfo(table[i].addr, NULL,
				&(struct addrinfo){ .ai_flags = AI_NUMERICHOST,
						    .ai_socktype = SOCK_STREAM },
				&ai))
			return EAI_FAIL;
		*tail = ai;
		while (ai->ai_next)
			ai = ai->ai_next;
		tail = &ai->ai_next;
	}
	*res = head;
	return head ? 0 : EAI_NONAME;
}

static int group_setup(void **state)
{
	FILE *f;

	(void)state;
	if (!mkdtemp(tmp))
		return -1;
	snprintf(resolv, sizeof(resolv), "%s/resolv.conf", tmp);
	snprintf(errfile, sizeof(errfile), "%s/stderr", tmp);
	f = fopen(resolv, "w");
	if (!f)
		return -1;
	fputs("# test\nsearch example\nnameserver 192.0.2.53\nnameserver fe80::1%eth0\n"
	      "options ndots:1\n",
	      f);
	fclose(f);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	unlink(resolv);
	unlink(errfile);
	return rmdir(tmp);
}

/* ---------------- helpers */

struct result {
	struct policy *p;
	struct compiled c;
	int ret;
	char err[8192]; /* what the compiler printed on stderr */
};

/* Parses `text` (must be valid) and compiles its net part, capturing stderr: its bpf.*
 * keys as policy_compile reads them (compile_params), then its net= rules. */
static struct result *compile_text(const char *text)
{
	struct result *r = calloc(1, sizeof(*r));
	struct diag_list d = { 0 };
	struct compile_opts o = { .resolv_conf = resolv, .resolve = fake_resolve };
	bool implicit;
	int saved, fd;
	FILE *f;
	size_t n;

	assert_non_null(r);
	if (policy_parse_buffer("net.pysb", text, strlen(text), envp, tmp, &r->p, &d)) {
		diag_print(stderr, &d);
		fail_msg("policy does not parse");
	}
	diag_free(&d);
	fflush(stderr);
	saved = dup(2);
	fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	r->ret = compile_params(r->p, &o, &r->c, &implicit);
	if (!r->ret)
		r->ret = net_compile(r->p, &o, &r->c);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fopen(errfile, "r");
	assert_non_null(f);
	n = fread(r->err, 1, sizeof(r->err) - 1, f);
	r->err[n] = '\0';
	fclose(f);
	return r;
}

static struct result *compile_ok(const char *text)
{
	struct result *r = compile_text(text);

	if (r->ret)
		fail_msg("compile failed: %s", r->err);
	return r;
}

static void done(struct result *r)
{
	net_compiled_free(&r->c);
	policy_free(r->p);
	free(r);
}

/* The kernel's decision, in user space: longest prefix, then the port set's interval. */
static uint16_t lookup(const struct compiled *c, const char *addr, uint16_t port, unsigned slot)
{
	const struct compiled_net_prefix *best = NULL;
	uint8_t a[16] = { 0 };
	int af = strchr(addr, ':') ? AF_INET6 : AF_INET;

	assert_int_equal(inet_pton(af, addr, a), 1);
	for (size_t i = 0; i < c->n_net_prefixes; i++) {
		const struct compiled_net_prefix *e = &c->net_prefixes[i];
		bool match = e->af == af;

		for (unsigned bit = 0; match && bit < e->plen; bit++)
			match = ((a[bit / 8] ^ e->addr[bit / 8]) & (0x80 >> (bit % 8))) == 0;
		if (match && (!best || e->plen > best->plen))
			best = e;
	}
	if (!best)
		return 0;
	const struct pysb_net_ports *ps = &c->net_ports[best->value.ports[slot]];
	uint32_t i = 0;

	assert_true(ps->n >= 1 && ps->n <= PYSB_NET_MAX_RANGES);
	assert_int_equal(ps->r[0].start, 0);
	while (i + 1 < ps->n && ps->r[i + 1].start <= port)
		i++;
	return ps->r[i].verdict;
}

#define ALLOWED PYSB_NET_ALLOW
#define TCP_OUT PYSB_NET_TCP_OUT
#define TCP_IN	PYSB_NET_TCP_IN
#define UDP_OUT PYSB_NET_UDP_OUT
#define UDP_IN	PYSB_NET_UDP_IN

/* ---------------- tests */

static void test_no_rules_denies_everything(void **state)
{
	struct result *r = compile_ok("expose-ro=/\n");

	(void)state;
	assert_int_equal(r->c.n_net_rules, 0);
	assert_int_equal(r->c.n_net_prefixes, 0);
	assert_int_equal(r->c.n_net_ports, 1);
	assert_int_equal(lookup(&r->c, "127.0.0.1", 80, TCP_OUT), 0);
	done(r);
}

static void test_deny_carved_out_of_wider_allow(void **state)
{
	struct result *r = compile_ok("net=ALLOW|tcp|10.0.0.0/8|*|OUT\n"
				      "net=DENY|tcp|10.1.0.0/16|*|OUT\n"
				      "net=ALLOW|tcp|10.1.2.0/24|443|OUT\n");

	(void)state;
	assert_int_equal(r->c.n_net_prefixes, 3);
	assert_int_equal(lookup(&r->c, "10.200.0.1", 443, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "10.200.0.1", 22, TCP_OUT), ALLOWED);
	/* DENY is checked before ALLOW, even when the ALLOW prefix is more specific. */
	assert_int_equal(lookup(&r->c, "10.1.2.3", 443, TCP_OUT), 2);
	assert_int_equal(lookup(&r->c, "10.1.9.9", 80, TCP_OUT), 2);
	/* Outside every rule: denied, no rule named. */
	assert_int_equal(lookup(&r->c, "11.0.0.1", 443, TCP_OUT), 0);
	assert_int_equal(lookup(&r->c, "10.200.0.1", 443, UDP_OUT), 0);
	assert_int_equal(lookup(&r->c, "10.200.0.1", 443, TCP_IN), 0);
	done(r);
}

static void test_folding_reaches_nested_prefixes(void **state)
{
	/* The /32 entry must carry the /8 ALLOW and the /16 DENY of other ports. */
	struct result *r = compile_ok("net=ALLOW|tcp|10.0.0.0/8|80|OUT\n"
				      "net=DENY|tcp|10.1.0.0/16|22|OUT\n"
				      "net=ALLOW|tcp|10.1.2.3|22,8080|OUT\n");

	(void)state;
	assert_int_equal(lookup(&r->c, "10.1.2.3", 80, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "10.1.2.3", 8080, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "10.1.2.3", 22, TCP_OUT), 2);
	assert_int_equal(lookup(&r->c, "10.1.2.4", 8080, TCP_OUT), 0);
	assert_int_equal(lookup(&r->c, "10.1.2.4", 80, TCP_OUT), ALLOWED);
	done(r);
}

static void test_ports_single_list_range_open_star_empty(void **state)
{
	struct result *r = compile_ok("net=ALLOW|tcp|192.0.2.1|22, 80-90 ,8000-|OUT\n"
				      "net=ALLOW|tcp|192.0.2.2|*|OUT\n"
				      "net=ALLOW|tcp|192.0.2.3||OUT\n"
				      "net=ALLOW|udp|192.0.2.4|0|IN\n");

	(void)state;
	assert_int_equal(lookup(&r->c, "192.0.2.1", 21, TCP_OUT), 0);
	assert_int_equal(lookup(&r->c, "192.0.2.1", 22, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "192.0.2.1", 23, TCP_OUT), 0);
	assert_int_equal(lookup(&r->c, "192.0.2.1", 80, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "192.0.2.1", 90, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "192.0.2.1", 91, TCP_OUT), 0);
	assert_int_equal(lookup(&r->c, "192.0.2.1", 7999, TCP_OUT), 0);
	assert_int_equal(lookup(&r->c, "192.0.2.1", 8000, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "192.0.2.1", 65535, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "192.0.2.2", 0, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "192.0.2.2", 65535, TCP_OUT), ALLOWED);
	/* An empty PORTS field allows no port. */
	for (unsigned p = 0; p < 65536; p += 4369)
		assert_int_equal(lookup(&r->c, "192.0.2.3", (uint16_t)p, TCP_OUT), 0);
	/* Port 0 IN: an ephemeral bind, and nothing else. */
	assert_int_equal(lookup(&r->c, "192.0.2.4", 0, UDP_IN), ALLOWED);
	assert_int_equal(lookup(&r->c, "192.0.2.4", 1, UDP_IN), 0);
	done(r);
}

static void test_deny_port_carved_out_of_allow_all(void **state)
{
	struct result *r = compile_ok("net=ALLOW|any|*|*|*\n"
				      "net=DENY|tcp|*|25|OUT\n");

	(void)state;
	assert_int_equal(lookup(&r->c, "203.0.113.9", 25, TCP_OUT), 2);
	assert_int_equal(lookup(&r->c, "2001:db8::1", 25, TCP_OUT), 2);
	assert_int_equal(lookup(&r->c, "203.0.113.9", 24, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "203.0.113.9", 26, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "203.0.113.9", 25, UDP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "203.0.113.9", 25, TCP_IN), ALLOWED);
	done(r);
}

static void test_protocols_and_directions(void **state)
{
	struct result *r = compile_ok("net=ALLOW|udp|192.0.2.0/24|53|OUT\n"
				      "net=ALLOW|TCP,udp|198.51.100.0/24|8080|IN,OUT\n"
				      "net=ALLOW|tcp|0.0.0.0|9000|IN\n");

	(void)state;
	assert_int_equal(lookup(&r->c, "192.0.2.1", 53, UDP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "192.0.2.1", 53, TCP_OUT), 0);
	assert_int_equal(lookup(&r->c, "192.0.2.1", 53, UDP_IN), 0);
	for (unsigned s = 0; s < PYSB_NET_SLOTS; s++)
		assert_int_equal(lookup(&r->c, "198.51.100.1", 8080, s), ALLOWED);
	assert_int_equal(lookup(&r->c, "0.0.0.0", 9000, TCP_IN), ALLOWED);
	assert_int_equal(lookup(&r->c, "0.0.0.0", 9001, TCP_IN), 0);
	done(r);
}

static void test_ipv6_and_ipv4_mapped(void **state)
{
	struct result *r = compile_ok("net=ALLOW|tcp|2001:db8::/32|443|OUT\n"
				      "net=ALLOW|tcp|::ffff:10.0.0.0/104|80|OUT\n"
				      "net=ALLOW|tcp|::ffff:192.0.2.7|81|OUT\n"
				      "net=DENY|tcp|2001:db8:1::/48|*|OUT\n");
	bool v4_8 = false, v4_32 = false;

	(void)state;
	for (size_t i = 0; i < r->c.n_net_prefixes; i++) {
		const struct compiled_net_prefix *e = &r->c.net_prefixes[i];

		v4_8 |= e->af == AF_INET && e->plen == 8 && e->addr[0] == 10;
		v4_32 |= e->af == AF_INET && e->plen == 32 && e->addr[0] == 192 && e->addr[3] == 7;
	}
	/* Mapped prefixes become IPv4 prefixes: the kernel judges mapped addresses as IPv4. */
	assert_true(v4_8);
	assert_true(v4_32);
	assert_int_equal(lookup(&r->c, "10.9.9.9", 80, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "192.0.2.7", 81, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "2001:db8:2::1", 443, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "2001:db8:1::1", 443, TCP_OUT), 4);
	assert_int_equal(lookup(&r->c, "2001:db9::1", 443, TCP_OUT), 0);
	done(r);
}

static void test_cidr_host_bits_and_netmasks(void **state)
{
	struct result *r = compile_ok("net=ALLOW|tcp|10.1.2.3/8|1|OUT\n"
				      "net=ALLOW|tcp|172.16.0.0/255.240.0.0|2|OUT\n"
				      "net=ALLOW|tcp|192.168.0.0/0.0.255.255|3|OUT\n");

	(void)state;
	assert_int_equal(lookup(&r->c, "10.250.0.1", 1, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "172.31.255.1", 2, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "172.32.0.1", 2, TCP_OUT), 0);
	assert_int_equal(lookup(&r->c, "192.168.44.1", 3, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "192.169.0.1", 3, TCP_OUT), 0);
	done(r);
}

static void test_localhost_resolves_and_adds_dns(void **state)
{
	struct result *r = compile_ok("net=ALLOW|tcp|localhost|8080|OUT\n");
	bool dns = false;

	(void)state;
	assert_true(r->c.net_rules[0].host);
	assert_true(r->c.net_rules[0].n_addrs >= 1);
	assert_int_equal(lookup(&r->c, "127.0.0.1", 8080, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "127.0.0.1", 8081, TCP_OUT), 0);
	/* The policy names a host: the resolvers of resolv.conf are reachable on port 53. */
	for (size_t i = 0; i < r->c.n_net_rules; i++)
		dns |= r->c.net_rules[i].implicit;
	assert_true(dns);
	assert_int_equal(lookup(&r->c, "192.0.2.53", 53, UDP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "192.0.2.53", 53, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "fe80::1", 53, UDP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "192.0.2.53", 54, UDP_OUT), 0);
	assert_int_equal(lookup(&r->c, "192.0.2.53", 53, UDP_IN), 0);
	done(r);
}

/* guard_socket / FORMAT-NOTES 2.3: py-sandboxes' learning writes ip6-localhost for a
 * loopback bind; it and ip6-loopback are ::1 even where /etc/hosts (here: the fake
 * resolver, which knows neither) lacks them. */
static void test_ip6_localhost_names(void **state)
{
	struct result *r = compile_ok("net=ALLOW|TCP|ip6-localhost|0|IN\n"
				      "net=ALLOW|tcp|IP6-LOOPBACK|8080|OUT\n");

	(void)state;
	assert_false(r->c.net_rules[0].dropped);
	assert_false(r->c.net_rules[1].dropped);
	assert_int_equal(r->c.net_rules[0].n_addrs, 1);
	assert_int_equal(lookup(&r->c, "::1", 0, TCP_IN), ALLOWED);
	assert_int_equal(lookup(&r->c, "::1", 8080, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "::1", 8081, TCP_OUT), 0);
	done(r);
}

static void test_no_dns_without_host_names(void **state)
{
	struct result *r = compile_ok("net=ALLOW|tcp|127.0.0.1|8080|OUT\n"
				      "net=DENY|tcp|two.test|*|OUT\n");

	(void)state;
	for (size_t i = 0; i < r->c.n_net_rules; i++)
		assert_false(r->c.net_rules[i].implicit);
	assert_int_equal(lookup(&r->c, "192.0.2.53", 53, UDP_OUT), 0);
	done(r);
}

static void test_deny_wins_over_dns(void **state)
{
	struct result *r = compile_ok("net=ALLOW|any|two.test|443|OUT\n"
				      "net=DENY|any|192.0.2.53|*|*\n");

	(void)state;
	assert_int_equal(lookup(&r->c, "192.0.2.10", 443, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "2001:db8::10", 443, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "192.0.2.53", 53, UDP_OUT), 2);
	done(r);
}

static void test_mapped_answer_is_ipv4(void **state)
{
	struct result *r = compile_ok("net=ALLOW|tcp|mapped.test|443|OUT\n");

	(void)state;
	assert_int_equal(lookup(&r->c, "198.51.100.7", 443, TCP_OUT), ALLOWED);
	done(r);
}

static void test_unresolvable_allow_dropped_with_warning(void **state)
{
	struct result *r = compile_ok("net=ALLOW|tcp|127.0.0.1|1|OUT\n"
				      "net=ALLOW|tcp|nothing.test|443|OUT\n");

	(void)state;
	assert_true(r->c.net_rules[1].dropped);
	assert_non_null(strstr(r->err, "net.pysb:2:"));
	assert_non_null(strstr(r->err, "warning"));
	assert_non_null(strstr(r->err, "nothing.test"));
	/* Nothing resolved, so no DNS either. */
	assert_int_equal(lookup(&r->c, "192.0.2.53", 53, UDP_OUT), 0);
	done(r);
}

static void test_unresolvable_deny_is_an_error(void **state)
{
	struct result *r = compile_text("net=ALLOW|tcp|*|*|OUT\n"
					"\n"
					"net=DENY|tcp|nothing.test|*|OUT\n");

	(void)state;
	assert_int_equal(r->ret, -1);
	assert_non_null(strstr(r->err, "net.pysb:3:"));
	assert_non_null(strstr(r->err, "nothing.test"));
	done(r);
	/* A name that keeps failing transiently is retried, then refused the same way. */
	r = compile_text("net=DENY|tcp|flaky.test|*|OUT\n");
	assert_int_equal(r->ret, -1);
	assert_non_null(strstr(r->err, "net.pysb:1:"));
	done(r);
}

static void test_too_many_port_ranges_names_lines(void **state)
{
	char text[16384];
	size_t off = 0;

	(void)state;
	off += snprintf(text + off, sizeof(text) - off, "net=ALLOW|tcp|10.0.0.0/8|");
	for (unsigned p = 1000; p < 1000 + 2 * PYSB_NET_MAX_RANGES; p += 2)
		off += snprintf(text + off, sizeof(text) - off, "%s%u", p > 1000 ? "," : "", p);
	snprintf(text + off, sizeof(text) - off, "|OUT\n");

	struct result *r = compile_text(text);

	assert_int_equal(r->ret, -1);
	assert_non_null(strstr(r->err, "net.pysb:1"));
	assert_non_null(strstr(r->err, "10.0.0.0/8"));
	assert_non_null(strstr(r->err, "tcp OUT"));
	done(r);

	/* At the bound it fits: 31 single ports are 63 intervals. */
	off = snprintf(text, sizeof(text), "net=ALLOW|tcp|10.0.0.0/8|");
	for (unsigned p = 1000; p < 1000 + 2 * 31; p += 2)
		off += snprintf(text + off, sizeof(text) - off, "%s%u", p > 1000 ? "," : "", p);
	snprintf(text + off, sizeof(text) - off, "|OUT\n");
	r = compile_ok(text);
	assert_int_equal(lookup(&r->c, "10.0.0.1", 1060, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "10.0.0.1", 1061, TCP_OUT), 0);
	done(r);
}

/* A policy of host rules gets their hash (PYSB_SB_NET_HOSTS) from PYSB_NET_HOSTS_MIN
 * hosts on, and only hosts count: a /31 or an IPv6 /127 is not one. The flag and the
 * loader's filling both ask net_hosts_indexed(). */
static void test_many_host_rules_are_indexed_by_address(void **state)
{
	char text[4096];
	size_t off = 0;

	(void)state;
	off += snprintf(text + off, sizeof(text) - off,
			"net=ALLOW|tcp|10.9.0.0/31|443|OUT\n"
			"net=ALLOW|tcp|fd00::/127|443|OUT\n");
	for (unsigned i = 0; i < PYSB_NET_HOSTS_MIN - 1; i++)
		off += snprintf(text + off, sizeof(text) - off,
				i % 2 ? "net=ALLOW|tcp|10.1.0.%u|443|OUT\n"
				      : "net=DENY|udp|fd00::1:%u|53|OUT\n",
				i + 1);
	struct result *r = compile_ok(text);

	assert_false(net_hosts_indexed(&r->c));
	assert_int_equal(sandbox_flags(&r->c, false) & PYSB_SB_NET_HOSTS, 0);
	for (size_t i = 0; i < r->c.n_net_prefixes; i++) {
		const struct compiled_net_prefix *e = &r->c.net_prefixes[i];

		assert_int_equal(net_prefix_is_host(e), e->plen == (e->af == AF_INET ? 32 : 128));
	}
	done(r);
	snprintf(text + off, sizeof(text) - off, "net=ALLOW|tcp|::ffff:10.2.0.1|443|OUT\n");
	r = compile_ok(text);
	assert_true(net_hosts_indexed(&r->c));
	assert_int_equal(sandbox_flags(&r->c, false) & PYSB_SB_NET_HOSTS, PYSB_SB_NET_HOSTS);
	done(r);
}

static void test_thousand_rules_share_port_sets(void **state)
{
	size_t len = 1000 * 48 + 64, off = 0;
	char *text = malloc(len);

	(void)state;
	assert_non_null(text);
	for (unsigned i = 0; i < 1000; i++)
		off += snprintf(text + off, len - off, "net=ALLOW|tcp|10.%u.%u.1|443|OUT\n",
				i / 250, i % 250);
	struct result *r = compile_ok(text);

	free(text);
	assert_int_equal(r->c.n_net_prefixes, 1000);
	assert_true(r->c.n_net_ports <= 3);
	assert_int_equal(lookup(&r->c, "10.3.249.1", 443, TCP_OUT), ALLOWED);
	assert_int_equal(lookup(&r->c, "10.3.249.2", 443, TCP_OUT), 0);
	done(r);
}

static void test_too_many_prefixes_is_an_error(void **state)
{
	size_t n = PYSB_NET_MAX_PREFIXES + 1, len = n * 40 + 64, off = 0;
	char *text = malloc(len);

	(void)state;
	assert_non_null(text);
	for (size_t i = 0; i < n; i++)
		off += snprintf(text + off, len - off, "net=ALLOW|tcp|10.%zu.%zu.1|1|OUT\n",
				i / 256, i % 256);
	struct result *r = compile_text(text);

	free(text);
	assert_int_equal(r->ret, -1);
	assert_non_null(strstr(r->err, "more than 16384 IPv4 prefixes"));
	done(r);
}

static void test_socket_family_and_unix_abstract_params(void **state)
{
	struct result *r = compile_ok("bpf.socket-family=netlink, packet\n"
				      "bpf.socket-family=40,raw,icmp\n"
				      "bpf.unix-abstract=allow\n");

	(void)state;
	assert_true(r->c.net_cfg.families & (1ull << 16));
	assert_true(r->c.net_cfg.families & (1ull << 17));
	assert_true(r->c.net_cfg.families & (1ull << 40));
	assert_false(r->c.net_cfg.families & (1ull << 31));
	assert_true(r->c.net_cfg.flags & PYSB_NET_INET_RAW);
	assert_true(r->c.net_cfg.flags & PYSB_NET_ICMP);
	assert_false(r->c.net_cfg.flags & PYSB_NET_SCTP);
	assert_true(r->c.net_cfg.flags & PYSB_NET_UNIX_ABSTRACT);
	done(r);

	r = compile_ok("bpf.unix-abstract=allow\nbpf.unix-abstract=deny\n");
	assert_int_equal(r->c.net_cfg.flags, 0);
	assert_int_equal(r->c.net_cfg.families, 0);
	done(r);
}

/* Multicast joins (PYSB_SB_MCAST4/6): a UDP IN rule allowing a port on an address of
 * 224.0.0.0/4 or ff00::/8, found by the longest match, DENY rules weighed. */
static void test_multicast_needs_udp_in_on_a_group(void **state)
{
	static const struct {
		const char *text;
		bool v4, v6;
	} cases[] = {
		{ "expose-ro=/\n", false, false },
		{ "net=ALLOW|udp|239.83.69.67|5000|IN\n", true, false },
		{ "net=ALLOW|udp|ff0e::1|*|IN\n", false, true },
		{ "net=ALLOW|udp|*|*|IN\n", true, true },
		{ "net=ALLOW|any|0.0.0.0/1|*|*\n", false, false },     /* no group there */
		{ "net=ALLOW|udp|224.0.0.0/3|*|IN\n", true, false },   /* wider, holds them */
		{ "net=ALLOW|udp|239.0.0.0/8|*|OUT\n", false, false }, /* OUT only */
		{ "net=ALLOW|tcp|239.0.0.0/8|*|IN\n", false, false },  /* TCP only */
		{ "net=ALLOW|udp|239.0.0.0/8||IN\n", false, false },   /* no port */
		{ "net=ALLOW|udp|0.0.0.0|5353|IN\nnet=ALLOW|udp|fe80::/10|*|IN\n", false, false },
		/* a DENY covering every group, a wider ALLOW: none */
		{ "net=ALLOW|udp|*|*|IN\nnet=DENY|udp|224.0.0.0/4|*|IN\n"
		  "net=DENY|udp|ff00::/8|*|IN\n",
		  false, false },
		/* a DENY on part of them: the rest may */
		{ "net=ALLOW|udp|*|*|IN\nnet=DENY|udp|224.0.0.0/5|*|IN\n", true, true },
		/* a DENY of some ports only: the others allow */
		{ "net=ALLOW|udp|224.0.0.0/4|*|IN\nnet=DENY|udp|*|1-100|IN\n", true, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct result *r = compile_ok(cases[i].text);
		uint32_t f = sandbox_flags(&r->c, false);

		if (!!(f & PYSB_SB_MCAST4) != cases[i].v4 || !!(f & PYSB_SB_MCAST6) != cases[i].v6)
			fail_msg("%s: flags %#x", cases[i].text, f);
		done(r);
	}
}

static void test_param_errors_name_the_line(void **state)
{
	static const struct {
		const char *text, *where, *what;
	} cases[] = {
		{ "\nbpf.socket-family=netlink,bogus\n", "net.pysb:2:", "bogus" },
		{ "bpf.socket-family=inet\n", "net.pysb:1:", "net= rules" },
		{ "bpf.socket-family=1\n", "net.pysb:1:", "unknown socket family" },
		{ "bpf.socket-family=64\n", "net.pysb:1:", "unknown socket family" },
		{ "bpf.socket-family=netlink,,packet\n", "net.pysb:1:", "empty family" },
		{ "bpf.unix-abstract=yes\n", "net.pysb:1:", "expected allow or deny" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct result *r = compile_text(cases[i].text);

		if (r->ret != -1 || !strstr(r->err, cases[i].where) ||
		    !strstr(r->err, cases[i].what))
			fail_msg("case %zu (%s): ret %d, stderr: %s", i, cases[i].text, r->ret,
				 r->err);
		done(r);
	}
}

static void test_rule_text_and_attribution(void **state)
{
	struct result *r = compile_ok("net=ALLOW|*|*|*|*\n"
				      "net=DENY|tcp|10.0.0.0/8|22,8000-|OUT\n");
	const struct compiled_net_rule *rule;

	(void)state;
	rule = net_rule_at(&r->c, lookup(&r->c, "10.0.0.1", 22, TCP_OUT));
	assert_non_null(rule);
	assert_string_equal(rule->text, "DENY|tcp|10.0.0.0/8|22,8000-|OUT");
	assert_int_equal(rule->src.line, 2);
	assert_null(net_rule_at(&r->c, PYSB_NET_ALLOW));
	assert_null(net_rule_at(&r->c, 0));
	done(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_rules_denies_everything),
		cmocka_unit_test(test_multicast_needs_udp_in_on_a_group),
		cmocka_unit_test(test_deny_carved_out_of_wider_allow),
		cmocka_unit_test(test_folding_reaches_nested_prefixes),
		cmocka_unit_test(test_ports_single_list_range_open_star_empty),
		cmocka_unit_test(test_deny_port_carved_out_of_allow_all),
		cmocka_unit_test(test_protocols_and_directions),
		cmocka_unit_test(test_ipv6_and_ipv4_mapped),
		cmocka_unit_test(test_cidr_host_bits_and_netmasks),
		cmocka_unit_test(test_localhost_resolves_and_adds_dns),
		cmocka_unit_test(test_ip6_localhost_names),
		cmocka_unit_test(test_no_dns_without_host_names),
		cmocka_unit_test(test_deny_wins_over_dns),
		cmocka_unit_test(test_mapped_answer_is_ipv4),
		cmocka_unit_test(test_unresolvable_allow_dropped_with_warning),
		cmocka_unit_test(test_unresolvable_deny_is_an_error),
		cmocka_unit_test(test_too_many_port_ranges_names_lines),
		cmocka_unit_test(test_thousand_rules_share_port_sets),
		cmocka_unit_test(test_many_host_rules_are_indexed_by_address),
		cmocka_unit_test(test_too_many_prefixes_is_an_error),
		cmocka_unit_test(test_socket_family_and_unix_abstract_params),
		cmocka_unit_test(test_param_errors_name_the_line),
		cmocka_unit_test(test_rule_text_and_attribution),
	};

	return cmocka_run_group_tests_name("compile_net", tests, group_setup, group_teardown);
}
