#!/bin/sh
# Debian 12's Prometheus server and promtool, and its node_exporter (for the
# textfile collector the hvnoise-exporter unit writes to), for the tests,
# unpacked into the cache (apt-get download, dpkg -x): installing the
# packages would start servers on :9090 and :9100 on the machine that runs
# the tests.
#
# Prints the directory that holds prometheus, promtool and
# prometheus-node-exporter.
set -eu

cache=${HVNOISE_CACHE:-${HOME:-/root}/.cache/hvnoise}
root=$cache/prometheus
mkdir -p "$root"
exec 9>"$root/.lock"
flock 9

bin=$root/tree/usr/bin
if [ -x "$bin/prometheus" ] && [ -x "$bin/promtool" ] &&
	[ -x "$bin/prometheus-node-exporter" ] && [ -f "$root/tree/.done" ]; then
	echo "$bin"
	exit 0
fi
rm -rf "$root/debs" "$root/tree"
mkdir -p "$root/debs" "$root/tree"
(cd "$root/debs" && apt-get -q download prometheus prometheus-node-exporter >&2) || {
	echo "fetch-prometheus: apt-get download prometheus prometheus-node-exporter failed (run apt-get update?)" >&2
	exit 1
}
dpkg -x "$root"/debs/prometheus_*.deb "$root/tree"
dpkg -x "$root"/debs/prometheus-node-exporter_*.deb "$root/tree"
touch "$root/tree/.done"
echo "$bin"
