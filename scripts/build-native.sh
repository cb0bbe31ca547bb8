#!/usr/bin/env bash
# Build docbench's native dataset generator (native/docbench-gen, Rust) and install the binary
# as <dest>/docbench-gen. <dest> is the first argument, else $DOCBENCH_OPT/bin, else
# $DOCBENCH_HOME/opt/bin (DOCBENCH_HOME defaults to ./.docbench), like docbench.paths.opt_dir().
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

BIN="$CRATE/target/release/docbench-gen"
mkdir -p "$DEST"
if ! cmp -s "$BIN" "$DEST/docbench-gen"; then
    install -m 0755 "$BIN" "$DEST/docbench-gen.tmp.$$"
    mv -f "$DEST/docbench-gen.tmp.$$" "$DEST/docbench-gen"
else
    touch "$DEST/docbench-gen"  # up to date: newer than the sources it was built from
fi
echo "$DEST/docbench-gen"
