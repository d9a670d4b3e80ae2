// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel-only cases: hvnoise's parsers against the kernel's own notions,
 * bitmap_parselist() for cpulists and pci_name() for PCI addresses.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/module.h>
#include <linux/pci.h>
#include "cpulist.h"
#include "devlist.h"

#define NB 64

static void crosscheck_cpulist_vs_bitmap_parselist(struct kunit *t)
{
	static const char * const lists[] = {
		"0", "63", "0-63", "1,3,5", "2-5,12", "12,2-5", "0-4,2-6",
		"0-15:2/4", "1-9:1/4", "0-63:3/8", "7-7", "0-0:1/1",
	};
	DECLARE_BITMAP(ours, NB);
	DECLARE_BITMAP(theirs, NB);
	char err[128];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lists); i++) {
		KUNIT_EXPECT_EQ(t, hvn_cpulist_parse(lists[i], ours, NB, err,
						     sizeof(err)), 0);
		KUNIT_EXPECT_EQ(t, bitmap_parselist(lists[i], theirs, NB), 0);
		KUNIT_EXPECT_TRUE_MSG(t, bitmap_equal(ours, theirs, NB),
				      "cpulist \"%s\"", lists[i]);
	}
}

/*
 * Where the kernel rejects, so do we.  (We are stricter than the kernel
 * elsewhere: it takes "1,,2", "1," and "1-4:0/2" silently; we name the problem.)
 */
static void crosscheck_cpulist_both_reject(struct kunit *t)
{
	static const char * const lists[] = {
		"64", "5-3", "1-4:3/2", "a", "0-64",
	};
	DECLARE_BITMAP(map, NB);
	char err[128];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lists); i++) {
		KUNIT_EXPECT_EQ(t, hvn_cpulist_parse(lists[i], map, NB, err,
						     sizeof(err)), -EINVAL);
		KUNIT_EXPECT_NE_MSG(t, bitmap_parselist(lists[i], map, NB), 0,
				    "cpulist \"%s\"", lists[i]);
	}
}

/* Every PCI device the kernel knows parses back to its own address. */
static void crosscheck_pci_name_roundtrip(struct kunit *t)
{
	struct pci_dev *pdev = NULL;
	unsigned int n = 0;
	u32 a;

	for_each_pci_dev(pdev) {
		const char *name = pci_name(pdev);

		KUNIT_EXPECT_TRUE_MSG(t, hvn_pci_addr_parse(name, strlen(name),
							    &a), "%s", name);
		KUNIT_EXPECT_EQ(t, a, HVN_PCI_PACK(pci_domain_nr(pdev->bus),
						   pdev->bus->number,
						   pdev->devfn));
		n++;
	}
	/* The test VM has a virtio NIC and disk at least. */
	KUNIT_EXPECT_GE(t, n, 2U);
}

static struct kunit_case crosscheck_cases[] = {
	KUNIT_CASE(crosscheck_cpulist_vs_bitmap_parselist),
	KUNIT_CASE(crosscheck_cpulist_both_reject),
	KUNIT_CASE(crosscheck_pci_name_roundtrip),
	{}
};

static struct kunit_suite crosscheck_suite = {
	.name = "hvnoise_crosscheck",
	.test_cases = crosscheck_cases,
};
kunit_test_suites(&crosscheck_suite);

MODULE_DESCRIPTION("KUnit tests for hvnoise");
MODULE_LICENSE("GPL");
