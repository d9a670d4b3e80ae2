// SPDX-License-Identifier: GPL-2.0
/* Interrupt storm windows; see storm.h. */
#include "storm.h"

#define NSEC_PER_SEC_ULL	1000000000ULL

HVN_LIB u32 hvn_storm_threshold(u64 rate_per_s, u64 window_ns)
{
	/* ceil(rate * window / 1 s) without overflow for sane inputs */
	u64 t = (rate_per_s * window_ns + NSEC_PER_SEC_ULL - 1) / NSEC_PER_SEC_ULL;

	if (!t)
		return 1;
	return t > 0xffffffffULL ? 0xffffffffU : (u32)t;
}

static void report(const struct hvn_storm *s, const struct hvn_storm_cfg *c,
		   struct hvn_storm_report *r)
{
	r->start = s->start;
	r->duration = s->end - s->start;
	r->count = s->count;
	r->peak_rate = (u64)s->peak * NSEC_PER_SEC_ULL / c->window_ns;
}

/*
 * Close the current window.  A hot one extends the storm; a cold one ends
 * it.  Returns true if a storm ended.
 */
static bool close_window(struct hvn_storm *s, const struct hvn_storm_cfg *c,
			 struct hvn_storm_report *ended)
{
	bool hot = s->win_count >= c->threshold;

	if (s->active && hot) {
		s->count += s->win_count;
		s->end = s->win_last;
		if (s->win_count > s->peak)
			s->peak = s->win_count;
	}
	s->win_count = 0;
	if (s->active && !hot) {
		report(s, c, ended);
		s->active = false;
		return true;
	}
	return false;
}

HVN_LIB unsigned int hvn_storm_irq(struct hvn_storm *s, const struct hvn_storm_cfg *c,
			   u64 now, struct hvn_storm_report *ended)
{
	unsigned int ret = 0;

	if (s->win_count && now - s->win_start >= c->window_ns) {
		if (close_window(s, c, ended))
			ret |= HVN_STORM_END;
		/* A whole window without interrupts ends a storm too. */
		else if (s->active && now - s->win_start >= 2 * c->window_ns) {
			report(s, c, ended);
			s->active = false;
			ret |= HVN_STORM_END;
		}
	}
	if (!s->win_count)
		s->win_start = now;
	s->win_count++;
	s->win_last = now;
	if (!s->active && s->win_count == c->threshold) {
		s->active = true;
		s->start = s->win_start;
		s->end = now;
		s->count = 0;
		s->peak = 0;
		ret |= HVN_STORM_BEGIN;
	}
	return ret;
}

HVN_LIB bool hvn_storm_expire(struct hvn_storm *s, const struct hvn_storm_cfg *c,
		      u64 now, bool force, struct hvn_storm_report *ended)
{
	if (!s->active)
		return false;
	if (!force && now - s->win_start < 2 * c->window_ns)
		return false;	/* the next window may still turn hot */
	if (s->win_count && (force || now - s->win_start >= c->window_ns)) {
		if (close_window(s, c, ended))
			return true;
	}
	report(s, c, ended);
	s->active = false;
	s->win_count = 0;
	return true;
}

HVN_LIB bool hvn_storm_walk_due(u64 *next, u64 now, u64 window_ns, bool force)
{
	if (!force && now < *next)
		return false;
	*next = now + window_ns / 8;
	return true;
}

HVN_LIB struct hvn_storm_slot *hvn_storm_slot(struct hvn_storm_slot *slots, int irq,
					      const struct hvn_storm_cfg *c, u64 now,
					      bool *claimed)
{
	struct hvn_storm_slot *s, *take = NULL;
	u32 k, i;

	*claimed = false;
	for (k = 0; k < HVN_STORM_SLOTS; k++) {
		i = ((u32)irq + k) & (HVN_STORM_SLOTS - 1);
		s = &slots[i];
		if (s->irq == irq)
			return s;
		if (take && take->irq < 0)
			continue;	/* a free slot beats a quiet one */
		if (s->irq < 0 || (!s->st.active &&
				   now - s->st.win_start >= c->window_ns))
			take = s;
	}
	if (!take)
		return NULL;
	take->irq = irq;
	take->name[0] = 0;
	take->st = (struct hvn_storm){ 0 };
	*claimed = true;
	return take;
}
