// SPDX-License-Identifier: GPL-2.0
/*
 * Runs a command under a system call allow-list, as systemd's
 * SystemCallFilter= and SystemCallArchitectures=native confine a unit:
 * another architecture or a system call not listed kills the process
 * (SIGSYS), as systemd's default action does.  tests/host/units.py gives
 * the list, the unit's filter expanded by systemd-analyze syscall-filter.
 *
 *   seccomp_run NR[,NR...] CMD [ARGS...]
 *
 * NR: system call numbers of this architecture.  No new privileges, as
 * the units' NoNewPrivileges=yes (and as seccomp needs unprivileged).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH	AUDIT_ARCH_AARCH64
#else
#error "seccomp_run: an architecture to add"
#endif

#define MAX_NR	1024

int main(int argc, char **argv)
{
	static struct sock_filter f[4 + 2 * MAX_NR + 1];
	struct sock_fprog prog = { .filter = f };
	unsigned int n = 0;
	char *list, *tok, *save = NULL;

	if (argc < 3) {
		fprintf(stderr, "usage: seccomp_run NR[,NR...] CMD [ARGS...]\n");
		return 2;
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	list = strdup(argv[1]);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long nr = strtoul(tok, &end, 10);

		if (*end || n + 3 > sizeof(f) / sizeof(f[0])) {
			fprintf(stderr, "seccomp_run: \"%s\": not a system call number, or too many\n",
				tok);
			return 2;
		}
		/* x32's numbers carry bit 30: never equal to these. */
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	prog.len = n;
	free(list);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		perror("seccomp_run: the filter");
		return 2;
	}
	execvp(argv[2], argv + 2);
	perror("seccomp_run: exec");
	return 127;
}
