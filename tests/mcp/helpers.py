"""What the MCP tests share: the ``openrail dev`` that ``tests/mcp/run.sh`` started
(OPENRAIL_API_URL, OPENRAIL_API_KEY — the account's key —, OPENRAIL_PAYER_KEY,
OPENRAIL_PAYER: a missing one fails every test, never skips it), mandates and session keys
made through the HTTP API with the account's key (the demo payer signs the mandate), and
``openrail mcp`` run as a subprocess with only the session key's secret."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from openrail import Openrail, account_from_private_key

ROOT = Path(__file__).resolve().parents[2]
DEST = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"


def openrail_bin() -> str:
    target = os.environ.get("CARGO_TARGET_DIR") or str(ROOT / "target")
    path = os.environ.get("OPENRAIL_BIN") or os.path.join(target, "debug", "openrail")
    assert os.access(path, os.X_OK), f"no openrail binary at {path}: cargo build --workspace --all-targets --locked"
    return path


@dataclass(frozen=True)
class Dev:
    url: str
    key: str
    payer_key: str
    payer: str

    def client(self) -> Openrail:
        return Openrail(self.key, base_url=self.url)

    def mandate(self, **extra: Any) -> dict[str, Any]:
        """An active mandate the demo payer signed: 100 USD a day unless told otherwise."""
        args: dict[str, Any] = {"max_amount": "100.00", "currency": "USD", "interval": "daily"}
        args.update(extra)
        with self.client() as c:
            created = c.agentic.mandates.create(payer_account_id=self.payer, **args)
            m = c.agentic.mandates.sign_and_authorize(created, account_from_private_key(self.payer_key), wait=30)
        assert m["status"] == "active", m
        return dict(m)

    def session_key(self, mandate_id: str, **extra: Any) -> dict[str, Any]:
        with self.client() as c:
            k = c.agentic.session_keys.create(mandate_id=mandate_id, expires_in=3600, wait=30, **extra)
        assert k["status"] == "active" and str(k.get("secret", "")).startswith("sks_testnet_"), k
        return dict(k)


@pytest.fixture(scope="session")
def dev() -> Dev:
    names = ("OPENRAIL_API_URL", "OPENRAIL_API_KEY", "OPENRAIL_PAYER_KEY", "OPENRAIL_PAYER")
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        pytest.fail(f"{', '.join(missing)} unset: run tests/mcp/run.sh (it starts openrail dev)")
    return Dev(*(os.environ[n] for n in names))


def server_env(dev: Dev, key: dict[str, Any], *, key_id: bool = False, agent_key: str | None = None) -> dict[str, str]:
    """The MCP server's whole environment: the agent's credential only (the test's own
    OPENRAIL_API_KEY, the account's, is not passed on)."""
    env = {"OPENRAIL_API_KEY": key["secret"], "OPENRAIL_BASE_URL": dev.url, "RUST_LOG": "openrail=debug,warn"}
    if key_id:
        env["OPENRAIL_SESSION_KEY_ID"] = key["id"]
    if agent_key:
        env["OPENRAIL_AGENT_KEY"] = agent_key
    return env


@contextlib.asynccontextmanager
async def mcp_session(env: dict[str, str]) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=openrail_bin(), args=["mcp"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        assert init.protocol_version == "2025-06-18"
        yield session


@contextlib.contextmanager
def http_server(env: dict[str, str]) -> Iterator[str]:
    """`openrail mcp --http 127.0.0.1:0`; yields its URL (from its stderr)."""
    proc = subprocess.Popen(
        [openrail_bin(), "mcp", "--http", "127.0.0.1:0"],
        env={"PATH": os.environ.get("PATH", ""), **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = None
        assert proc.stderr is not None
        for line in proc.stderr:
            m = re.search(r"listening on (http://\S+/mcp)", line)
            if m:
                url = m.group(1)
                break
        assert url, f"openrail mcp --http printed no address (exit {proc.poll()})"
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        assert proc.stdout is not None and proc.stdout.read() == "", "stdout must stay empty"


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")
