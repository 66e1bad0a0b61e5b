"""Command implementations: argument objects in, library calls, printed output and an exit code out.

A module here that declares `NAME` is a command, and `evalcore.cli` adds it to the parser without a list to edit:
`NAME` (the subcommand), `SUMMARY` (its one-line help), `ORDER` (its place in the command list),
`add_arguments(parser)` and `command(args) -> int`. Building the parser imports every module here, so their
top-level imports stay light; what a command needs to run it imports inside `command`. A module without `NAME`
(`options`, `progress`) is a helper of the commands.
"""
