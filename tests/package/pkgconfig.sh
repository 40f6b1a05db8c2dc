# pkg-config files: build/mallocprof.pc (PKG_CONFIG_PATH=build) builds and
# links a program against this build tree, which runs from there; the
# installed one (make install PREFIX, and with DESTDIR) names PREFIX, never
# a temporary directory of an earlier install (make install used to leave
# its .pc in build/, pointing at a directory deleted since).
. "$(dirname "$0")/../lib/lib.sh"
cat > api.c <<'C'
#include <mallocprof.h>
#include <stdio.h>
int main(void) { printf("loaded %d\n", mp_loaded()); return 0; }
C
make -s -C "$ROOT" build/mallocprof.pc >make.log 2>&1 || { cat make.log; fail "make build/mallocprof.pc failed"; }
flags=$(PKG_CONFIG_PATH=$ROOT/build pkg-config --cflags --libs mallocprof) || fail "pkg-config: no mallocprof in build/"
assert_eq "$(echo $flags)" "-I$ROOT/prof -L$ROOT/build -lmallocprof_api -Wl,-rpath,$ROOT/build" "the build tree's flags"
gcc -o api api.c $flags || fail "cannot build against the build tree"
assert_eq "$(./api)" "loaded 0" "it runs from the build tree (rpath), the API does nothing without the recorder"
assert_eq "$(LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=a.db ./api)" "loaded 1" "and with the recorder preloaded"

# an install to PREFIX, then one with DESTDIR: each .pc names its PREFIX
P=$T/inst
make -s -C "$ROOT" install PREFIX="$P" >make.log 2>&1 || { cat make.log; fail "make install failed"; }
assert_eq "$(echo $(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags --libs mallocprof))" "-I$P/include -L$P/lib -lmallocprof_api" \
    "installed: PREFIX's include and lib"
gcc -o api_inst api.c $(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags --libs mallocprof) || fail "cannot build against the install"
assert_eq "$(LD_LIBRARY_PATH=$P/lib ./api_inst)" "loaded 0" "a program built against the install runs"
make -s -C "$ROOT" install DESTDIR="$T/stage" PREFIX=/opt/mp >make.log 2>&1 || { cat make.log; fail "make install DESTDIR failed"; }
assert_eq "$(sed -n 's/^prefix=//p' "$T/stage/opt/mp/lib/pkgconfig/mallocprof.pc")" "/opt/mp" "DESTDIR: the .pc names PREFIX, not the staging directory"
assert_eq "$(echo $(PKG_CONFIG_SYSROOT_DIR=$T/stage PKG_CONFIG_PATH=$T/stage/opt/mp/lib/pkgconfig pkg-config --cflags --libs mallocprof))" \
    "-I$T/stage/opt/mp/include -L$T/stage/opt/mp/lib -lmallocprof_api" "DESTDIR: usable through PKG_CONFIG_SYSROOT_DIR"
gcc -o api_stage api.c $(PKG_CONFIG_SYSROOT_DIR=$T/stage PKG_CONFIG_PATH=$T/stage/opt/mp/lib/pkgconfig pkg-config --cflags --libs mallocprof) \
    || fail "cannot build against the staged install"

# the installs left the build tree's file alone
assert_eq "$(echo $(PKG_CONFIG_PATH=$ROOT/build pkg-config --cflags mallocprof))" "-I$ROOT/prof" "build/mallocprof.pc still the build tree's"
rm -rf "$P" "$T/stage"
assert_eq "$(./api)" "loaded 0" "the build tree's program does not depend on the installs"
