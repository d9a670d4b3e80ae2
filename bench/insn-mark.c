// SPDX-License-Identifier: GPL-2.0
/*
 * The guest side of bench/insn-plugin.c: runs the marker NOP that begins
 * ("begin") or ends ("end") a counted segment, or starts the counting of
 * a plugin loaded with wait=on ("arm").  Static, for the initramfs.
 */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "begin")) {
		__asm__ volatile("nopl 0x48560001(%%rax,%%rax,1)" ::: "memory");
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "end")) {
		__asm__ volatile("nopl 0x48560002(%%rax,%%rax,1)" ::: "memory");
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "arm")) {
		__asm__ volatile("nopl 0x48560003(%%rax,%%rax,1)" ::: "memory");
		return 0;
	}
	fprintf(stderr, "usage: insn-mark begin|end|arm\n");
	return 2;
}
