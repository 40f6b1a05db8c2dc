#!/bin/sh
# `make demo`: profile demos/request_loop and show what it found.
set -e
cd "$(dirname "$0")/.."
B=build
echo "== mpquery record -o profile.db -- $B/demos/request_loop"
$B/mpquery record -o profile.db -- $B/demos/request_loop
echo
echo "== mpquery info profile.db"
$B/mpquery info profile.db
echo
echo "== mpquery top profile.db --by memlive -n 5   (who holds memory: the leak)"
$B/mpquery top profile.db --by memlive -n 5
echo
echo "== mpquery top profile.db --functions --by ncalls -n 5"
$B/mpquery top profile.db --functions --by ncalls -n 5
echo
echo "== mpquery tree profile.db   (the tag scopes: mp_tag_push in the demo)"
$B/mpquery tree profile.db
echo
echo "== mpquery report profile.db -o $B/report.html   (all of it on one page: open it in a browser)"
$B/mpquery report profile.db -o $B/report.html
echo
echo "profile.db is yours to query: mpquery --help"
