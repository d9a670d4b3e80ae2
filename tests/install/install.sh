#!/bin/bash
# make install / uninstall into a DESTDIR, and the module under DKMS in
# private trees, against an installed kernel's headers (Debian 12's 6.1 in
# make check).  Nothing is loaded: the module is checked with modinfo.
#
# usage: install.sh WORKDIR [KDIR]   (KDIR: default scripts/kernel-dir.sh 6.1)
# Prints KTAP (tests/host/hvntest.sh), one result per check; without the
# headers, one SKIP.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/host/hvntest.sh"
d=$(realpath -m "$1")
kdir=${2:-$("$top/scripts/kernel-dir.sh" 6.1)} ||
	{ ktap_skip "install/kernel headers" "no 6.1 kernel headers (scripts/kernel-dir.sh 6.1)"; exit 0; }
kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h")
version=$(sed -n 's/^#define HVN_VERSION[^"]*"\(.*\)"/\1/p' "$top/include/hvnoise/version.h")
# Where trace-cmd and KernelShark load libtraceevent plugins from.
tep=$(pkg-config --variable=libdir libtraceevent)/traceevent/plugins
rm -rf "$d"
mkdir -p "$d"
cd "$top"

check() { ktap_check "$1" "install/$2"; }
files() { (cd "$1" && find . -type f | sed 's:^\.::' | sort); }
# The commands with a page of their own: the Makefile's list.
man8_cmds=$(sed -n 's/^MAN8_CMDS := //p' Makefile)
# Every file make install should put down, for PREFIX $1.
expected() {
	{
	for c in $man8_cmds; do
		echo "$1/share/man/man8/hvnoise-$c.8"
	done
	printf '%s\n' "$1/sbin/hvnoise" "$1/share/man/man8/hvnoise.8" \
		"$1/share/man/man7/hvnoise-admin.7" "$1/share/man/man7/hvnoise-events.7" \
		"$1/share/man/man7/hvnoise-forensics.7" \
		"$1/lib/libnccl-profiler-hvnoise.so" \
		"$tep/plugin_hvnoise.so" \
		"$1/lib/systemd/system/hvnoise-flight-recorder.service" \
		"$1/lib/systemd/system/hvnoise-exporter.service" \
		"$1/lib/systemd/system/hvnoise-exporter-http.service" \
		"$1/share/bash-completion/completions/hvnoise" \
		"$1/share/hvnoise/prometheus/hvnoise.rules.yml" \
		"$1/share/hvnoise/prometheus/hvnoise-dashboard.json" \
		"/lib/modules/$kver/updates/hvnoise.ko"
	} | sort
}

