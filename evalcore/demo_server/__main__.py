"""Demo server, command line: `python -m evalcore.demo_server --http | --stdio [--bare] [--defect NAME] [--variant v2]`;
`--http --all-variants` serves the fixed server, the bare SDK and every defect from one process."""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence

from evalcore.processes import adopt_children

# The defects import the MCP SDK, which builds hundreds of pydantic models: with the collector off, as all of the
# server's imports here, collections during them do not cost a tenth of their CPU. What they built is then frozen
# out of later collections, here and again in `main`.
gc.disable()
try:
    from evalcore.demo_server.defects import DEFECTS
finally:
    gc.freeze()  # before the collector is back: else its first collection walks everything the imports built
    gc.enable()


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m evalcore.demo_server",
        description="The evalcore reference MCP server (protocol 2026-07-28): a fictional support desk.",
    )
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument("--http", action="store_true", help="serve Streamable HTTP with uvicorn")
    transport.add_argument("--stdio", action="store_true", help="serve newline-delimited JSON-RPC on stdin/stdout")
    transport.add_argument("--list-defects", action="store_true", help="print the defect names and exit")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to bind; 0 picks a free one (default: 8000)")
    parser.add_argument("--path", default="/mcp", help="MCP endpoint path (default: /mcp)")
    parser.add_argument("--bare", action="store_true", help="the official SDK as shipped, without our spec fixes")
    parser.add_argument("--defect", metavar="NAME", help="break one spec rule; see --list-defects")
    parser.add_argument(
        "--all-variants",
        action="store_true",
        help="with --http: serve every variant from this one process, each at /NAME/mcp (NAME: clean, bare, or a defect "
        "from --list-defects); --path sets the part after /NAME, and the 'listening on' line gives the base URL",
    )
    parser.add_argument(
        "--variant",
        choices=("v1", "v2"),  # app.DESCRIPTION_VARIANTS; not imported here so --help stays quick
        default="v1",
        help="tool-description variant: v1 (default) or v2 (a vaguer search_knowledge_base description, for drift demos)",
    )
    args = parser.parse_args(argv)
    if args.list_defects:
        return args
    if not (args.http or args.stdio):
        parser.error("choose a transport: --http or --stdio")
    if args.all_variants:
        if not args.http:
            parser.error("--all-variants serves HTTP only; use --http")
        if args.bare or args.defect is not None:
            parser.error("--all-variants already serves the bare SDK and every defect; drop --bare and --defect")
    if args.defect is not None:
        if args.defect not in DEFECTS:
            parser.error(f"unknown defect {args.defect!r}; --list-defects shows the {len(DEFECTS)} names")
        if args.bare:
            parser.error("--bare and --defect do not combine: defects are defined on top of the fixed server")
        if args.stdio and DEFECTS[args.defect].http_only:
            parser.error(f"defect {args.defect!r} only exists on HTTP; use --http")
    if not args.path.startswith("/"):
        parser.error(f"--path must start with '/', got {args.path!r}")
    return args


def list_defects() -> str:
    width = max(len(name) for name in DEFECTS)
    return "\n".join(f"{d.name:<{width}}  {'[http only] ' if d.http_only else ''}{d.description}" for d in DEFECTS.values())


def main(argv: Sequence[str] | None = None) -> int:
    adopt_children()  # ends with the evalcore process that started it
    args = parse_args(argv)
    if args.list_defects:
        print(list_defects())
        return 0
    # Imported late, with the collector off (see above). What the imports built is then frozen out of later
    # collections, which the server would otherwise walk again and again while it serves.
    gc.disable()
    try:
        from evalcore.demo_server.app import SERVER_NAME
        from evalcore.demo_server.serve import run_http, run_stdio
        from evalcore.telemetry.setup import install_global_tracing
    finally:
        gc.enable()
    gc.freeze()

    tamper = DEFECTS[args.defect].build() if args.defect else None
    # The mcp SDK opens a server span per request on the global provider, as a child of `_meta.traceparent`.
    provider = install_global_tracing(SERVER_NAME)
    try:
        if args.http:
            run_http(host=args.host, port=args.port, path=args.path, bare=args.bare, tamper=tamper, variant=args.variant, all_variants=args.all_variants)
        else:
            run_stdio(bare=args.bare, tamper=tamper, variant=args.variant)
    finally:
        if provider is not None:
            provider.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
