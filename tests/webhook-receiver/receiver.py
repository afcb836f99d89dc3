"""A webhook receiver for the end-to-end tests that verifies every delivery with the
reference Standard Webhooks library (`standardwebhooks` from PyPI), not Openrail's code.

    receiver.py --secrets-file FILE [--port N] [--fail-first N]

Listens on 127.0.0.1 (port 0: a free one) and prints `listening PORT`, then one JSON line
per request: the `webhook-id`, the event's type and object id, which secrets of FILE (one
per line, read at every request so a test can add a rotated one) verified it (their
indexes), how many signatures the header carried, the status answered, the attempt number
of this webhook-id, and the body. A delivery no secret verifies gets 400; the first
`--fail-first` attempts of each webhook-id get 500; the rest 200.
"""

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

LOCK = threading.Lock()
ATTEMPTS = {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--secrets-file", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--fail-first", type=int, default=0)
    args = ap.parse_args()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            headers = {k.lower(): v for k, v in self.headers.items()}
            with open(args.secrets_file) as f:
                secrets = [line.strip() for line in f if line.strip()]
            verified = []
            for i, secret in enumerate(secrets):
                try:
                    Webhook(secret).verify(body, headers)
                    verified.append(i)
                except (WebhookVerificationError, ValueError):
                    pass
            wid = headers.get("webhook-id", "")
            with LOCK:
                ATTEMPTS[wid] = ATTEMPTS.get(wid, 0) + 1
                attempt = ATTEMPTS[wid]
            if not verified:
                status = 400
            elif attempt <= args.fail_first:
                status = 500
            else:
                status = 200
            try:
                event = json.loads(body)
            except ValueError:
                event = None
            line = {
                "webhook_id": wid,
                "type": (event or {}).get("type"),
                "object_id": ((event or {}).get("data") or {}).get("object", {}).get("id"),
                "verified": verified,
                "signatures": len(headers.get("webhook-signature", "").split(" ")),
                "content_type": headers.get("content-type"),
                "status": status,
                "attempt": attempt,
                "body": event,
            }
            with LOCK:
                sys.stdout.write(json.dumps(line) + "\n")
                sys.stdout.flush()
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    sys.stdout.write(f"listening {server.server_address[1]}\n")
    sys.stdout.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()
