"""The fidelity workload: the classification of a read-back document (pure), the raw _source
extraction, and the corpus's round trip through real engines (what each is known to do)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from docbench import results
from docbench.core.rawjson import raw_values_of
from docbench.systems import engine_class
from docbench.workloads.fidelity.classify import classify
from docbench.workloads.fidelity.corpus import corpus
from docbench.workloads.fidelity.report import dashboard_section, print_report
from docbench.workloads.fidelity.runner import FidelityRequest, run_fidelity

SENT = b'{"id": "x", "a": 1, "a": 2, "n": 9007199254740993, "f": 1.50, "z": -0.0}'
TAIL = '"n":9007199254740993,"f":1.50,"z":-0.0}'


@pytest.mark.parametrize(
    ("returned", "outcome", "note"),
    [
        (SENT.decode(), "identical", None),
        ('{"id":"x","a":1,"a":2,"n":9007199254740993,"f":1.50,"z":-0.0}', "same_value", "whitespace"),
        ('{"a":1,"a":2,"id":"x","n":9007199254740993,"f":1.5,"z":-0.0}', "same_value", "key order"),
        ('{"id":"x","a":1,"a":2,"n":9007199254740993,"f":1.5,"z":-0.0}', "same_value", "number notation"),
        ('{"id":"x","a":2,' + TAIL, "changed", "$.a: duplicate key, the last of 2 kept"),
        ('{"id":"x","a":1,' + TAIL, "changed", "$.a: duplicate key, the first of 2 kept"),
        (
            '{"id":"x","a":1,"a":2,"n":9007199254740992,"f":1.50,"z":-0.0}',
            "changed",
            "$.n: number 9007199254740993 became 9007199254740992",
        ),
        ('{"id":"x","a":1,"a":2,"n":9007199254740993,"f":1.5,"z":0}', "changed", "$.z: number -0.0 became 0"),
        (
            '{"id":"x","a":1,"a":2,"n":"9007199254740993","f":1.50,"z":-0.0}',
            "changed",
            '$.n: number became string ("9007199254740993")',
        ),
        ('{"id":"x","a":1,"a":2,"n":9007199254740993,"z":-0.0}', "changed", "$: key 'f' removed"),
        ("not json", "changed", None),
        (None, "missing", None),
    ],
)
def test_classification(returned, outcome, note):
    verdict = classify(SENT, returned)
    assert verdict.outcome == outcome, verdict
    if note:
        assert note in verdict.notes, verdict


def test_a_refusal_keeps_the_engine_reason_and_a_fraction_re_typed_is_a_change():
    assert classify(SENT, None, refused="engine said no").notes == ["engine said no"]
    verdict = classify(b'{"x": 1.0}', '{"x": 1}')
    assert verdict.outcome == "changed" and "re-typed as integer" in verdict.notes[0]


def test_the_corpus_is_json_with_one_named_stress_each():
    documents = corpus()
    assert len({d.name for d in documents}) == len(documents) >= 40
    for document in documents:
        value = json.loads(document.line)
        assert next(iter(value)) == "id" and value["id"] == document.name and document.stress


def test_raw_values_are_the_bytes_as_written():
    answer = (
        b'{"hits": {"hits": [{"_id": "1", "_source": {"s": "a\\"}_source\\":", "n": 1.50e1, "n": 2}}, '
        b'{"_source" : [1, {"a": "]"}]}]}}'
    )
    assert raw_values_of(answer, b"_source") == [
        b'{"s": "a\\"}_source\\":", "n": 1.50e1, "n": 2}',
        b'[1, {"a": "]"}]',
    ]


def _outcomes(document: dict) -> dict[str, str]:
    return {row["name"]: row["outcome"] for row in document["documents"]}


# The documents the real engines' test sends: one of each kind of fact below (every document
# alone in a fresh table is a table per document and variant: the whole corpus is a benchmark).
TESTED = [
    "key_order",
    "whitespace",
    "duplicate_keys",
    "int_2_64",
    "int_30_digits",
    "float_0_1",
    "float_overflow",
    "negative_zero",
    "exponents",
    "lone_surrogate",
    "nul_escape",
    "dotted_key",
    "empty_key",
    "long_string",
    "mixed_type_integer",
    "mixed_type_object",
]


def test_round_trip_through_real_engines(tmp_path: Path, server_url, monkeypatch):
    """Facts of the engine versions docbench installs, each a way the corpus comes back: each
    document's own verdict (alone in a fresh table), and what the others do to it together."""
    systems = ["duckdb", "sqlite", "clickhouse"]
    urls = {}
    for server in ("postgresql", "mariadb", "ferretdb", "victorialogs", "elasticsearch"):
        if engine_class(server).availability().ok:
            systems.append(server)
            urls[server] = server_url(server)
    status = run_fidelity(
        FidelityRequest(
            system_names=systems,
            variants=[
                "default",
                "variant",
                "struct",
                "text",
                "lz4",
                "string",
                "pglz",
                "json",
                "no_source",
                "paths",
            ],
            results_dir=tmp_path,
            urls=urls,
            quiet=True,
            documents=TESTED,
        )
    )
    assert status == 0
    documents = {f"{d['system']}/{d['variant']}": d for d in results.load_results([tmp_path])}
    for document in documents.values():
        results.validate({k: v for k, v in document.items() if k != "_path"})
        assert sum(document["summary"].values()) == len(TESTED)
    corpus_names = set(TESTED)

    def only(name: str, outcome: str, exceptions: dict[str, str]) -> None:
        found = _outcomes(documents[name])
        assert found == {n: exceptions.get(n, outcome) for n in corpus_names}, name

    # Text kept as it came: every document byte for byte; what the JSON reader refuses aside.
    only("duckdb/default", "identical", {"lone_surrogate": "refused"})
    only("sqlite/text", "identical", {})
    only("clickhouse/string", "identical", {"lone_surrogate": "refused", "float_overflow": "refused"})
    assert documents["duckdb/default"]["lossless"] is True
    # DuckDB's VARIANT: integers beyond 64 bits become doubles, the last duplicate is kept.
    variant = _outcomes(documents["duckdb/variant"])
    assert variant["int_30_digits"] == variant["duplicate_keys"] == "changed"
    assert documents["duckdb/variant"]["lossless"] is False
    # The columns read_ndjson infers: no column named "" (refused alone); together, every
    # document is given every column, an interaction of the inference with the other documents.
    struct = {row["name"]: row for row in documents["duckdb/struct"]["documents"]}
    assert struct["empty_key"]["outcome"] == "refused"
    assert struct["key_order"]["outcome"] == "same_value"
    together = {i["document"]: i for i in documents["duckdb/struct"]["interactions"]}
    assert together["key_order"]["together"] == "changed" and together["key_order"]["after"] in TESTED
    # ClickHouse's JSON type refuses duplicate paths and returns the typed paths it added.
    lz4 = _outcomes(documents["clickhouse/lz4"])
    assert lz4["duplicate_keys"] == lz4["dotted_key"] == "refused"
    assert lz4["key_order"] == "changed"
    if "postgresql" in systems:
        only("postgresql/json", "identical", {"lone_surrogate": "refused", "nul_escape": "refused"})
        jsonb = {row["name"]: row for row in documents["postgresql/pglz"]["documents"]}
        assert jsonb["duplicate_keys"]["notes"] == ["$.a: duplicate key, the last of 2 kept"]
        assert jsonb["negative_zero"]["outcome"] == "changed"
        assert jsonb["key_order"]["outcome"] == "same_value"
    if "mariadb" in systems:  # JSON is text checked by JSON_VALID: byte for byte, or refused
        assert set(_outcomes(documents["mariadb/default"]).values()) == {"identical", "refused"}
    if "ferretdb" in systems:  # BSON: no integer beyond 64 bits, the last duplicate kept
        bson = _outcomes(documents["ferretdb/pglz"])
        assert bson["int_2_64"] == "refused" and bson["duplicate_keys"] == "changed"
    if "victorialogs" in systems:  # fields flattened, every value a string
        logs = _outcomes(documents["victorialogs/default"])
        assert logs["key_order"] == logs["float_0_1"] == "changed"
        assert documents["victorialogs/default"]["representation"]["retains_structure"] is False
    if "elasticsearch" in systems:
        source = _outcomes(documents["elasticsearch/default"])
        assert source["key_order"] == source["long_string"] == "identical"  # _source as sent
        assert source["duplicate_keys"] == source["empty_key"] == "refused"
        # Alone, each document is its own: exponent notation and a dotted key are taken, and
        # so is an object at v. Together, an earlier document's path decides the mapping.
        assert source["exponents"] == source["dotted_key"] == source["mixed_type_object"] == "identical"
        together = {i["document"]: i for i in documents["elasticsearch/default"]["interactions"]}
        assert together["mixed_type_object"]["together"] == "refused"
        assert together["mixed_type_object"]["after"] == "mixed_type_integer"
        assert together["mixed_type_object"]["pairwise"] and together["mixed_type_object"]["paths"] == ["$.v"]
        assert together["exponents"]["after"] == "whitespace" and "$.b" in together["exponents"]["paths"]
        assert "object mapping for [b]" in together["exponents"]["notes"][0]
        assert _outcomes(documents["elasticsearch/paths"])["mixed_type_object"] == "identical"
        assert documents["elasticsearch/no_source"]["lossless"] is None
        assert "unreadable" in set(_outcomes(documents["elasticsearch/no_source"]).values())
    out = io.StringIO()
    print_report(list(documents.values()), Console(file=out, width=2000), [])
    assert "Fidelity" in out.getvalue() and "duplicate_keys" in out.getvalue()
    if "elasticsearch" in systems:  # the engine's words as they are ("[b]" is not markup)
        assert "interactions" in out.getvalue() and "object mapping for [b]" in out.getvalue()
    section = dashboard_section(list(documents.values()))
    assert section is not None and len(section["rows"]) == len(section["docs"]) == len(documents)
