# MP_COLD=1 needs full capture: in the cheap modes (MP_SAMPLE, MP_STACKS=tags
# or none, MP_ENABLED=0) the recorder says so in one line and goes on; the
# columns stay 0, the program's output and status unchanged.
. "$(dirname "$0")/../lib/lib.sh"
line="mallocprof: warning: MP_COLD=1 needs full capture (every live block known): with MP_SAMPLE, MP_STACKS=tags|none or MP_ENABLED=0 no cold blocks are recorded"
for mode in MP_SAMPLE=4096 MP_STACKS=tags MP_STACKS=none MP_ENABLED=0; do
    env $mode MP_COLD=1 MP_INTERVAL=0.2 MP_QUIET=1 LD_PRELOAD=$LIB MP_OUT=$PWD/c.db "$B/tests/cold_cache" >out.txt 2>err.txt
    assert_eq "$?|$(cat out.txt)|$(cat err.txt)" "0|done|$line" "$mode: exit status, output, the one line"
done
assert_eq "$(q c.db "SELECT SUM(memcold), SUM(coldage) FROM sample")" "0|0" "no cold blocks recorded"
