#!/bin/sh
# Install MariaDB's server and client binaries from Debian packages, for docbench's managed
# server. Idempotent: does nothing when mariadbd (or mysqld), mariadb-install-db and a client
# are already there.
#
# docbench never uses Debian's own MariaDB service or its data directory /var/lib/mysql: it
# runs mariadb-install-db into its own work directory. The install starts no service (see
# ../apt.sh, shared with the other setup scripts that install Debian packages); Debian still
# creates its (stopped) data directory, which docbench leaves alone.
set -eu
. "$(dirname "$0")/../apt.sh"

have_server() {
    { command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] \
        || command -v mysqld >/dev/null 2>&1 || [ -x /usr/sbin/mysqld ]; } \
    && { command -v mariadb-install-db >/dev/null 2>&1 || command -v mysql_install_db >/dev/null 2>&1; } \
    && { command -v mariadb >/dev/null 2>&1 || command -v mysql >/dev/null 2>&1; }
}

if have_server; then
    echo "mariadb: server present: $( (/usr/sbin/mariadbd --version || mariadbd --version || mysqld --version) 2>/dev/null | head -n 1)"
    exit 0
fi

docbench_apt_install mariadb mariadb-server mariadb-client

have_server
echo "mariadb: installed $(/usr/sbin/mariadbd --version 2>/dev/null | head -n 1)"
