"""Pure-ish logic: the conformance checks, one module per family or per rule (importing registers them)."""

from evalcore.conformance.checks import (  # noqa: F401
    batch,
    cache_fields,
    cancellation,
    completion,
    discover,
    error_codes,
    headers,
    http_semantics,
    jsonrpc,
    list_order,
    malformed_ids,
    meta_validation,
    mrtr,
    pagination,
    prompts,
    removed_methods,
    result_type,
    schema_2020_12,
    subscriptions,
    tools,
)
