#!/bin/bash
# Go runtime with cgo (Debian's golang-go): C code called from 4 goroutines,
# each on its own OS thread, mallocs 1000 blocks of 56 bytes
# (tests/progs/runtimes/go_cgo.go): output and exit status as native,
# counters exact per function and per thread, one info line.
# Ended by libc's exit (through cgo) first, then the Go way: os.Exit is the
# exit_group system call, which no libc exit handler or destructor sees: the
# recorder warns at start (MP_INTERVAL keeps snapshots while it runs).
source "$(dirname "$0")/../lib/runtime.sh"
need go golang-go /usr/bin/go
export GOCACHE=$T/gocache GOPATH=$T/gopath GO111MODULE=off GOPROXY=off GOFLAGS= GOENV=off CGO_ENABLED=1
cp "$PROGS/go_cgo.go" . && /usr/bin/go build -o go_cgo go_cgo.go || fail "go build failed"

run_native native ./go_cgo libc-exit
run_profiled profiled "$T/a.db" MP_INTERVAL=60 ./go_cgo libc-exit   # (no warning)
same_as_native native profiled "$T/a.db" 1
assert_eq "$(cat profiled.rc)" 4 "exit status 4"
assert_eq "$(by_function a.db 'c_*')" "c_alloc_block|1000|56000|500|28000" "c_alloc_block: 1000 blocks of 56 bytes, half freed"
assert_eq "$(q a.db "SELECT SUM(s.ncalls), SUM(s.memtot), SUM(s.nfree), SUM(s.memlive) FROM last_sample s
                     WHERE s.stack IN (SELECT stack FROM stack_frames WHERE function = 'c_alloc_block')
                     GROUP BY s.thread ORDER BY 1")" "100|5600|50|2800
200|11200|100|5600
300|16800|150|8400
400|22400|200|11200" "c_alloc_block per OS thread: 100 * (k + 1) blocks"
assert_eq "$(q a.db "SELECT count(*) FROM stack_frames WHERE depth = 0 AND function = 'c_alloc_block'")" 1 "one stack, c_alloc_block the leaf"

# The Go way out (os.Exit: the exit_group system call) passes no exit
# handler: the recorder says so at start, once, and the program's output
# and exit status are its own.
run_native native_go ./go_cgo
run_profiled profiled_go "$T/b.db" ./go_cgo
assert_eq "$(cat profiled_go.rc)" "$(cat native_go.rc)" "os.Exit: exit status as native"
cmp -s native_go.out profiled_go.out || fail "os.Exit: stdout differs from native"
assert_eq "$(grep mallocprof profiled_go.err)" "mallocprof: warning: a Go program: ended the Go way (return from main, os.Exit), it makes the exit_group system call, which no exit handler sees, and no exit snapshot is written; set MP_INTERVAL (e.g. 1) to keep snapshots while it runs" "os.Exit: the recorder says no exit snapshot can be written"
# with MP_INTERVAL there is no warning
run_profiled profiled_iv "$T/c.db" MP_INTERVAL=1 ./go_cgo
assert_eq "$(grep -c mallocprof profiled_iv.err)" 0 "MP_INTERVAL set: no warning"
