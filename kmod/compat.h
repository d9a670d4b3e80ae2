/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences hvnoise depends on, decided by what the
 * headers define (feature probes), not by version numbers, so distro
 * backports are honoured.  Kernels covered: 5.10 to 6.12.
 */
#ifndef HVNOISE_COMPAT_H
#define HVNOISE_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/msi.h>

/*
 * Before 5.17 a device's MSI descriptors are a list walked with
 * for_each_pci_msi_entry(), and pci_irq_vector() WARNs when asked past the
 * allocated MSI-X vectors.  Later kernels keep them in an xarray and
 * pci_irq_vector() returns -EINVAL for a hole.
 */
#ifdef for_each_pci_msi_entry
#define HVN_HAVE_MSI_ENTRY_LIST	1
#else
#define HVN_HAVE_MSI_ENTRY_LIST	0
#endif

/* A hrtimer with its callback; HVN_HAVE_HRTIMER_SETUP comes from Kbuild. */
static inline void hvn_hrtimer_setup(struct hrtimer *t,
				     enum hrtimer_restart (*fn)(struct hrtimer *),
				     clockid_t clock, enum hrtimer_mode mode)
{
#if HVN_HAVE_HRTIMER_SETUP
	hrtimer_setup(t, fn, clock, mode);
#else
	hrtimer_init(t, clock, mode);
	t->function = fn;
#endif
}

#endif /* HVNOISE_COMPAT_H */
