"""Pure logic: a change as plain text, the same words in the `drift` command, the `run` summary and the Drift page."""

from __future__ import annotations

import shlex

from evalcore.drift.types import Change
from evalcore.mcp.configured import configured_server_of


def rate_text(passes: int, attempts: int, interval: tuple[float, float]) -> str:
    """`35/35 (100%, 95% CI 90%-100%)`: the pass rate with its Wilson interval."""
    return f"{passes}/{attempts} ({passes / attempts:.0%}, 95% CI {interval[0]:.0%}-{interval[1]:.0%})"


def headline(change: Change) -> str:
    """What changed when, the counts the test compared with their intervals, p and q, the night a run first flagged it
    (the change's one date) and its status: provisional, then confirmed (or withdrawn), open or recovered."""
    what = "Drop" if change.kind == "drop" else "Recovery"
    found = f"flagged on {change.detected_date}, {change.delay_runs} run(s) in"
    night = "that night"
    if change.provisional:
        found += ", provisionally"
    elif change.provisional_run_id:
        found += f", provisionally; confirmed on {change.confirmed_date} by run {change.confirmed_run_id}"
        night = f"on {change.confirmed_date}"
    if change.kind == "recovery":
        status = "closes the open drop"
    elif change.status == "recovered":
        status = f"recovered from {change.closed_date} (run {change.closed_by_run_id})"
    elif change.status == "withdrawn":
        status = "withdrawn: the next run did not confirm it"
    elif change.provisional:
        status = "provisional: one run shows it; the next run confirms or withdraws it"
    else:
        status = "open"
    correction = "Bonferroni" if change.provisional else "Benjamini-Hochberg"
    if change.night_correlation > 0:
        status += (
            f" {change.model} answered a night's attempts alike (correlation {change.night_correlation:.2f}), so the test counted fewer attempts than were run."
        )
    return (
        f"{what} at the change point before run {change.change_run_id} ({change.change_date}; last run before it: {change.last_good_run_id}, "
        f"{change.last_good_date}): before {rate_text(change.before_passes, change.before_attempts, change.before_interval)} -> "
        f"after {rate_text(change.after_passes, change.after_attempts, change.after_interval)}; "
        f"p = {change.p_value:.2g}, q = {change.q_value:.2g} ({correction} over {change.tests} test(s) {night}); "
        f"{found}; {status}."
    )


def next_step(change: Change, *, golden: str, db: str, server_now: str | None) -> str:
    """The two experiments that tell a model change from a server change (README "record and replay"), as commands.

    The last run before the change point holds its server's answers: replayed to today's model with no server, a
    drop that stays is the model's; its calls sent to today's server (`server_now`, the change run's target), an
    answer that changed is the server's.
    """
    last_good = shlex.quote(change.last_good_run_id)
    configured = configured_server_of(server_now or "")
    if configured is not None:
        target = f"--server {configured}"  # started again for the replay: the port the run used is gone
    elif server_now and server_now.startswith(("http://", "https://")):
        target = f"--url {shlex.quote(server_now)}"
    elif server_now and server_now.startswith("stdio: "):
        target = f"--stdio {shlex.quote(server_now.removeprefix('stdio: '))}"
    else:
        target = "--url URL_OF_THE_SERVER_NOW"
    store = f"--db {shlex.quote(db)}"
    return (
        f"# the server as run {change.last_good_run_id} recorded it, today's model: a drop that stays is the model's\n"
        f"evalcore run --replay-run {last_good} --golden {shlex.quote(golden)} --models {shlex.quote(change.model)} {store}\n"
        f"# the calls of run {change.last_good_run_id}, sent to today's server: a changed answer is the server's\n"
        f"evalcore replay-calls {last_good} {target} {store}"
    )
