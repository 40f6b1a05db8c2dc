#!/bin/sh
# Installs the Debian packages the runtime tests (tests/runtimes/*.sh) profile
# (and jemalloc, for tests/runtimes/jemalloc.sh; clang-14 and LibreOffice,
# for tests/runtimes/real_programs.sh; valgrind, for
# tests/runtimes/valgrind_totals.sh; clickhouse-server and -client, for
# tests/mpquery/clickhouse_*.sh, which also install them themselves: tests/lib/clickhouse.sh),
# through tests/lib/deps.sh (apt-get as root), and prints their versions: Debian
# 12's release pins them. tests/run.sh calls it before the runtime tests;
# `make` and `make demo` never do.
# What could not be installed goes to build/runtime_deps.status, one line
# "PACKAGE<tab>reason": a runtime test skips only when its package is there.
cd "$(dirname "$0")/../.." || exit 1
PKGS="rustc default-jdk-headless nodejs golang-go perl python3 strace libdebuginfod1 libjemalloc2 valgrind
      clickhouse-server clickhouse-client clang-14 libreoffice-writer-nogui"
STATUS=build/runtime_deps.status
NODE_DIR=build/runtimes/debian-node
mkdir -p build && : >"$STATUS"

# not_installed PACKAGE REASON: the tests needing PACKAGE will skip.
not_installed() { printf '%s\t%s\n' "$1" "$2" >>"$STATUS"; }

# is_debian: true if the Maintainer field on stdin is Debian's (an address at
# debian.org or debian.net) -- as tests/lib/runtime.sh decides which node to run
is_debian() { grep -qi '@[^>]*debian\.\(org\|net\)'; }

# Debian's nodejs and libnode unpacked (not installed) under $NODE_DIR, for a
# machine whose nodejs package is another vendor's: NodeSource's has the same
# name and owns /usr/bin/node, so Debian's cannot be installed beside it.
# What libnode depends on is installed as packages (no conflict): the shared
# libraries, and the JavaScript modules it loads from /usr/share/nodejs.
unpack_debian_node() {
    for v in $(apt-cache madison nodejs | awk -F' *[|] *' '{ print $2 }') ""; do
        apt-cache show "nodejs=$v" 2>/dev/null | grep -m 1 '^Maintainer:' | is_debian && break
    done
    [ -n "$v" ] || { echo "no Debian nodejs in the apt lists"; return 1; }
    [ "$(cat "$NODE_DIR/VERSION" 2>/dev/null)" = "$v" ] && return 0
    libnode=$(apt-cache show "nodejs=$v" | sed -n 's/^Depends:.*\(libnode[0-9]*\) (.*/\1/p' | head -n 1)
    [ -n "$libnode" ] || { echo "nodejs $v names no libnode"; return 1; }
    libs=$(apt-cache show "$libnode=$v" | sed -n 's/^Depends: //p' | head -n 1 |
           tr ',' '\n' | sed 's/^ *//; s/ .*//')
    sh tests/lib/deps.sh $libs || { echo "cannot install $libnode's libraries:" $libs; return 1; }
    rm -rf "$NODE_DIR" && mkdir -p "$NODE_DIR/deb"
    (cd "$NODE_DIR/deb" && apt-get download -q "nodejs=$v" "$libnode=$v" >/dev/null 2>&1) ||
        { echo "apt-get download nodejs=$v $libnode=$v failed"; return 1; }
    for deb in "$NODE_DIR"/deb/*.deb; do dpkg-deb -x "$deb" "$NODE_DIR" || return 1; done
    echo "$v" >"$NODE_DIR/VERSION"
}

# One apt-get for all of them; if that fails, one per package, to know which.
if ! sh tests/lib/deps.sh $PKGS; then
    for p in $PKGS; do
        sh tests/lib/deps.sh "$p" 2>"$STATUS.err" ||
            not_installed "$p" "$(grep -m 1 '^E: ' "$STATUS.err" || tail -n 1 "$STATUS.err")"
    done
    rm -f "$STATUS.err"
fi
maint=$(dpkg-query -W -f='${Maintainer}' nodejs 2>/dev/null)
if [ -n "$maint" ] && ! echo "$maint" | is_debian; then
    why=$(unpack_debian_node) || not_installed debian-node "Debian's nodejs cannot be unpacked: $why"
fi

for p in $PKGS; do
    dpkg-query -W -f='runtime: ${Package} ${Version}\n' "$p" 2>/dev/null
done
[ -n "$maint" ] && ! echo "$maint" | is_debian && [ -f "$NODE_DIR/VERSION" ] &&
    echo "runtime: the nodejs package is not Debian's ($maint): Debian's nodejs $(cat "$NODE_DIR/VERSION") unpacked in $NODE_DIR"
[ -s "$STATUS" ] && sed 's/^/runtime: not installed: /; s/\t/: /' "$STATUS"
exit 0
