// SPDX-License-Identifier: GPL-2.0
/*
 * libtraceevent plugin for hvnoise: trace-cmd report and KernelShark print
 * the hvnoise events with durations in ms and times in seconds, and the
 * NCCL records that libnccl-profiler-hvnoise.so writes through
 * trace_marker_raw (ftrace:raw_data) decoded instead of as hex.
 *
 * Every value is printed as key=value; durations as MILLISECONDS.NNNNNNms
 * and times (the events' CLOCK_MONOTONIC "start") as SECONDS.NNNNNNNNN, so
 * the exact nanoseconds can be read back.  Field reference:
 * Documentation/events.rst and include/hvnoise/nccl.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "hvnoise/events.h"
#include "hvnoise/nccl.h"
#include "hvnoise/watch.h"

#define NAME_OF(tab, i) \
	((i) < sizeof(tab) / sizeof(tab[0]) ? tab[i] : "?")

static const char *const storm_src[] = {
	[HVN_SRC_IRQ] = "irq", [HVN_SRC_ALL] = "all",
	[HVN_SRC_TIMER] = "local_timer", [HVN_SRC_RESCHED] = "reschedule",
	[HVN_SRC_CALLFUNC] = "call_function",
	[HVN_SRC_CALLFUNC1] = "call_function_single",
};
static const char *const steal_src[] = {
	[HVN_STEAL_KVM] = "kvm", [HVN_STEAL_KCPUSTAT] = "kcpustat",
	[HVN_STEAL_PVTIME] = "pvtime",
};
static const char *const mig_how[] = {
	[HVN_MIG_VECTOR] = "vector_update", [HVN_MIG_HANDLED] = "handled",
	[HVN_MIG_POLL] = "poll",
};
static const char *const fn_names[HVN_FN_N] = {
	"Unknown", "AllGather", "AllReduce", "AlltoAll", "Broadcast", "Gather",
	"Recv", "Reduce", "ReduceScatter", "Scatter", "SendRecv", "Send",
	"Coalesced",
};
static const char *const wait_names[HVN_WAIT_N] = {
	"send_gpu", "send_peer", "send", "recv", "recv_flush", "recv_gpu",
};

/* A field's value; 0 (and a note in the output) when the format lacks it. */
static unsigned long long val(struct trace_seq *s, struct tep_event *ev,
			      struct tep_record *rec, const char *name)
{
	unsigned long long v = 0;

	if (tep_get_field_val(s, ev, name, rec, &v, 1))
		return 0;
	return v;
}

static int sval(struct trace_seq *s, struct tep_event *ev,
		struct tep_record *rec, const char *name)
{
	return (int)(uint32_t)val(s, ev, rec, name);
}

static void ms(struct trace_seq *s, const char *key, unsigned long long ns)
{
	trace_seq_printf(s, " %s=%llu.%06llums", key, ns / 1000000,
			 ns % 1000000);
}

static void secs(struct trace_seq *s, const char *key, unsigned long long ns)
{
	trace_seq_printf(s, " %s=%llu.%09llu", key, ns / 1000000000,
			 ns % 1000000000);
}

