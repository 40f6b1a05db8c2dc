# MP_COLD=1 beside a program that uses userfaultfd itself
# (tests/progs/uffd_own.c): where the kernel has no soft-dirty bits the
# profiler write-protects the live blocks' mappings through a userfaultfd
# of its own, and a VMA takes one: the program's UFFDIO_REGISTER on its
# malloc'd buffer failed with EBUSY (issue 41 item 13). The program's
# first UFFDIO_API withdraws the profiler's (prof/snapshot/cold_pages.c): its
# register, fault and unregister go as without the profiler, one warning
# says cold blocks end there.
. "$(dirname "$0")/../lib/lib.sh"
"$B/tests/uffd_own" >plain.out 2>&1; plain_rc=$?
assert_eq "$plain_rc|$(cat plain.out)" "0|register: ok
handler: ok, read: z
unregister: ok" "without the profiler: the program's userfaultfd works"
MP_COLD=1 MP_INTERVAL=0.1 MP_QUIET=1 profile a.db "$B/tests/uffd_own" >prof.out 2>err; rc=$?
assert_eq "$rc|$(cat prof.out)" "$plain_rc|$(cat plain.out)" "MP_COLD=1: the same output and exit status"
# which pages were written: the kernel's soft-dirty bits, or userfaultfd
soft_dirty=$($PY3 - <<'PY'
import ctypes, mmap, struct
m = mmap.mmap(-1, 4096); m[0] = 1
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
def bit():
    with open("/proc/self/pagemap", "rb") as f:
        f.seek(addr // 4096 * 8); return (struct.unpack("Q", f.read(8))[0] >> 55) & 1
open("/proc/self/clear_refs", "w").write("4"); clean = bit(); m[0] = 2
print(1 if clean == 0 and bit() == 1 else 0)
PY
)
if [ "$soft_dirty" = 0 ]; then
    assert_eq "$(cat err)" "mallocprof: warning: MP_COLD=1: the program uses userfaultfd itself: the profiler's write-protection is withdrawn, no cold blocks from now on (memcold and coldage 0)" \
        "userfaultfd here (no soft-dirty bits): one warning"
    assert_eq "$(q a.db "SELECT max(memcold) FROM sample s JOIN snapshot n ON n.id = s.snapshot WHERE n.reason = 'interval'")" 4194304 \
        "before: the buffer was cold, write-protected by the profiler (the conflict was there)"
else
    assert_eq "$(cat err)" "" "soft-dirty bits here: no conflict, nothing said"
fi
