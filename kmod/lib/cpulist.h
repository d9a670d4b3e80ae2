/* SPDX-License-Identifier: GPL-2.0 */
/* cpulist strings ("0-3,8,16-31:2/4", "none") to and from CPU bitmaps. */
#ifndef HVN_CPULIST_H
#define HVN_CPULIST_H

#include "hvn_types.h"

/*
 * Parse @s into @map (@nbits bits, cleared first).  "none" gives an empty
 * map; an empty string is an error.  One trailing newline is ignored, as
 * sysfs writes carry one.  On error returns -EINVAL and leaves a one-line
 * reason naming the offending item in @err.
 */
int hvn_cpulist_parse(const char *s, unsigned long *map, unsigned int nbits,
		      char *err, size_t errlen);

/*
 * Write @map as a cpulist ("none" when empty) into @buf.  Returns the
 * length written, or -ENOSPC (with @buf truncated) when it does not fit.
 */
int hvn_cpulist_format(char *buf, size_t len, const unsigned long *map,
		       unsigned int nbits);

#endif /* HVN_CPULIST_H */
