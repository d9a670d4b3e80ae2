// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts the guest instructions executed between two
 * markers the guest runs, by instruction address: what bench/instructions.sh
 * attributes to hvnoise.ko, the BPF programs and the kernel's own trace
 * events.  Kernel-half addresses have a counter each, user space one for
 * all.  Built against plugin API version 1 (QEMU 7.2), every instruction
 * adds to its counter inline as it executes (exact); against version 2
 * and later (make big-guest's QEMU 10, scripts/fetch-qemu.sh) a block
 * adds its instructions' counts as it begins (below).  Run it under
 * single-threaded TCG: the counters and tables are shared by the vCPUs,
 * unlocked.
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
 * usage: -plugin build/bench/insn-plugin.so,out=FILE[,wait=on]
 *
 * wait=on (API version 2 and later: 7.2's reset leaves a lock held):
 * nothing is counted until the guest runs marker N = 3, which has the
 * blocks translated again, counted: a 384-vCPU guest boots and brings its
 * CPUs up at TCG's speed, not the counters'.
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
#define MARK_ARM	3
#define KERNEL_HALF	0xffff800000000000ull

typedef uint64_t *counter;

#if QEMU_PLUGIN_VERSION >= 2
/*
 * Version 2 counts inline only into per-vCPU scoreboards, and QEMU 10.0's
 * single-threaded TCG folds the vCPU index into a constant it then scales
 * in place: the second inline op of a block on vCPU 1 walked 1 GiB off
 * its scoreboard (SIGSEGV in code_gen_buffer, -smp 2).  So here a block
 * adds its instructions' counts from a callback as it begins: counted
 * by block, so a block an exception leaves early is counted whole.  The
 * blocks are interned (the same counters, the same block), or each
 * translation, after every flush of the code buffer, would add one.
 */
struct block {
	struct block *next;
	size_t n;
	counter c[];
};

static struct block **blocks;
static const size_t nblock_buckets = 1 << 16;

/* @b, or the same block made before (then @b is freed). */
static struct block *block_intern(struct block *b)
{
	uint64_t h = b->n;
	struct block **head, *o;

	for (size_t i = 0; i < b->n; i++)
		h = (h ^ (uintptr_t)b->c[i]) * 0x100000001b3ull;
	head = &blocks[(h ^ h >> 32) & (nblock_buckets - 1)];
	for (o = *head; o; o = o->next)
		if (o->n == b->n && !memcmp(o->c, b->c, b->n * sizeof(counter))) {
			free(b);
			return o;
		}
	b->next = *head;
	*head = b;
	return b;
}

static void block_run(unsigned int vcpu, void *data)
{
	struct block *b = data;

	(void)vcpu;
	for (size_t i = 0; i < b->n; i++)
		(*b->c[i])++;
}
#endif

static counter counter_new(void)
{
	counter c = calloc(1, sizeof(*c));

	if (!c) {
		fprintf(stderr, "insn-plugin: out of memory\n");
		abort();
	}
	return c;
}

static uint64_t counter_read(counter c)
{
	return *c;
}

/* The first bytes of @insn, at most @len of them. */
static size_t insn_bytes(struct qemu_plugin_insn *insn, uint8_t *buf,
			 size_t len)
{
#if QEMU_PLUGIN_VERSION >= 3
	return qemu_plugin_insn_data(insn, buf, len);
#else
	size_t n = qemu_plugin_insn_size(insn);

	n = n < len ? n : len;
	memcpy(buf, qemu_plugin_insn_data(insn), n);
	return n;
#endif
}

struct rec {
	uint64_t vaddr;
	counter count;
	uint64_t base;		/* its sum when the segment began */
	struct rec *next;
};

static struct rec **table;
static size_t nbuckets = 1 << 16, nrecs;
static counter user_count;
static uint64_t user_base;
static FILE *out;
static int segment;
static int in_segment;
static qemu_plugin_id_t self;
static int counting = 1;	/* 0 until MARK_ARM with wait=on */

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
static void at_exit(qemu_plugin_id_t id, void *p);

/* After the reset MARK_ARM asked for: every block is translated again. */
static void rearm(qemu_plugin_id_t id)
{
	counting = 1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
}

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
	r->count = counter_new();
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
	if (id == MARK_ARM) {
		static int armed;

		if (!counting && !armed++)
			qemu_plugin_reset(self, rearm);
		return;
	}
	if (!counting) {
		fprintf(stderr, "insn-plugin: marker %u before the arm marker: not counted\n",
			id);
		return;
	}
	if (id == MARK_BEGIN) {
		for (size_t i = 0; i < nbuckets; i++)
			for (struct rec *r = table[i]; r; r = r->next)
				r->base = counter_read(r->count);
		user_base = counter_read(user_count);
		in_segment = 1;
		return;
	}
	if (id != MARK_END || !in_segment)
		return;
	in_segment = 0;
	for (size_t i = 0; i < nbuckets; i++)
		for (struct rec *r = table[i]; r; r = r->next) {
			r->base = counter_read(r->count) - r->base;
			kernel += r->base;
		}
	fprintf(out, "segment %d\ntotal %llu %llu\n", ++segment,
		(unsigned long long)kernel,
		(unsigned long long)(counter_read(user_count) - user_base));
	for (size_t i = 0; i < nbuckets; i++)
		for (struct rec *r = table[i]; r; r = r->next)
			if (r->base)
				fprintf(out, "%llx %llu\n",
					(unsigned long long)r->vaddr,
					(unsigned long long)r->base);
	fprintf(out, "end\n");
	fflush(out);
}

/* The marker's id, or 0 for any other instruction. */
static unsigned int marker_id(struct qemu_plugin_insn *insn)
{
	uint8_t b[8];
	uint32_t disp;

	if (qemu_plugin_insn_size(insn) != 8 ||
	    insn_bytes(insn, b, sizeof(b)) != 8 || b[0] != 0x0f ||
	    b[1] != 0x1f || b[2] != 0x84 || b[3] != 0x00)
		return 0;
	disp = b[4] | b[5] << 8 | b[6] << 16 | (uint32_t)b[7] << 24;
	return (disp & 0xffff0000u) == MARK_MAGIC ? disp & 0xffff : 0;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

#if QEMU_PLUGIN_VERSION >= 2
	struct block *blk = NULL;

	if (counting) {
		blk = malloc(sizeof(*blk) + n * sizeof(counter));
		if (!blk) {
			fprintf(stderr, "insn-plugin: out of memory\n");
			abort();
		}
		blk->n = n;
	}
#endif
	(void)id;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);
		unsigned int mark = marker_id(insn);
		counter c;

		if (mark)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, marker,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)mark);
		/* Before the arm (wait=on): the markers alone. */
		if (!counting)
			continue;
		c = va >= KERNEL_HALF ? rec_of(va)->count : user_count;
#if QEMU_PLUGIN_VERSION >= 2
		blk->c[i] = c;
#else
		qemu_plugin_register_vcpu_insn_exec_inline(
			insn, QEMU_PLUGIN_INLINE_ADD_U64, c, 1);
#endif
	}
#if QEMU_PLUGIN_VERSION >= 2
	if (blk)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, block_run,
						     QEMU_PLUGIN_CB_NO_REGS,
						     block_intern(blk));
#endif
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

	self = id;
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strcmp(argv[i], "wait=on"))
			counting = 0;
	}
#if QEMU_PLUGIN_VERSION < 2
	if (!counting) {
		fprintf(stderr, "insn-plugin: wait=on needs plugin API version 2 (QEMU 9 or later)\n");
		return -1;
	}
#else
	blocks = calloc(nblock_buckets, sizeof(*blocks));
	if (!blocks) {
		fprintf(stderr, "insn-plugin: out of memory\n");
		return -1;
	}
#endif
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
	user_count = counter_new();
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
