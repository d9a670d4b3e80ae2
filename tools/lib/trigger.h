/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flight recorder's trigger file (--trigger-file): touched, it asks for
 * an incident; its first line says why.  A first line
 *
 *     at NS window NS: WHY
 *
 * asks for the window of +-window ns around CLOCK_REALTIME at, written
 * once its end has passed.  This file is its one reader and writer (the
 * NCCL plugin, built with it, writes the plain form, "nccl stall: ...");
 * it depends on nothing else of tools/lib, so that the plugin can be.
 *
 * The recorder answers beside it, in PATH.taken: one line "INODE WHAT",
 * INODE the trigger file's it took (each trigger is a new file).
 */
#ifndef HVNOISE_TRIGGER_H
#define HVNOISE_TRIGGER_H

#include <stdbool.h>
#include <stdint.h>

/* Bounds of a request: a CLOCK_REALTIME before 2286, an hour each way. */
#define HVN_TRIGGER_AT_MAX	(10000000000ull * 1000000000ull)
#define HVN_TRIGGER_WINDOW_MAX	(3600ull * 1000000000ull)

struct hvn_trigger {
	uint64_t at, window;		/* CLOCK_REALTIME ns; 0: the last --keep s */
	char why[200];
};

/* @line (its first line only) into @t. */
void hvn_trigger_parse(const char *line, struct hvn_trigger *t);
/* @t into @path, replaced whole (a new file: a new trigger; its inode in
 * *@ino): 0, or -1 and errno. */
int hvn_trigger_write(const char *path, const struct hvn_trigger *t,
		      uint64_t *ino);
/* The recorder's answer to the trigger file @ino: 0, or -1 and errno. */
int hvn_trigger_answer(const char *path, uint64_t ino, const char *what);
/* Whether PATH.taken answers the trigger @ino, with its WHAT in @what. */
bool hvn_trigger_answered(const char *path, uint64_t ino, char *what,
			  size_t len);

#endif
