"""Demo server, tool layer: the support-desk tool functions and their typed results.

Each function's signature is its MCP `inputSchema` and its pydantic return model
its `outputSchema` (the SDK derives both). Every property carries `examples`
whose first value exists in `data`, so a client that fills arguments from the
schema alone gets a successful call. An unknown id raises `ToolError`, which the
SDK turns into an `isError` result: a tool execution failure the model can read,
not a protocol error.

Three tools ask the client for input the way a server author writes it with
the SDK's resolvers (`Resolve` + `Elicit` / `Sample`), which the SDK turns
into MRTR `input_required` rounds (spec/basic/patterns/mrtr.mdx):
closing a ticket and erasing a customer's data ask the user to confirm
(form elicitation), and `summarize_ticket` asks the client's model to write
the summary (sampling). Ticket changes live in the conversation's sandbox
(`desk_state`), which `get_ticket` reads back.

The tools are `async def` although none awaits: the SDK runs a plain function on a worker thread, a hop that
costs more CPU than these in-memory look-ups.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated, Literal

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, Elicit, Resolve, Sample
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel, Field

from evalcore.demo_server import data
from evalcore.demo_server.desk_state import STATE, conversation_of

CustomerId = Annotated[str, Field(description="Customer id, e.g. CUST-1001.", pattern=r"^CUST-\d{4}$", examples=["CUST-1001", "CUST-1002"])]
InvoiceId = Annotated[str, Field(description="Invoice id, e.g. INV-2026-0002.", pattern=r"^INV-\d{4}-\d{4}$", examples=["INV-2026-0002"])]
TicketId = Annotated[str, Field(description="Support ticket id, e.g. TCK-7001.", pattern=r"^TCK-\d{4}$", examples=["TCK-7001"])]
OrderId = Annotated[str, Field(description="Order id, e.g. ORD-50001.", pattern=r"^ORD-\d{5}$", examples=["ORD-50001"])]
EmailAddress = Annotated[str, Field(description="An email address.", pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$", examples=["billing@acme.example"])]
InvoiceStatus = Literal["paid", "open", "overdue"]
TicketStatus = Literal["open", "pending", "resolved", "closed"]
Priority = Literal["low", "normal", "high", "urgent"]


class WeatherReport(BaseModel):
    city: str
    units: Literal["celsius", "fahrenheit"]
    temperature: float = Field(description="Current temperature in the requested units.")
    condition: str
    humidity_percent: int
    wind_kmh: float


class Invoice(BaseModel):
    invoice_id: str
    customer_id: str
    amount: float
    currency: str
    status: InvoiceStatus
    issued_on: str = Field(description="Issue date, YYYY-MM-DD.")
    due_on: str = Field(description="Due date, YYYY-MM-DD.")


class InvoiceSearchResult(BaseModel):
    customer_id: str
    status: InvoiceStatus
    count: int
    invoices: list[Invoice]


class EmailReceipt(BaseModel):
    message_id: str
    status: Literal["queued"]
    to: str
    cc: list[str]
    subject: str


class CalendarEvent(BaseModel):
    event_id: str
    title: str
    start: str = Field(description="Start time, ISO 8601 UTC.")
    end: str = Field(description="End time, ISO 8601 UTC.")
    attendees: list[str]


class CalendarDay(BaseModel):
    date: str
    count: int
    events: list[CalendarEvent]


class Customer(BaseModel):
    customer_id: str
    name: str
    email: str
    plan: str
    account_manager: str
    country: str
    open_tickets: int
    overdue_invoices: int


class Ticket(BaseModel):
    ticket_id: str
    customer_id: str
    subject: str
    status: TicketStatus
    priority: Priority


class TicketStatusChange(BaseModel):
    ticket_id: str
    previous_status: TicketStatus
    status: TicketStatus


class TicketSummary(BaseModel):
    ticket_id: str
    summary: str = Field(description="One sentence, written by the client's model.")
    summarized_by: str = Field(description="The model that wrote the summary, as the client reported it.")


class Confirmation(BaseModel):
    confirm: bool = Field(description="True to go ahead.")


class Article(BaseModel):
    article_id: str
    title: str
    summary: str


class KnowledgeBaseResults(BaseModel):
    query: str
    count: int
    articles: list[Article]


class OrderStatus(BaseModel):
    order_id: str
    customer_id: str
    status: str
    carrier: str
    tracking_number: str
    estimated_delivery: str
    items: list[str]


class ErasureReceipt(BaseModel):
    customer_id: str
    erasure_id: str
    status: Literal["scheduled"]
    completes_within_days: int


async def get_weather(
    city: Annotated[str, Field(description="City name, e.g. Paris.", examples=["Paris", "London"])],
    units: Annotated[Literal["celsius", "fahrenheit"], Field(description="Temperature units.")] = "celsius",
) -> WeatherReport:
    """Get the current weather (temperature, condition, humidity, wind) for a city.

    Useful before scheduling on-site visits or explaining weather-related shipping delays.
    """
    if city not in data.WEATHER:
        raise ToolError(f"No weather station for {city!r}; known cities: {', '.join(data.WEATHER)}")
    celsius, condition, humidity, wind = data.WEATHER[city]
    temperature = celsius if units == "celsius" else round(celsius * 9 / 5 + 32, 1)
    return WeatherReport(city=city, units=units, temperature=temperature, condition=condition, humidity_percent=humidity, wind_kmh=wind)


def _invoice(row: tuple[str, str, float, str, str, str, str]) -> Invoice:
    invoice_id, customer_id, amount, currency, status, issued, due = row
    return Invoice(
        invoice_id=invoice_id,
        customer_id=customer_id,
        amount=amount,
        currency=currency,
        status=status,  # type: ignore[arg-type]
        issued_on=issued,
        due_on=due,
    )


def _require_customer(customer_id: str) -> dict[str, str]:
    if customer_id not in data.CUSTOMERS:
        raise ToolError(f"Customer {customer_id!r} not found; check the id (format CUST-1234).")
    return data.CUSTOMERS[customer_id]


async def search_invoices(
    customer_id: CustomerId,
    status: Annotated[InvoiceStatus, Field(description="Only invoices in this state.")],
    from_date: Annotated[date | None, Field(description="Earliest issue date, inclusive (YYYY-MM-DD).", examples=["2026-01-01"])] = None,
    to_date: Annotated[date | None, Field(description="Latest issue date, inclusive (YYYY-MM-DD).", examples=["2026-12-31"])] = None,
) -> InvoiceSearchResult:
    """Search one customer's invoices by payment status (paid, open or overdue), optionally within an issue-date range.

    Returns a list of invoices; use get_invoice for a single invoice you already know the id of.
    """
    _require_customer(customer_id)
    low = from_date.isoformat() if from_date else "0000-01-01"
    high = to_date.isoformat() if to_date else "9999-12-31"
    found = [_invoice(row) for row in data.INVOICES if row[1] == customer_id and row[4] == status and low <= row[5] <= high]
    return InvoiceSearchResult(customer_id=customer_id, status=status, count=len(found), invoices=found)


async def get_invoice(invoice_id: InvoiceId) -> Invoice:
    """Fetch a single invoice by its id: amount, currency, status and issue/due dates."""
    for row in data.INVOICES:
        if row[0] == invoice_id:
            return _invoice(row)
    raise ToolError(f"Invoice {invoice_id!r} not found; search_invoices lists a customer's invoices.")


async def send_email(
    to: EmailAddress,
    subject: Annotated[str, Field(description="Subject line.", examples=["Your invoice INV-2026-0002"])],
    body: Annotated[str, Field(description="Plain-text body.", examples=["Hello, please find your invoice attached."])],
    cc: Annotated[
        list[EmailAddress] | None,
        Field(description="Addresses to copy.", examples=[["team-lead@desk.example"]]),
    ] = None,
) -> EmailReceipt:
    """Send an email to a customer or colleague and return the queued message id."""
    message_id = f"MSG-{data.stable_number(to, subject, body, modulo=1_000_000):06d}"
    return EmailReceipt(message_id=message_id, status="queued", to=to, cc=cc or [], subject=subject)


def _utc(moment: datetime) -> str:
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def create_calendar_event(
    title: Annotated[str, Field(description="Event title.", examples=["Acme renewal call"])],
    start: Annotated[datetime, Field(description="Start time, ISO 8601.", examples=["2026-08-05T10:00:00Z"])],
    end: Annotated[datetime, Field(description="End time, ISO 8601.", examples=["2026-08-05T10:30:00Z"])],
    attendees: Annotated[
        list[EmailAddress],
        Field(description="Attendee email addresses.", examples=[["billing@acme.example"]]),
    ],
) -> CalendarEvent:
    """Create a calendar event (meeting or call) with a title, start and end time and attendees."""
    if _utc(end) <= _utc(start):
        raise ToolError(f"The event ends ({_utc(end)}) before it starts ({_utc(start)}).")
    event_id = f"EVT-{data.stable_number(title, _utc(start), _utc(end)):04d}"
    return CalendarEvent(event_id=event_id, title=title, start=_utc(start), end=_utc(end), attendees=attendees)


async def list_calendar_events(
    date: Annotated[date, Field(description="Day to list, YYYY-MM-DD.", examples=["2026-08-03"])],
) -> CalendarDay:
    """List the calendar events (meetings, calls, stand-ups) scheduled on one day."""
    day = date.isoformat()
    events = [
        CalendarEvent(event_id=event_id, title=title, start=start, end=end, attendees=attendees)
        for event_id, title, start, end, attendees in data.CALENDAR.get(day, [])
    ]
    return CalendarDay(date=day, count=len(events), events=events)


async def get_customer(customer_id: CustomerId) -> Customer:
    """Look up a customer's account: company name, contact email, plan, account manager, open tickets, overdue invoices."""
    record = _require_customer(customer_id)
    open_tickets = sum(1 for t in data.TICKETS.values() if t[0] == customer_id and t[2] in ("open", "pending"))
    overdue = sum(1 for row in data.INVOICES if row[1] == customer_id and row[4] == "overdue")
    return Customer(customer_id=customer_id, open_tickets=open_tickets, overdue_invoices=overdue, **record)


