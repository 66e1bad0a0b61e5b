"""Demo server: the bundled reference MCP server for revision 2026-07-28 (a fictional support desk).

Run it with `python -m evalcore.demo_server --http` or `--stdio`. `--bare` serves
the official SDK as shipped; `--defect NAME` breaks exactly one spec rule (see
`defects.DEFECTS`) so conformance checks can be shown to fail; `--http --all-variants`
serves all of them from one process, each at `/NAME/mcp`.
"""
