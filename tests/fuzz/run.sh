#!/bin/bash
# Build the libFuzzer harnesses (clang, ASan/UBSan), seed them from files
# the tests made, run each for SECONDS, and replay every saved crash in
# tests/fuzz/regress/HARNESS/ first.  usage: run.sh SECONDS OUTDIR SEEDDIR [TRACE]
#   SEEDDIR: build/check/tools (host.sh's files); TRACE: a trace with clock
#   pairs for the correlate harness (default SEEDDIR/live.dat)
# Prints KTAP (tests/host/hvntest.sh), one result per harness with its
# executions.
set -uo pipefail
secs=$1 out=$2 seeds=$3 trace=${4:-$3/live.dat}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
. tests/host/hvntest.sh
mkdir -p "$out"
if ! make -s -j"$(nproc)" fuzz-build >"$out/build.log" 2>&1; then
	cat "$out/build.log"
	ktap_check 1 "fuzz/build"
	exit 0
fi

# Seed corpora from what the tests wrote.
corp=$out/corpus
rm -rf "$corp"
mkdir -p "$corp"/{tracedat,inputs,params,nccl,http,pickle,summary}
for f in "$seeds"/live.dat "$seeds"/live-zstd.dat "$seeds"/live-none.dat "$seeds"/job.dat; do
	[ -f "$f" ] && [ "$(stat -c %s "$f")" -lt 4000000 ] && cp "$f" "$corp/tracedat/"
done
i=0
for f in "$seeds"/inputs/nccl_trace_rank_0 "$seeds"/inputs/kineto_rank0.json "$seeds"/inputs/node0-pid100.log; do
	[ -f "$f" ] && { printf "\\x$(printf %02x $i)" >"$corp/inputs/seed$i"; head -c 20000 "$f" >>"$corp/inputs/seed$i"; }
	i=$((i + 1))
done
# Kineto traces of every shape the input tests make (CPU ops, all_to_all,
# kernel families, exact times), whole: the reader's paths past the JSON.
for f in "$seeds"/inputs/kineto-*/rank0.json; do
	[ -f "$f" ] && [ "$(stat -c %s "$f")" -lt 60000 ] &&
		{ printf '\x01'; cat "$f"; } >"$corp/inputs/$(basename "$(dirname "$f")")"
done
# Flight Recorder dumps as pickles (Python's, and the jit pickler's form).
for f in "$seeds"/inputs/fr-pickle/*; do
	[ -f "$f" ] && head -c 20000 "$f" >"$corp/pickle/$(basename "$f")"
done
for s in "0-3,8" "none" "0,2-5,64-127" "auto,0000:17:00.0" "17:00.0,0000:31:00.1" "1-0"; do
	printf '%s' "$s" >"$corp/params/$(echo "$s" | md5sum | cut -c1-8)"
done
# What Prometheus, curl and a scanner send.
printf 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9464\r\nUser-Agent: Prometheus/2.45.0\r\nAccept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n' >"$corp/http/prom"
printf 'HEAD /metrics?x=1 HTTP/1.0\n\n' >"$corp/http/head"
printf 'POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc' >"$corp/http/post"
# Two hosts' summaries (tests/host/fleet.py) as the harness splits its
# input: two bytes saying where the second begins, each without its magic.
h0=$seeds/fleet/small/host0.sum h1=$seeds/fleet/small/host1.sum
if [ -f "$h0" ] && [ -f "$h1" ]; then
	a=$(($(stat -c %s "$h0") - 8)) b=$(($(stat -c %s "$h1") - 8))
	{ printf "\\x$(printf %02x $((a >> 8 & 255)))\\x$(printf %02x $((a & 255)))"
	  tail -c +9 "$h0"; tail -c +9 "$h1"; } >"$corp/summary/two-hosts"
fi
for f in "$seeds"/nccl-files/*.bin; do
	[ -f "$f" ] && tail -c +9 "$f" | head -c 8000 >"$corp/nccl/seed"
done

export ASAN_OPTIONS=detect_leaks=1 HVN_FUZZ_TRACE=$trace
export LSAN_OPTIONS=$HVN_LSAN_OPTIONS
for h in tracedat inputs params nccl http pickle summary; do
	bin=build/fuzz/fuzz_$h
	ok=1
	# Crashes found before stay fixed.
	for r in tests/fuzz/regress/$h/*; do
		[ -f "$r" ] || continue
		"$bin" "$r" >"$out/$h-regress.log" 2>&1 || { ok=0; echo "  regression $r fails again"; }
	done
	rm -rf "$out/$h-crashes"
	mkdir -p "$out/$h-crashes"
	"$bin" -max_total_time="$secs" -print_final_stats=1 -rss_limit_mb=1024 -timeout=10 \
		-artifact_prefix="$out/$h-crashes/" "$corp/$h" >"$out/$h.log" 2>&1
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$h.log")
	if [ "$ok" = 1 ] && [ -z "$(ls "$out/$h-crashes")" ] && [ -n "$runs" ]; then
		ktap_check 0 "fuzz/$h: $runs executions in ${secs}s, no crash"
	else
		grep -E "ERROR|SUMMARY|runtime error" "$out/$h.log" | head -5
		ls "$out/$h-crashes" | head -3 | sed 's/^/  crash: /'
		ktap_check 1 "fuzz/$h: crashes in $out/$h-crashes (copy them to tests/fuzz/regress/$h/ once fixed)"
	fi
done
