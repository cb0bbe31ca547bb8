#!/usr/bin/env bash
# Build docbench's native programs (native/docbench-gen, Rust): the dataset generator, the
# oracle's scanner and the throughput driver's compiled client loop, installed as
# <dest>/docbench-gen, <dest>/docbench-scan and <dest>/docbench-client. <dest> is the first argument, else $DOCBENCH_OPT/bin, else
# $DOCBENCH_HOME/opt/bin (DOCBENCH_HOME defaults to ./.docbench), like docbench.core.paths.opt_dir().
# Idempotent: cargo rebuilds only what changed and the copy happens only if the binary differs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CRATE="$ROOT/native/docbench-gen"
HOME_DIR="${DOCBENCH_HOME:-$PWD/.docbench}"
DEST="${1:-${DOCBENCH_OPT:-$HOME_DIR/opt}/bin}"

PROGRAMS=(docbench-gen docbench-scan docbench-client)

# Built once per machine: the programs are kept in a cache named by the hash of their sources, so
# a checkout whose sources hash the same (a fresh clone of the same commit, a worktree) installs
# them without cargo. DOCBENCH_NATIVE_CACHE=0 always builds.
SOURCES_HASH="$(cd "$CRATE" && sha256sum Cargo.toml Cargo.lock src/*.rs | sha256sum | cut -d' ' -f1)"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/docbench/native/$SOURCES_HASH"

install_programs() {  # from directory $1 into $DEST, each only if it differs
    mkdir -p "$DEST"
    for NAME in "${PROGRAMS[@]}"; do
        if ! cmp -s "$1/$NAME" "$DEST/$NAME"; then
            install -m 0755 "$1/$NAME" "$DEST/$NAME.tmp.$$"
            mv -f "$DEST/$NAME.tmp.$$" "$DEST/$NAME"
        else
            touch "$DEST/$NAME"  # up to date: newer than the sources it was built from
        fi
        echo "$DEST/$NAME"
    done
}

if [ "${DOCBENCH_NATIVE_CACHE:-1}" != 0 ] && [ -x "$CACHE/docbench-client" ]; then
    echo "native programs built from these sources before: $CACHE"
    install_programs "$CACHE"
    exit 0
fi

if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]; then
        PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
    else
        echo "build-native.sh: cargo not found; install Rust (https://rustup.rs) to build the generator" >&2
        exit 127
    fi
fi

LOCKED=()
if [ -f "$CRATE/Cargo.lock" ]; then
    LOCKED=(--locked)
fi
cargo build --release --quiet "${LOCKED[@]}" --manifest-path "$CRATE/Cargo.toml"

# docbench-gen (the generator), docbench-scan (the oracle's native scanner) and docbench-client
# (the throughput driver's compiled client loop)
install_programs "$CRATE/target/release"
if [ "${DOCBENCH_NATIVE_CACHE:-1}" != 0 ]; then
    # Filled last (docbench-client last of all): a cache entry with docbench-client is whole.
    mkdir -p "$CACHE"
    for NAME in "${PROGRAMS[@]}"; do
        install -m 0755 "$CRATE/target/release/$NAME" "$CACHE/$NAME.tmp.$$"
        mv -f "$CACHE/$NAME.tmp.$$" "$CACHE/$NAME"
    done
fi
