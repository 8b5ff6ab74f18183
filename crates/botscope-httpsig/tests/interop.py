"""The other side of botscope's Web Bot Auth interoperability test: PyPI's
http-message-signatures (an independent RFC 9421 implementation) signs a
request botscope then verifies, and verifies one botscope signed.

    python interop.py sign   < {"d", "keyid", "url", "signature_agent", "components", "created", "expires", "nonce"}
    python interop.py verify < {"x", "url", "headers"}

Prints the signed request's headers (sign), or {"ok": true/false, "error"} (verify).
"""
import base64
import datetime
import json
import sys

import requests
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from http_message_signatures import HTTPMessageSigner, HTTPMessageVerifier, HTTPSignatureKeyResolver, algorithms


def b64url(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


class Keys(HTTPSignatureKeyResolver):
    def __init__(self, private=None, public=None):
        self.private, self.public = private, public

    def resolve_private_key(self, key_id):
        return self.private

    def resolve_public_key(self, key_id):
        return self.public


def at(ts):
    return datetime.datetime.fromtimestamp(ts, tz=datetime.timezone.utc)


def main():
    mode = sys.argv[1]
    data = json.load(sys.stdin)
    if mode == "sign":
        key = Ed25519PrivateKey.from_private_bytes(b64url(data["d"]))
        headers = {"Signature-Agent": data["signature_agent"]} if data.get("signature_agent") else {}
        req = requests.Request("GET", data["url"], headers=headers).prepare()
        signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519, key_resolver=Keys(private=key))
        signer.sign(
            req,
            key_id=data["keyid"],
            created=at(data["created"]),
            expires=at(data["expires"]),
            nonce=data["nonce"],
            label="sig1",
            tag="web-bot-auth",
            covered_component_ids=data["components"],
        )
        print(json.dumps(dict(req.headers)))
    elif mode == "verify":
        key = Ed25519PublicKey.from_public_bytes(b64url(data["x"]))
        req = requests.Request("GET", data["url"], headers=data["headers"]).prepare()
        verifier = HTTPMessageVerifier(signature_algorithm=algorithms.ED25519, key_resolver=Keys(public=key))
        try:
            results = verifier.verify(req, expect_tag="web-bot-auth", max_age=datetime.timedelta(hours=1))
            print(json.dumps({"ok": True, "labels": [r.label for r in results]}))
        except Exception as e:  # the verdict, reported to the test
            print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"}))
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
