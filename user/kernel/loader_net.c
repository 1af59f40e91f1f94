/* SPDX-License-Identifier: MIT */
/*
 * Fills the network maps (bpf/maps.bpf.h) of one sandbox from a compiled policy, and
 * removes them. Every key carries the sandbox id, so sandboxes sharing the loaded object
 * never see each other's rules.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <bpf/libbpf.h>

#include "compile.h"
#include "loader.h"
#include "log.h"
#include <bpf/bpf.h>

static int put(int map, const char *name, const void *key, const void *val, const char *what)
{
	if (!bpf_map_update_elem(map, key, val, BPF_NOEXIST))
		return 0;
	pr_err("cannot add %s to the BPF map %s: %s%s", what, name, strerror(errno),
	       errno == E2BIG || errno == ENOMEM ? " (the map is full: too many sandboxes with "
						   "large net= policies at once)"
						 : "");
	return -1;
}

static struct pysb_net4_key net4_key(const struct compiled_net_prefix *e, uint32_t sandbox)
{
	struct pysb_net4_key k = { .prefixlen = 32 + e->plen, .sandbox = sandbox };

	memcpy(k.addr, e->addr, sizeof(k.addr));
	return k;
}

static struct pysb_net6_key net6_key(const struct compiled_net_prefix *e, uint32_t sandbox)
{
	struct pysb_net6_key k = { .prefixlen = 32 + e->plen, .sandbox = sandbox };

	memcpy(k.addr, e->addr, sizeof(k.addr));
	return k;
}

static struct pysb_net4_host_key net4_host_key(const struct compiled_net_prefix *e,
					       uint32_t sandbox)
{
	struct pysb_net4_host_key k = { .sandbox = sandbox };

	memcpy(k.addr, e->addr, sizeof(k.addr));
	return k;
}

static struct pysb_net6_host_key net6_host_key(const struct compiled_net_prefix *e,
					       uint32_t sandbox)
{
	struct pysb_net6_host_key k = { .sandbox = sandbox };

	memcpy(k.addr, e->addr, sizeof(k.addr));
	return k;
}

void loader_net_forget(struct loader *l, const struct sandbox_set *set)
{
	loader_forget_keys(l->fd.net4_rules, "net4_rules", sizeof(struct pysb_net4_key),
			   offsetof(struct pysb_net4_key, sandbox), set);
	loader_forget_keys(l->fd.net6_rules, "net6_rules", sizeof(struct pysb_net6_key),
			   offsetof(struct pysb_net6_key, sandbox), set);
	loader_forget_keys(l->fd.net4_hosts, "net4_hosts", sizeof(struct pysb_net4_host_key),
			   offsetof(struct pysb_net4_host_key, sandbox), set);
	loader_forget_keys(l->fd.net6_hosts, "net6_hosts", sizeof(struct pysb_net6_host_key),
			   offsetof(struct pysb_net6_host_key, sandbox), set);
	loader_forget_keys(l->fd.net_ports, "net_ports", sizeof(struct pysb_net_ports_key),
			   offsetof(struct pysb_net_ports_key, sandbox), set);
	for (uint32_t id = 0; id < PYSB_MAX_SANDBOXES; id++)
		if (sandbox_set_has(set, id))
			bpf_map_delete_elem(l->fd.net_cfg, &id);
}

int loader_net_fill(struct loader *l, const struct compiled *c, uint32_t sandbox)
{
	char text[INET6_ADDRSTRLEN + 8];
	struct sandbox_set one = { 0 };
	bool hosts = net_hosts_indexed(c); /* as sandbox_flags() says to the programs */

	/* Whatever a sandbox that had this id before left behind must not apply here (a
	 * fresh id has nothing: the insertions below would fail on a leftover key). */
	sandbox_set_add(&one, sandbox);
	if (!(l->id_clean && l->sandbox_id == sandbox))
		loader_net_forget(l, &one);
	for (uint32_t i = 0; i < c->n_net_ports; i++) {
		struct pysb_net_ports_key k = { .sandbox = sandbox, .id = i };

		if (put(l->fd.net_ports, "net_ports", &k, &c->net_ports[i], "a port set"))
			return -1;
	}
	for (size_t i = 0; i < c->n_net_prefixes; i++) {
		const struct compiled_net_prefix *e = &c->net_prefixes[i];
		char addr[INET6_ADDRSTRLEN];
		int ret;

		inet_ntop(e->af, e->addr, addr, sizeof(addr));
		snprintf(text, sizeof(text), "%s/%u", addr, e->plen);
		if (e->af == AF_INET) {
			struct pysb_net4_key k = net4_key(e, sandbox);

			struct pysb_net4_host_key h = net4_host_key(e, sandbox);

			ret = put(l->fd.net4_rules, "net4_rules", &k, &e->value, text);
			if (!ret && hosts && net_prefix_is_host(e))
				ret = put(l->fd.net4_hosts, "net4_hosts", &h, &e->value, text);
		} else {
			struct pysb_net6_key k = net6_key(e, sandbox);
			struct pysb_net6_host_key h = net6_host_key(e, sandbox);

			ret = put(l->fd.net6_rules, "net6_rules", &k, &e->value, text);
			if (!ret && hosts && net_prefix_is_host(e))
				ret = put(l->fd.net6_hosts, "net6_hosts", &h, &e->value, text);
		}
		if (ret)
			return -1;
		pr_debug("map net%d_rules: %s -> port sets tcp-out %u tcp-in %u udp-out %u "
			 "udp-in %u",
			 e->af == AF_INET ? 4 : 6, text, e->value.ports[PYSB_NET_TCP_OUT],
			 e->value.ports[PYSB_NET_TCP_IN], e->value.ports[PYSB_NET_UDP_OUT],
			 e->value.ports[PYSB_NET_UDP_IN]);
	}
	if (put(l->fd.net_cfg, "net_cfg", &sandbox, &c->net_cfg, "the socket settings"))
		return -1;
	pr_info("%zu net rules -> %zu prefixes, %zu port sets", c->n_net_rules, c->n_net_prefixes,
		c->n_net_ports);
	return 0;
}