# --- make install / uninstall -------------------------------------------------
for prefix in /usr/local /usr; do
	root=$d/root${prefix//\//-}
	make -s install DESTDIR="$root" PREFIX="$prefix" KDIR="$kdir" >"$d/install.log" 2>&1
	rc=$?
	files "$root" >"$d/got"
	expected "$prefix" >"$d/want"
	[ $rc = 0 ] && diff -u "$d/want" "$d/got"
	check $? "make install DESTDIR PREFIX=$prefix puts down exactly the $(wc -l <"$d/want") files (exit $rc)"
done
root=$d/root-usr-local
v=$(modinfo -F vermagic "$root/lib/modules/$kver/updates/hvnoise.ko" 2>/dev/null | cut -d' ' -f1)
[ "$v" = "$kver" ]
check $? "the installed module is built for $kver (vermagic: ${v:-none})"
out=$("$root/usr/local/sbin/hvnoise" version 2>&1)
[ "$out" = "hvnoise $version" ]
check $? "the installed hvnoise runs (\"$out\")"
man -l "$root/usr/local/share/man/man8/hvnoise.8" 2>/dev/null | col -b >"$d/man.txt"
grep -q "hvnoise record" "$d/man.txt"
check $? "the installed man page renders"
# A page per command: its synopsis and its section.
ok=0
for c in $man8_cmds; do
	man -l "$root/usr/local/share/man/man8/hvnoise-$c.8" 2>/dev/null | col -b >"$d/man-$c.txt"
	grep -q "^SYNOPSIS" "$d/man-$c.txt" && grep -q "hvnoise $c " "$d/man-$c.txt" &&
		[ "$(wc -l <"$d/man-$c.txt")" -gt 20 ] || { ok=1; echo "  hvnoise-$c(8) does not render"; }
done
check $ok "each command's page renders, with its synopsis ($(echo $man8_cmds | wc -w): $man8_cmds)"
ok=0
for p in admin:DKMS events:unexplained_ns forensics:correlate; do
	man -l "$root/usr/local/share/man/man7/hvnoise-${p%%:*}.7" 2>/dev/null | col -b >"$d/man7.txt"
	grep -q "^NAME" "$d/man7.txt" && grep -q "hvnoise-${p%%:*}" "$d/man7.txt" &&
		grep -q "${p#*:}" "$d/man7.txt" || { echo "  hvnoise-${p%%:*}(7) lacks ${p#*:}"; ok=1; }
done
check $ok "hvnoise-admin(7), hvnoise-events(7), hvnoise-forensics(7) render from Documentation/"
strings /usr/lib/*/libtraceevent.so.1 >"$d/tep-strings"
grep -qx "$tep" "$d/tep-strings"
check $? "the plugin goes where libtraceevent loads plugins ($tep)"
ok=0
for u in "hvnoise-flight-recorder:flight-recorder --keep" \
	"hvnoise-exporter:exporter --textfile /var/lib/prometheus/node-exporter/" \
	"hvnoise-exporter-http:exporter --listen"; do
	unit=$root/usr/local/lib/systemd/system/${u%%:*}.service
	grep -q "^ExecStart=/usr/local/sbin/hvnoise ${u#*:}" "$unit" &&
		sed "s|/usr/local/sbin/hvnoise|$root/usr/local/sbin/hvnoise|" "$unit" >"$d/${u%%:*}.service" &&
		systemd-analyze verify --man=no "$d/${u%%:*}.service" >"$d/verify.log" 2>&1 ||
		{ cat "$d/verify.log"; ok=1; }
done
check $ok "the systemd units (flight recorder, exporter for node_exporter's textfile directory, exporter listening) name the installed hvnoise and pass systemd-analyze verify"
# The default exporter unit's command, as the unit runs it (its umask, its
# file), into a private directory: node_exporter's user must be able to read
# what it writes, and nothing else may be there once it stops.
unit=$root/usr/local/lib/systemd/system/hvnoise-exporter.service
um=$(sed -n 's/^UMask=//p' "$unit")
cmd=$(sed -n 's|^ExecStart=/usr/local/sbin/hvnoise|'"$root"'/usr/local/sbin/hvnoise|p' "$unit" |
	sed "s|/var/lib/prometheus/node-exporter/|$d/textfile/|")
mkdir -p "$d/textfile"
(umask "$um" && exec $cmd 2>"$d/textfile.err") &
xpid=$!
wait_file() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
wait_file "$d/textfile/hvnoise.prom"
kill -TERM $xpid 2>/dev/null
wait $xpid
rc=$?
[ $rc = 0 ] && [ "$(stat -c %a "$d/textfile/hvnoise.prom")" = 644 ] &&
	grep -q "^hvnoise_module_loaded " "$d/textfile/hvnoise.prom" &&
	grep -q "^hvnoise_exporter_updated_timestamp_seconds " "$d/textfile/hvnoise.prom" &&
	! grep -q "^process_\|^hvnoise_exporter_scrapes" "$d/textfile/hvnoise.prom" &&
	[ "$(ls "$d/textfile")" = hvnoise.prom ]
check $? "the textfile unit's command (umask $um) writes hvnoise.prom 0644 (no process_* metrics: node_exporter has its own), alone in its directory, and stops on SIGTERM (exit $rc)"
[ "$(stat -c %a "$root/usr/local/sbin/hvnoise")" = 755 ] &&
	[ "$(stat -c %a "$root/lib/modules/$kver/updates/hvnoise.ko")" = 644 ]
check $? "modes: tool 755, module 644"

before=$(files "$root" | wc -l)
make -s uninstall DESTDIR="$root" KDIR="$kdir" >"$d/uninstall.log" 2>&1
rc=$?
[ $rc = 0 ] && [ "$before" -gt 0 ] && [ -z "$(files "$root")" ]
check $? "make uninstall removes every file it installed (exit $rc, $before files before, $(files "$root" | wc -l) after)"

# A module built for another kernel is refused, not installed (KO=: the
# one built above, not rebuilt).
make -s install-module DESTDIR="$d/wrong" KDIR="$kdir" KVER=5.10.0-99-amd64 \
	KO="$top/kmod/hvnoise.ko" >"$d/wrong.log" 2>&1
rc=$?
[ $rc != 0 ] && grep -q "built for $kver, not 5.10.0-99-amd64" "$d/wrong.log" && [ ! -e "$d/wrong" ]
check $? "install-module refuses a module built for another kernel (exit $rc)"

# --- DKMS, in private trees (no change under /usr/src, /var/lib/dkms's
# module tree or /lib/modules) ----------------------------------------------------
if ! command -v dkms >/dev/null; then
	check 1 "dkms (not installed: scripts/install-deps.sh)"
	exit 1
fi
t=$d/dkms
mkdir -p "$t/src" "$t/tree" "$t/mods/$kver"
dk=(dkms --sourcetree "$t/src" --dkmstree "$t/tree" --installtree "$t/mods" --no-depmod)
start=$(date +%s.%N)
make -s dkms-install KVER="$kver" DKMS_SRC="$t/src" DKMS="${dk[*]}" >"$d/dkms.log" 2>&1
rc=$?
secs=$(echo "$(date +%s.%N) - $start" | bc)
ko=$t/mods/$kver/updates/dkms/hvnoise.ko
[ $rc = 0 ] && [ -f "$ko" ]
check $? "make dkms-install: dkms add, build, install for $kver (exit $rc, ${secs%??????} s)" ||
	tail -20 "$d/dkms.log"
st=$("${dk[@]}" status 2>&1)
echo "$st" | grep -q "^hvnoise/$version, $kver, [^:]*: installed"
check $? "dkms status: $st"
v=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
n=$(modinfo -F name "$ko" 2>/dev/null)
[ "$v" = "$kver" ] && [ "$n" = hvnoise ] && modinfo -F parm "$ko" | grep -q "^devices:"
check $? "the DKMS module is hvnoise.ko built for $kver (vermagic: ${v:-none}), with its parameters"
[ -L "$t/tree/hvnoise/$version/source" ] && [ -f "$t/src/hvnoise-$version/dkms.conf" ] &&
	! grep -q kunit "$t/src/hvnoise-$version/Kbuild"
check $? "DKMS source tree: dkms.conf and the module sources only"

"${dk[@]}" remove "hvnoise/$version" --all >"$d/dkms-remove.log" 2>&1
rc=$?
[ $rc = 0 ] && [ ! -e "$ko" ] && [ -z "$("${dk[@]}" status 2>&1)" ]
check $? "dkms remove --all: module and registration gone (exit $rc)"
