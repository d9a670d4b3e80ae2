// SPDX-License-Identifier: GPL-2.0
/* devices= parsing and formatting, shared by hvnoise.ko and its tests. */
#include "devlist.h"

#define PCI_VENDOR_NVIDIA	0x10de
#define PCI_BASECLASS_NETWORK	0x02	/* Ethernet 0x0200, InfiniBand 0x0207 */
#define PCI_BASECLASS_DISPLAY	0x03	/* VGA 0x0300, 3D 0x0302 */
#define ITEM_QUOTE		24

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* 1..maxdigits hex digits at *p, stopping at a non-hex character. */
static bool hexfield(const char **p, const char *end, unsigned int maxdigits,
		     unsigned int *out)
{
	unsigned int v = 0, n = 0;
	int d;

	while (*p < end && (d = hexval(**p)) >= 0) {
		if (++n > maxdigits)
			return false;
		v = v * 16 + (unsigned int)d;
		(*p)++;
	}
	*out = v;
	return n > 0;
}

bool hvn_pci_addr_parse(const char *s, size_t len, u32 *addr)
{
	const char *p = s, *end = s + len;
	unsigned int f1, f2, dom = 0, bus, slot, fn;
	const char *colon2;

	/* Two colons: domain given; one colon: domain 0. */
	colon2 = memchr(s, ':', len);
	colon2 = colon2 ? memchr(colon2 + 1, ':', (size_t)(end - colon2 - 1)) : NULL;

	if (!hexfield(&p, end, 4, &f1) || p >= end || *p++ != ':')
		return false;
	if (colon2) {
		dom = f1;
		if (!hexfield(&p, end, 2, &f2) || p >= end || *p++ != ':')
			return false;
		bus = f2;
	} else {
		bus = f1;
		if (bus > 0xff)
			return false;
	}
	if (!hexfield(&p, end, 2, &slot) || slot > 0x1f || p >= end ||
	    *p++ != '.')
		return false;
	if (!hexfield(&p, end, 1, &fn) || fn > 7 || p != end)
		return false;
	*addr = HVN_PCI_PACK(dom, bus, (slot << 3) | fn);
	return true;
}

int hvn_devlist_parse(const char *s, struct hvn_devlist *out,
		      char *err, size_t errlen)
{
	size_t len = strlen(s);
	const char *p = s, *end;
	unsigned int i;

	memset(out, 0, sizeof(*out));
	if (len && s[len - 1] == '\n')
		len--;
	end = s + len;
	if (!len) {
		snprintf(err, errlen,
			 "empty device list (write \"none\" to watch no devices)");
		return -EINVAL;
	}
	if (len == 4 && !memcmp(s, "none", 4))
		return 0;
	for (;;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end;
		size_t n = (size_t)(stop - p);
		u32 addr;

		if (n == 4 && !memcmp(p, "auto", 4)) {
			out->autodetect = true;
		} else if (!n) {
			snprintf(err, errlen, "empty item in device list");
			return -EINVAL;
		} else if (!hvn_pci_addr_parse(p, n, &addr)) {
			snprintf(err, errlen,
				 "\"%.*s\": not a PCI address (expected DDDD:BB:DD.F or \"auto\")",
				 (int)(n > ITEM_QUOTE ? ITEM_QUOTE : n), p);
			return -EINVAL;
		} else {
			for (i = 0; i < out->n && out->addr[i] != addr; i++)
				;
			if (i == out->n) {
				if (out->n == HVN_MAX_DEVICES) {
					snprintf(err, errlen,
						 "more than %d devices",
						 HVN_MAX_DEVICES);
					return -EINVAL;
				}
				out->addr[out->n++] = addr;
			}
		}
		if (!comma)
			return 0;
		p = comma + 1;
		if (p == end) {
			snprintf(err, errlen, "trailing comma in device list");
			return -EINVAL;
		}
	}
}

int hvn_devlist_format(char *buf, size_t len, const struct hvn_devlist *l)
{
	size_t pos = 0;
	unsigned int i;
	int n;

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	if (!l->autodetect && !l->n) {
		n = snprintf(buf, len, "none");
		return (size_t)n < len ? n : -ENOSPC;
	}
	if (l->autodetect) {
		n = snprintf(buf, len, "auto");
		if ((size_t)n >= len)
			return -ENOSPC;
		pos = (size_t)n;
	}
	for (i = 0; i < l->n; i++) {
		u32 a = l->addr[i];

		n = snprintf(buf + pos, len - pos, "%s%04x:%02x:%02x.%x",
			     pos ? "," : "", HVN_PCI_DOMAIN(a), HVN_PCI_BUS(a),
			     HVN_PCI_SLOT(a), HVN_PCI_FUNC(a));
		if (n < 0 || (size_t)n >= len - pos)
			return -ENOSPC;
		pos += (size_t)n;
	}
	return (int)pos;
}

bool hvn_pci_auto_match(u16 vendor, u32 class)
{
	unsigned int base = (class >> 16) & 0xff;

	if (base == PCI_BASECLASS_NETWORK)
		return true;
	return vendor == PCI_VENDOR_NVIDIA && base == PCI_BASECLASS_DISPLAY;
}
