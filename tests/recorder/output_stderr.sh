# The recorder's lines go only to the stderr the process started with: a
# program that closed fd 2 and opened its own file there finds only its own
# data in it (here the exit snapshot's line, and an MP_* warning, would have
# landed in the file), and the profile is written all the same.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/stderr_reopen
MP_DEPTH=bad LD_PRELOAD=$LIB MP_OUT=a.db $P data.txt 2>err; rc=$?
assert_eq "$rc" 0 "exit status"
assert_eq "$(cat data.txt)" "data" "the program's file holds its data only"
assert_match "$(cat err)" "^mallocprof: warning: MP_DEPTH=bad is not valid" "the warning at start went to the original stderr"
assert_eq "$(grep -c 'wrote' err)" 0 "the exit line, made after fd 2 changed, went nowhere"
assert_eq "$(by_function a.db stderr_alloc)" "stderr_alloc|10|320|10|0" "the profile"
