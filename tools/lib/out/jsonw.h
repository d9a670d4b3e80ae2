/* SPDX-License-Identifier: GPL-2.0 */
/* Writing JSON: the one string escaper of every JSON output. */
#ifndef HVNOISE_OUT_JSONW_H
#define HVNOISE_OUT_JSONW_H

#include <stdio.h>

/* @s as a JSON string: valid UTF-8 is kept, control characters are
 * escaped, and each byte of an invalid sequence becomes U+FFFD. */
void hvn_json_str(FILE *f, const char *s);

#endif
