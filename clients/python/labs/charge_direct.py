"""The charge as most agent tools make it: straight to the provider (Stripe-like), no key."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request


def charge_directly(payments_url: str, invoice_id: str, amount: str) -> str:
    cents = int(round(float(amount.split()[0]) * 100))
    body = urllib.parse.urlencode({"amount": cents, "currency": "usd", "metadata[invoice_id]": invoice_id}).encode()
    request = urllib.request.Request(f"{payments_url}/v1/charges", data=body, method="POST", headers={"authorization": "Bearer sk_test_effectd"})
    with urllib.request.urlopen(request, timeout=10) as response:
        charge = json.loads(response.read())
    return f"charged: {charge['id']} for invoice {invoice_id}"
