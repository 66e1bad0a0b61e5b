"""Agent hosts (Claude Code, Codex) as models under test: `host/<host>:<MODEL>` (docs/hosts.md)."""
