"""Continuous integration: what a CI runner shows of a report (Markdown summaries, a PR comment) and the runner's files."""
