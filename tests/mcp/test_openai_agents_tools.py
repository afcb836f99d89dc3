"""clients/python/examples/openai_agents_tools.py against ``openrail dev``: the tool
functions called directly (no model call), and their OpenAI Agents SDK wrapping (PyPI
``openai-agents``, pinned in requirements.txt: its absence fails, never skips)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

from eth_account import Account
from helpers import DEST, ROOT, Dev

EXAMPLE = Path(ROOT) / "clients" / "python" / "examples" / "openai_agents_tools.py"


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("openai_agents_tools", EXAMPLE)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["openai_agents_tools"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_tools_pay_until_allowance_exceeded_and_read_back(dev: Dev) -> None:
    key = dev.session_key(dev.mandate()["id"], max_amount="5")
    tools = example().SessionKeyTools(key["secret"], key["id"], dev.url)
    try:
        a = json.loads(tools.get_allowance())
        assert (a["remaining"], a["currency"], a["status"]) == ("5.00", "USD", "active")
        paid = json.loads(tools.create_debit_pull("3.00", description="agents sdk"))
        assert paid["status"] == "authorized", paid
        over = json.loads(tools.create_debit_pull("3.00"))["error"]
        assert (over["code"], over["remaining"]) == ("allowance_exceeded", "2.00")
        assert over["resets_at"] == a["resets_at"]
        listed = json.loads(tools.list_debit_pulls(limit=10))
        assert {p["id"] for p in listed["data"]} == {paid["id"], over["pull_id"]}
        assert json.loads(tools.get_debit_pull(over["pull_id"]))["status"] == "declined"
    finally:
        tools.close()


def test_a_signed_key_pays_with_the_agent_key_and_not_without(dev: Dev) -> None:
    agent = Account.create()
    key = dev.session_key(dev.mandate(payees=[DEST], agent=agent.address)["id"])
    mod = example()
    signed = mod.SessionKeyTools(key["secret"], key["id"], dev.url, "0x" + bytes(agent.key).hex())
    unsigned = mod.SessionKeyTools(key["secret"], key["id"], dev.url)
    try:
        pull = json.loads(signed.create_debit_pull("1.00"))
        assert (pull["status"], pull["destination"]) == ("authorized", DEST), pull
        refused = json.loads(unsigned.create_debit_pull("1.00"))["error"]
        assert refused["code"] == "signature_required"
    finally:
        signed.close()
        unsigned.close()


def test_revoked_key_and_the_agents_sdk_wrapping(dev: Dev) -> None:
    key = dev.session_key(dev.mandate()["id"])
    tools = example().SessionKeyTools(key["secret"], key["id"], dev.url)
    try:
        wrapped = tools.function_tools()
        assert [t.name for t in wrapped] == ["get_allowance", "create_debit_pull", "list_debit_pulls", "get_debit_pull"]
        schema = wrapped[1].params_json_schema
        # Strict schemas list every argument as required; the optional ones admit null.
        assert schema["properties"]["amount"]["type"] == "string"
        assert {"type": "null"} in schema["properties"]["destination"]["anyOf"]
        assert "2 decimals" in schema["properties"]["amount"]["description"]
        assert "allowance_exceeded" in wrapped[1].description
        assert [t.name for t in tools.agent().tools] == [t.name for t in wrapped]
        with dev.client() as c:
            c.agentic.session_keys.revoke(key["id"], wait=30)
        err = json.loads(tools.create_debit_pull("1.00"))["error"]
        assert (err["code"], err["status"]) == ("unauthenticated", 401)
    finally:
        tools.close()