def _conversation(ctx: Context) -> str:
    return conversation_of(ctx.request_context.meta if ctx.request_context is not None else None)


async def create_support_ticket(
    subject: Annotated[str, Field(description="One-line summary.", examples=["Cannot download invoice PDF"])],
    description: Annotated[str, Field(description="What happened, steps tried.", examples=["The download button returns a 500 error."])],
    customer_id: CustomerId,
    ctx: Context,
    priority: Annotated[Priority, Field(description="How urgent the issue is.")] = "normal",
) -> Ticket:
    """Open a new support ticket for a customer's problem, with a subject, description and priority."""
    _require_customer(customer_id)
    ticket_id = f"TCK-{8000 + data.stable_number(customer_id, subject, description, modulo=2000):04d}"
    STATE.put_ticket(_conversation(ctx), ticket_id, (customer_id, subject, "open", priority))
    return Ticket(ticket_id=ticket_id, customer_id=customer_id, subject=subject, status="open", priority=priority)


def _require_ticket(ctx: Context, ticket_id: str) -> tuple[str, str, str, str]:
    ticket = STATE.ticket(_conversation(ctx), ticket_id)
    if ticket is None:
        raise ToolError(f"Ticket {ticket_id!r} not found; ticket ids look like TCK-7001.")
    return ticket


