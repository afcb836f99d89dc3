"""The server the end-to-end tests talk to: ``scripts/test-against-dev.sh`` starts a fresh
``openrail dev`` and exports ``OPENRAIL_API_URL``, ``OPENRAIL_API_KEY``,
``OPENRAIL_PAYER_KEY`` and ``OPENRAIL_PAYER``. Without them the end-to-end tests are
skipped, saying so (pytest's ``-ra`` summary), unless ``OPENRAIL_REQUIRE_SERVER`` is set (as
the script does): then they fail."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

NAMES = ("OPENRAIL_API_URL", "OPENRAIL_API_KEY", "OPENRAIL_PAYER_KEY", "OPENRAIL_PAYER")
MISSING = [n for n in NAMES if not os.environ.get(n)]


@dataclass(frozen=True)
class Server:
    url: str
    key: str
    payer_key: str
    payer: str


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not MISSING or os.environ.get("OPENRAIL_REQUIRE_SERVER"):
        return
    skip = pytest.mark.skip(
        reason=f"no openrail dev ({', '.join(MISSING)} unset): run scripts/test-against-dev.sh"
    )
    for item in items:
        if "/e2e/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def server() -> Server:
    if MISSING:
        pytest.fail(f"{', '.join(MISSING)} must be set (OPENRAIL_REQUIRE_SERVER is set)")
    return Server(
        os.environ["OPENRAIL_API_URL"],
        os.environ["OPENRAIL_API_KEY"],
        os.environ["OPENRAIL_PAYER_KEY"],
        os.environ["OPENRAIL_PAYER"],
    )
