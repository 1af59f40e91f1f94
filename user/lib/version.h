/* SPDX-License-Identifier: MIT */
/* The release, in one place: `pysb-bpf version`, the daemon's pysb_build_info. */
#ifndef PYSB_VERSION_H
#define PYSB_VERSION_H

#define PYSB_VERSION "0.6.0" /* CHANGELOG.md: the minor grows with each new kind of denial */

#endif /* PYSB_VERSION_H */
