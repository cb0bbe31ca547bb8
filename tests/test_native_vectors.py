"""The functions the Rust crate (native/docbench-gen) and the Python side must compute alike,
pinned by shared vectors: tests/fixtures/vectors/ycsb_keys.json (contracts/ycsb.py's key_of
and fnv1a_64: the compiled throughput client names the documents the Python load wrote) and
dids.json (the oracle's did:plc packing: the native scanner hands the oracle packed dids).

The crate's tests read the same files (src/ycsb.rs, src/did.rs). The vectors were made by the
Python implementations; ``python tests/test_native_vectors.py`` writes them again (the inputs
are below), and a change on either side then fails one of the two test suites.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from docbench.contracts.ycsb import fnv1a_64, key_of
from docbench.dataset.oracle import decode_did, encode_dids, pack_did_rows

VECTORS = Path(__file__).resolve().parent / "fixtures" / "vectors"
U64_MAX = 2**64 - 1

# (index, seed): the default seed, small and large indexes and seeds, the u64 extremes.
KEY_INPUTS = [
    (0, 1),
    (1, 1),
    (2, 1),
    (9, 1),
    (10, 1),
    (999_999, 1),
    (1_000_000, 1),
    (123_456_789, 1),
    (0, 0),
    (1, 0),
    (7, 0),
    (0, 2),
    (5, 3),
    (12, 5),
    (1_000, 42),
    (2**32, 7),
    (2**40 + 3, 11),
    (10**15, 1),
    (2**63, 1),
    (U64_MAX, 1),
    (0, U64_MAX),
    (U64_MAX, U64_MAX),
    (12_345, 2**63 - 1),
    (31_415_926, 27_182_818),
    (4_096, 104_729 * 5 + 3),
]
FNV_INPUTS = [0, 1, 2, 255, 256, 65_535, 1_000, 123_456_789, 2**32, 2**63, U64_MAX - 1, U64_MAX]

_A24 = "a" * 24
# did:plc dids (as docbench-gen makes them, and the extremes) and what must not pack.
DID_INPUTS = [
    "did:plc:a5wd2buvu54wwu2bfhtolith",
    "did:plc:gt6oi6xnwydcdwsev7ucrj2a",
    "did:plc:jpogedf5fkwwutnyqcrlf7pf",
    "did:plc:pu4huj3dw2ns4qtfo5dy5li5",
    "did:plc:twaibtp4fm3qdzdmfaxfdte5",
    "did:plc:hmawwm6u4ixr7jusqn5mpjeu",
    "did:plc:qks6tnekqihcnyu5s6zkbdds",
    "did:plc:in5gdfzbibbbzdziwk7cxswy",
    "did:plc:" + _A24,
    "did:plc:" + "7" * 24,
    "did:plc:" + "z" * 24,
    "did:plc:" + "2" * 24,
    "did:plc:aaaaaaaaaaabaaaaaaaaaaab",
    "did:plc:baaaaaaaaaaa7aaaaaaaaaaa",
    "did:plc:abcdefghijklmnopqrstuvwx",
    "did:plc:yz234567abcdefghijklmnop",
    # refused: other methods, lengths, cases, characters
    "did:web:example.com",
    "did:web:aaaaaaaaaaaaaaaaaaaaaaaa",
    "did:plc:",
    "",
    "did:plc:" + "a" * 23,
    "did:plc:" + "a" * 25,
    "did:plc:ABCDEFGHIJKLMNOPQRSTUVWX",
    "DID:PLC:" + _A24,
    "did:plc:" + "a" * 23 + "0",
    "did:plc:" + "a" * 23 + "1",
    "did:plc:" + "a" * 23 + "8",
    "did:plc:" + "a" * 23 + "9",
    "did:plc:" + "a" * 23 + "-",
    "did:plc:" + "a" * 23 + " ",
    "did:plc:" + "a" * 23 + "\u0000",
    "did:plc:" + "a" * 11 + "\n" + "a" * 12,
    "did:plc:" + "a" * 22 + "é",
    "did:plc:" + "a" * 23 + "é",
    "did:plc:" + "a" * 23 + "{",
    "did:plc:" + "a" * 23 + "`",
    "did:plc:" + "a" * 23 + "A",
    "did:plc:" + "a" * 21 + "日",
    "did:plx:" + _A24,
    " did:plc:" + "a" * 23,
]


def python_key_vectors() -> dict:
    return {
        "about": "contracts/ycsb.py: key_of(index, seed) and fnv1a_64(value) (checked by "
        "tests/test_native_vectors.py and native/docbench-gen/src/ycsb.rs)",
        "key_of": [{"index": i, "seed": s, "key": key_of(i, s)} for i, s in KEY_INPUTS],
        "fnv1a_64": [[v, fnv1a_64(v)] for v in FNV_INPUTS],
    }


def python_did_vectors() -> dict:
    hi, lo, packed, _rest = encode_dids(DID_INPUTS)
    packing: dict[int, list[int]] = {int(i): [int(h), int(w)] for i, h, w in zip(packed, hi, lo, strict=True)}
    return {
        "about": "docbench.dataset.oracle's did:plc packing: [hi, lo] of each did, null when it "
        "does not pack (checked by tests/test_native_vectors.py and "
        "native/docbench-gen/src/did.rs)",
        "cases": [{"did": did, "packed": packing.get(i)} for i, did in enumerate(DID_INPUTS)],
    }


def _load(name: str) -> dict:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def test_ycsb_keys_are_the_vectors():
    vectors = _load("ycsb_keys.json")
    assert len(vectors["key_of"]) >= 20 and len(vectors["fnv1a_64"]) >= 8
    for case in vectors["key_of"]:
        assert key_of(case["index"], case["seed"]) == case["key"], case
    for value, expected in vectors["fnv1a_64"]:
        assert fnv1a_64(value) == expected, value
    assert vectors == python_key_vectors()  # (the inputs above are the file's)


def test_did_packing_is_the_vectors():
    cases = _load("dids.json")["cases"]
    assert sum(c["packed"] is not None for c in cases) >= 10
    assert sum(c["packed"] is None for c in cases) >= 10
    dids = [c["did"] for c in cases]
    # One at a time and all at once (encode_dids takes another path when lengths differ).
    for case in cases:
        hi, lo, packed, rest = encode_dids([case["did"]])
        if case["packed"] is None:
            assert (len(packed), rest) == (0, [0]), case
        else:
            assert [int(hi[0]), int(lo[0])] == case["packed"] and rest == [], case
            assert decode_did(*case["packed"]) == case["did"]
    hi, lo, packed, rest = encode_dids(dids)
    assert {int(i): [int(h), int(w)] for i, h, w in zip(packed, hi, lo, strict=True)} == {
        i: c["packed"] for i, c in enumerate(cases) if c["packed"] is not None
    }
    assert rest == [i for i, c in enumerate(cases) if c["packed"] is None]
    # The matrix form, on the 32-byte dids.
    rows = [(i, c["did"].encode()) for i, c in enumerate(cases) if len(c["did"].encode()) == 32]
    m = np.frombuffer(b"".join(r for _, r in rows), dtype=np.uint8).reshape(len(rows), 32)
    hi, lo, ok = pack_did_rows(m)
    assert [cases[i]["packed"] is not None for i, _ in rows] == ok.tolist()
    assert [[int(h), int(w)] for h, w in zip(hi, lo, strict=True)] == [
        cases[i]["packed"] for i, _ in rows if cases[i]["packed"] is not None
    ]
    assert _load("dids.json") == python_did_vectors()


def _write(name: str, vectors: dict) -> None:
    """One vector a line."""

    def dumps(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    parts = []
    for key, value in vectors.items():
        if isinstance(value, list):
            items = ",\n".join(f"  {dumps(item)}" for item in value)
            parts.append(f" {dumps(key)}: [\n{items}\n ]")
        else:
            parts.append(f" {dumps(key)}: {dumps(value)}")
    (VECTORS / name).write_text("{\n" + ",\n".join(parts) + "\n}\n", encoding="utf-8")


if __name__ == "__main__":  # write the vectors again from the Python implementations
    VECTORS.mkdir(parents=True, exist_ok=True)
    _write("ycsb_keys.json", python_key_vectors())
    _write("dids.json", python_did_vectors())
    sys.exit(0)
