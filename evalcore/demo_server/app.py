"""Demo server, assembly layer: builds the support-desk `MCPServer` (tools, resources, prompts).

`build_server()` installs the one in-process spec fix (`spec_fixes.UnknownToolGuard`);
the transport-level fixes and the defects are wired around it in `serve`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Final

from mcp.server import CacheHint, MCPServer
from mcp.server.caching import CacheableMethod
from mcp.server.context import ServerMiddleware
from mcp_types import ToolAnnotations

from evalcore.demo_server import data, tools
from evalcore.demo_server.spec_fixes import UnknownToolGuard

SERVER_NAME: Final = "evalcore-demo-support-desk"
SERVER_TITLE: Final = "Support Desk (evalcore demo)"
SERVER_VERSION: Final = "0.1.0"
INSTRUCTIONS: Final = (
    "Tools for a customer support and operations team: customers, invoices, orders, support tickets, "
    "calendar, email, a knowledge base and weather. All data is fictional."
)

# Lists change only on deploy, so clients may share and reuse them for a minute.
_LIST_HINT: Final = CacheHint(ttl_ms=60_000, scope="public")
CACHE_HINTS: Final[dict[CacheableMethod, CacheHint]] = {
    "server/discover": _LIST_HINT,
    "tools/list": _LIST_HINT,
    "prompts/list": _LIST_HINT,
    "resources/list": _LIST_HINT,
    "resources/templates/list": _LIST_HINT,
    "resources/read": CacheHint(ttl_ms=300_000, scope="public"),
}

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
_WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
_SENDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)
_DESTROYS = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)

# (function, title, annotations), in the order tools/list returns them.
TOOL_TABLE: Final[tuple[tuple[Callable[..., Any], str, ToolAnnotations], ...]] = (
    (tools.get_weather, "Current weather", _READ_ONLY),
    (tools.search_invoices, "Search invoices", _READ_ONLY),
    (tools.get_invoice, "Get invoice", _READ_ONLY),
    (tools.send_email, "Send email", _SENDS),
    (tools.create_calendar_event, "Create calendar event", _WRITES),
    (tools.list_calendar_events, "List calendar events", _READ_ONLY),
    (tools.get_customer, "Get customer", _READ_ONLY),
    (tools.create_support_ticket, "Create support ticket", _WRITES),
    (tools.update_ticket_status, "Update ticket status", _WRITES),
    (tools.get_ticket, "Get ticket", _READ_ONLY),
    (tools.summarize_ticket, "Summarize ticket", _READ_ONLY),
    (tools.search_knowledge_base, "Search knowledge base", _READ_ONLY),
    (tools.get_order_status, "Order status", _READ_ONLY),
    (tools.erase_customer_data, "Erase customer data", _DESTROYS),
)
TOOL_NAMES: Final = tuple(fn.__name__ for fn, _, _ in TOOL_TABLE)

# Optional description rewrites (`--variant v2`), so the drift demo can change the server's
# descriptions, and with them its fingerprint, without changing any behaviour. v1 is the default.
DESCRIPTION_VARIANTS: Final[dict[str, dict[str, str]]] = {
    "v1": {},
    "v2": {"search_knowledge_base": "Look things up."},
}


def build_server(*, unknown_tool_fix: bool = True, variant: str = "v1") -> MCPServer:
    """The demo server; `unknown_tool_fix=False` keeps the SDK's isError answer to an unknown tool;
    `variant` picks a set of description rewrites from `DESCRIPTION_VARIANTS`."""
    rewrites = DESCRIPTION_VARIANTS[variant]
    server = MCPServer(
        SERVER_NAME,
        title=SERVER_TITLE,
        version=SERVER_VERSION,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        cache_hints=CACHE_HINTS,
    )
    if unknown_tool_fix:
        guard: ServerMiddleware[Any] = UnknownToolGuard(server)
        server.middleware.append(guard)
    for fn, title, hints in TOOL_TABLE:
        description = rewrites.get(fn.__name__, inspect.cleandoc(fn.__doc__ or ""))
        server.add_tool(fn, title=title, description=description, annotations=hints)
    _add_resources(server)
    _add_prompts(server)
    return server


def _add_resources(server: MCPServer) -> None:
    @server.resource(
        "kb://policies/refunds",
        name="refund-policy",
        title="Refund policy",
        description="When and how support may issue refunds.",
        mime_type="text/markdown",
    )
    def refund_policy() -> str:
        return data.REFUND_POLICY

    @server.resource(
        "kb://policies/shipping",
        name="shipping-policy",
        title="Shipping policy",
        description="Shipping times, tracking and lost-parcel handling.",
        mime_type="text/markdown",
    )
    def shipping_policy() -> str:
        return data.SHIPPING_POLICY


def _add_prompts(server: MCPServer) -> None:
    @server.prompt(title="Triage a ticket", description="Classify a support ticket's category and priority.")
    def triage_ticket(ticket_text: str) -> str:
        return (
            "You are a support lead. Classify this ticket: give a category (billing, technical, shipping, "
            "account), a priority (low, normal, high, urgent) and the first step to take.\n\n"
            f"Ticket:\n{ticket_text}"
        )

    @server.prompt(title="Draft a customer reply", description="Draft a short, polite reply to a customer.")
    def draft_customer_reply(customer_name: str, issue: str) -> str:
        return f"Write a short, friendly reply to {customer_name} about: {issue}. Acknowledge the problem, say what happens next, and do not promise refunds."
