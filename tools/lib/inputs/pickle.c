// SPDX-License-Identifier: GPL-2.0
/*
 * A pickle of plain data (what PyTorch's Flight Recorder dumps: dicts,
 * lists, tuples, strings, integers, floats, None, bools), protocols 2 to 5,
 * read into the tree json.h describes.  Nothing is constructed or imported:
 * any opcode that would build an object is refused by name.  The input may
 * be any file, so every read is bounds-checked and the output is bounded.
 *
 * Pickle's memo shares objects (a list memoized empty and filled later is
 * the same list), so values first live in an arena of nodes that hold
 * indices; the tree is copied out at STOP.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/pickle.h"

#define MAX_DEPTH	64
#define MAX_MEMO	(1u << 24)
#define MARK_SLOT	UINT32_MAX

/* 24 bytes: a pickle makes one per opcode byte at most. */
struct node {
	union {
		double num;		/* J_NUM, !is_int */
		int64_t i;		/* J_NUM, is_int */
		char *str;		/* J_STR */
		uint32_t *items;	/* J_ARR: values; J_OBJ: key, value pairs */
	};
	uint32_t n, cap;
	uint8_t type;
	bool b, is_int;
	bool frozen;			/* a tuple */
};

struct unpickler {
	const unsigned char *s;
	size_t len, i, op_at;
	char *err;
	size_t errlen;
	struct node *nodes;
	size_t nnodes, capnodes;
	uint32_t *stack;
	size_t sp, capstack;
	uint32_t *memo;			/* node + 1; 0: empty */
	size_t capmemo, nmemo;		/* nmemo: slots filled (MEMOIZE's next) */
	size_t budget;			/* bytes the tree may still take */
	bool failed;
};

