#!/bin/sh
# Install PostgreSQL's server binaries from Debian packages, for docbench's managed cluster.
# Idempotent: does nothing when /usr/lib/postgresql/*/bin/postgres already exists.
#
# docbench never uses Debian's own cluster: it initdb's its own in its work directory. The
# package install would start Debian's "main" cluster service; a policy-rc.d that refuses
# service starts is put in place for the duration of the install (only if none exists, and
# removed afterwards), so no server starts. Debian still creates its (stopped) "main" cluster
# in /var/lib/postgresql; docbench leaves it alone.
set -eu

have_server() {
    for bin in /usr/lib/postgresql/*/bin/postgres; do
        [ -x "$bin" ] && [ -x "$(dirname "$bin")/initdb" ] && return 0
    done
    return 1
}

if have_server; then
    echo "postgresql: server binaries present: $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "postgresql: installing Debian packages needs root: apt-get install -y postgresql postgresql-contrib" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "postgresql: no apt-get here; install PostgreSQL server binaries under /usr/lib/postgresql/<version>/bin" >&2
    exit 1
fi

policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# docbench setup postgresql: no service starts during the install\nexit 101\n' > "$policy"
    chmod 755 "$policy"
    made_policy=1
fi
cleanup() {
    if [ "$made_policy" = 1 ]; then rm -f "$policy"; fi
}
trap cleanup EXIT INT TERM

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends postgresql postgresql-contrib

have_server
echo "postgresql: installed $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
