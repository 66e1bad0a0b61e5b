"""Pure-ish logic: the conformance checks, one module per family (importing registers them)."""

from evalcore.conformance.checks import (  # noqa: F401
    cache_fields,
    completion,
    discover,
    error_codes,
    headers,
    http_semantics,
    jsonrpc,
    list_order,
    meta_validation,
    mrtr,
    pagination,
    prompts,
    removed_methods,
    result_type,
    schema_2020_12,
    tools,
)
