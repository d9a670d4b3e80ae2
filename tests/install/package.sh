#!/bin/bash
# The Debian packages (debian/): built from a copy of the tree with
# dpkg-buildpackage, lintian clean, then installed, upgraded to a later
# version built from the same tree and purged inside a throwaway overlay of
# this system (its changes land in a tmpfs, in a mount namespace of its
# own: nothing here changes).  DKMS builds the module against the 6.1
# headers there; that module is left in WORKDIR/dkms-hvnoise.ko, the
# packaged command in WORKDIR/root/usr/sbin/hvnoise, for the 6.1 guest
# (tests/vm/guest-package.sh).
#
# usage: package.sh WORKDIR KDIR     (root; KDIR: the 6.1 headers)
# Prints KTAP (tests/host/hvntest.sh), one result per check.
set -uo pipefail
if [ -z "${HVN_PKG_NS:-}" ] && [ "$(id -u)" = 0 ]; then
	exec env HVN_PKG_NS=1 unshare -m --propagation private "$0" "$@"
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/host/hvntest.sh"
d=$(realpath -m "$1") kdir=$2
check() { ktap_check "$1" "package/$2"; }
if [ "$(id -u)" != 0 ]; then
	ktap_skip "package/install" "not root: the overlay that dpkg installs into needs mounts"
	exit 0
fi
for t in dpkg-buildpackage lintian dh_dkms dkms; do
	command -v $t >/dev/null || { check 1 "$t is installed (scripts/install-deps.sh)"; exit 1; }
done
kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h")
version=$(sed -n 's/^#define HVN_VERSION[^"]*"\(.*\)"/\1/p' "$top/include/hvnoise/version.h")
# The upgrade: the same tree as a later version.
v2=$version.99
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
rm -rf "$d"
mkdir -p "$d"

# --- build and lintian -----------------------------------------------------------
start=$(date +%s)
(cd "$top" && make -s deb DEBDIR="$d/v1") >"$d/build-v1.log" 2>&1
rc=$?
debs1=("$d/v1/hvnoise_${version}_$arch.deb" "$d/v1/hvnoise-dkms_${version}_all.deb"
       "$d/v1/libnccl-profiler-hvnoise_${version}_$arch.deb")
ls "${debs1[@]}" >/dev/null 2>&1 && [ $rc = 0 ]
check $? "make deb (dpkg-buildpackage): source, hvnoise, hvnoise-dkms, libnccl-profiler-hvnoise $version ($(($(date +%s) - start)) s, exit $rc)" ||
	{ tail -30 "$d/build-v1.log"; exit 1; }
lintian -I -E --pedantic "$d/v1/hvnoise_${version}_$arch.changes" 2>&1 |
	grep -v "^running with root privileges" >"$d/lintian.txt"
[ ! -s "$d/lintian.txt" ]
check $? "lintian -I -E --pedantic: no error, warning, info or experimental tag on the source and binary packages ($(wc -l <"$d/lintian.txt") lines)" ||
	cat "$d/lintian.txt"

# What each package holds.
man8=$(sed -n 's/^MAN8_CMDS := //p' "$top/Makefile")
{
	for c in $man8; do echo "/usr/share/man/man8/hvnoise-$c.8.gz"; done
	for p in admin events forensics; do echo "/usr/share/man/man7/hvnoise-$p.7.gz"; done
	printf '%s\n' /usr/sbin/hvnoise /usr/share/man/man8/hvnoise.8.gz \
		/usr/share/bash-completion/completions/hvnoise \
		/usr/share/hvnoise/prometheus/hvnoise.rules.yml \
		/usr/share/hvnoise/prometheus/hvnoise-dashboard.json \
		"/usr/lib/$multiarch/traceevent/plugins/plugin_hvnoise.so" \
		/lib/systemd/system/hvnoise-flight-recorder.service \
		/lib/systemd/system/hvnoise-exporter.service \
		/lib/systemd/system/hvnoise-exporter-http.service \
		/usr/share/doc/hvnoise/changelog.gz /usr/share/doc/hvnoise/copyright \
		/usr/share/lintian/overrides/hvnoise
} | sort >"$d/want-hvnoise"
debfiles() { dpkg-deb --fsys-tarfile "$1" | tar tf - | grep -v '/$' | sed 's:^\./:/:' | sort; }
debfiles "${debs1[0]}" >"$d/got-hvnoise"
diff -u "$d/want-hvnoise" "$d/got-hvnoise"
check $? "hvnoise holds the command, $(($(echo $man8 | wc -w) + 4)) man pages, completion, units, Prometheus rules and dashboard, the libtraceevent plugin ($(wc -l <"$d/got-hvnoise") files)"
debfiles "${debs1[1]}" >"$d/got-dkms"
grep -qx "/usr/src/hvnoise-$version/dkms.conf" "$d/got-dkms" &&
	grep -qx "/usr/src/hvnoise-$version/kmod/main.c" "$d/got-dkms" &&
	grep -qx "/usr/src/hvnoise-$version/kmod/lib/storm.c" "$d/got-dkms" &&
	! grep -Ev "^/usr/src/hvnoise-$version/.*\.(c|h)$|/Kbuild$|/dkms.conf$|^/usr/share/doc/hvnoise-dkms/" "$d/got-dkms"
