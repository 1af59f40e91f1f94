/* SPDX-License-Identifier: MIT */
/* PYSB_BPF_TIMING=1: one stderr line per step of a start, in ms since the first step. */
#ifndef PYSB_STOPWATCH_H
#define PYSB_STOPWATCH_H

/* One clock for the whole process: the first call starts it. */
void stopwatch(const char *step);

#endif /* PYSB_STOPWATCH_H */
