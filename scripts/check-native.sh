#!/usr/bin/env bash
# `make lint`'s Rust part: the crate formatted (cargo fmt --check) and clippy-clean (warnings
# are errors). rustfmt and clippy come with rustup's default profile; a toolchain without them
# gets them from rustup (idempotent).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CRATE="$ROOT/native/docbench-gen/Cargo.toml"
if ! command -v cargo >/dev/null 2>&1 && [ -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]; then
    PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
fi
for component in rustfmt clippy; do
    if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
        rustup component add "$component" >/dev/null
    fi
done
cargo fmt --manifest-path "$CRATE" -- --check
cargo clippy --quiet --locked --release --manifest-path "$CRATE" --all-targets -- -D warnings
