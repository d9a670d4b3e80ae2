#!/bin/bash
# The NCCL profiler plugin's cost per callback, in both modes, and whether
# file mode loses anything at that rate.  Run as root (marker mode writes
# into a tracefs instance of its own).  usage: bench/nccl-plugin.sh [N]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-200000}
make -s -C "$top" build/tools/nccl_fake build/tools/libnccl-profiler-hvnoise.so
fake=$top/build/tools/nccl_fake
lib=$top/build/tools/libnccl-profiler-hvnoise.so
tmp=$(mktemp -d)
inst=/sys/kernel/tracing/instances/hvnoise-bench-$$
trap 'rm -rf "$tmp"; rmdir "$inst" 2>/dev/null || true' EXIT

echo "== file mode (HVNOISE_NCCL_DIR), $n collectives"
HVNOISE_NCCL_DIR=$tmp "$fake" bench "$lib" "$n" 2>/dev/null
python3 - "$tmp" "$n" <<'PY'
import os, struct, sys
d, n = sys.argv[1], int(sys.argv[2])
f = [os.path.join(d, x) for x in os.listdir(d)][0]
b = open(f, "rb").read()
o, recs = 8, 0
while o + 8 <= len(b):
    _, size, _ = struct.unpack_from("<IHH", b, o)
    o += 8 + size
    recs += 1
want = 3 * n + 1          # comm + (coll, proxy op, kernel channel) each
print(f"records in the file: {recs}, expected {want}: {'none lost' if recs == want else 'LOST'}")
PY

echo "== trace_marker_raw mode (an instance of its own, tracing on), $n collectives"
mkdir "$inst"
echo 1 >"$inst/tracing_on"
HVNOISE_NCCL_TRACEFS=$inst "$fake" bench "$lib" "$n" 2>/dev/null
echo "ring buffer (nobody reads this instance, so it overwrites): $(grep -h -E '^(entries|overrun)' "$inst"/per_cpu/cpu*/stats | awk '{ s[$1] += $2 } END { printf "entries %d, overrun %d", s["entries:"], s["overrun:"] }')"
