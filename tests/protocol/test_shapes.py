"""The one interface both versions' shapes implement: each has every member of it."""

from __future__ import annotations

import inspect

import pytest

from n8n_a2a.protocol.shapes import Shapes
from n8n_a2a.protocol.v03 import V03Shapes
from n8n_a2a.protocol.v1 import V1Shapes
from n8n_a2a.protocol.versions import V03, V1

#: Typed as the interface: mypy checks that each version's shapes are one.
SHAPES: dict[str, Shapes] = {"1.0": V1Shapes(), "0.3": V03Shapes()}
MEMBERS = [
    name
    for name, _ in inspect.getmembers(Shapes, inspect.isfunction)
    if not name.startswith("_")  # a Protocol's own machinery
]


def test_the_interface_is_what_the_codec_and_the_operations_table_use() -> None:
    assert sorted(MEMBERS) == [
        "decode_blocking",
        "decode_part",
        "decode_push_config",
        "decode_push_create",
        "decode_push_delete",
        "decode_push_get",
        "decode_push_list",
        "encode_part",
        "encode_push_config",
        "encode_push_deleted",
        "encode_push_page",
        "union_member",
        "with_kind",
    ]


@pytest.mark.parametrize("version", sorted(SHAPES))
def test_each_versions_shapes_have_every_member_with_its_parameters(version: str) -> None:
    shapes = SHAPES[version]
    for name in MEMBERS:
        wanted = list(inspect.signature(getattr(Shapes, name)).parameters)
        assert list(inspect.signature(getattr(type(shapes), name)).parameters) == wanted, name


def test_each_codec_holds_its_versions_shapes() -> None:
    assert (type(V1.shapes), type(V03.shapes)) == (V1Shapes, V03Shapes)
