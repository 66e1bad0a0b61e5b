"""The error hierarchy of evalcore: exceptions for problems of the harness or its input.

A server that breaks a protocol rule is not an exception: it yields a failed
check or a `WireFailure` value. Exceptions are for what stops the harness from
doing its job, and each message says what to do about it.

    EvalcoreError
    ├── ConfigError        bad command-line arguments, settings or paths
    ├── TargetError        the server under test cannot be reached or started
    ├── GoldenSetError     a golden-set file is malformed or inconsistent
    ├── StoreError         the DuckDB store cannot be opened, migrated or written
    └── ModelError         a model provider failed beyond its retries
"""

from __future__ import annotations


class EvalcoreError(Exception):
    """Base class: every error evalcore raises on purpose."""


class ConfigError(EvalcoreError):
    """Arguments, settings or paths that cannot work as given."""


class TargetError(EvalcoreError):
    """The MCP server under test could not be reached or started."""


class GoldenSetError(EvalcoreError):
    """A golden-set file is malformed or refers to things that do not exist."""


class StoreError(EvalcoreError):
    """The results store could not be opened, migrated or written."""


class ModelError(EvalcoreError):
    """A model call failed beyond its bounded retries; `retries` is how many it spent."""

    def __init__(self, message: str, retries: int = 0) -> None:
        super().__init__(message)
        self.retries = retries