int loader_net_clear(struct loader *l, const struct compiled *c, uint32_t sandbox)
{
	size_t n = c->n_net_ports > c->n_net_prefixes ? c->n_net_ports : c->n_net_prefixes;
	struct pysb_net_ports_key *pk = calloc(n + 1, sizeof(*pk));
	struct pysb_net4_key *k4 = calloc(n + 1, sizeof(*k4));
	struct pysb_net6_key *k6 = calloc(n + 1, sizeof(*k6));
	struct pysb_net4_host_key *h4 = calloc(n + 1, sizeof(*h4));
	struct pysb_net6_host_key *h6 = calloc(n + 1, sizeof(*h6));
	bool hosts = net_hosts_indexed(c);
	uint32_t n4 = 0, n6 = 0, nh4 = 0, nh6 = 0;
	int err = -ENOMEM;

	if (pk && k4 && k6 && h4 && h6) {
		for (size_t i = 0; i < c->n_net_ports; i++)
			pk[i] = (struct pysb_net_ports_key){ .sandbox = sandbox,
							     .id = (uint32_t)i };
		for (size_t i = 0; i < c->n_net_prefixes; i++) {
			const struct compiled_net_prefix *e = &c->net_prefixes[i];

			if (e->af == AF_INET)
				k4[n4++] = net4_key(e, sandbox);
			else
				k6[n6++] = net6_key(e, sandbox);
			if (!hosts || !net_prefix_is_host(e))
				continue;
			if (e->af == AF_INET)
				h4[nh4++] = net4_host_key(e, sandbox);
			else
				h6[nh6++] = net6_host_key(e, sandbox);
		}
		err = loader_delete_keys(l->fd.net_ports, pk, sizeof(*pk),
					 (uint32_t)c->n_net_ports);
		if (!err)
			err = loader_delete_keys(l->fd.net4_rules, k4, sizeof(*k4), n4);
		if (!err)
			err = loader_delete_keys(l->fd.net6_rules, k6, sizeof(*k6), n6);
		if (!err)
			err = loader_delete_keys(l->fd.net4_hosts, h4, sizeof(*h4), nh4);
		if (!err)
			err = loader_delete_keys(l->fd.net6_hosts, h6, sizeof(*h6), nh6);
	}
	free(pk);
	free(h4);
	free(h6);
	free(k4);
	free(k6);
	return err;
}
