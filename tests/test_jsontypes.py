"""The JSON narrowing helpers: a document of the wrong shape is a TypeError that names it."""

import orjson
import pytest

from docbench.core.jsontypes import as_array, as_float, as_int, as_object, as_str, object_or_empty


def test_a_parsed_document_narrows_step_by_step() -> None:
    document = orjson.loads(b'{"load": {"offered": 3, "seconds": 1.5, "first": [{"file": "a"}]}}')
    load = as_object(as_object(document)["load"], "load")
    assert as_int(load["offered"]) == 3
    assert as_float(load["seconds"]) == 1.5
    assert as_float(load["offered"]) == 3.0
    assert as_str(as_object(as_array(load["first"])[0])["file"]) == "a"
    assert object_or_empty(None) == {}


@pytest.mark.parametrize(
    ("narrow", "value", "message"),
    [
        (as_object, [1], "load: expected a JSON object, got list"),
        (as_array, {"a": 1}, "load: expected a JSON array, got dict"),
        (as_int, True, "load: expected an integer, got bool"),
        (as_int, 1.5, "load: expected an integer, got float"),
        (as_float, None, "load: expected a number, got null"),
        (as_str, 3, "load: expected a string, got int"),
    ],
)
def test_the_wrong_shape_is_named(narrow, value, message) -> None:
    with pytest.raises(TypeError, match=message):
        narrow(value, "load")


def test_a_typed_record_becomes_json_with_its_keys_in_order() -> None:
    from typing import TypedDict

    from docbench.core.jsontypes import json_record

    class Event(TypedDict):
        at: float
        node: str
        tags: list[str]

    assert list(json_record(Event(at=1.5, node="n1", tags=["a"])).items()) == [
        ("at", 1.5),
        ("node", "n1"),
        ("tags", ["a"]),
    ]
    with pytest.raises(TypeError, match=r"event.when: not a JSON value: object"):
        json_record({"when": object()}, "event")
