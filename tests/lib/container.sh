# A container of sorts for the record --pid tests (sourced after lib.sh;
# root only): a root directory with the host's /usr bind-mounted, entered
# by pivot_root in a new mount namespace, so that /proc/PID/root is not /
# and /proc/PID/maps names files as they are inside it.

# the other user the tests' processes run as (made when missing)
OTHER_USER=mp_test_other
other_user() {
    id -u $OTHER_USER >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin $OTHER_USER >/dev/null 2>&1 ||
        fail "cannot create the user $OTHER_USER"
    OTHER_UID=$(id -u $OTHER_USER)
    OTHER_GID=$(id -g $OTHER_USER)
}

# container_root DIR PROG NAME: DIR made a root: usr and dev (bound at
# start), proc, a sticky /tmp, bin/lib/lib64 links as Debian has them, PROG
# as /NAME (a name of the test's own: pgrep -x finds it)
container_root() {
    mkdir -p "$1/usr" "$1/proc" "$1/dev" "$1/tmp" "$1/old" || fail "cannot make the container's root $1"
    chmod 755 "$1"
    chmod 1777 "$1/tmp"
    ln -s usr/bin "$1/bin"; ln -s usr/lib "$1/lib"; ln -s usr/lib64 "$1/lib64"
    cp "$2" "$1/$3" && chmod 755 "$1/$3"
}

# in_container DIR SETUP CMD...: CMD run as OTHER_USER with DIR as its root,
# in a mount namespace of its own; SETUP (sh, run before, as root, with $R
# the root) may add mounts. Replaces the shell it runs in (exec).
in_container() {
    local r=$1 setup=$2; shift 2
    exec unshare -m --propagation private sh -c '
        R=$1; U=$2; G=$3; SETUP=$4; shift 4
        mount --bind "$R" "$R" && mount --bind /usr "$R/usr" && mount --bind /dev "$R/dev" && mount -t proc proc "$R/proc" &&
        eval "$SETUP" && cd "$R" && pivot_root . old && umount -l /old &&
        exec setpriv --reuid "$U" --regid "$G" --clear-groups "$@"' sh "$r" "$OTHER_UID" "$OTHER_GID" "$setup" "$@"
}

# in_chroot DIR CMD...: as in_container, entered by chroot instead: the
# root differs, and /proc/PID/maps names its files by paths of its mount
# namespace that lead nowhere from our root or from its own.
in_chroot() {
    local r=$1; shift
    exec unshare -m --propagation private sh -c '
        R=$1; U=$2; G=$3; shift 3
        mount --bind /usr "$R/usr" && mount --bind /dev "$R/dev" && mount -t proc proc "$R/proc" &&
        exec chroot --userspec="$U:$G" "$R" "$@"' sh "$r" "$OTHER_UID" "$OTHER_GID" "$@"
}

# container_ready PID: its root is not ours (fails the test otherwise)
container_ready() {
    [ "$(stat -L -c %d:%i /proc/$1/root)" != "$(stat -c %d:%i /)" ] || fail "process $1's root is ours"
    [ "$(readlink /proc/$1/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] || fail "process $1 is in our mount namespace"
}
