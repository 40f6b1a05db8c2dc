# npm packages a test needs, pinned, in build/npm (sourced after lib.sh):
#   npm_pins PIN...   installs the pins (name@version) missing there, one
#                     install at a time (the tests run in lanes); 0 when
#                     every pin is there, else 1 with the reason in npm.log
NPM=$B/npm
npm_ready() {
    command -v node >/dev/null || return 1
    local pin
    for pin in "$@"; do
        [ "$(node -p "require('$NPM/node_modules/${pin%@*}/package.json').version" 2>/dev/null)" = "${pin##*@}" ] || return 1
    done
}
npm_pins() {
    npm_ready "$@" && return 0
    exec 8>"${TMPDIR:-/tmp}/mallocprof-npm.lock" && flock 8
    npm_ready "$@" || { { command -v npm || sh "$ROOT/tests/lib/deps.sh" nodejs npm; } >npm.log 2>&1 \
        && npm install --prefix "$NPM" --no-audit --no-fund --save-exact "$@" >>npm.log 2>&1; }
    exec 8>&-
    npm_ready "$@"
}