def confirm_status_change(ticket_id: str, status: str, ctx: Context) -> Elicit[Confirmation] | Confirmation:
    """Closing is final, so the user confirms it; any other change goes ahead without asking."""
    _, subject, current, _ = _require_ticket(ctx, ticket_id)
    if status != "closed" or current == "closed":
        return Confirmation(confirm=True)
    return Elicit(f"Close ticket {ticket_id} ({subject!r})? A closed ticket cannot be reopened.", Confirmation)


async def update_ticket_status(
    ticket_id: TicketId,
    status: Annotated[TicketStatus, Field(description="The new status.")],
    confirmation: Annotated[ElicitationResult[Confirmation], Resolve(confirm_status_change)],
    ctx: Context,
) -> TicketStatusChange:
    """Change the status of an existing support ticket (open, pending, resolved or closed). Closing asks the user to confirm."""
    customer_id, subject, previous, priority = _require_ticket(ctx, ticket_id)
    if not (isinstance(confirmation, AcceptedElicitation) and confirmation.data.confirm):
        raise ToolError(f"The user did not confirm closing {ticket_id}; it stays {previous}.")
    STATE.put_ticket(_conversation(ctx), ticket_id, (customer_id, subject, status, priority))
    return TicketStatusChange(ticket_id=ticket_id, previous_status=previous, status=status)  # type: ignore[arg-type]


