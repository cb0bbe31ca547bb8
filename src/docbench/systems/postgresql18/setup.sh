#!/usr/bin/env bash
# PostgreSQL 18 for docbench: Debian sid's postgresql-18 in a chroot docbench owns
# ($DOCBENCH_OPT/sid), made from Debian's packages with debootstrap. Bookworm has no
# PostgreSQL 18, and sid's build needs glibc >= 2.38 (bookworm: 2.36), hence the chroot; the
# server runs in it with its work directory bind-mounted (docbench/servers/managed.py `Jail`).
# Extra sid packages to install in the same chroot can follow as arguments (the ferretdb
# system's setup adds postgresql-18-documentdb). Idempotent: each step checks its own result.
#
#   DOCBENCH_OPT     where docbench installs software (docbench setup sets it)
#   DEBIAN_MIRROR    default http://deb.debian.org/debian
set -euo pipefail

OPT="${DOCBENCH_OPT:-$PWD/.docbench/opt}"
ROOT="$OPT/sid"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PACKAGES=(postgresql-18 "$@")
START=$(date +%s)

if [[ $EUID -ne 0 ]]; then
    echo "postgresql18: the Debian sid chroot needs root (debootstrap, chroot, mounts)" >&2
    exit 1
fi

# 1. debootstrap (Debian's package) on the host.
if ! command -v debootstrap >/dev/null 2>&1; then
    . "$(dirname "${BASH_SOURCE[0]}")/../apt.sh"
    docbench_apt_install postgresql18 debootstrap
fi

# 2. The sid chroot (minbase), made under a temporary name and renamed when complete.
if [[ ! -f "$ROOT/.docbench-debootstrap-done" ]]; then
    echo "postgresql18: debootstrap sid into $ROOT (about 1.5 min)"
    rm -rf "$ROOT.new"
    mkdir -p "$OPT"
    debootstrap --variant=minbase sid "$ROOT.new" "$MIRROR" >"$OPT/debootstrap-sid.log" 2>&1 || {
        tail -20 "$OPT/debootstrap-sid.log" >&2; exit 1; }
    touch "$ROOT.new/.docbench-debootstrap-done"
    rm -rf "$ROOT"
    mv "$ROOT.new" "$ROOT"
fi

# 3. The packages, by apt inside the chroot. Package scripts need /proc (postgresql-common
#    runs systemd-tmpfiles): a private mount and PID namespace gets its own /proc there, gone
#    with the command even if it is killed. sid's Release file may count as expired against
#    the machine's clock. No service starts (policy-rc.d), no cluster is created.
in_root() {
    unshare --mount --propagation private --pid --fork --mount-proc="$ROOT/proc" \
        chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        DEBIAN_FRONTEND=noninteractive "$@"
}
installed() {
    [[ "$(chroot "$ROOT" dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}
missing=()
for package in "${PACKAGES[@]}"; do
    installed "$package" || missing+=("$package")
done
if (( ${#missing[@]} )); then
    echo "postgresql18: apt-get install ${missing[*]} in $ROOT"
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
    printf '#!/bin/sh\nexit 101\n' > "$ROOT/usr/sbin/policy-rc.d"
    chmod +x "$ROOT/usr/sbin/policy-rc.d"
    mkdir -p "$ROOT/etc/postgresql-common/createcluster.d"
    echo "create_main_cluster = false" > "$ROOT/etc/postgresql-common/createcluster.d/docbench.conf"
    in_root apt-get -o Acquire::Check-Valid-Until=false update -qq
    in_root dpkg --configure -a
    in_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 4. Where docbench binds a server's work directory inside the chroot.
mkdir -p "$ROOT/srv/docbench"
chmod 0755 "$ROOT/srv" "$ROOT/srv/docbench"

echo "postgresql18: $(chroot "$ROOT" /usr/lib/postgresql/18/bin/postgres --version) in $ROOT" \
     "(setup took $(( $(date +%s) - START )) s)"
