"""The MCP protocol side (floor 2): envelopes, headers, schemas, the transports, the stateless client, MRTR, target
resolution, and the launch of local and reference servers. Nothing here knows about models, scoring or the store."""