check $? "hvnoise-dkms holds dkms.conf and the module's sources only ($(wc -l <"$d/got-dkms") files)"
debfiles "${debs1[2]}" >"$d/got-nccl"
printf '%s\n' "/usr/lib/$multiarch/libnccl-profiler-hvnoise.so" \
	/usr/share/doc/libnccl-profiler-hvnoise/changelog.gz \
	/usr/share/doc/libnccl-profiler-hvnoise/copyright \
	/usr/share/lintian/overrides/libnccl-profiler-hvnoise | sort | diff -u - "$d/got-nccl"
check $? "libnccl-profiler-hvnoise holds the plugin in the loader's path"

mkdir -p "$d/v2"
cp -a "$d/v1/hvnoise-$version" "$d/v2/hvnoise-$v2"
(
	cd "$d/v2/hvnoise-$v2" &&
	sed -i "s/^\(#define HVN_VERSION[^\"]*\)\"$version\"/\1\"$v2\"/" include/hvnoise/version.h &&
	sed -i "s/^PACKAGE_VERSION=\"$version\"/PACKAGE_VERSION=\"$v2\"/" dkms.conf &&
	{ printf 'hvnoise (%s) unstable; urgency=medium\n\n  * The upgrade test.\n\n -- %s  %s\n\n' \
		"$v2" "$(sed -n 's/^Maintainer: //p' debian/control)" "$(date -R)"
	  cat debian/changelog; } >debian/changelog.new && mv debian/changelog.new debian/changelog &&
	dpkg-buildpackage -us -uc -b
) >"$d/build-v2.log" 2>&1
rc=$?
debs2=("$d/v2/hvnoise_${v2}_$arch.deb" "$d/v2/hvnoise-dkms_${v2}_all.deb"
       "$d/v2/libnccl-profiler-hvnoise_${v2}_$arch.deb")
ls "${debs2[@]}" >/dev/null 2>&1 && [ $rc = 0 ]
check $? "the same tree as version $v2, for the upgrade (exit $rc)" || { tail -30 "$d/build-v2.log"; exit 1; }

# --- install, upgrade, purge in an overlay of this system -----------------------
# The upper layer is a tmpfs of this mount namespace: what dpkg, DKMS and
# the maintainer scripts change is there, and nowhere else.
o=$d/overlay
mkdir -p "$o"
mount -t tmpfs -o size=2g hvn-pkg "$o" && mkdir -p "$o/upper" "$o/work" "$o/root" &&
	mount -t overlay hvn-pkg -o "lowerdir=/,upperdir=$o/upper,workdir=$o/work" "$o/root" &&
	mount --bind /proc "$o/root/proc" && mount --bind /sys "$o/root/sys" &&
	mount --bind /dev "$o/root/dev"
check $? "an overlay of / on a private tmpfs, to install into" || exit 1
r=$o/root
in_root() { chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }
mkdir -p "$r/tmp/hvn-debs"
cp "${debs1[@]}" "${debs2[@]}" "$r/tmp/hvn-debs/"
deb_in() { echo "/tmp/hvn-debs/$(basename "$1")"; }
ko=/lib/modules/$kver/updates/dkms/hvnoise.ko

in_root dpkg -i "$(deb_in "${debs1[0]}")" "$(deb_in "${debs1[1]}")" "$(deb_in "${debs1[2]}")" \
	>"$d/install.log" 2>&1
rc=$?
st=$(in_root dpkg-query -W -f='${Package} ${Version} ${Status}\n' hvnoise hvnoise-dkms libnccl-profiler-hvnoise 2>&1)
[ $rc = 0 ] && [ "$(echo "$st" | grep -c " $version install ok installed$")" = 3 ]
check $? "dpkg -i the three packages (exit $rc)" || { echo "$st"; tail -30 "$d/install.log"; }
st=$(in_root dkms status hvnoise 2>&1)
v=$(modinfo -F vermagic "$r$ko" 2>/dev/null | cut -d' ' -f1)
mv=$(modinfo -F version "$r$ko" 2>/dev/null)
echo "$st" | grep -q "^hvnoise/$version, $kver, [^:]*: installed" && [ "$v" = "$kver" ] && [ "$mv" = "$version" ]
check $? "the postinst's DKMS built and installed hvnoise $mv for $kver (vermagic ${v:-none}): $st" ||
	grep -i -A5 "error\|fail" "$d/install.log"
