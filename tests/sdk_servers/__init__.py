"""MCP servers built on public SDKs (installed from PyPI / npm), for testing Layer 0 on code nobody here wrote.

Each is a small app on the SDK's own server class with its default settings;
everything on the wire is the SDK's behaviour. Run with `python -m
tests.sdk_servers.<module> --http|--stdio`; over HTTP it binds 127.0.0.1 on a
free port and prints `listening on <url>` to stderr once bound.
"""
