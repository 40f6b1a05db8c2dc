#!/bin/bash
# mpquery check on python3 (json, pymalloc) and sqlite3 (50,000 rows): pairs
# of identical runs pass, planted regressions fail, one verdict in every
# format (tests/lib/check_real.sh says what and why).
source "$(dirname "$0")/../lib/runtime.sh"
source "$ROOT/tests/lib/check_real.sh"
check_real py sq
