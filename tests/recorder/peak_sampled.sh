# A stack's maxlive. Full capture: its own peak, exact. Sampled: its live
# bytes at the process's peak (captured each time the process's live bytes
# rise 1/128 above the previous capture), an unbiased estimate; the largest
# of a sampled stack's estimates over time is not (one sampled 32-byte
# block would stand for MP_SAMPLE bytes). tests/progs/peak_phases.c: a
# holds 4000 KiB, then b 8000 KiB (the process's peak), then c makes
# 100000 blocks of 32 bytes one at a time.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/peak_phases
# maxlive per phase_* function (hold and release may be inlined or not)
maxlive() { q "$1" "SELECT f.function, SUM(s.maxlive) FROM last_sample s JOIN stack_frames f ON f.stack = s.stack
                    WHERE f.function LIKE 'phase_%' GROUP BY f.function ORDER BY f.function"; }
profile full.db $P 2>/dev/null || fail "the program failed"
assert_eq "$(maxlive full.db)" \
    "phase_a|4096000
phase_b|8192000
phase_c|32" "full capture: each stack's own peak"
R=16384
MP_SAMPLE=$R profile s.db $P 2>/dev/null || fail "the program failed (sampled)"
rows=$(maxlive s.db)
echo "# sampled maxlive: $(echo $rows)"
get() { printf '%s\n' "$rows" | awk -F'|' -v f="$1" '$1 == f { print $2 }'; }
assert_eq "$(get phase_a)" 0 "sampled: phase_a held nothing at the process's peak"
assert_eq "$(get phase_c)" 0 "sampled: phase_c's stacks did not exist at the process's peak (its own peak, 32 bytes, was estimated as $R before)"
python3 - "$(get phase_b)" $R <<'PY' || fail "phase_b's estimate at the peak is out of bounds: $(get phase_b)"
import math, sys
est, R = int(sys.argv[1] or 0), int(sys.argv[2])
n, s = 8000, 1024
p = -math.expm1(-s / R)
sigma = math.sqrt((1 - p) / (n * p))
true = n * s
# the capture is within 1/128 plus the recorder's 64 KiB publication slack of the peak
lo, hi = true * (1 - 4 * sigma) - true / 128 - 65536, true * (1 + 4 * sigma)
print(f"# phase_b: estimated {est} at the peak, true {true}, sigma {sigma:.2%}")
sys.exit(0 if lo <= est <= hi else 1)
PY
echo "  ok: sampled: phase_b's live bytes at the peak within 4 sigma"
