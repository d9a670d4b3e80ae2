/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hvnoise's version, one for the module (MODULE_VERSION, so that
 * /sys/module/hvnoise/version and modinfo say it) and the tools: hvnoise
 * status compares the two.  dkms.conf's PACKAGE_VERSION and the Makefile's
 * VERSION are read from here.
 */
#ifndef HVNOISE_VERSION_H
#define HVNOISE_VERSION_H

#define HVN_VERSION		"0.4"

#endif /* HVNOISE_VERSION_H */
