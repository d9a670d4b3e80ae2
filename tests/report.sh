# make check's report (bash; sourced by tests/check.sh): every stage's
# results as one KTAP document, and the count CI reads.
#
#   KTAP version 1
#       KTAP version 1
#       # Subtest: unit
#       # userspace unit tests (ASan/UBSan)
#       ok 1 unit/hvnoise_cpulist.cpulist_single_and_ranges
#       ...
#       1..45
#   ok 1 unit
#       ...
#       ok 1 build/5.10 W=1 without warnings # SKIP no 5.10 headers: ...
#       ...
#   1..18
#   512 passed, 0 failed, 1 skipped
#
# Each stage is a subtest, its checks numbered from 1; a stage is "not ok"
# if one of its checks is, "ok ... # SKIP" if all were skipped.  A check is
# "ok", "not ok", "ok ... # SKIP REASON" (it cannot run here: a kernel tree
# is missing) or "ok ... # XFAIL REASON" (a failure let through, and said to
# be one).  The last line counts the checks: "N passed, N failed", then ",
# N skipped" and ", N xfail" where there are any.  The stage scripts print
# KTAP of their own (tests/host/hvntest.py, hvntest.sh, tests/vm/guest-lib.sh);
# collect takes their result lines, numbered again here.  results.txt holds
# the KTAP alone; the terminal also gets each stage's human summary and
# failure details as "# " lines.
#
#   report_init FILE              start (FILE: results.txt)
#   stage NAME DESCRIPTION...     a new stage (ends the one before); status 1
#                                 if HVN_STAGES leaves it out: its checks and
#                                 collects are then not reported, nor run
#   report_want NAME              whether HVN_STAGES (a list of stage names;
#                                 empty: all) holds NAME
#   pass NAME | fail NAME         one check
#   skip NAME REASON | xfail NAME REASON
#   collect LOG CMD...            run CMD into LOG, take its results; CMD's status
#   results_from LOG              take the results a log holds (a VM's console)
#   diag                          stdin to the terminal as "# " lines
#   report_finish                 the plan, the failures and the count; status 1
#                                 if any check failed
# shellcheck shell=bash

report_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

report_init() {
	report_file=$1
	: >"$report_file"
	report_stage="" report_nstages=0 report_n=0
	report_npass=0 report_nfail=0 report_nskip=0 report_nxfail=0
	report_sstatus="" report_failed=()
	report_out "KTAP version 1"
}

report_out() { printf '%s\n' "$*" | tee -a "$report_file"; }

diag() {
	if [ -n "$report_stage" ]; then sed 's/^/    # /'; else sed 's/^/# /'; fi
}

stage_end() {
	[ -n "$report_stage" ] || return 0
	local status=ok directive=""
	report_out "    1..$report_n"
	case $report_sstatus in
	fail) status="not ok" ;;
	"") directive=" # SKIP no checks ran" ;;
	skip) directive=" # SKIP every check skipped" ;;
	esac
	report_out "$status $report_nstages $report_stage$directive"
	report_stage=""
}

report_want() {
	[ -z "${HVN_STAGES:-}" ] || [[ " $HVN_STAGES " == *" $1 "* ]]
}

stage() {
	stage_end
	report_off=0
	if ! report_want "$1"; then
		report_off=1
		return 1
	fi
	report_stage=$1
	shift
	report_nstages=$((report_nstages + 1))
	report_n=0 report_sstatus=""
	echo
	report_out "    KTAP version 1"
	report_out "    # Subtest: $report_stage"
	echo "$*" | diag
}

# result ok|"not ok" NAME [DIRECTIVE]: one check of the stage.
result() {
	local status=$1 name=$2 directive=${3:-}
	[ "${report_off:-0}" = 0 ] || return 0
	report_n=$((report_n + 1))
	report_out "    $status $report_n $name${directive:+ # $directive}"
	if [ "$status" != ok ]; then
		report_nfail=$((report_nfail + 1))
		report_sstatus=fail
		report_failed+=("$report_stage: $name")
		return
	fi
	case $directive in
	SKIP*)
		report_nskip=$((report_nskip + 1))
		[ -n "$report_sstatus" ] || report_sstatus=skip
		;;
	XFAIL*)
		report_nxfail=$((report_nxfail + 1))
		[ "$report_sstatus" = fail ] || report_sstatus=ok
		;;
	*)
		report_npass=$((report_npass + 1))
		[ "$report_sstatus" = fail ] || report_sstatus=ok
		;;
	esac
}
pass() { result ok "$1"; }
fail() { result "not ok" "$1"; }
skip() { result ok "$1" "SKIP $2"; }
xfail() { result ok "$1" "XFAIL $2"; }

results_from() {
	local status name directive
	[ -f "$1" ] || return 0
	while IFS=$'\t' read -r status name directive; do
		result "$status" "$name" "$directive"
	done < <(python3 "$report_here/host/hvntest.py" results "$1")
}

collect() {
	local log=$1 rc n
	shift
	[ "${report_off:-0}" = 0 ] || return 0
	# Each command's numbering is its own: the stage numbers them again.
	HVN_KTAP_COUNTER='' "$@" >"$log" 2>&1
	rc=$?
	n=$report_nfail
	results_from "$log"
	# What a failed check printed after itself is its reason: keep it.
	[ "$report_nfail" = "$n" ] || awk '
		/^[[:space:]]*(not )?ok [0-9]/ {
			on = /^[[:space:]]*not ok/; k = 0
			if (on) { sub(/^[[:space:]]*/, ""); print "after \"" $0 "\":" }
			next
		}
		on && k++ < 20' "$log" | diag
	# A test that exits non-zero without a failed check (could not run, not
	# executable, died on the way) is a failure, never a stage that passed.
	if [ $rc -ne 0 ] && [ "$report_nfail" = "$n" ]; then
		tail -8 "$log" | diag
		fail "$report_stage/$(basename "$1") ran to its end (exit $rc)"
	fi
	return $rc
}

report_finish() {
	local line f
	stage_end
	report_out "1..$report_nstages"
	echo
	if [ "$report_nfail" -gt 0 ]; then
		echo "# Failed checks:"
		for f in "${report_failed[@]}"; do
			echo "#   $f"
		done
	fi
	line="$report_npass passed, $report_nfail failed"
	[ "$report_nskip" -gt 0 ] && line="$line, $report_nskip skipped"
	[ "$report_nxfail" -gt 0 ] && line="$line, $report_nxfail xfail"
	echo "# $line" >>"$report_file"
	echo "$line"
	[ "$report_nfail" -eq 0 ]
}