cp "$r$ko" "$d/dkms-hvnoise.ko" 2>/dev/null
out=$(in_root hvnoise version 2>&1)
[ "$out" = "hvnoise $version" ]
check $? "the installed command runs (\"$out\")"
in_root man -w hvnoise-correlate >"$d/man.txt" 2>&1 && in_root man -w 7 hvnoise-admin >>"$d/man.txt" 2>&1
check $? "man finds the installed pages: $(tr '\n' ' ' <"$d/man.txt")"
ok=0
for u in hvnoise-flight-recorder hvnoise-exporter hvnoise-exporter-http; do
	f=/lib/systemd/system/$u.service
	grep -q "^ExecStart=/usr/sbin/hvnoise " "$r$f" &&
		in_root systemd-analyze verify --man=no "$f" >"$d/verify.log" 2>&1 ||
		{ cat "$d/verify.log"; ok=1; }
	# Installed, not enabled nor started: the admin chooses (hvnoise-admin(7)).
	ls "$r"/etc/systemd/system/*.wants/$u.service >/dev/null 2>&1 && { echo "  $u enabled"; ok=1; }
done
check $ok "the units run /usr/sbin/hvnoise, pass systemd-analyze verify, and are not enabled on install"
# NCCL_PROFILER_PLUGIN=hvnoise: NCCL dlopens libnccl-profiler-hvnoise.so by
# name; the ldconfig trigger put it in the loader's cache.
in_root ldconfig -p >"$d/ldcache.txt"
grep -q "libnccl-profiler-hvnoise.so .*=> \(/usr\)\?/lib/$multiarch/libnccl-profiler-hvnoise.so$" "$d/ldcache.txt" &&
	in_root python3 -c 'import ctypes; ctypes.CDLL("libnccl-profiler-hvnoise.so").ncclProfiler_v6' 2>"$d/dlopen.err"
check $? "dlopen(\"libnccl-profiler-hvnoise.so\") by name finds the plugin and its ncclProfiler_v6" ||
	cat "$d/dlopen.err"
tep=$(pkg-config --variable=libdir libtraceevent)/traceevent/plugins
[ -f "$r$tep/plugin_hvnoise.so" ]
check $? "the libtraceevent plugin is where trace-cmd loads plugins ($tep)"
# What the guest runs: the packaged command, as installed.
mkdir -p "$d/root/usr/sbin"
cp "$r/usr/sbin/hvnoise" "$d/root/usr/sbin/hvnoise"

in_root dpkg -i "$(deb_in "${debs2[0]}")" "$(deb_in "${debs2[1]}")" "$(deb_in "${debs2[2]}")" \
	>"$d/upgrade.log" 2>&1
rc=$?
st=$(in_root dkms status hvnoise 2>&1)
mv=$(modinfo -F version "$r$ko" 2>/dev/null)
[ $rc = 0 ] && echo "$st" | grep -q "^hvnoise/$v2, $kver, [^:]*: installed" &&
	[ "$(echo "$st" | grep -c .)" = 1 ] && [ "$mv" = "$v2" ] &&
	[ ! -e "$r/usr/src/hvnoise-$version" ] && [ -d "$r/usr/src/hvnoise-$v2" ] &&
	[ "$(in_root hvnoise version 2>&1)" = "hvnoise $v2" ]
check $? "upgrade to $v2: DKMS holds $v2 alone, rebuilt for $kver ($mv), the old sources gone, the command is $v2 (exit $rc): $st" ||
	tail -30 "$d/upgrade.log"

in_root dpkg --purge hvnoise hvnoise-dkms libnccl-profiler-hvnoise >"$d/purge.log" 2>&1
rc=$?
st=$(in_root dpkg-query -W -f='${Package} ${Status}\n' hvnoise hvnoise-dkms libnccl-profiler-hvnoise 2>&1)
[ $rc = 0 ] && ! echo "$st" | grep -q "installed\|config-files"
check $? "dpkg --purge the three packages (exit $rc)" || { echo "$st"; tail -20 "$d/purge.log"; }
# Left behind: every path the overlay's upper layer holds that names hvnoise
# or its plugin, or holds their names (but dpkg's own records of what it
# did: its log, its database's backups and the packages' list files, which
# dpkg keeps for no package that is gone).
rm -rf "$r/tmp/hvn-debs"
(cd "$o/upper" && find . -path ./tmp -prune -o -print | sed 's:^\.::' | sort) >"$d/upper.txt"
grep -i "hvnoise\|nccl-profiler" "$d/upper.txt" >"$d/left.txt"
(cd "$o/upper" && grep -rlI "hvnoise" . 2>/dev/null | sed 's:^\.::' |
	grep -v "^/var/log/dpkg.log$\|^/var/lib/dpkg/status-old$\|^/var/lib/dpkg/available-old$\|^/var/cache/debconf/") >>"$d/left.txt"
grep -q "^/var/lib/dpkg/info/hvnoise" "$d/upper.txt" && echo "/var/lib/dpkg/info/hvnoise*" >>"$d/left.txt"
[ ! -s "$d/left.txt" ]
check $? "nothing of hvnoise is left after the purge ($(wc -l <"$d/upper.txt") paths changed in the overlay, none naming hvnoise)" ||
	sed 's/^/  left: /' "$d/left.txt"
in_root ldconfig -p >"$d/ldcache.txt"
! grep -q libnccl-profiler-hvnoise "$d/ldcache.txt" && [ ! -e "$r$ko" ] && [ -z "$(in_root dkms status hvnoise 2>&1)" ]
check $? "the loader's cache, DKMS and /lib/modules/$kver no longer know hvnoise"
umount "$r/dev" "$r/sys" "$r/proc" "$r" "$o"
exit 0
