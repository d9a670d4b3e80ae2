# What the host's test scripts share (bash; sourced), as tests/host/hvntest.py
# for the Python ones: the sanitizer options and KTAP output.
#
#   hvn_sanitizer_env         export ASAN/UBSAN/LSAN_OPTIONS of the ASan runs
#   $HVN_LSAN_OPTIONS         the LSan options alone (lsan.supp)
#
#   ktap_check STATUS NAME    "ok N NAME" if STATUS is 0, else "not ok N NAME"
#   ktap_skip NAME REASON     "ok N NAME # SKIP REASON": cannot run here
#   ktap_xfail NAME REASON    "ok N NAME # XFAIL REASON": a failure let through
#
# The numbers run on across the tests one run starts (host.sh starts
# corrupt.py): the first emitter makes the counter file HVN_KTAP_COUNTER,
# the others continue it; the first prints "KTAP version 1" before its first
# result and the plan when it exits.  Every other line is diagnostic.
# shellcheck shell=bash

HVN_LSAN_OPTIONS=suppressions=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lsan.supp:print_suppressions=0
# A leak or a UBSan report exits 99, which no exit code of hvnoise's is.
hvn_sanitizer_env() {
	export ASAN_OPTIONS=detect_leaks=1:exitcode=99 UBSAN_OPTIONS=halt_on_error=1:exitcode=99
	export LSAN_OPTIONS=$HVN_LSAN_OPTIONS
}

if [ -z "${HVN_KTAP_COUNTER:-}" ]; then
	HVN_KTAP_COUNTER=$(mktemp -u /tmp/hvn-ktap-XXXXXX)
	export HVN_KTAP_COUNTER
	ktap_owner=1
else
	ktap_owner=0
fi

ktap_line() {	# ktap_line ok|"not ok" NAME [DIRECTIVE]
	local n
	if [ -f "$HVN_KTAP_COUNTER" ]; then
		n=$(($(cat "$HVN_KTAP_COUNTER") + 1))
	else
		n=1
		echo "KTAP version 1"
	fi
	echo "$n" >"$HVN_KTAP_COUNTER"
	echo "$1 $n $2${3:+ # $3}"
}
ktap_check() { if [ "$1" = 0 ]; then ktap_line ok "$2"; else ktap_line "not ok" "$2"; fi; }
ktap_skip() { ktap_line ok "$1" "SKIP $2"; }
ktap_xfail() { ktap_line ok "$1" "XFAIL $2"; }

ktap_done() {
	[ "$ktap_owner" = 1 ] && [ -f "$HVN_KTAP_COUNTER" ] || return 0
	echo "1..$(cat "$HVN_KTAP_COUNTER")"
	rm -f "$HVN_KTAP_COUNTER"
}
# The plan at exit, keeping the script's exit status.
if [ "$ktap_owner" = 1 ]; then
	trap ktap_done EXIT
fi
