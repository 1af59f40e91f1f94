/* SPDX-License-Identifier: MIT */
/* Private to the files of `compile_net` (net_rules.c, net_fold.c, compile_net.c): what they share. */
#ifndef PYSB_NET_INT_H
#define PYSB_NET_INT_H

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

#define DEFAULT_RESOLV_CONF "/etc/resolv.conf"
#define DNS_PORT	    53

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
	struct diag_list *diag; /* compile_opts.diag */
	struct atom *atoms;
	size_t n_atoms, cap_atoms;
	size_t cap_rules, cap_prefixes, cap_ports;
	/* port-set interning: open addressing over indexes in c->net_ports, 0 = empty slot */
	uint32_t *hash;
	size_t hash_size;
};

/* net_rules.c */
void *grow(void *v, size_t *cap, size_t n, size_t size);
void mask_prefix(uint8_t *addr, unsigned bytes, unsigned plen);
int expand_rule(struct net_build *b, const struct compile_opts *o, const struct policy_net *n);
int add_dns_rules(struct net_build *b, const struct compile_opts *o);

/* net_fold.c */
int atom_cmp(const void *x, const void *y);
int fold_family(struct net_build *b, const struct atom *v, size_t n, int af);

#endif