static bool fail(struct unpickler *u, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool fail(struct unpickler *u, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (u->failed)
		return false;
	u->failed = true;
	if (!u->errlen)
		return false;
	n = snprintf(u->err, u->errlen, "byte %zu: ", u->op_at);
	if (n < 0 || (size_t)n >= u->errlen)
		return false;
	va_start(ap, fmt);
	vsnprintf(u->err + n, u->errlen - n, fmt, ap);
	va_end(ap);
	return false;
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t nc = *cap ? *cap : 16;
	void *np;

	if (need <= *cap)
		return true;
	while (nc < need)
		nc *= 2;
	np = realloc(*p, nc * size);
	if (!np)
		return false;
	*p = np;
	*cap = nc;
	return true;
}

static bool take(struct unpickler *u, size_t n, const unsigned char **out)
{
	if (u->len - u->i < n)
		return fail(u, "pickle ends inside an opcode's argument");
	*out = u->s + u->i;
	u->i += n;
	return true;
}

static uint64_t le(const unsigned char *b, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | b[n];
	return v;
}

static bool new_node(struct unpickler *u, enum json_type t, uint32_t *id)
{
	struct node *nd;

	if (u->nnodes >= MARK_SLOT - 1 ||
	    !grow((void **)&u->nodes, &u->capnodes, u->nnodes + 1, sizeof(*nd)))
		return fail(u, "out of memory");
	nd = &u->nodes[u->nnodes];
	memset(nd, 0, sizeof(*nd));
	nd->type = t;
	*id = u->nnodes++;
	return true;
}

static bool push(struct unpickler *u, uint32_t id)
{
	if (!grow((void **)&u->stack, &u->capstack, u->sp + 1, sizeof(*u->stack)))
		return fail(u, "out of memory");
	u->stack[u->sp++] = id;
	return true;
}

static bool push_new(struct unpickler *u, enum json_type t, uint32_t *id)
{
	uint32_t tmp;

	if (!id)
		id = &tmp;
	return new_node(u, t, id) && push(u, *id);
}

static bool pop(struct unpickler *u, uint32_t *id)
{
	if (!u->sp || u->stack[u->sp - 1] == MARK_SLOT)
		return fail(u, "pickle stack underflow");
	*id = u->stack[--u->sp];
	return true;
}

/* The stack position just above the topmost MARK. */
static bool find_mark(struct unpickler *u, size_t *at)
{
	*at = 0;
	for (size_t k = u->sp; k > 0; k--)
		if (u->stack[k - 1] == MARK_SLOT) {
			*at = k;
			return true;
		}
	return fail(u, "no MARK on the pickle stack");
}

static bool append(struct unpickler *u, uint32_t to, const uint32_t *v, size_t n)
{
	struct node *nd = &u->nodes[to];
	size_t cap = nd->cap;

	if (!n)
		return true;
	if (nd->n + n > UINT32_MAX / 2 ||
	    !grow((void **)&nd->items, &cap, nd->n + n, sizeof(*nd->items)))
		return fail(u, "out of memory");
	nd->cap = cap;
	memcpy(nd->items + nd->n, v, n * sizeof(*v));
	nd->n += n;
	return true;
}

/* APPEND(S), SETITEM(S): the items above the mark (or the top one or two)
 * go into the container beneath them. */
static bool add_items(struct unpickler *u, bool dict, bool marked)
{
	size_t at = 0, n;
	uint32_t to;

	if (marked) {
		if (!find_mark(u, &at))
			return false;
		n = u->sp - at;
		if (at < 2)
			return fail(u, "nothing to add items to");
		to = u->stack[at - 2];
	} else {
		n = dict ? 2 : 1;
		if (u->sp < n + 1)
			return fail(u, "pickle stack underflow");
		at = u->sp - n;
		to = u->stack[at - 1];
	}
	for (size_t k = at; k < u->sp; k++)
		if (u->stack[k] == MARK_SLOT)
			return fail(u, "a MARK among the items");
	if (to == MARK_SLOT ||
	    u->nodes[to].type != (dict ? J_OBJ : J_ARR) || u->nodes[to].frozen)
		return fail(u, dict ? "items set on a value that is not a dict" :
			    "items appended to a value that is not a list");
	if (dict && n % 2)
		return fail(u, "a dict key without a value");
	if (!append(u, to, u->stack + at, n))
		return false;
	u->sp = marked ? at - 1 : at;
	return true;
}

/* TUPLE, LIST, DICT and the TUPLEn opcodes: the top @n (or all above the
 * mark) become one new container. */
static bool collect(struct unpickler *u, enum json_type t, bool tuple, int n)
{
	size_t at = 0;
	uint32_t id;

	if (n < 0) {
		if (!find_mark(u, &at))
			return false;
	} else {
		if (u->sp < (size_t)n)
			return fail(u, "pickle stack underflow");
		at = u->sp - n;
	}
	for (size_t k = at; k < u->sp; k++)
		if (u->stack[k] == MARK_SLOT)
			return fail(u, "a MARK among the items");
	if (t == J_OBJ && (u->sp - at) % 2)
		return fail(u, "a dict key without a value");
	if (!new_node(u, t, &id) || !append(u, id, u->stack + at, u->sp - at))
		return false;
	u->nodes[id].frozen = tuple;
	u->sp = n < 0 ? at - 1 : at;
	return push(u, id);
}

static bool memo_put(struct unpickler *u, uint64_t idx)
{
	if (!u->sp || u->stack[u->sp - 1] == MARK_SLOT)
		return fail(u, "memoizing an empty stack");
	if (idx >= MAX_MEMO)
		return fail(u, "memo index %llu too large", (unsigned long long)idx);
	if (idx >= u->capmemo) {
		size_t old = u->capmemo;

		if (!grow((void **)&u->memo, &u->capmemo, idx + 1, sizeof(*u->memo)))
			return fail(u, "out of memory");
		memset(u->memo + old, 0, (u->capmemo - old) * sizeof(*u->memo));
	}
	/* MEMOIZE's index is the count of slots set, as in Python's memo */
	u->nmemo += !u->memo[idx];
	u->memo[idx] = u->stack[u->sp - 1] + 1;
	return true;
}

static bool memo_get(struct unpickler *u, uint64_t idx)
{
	if (idx >= u->capmemo || !u->memo[idx])
		return fail(u, "memo entry %llu was never set", (unsigned long long)idx);
	return push(u, u->memo[idx] - 1);
}

static bool string(struct unpickler *u, uint64_t n)
{
	const unsigned char *b;
	uint32_t id;
	char *s;

	if (n > u->len - u->i)
		return fail(u, "string longer than the file");
	if (!take(u, n, &b))
		return false;
	if (memchr(b, 0, n))
		return fail(u, "NUL byte in a string");
	s = malloc(n + 1);
	if (!s)
		return fail(u, "out of memory");
	memcpy(s, b, n);
	s[n] = 0;
	if (!push_new(u, J_STR, &id)) {
		free(s);
		return false;
	}
	u->nodes[id].str = s;
	return true;
}

static bool integer(struct unpickler *u, int64_t v)
{
	uint32_t id;

	if (!push_new(u, J_NUM, &id))
		return false;
	u->nodes[id].i = v;
	u->nodes[id].is_int = true;
	return true;
}

/* LONG1/LONG4: little-endian two's complement, held if it fits 64 bits. */
static bool long_int(struct unpickler *u, uint64_t n)
{
	const unsigned char *b;
	uint64_t v;

	if (n > u->len - u->i)
		return fail(u, "integer longer than the file");
	if (n > 8)
		return fail(u, "integer of %llu bytes: beyond 64 bits",
			    (unsigned long long)n);
	if (!take(u, n, &b))
		return false;
	if (!n)
		return integer(u, 0);
	v = le(b, n);
	if (n < 8 && (b[n - 1] & 0x80))
		v |= ~0ull << (8 * n);
	return integer(u, (int64_t)v);
}

static const char *refused(unsigned char op)
{
	switch (op) {
	case 'c': return "GLOBAL";
	case 0x93: return "STACK_GLOBAL";
	case 'R': return "REDUCE";
	case 'b': return "BUILD";
	case 'i': return "INST";
	case 'o': return "OBJ";
	case 0x81: return "NEWOBJ";
	case 0x92: return "NEWOBJ_EX";
	case 'P': return "PERSID";
	case 'Q': return "BINPERSID";
	case 0x82: case 0x83: case 0x84: return "EXT";
	case 0x97: return "NEXT_BUFFER";
	case 0x98: return "READONLY_BUFFER";
	}
	return NULL;
}

static bool step(struct unpickler *u, bool *stop)
{
	const unsigned char *b = NULL;
	unsigned char op;
	uint32_t id;
	size_t n = 0;
	uint64_t bits;
	double d;

	u->op_at = u->i;
	if (u->i >= u->len)
		return fail(u, "pickle ends without STOP");
	b = u->s + u->i++;
	op = *b;
	switch (op) {
	case 0x80:			/* PROTO */
		if (!take(u, 1, &b))
			return false;
		if (*b < 2 || *b > 5)
			return fail(u, "pickle protocol %u (2 to 5 are read)", *b);
		return true;
	case 0x95:			/* FRAME: a hint only */
		return take(u, 8, &b);
	case '.':			/* STOP */
		*stop = true;
		return true;
	case '(':			/* MARK */
		return push(u, MARK_SLOT);
	case '0':			/* POP */
		if (u->sp && u->stack[u->sp - 1] == MARK_SLOT) {
			u->sp--;
			return true;
		}
		return pop(u, &id);
	case '1':			/* POP_MARK */
		if (!find_mark(u, &n))
			return false;
		u->sp = n - 1;
		return true;
	case '2':			/* DUP */
		if (!u->sp || u->stack[u->sp - 1] == MARK_SLOT)
			return fail(u, "pickle stack underflow");
		return push(u, u->stack[u->sp - 1]);
	case 'N':
		return push_new(u, J_NULL, NULL);
	case 0x88:			/* NEWTRUE */
	case 0x89:			/* NEWFALSE */
		if (!push_new(u, J_BOOL, &id))
			return false;
		u->nodes[id].b = op == 0x88;
		return true;
	case 'J':			/* BININT */
		return take(u, 4, &b) && integer(u, (int32_t)le(b, 4));
	case 'K':			/* BININT1 */
		return take(u, 1, &b) && integer(u, b[0]);
	case 'M':			/* BININT2 */
		return take(u, 2, &b) && integer(u, (int64_t)le(b, 2));
	case 0x8a:			/* LONG1 */
		return take(u, 1, &b) && long_int(u, b[0]);
	case 0x8b:			/* LONG4 */
		return take(u, 4, &b) && long_int(u, le(b, 4));
	case 'G':			/* BINFLOAT: big-endian IEEE 754 */
		if (!take(u, 8, &b))
			return false;
		bits = 0;
		for (int k = 0; k < 8; k++)
			bits = bits << 8 | b[k];
		memcpy(&d, &bits, sizeof(d));
		if (!push_new(u, J_NUM, &id))
			return false;
		u->nodes[id].num = d;
		return true;
	case 'X':			/* BINUNICODE */
		return take(u, 4, &b) && string(u, le(b, 4));
	case 0x8c:			/* SHORT_BINUNICODE */
		return take(u, 1, &b) && string(u, b[0]);
	case 0x8d:			/* BINUNICODE8 */
		return take(u, 8, &b) && string(u, le(b, 8));
	case '}':			/* EMPTY_DICT */
		return push_new(u, J_OBJ, NULL);
	case ']':			/* EMPTY_LIST */
		return push_new(u, J_ARR, NULL);
	case ')':			/* EMPTY_TUPLE */
		if (!push_new(u, J_ARR, &id))
			return false;
		u->nodes[id].frozen = true;
		return true;
	case 't':
		return collect(u, J_ARR, true, -1);
	case 0x85: case 0x86: case 0x87:	/* TUPLE1..3 */
		return collect(u, J_ARR, true, op - 0x84);
	case 'l':
		return collect(u, J_ARR, false, -1);
	case 'd':
		return collect(u, J_OBJ, false, -1);
	case 'a':
		return add_items(u, false, false);
	case 'e':
		return add_items(u, false, true);
	case 's':
		return add_items(u, true, false);
	case 'u':
		return add_items(u, true, true);
	case 'q':			/* BINPUT */
		return take(u, 1, &b) && memo_put(u, b[0]);
	case 'r':			/* LONG_BINPUT */
		return take(u, 4, &b) && memo_put(u, le(b, 4));
	case 0x94:			/* MEMOIZE */
		return memo_put(u, u->nmemo);
	case 'h':			/* BINGET */
		return take(u, 1, &b) && memo_get(u, b[0]);
	case 'j':			/* LONG_BINGET */
		return take(u, 4, &b) && memo_get(u, le(b, 4));
	case 'B': case 'C': case 0x8e: case 0x96:
		return fail(u, "pickle opcode 0x%02x (bytes): a Flight Recorder dump has none",
			    op);
	}
	if (refused(op))
		return fail(u, "pickle opcode 0x%02x (%s) would build an object: only plain data (dicts, lists, tuples, strings, numbers, None, bools) is read",
			    op, refused(op));
	return fail(u, "pickle opcode 0x%02x is not read (protocols 2 to 5 of plain data are)",
		    op);
}

static bool spend(struct unpickler *u, size_t bytes)
{
	if (bytes > u->budget)
		return fail(u, "pickle expands beyond %zu bytes", u->len * 64 + (1u << 20));
	u->budget -= bytes;
	return true;
}

static char *key_of(struct unpickler *u, const struct node *key)
{
	char num[24];

	if (key->type == J_STR)
		return spend(u, strlen(key->str) + 1) ? strdup(key->str) : NULL;
	if (key->type != J_NUM || !key->is_int) {
		fail(u, "a dict key that is not a string or an integer");
		return NULL;
	}
	snprintf(num, sizeof(num), "%lld", (long long)key->i);
	return spend(u, strlen(num) + 1) ? strdup(num) : NULL;
}

/* FNV-1a, for the duplicate-key check. */
static uint32_t key_hash(const char *k)
{
	uint32_t h = 2166136261u;

	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 16777619u;
	return h;
}

/* A key given twice: Python keeps the last value, hvn_json_get() finds the
 * first; such a dict is no dump's, refuse it. */
static bool keys_unique(struct unpickler *u, char **keys, size_t n)
{
	size_t size = 16, mask;
	uint32_t *slot;
	bool ok = true;

	while (size < 2 * n)
		size *= 2;
	mask = size - 1;
	slot = calloc(size, sizeof(*slot));
	if (!slot)
		return fail(u, "out of memory");
	for (size_t k = 0; k < n && ok; k++) {
		size_t h = key_hash(keys[k]) & mask;

		while (slot[h] && strcmp(keys[slot[h] - 1], keys[k]))
			h = (h + 1) & mask;
		if (slot[h])
			ok = fail(u, "dict key \"%.40s\" given twice", keys[k]);
		slot[h] = k + 1;
	}
	free(slot);
	return ok;
}

/* Copies node @id out as a tree, bounded in depth (memo cycles) and bytes
 * (a small pickle can name one big string or list many times). */
static bool copy_out(struct unpickler *u, uint32_t id, struct json *to, int depth)
{
	const struct node *nd = &u->nodes[id];
	bool obj = nd->type == J_OBJ;
	size_t n = obj ? nd->n / 2 : nd->n;

	memset(to, 0, sizeof(*to));
	if (depth > MAX_DEPTH)
		return fail(u, "nested too deep (or a value that holds itself)");
	if (!spend(u, sizeof(*to)))
		return false;
	to->type = nd->type;
	switch (nd->type) {
	case J_STR:
		if (!spend(u, strlen(nd->str) + 1))
			return false;
		to->str = strdup(nd->str);
		return to->str ? true : fail(u, "out of memory");
	case J_NUM:
		to->is_int = nd->is_int;
		to->i = nd->is_int ? nd->i : 0;
		to->num = nd->is_int ? (double)nd->i : nd->num;
		return true;
	case J_BOOL:
		to->b = nd->b;
		return true;
	case J_ARR:
	case J_OBJ:
		break;
	default:
		return true;
	}
	if (!n)
		return true;
	to->kids = calloc(n, sizeof(*to->kids));
	if (obj)
		to->keys = calloc(n, sizeof(*to->keys));
	if (!to->kids || (obj && !to->keys))
		return fail(u, "out of memory");
	for (size_t k = 0; k < n; k++) {
		uint32_t v = obj ? nd->items[2 * k + 1] : nd->items[k];

		to->n = k + 1;
		if (obj) {
			to->keys[k] = key_of(u, &u->nodes[nd->items[2 * k]]);
			if (!to->keys[k])
				return u->failed ? false : fail(u, "out of memory");
		}
		if (!copy_out(u, v, &to->kids[k], depth + 1))
			return false;
	}
	return !obj || keys_unique(u, to->keys, n);
}

bool hvn_pickle_is(const void *buf, size_t len)
{
	const unsigned char *b = buf;

	return len >= 2 && b[0] == 0x80;
}

struct json *hvn_pickle_parse(const void *buf, size_t len, char *err, size_t errlen)
{
	struct unpickler u = { .s = buf, .len = len, .err = err, .errlen = errlen,
			       .budget = len * 64 + (1u << 20) };
	struct json *j = NULL;
	bool stop = false;
	uint32_t top;

	if (errlen)
		err[0] = 0;
	while (!stop && step(&u, &stop))
		;
	if (stop) {
		u.op_at = u.i;
		if (u.sp != 1 || u.stack[0] == MARK_SLOT)
			fail(&u, "pickle leaves %zu values, not one", u.sp);
		else if (u.i != u.len)
			fail(&u, "trailing data after STOP");
	}
	if (!u.failed) {
		top = u.stack[0];
		j = calloc(1, sizeof(*j));
		if (!j)
			fail(&u, "out of memory");
		else if (!copy_out(&u, top, j, 0)) {
			hvn_json_free(j);
			j = NULL;
		}
	}
	for (size_t k = 0; k < u.nnodes; k++)
		if (u.nodes[k].type == J_STR)
			free(u.nodes[k].str);
		else if (u.nodes[k].type == J_ARR || u.nodes[k].type == J_OBJ)
			free(u.nodes[k].items);
	free(u.nodes);
	free(u.stack);
	free(u.memo);
	return j;
}
