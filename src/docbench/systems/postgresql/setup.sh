#!/bin/sh
# Install PostgreSQL's server binaries from Debian packages, for docbench's managed cluster.
# Idempotent: does nothing when /usr/lib/postgresql/*/bin/postgres already exists.
#
# docbench never uses Debian's own cluster: it initdb's its own in its work directory. The
# install starts no service (see ../apt.sh, shared with the other setup scripts that install
# Debian packages); Debian still creates its (stopped) "main" cluster in /var/lib/postgresql,
# which docbench leaves alone.
set -eu
. "$(dirname "$0")/../apt.sh"

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

docbench_apt_install postgresql postgresql postgresql-contrib

have_server
echo "postgresql: installed $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
