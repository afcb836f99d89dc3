"""The generated models are current and say what ``docs/openapi.json`` says: every object
schema is a TypedDict with exactly its properties, required where the schema requires them;
every enum is a Literal of exactly its values; every list query is a Params TypedDict."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any, get_args, get_origin

from typing_extensions import is_typeddict

import openrail.models as models

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = json.loads((ROOT.parents[1] / "docs" / "openapi.json").read_text())
SCHEMAS: dict[str, Any] = DOCUMENT["components"]["schemas"]


def test_the_committed_models_are_what_the_generator_makes_of_the_document() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_models.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr


def test_every_object_schema_is_a_typeddict_with_its_properties() -> None:
    checked = 0
    for name, schema in SCHEMAS.items():
        if schema.get("type") != "object" or "properties" not in schema:
            continue
        td = getattr(models, name)
        assert is_typeddict(td), name
        assert set(td.__annotations__) == set(schema["properties"]), name
        # (OpenApiDocument requires members it does not describe: only described ones count.)
        required = set(schema.get("required", [])) & set(schema["properties"])
        assert set(td.__required_keys__) == required, name
        checked += 1
    assert checked >= 35


def test_every_inline_member_of_a_union_is_a_typeddict_too() -> None:
    for name, members in [
        ("Consent", {"ConsentPayerSignature", "ConsentBankMandate"}),
        ("PaymentSourceInput", {"PaymentSourceInputWallet", "PaymentSourceInputBankAccount"}),
        ("PaymentDestinationInput", {"PaymentDestinationInputWallet", "PaymentDestinationInputBankAccount"}),
    ]:
        union = getattr(models, name)
        assert {a.__name__ for a in get_args(union)} == members
        for arm, member in zip(SCHEMAS[name]["oneOf"], get_args(union)):
            assert set(member.__annotations__) == set(arm["properties"]), member.__name__
            assert set(member.__required_keys__) == set(arm["required"]), member.__name__


def test_every_enum_is_a_literal_of_its_values() -> None:
    checked = 0
    for name, schema in SCHEMAS.items():
        if "enum" not in schema:
            continue
        alias = getattr(models, name)
        values = [v for v in schema["enum"] if v is not None]
        args = get_args(alias)
        if type(None) in args:  # nullable: Union[Literal[...], None]
            assert None in schema["enum"], name
            (literal,) = [a for a in args if a is not type(None)]
        else:
            literal = alias
        assert get_origin(literal) is typing.Literal, name
        assert list(get_args(literal)) == values, name
        checked += 1
    assert checked >= 15


def test_list_queries_are_params_typeddicts_with_api_names_mapped() -> None:
    for path, ops in DOCUMENT["paths"].items():
        op = ops.get("get")
        if not op or not any(p["name"] == "starting_after" for p in op.get("parameters", [])):
            continue
        name = op["operationId"][0].upper() + op["operationId"][1:] + "Params"
        td = getattr(models, name)
        api_names = {p["name"] for p in op["parameters"] if p["in"] == "query"}
        py_names = set(td.__annotations__)
        assert {models.QUERY_NAMES.get(n, n) for n in py_names} == api_names, path
        assert all(re.fullmatch(r"[a-z_]+", n) for n in py_names), path
    assert models.QUERY_NAMES == {"created_gte": "created[gte]"}


def test_a_response_type_annotation_matches_the_schema_shape() -> None:
    hints = typing.get_type_hints(models.Mandate)
    assert hints["payees"] == list[str]
    assert hints["status"] == models.MandateStatus
    assert hints["authorization"] == typing.Optional[models.Consent]
    session_key = typing.get_type_hints(models.SessionKey, include_extras=True)
    assert session_key["eip712_domain"] == typing.Optional[models.Eip712Domain]
