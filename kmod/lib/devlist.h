/* SPDX-License-Identifier: GPL-2.0 */
/* The devices= parameter: PCI addresses of the GPUs and NICs to watch. */
#ifndef HVN_DEVLIST_H
#define HVN_DEVLIST_H

#include "hvn_types.h"
#include "hvnoise/watch.h"

struct hvn_devlist {
	bool autodetect;	/* "auto": NVIDIA GPUs and network controllers */
	unsigned int n;
	u32 addr[HVN_MAX_DEVICES];	/* HVN_PCI_PACK() form, no duplicates */
};

/*
 * Parse a PCI address, DDDD:BB:DD.F or BB:DD.F (hex, as lspci prints it),
 * of @len characters into its packed form.  Returns false if malformed.
 */
bool hvn_pci_addr_parse(const char *s, size_t len, u32 *addr);

/*
 * Parse a comma-separated list of PCI addresses and/or "auto", or "none".
 * An empty string is an error; one trailing newline is ignored.  On error
 * returns -EINVAL with a one-line reason naming the bad item in @err.
 */
int hvn_devlist_parse(const char *s, struct hvn_devlist *out,
		      char *err, size_t errlen);

/* Write @l back in the form hvn_devlist_parse() takes; -ENOSPC if too long. */
int hvn_devlist_format(char *buf, size_t len, const struct hvn_devlist *l);

/* Whether devices=auto picks a device: an NVIDIA display/3D controller, or
 * any network or InfiniBand controller.  @class is the 24-bit class code.
 */
bool hvn_pci_auto_match(u16 vendor, u32 class);

#endif /* HVN_DEVLIST_H */
