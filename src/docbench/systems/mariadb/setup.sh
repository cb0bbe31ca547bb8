#!/bin/sh
# Install MariaDB's server and client binaries from Debian packages, for docbench's managed
# server. Idempotent: does nothing when mariadbd (or mysqld), mariadb-install-db and a client
# are already there.
#
# docbench never uses Debian's own MariaDB service or its data directory /var/lib/mysql: it
# runs mariadb-install-db into its own work directory. The package's postinst would start the
# "mariadb" service; a policy-rc.d that refuses service starts is put in place for the
# duration of the install (only if none exists, and removed afterwards only if we made it), so
# no server starts. Debian still creates its (stopped) data directory; docbench leaves it alone.
set -eu

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

if [ "$(id -u)" -ne 0 ]; then
    echo "mariadb: installing Debian packages needs root: apt-get install -y mariadb-server mariadb-client" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "mariadb: no apt-get here; install mariadb-server (mariadbd, mariadb-install-db) and mariadb-client" >&2
    exit 1
fi

policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# docbench setup mariadb: no service starts during the install\nexit 101\n' > "$policy"
    chmod 755 "$policy"
    made_policy=1
fi
cleanup() {
    if [ "$made_policy" = 1 ]; then rm -f "$policy"; fi
}
trap cleanup EXIT INT TERM

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends mariadb-server mariadb-client

have_server
echo "mariadb: installed $(/usr/sbin/mariadbd --version 2>/dev/null | head -n 1)"
