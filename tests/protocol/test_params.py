"""Typed reads from a request's params: each refusal a -32602 naming the field's path."""

from __future__ import annotations

from typing import Any

import pytest

from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.params import MAX_ID_CHARS, Params


def refused(read: Any) -> str:
    with pytest.raises(A2AError) as raised:
        read()
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    return raised.value.message


def test_a_field_is_read_by_its_camel_case_name_then_its_snake_case_twin() -> None:
    assert Params({"historyLength": 2}).optional_int("historyLength") == 2
    assert Params({"history_length": 3}).optional_int("historyLength") == 3
    assert Params({"historyLength": 2, "history_length": 3}).optional_int("historyLength") == 2


def test_an_empty_string_is_unset_as_in_proto3_json() -> None:
    assert Params({"contextId": ""}).optional_str("contextId") is None
    assert Params({"contextId": ""}).optional_id("contextId") is None
    assert refused(lambda: Params({"id": ""}).required_str("id")) == (
        "params.id must be a non-empty string"
    )


def test_a_whole_number_may_be_written_as_a_float() -> None:
    assert Params({"n": 3.0}).optional_int("n") == 3


@pytest.mark.parametrize("value", [-1, 2.5, True, "3", [3]])
def test_a_count_is_a_whole_number_of_at_least_0(value: Any) -> None:
    assert refused(lambda: Params({"n": value}).optional_int("n")) == (
        "params.n must be a whole number >= 0"
    )


def test_an_id_is_bounded() -> None:
    assert Params({"id": "i" * MAX_ID_CHARS}).required_id("id") == "i" * 1024
    assert refused(lambda: Params({"id": "i" * 1025}).required_id("id")) == (
        "params.id must be at most 1024 characters"
    )


def test_nested_objects_name_their_path_in_every_refusal() -> None:
    message = Params({"message": {"parts": [{"text": "a"}, 7]}}).required_object("message")
    assert message.path == "params.message"
    assert refused(lambda: message.required_objects("parts")) == (
        "params.message.parts[1] must be an object"
    )
    assert refused(lambda: message.required_object("role")) == "params.message.role is required"
    assert refused(lambda: Params({"c": []}).optional_object("c")) == "params.c must be an object"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"modes": "text/plain"}, "params.modes must be a list of strings"),
        ({"modes": ["text/plain", 1]}, "params.modes must be a list of strings"),
    ],
)
def test_a_list_of_strings_holds_strings_only(document: dict[str, Any], message: str) -> None:
    assert refused(lambda: Params(document).optional_str_list("modes")) == message


def test_a_flag_is_true_or_false() -> None:
    assert Params({"b": False}).optional_bool("b") is False
    assert Params({}).optional_bool("b") is None
    assert refused(lambda: Params({"b": "yes"}).optional_bool("b")) == (
        "params.b must be true or false"
    )


def test_a_non_empty_list_of_objects_is_required() -> None:
    assert refused(lambda: Params({"parts": []}).required_objects("parts")) == (
        "params.parts must be a non-empty list"
    )
    assert [p.path for p in Params({"parts": [{}, {}]}).required_objects("parts")] == [
        "params.parts[0]",
        "params.parts[1]",
    ]


@pytest.mark.parametrize(
    ("value", "read"),
    [
        (None, None),
        ("", None),
        (0, 0),
        (5, 5),
        (5.0, 5),
        ("5", 5),
        ("9223372036854775807", 2**63 - 1),
    ],
)
def test_an_int64_is_a_json_number_or_a_decimal_string_as_protojson_reads_it(
    value: Any, read: int | None
) -> None:
    assert Params({"g": value}).optional_int64("g") == read


@pytest.mark.parametrize(
    "value",
    [-1, "-1", "1e3", " 5", "\u0663", "9" * 20, 2**63, "9223372036854775808", True, 1.5, []],
)
def test_an_int64_past_its_range_or_no_number_is_refused(value: Any) -> None:
    message = refused(lambda: Params({"g": value}).optional_int64("g"))
    assert message.startswith("params.g must be a whole number") and len(message) < 200
