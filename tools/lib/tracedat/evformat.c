// SPDX-License-Identifier: GPL-2.0
/*
 * The tracefs format files of the hvnoise events, written by the tool for
 * what the BPF collector recorded, so that trace.dat readers (trace-cmd,
 * KernelShark, hvnoise report) see the events hvnoise.ko would have
 * produced.  Fields and offsets come from include/hvnoise/event_layout.h;
 * the print formats are the module's TP_printk() as the kernel writes it.
 * The VM tests compare this output with the module's own format files.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hvn.h"
#include "tracedat/evformat.h"

#define SRC_SYMS "{ 0, \"irq\" }, { 1, \"all\" }, { 2, \"local_timer\" }, " \
	"{ 3, \"reschedule\" }, { 4, \"call_function\" }, " \
	"{ 5, \"call_function_single\" }"

static const char *const print_fmt[HVN_NR_EVENTS] = {
	[HVN_EV_watch] = "\"gen=%u %u/%u %s cpu=%d why=%s dev=%04x:%02x:%02x.%x node=%d irq=%d nirqs=%u name=%s\""
		", REC->gen, REC->idx + 1, REC->count, __print_symbolic(REC->kind, { 0, \"cpu\" }, { 1, \"device\" }, { 2, \"irq\" }), REC->cpu, __print_flags(REC->why, \"|\", { 0x1, \"listed\" }, { 0x2, \"irq\" }, { 0x4, \"numa\" }, { 0x8, \"checked\" }, { 0x10, \"managed\" }, { 0x20, \"fixed\" }, "
		"{ 0x40, \"delta\" }, { 0x80, \"gone\" }), REC->dev >> 16, (REC->dev >> 8) & 0xff, (REC->dev >> 3) & 0x1f, REC->dev & 0x7, REC->node, REC->irq, REC->nirqs, REC->name",
	[HVN_EV_steal] = "\"cpu=%d start=%llu duration=%llu window=%llu source=%s\", REC->cpu, REC->start, REC->duration, REC->window, __print_symbolic(REC->source, { 0, \"kvm\" }, { 1, \"kcpustat\" }, { 2, \"pvtime\" })",
	[HVN_EV_lost] = "\"cpu=%d start=%llu duration=%llu irq_ns=%llu steal_ns=%llu unexplained_ns=%llu\", REC->cpu, REC->start, REC->duration, REC->irq_ns, REC->steal_ns, REC->unexplained_ns",
	[HVN_EV_irq_storm_begin] = "\"cpu=%d source=%s irq=%d name=%s start=%llu threshold=%u\", REC->cpu, __print_symbolic(REC->source, " SRC_SYMS "), REC->irq, REC->name, REC->start, REC->threshold",
	[HVN_EV_irq_storm] = "\"cpu=%d source=%s irq=%d name=%s start=%llu duration=%llu count=%llu peak_rate=%llu\", REC->cpu, __print_symbolic(REC->source, " SRC_SYMS "), REC->irq, REC->name, REC->start, REC->duration, REC->count, REC->peak_rate",
	[HVN_EV_irq_migrate] = "\"irq=%d name=%s dev=%04x:%02x:%02x.%x from_cpu=%d to_cpu=%d how=%s\", REC->irq, REC->name, REC->dev >> 16, (REC->dev >> 8) & 0xff, (REC->dev >> 3) & 0x1f, REC->dev & 0x7, REC->from_cpu, REC->to_cpu, __print_symbolic(REC->how, { 0, \"vector_update\" }, { 1, \"handled\" }, { 2, \"poll\" })",
};

/*
 * The fields of each event in TP_STRUCT__entry() order, for the format
 * files, with the signedness the format files print (x86's char is
 * signed).  The structs are include/hvnoise/event_layout.h's; the VM test
 * compares the result with the module's own format files.
 */
struct fdesc {
	const char *decl;
	size_t off, size;
	int sign;
};

