# Debian packages for a system's setup.sh (sourced, POSIX sh: `. "$(dirname "$0")/../apt.sh"`).
#
#   docbench_apt_install NAME PACKAGE...
#
# installs PACKAGE... with apt-get (--no-install-recommends), NAME prefixing its messages. The
# caller checks first whether what it needs is already there (its own have_server): a setup
# stays idempotent, and this is never reached on a machine that has the programs. It needs root
# and apt-get, and says so (exit 1) without them.
#
# A package's postinst would start its service (Debian's own "main" PostgreSQL cluster, its
# "mariadb" service); docbench never uses them, it runs its own servers in its work directory.
# A policy-rc.d that refuses service starts is put in place for the duration of the install
# (only if none exists, and removed afterwards only if made here), so no server starts. The
# packages still create their (stopped) data directories; docbench leaves them alone.

docbench_apt_install() {
    _apt_name="$1"
    shift
    if [ "$(id -u)" -ne 0 ]; then
        echo "$_apt_name: installing Debian packages needs root: apt-get install -y $*" >&2
        exit 1
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "$_apt_name: no apt-get here; install the Debian packages $* (or their equivalent)" >&2
        exit 1
    fi
    _apt_policy=/usr/sbin/policy-rc.d
    _apt_made_policy=0
    if [ ! -e "$_apt_policy" ]; then
        printf '#!/bin/sh\n# docbench setup %s: no service starts during the install\nexit 101\n' \
            "$_apt_name" > "$_apt_policy"
        chmod 755 "$_apt_policy"
        _apt_made_policy=1
    fi
    # The policy goes however the install ends (an error, Ctrl-C); this replaces an EXIT trap
    # of the caller's until the install is done.
    trap 'if [ "$_apt_made_policy" = 1 ]; then rm -f "$_apt_policy"; fi' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    DEBIAN_FRONTEND=noninteractive apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
    if [ "$_apt_made_policy" = 1 ]; then rm -f "$_apt_policy"; fi
    _apt_made_policy=0
    trap - EXIT INT TERM
}
