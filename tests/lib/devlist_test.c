// SPDX-License-Identifier: GPL-2.0
/* Cases for kmod/lib/devlist.c (devices= parameter). */
#include "hvn_test.h"
#include "devlist.h"

static bool addr(const char *s, u32 *a)
{
	return hvn_pci_addr_parse(s, strlen(s), a);
}

static void devlist_pci_addr_forms(struct hvn_test *t)
{
	u32 a = 0;

	HT_EXPECT_TRUE(t, addr("0000:17:00.0", &a));
	HT_EXPECT_EQ(t, a, HVN_PCI_PACK(0, 0x17, 0));
	HT_EXPECT_TRUE(t, addr("0001:31:1f.7", &a));
	HT_EXPECT_EQ(t, HVN_PCI_DOMAIN(a), 1);
	HT_EXPECT_EQ(t, HVN_PCI_BUS(a), 0x31);
	HT_EXPECT_EQ(t, HVN_PCI_SLOT(a), 0x1f);
	HT_EXPECT_EQ(t, HVN_PCI_FUNC(a), 7);
	/* lspci's short form: domain 0. */
	HT_EXPECT_TRUE(t, addr("3b:00.1", &a));
	HT_EXPECT_EQ(t, a, HVN_PCI_PACK(0, 0x3b, 1));
	/* Upper-case hex and Hyper-V style domains. */
	HT_EXPECT_TRUE(t, addr("C1F3:0A:02.0", &a));
	HT_EXPECT_EQ(t, a, HVN_PCI_PACK(0xc1f3, 0x0a, 2 << 3));
}

static void devlist_pci_addr_bad(struct hvn_test *t)
{
	static const char * const bad[] = {
		"", "0000:17:00", "0000:17:00.", "0000:17:20.0", "0000:17:00.8",
		"00000:17:00.0", "0000:117:00.0", "0000:17:000.0", "0000:17:00.00",
		"zz:00.0", "0000:17:00.0:", "0000-17-00.0", "17.00.0",
		"0000::00.0", "100:00.0", "0000:17:00.0 ",
	};
	unsigned int i;
	u32 a;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		HT_EXPECT_FALSE(t, addr(bad[i], &a));
}

static void devlist_parse_lists(struct hvn_test *t)
{
	struct hvn_devlist l;
	char err[128], out[128];

	HT_EXPECT_EQ(t, hvn_devlist_parse("0000:17:00.0,0000:31:00.0\n", &l,
					  err, sizeof(err)), 0);
	HT_EXPECT_EQ(t, l.n, 2);
	HT_EXPECT_FALSE(t, l.autodetect);
	HT_EXPECT_EQ(t, hvn_devlist_format(out, sizeof(out), &l), 25);
	HT_EXPECT_STREQ(t, out, "0000:17:00.0,0000:31:00.0");

	/* Duplicates collapse, in any spelling. */
	HT_EXPECT_EQ(t, hvn_devlist_parse("17:00.0,0000:17:00.0", &l,
					  err, sizeof(err)), 0);
	HT_EXPECT_EQ(t, l.n, 1);

	HT_EXPECT_EQ(t, hvn_devlist_parse("auto", &l, err, sizeof(err)), 0);
	HT_EXPECT_TRUE(t, l.autodetect);
	HT_EXPECT_EQ(t, l.n, 0);
	hvn_devlist_format(out, sizeof(out), &l);
	HT_EXPECT_STREQ(t, out, "auto");

	HT_EXPECT_EQ(t, hvn_devlist_parse("auto,0000:03:00.0", &l, err,
					  sizeof(err)), 0);
	hvn_devlist_format(out, sizeof(out), &l);
	HT_EXPECT_STREQ(t, out, "auto,0000:03:00.0");

	HT_EXPECT_EQ(t, hvn_devlist_parse("none\n", &l, err, sizeof(err)), 0);
	HT_EXPECT_EQ(t, l.n, 0);
	HT_EXPECT_FALSE(t, l.autodetect);
	hvn_devlist_format(out, sizeof(out), &l);
	HT_EXPECT_STREQ(t, out, "none");
}

static void devlist_parse_errors(struct hvn_test *t)
{
	struct hvn_devlist l;
	char err[128];

	HT_EXPECT_EQ(t, hvn_devlist_parse("", &l, err, sizeof(err)), -EINVAL);
	HT_EXPECT_SUBSTR(t, err, "empty device list");
	HT_EXPECT_EQ(t, hvn_devlist_parse("0000:17:00.0,,0000:31:00.0", &l,
					  err, sizeof(err)), -EINVAL);
	HT_EXPECT_SUBSTR(t, err, "empty item");
	HT_EXPECT_EQ(t, hvn_devlist_parse("0000:17:00.0,", &l, err,
					  sizeof(err)), -EINVAL);
	HT_EXPECT_SUBSTR(t, err, "trailing comma");
	HT_EXPECT_EQ(t, hvn_devlist_parse("0000:17:00.0,0000:zz:00.0", &l,
					  err, sizeof(err)), -EINVAL);
	HT_EXPECT_SUBSTR(t, err, "\"0000:zz:00.0\": not a PCI address");
	HT_EXPECT_EQ(t, hvn_devlist_parse("gpu0", &l, err, sizeof(err)),
		     -EINVAL);
	HT_EXPECT_SUBSTR(t, err, "\"gpu0\"");
}

static void devlist_too_many(struct hvn_test *t)
{
	char in[HVN_MAX_DEVICES * 13 + 16], err[128];
	struct hvn_devlist l;
	size_t pos = 0;
	int i;

	for (i = 0; i <= HVN_MAX_DEVICES; i++)
		pos += (size_t)snprintf(in + pos, sizeof(in) - pos, "%s%02x:00.0",
					i ? "," : "", i);
	HT_EXPECT_EQ(t, hvn_devlist_parse(in, &l, err, sizeof(err)), -EINVAL);
	HT_EXPECT_SUBSTR(t, err, "more than");
	/* Exactly the maximum is fine. */
	in[pos - 8] = '\0';
	HT_EXPECT_EQ(t, hvn_devlist_parse(in, &l, err, sizeof(err)), 0);
	HT_EXPECT_EQ(t, l.n, HVN_MAX_DEVICES);
}

static void devlist_auto_match(struct hvn_test *t)
{
	HT_EXPECT_TRUE(t, hvn_pci_auto_match(0x10de, 0x030200));	/* 3D */
	HT_EXPECT_TRUE(t, hvn_pci_auto_match(0x10de, 0x030000));	/* VGA */
	HT_EXPECT_FALSE(t, hvn_pci_auto_match(0x10de, 0x068000));	/* NVSwitch */
	HT_EXPECT_FALSE(t, hvn_pci_auto_match(0x1002, 0x030200));	/* not NVIDIA */
	HT_EXPECT_TRUE(t, hvn_pci_auto_match(0x15b3, 0x020700));	/* InfiniBand */
	HT_EXPECT_TRUE(t, hvn_pci_auto_match(0x1af4, 0x020000));	/* Ethernet */
	HT_EXPECT_FALSE(t, hvn_pci_auto_match(0x1af4, 0x010000));	/* storage */
}

static struct ht_case devlist_cases[] = {
	HT_CASE(devlist_pci_addr_forms),
	HT_CASE(devlist_pci_addr_bad),
	HT_CASE(devlist_parse_lists),
	HT_CASE(devlist_parse_errors),
	HT_CASE(devlist_too_many),
	HT_CASE(devlist_auto_match),
	{}
};

HT_SUITE(devlist, devlist_cases);
