// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts the guest instructions executed between two
 * markers the guest runs, by instruction address: what bench/instructions.sh
 * attributes to hvnoise.ko, the BPF programs and the kernel's own trace
 * events.  Every instruction gets an inline counter (exact: QEMU adds it as
 * the instruction executes), kernel-half addresses each their own, user
 * space one for all.  Run it under single-threaded TCG: the counters are
 * shared by the vCPUs and not atomic.
 *
 * The markers are NOPs no compiler emits, "nopl 0x4856000N(%rax,%rax,1)"
 * (0f 1f 84 00, then the displacement): N = 1 begins a segment, N = 2 ends
 * it and appends to the output file
 *
 *   segment S
 *   total KERNEL USER
 *   ADDRESS COUNT            (each kernel address run in the segment, hex)
 *   end
 *
 * usage: -plugin build/bench/insn-plugin.so,out=FILE
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MARK_MAGIC	0x48560000u
#define MARK_BEGIN	1
#define MARK_END	2
#define KERNEL_HALF	0xffff800000000000ull

struct rec {
	uint64_t vaddr;
	uint64_t count;		/* incremented by QEMU, inline */
	uint64_t base;		/* count when the segment began */
	struct rec *next;
};

static struct rec **table;
static size_t nbuckets = 1 << 16, nrecs;
static uint64_t user_count, user_base;
static FILE *out;
static int segment;
static int in_segment;

static size_t hash(uint64_t v)
{
	v ^= v >> 29;
	v *= 0xbf58476d1ce4e5b9ull;
	return (v ^ (v >> 32)) & (nbuckets - 1);
}

/* The counter of @vaddr; records are never freed, so QEMU may keep a
 * pointer to their count for as long as their code is translated. */
static struct rec *rec_of(uint64_t vaddr)
{
	struct rec **b = &table[hash(vaddr)], *r;

	for (r = *b; r; r = r->next)
		if (r->vaddr == vaddr)
			return r;
	r = calloc(1, sizeof(*r));
	if (!r) {
		fprintf(stderr, "insn-plugin: out of memory\n");
		abort();
	}
	r->vaddr = vaddr;
	r->next = *b;
	*b = r;
	nrecs++;
	return r;
}

static void marker(unsigned int vcpu, void *data)
{
	unsigned int id = (unsigned int)(uintptr_t)data;
	uint64_t kernel = 0;

	(void)vcpu;
	if (id == MARK_BEGIN) {
		for (size_t i = 0; i < nbuckets; i++)
			for (struct rec *r = table[i]; r; r = r->next)
				r->base = r->count;
		user_base = user_count;
		in_segment = 1;
		return;
	}
	if (id != MARK_END || !in_segment)
		return;
	in_segment = 0;
	for (size_t i = 0; i < nbuckets; i++)
		for (struct rec *r = table[i]; r; r = r->next)
			kernel += r->count - r->base;
	fprintf(out, "segment %d\ntotal %llu %llu\n", ++segment,
		(unsigned long long)kernel,
		(unsigned long long)(user_count - user_base));
	for (size_t i = 0; i < nbuckets; i++)
		for (struct rec *r = table[i]; r; r = r->next)
			if (r->count != r->base)
				fprintf(out, "%llx %llu\n",
					(unsigned long long)r->vaddr,
					(unsigned long long)(r->count - r->base));
	fprintf(out, "end\n");
	fflush(out);
}

/* The marker's id, or 0 for any other instruction. */
static unsigned int marker_id(struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	uint32_t disp;

	if (qemu_plugin_insn_size(insn) != 8 || b[0] != 0x0f || b[1] != 0x1f ||
	    b[2] != 0x84 || b[3] != 0x00)
		return 0;
	disp = b[4] | b[5] << 8 | b[6] << 16 | (uint32_t)b[7] << 24;
	return (disp & 0xffff0000u) == MARK_MAGIC ? disp & 0xffff : 0;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);
		unsigned int mark = marker_id(insn);

		if (mark)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, marker,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)mark);
		qemu_plugin_register_vcpu_insn_exec_inline(insn,
							   QEMU_PLUGIN_INLINE_ADD_U64,
							   va >= KERNEL_HALF ?
							   &rec_of(va)->count :
							   &user_count, 1);
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	(void)id;
	(void)p;
	fprintf(out, "# %d segments, %zu kernel addresses seen\n", segment, nrecs);
	fclose(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;

	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
	if (!path || !info->system_emulation) {
		fprintf(stderr, "insn-plugin: usage: -plugin insn-plugin.so,out=FILE (system emulation)\n");
		return -1;
	}
	out = fopen(path, "w");
	table = calloc(nbuckets, sizeof(*table));
	if (!out || !table) {
		fprintf(stderr, "insn-plugin: cannot write %s\n", path);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
