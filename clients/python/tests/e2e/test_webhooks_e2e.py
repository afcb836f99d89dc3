"""A real delivery from ``openrail dev`` to a local receiver, verified with our ``Webhook``
(and the reference ``standardwebhooks``); endpoints, deliveries, events and redelivery
through the client."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from standardwebhooks.webhooks import Webhook as Reference

from openrail import Openrail, Webhook, WebhookVerificationError

from .conftest import Server

Received = list[tuple[bytes, dict[str, str]]]


def receiver() -> tuple[ThreadingHTTPServer, Received]:
    received: Received = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            received.append((body, {k.lower(): v for k, v in self.headers.items()}))
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, received


def wait_for(received: Received, needle: str, seconds: float = 20) -> tuple[bytes, dict[str, str]]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for body, headers in list(received):
            if needle.encode() in body:
                return body, headers
        time.sleep(0.2)
    raise AssertionError(f"no delivery naming {needle} within {seconds} s ({len(received)} received)")


def test_openrail_dev_delivers_a_signed_event_that_we_verify(server: Server) -> None:
    httpd, received = receiver()
    client = Openrail(server.key, base_url=server.url)
    try:
        port = httpd.server_address[1]
        endpoint = client.webhook_endpoints.create(
            url=f"http://127.0.0.1:{port}/hooks",
            enabled_events=["mandate.created", "mandate.requires_authorization"],
        )
        secret = endpoint.get("secret")
        assert secret and secret.startswith("whsec_")
        assert any(e["id"] == endpoint["id"] for e in client.webhook_endpoints.list())
        assert client.webhook_endpoints.retrieve(endpoint["id"])["url"].endswith("/hooks")

        mandate = client.agentic.mandates.create(
            payer_account_id=server.payer, max_amount="10", currency="USD", interval="monthly"
        )
        body, headers = wait_for(received, mandate["id"])

        event = Webhook(secret).verify(body, headers)
        assert event["id"] == headers["webhook-id"]
        assert event["type"].startswith("mandate.")
        assert event["data"]["object"]["id"] == mandate["id"]
        Reference(secret).verify(body, headers)
        assert client.events.retrieve(event["id"]) == event

        # A redelivery of the same event is signed with the same secret.
        queued = client.events.redeliver(event["id"], endpoint=endpoint["id"])
        assert queued["object"] == "list" and len(queued["data"]) == 1
        deadline = time.monotonic() + 20
        while sum(1 for _, h in received if h["webhook-id"] == event["id"]) < 2:
            assert time.monotonic() < deadline, "no redelivery within 20 s"
            time.sleep(0.2)
        again = [b for b, h in received if h["webhook-id"] == event["id"]][-1]
        redelivered_headers = [h for _, h in received if h["webhook-id"] == event["id"]][-1]
        assert Webhook(secret).verify(again, redelivered_headers)["id"] == event["id"]

        rotated = client.webhook_endpoints.rotate_secret(endpoint["id"])
        new_secret = rotated.get("secret")
        assert new_secret and new_secret != secret
        with pytest.raises(WebhookVerificationError):
            Webhook(new_secret).verify(body, headers)

        updated = client.webhook_endpoints.update(endpoint["id"], description="python sdk test")
        assert updated["description"] == "python sdk test"
        deliveries = client.webhook_endpoints.list_deliveries(endpoint["id"], limit=1).to_list()
        assert len(deliveries) >= 2
        assert all(d["endpoint_id"] == endpoint["id"] for d in deliveries)
        deleted = client.webhook_endpoints.delete(endpoint["id"])
        assert deleted["deleted"] is True and deleted["id"] == endpoint["id"]
    finally:
        client.close()
        httpd.shutdown()
