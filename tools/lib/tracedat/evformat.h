/* SPDX-License-Identifier: GPL-2.0 */
/* Format files for the hvnoise events the BPF collector records. */
#ifndef HVNOISE_FORMATS_H
#define HVNOISE_FORMATS_H

#include <stddef.h>
#include "hvnoise/event_layout.h"

/* Their ids: HVN_BPF_EVID() of hvnoise/event_layout.h. */

/* "steal", "lost", ...; NULL for an unknown id. */
const char *hvn_fmt_name(int ev);
/* The format file text of @ev (malloc'd), with the common fields of the
 * kernel whose tracefs is @tdir (NULL: the standard ones). */
char *hvn_fmt_event(int ev, const char *tdir, size_t *len);

#endif
