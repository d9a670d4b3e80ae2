#!/usr/bin/env python3
"""Make a Documentation/*.rst page a manual page (rst2man input).

usage: rst2man-page.py PAGE.rst NAME SECTION "DESCRIPTION" >OUT.rst

The page's title becomes NAME with DESCRIPTION as its subtitle and the
docinfo rst2man takes the section from; ":doc:`x`" references (Sphinx
roles, unknown to docutils) become the man pages they are installed as,
or the .rst file for pages that are not.  The text itself is unchanged.
"""
import re
import sys

MAN = {"admin-guide": "hvnoise-admin(7)", "events": "hvnoise-events(7)",
       "forensics": "hvnoise-forensics(7)"}

src, name, section, descr = sys.argv[1:5]
text = open(src).read()
m = re.search(r"^(=+)\n(.+)\n\1\n", text, re.M)
if not m:
    sys.exit(f"rst2man-page: {src}: no title")
bar = "=" * (len(name) + 2)
sub = "-" * (len(descr) + 2)
head = (f"{bar}\n {name}\n{bar}\n\n{sub}\n {descr}\n{sub}\n\n"
        f":Manual section: {section}\n:Manual group: hvnoise\n\n")
body = text[m.end():]
body = re.sub(r":doc:`([\w-]+)`",
              lambda d: MAN.get(d.group(1), f"Documentation/{d.group(1)}.rst"), body)
sys.stdout.write(text[:m.start()] + head + body)
