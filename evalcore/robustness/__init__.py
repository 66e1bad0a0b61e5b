"""Layer 2: fault injection and adversarial tool content between the agent and the MCP server."""
