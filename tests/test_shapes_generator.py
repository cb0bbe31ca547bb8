"""`docbench-gen shapes`: documents of other shapes (issue #33). It writes what its knobs say
(paths per document, depth, distinct paths, arrays, varying types, popularity), a document
depends only on (seed, knobs, index), and the answers it computes for the shape queries equal
a recomputation from the written documents by Python's own JSON parser."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from docbench.dataset.generate import GeneratorError, ensure_binary
from docbench.dataset.shapes import DATA_NAME, Shape, generate_shapes, presets

KNOBS = Shape(
    preset="catalogue", paths=300, per_doc=12, depth=4, array_share=0.3, varying_share=0.2, zipf=1.0
)


def leaves(document: dict[str, Any], prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Every leaf path of a document (an array is a leaf) and its value; not the id."""
    found = {}
    for key, value in document.items():
        if not prefix and key == "id":
            continue
        if isinstance(value, dict):
            found.update(leaves(value, (*prefix, key)))
        else:
            found[(*prefix, key)] = value
    return found


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("shapes")
    summary = generate_shapes(KNOBS, 3_000, out, seed=5)
    documents = [json.loads(line) for line in (out / DATA_NAME).read_text().splitlines()]
    return summary, documents


def test_documents_have_the_knobs_shape(generated) -> None:
    summary, documents = generated
    assert summary["knobs"]["paths"] == 300 and summary["docs"] == len(documents) == 3_000
    assert [d["id"] for d in documents] == list(range(3_000))
    paths: Counter[tuple[str, ...]] = Counter()
    types: dict[tuple[str, ...], set[str]] = {}
    for document in documents:
        found = leaves(document)
        assert len(found) == 12, document  # paths per document
        for path, value in found.items():
            paths[path] += 1
            types.setdefault(path, set()).add(type(value).__name__)
    assert max(len(p) for p in paths) == 4 and min(len(p) for p in paths) == 1  # depth
    assert 150 <= len(paths) <= 300  # distinct paths: the tail is rare, never beyond the knob
    varying = [p for p, seen in types.items() if seen == {"int", "str"}]
    arrays = [p for p, seen in types.items() if seen == {"list"}]
    assert varying and all(len(seen) == 1 for p, seen in types.items() if p not in varying)
    assert 0.15 <= len(arrays) / len(paths) <= 0.45  # array share 0.3 (of the fixed-type paths)
    counts = sorted(paths.values(), reverse=True)
    assert counts[0] > 10 * counts[len(counts) // 2]  # popularity: a head and a long tail


def test_the_answers_are_those_of_the_documents(generated) -> None:
    summary, documents = generated
    answers = summary["answers"]

    def path(name: str) -> tuple[str, ...]:
        return tuple(name.split("."))

    by_id = {d["id"]: leaves(d) for d in documents}
    point = answers["point"]
    common = path(point["path"])
    # The first document from the middle on that has the most common path, and its value.
    assert point["from"] == 1_500 and point["id"] >= 1_500
    assert all(common not in by_id[i] for i in range(1_500, point["id"]))
    assert json.loads(point["value"]) == by_id[point["id"]][common]
    rare = [
        d[path(answers["rare_aggregate"]["path"])]
        for d in by_id.values()
        if path(answers["rare_aggregate"]["path"]) in d
    ]
    assert answers["rare_aggregate"]["count"] == len(rare) > 0 and answers["rare_aggregate"]["sum"] == sum(
        rare
    )
    varying = path(answers["varying_filter"]["path"])
    threshold = answers["varying_filter"]["threshold"]
    matches = sum(1 for d in by_id.values() if isinstance(d.get(varying), int) and d[varying] > threshold)
    assert answers["varying_filter"]["matches"] == matches > 0
    present = path(answers["presence"]["path"])
    assert answers["presence"]["count"] == sum(1 for d in by_id.values() if present in d) > 0


def test_a_document_depends_only_on_seed_knobs_and_index(tmp_path: Path) -> None:
    binary = ensure_binary(quiet=True)

    def lines(*args: str) -> list[str]:
        command = [str(binary), "shapes", *KNOBS.arguments(), *args, "--out", "-"]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout.splitlines()

    whole = lines("--docs", "200", "--seed", "9")
    assert lines("--docs", "50", "--first", "120", "--seed", "9") == whole[120:170]  # any slice
    assert lines("--docs", "200", "--seed", "10") != whole
    a = generate_shapes(KNOBS, 500, tmp_path / "a", seed=3)
    b = generate_shapes(KNOBS, 500, tmp_path / "b", seed=3)
    assert a["sha256"] == b["sha256"] and a["answers"] == b["answers"]
    assert generate_shapes(KNOBS, 500, tmp_path / "a", seed=3) == a  # reused, not written again


def test_presets_and_bad_knobs(tmp_path: Path) -> None:
    assert {"logs", "catalogue", "telemetry", "deep"} <= set(presets())
    for shape in (Shape(preset="nonsense"), Shape(depth=0), Shape(zipf=-1.0)):
        with pytest.raises(GeneratorError, match="docbench-gen shapes"):
            generate_shapes(shape, 10, tmp_path / shape.label())
        assert not (tmp_path / shape.label() / DATA_NAME).exists()  # nothing half-written
