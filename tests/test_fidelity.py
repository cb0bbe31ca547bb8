"""The fidelity workload: the classification of a read-back document (pure), the raw _source
extraction, and the corpus's round trip through real engines (what each is known to do)."""

from __future__ import annotations

import importlib
import io
import json
from pathlib import Path

import pytest
from conftest import (
    COLUMNAR,
    DOCUMENT_SERVER,
    EMBEDDED,
    LOGS,
    QUICK,
    SEARCH,
    SQL_SERVER,
    SQL_SERVER_OTHER,
)
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


def only(documents: dict[str, dict], name: str, outcome: str, exceptions: dict[str, str]) -> None:
    """Every tested document of run ``name`` came back as ``outcome``, but the exceptions."""
    found = _outcomes(documents[name])
    assert found == {n: exceptions.get(n, outcome) for n in TESTED}, name


def test_round_trip_through_real_engines(tmp_path: Path, server_url, monkeypatch):
    """Facts of the engine versions docbench installs, each a way the corpus comes back: each
    document's own verdict (alone in a fresh table), and what the others do to it together.
    The facts are each system's own: ``check_fidelity`` in its tests/test_system_<name>.py."""
    systems = [EMBEDDED.system, QUICK.system, COLUMNAR.system]
    urls = {}
    for server in (
        SQL_SERVER.system,
        SQL_SERVER_OTHER.system,
        DOCUMENT_SERVER.system,
        LOGS.system,
        SEARCH.system,
    ):
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
    out = io.StringIO()
    print_report(list(documents.values()), Console(file=out, width=2000), [])
    assert "Fidelity" in out.getvalue() and "duplicate_keys" in out.getvalue()
    for system in systems:
        check = getattr(importlib.import_module(f"test_system_{system}"), "check_fidelity", None)
        assert check is not None, system
        check(documents, out.getvalue())
    section = dashboard_section(list(documents.values()))
    assert section is not None and len(section["rows"]) == len(section["docs"]) == len(documents)


def test_a_read_back_with_a_raw_control_character_is_changed_not_missing() -> None:
    """An engine that writes U+0000 unescaped returns text that is not strict JSON: the
    document is still found by its id, and its verdict says the text is not JSON."""
    from docbench.workloads.fidelity.classify import classify
    from docbench.workloads.fidelity.runner import by_id

    sent = b'{"id": "nul_escape", "s": "a\\u0000b"}'
    returned = '{"id":"nul_escape","s":"a\x00b"}'
    assert by_id([returned, "not json at all"]) == {"nul_escape": returned}
    verdict = classify(sent, by_id([returned]).get("nul_escape"))
    assert verdict.outcome == "changed" and "not JSON" in verdict.notes[0]
