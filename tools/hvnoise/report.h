/* SPDX-License-Identifier: GPL-2.0 */
/* Formatting shared by report and top. */
#ifndef HVNOISE_REPORT_H
#define HVNOISE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hvn_analysis;
struct hvn_episode;

void hvn_fmt_time(const struct hvn_analysis *an, uint64_t mono, char *buf,
		  size_t len, bool date);
void hvn_fmt_episode(const struct hvn_analysis *an, const struct hvn_episode *e,
		     char *buf, size_t len);
const char *hvn_storm_source(unsigned int s);
const char *hvn_ep_kind(unsigned int k);

#endif
