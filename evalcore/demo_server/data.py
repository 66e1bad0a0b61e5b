"""Demo server, data layer: the fixed fake records behind the support-desk tools.

Plain constants, no I/O, no clock, no randomness: the same call always gets the
same answer, so golden tasks and conformance runs are repeatable. The first id
of each table is the one tool schemas offer as their example, so keep it first.
"""

from __future__ import annotations

import zlib
from typing import Final

CUSTOMERS: Final[dict[str, dict[str, str]]] = {
    "CUST-1001": {
        "name": "Acme Corporation",
        "email": "billing@acme.example",
        "plan": "enterprise",
        "account_manager": "Dana Whitfield",
        "country": "US",
    },
    "CUST-1002": {
        "name": "Globex Industries",
        "email": "accounts@globex.example",
        "plan": "business",
        "account_manager": "Priya Raman",
        "country": "DE",
    },
    "CUST-1003": {
        "name": "Initech Ltd",
        "email": "it-support@initech.example",
        "plan": "starter",
        "account_manager": "Tom Okafor",
        "country": "GB",
    },
}

# (invoice_id, customer_id, amount, currency, status, issued, due)
INVOICES: Final[list[tuple[str, str, float, str, str, str, str]]] = [
    ("INV-2026-0001", "CUST-1001", 12500.00, "USD", "paid", "2026-01-05", "2026-02-04"),
    ("INV-2026-0002", "CUST-1001", 12500.00, "USD", "open", "2026-06-05", "2026-07-05"),
    ("INV-2026-0003", "CUST-1001", 980.50, "USD", "overdue", "2026-03-12", "2026-04-11"),
    ("INV-2026-0004", "CUST-1002", 4300.00, "EUR", "paid", "2026-02-01", "2026-03-03"),
    ("INV-2026-0005", "CUST-1002", 4300.00, "EUR", "overdue", "2026-05-01", "2026-05-31"),
    ("INV-2026-0006", "CUST-1003", 149.00, "GBP", "open", "2026-06-20", "2026-07-20"),
]

# order_id -> (customer_id, status, carrier, tracking_number, estimated_delivery, items)
ORDERS: Final[dict[str, tuple[str, str, str, str, str, list[str]]]] = {
    "ORD-50001": ("CUST-1001", "shipped", "UPS", "1Z999AA10123456784", "2026-08-04", ["Rack server R740", "Rail kit"]),
    "ORD-50002": ("CUST-1002", "processing", "DHL", "", "2026-08-11", ["Support hours block (40h)"]),
    "ORD-50003": ("CUST-1003", "delivered", "Royal Mail", "RM123456789GB", "2026-07-22", ["USB-C dock"]),
}

# ticket_id -> (customer_id, subject, status, priority)
TICKETS: Final[dict[str, tuple[str, str, str, str]]] = {
    "TCK-7001": ("CUST-1001", "VPN drops every 30 minutes", "open", "high"),
    "TCK-7002": ("CUST-1002", "Invoice INV-2026-0005 disputed", "pending", "normal"),
    "TCK-7003": ("CUST-1003", "Password reset email not arriving", "resolved", "low"),
}

# date -> [(event_id, title, start, end, attendees)]
CALENDAR: Final[dict[str, list[tuple[str, str, str, str, list[str]]]]] = {
    "2026-08-03": [
        ("EVT-3001", "Support stand-up", "2026-08-03T09:00:00Z", "2026-08-03T09:15:00Z", ["ops-team@desk.example"]),
        (
            "EVT-3002",
            "Acme quarterly review",
            "2026-08-03T14:00:00Z",
            "2026-08-03T15:00:00Z",
            ["dana.whitfield@desk.example", "billing@acme.example"],
        ),
    ],
    "2026-08-04": [
        ("EVT-3003", "Incident post-mortem", "2026-08-04T11:00:00Z", "2026-08-04T12:00:00Z", ["ops-team@desk.example"]),
    ],
}

# (article_id, title, summary, tags)
KNOWLEDGE_BASE: Final[list[tuple[str, str, str, tuple[str, ...]]]] = [
    ("KB-101", "Issuing a refund", "Refunds up to 30 days after payment; over 1,000 USD needs a lead's approval.", ("refund", "billing", "payment")),
    ("KB-102", "Resetting a customer password", "Send the reset link from the admin console; links expire after 1 hour.", ("password", "login", "account")),
    ("KB-103", "Troubleshooting VPN disconnects", "Check MTU, keep-alive interval and client version before escalating.", ("vpn", "network", "disconnect")),
    ("KB-104", "Shipping delays and lost parcels", "Open a carrier trace after 5 business days without a scan.", ("shipping", "order", "delivery")),
    ("KB-105", "Disputed invoices", "Pause dunning, tag the ticket 'billing-dispute' and loop in the account manager.", ("invoice", "billing", "dispute")),
]

# city -> (temperature in Celsius, condition, humidity percent, wind km/h)
WEATHER: Final[dict[str, tuple[float, str, int, float]]] = {
    "Paris": (21.5, "partly cloudy", 58, 12.0),
    "London": (17.0, "light rain", 81, 18.5),
    "New York": (27.0, "sunny", 49, 9.0),
    "Tokyo": (29.5, "humid and overcast", 74, 7.5),
    "Berlin": (19.0, "cloudy", 63, 14.0),
    "Sydney": (13.5, "clear", 55, 21.0),
}

REFUND_POLICY: Final = """# Refund policy

- Customers may request a refund within **30 days** of payment.
- Refunds above **1,000 USD** (or equivalent) need approval from a support lead.
- Refunds go back to the original payment method within 5-10 business days.
- Partial refunds are allowed for unused support hours, pro rata.
- Never promise a refund for an invoice that is under dispute; escalate instead.
"""

SHIPPING_POLICY: Final = """# Shipping policy

- Orders ship within **2 business days** of payment.
- Tracking numbers are emailed to the billing contact when the parcel leaves the warehouse.
- No carrier scan for 5 business days: open a carrier trace and tell the customer.
- Lost parcels are re-shipped free of charge once the trace confirms the loss.
"""


def stable_number(*parts: str, modulo: int = 10_000) -> int:
    """A number derived only from `parts`, so "new" ids repeat exactly for the same input."""
    return zlib.crc32("\x1f".join(parts).encode("utf-8")) % modulo
