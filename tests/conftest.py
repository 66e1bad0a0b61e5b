"""Shared fixtures: real servers on 127.0.0.1, started once per session."""

from __future__ import annotations

import os

import pytest

# litellm reaches the network on import unless told otherwise; set before anything can import it.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


@pytest.fixture(scope="session")
def reference_url():
    from evalcore.reference import running_reference_server

    with running_reference_server() as url:
        yield url
