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

mkdir -p "$DEST"
# docbench-gen (the generator), docbench-scan (the oracle's native scanner) and docbench-client
# (the throughput driver's compiled client loop)
for NAME in docbench-gen docbench-scan docbench-client; do
    BIN="$CRATE/target/release/$NAME"
    if ! cmp -s "$BIN" "$DEST/$NAME"; then
        install -m 0755 "$BIN" "$DEST/$NAME.tmp.$$"
        mv -f "$DEST/$NAME.tmp.$$" "$DEST/$NAME"
    else
        touch "$DEST/$NAME"  # up to date: newer than the sources it was built from
    fi
    echo "$DEST/$NAME"
done
