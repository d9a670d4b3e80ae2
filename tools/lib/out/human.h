/* SPDX-License-Identifier: GPL-2.0 */
/* Text for people: episodes and the names of the events' enums. */
#ifndef HVNOISE_OUT_HUMAN_H
#define HVNOISE_OUT_HUMAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hvn_analysis;
struct hvn_episode;

/* hvn_fmt_time(): analysis/episodes.h, with the clock it reads. */
/* One line describing @e. */
void hvn_fmt_episode(const struct hvn_analysis *an, const struct hvn_episode *e,
		     char *buf, size_t len);

/* Names of the event fields' codes (include/hvnoise/events.h); "?" if
 * unknown. */
const char *hvn_steal_source(unsigned int s);
const char *hvn_storm_source(unsigned int s);
const char *hvn_mig_how(unsigned int how);
const char *hvn_ep_kind(unsigned int k);
const char *hvn_watch_kind(unsigned int k);

#endif
