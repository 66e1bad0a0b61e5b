"""evalcore: conformance and behaviour evaluation for MCP servers (revision 2026-07-28).

Importing the package is cheap on purpose: nothing here pulls in litellm,
streamlit or the MCP SDK; each command imports what it needs.
"""

from __future__ import annotations

__version__ = "0.1.0"
