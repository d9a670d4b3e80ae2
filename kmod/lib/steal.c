// SPDX-License-Identifier: GPL-2.0
/* Steal-time reading and episodes; see steal.h. */
#include "steal.h"

HVN_LIB bool hvn_steal_area_read(const struct hvn_steal_area_ops *ops, const void *area,
			 unsigned int max_tries, u64 *steal)
{
	unsigned int i;
	u32 v1, v2;
	u64 st;

	for (i = 0; i < max_tries; i++) {
		v1 = ops->version(area);
		ops->read_barrier();
		st = ops->steal(area);
		ops->read_barrier();
		v2 = ops->version(area);
		if (!(v1 & 1) && v1 == v2) {
			*steal = st;
			return true;
		}
	}
	return false;
}

HVN_LIB bool hvn_steal_sample(struct hvn_steal_cpu *sc, u64 now, u64 steal,
		      u64 threshold_ns, struct hvn_steal_report *rep)
{
	u64 delta;
	bool hit = false;

	if (sc->primed && steal >= sc->last_steal && now > sc->last_time) {
		delta = steal - sc->last_steal;
		if (delta >= threshold_ns) {
			rep->start = sc->last_time;
			rep->window = now - sc->last_time;
			rep->steal = delta;
			hit = true;
		}
	}
	sc->primed = true;
	sc->last_steal = steal;
	sc->last_time = now;
	return hit;
}