#define XSTR(x) #x
#define STR(x) XSTR(x)
#define FLD(ev, t, n, sign)						\
	{ #t " " #n, offsetof(struct hvn_ev_##ev, n),			\
	  sizeof(((struct hvn_ev_##ev *)0)->n), sign }
#define NAME(ev)							\
	{ "char name[" STR(HVN_IRQ_NAME_LEN) "]",			\
	  offsetof(struct hvn_ev_##ev, name),				\
	  sizeof(((struct hvn_ev_##ev *)0)->name), 1 }

static const struct fdesc f_watch[] = {
	FLD(watch, u32, gen, 0),
	FLD(watch, u32, idx, 0),
	FLD(watch, u32, count, 0),
	FLD(watch, u8, kind, 0),
	FLD(watch, u8, why, 0),
	FLD(watch, s32, node, 1),
	FLD(watch, s32, cpu, 1),
	FLD(watch, s32, irq, 1),
	FLD(watch, u32, dev, 0),
	FLD(watch, u32, nirqs, 0),
	NAME(watch),
};

static const struct fdesc f_steal[] = {
	FLD(steal, s32, cpu, 1),
	FLD(steal, u8, source, 0),
	FLD(steal, u64, start, 0),
	FLD(steal, u64, window, 0),
	FLD(steal, u64, duration, 0),
};

static const struct fdesc f_lost[] = {
	FLD(lost, s32, cpu, 1),
	FLD(lost, u64, start, 0),
	FLD(lost, u64, duration, 0),
	FLD(lost, u64, irq_ns, 0),
	FLD(lost, u64, steal_ns, 0),
	FLD(lost, u64, unexplained_ns, 0),
};

static const struct fdesc f_irq_storm_begin[] = {
	FLD(irq_storm_begin, s32, cpu, 1),
	FLD(irq_storm_begin, u8, source, 0),
	FLD(irq_storm_begin, s32, irq, 1),
	FLD(irq_storm_begin, u32, threshold, 0),
	FLD(irq_storm_begin, u64, start, 0),
	NAME(irq_storm_begin),
};

static const struct fdesc f_irq_storm[] = {
	FLD(irq_storm, s32, cpu, 1),
	FLD(irq_storm, u8, source, 0),
	FLD(irq_storm, s32, irq, 1),
	FLD(irq_storm, u64, start, 0),
	FLD(irq_storm, u64, duration, 0),
	FLD(irq_storm, u64, count, 0),
	FLD(irq_storm, u64, peak_rate, 0),
	NAME(irq_storm),
};

static const struct fdesc f_irq_migrate[] = {
	FLD(irq_migrate, s32, irq, 1),
	FLD(irq_migrate, u32, dev, 0),
	FLD(irq_migrate, s32, from_cpu, 1),
	FLD(irq_migrate, s32, to_cpu, 1),
	FLD(irq_migrate, u8, how, 0),
	NAME(irq_migrate),
};

static const struct {
	const char *name;
	const struct fdesc *f;
	size_t n, size;
} ev_fields[HVN_NR_EVENTS] = {
	[HVN_EV_watch] = { "watch", f_watch, sizeof(f_watch) / sizeof(*f_watch),
			sizeof(struct hvn_ev_watch) },
	[HVN_EV_steal] = { "steal", f_steal, sizeof(f_steal) / sizeof(*f_steal),
			sizeof(struct hvn_ev_steal) },
	[HVN_EV_lost] = { "lost", f_lost, sizeof(f_lost) / sizeof(*f_lost),
			sizeof(struct hvn_ev_lost) },
	[HVN_EV_irq_storm_begin] = { "irq_storm_begin", f_irq_storm_begin, sizeof(f_irq_storm_begin) / sizeof(*f_irq_storm_begin),
			sizeof(struct hvn_ev_irq_storm_begin) },
	[HVN_EV_irq_storm] = { "irq_storm", f_irq_storm, sizeof(f_irq_storm) / sizeof(*f_irq_storm),
			sizeof(struct hvn_ev_irq_storm) },
	[HVN_EV_irq_migrate] = { "irq_migrate", f_irq_migrate, sizeof(f_irq_migrate) / sizeof(*f_irq_migrate),
			sizeof(struct hvn_ev_irq_migrate) },
};

/* The list covers the struct: fields in order, the last at its end. */
static int fields_ok(int ev)
{
	const struct fdesc *d = ev_fields[ev].f;
	size_t n = ev_fields[ev].n, end = sizeof(struct hvn_ev_common);

	for (size_t i = 0; i < n; i++) {
		if (d[i].off < end)
			return 0;
		end = d[i].off + d[i].size;
	}
	return end <= ev_fields[ev].size && ev_fields[ev].size - end < 8;
}

static void fields(FILE *f, int ev)
{
	for (size_t i = 0; i < ev_fields[ev].n; i++) {
		const struct fdesc *d = &ev_fields[ev].f[i];

		fprintf(f, "\tfield:%s;\toffset:%zu;\tsize:%zu;\tsigned:%d;\n",
			d->decl, d->off, d->size, d->sign);
	}
}

const char *hvn_fmt_name(int ev)
{
	return ev >= 0 && ev < HVN_NR_EVENTS ? ev_fields[ev].name : NULL;
}

/*
 * The common fields of the running kernel, taken from a format file of
 * @tdir so that they match its struct trace_entry, or the layout every
 * kernel since 4.x has had.
 */
static char *common_fields(const char *tdir)
{
	static const char *const probe[] = {
		"irq/irq_handler_entry", "sched/sched_switch", "ftrace/print",
	};
	char path[4200];

	for (size_t i = 0; tdir && i < sizeof(probe) / sizeof(*probe); i++) {
		char *s, *a, *b;

		snprintf(path, sizeof(path), "%s/events/%s/format", tdir,
			 probe[i]);
		s = hvn_read_file(path, NULL);
		if (!s)
			continue;
		a = strstr(s, "\tfield:");
		b = a ? strstr(a, "\n\n") : NULL;
		if (a && b && strstr(a, "common_type") < b) {
			char *r = strndup(a, b - a + 1);

			free(s);
			return r;
		}
		free(s);
	}
	return strdup("\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		      "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		      "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		      "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n");
}

char *hvn_fmt_event(int ev, const char *tdir, size_t *len)
{
	char *buf = NULL, *common;
	size_t n = 0;
	FILE *f;

	if (!hvn_fmt_name(ev) || !fields_ok(ev))
		return NULL;
	common = common_fields(tdir);
	f = open_memstream(&buf, &n);
	if (!f || !common) {
		if (f)
			fclose(f);
		free(common);
		return NULL;
	}
	fprintf(f, "name: %s\nID: %u\nformat:\n%s\n", ev_fields[ev].name,
		HVN_BPF_EVID(ev), common);
	fields(f, ev);
	fprintf(f, "\nprint fmt: %s\n", print_fmt[ev]);
	free(common);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	if (len)
		*len = n;
	return buf;
}
