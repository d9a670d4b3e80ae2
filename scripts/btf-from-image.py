#!/usr/bin/env python3
"""Cut a kernel's BTF out of its boot Image, for bpftool.

Debian's arm64 kernel packages carry no ELF vmlinux, and bpftool reads BTF
only from ELF or raw files; the Image holds the raw .BTF section as is
(between __start_BTF and __stop_BTF).  Usage: btf-from-image.py IMAGE OUT.
A gzip'ed Image is unpacked first; a file that already is raw BTF is
copied.  A BTF header is taken where it holds together (magic 0xeb9f,
version 1, 24-byte header, types first, strings after them ending in NUL);
of several (BPF programs built into the kernel carry their own, far
smaller), the largest is the kernel's.
"""
import gzip
import struct
import sys

MAGIC = b"\x9f\xeb\x01\x00"	# magic 0xeb9f, version 1, flags 0
HDR = struct.Struct("<HBBIIIII")


def blobs(data):
    at = data.find(MAGIC)
    while at >= 0:
        if at + HDR.size <= len(data):
            _, _, _, hdr_len, type_off, type_len, str_off, str_len = \
                HDR.unpack_from(data, at)
            end = at + hdr_len + str_off + str_len
            if (hdr_len == HDR.size and type_off == 0 and type_len > 0 and
                    str_off == type_len and str_len > 0 and
                    end <= len(data) and data[end - 1] == 0 and
                    data[at + hdr_len + str_off] == 0):
                yield at, end
        at = data.find(MAGIC, at + 1)


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: btf-from-image.py IMAGE OUT")
    with open(argv[1], "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":	# a gzip'ed Image (vmlinuz)
        data = gzip.decompress(data)
    found = list(blobs(data))
    if not found:
        sys.exit(f"btf-from-image: {argv[1]}: no BTF found (a kernel without "
                 "CONFIG_DEBUG_INFO_BTF, or an Image compressed other than "
                 "by gzip, such as an EFI zboot one)")
    start, end = max(found, key=lambda b: b[1] - b[0])
    with open(argv[2], "wb") as f:
        f.write(data[start:end])


if __name__ == "__main__":
    main(sys.argv)
