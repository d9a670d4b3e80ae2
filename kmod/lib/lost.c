// SPDX-License-Identifier: GPL-2.0
/* Lost time accounting; see lost.h. */
#include "lost.h"

HVN_LIB void hvn_ivl_add(struct hvn_ivl_ring *r, u64 start, u64 end)
{
	u32 i = r->head++ & (HVN_IVL_RING - 1);

	/*
	 * Capped here, not in hvn_ivl_covered()'s loop: the BPF verifier
	 * walks every iteration of that loop.
	 */
	if (end - start > HVN_IVL_CAP_NS)
		end = start + HVN_IVL_CAP_NS;
	r->start[i] = start;
	r->end[i] = end;
}

HVN_LIB void hvn_ivl_enter(struct hvn_ivl_ring *r, u64 now)
{
	if (!r->depth++)
		r->open_start = now;
}

HVN_LIB void hvn_ivl_exit(struct hvn_ivl_ring *r, u64 now)
{
	/* An exit without its entry (probes attached mid-interrupt). */
	if (!r->depth)
		return;
	if (!--r->depth)
		hvn_ivl_add(r, r->open_start, now);
}

HVN_LIB u64 hvn_ivl_covered(const struct hvn_ivl_ring *r, u64 from, u64 to)
{
	u32 n = r->head < HVN_IVL_RING ? r->head : HVN_IVL_RING;
	u64 sum = 0;
	u32 k;

	for (k = 0; k < n; k++) {
		u64 a = r->start[k], b = r->end[k];

		if (a < from)
			a = from;
		if (b > to)
			b = to;
		if (b > a)
			sum += b - a;
	}
	return sum > to - from ? to - from : sum;
}

HVN_LIB bool hvn_lost_check(struct hvn_lost_cpu *lc, const struct hvn_ivl_ring *r,
			    const struct hvn_lost_cfg *c, u64 now, u64 expiry,
			    u64 steal_ns, struct hvn_lost_report *rep)
{
	u64 from = expiry, late, irq_ns, lost;

	if (from < lc->reported_until)
		from = lc->reported_until;
	if (from >= now)
		return false;
	late = now - from;
	if (late < c->threshold_ns)
		return false;
	irq_ns = hvn_ivl_covered(r, from, now);
	lost = late - irq_ns;
	if (lost < c->threshold_ns)
		return false;
	lc->reported_until = now;
	if (steal_ns > lost)
		steal_ns = lost;
	rep->start = from;
	rep->duration = late;
	rep->irq_ns = irq_ns;
	rep->steal_ns = steal_ns;
	rep->unexplained_ns = lost - steal_ns;
	return true;
}

HVN_LIB u64 hvn_lost_due(const struct hvn_lost_cpu *lc, u64 expires, u64 period)
{
	u64 due = lc->sampler_seen + period;

	return lc->sampler_seen && due < expires ? due : expires;
}

HVN_LIB void hvn_lost_split_nmi(struct hvn_lost_report *rep,
				const struct hvn_ivl_ring *nmi, u64 now)
{
	u64 ns = hvn_ivl_covered(nmi, rep->start, now);

	if (ns > rep->steal_ns + rep->unexplained_ns)
		ns = rep->steal_ns + rep->unexplained_ns;
	if (rep->unexplained_ns >= ns) {
		rep->irq_ns += ns;
		rep->unexplained_ns -= ns;
	}
}
