/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few types and helpers hvnoise's kernel-independent logic needs, from
 * the kernel's headers when built into the module and from libc when built
 * into the userspace unit tests.  Nothing else in kmod/lib/ includes a
 * kernel or libc header directly.
 */
#ifndef HVN_TYPES_H
#define HVN_TYPES_H

#if defined(__VMLINUX_H__)
/* The BPF collector: types from vmlinux.h, the library compiled in. */
#define BITS_PER_LONG	64
#define HVN_LIB		static
#elif defined(__KERNEL__)
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/bitops.h>
#else
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#ifndef BITS_PER_LONG
#define BITS_PER_LONG	(CHAR_BIT * (int)sizeof(long))
#endif
#endif

/*
 * How the shared detector functions link: static where compiled into a
 * BPF object, which cannot call out of it.
 */
#ifndef HVN_LIB
#define HVN_LIB
#endif

#define HVN_BITS_TO_LONGS(n)	(((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)

static inline void hvn_bit_set(unsigned long *map, unsigned int bit)
{
	map[bit / BITS_PER_LONG] |= 1UL << (bit % BITS_PER_LONG);
}

static inline bool hvn_bit_test(const unsigned long *map, unsigned int bit)
{
	return map[bit / BITS_PER_LONG] & (1UL << (bit % BITS_PER_LONG));
}

#endif /* HVN_TYPES_H */
