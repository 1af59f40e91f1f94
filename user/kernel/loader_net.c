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

void loader_net_forget(struct loader *l, const struct sandbox_set *set)
{
	loader_forget_keys(l->fd.net4_rules, "net4_rules", sizeof(struct pysb_net4_key),
			   offsetof(struct pysb_net4_key, sandbox), set);
	loader_forget_keys(l->fd.net6_rules, "net6_rules", sizeof(struct pysb_net6_key),
			   offsetof(struct pysb_net6_key, sandbox), set);
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

	/* Whatever a sandbox that had this id before left behind must not apply here. */
	sandbox_set_add(&one, sandbox);
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
			struct pysb_net4_key k = { .prefixlen = 32 + e->plen, .sandbox = sandbox };

			memcpy(k.addr, e->addr, sizeof(k.addr));
			ret = put(l->fd.net4_rules, "net4_rules", &k, &e->value, text);
		} else {
			struct pysb_net6_key k = { .prefixlen = 32 + e->plen, .sandbox = sandbox };

			memcpy(k.addr, e->addr, sizeof(k.addr));
			ret = put(l->fd.net6_rules, "net6_rules", &k, &e->value, text);
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
