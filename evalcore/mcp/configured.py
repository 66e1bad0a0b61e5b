"""Pure logic: the servers `--server NAME` and the Run page may start (never an arbitrary command), and how a run
records one so a later command can start it again."""

from __future__ import annotations

# Servers the web page and `--server NAME` may start; never an arbitrary command.
CONFIGURED_SERVERS: dict[str, str] = {
    "reference": "the bundled reference server (evalcore.demo_server, Streamable HTTP on 127.0.0.1)",
    "reference-v2": "the bundled reference server with the vaguer search_knowledge_base description (--variant v2) of the demo's later nights",
}
# The reference server's command-line arguments for each configured name.
REFERENCE_ARGS: dict[str, tuple[str, ...]] = {"reference": (), "reference-v2": ("--variant", "v2")}


def stored_target(target: object) -> str:
    """What a run records as its server: a configured server by its name (`server: reference (URL)`), since its
    temporary port is gone once the run ends; any other target as its text. `target` may wrap a Target (`inner`)."""
    inner = getattr(target, "inner", target)
    server = getattr(inner, "server", None)
    return f"server: {server} ({target})" if isinstance(server, str) else str(target)


def configured_server_of(server_target: str) -> str | None:
    """The configured server's name a stored target names (`stored_target`), or None."""
    name = server_target.removeprefix("server: ").split(" ", 1)[0] if server_target.startswith("server: ") else None
    return name if name in CONFIGURED_SERVERS else None
