"""Command implementations: argument objects in, library calls, printed output and an exit code out."""
