#!/bin/sh
# Installs the Debian packages named as arguments when they are missing.
# As root it runs apt-get; otherwise it prints the exact command and fails.
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "mallocprof: missing packages; run: sudo apt-get install -y$missing" >&2
    exit 1
fi
# one installer at a time (the tests run in lanes): under the lock, what is
# still missing
exec 9>"${TMPDIR:-/tmp}/mallocprof-deps.lock" && flock 9
still=""
for p in $missing; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || still="$still $p"
done
missing=$still
[ -z "$missing" ] && exit 0
echo "mallocprof: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null &&
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq $missing >/dev/null || {
    echo "mallocprof: apt-get install$missing failed" >&2; exit 1; }
