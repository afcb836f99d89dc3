"""The Python SDK as OpenAI Agents SDK function tools for an agent that holds one session
key: read its allowance, pay (a debit pull, signed with the agent's key when the key has a
``signer``), list its pulls, read one. The same four tools as ``openrail mcp``
(docs/agents.md); every limit is the API's and the chain's to enforce, and a refusal comes
back to the model as a JSON ``error`` carrying the API's ``code``, ``detail`` and, for
``allowance_exceeded``, ``remaining`` and ``resets_at``.

    OPENRAIL_API_KEY=sks_testnet_… OPENRAIL_SESSION_KEY_ID=sk_… [OPENRAIL_AGENT_KEY=0x…] \\
    OPENAI_API_KEY=… python examples/openai_agents_tools.py "Pay 5 USD to 0x…"

The tools are plain typed methods of :class:`SessionKeyTools`; ``function_tools()`` wraps
them with ``agents.function_tool`` (PyPI ``openai-agents``), imported only there, so this
module (and its tests, which call the methods directly) needs the package only to build an
agent. Without ``OPENAI_API_KEY`` the script prints the tools' JSON schemas instead of
asking a model.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from typing import Any

from openrail import Openrail, OpenrailConnectionError, OpenrailError, account_from_private_key

INSTRUCTIONS = (
    "You pay with one Openrail session key. Check get_allowance before paying; amounts are "
    "decimal strings in the key's currency with at most 2 decimals. create_debit_pull moves "
    "money and cannot be undone. If a tool answers an error with code allowance_exceeded, "
    "pay at most its `remaining` or wait until `resets_at`; other codes (session_key_revoked, "
    "session_key_expired, destination_not_allowed, signature_required, …) mean stop and tell "
    "the user."
)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True)


def _error(e: Exception) -> str:
    if isinstance(e, OpenrailError):
        err: dict[str, Any] = {"code": e.code, "status": e.status, "detail": e.detail}
        for name in ("param", "pull_id", "remaining", "resets_at", "request_id"):
            if getattr(e, name) is not None:
                err[name] = getattr(e, name)
        return _json({"error": err})
    return _json({"error": {"code": "network_error", "detail": str(e)}})


class SessionKeyTools:
    """The agent's tools over one session key (its secret, never an account's API key)."""

    def __init__(
        self,
        secret: str,
        session_key_id: str,
        base_url: str = "http://127.0.0.1:8080",
        agent_key: str | None = None,
        wait: int = 30,
    ) -> None:
        if not secret.startswith("sks_"):
            raise ValueError("give the tools a session key's secret (sks_…), never an account key")
        self._client = Openrail(secret, base_url=base_url)
        self._key_id = session_key_id
        self._agent = account_from_private_key(agent_key) if agent_key else None
        self._wait = wait

    def close(self) -> None:
        self._client.close()

    def get_allowance(self) -> str:
        """Read this agent's session key: how much may still be pulled this epoch
        (`remaining`, in `currency`), when the epoch resets (`resets_at`, a calendar boundary
        in UTC), what was spent, the key's expiry (`expires_at`), status, allowed destinations
        and whether pulls need the agent's signature (`signer`)."""
        try:
            k = self._client.agentic.session_keys.retrieve(self._key_id)
        except (OpenrailError, OpenrailConnectionError) as e:
            return _error(e)
        epoch = k.get("current_epoch") or {}
        return _json(
            {
                "session_key_id": k["id"],
                "status": k["status"],
                "currency": k["currency"],
                "remaining": epoch.get("remaining"),
                "spent": epoch.get("spent"),
                "resets_at": epoch.get("ends_at"),
                "max_amount": k.get("max_amount"),
                "expires_at": k["expires_at"],
                "allowed_destinations": k.get("allowed_destinations"),
                "signer": k.get("signer"),
                "agent_key_configured": self._agent is not None,
            }
        )

    def create_debit_pull(
        self,
        amount: str,
        destination: str | None = None,
        description: str | None = None,
        idempotency_key: str | None = None,
    ) -> str:
        """Pay: pull `amount` from the payer with this session key, on chain, to
        `destination`. Cannot be undone. The API and the chain refuse what the key does not
        allow: more than what remains this epoch (error code allowance_exceeded, with
        `remaining` and `resets_at`), an expired or revoked key, a destination not allowed,
        a missing agent signature.

        Args:
            amount: decimal string in the key's currency, at most 2 decimals ("5.00").
            destination: wallet address (0x + 40 hex digits); when the key has
                allowed_destinations, one of them. Left out: the key's only allowed
                destination, else the account's settlement wallet.
            description: what the payment is for (at most 500 characters).
            idempotency_key: repeat the same value to retry a call whose answer you did not
                get, without paying twice.
        """
        try:
            key = self._client.agentic.session_keys.retrieve(self._key_id)
            if key.get("signer"):
                if self._agent is None:
                    return _json(
                        {
                            "error": {
                                "code": "signature_required",
                                "detail": f"session key {key['id']} needs its agent's signature "
                                "(signer "
                                f"{key.get('signer')}) and these tools have no agent key: nothing "
                                "was sent",
                            }
                        }
                    )
                allowed = key.get("allowed_destinations") or []
                dest = destination or (allowed[0] if len(allowed) == 1 else None)
                if dest is None:
                    return _json({"error": {"code": "destination_required", "detail": "name a destination"}})
                pull = self._client.agentic.debit_pulls.create_signed(
                    session_key=key,
                    amount=amount,
                    destination=dest,
                    signer=self._agent,
                    description=description,
                    idempotency_key=idempotency_key,
                    wait=self._wait,
                )
            else:
                body: dict[str, Any] = {"session_key_id": key["id"], "amount": amount}
                if destination is not None:
                    body["destination"] = destination
                if description is not None:
                    body["description"] = description
                pull = self._client.agentic.debit_pulls.create(
                    idempotency_key=idempotency_key, wait=self._wait, **body
                )
        except (OpenrailError, OpenrailConnectionError) as e:
            return _error(e)
        return _json(dict(pull))

    def list_debit_pulls(self, limit: int = 10, starting_after: str | None = None) -> str:
        """List this key's pulls, newest first (status pending, authorized, settled,
        declined with decline_code, or failed).

        Args:
            limit: pulls per page, 1 to 100.
            starting_after: a pull id from the previous page, to read the next one.
        """
        try:
            params: dict[str, Any] = {"session_key_id": self._key_id, "limit": limit}
            if starting_after:
                params["starting_after"] = starting_after
            page = self._client.agentic.debit_pulls.list(**params).first_page()
        except (OpenrailError, OpenrailConnectionError) as e:
            return _error(e)
        return _json({"data": page["data"], "has_more": page["has_more"]})

    def get_debit_pull(self, pull_id: str) -> str:
        """Read one of this key's pulls by id (pull_…): its status and decline code.

        Args:
            pull_id: the pull's id.
        """
        try:
            return _json(dict(self._client.agentic.debit_pulls.retrieve(pull_id)))
        except (OpenrailError, OpenrailConnectionError) as e:
            return _error(e)

    def function_tools(self) -> list[Any]:
        """The four methods as ``agents.FunctionTool``s (needs PyPI ``openai-agents``)."""
        agents = importlib.import_module("agents")
        return [
            agents.function_tool(f)
            for f in (self.get_allowance, self.create_debit_pull, self.list_debit_pulls, self.get_debit_pull)
        ]

    def agent(self, model: str | None = None) -> Any:
        """An ``agents.Agent`` with these tools."""
        agents = importlib.import_module("agents")
        extra = {"model": model} if model else {}
        return agents.Agent(name="payer", instructions=INSTRUCTIONS, tools=self.function_tools(), **extra)


def main(argv: list[str]) -> None:
    tools = SessionKeyTools(
        os.environ["OPENRAIL_API_KEY"],
        os.environ["OPENRAIL_SESSION_KEY_ID"],
        os.environ.get("OPENRAIL_BASE_URL", "http://127.0.0.1:8080"),
        os.environ.get("OPENRAIL_AGENT_KEY") or None,
    )
    try:
        if not os.environ.get("OPENAI_API_KEY"):
            for t in tools.function_tools():
                print(t.name, _json(t.params_json_schema))
            return
        agents = importlib.import_module("agents")
        prompt = " ".join(argv) or "How much may I still spend, and until when?"
        print(agents.Runner.run_sync(tools.agent(), prompt).final_output)
    finally:
        tools.close()


if __name__ == "__main__":
    main(sys.argv[1:])
