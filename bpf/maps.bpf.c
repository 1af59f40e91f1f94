/* SPDX-License-Identifier: GPL-2.0 */
/* Owns the shared map definitions (see maps.bpf.h) and the license of the linked object. */
#define PYSB_MAPS_DEFINE
#include "maps.bpf.h"

char LICENSE[] SEC("license") = "GPL";
