"""``examples/quickstart.py`` (the README's Python snippet) run as a user runs it, against
``openrail dev``; then what it did, read back through the client."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from openrail import Openrail

from .conftest import Server

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"


def test_the_quickstart_example_runs_against_openrail_dev(server: Server) -> None:
    env = {**os.environ, "API": server.url, "KEY": server.key, "PAYER_KEY": server.payer_key}
    out = subprocess.run(
        [sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    mandate = re.fullmatch(r"mandate (man_\w+) active", lines[0])
    assert mandate, out.stdout
    assert [l for l in lines if l.startswith("pull ")] == [
        l for l in lines if re.fullmatch(r"pull pull_\w+ 12\.50 authorized", l)
    ]
    assert len([l for l in lines if l.startswith("pull ")]) == 2, out.stdout
    assert "declined: allowance_exceeded, 5.00 left" in lines, out.stdout
    key = re.search(r"^key (sk_\w+) revoked$", out.stdout, re.M)
    assert key, out.stdout
    payment = re.search(r"^payment (pay_\w+) succeeded$", out.stdout, re.M)
    assert payment, out.stdout
    assert "event payment.succeeded" in lines, out.stdout

    # What it did, read back: an active mandate, two pulls and a decline, a revoked key,
    # a payment that moved 5.00.
    with Openrail(server.key, base_url=server.url) as client:
        m = client.agentic.mandates.retrieve(mandate.group(1))
        assert (m["status"], m["purpose"], m["payees"]) == (
            "active",
            "quickstart",
            ["0x000000000000000000000000000000000000bEEF"],
        )
        pulls = client.agentic.debit_pulls.list(session_key_id=key.group(1)).to_list()
        assert [p["status"] for p in pulls] == ["declined", "authorized", "authorized"]
        assert client.agentic.session_keys.retrieve(key.group(1))["status"] == "revoked"
        p = client.payments.retrieve(payment.group(1))
        assert (p["amount"], p["status"]) == ("5.00", "succeeded")
