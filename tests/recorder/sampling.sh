# MP_SAMPLE=R: byte-based Poisson sampling. Per-stack estimates are unbiased:
# each is within 4 standard deviations of the truth, where for n blocks of
# s bytes sampled with p = 1 - exp(-s/R) the relative standard deviation is
# sqrt((1 - p) / (n p)). Totals stay exact: calls, bytes and frees as
# requested; live bytes are the allocator's block sizes when sampling (the
# 20000 live blocks of 512 bytes are glibc chunks of 528 bytes, 520 usable).
# The generator is seeded per thread, so this run is reproducible.
. "$(dirname "$0")/../lib/lib.sh"
R=65536
MP_SAMPLE=$R profile a.db $B/tests/sampling 2>/dev/null || fail "program failed"
assert_eq "$(q a.db 'SELECT ncalls, memtot, nfree, memlive FROM process_totals')" \
    "1120200|335955200|1100200|10400000" "totals exact"
check() {   # FUNCTION N SIZE
    row=$(by_function a.db "$1")
    python3 - "$row" "$2" "$3" $R <<'PY' || fail "$1 estimate out of bounds: $row"
import math, sys
name, ncalls, memtot, nfree, memlive = sys.argv[1].split('|')
n, s, R = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
p = -math.expm1(-s / R)
sigma = math.sqrt((1 - p) / (n * p))
for what, est, true in (("ncalls", int(ncalls), n), ("memtot", int(memtot), n * s)):
    err = abs(est - true) / true
    print(f"# {name}: {what} estimated {est}, true {true}, error {err:.2%} (sigma {sigma:.2%})")
    if err > 4 * sigma + 1e-3: sys.exit(1)
PY
    echo "  ok: $1 within 4 sigma"
}
check small_blocks 1000000 16
check medium_blocks 100000 1000
check large_blocks 200 1048576
check keep_live 20000 512
assert_eq "$(by_function a.db 'large_blocks' | cut -d'|' -f2-)" "200|209715200|200|0" "blocks much larger than R are always sampled: exact"
assert_eq "$(q a.db "SELECT sum(memlive) FROM last_sample s JOIN stack_path sp USING(stack) WHERE sp.leaf != 'keep_live'")" 0 "freed stacks return to 0 live bytes"
# Unbiasedness over many stacks: 256 paths with the same true volume; the
# mean relative error must be ~0 (within 4 sigma / sqrt(256)) and the spread
# of the errors must match the predicted sigma.
MP_SAMPLE=$R profile b.db $B/tests/sampling paths 2>/dev/null || fail "program failed"
q b.db "SELECT sum(s.memtot) FROM last_sample s JOIN stack_path sp USING(stack) WHERE sp.leaf = 'path_leaf' GROUP BY s.stack" > est
python3 - est $R <<'PY' || fail "sampling is biased"
import math, sys
est = [int(x) for x in open(sys.argv[1])]
R, n, s = int(sys.argv[2]), 20000, 64
p = -math.expm1(-s / R)
sigma = math.sqrt((1 - p) / (n * p))
errs = [(e - n * s) / (n * s) for e in est] + [-1.0] * (256 - len(est))   # unsampled paths: estimate 0
mean = sum(errs) / len(errs)
sd = math.sqrt(sum((e - mean) ** 2 for e in errs) / (len(errs) - 1))
print(f"# 256 paths: mean error {mean:+.2%} (bound {4 * sigma / 16:.2%}), spread {sd:.2%} (predicted {sigma:.2%})")
ok = abs(mean) < 4 * sigma / 16 and 0.75 * sigma < sd < 1.25 * sigma
sys.exit(0 if ok else 1)
PY
echo "  ok: unbiased over 256 paths, spread as predicted"
