#!/bin/bash
# mpquery check on clang++-14 -O2 of a template file: pairs of identical
# runs pass (before the floors, 694 of 69,049 stacks failed), planted
# regressions fail, one verdict in every format (tests/lib/check_real.sh).
source "$(dirname "$0")/../lib/runtime.sh"
need clang++-14 clang-14 /usr/bin/clang++-14
source "$ROOT/tests/lib/check_real.sh"
check_real cl