/* A fixed char array, printed up to its NUL and with unprintables as '?'. */
static void str_field(struct trace_seq *s, struct tep_event *ev,
		      struct tep_record *rec, const char *key,
		      const char *name)
{
	int len = 0;
	const char *p = tep_get_field_raw(s, ev, name, rec, &len, 1);

	trace_seq_printf(s, " %s=", key);
	for (int i = 0; p && i < len && p[i]; i++)
		trace_seq_putc(s, p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?');
}

static void bdf(struct trace_seq *s, const char *key, uint32_t dev)
{
	trace_seq_printf(s, " %s=%04x:%02x:%02x.%x", key, HVN_PCI_DOMAIN(dev),
			 HVN_PCI_BUS(dev), HVN_PCI_SLOT(dev),
			 HVN_PCI_FUNC(dev));
}

static int watch_handler(struct trace_seq *s, struct tep_record *rec,
			 struct tep_event *ev, void *ctx)
{
	unsigned int kind = val(s, ev, rec, "kind");
	unsigned int why = val(s, ev, rec, "why");

	(void)ctx;
	trace_seq_printf(s, "gen=%llu %llu/%llu", val(s, ev, rec, "gen"),
			 val(s, ev, rec, "idx") + 1, val(s, ev, rec, "count"));
	switch (kind) {
	case HVN_WATCH_CPU:
		trace_seq_printf(s, " cpu=%d why=%s%s%s%s",
				 sval(s, ev, rec, "cpu"),
				 why & HVN_WHY_ALL ? "" : "-",
				 why & HVN_WHY_LISTED ? "listed" : "",
				 why & HVN_WHY_IRQ ?
				 (why & HVN_WHY_LISTED ? "|irq" : "irq") : "",
				 why & HVN_WHY_NUMA ?
				 (why & (HVN_WHY_LISTED | HVN_WHY_IRQ) ?
				  "|numa" : "numa") : "");
		break;
	case HVN_WATCH_DEVICE:
		bdf(s, "device", val(s, ev, rec, "dev"));
		trace_seq_printf(s, " node=%d irqs=%llu",
				 sval(s, ev, rec, "node"),
				 val(s, ev, rec, "nirqs"));
		break;
	case HVN_WATCH_IRQ:
		trace_seq_printf(s, " irq=%d", sval(s, ev, rec, "irq"));
		str_field(s, ev, rec, "name", "name");
		bdf(s, "device", val(s, ev, rec, "dev"));
		trace_seq_printf(s, " cpu=%d", sval(s, ev, rec, "cpu"));
		/* Whether its affinity can be set; nothing where not known. */
		if (why & HVN_IRQ_CHECKED)
			trace_seq_printf(s, " affinity=%s",
					 why & HVN_IRQ_MANAGED ? "managed" :
					 why & HVN_IRQ_FIXED ? "fixed" : "settable");
		break;
	default:
		trace_seq_printf(s, " kind=%u", kind);
	}
	/* One of a delta's records: a change, or what is no more. */
	if (why & HVN_WATCH_DELTA)
		trace_seq_printf(s, why & HVN_WATCH_GONE ? " delta gone" : " delta");
	return 0;
}

static int steal_handler(struct trace_seq *s, struct tep_record *rec,
			 struct tep_event *ev, void *ctx)
{
	(void)ctx;
	trace_seq_printf(s, "cpu=%d", sval(s, ev, rec, "cpu"));
	ms(s, "steal", val(s, ev, rec, "duration"));
	ms(s, "window", val(s, ev, rec, "window"));
	trace_seq_printf(s, " source=%s",
			 NAME_OF(steal_src, val(s, ev, rec, "source")));
	secs(s, "start", val(s, ev, rec, "start"));
	return 0;
}

static int lost_handler(struct trace_seq *s, struct tep_record *rec,
			struct tep_event *ev, void *ctx)
{
	(void)ctx;
	trace_seq_printf(s, "cpu=%d", sval(s, ev, rec, "cpu"));
	ms(s, "lost", val(s, ev, rec, "duration"));
	ms(s, "unexplained", val(s, ev, rec, "unexplained_ns"));
	ms(s, "steal", val(s, ev, rec, "steal_ns"));
	ms(s, "irq", val(s, ev, rec, "irq_ns"));
	secs(s, "start", val(s, ev, rec, "start"));
	return 0;
}

static void storm_common(struct trace_seq *s, struct tep_record *rec,
			 struct tep_event *ev)
{
	trace_seq_printf(s, "cpu=%d source=%s irq=%d",
			 sval(s, ev, rec, "cpu"),
			 NAME_OF(storm_src, val(s, ev, rec, "source")),
			 sval(s, ev, rec, "irq"));
	str_field(s, ev, rec, "name", "name");
}

static int storm_begin_handler(struct trace_seq *s, struct tep_record *rec,
			       struct tep_event *ev, void *ctx)
{
	(void)ctx;
	storm_common(s, rec, ev);
	trace_seq_printf(s, " threshold=%llu", val(s, ev, rec, "threshold"));
	secs(s, "start", val(s, ev, rec, "start"));
	return 0;
}

static int storm_handler(struct trace_seq *s, struct tep_record *rec,
			 struct tep_event *ev, void *ctx)
{
	(void)ctx;
	storm_common(s, rec, ev);
	ms(s, "storm", val(s, ev, rec, "duration"));
	trace_seq_printf(s, " irqs=%llu peak=%llu/s",
			 val(s, ev, rec, "count"),
			 val(s, ev, rec, "peak_rate"));
	secs(s, "start", val(s, ev, rec, "start"));
	return 0;
}

static int migrate_handler(struct trace_seq *s, struct tep_record *rec,
			   struct tep_event *ev, void *ctx)
{
	(void)ctx;
	trace_seq_printf(s, "irq=%d", sval(s, ev, rec, "irq"));
	str_field(s, ev, rec, "name", "name");
	bdf(s, "device", val(s, ev, rec, "dev"));
	trace_seq_printf(s, " from_cpu=%d to_cpu=%d how=%s",
			 sval(s, ev, rec, "from_cpu"),
			 sval(s, ev, rec, "to_cpu"),
			 NAME_OF(mig_how, val(s, ev, rec, "how")));
	return 0;
}

/* NUL-terminated within @n bytes, unprintables as '?'. */
static void fixed_str(struct trace_seq *s, const char *key, const char *p,
		      size_t n)
{
	trace_seq_printf(s, " %s=", key);
	for (size_t i = 0; i < n && p[i]; i++)
		trace_seq_putc(s, p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?');
}

static void nccl_comm(struct trace_seq *s, const struct hvn_nccl_comm *r)
{
	trace_seq_printf(s, "nccl comm comm=%016llx rank=%d nranks=%d nodes=%d pid=%d",
			 (unsigned long long)r->comm, r->rank, r->nranks,
			 r->nnodes, r->pid);
	fixed_str(s, "host", r->host, sizeof(r->host));
	fixed_str(s, "name", r->name, sizeof(r->name));
	secs(s, "mono", r->mono_ns);
	secs(s, "real", r->real_ns);
}

static void nccl_coll(struct trace_seq *s, const struct hvn_nccl_coll *r)
{
	trace_seq_printf(s, "nccl coll %s comm=%016llx rank=%d",
			 NAME_OF(fn_names, r->func),
			 (unsigned long long)r->comm, r->rank);
	if (r->seq == UINT64_MAX)
		trace_seq_puts(s, " seq=p2p");
	else
		trace_seq_printf(s, " seq=%llu", (unsigned long long)r->seq);
	trace_seq_printf(s, " op=%llu count=%llu",
			 (unsigned long long)r->op_id,
			 (unsigned long long)r->count);
	if (r->dtype_bytes)
		trace_seq_printf(s, " bytes=%llu",
				 (unsigned long long)r->count * r->dtype_bytes);
	secs(s, "start", r->start_ns);
	ms(s, "enqueue", r->enqueued_ns >= r->start_ns ?
			 r->enqueued_ns - r->start_ns : 0);
	trace_seq_printf(s, " tid=%u cpu=%d peer=%d channels=%u",
			 r->tid, r->cpu, r->peer, r->nchannels);
	fixed_str(s, "algo", r->algo, sizeof(r->algo));
	fixed_str(s, "proto", r->proto, sizeof(r->proto));
}

static void nccl_proxyop(struct trace_seq *s,
			 const struct hvn_nccl_proxyop *r)
{
	trace_seq_printf(s, "nccl proxyop %s %s comm=%016llx rank=%d seq=%llu op=%llu channel=%u peer=%d steps=%d chunk=%d",
			 r->is_send ? "send" : "recv",
			 NAME_OF(fn_names, r->func),
			 (unsigned long long)r->comm, r->rank,
			 (unsigned long long)r->seq,
			 (unsigned long long)r->op_id, r->channel, r->peer,
			 r->nsteps, r->chunk);
	secs(s, "start", r->start_ns);
	ms(s, "dur", r->end_ns >= r->start_ns ? r->end_ns - r->start_ns : 0);
	trace_seq_printf(s, " tid=%u cpu=%d cpu_end=%d", r->tid, r->cpu,
			 r->cpu_end);
	for (int i = 0; i < HVN_WAIT_N; i++)
		if (r->wait_ns[i])
			ms(s, wait_names[i], r->wait_ns[i]);
}

static void nccl_kernch(struct trace_seq *s, const struct hvn_nccl_kernch *r)
{
	trace_seq_printf(s, "nccl kernch %s comm=%016llx rank=%d seq=%llu op=%llu channel=%u",
			 NAME_OF(fn_names, r->func),
			 (unsigned long long)r->comm, r->rank,
			 (unsigned long long)r->seq,
			 (unsigned long long)r->op_id, r->channel);
	secs(s, "start", r->start_ns);
	ms(s, "dur", r->end_ns >= r->start_ns ? r->end_ns - r->start_ns : 0);
	if (r->gpu_end >= r->gpu_start && r->gpu_start)
		ms(s, "gpu", r->gpu_end - r->gpu_start);
	trace_seq_printf(s, " tid=%u cpu=%d", r->tid, r->cpu);
}

/* ftrace:raw_data: an id, then bytes to the end of the record. */
static int raw_handler(struct trace_seq *s, struct tep_record *rec,
		       struct tep_event *ev, void *ctx)
{
	static const size_t need[HVN_NCCL_NTYPES] = {
		[HVN_NCCL_COMM] = sizeof(struct hvn_nccl_comm),
		[HVN_NCCL_COLL] = sizeof(struct hvn_nccl_coll),
		[HVN_NCCL_PROXYOP] = sizeof(struct hvn_nccl_proxyop),
		[HVN_NCCL_KERNCH] = sizeof(struct hvn_nccl_kernch),
	};
	struct tep_format_field *f = tep_find_field(ev, "buf");
	uint32_t id = val(s, ev, rec, "id"), type = HVN_NCCL_TYPE(id);
	const uint8_t *p;
	size_t len;
	union {
		struct hvn_nccl_comm comm;
		struct hvn_nccl_coll coll;
		struct hvn_nccl_proxyop op;
		struct hvn_nccl_kernch kch;
	} u;

	(void)ctx;
	if (!f || f->offset < 0 || f->offset > rec->size) {
		trace_seq_printf(s, "id=0x%08x (no buf field)", id);
		return 0;
	}
	p = (const uint8_t *)rec->data + f->offset;
	len = rec->size - f->offset;
	if (!HVN_NCCL_IS(id) || !type || type >= HVN_NCCL_NTYPES) {
		/* Not ours: the id and the bytes, as the kernel's format. */
		trace_seq_printf(s, "id=0x%08x len=%zu", id, len);
		if (len)
			trace_seq_puts(s, " buf=");
		for (size_t i = 0; i < len && i < 32; i++)
			trace_seq_printf(s, "%02x", p[i]);
		if (len > 32)
			trace_seq_puts(s, "...");
		return 0;
	}
	/* Records are padded to 4 bytes; newer versions may append fields. */
	if (len < need[type]) {
		trace_seq_printf(s, "nccl record type %u: %zu bytes, shorter than its %zu",
				 type, len, need[type]);
		return 0;
	}
	memcpy(&u, p, need[type]);
	switch (type) {
	case HVN_NCCL_COMM:
		nccl_comm(s, &u.comm);
		break;
	case HVN_NCCL_COLL:
		nccl_coll(s, &u.coll);
		break;
	case HVN_NCCL_PROXYOP:
		nccl_proxyop(s, &u.op);
		break;
	default:
		nccl_kernch(s, &u.kch);
	}
	return 0;
}

static const struct {
	const char *sys, *name;
	tep_event_handler_func fn;
} handlers[] = {
	{ "hvnoise", "watch", watch_handler },
	{ "hvnoise", "steal", steal_handler },
	{ "hvnoise", "lost", lost_handler },
	{ "hvnoise", "irq_storm_begin", storm_begin_handler },
	{ "hvnoise", "irq_storm", storm_handler },
	{ "hvnoise", "irq_migrate", migrate_handler },
	{ "ftrace", "raw_data", raw_handler },
};

#define NHANDLERS (sizeof(handlers) / sizeof(handlers[0]))

int TEP_PLUGIN_LOADER(struct tep_handle *tep)
{
	for (size_t i = 0; i < NHANDLERS; i++)
		tep_register_event_handler(tep, -1, handlers[i].sys,
					   handlers[i].name, handlers[i].fn,
					   NULL);
	return 0;
}

int TEP_PLUGIN_UNLOADER(struct tep_handle *tep)
{
	for (size_t i = 0; i < NHANDLERS; i++)
		tep_unregister_event_handler(tep, -1, handlers[i].sys,
					     handlers[i].name, handlers[i].fn,
					     NULL);
	return 0;
}
