# A plugin loaded with dlopen allocates from a static function and is
# dlclose'd before exit, twice: its frames keep their names and module.
. "$(dirname "$0")/../lib/lib.sh"
plain_and_profiled a.db "$B/tests/dl_plugin"
assert_eq "$(cat prof.out)" "plugin done" "stdout unchanged"
assert_eq "$(by_function a.db 'plugin_*')" "plugin_static_alloc|84|6468|84|0" "static function of the unloaded plugin"
assert_eq "$(q a.db "SELECT DISTINCT module FROM stack_frames WHERE function = 'plugin_static_alloc'")" "$B/tests/libplugin.so" "module path recorded"
assert_match "$(q a.db "SELECT DISTINCT build_id FROM stack_frames WHERE function = 'plugin_static_alloc'")" '^[0-9a-f]{40}$' "module build-id recorded"
