# The window tests' profile (tests/mpquery/time_window.sh, hist_window.sh,
# peak_window.sh): tests/progs/window_phases.c recorded into w.db (phases
# a, b, c between labelled snapshots), t0 its process's start, at LABEL
# (+S of that snapshot), seq_of LABEL (its seq), mid L1 L2 (+S halfway
# between two), and AB, BC: the times that split the run between a and b,
# b and c. Sourced after tests/lib/lib.sh.
export TZ=UTC
MP_TICK=0 MP_QUIET=1 profile w.db $B/tests/window_phases || fail "the program failed"
t0=$(q w.db "SELECT start_time FROM process")
at() { q w.db "SELECT time - $t0 FROM snapshot WHERE label = '$1' AND reason = 'api'"; }
seq_of() { q w.db "SELECT seq FROM snapshot WHERE label = '$1' AND reason = 'api'"; }
mid() { python3 -c "import sys; print('+%.6f' % ((float(sys.argv[1]) + float(sys.argv[2])) / 2))" "$(at "$1")" "$(at "$2")"; }
AB=$(mid a b) BC=$(mid b c)
