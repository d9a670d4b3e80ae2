#!/bin/bash
# KernelShark on hvnoise's files: its data library (libkshark, what the GUI
# loads) must decode every hvnoise event and NCCL record as trace-cmd
# report does with the same plugin, at the same times (the DATE option
# applied); the GUI must open the file under Xvfb, and its window is kept
# as a screenshot.
#
# usage: kernelshark.sh OUTDIR PLUGIN_DIR FILE...   (the first FILE goes to
# the GUI).  Prints KTAP (tests/host/hvntest.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/hvntest.sh"
d=$(realpath -m "$1") plugins=$(realpath "$2")
shift 2
mkdir -p "$d"
check() { ktap_check "$1" "kernelshark/$2"; }
export TRACEEVENT_PLUGIN_DIR=$plugins

# --- libkshark ---------------------------------------------------------------
gcc -std=c11 -Wall -Wextra -Werror -isystem /usr/include/kernelshark \
	-o "$d/kshark_dump" "$here/kshark_dump.c" -lkshark 2>"$d/build.err"
check $? "kshark_dump builds against libkshark ($(pkg-config --modversion libkshark 2>/dev/null))"
for f in "$@"; do
	n=$(basename "$f")
	"$d/kshark_dump" "$f" >"$d/$n.ks" 2>"$d/$n.ks.err"
	rc=$?
	trace-cmd report -t -i "$f" >"$d/$n.tc" 2>"$d/$n.tc.err"
	rct=$?
	# Both as "CPU TS EVENT INFO": trace-cmd's "comm-pid [cpu] s.ns: event: info".
	sed -n 's/^.*\[\([0-9]*\)\] *\([0-9]*\)\.\([0-9]\{9\}\): \([a-z_]*\): *\(.*\)$/\1 \2\3 \4 \5/p' \
		"$d/$n.tc" | awk '{ $1 += 0; sub(/^0+/, "", $2); print }' >"$d/$n.tc.rows"
	sed 's|^\([0-9]*\) \([0-9]*\) [a-z_]*/|\1 \2 |' "$d/$n.ks" | awk '{ $1 = $1; print }' >"$d/$n.ks.rows"
	ours=$(grep -cE "^[0-9]+ [0-9]+ (watch|steal|lost|irq_storm|irq_storm_begin|irq_migrate|raw_data) " "$d/$n.ks.rows")
	# The first file is one of hvnoise's own: it must have some.
	[ $rc = 0 ] && [ $rct = 0 ] && { [ "$ours" -gt 0 ] || [ "$f" != "$1" ]; } &&
		! grep -q "FAILED TO PARSE\|\[UNKNOWN" "$d/$n.ks" &&
		diff <(sort "$d/$n.tc.rows") <(sort "$d/$n.ks.rows") >"$d/$n.diff"
	check $? "$n: KernelShark's data holds each of trace-cmd report's $(wc -l <"$d/$n.tc.rows") events with the same CPU, time and decoded fields ($ours hvnoise events and NCCL records; exits $rc, $rct)"
	[ -s "$d/$n.diff" ] && head -5 "$d/$n.diff" | sed 's/^/  /'
done

# --- the GUI, as a user (it warns root away) under Xvfb ------------------------
# Its files under /tmp: the clone may be in a directory nobody cannot enter.
gui=$1
g=$(mktemp -d /tmp/hvnoise-kshark.XXXXXX)
mkdir -p "$g/home" "$g/plugins"
cp "$gui" "$g/"
cp "$plugins"/plugin_hvnoise.so "$g/plugins/"
chmod 755 "$g" "$g/plugins"
chmod 644 "$g/$(basename "$gui")"
chown nobody "$g/home"
exec 5>"$d/xvfb.display"
Xvfb -displayfd 5 -screen 0 1280x800x24 -nolisten tcp >"$d/xvfb.log" 2>&1 &
xpid=$!
for _ in $(seq 100); do [ -s "$d/xvfb.display" ] && break; sleep 0.1; done
export DISPLAY=:$(cat "$d/xvfb.display")
runuser -u nobody -- env HOME="$g/home" XDG_RUNTIME_DIR= \
	TRACEEVENT_PLUGIN_DIR="$g/plugins" kernelshark "$g/$(basename "$gui")" \
	>"$d/gui.log" 2>&1 &
kpid=$!
title="Kernel Shark ($g/$(basename "$gui"))"
win=""
for _ in $(seq 300); do
	win=$(xwininfo -root -tree 2>/dev/null | grep -F "\"$title\"" | awk '{print $1}')
	[ -n "$win" ] && break
	kill -0 $kpid 2>/dev/null || break
	sleep 0.1
done
if [ -n "$win" ]; then
	xwd -id "$win" -silent | xwdtopnm 2>/dev/null | pnmtopng >"$d/kernelshark.png" 2>/dev/null
fi
size=$(stat -c %s "$d/kernelshark.png" 2>/dev/null || echo 0)
kill -0 $kpid 2>/dev/null
alive=$?
[ -n "$win" ] && [ $alive = 0 ] && [ "$size" -gt 20000 ] && grep -q "^Loading" "$d/gui.log"
check $? "kernelshark opens $(basename "$gui") under Xvfb, its window titled with the file ($d/kernelshark.png, $size bytes)"
kill $kpid $xpid 2>/dev/null
wait $kpid $xpid 2>/dev/null
rm -rf "$g"
ktap_done