async def get_ticket(ticket_id: TicketId, ctx: Context) -> Ticket:
    """Look up one support ticket by id: its subject, current status and priority."""
    customer_id, subject, status, priority = _require_ticket(ctx, ticket_id)
    return Ticket(ticket_id=ticket_id, customer_id=customer_id, subject=subject, status=status, priority=priority)  # type: ignore[arg-type]


def ask_for_summary(ticket_id: str, ctx: Context) -> Sample:
    customer_id, subject, status, priority = _require_ticket(ctx, ticket_id)
    customer = data.CUSTOMERS.get(customer_id, {}).get("name", customer_id)
    ticket = f"Ticket {ticket_id} from {customer}: {subject!r}. Status {status}, priority {priority}."
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize this support ticket in one sentence.\n\n{ticket}"))],
        max_tokens=120,
        system_prompt="You write one-sentence handover notes for a support team.",
    )


async def summarize_ticket(
    ticket_id: TicketId,
    sampled: Annotated[CreateMessageResult, Resolve(ask_for_summary)],
) -> TicketSummary:
    """Summarize a support ticket in one sentence for a handover note; the client's own model writes the summary (sampling)."""
    content = sampled.content
    text = content.text if isinstance(content, TextContent) else ""
    if not text.strip():
        raise ToolError("The client's model returned no summary text.")
    return TicketSummary(ticket_id=ticket_id, summary=text.strip()[:500], summarized_by=sampled.model)


async def search_knowledge_base(
    query: Annotated[str, Field(description="Keywords, e.g. 'refund'.", examples=["refund"])],
    limit: Annotated[int, Field(description="Maximum articles to return.", ge=1, le=10)] = 3,
    ctx: Context | None = None,
) -> KnowledgeBaseResults:
    """Search internal help-desk articles (how-to guides and policies) by keyword."""
    words = {word.lower() for word in query.split()}
    hits: list[Article] = []
    for searched, (article_id, title, summary, tags) in enumerate(data.KNOWLEDGE_BASE, start=1):
        if len(hits) < limit and (words & set(tags) or any(word in title.lower() for word in words)):
            hits.append(Article(article_id=article_id, title=title, summary=summary))
        if ctx is not None and searched in (len(data.KNOWLEDGE_BASE) // 2, len(data.KNOWLEDGE_BASE)):
            # A client that sent a progressToken hears how far the search got (a no-op otherwise).
            await ctx.report_progress(searched, len(data.KNOWLEDGE_BASE), "articles searched")
    return KnowledgeBaseResults(query=query, count=len(hits), articles=hits)


async def get_order_status(order_id: OrderId) -> OrderStatus:
    """Get the fulfilment status of a customer order: carrier, tracking number, estimated delivery, items."""
    if order_id not in data.ORDERS:
        raise ToolError(f"Order {order_id!r} not found; order ids look like ORD-50001.")
    customer_id, status, carrier, tracking, eta, items = data.ORDERS[order_id]
    return OrderStatus(
        order_id=order_id,
        customer_id=customer_id,
        status=status,
        carrier=carrier,
        tracking_number=tracking,
        estimated_delivery=eta,
        items=items,
    )


def confirm_erasure(customer_id: str) -> Elicit[Confirmation]:
    name = _require_customer(customer_id)["name"]
    return Elicit(f"Erase all personal data of {name} ({customer_id})? This cannot be undone.", Confirmation)


async def erase_customer_data(
    customer_id: CustomerId,
    confirmation: Annotated[ElicitationResult[Confirmation], Resolve(confirm_erasure)],
) -> ErasureReceipt:
    """Permanently erase a customer's personal data (GDPR request). Asks the user to confirm, so the client must support elicitation."""
    _require_customer(customer_id)
    if not (isinstance(confirmation, AcceptedElicitation) and confirmation.data.confirm):
        raise ToolError(f"The user did not confirm the erasure of {customer_id}; nothing was erased.")
    erasure_id = f"ERASE-{data.stable_number(customer_id):04d}"
    return ErasureReceipt(customer_id=customer_id, erasure_id=erasure_id, status="scheduled", completes_within_days=30)
