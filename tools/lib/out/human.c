// SPDX-License-Identifier: GPL-2.0
/* Text for people, shared by report, top, correlate and the flight recorder. */
#include <string.h>
#include <time.h>

#include "analysis/episodes.h"
#include "out/human.h"

static const char *const steal_src[] = { "kvm", "kcpustat", "pvtime" };
static const char *const storm_src[] = { "irq", "all", "timer", "resched",
					 "callfunc", "callfunc1" };
static const char *const mig_how[] = { "vector_update", "handled", "poll" };
static const char *const ep_kind[] = { "steal", "lost", "storm", "migrate" };
static const char *const watch_kind[] = { "cpu", "device", "irq" };

#define NAME_OF(tab, i) ((i) < sizeof(tab) / sizeof(tab[0]) ? tab[i] : "?")

const char *hvn_steal_source(unsigned int s)
{
	return NAME_OF(steal_src, s);
}

const char *hvn_storm_source(unsigned int s)
{
	return NAME_OF(storm_src, s);
}

const char *hvn_mig_how(unsigned int how)
{
	return NAME_OF(mig_how, how);
}

const char *hvn_ep_kind(unsigned int k)
{
	return NAME_OF(ep_kind, k);
}

const char *hvn_watch_kind(unsigned int k)
{
	return NAME_OF(watch_kind, k);
}

/* "14:02:07.123456" for a mono time, or "mono 1234.567890". */
static double ms(uint64_t ns)
{
	return ns / 1e6;
}

void hvn_fmt_episode(const struct hvn_analysis *an, const struct hvn_episode *e,
		     char *buf, size_t len)
{
	char when[40];

	hvn_fmt_time(an, e->start, when, sizeof(when), false);
	switch (e->kind) {
	case HVN_EP_LOST:
		snprintf(buf, len, "%s  CPU %-3d lost  %9.3f ms: unexplained %.3f, steal %.3f, irq %.3f",
			 when, e->cpu, ms(e->dur), ms(e->a), ms(e->b),
			 ms(e->c));
		break;
	case HVN_EP_STEAL:
		snprintf(buf, len, "%s  CPU %-3d steal %9.3f ms in %.0f ms (%s)",
			 when, e->cpu, ms(e->dur), ms(e->a),
			 hvn_steal_source(e->source));
		break;
	case HVN_EP_STORM:
		snprintf(buf, len, "%s  CPU %-3d storm %9.3f ms: %s %d %s, %llu IRQs, peak %llu/s",
			 when, e->cpu, ms(e->dur),
			 hvn_storm_source(e->source), e->irq, e->name,
			 (unsigned long long)e->a, (unsigned long long)e->b);
		break;
	default:
		snprintf(buf, len, "%s  IRQ %d %s: CPU %d -> %d (%s)", when,
			 e->irq, e->name, e->cpu2, e->cpu,
			 hvn_mig_how(e->source));
	}
}
