/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pickles of plain data (PyTorch's Flight Recorder dumps) into the tree
 * json.h describes; objects, imports and protocols below 2 are refused.
 */
#ifndef HVNOISE_PICKLE_H
#define HVNOISE_PICKLE_H

#include "inputs/json.h"

/* Whether @buf starts as a pickle of protocol 2 or later does (PROTO). */
bool hvn_pickle_is(const void *buf, size_t len);
/* NULL with @err (the opcode and its byte offset) on failure. */
struct json *hvn_pickle_parse(const void *buf, size_t len, char *err, size_t errlen);

#endif
