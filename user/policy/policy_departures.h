/* SPDX-License-Identifier: MIT */
/*
 * Where pysb-bpf reads a valid policy line differently from py-sandboxes, on purpose
 * (docs/policy.md, "Differences from py-sandboxes"): `pysb-bpf check` warns about each one,
 * naming the line (user/policy/policy_departures.c).
 */
#ifndef PYSB_POLICY_DEPARTURES_H
#define PYSB_POLICY_DEPARTURES_H

#include <stddef.h>

#include "policy.h"

struct policy_departure {
	struct policy_src src;
	char *msg;
};

/* The departures of p, in line order within each kind; -1 when out of memory. */
int policy_departures(const struct policy *p, struct policy_departure **out, size_t *n);
void policy_departures_free(struct policy_departure *d, size_t n);

#endif /* PYSB_POLICY_DEPARTURES_H */
