"""Pure logic: a comparison as the text `evalcore compare` prints (the verdict table, then one line per model), and a
perturbation sweep as `evalcore perturb` prints it (per perturbation, its models, then its tools)."""

from __future__ import annotations

from evalcore.compare.sensitivity import PerturbReport, Sensitivity
from evalcore.compare.verdicts import ArmCounts, Comparison, Difference, left_out_text

VERDICT_TEXT = {"better": "BETTER", "worse": "WORSE", "no_difference": "no difference", "inconclusive": "INCONCLUSIVE (an arm scored nothing)"}


def render_comparison(comparison: Comparison) -> str:
    candidate = comparison.candidate
    runs = f"{comparison.runs} runs per arm" if comparison.runs is not None else "runs differ between the arms"
    lines = [
        f"comparison {comparison.comparison_id} · {comparison.golden_path} · {runs} · alpha {comparison.alpha:g}",
        f"  baseline  run {comparison.baseline_run_id}",
        f"  candidate run {comparison.candidate_run_id} ({candidate.get('kind')}: {candidate.get('source')})",
        "",
        f"{'model':<24} {'case':<30} {'baseline':>9} {'candidate':>9} {'delta':>6}  {'95% CI':<15} {'p':>7} {'q':>7}  verdict",
    ]
    lines += [_row(d.model, d.case or "", d) for d in comparison.cases]
    lines += ["", f"{'model (cases scored in both arms pooled)':<55} {'baseline':>9} {'candidate':>9} {'delta':>6}  {'95% CI':<15} {'p':>7} {'q':>7}  verdict"]
    lines += [_row(d.model, None, d) for d in comparison.models]
    counts = {verdict: sum(d.verdict == verdict for d in comparison.cases) for verdict in VERDICT_TEXT}
    lines += [
        "",
        f"cases: {counts['better']} better, {counts['worse']} worse, {counts['no_difference']} no difference, {counts['inconclusive']} inconclusive "
        "(q: Benjamini-Hochberg across the comparison's cases; errored attempts are not scored)",
    ]
    failed = comparison.failed
    lines.append(f"result: {len(failed)} (model, case) or model worse or not measured: exit 1" if failed else "result: nothing significantly worse: exit 0")
    return "\n".join(lines)


def _row(model: str, case: str | None, difference: Difference) -> str:
    label = f"{model[:24]:<24} {case[:30]:<30}" if case is not None else f"{model[:55]:<55}"
    delta = f"{difference.delta:+.2f}" if difference.delta is not None else "—"
    interval = f"[{difference.ci[0]:+.2f}, {difference.ci[1]:+.2f}]" if difference.ci is not None else "—"
    p_value, q_value = _probability(difference.p_value), _probability(difference.q_value)
    verdict = verdict_text(difference)
    if difference.runs_needed is not None:
        verdict += f" (~{difference.runs_needed} runs per arm to detect {delta})"
    return f"{label} {_counts(difference.baseline):>9} {_counts(difference.candidate):>9} {delta:>6}  {interval:<15} {p_value:>7} {q_value:>7}  {verdict}"


def verdict_text(difference: Difference) -> str:
    """ "BETTER", or for a pool that left cases out "INCONCLUSIVE (1 case not scored in both arms)"."""
    if not difference.cases_left_out:
        return VERDICT_TEXT[difference.verdict]
    verdict = "INCONCLUSIVE" if difference.verdict == "inconclusive" else VERDICT_TEXT[difference.verdict]
    return f"{verdict} ({left_out_text(difference.cases_left_out)})"


def _probability(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.4f}" if value >= 0.0001 else f"{value:.1e}"


def _counts(counts: ArmCounts) -> str:
    text = f"{counts.passed}/{counts.scored}"
    return text + f"+{counts.errored}e" if counts.errored else text


def render_sensitivity(report: PerturbReport) -> str:
    lines = [
        f"perturbation sweep {report.perturb_id} · {report.golden_path} · {report.runs} runs per arm · seed {report.seed} · alpha {report.alpha:g}",
        f"  baseline run {report.baseline_run_id}",
        "  sensitivity: the drop in selection accuracy, baseline minus perturbed (q: Benjamini-Hochberg across the sweep's rows)",
    ]
    for arm in report.perturbations:
        lines += ["", f"{arm.id}: {arm.title} (run {arm.run_id}, comparison {arm.comparison_id})"]
        lines.append(f"  {'model':<24} {'tool':<28} {'baseline':>9} {'perturbed':>9} {'drop':>6}  {'95% CI':<15} {'p':>7} {'q':>7}  verdict")
        rows = [s for s in (*report.models, *report.tools) if s.perturbation == arm.id]
        lines += [_sensitivity_row(s) for s in rows]
    failed = report.failed
    lines.append("")
    lines.append(f"result: {len(failed)} model or tool selects worse, or was not measured: exit 1" if failed else "result: nothing significantly worse: exit 0")
    return "\n".join(lines)


def _sensitivity_row(sensitivity: Sensitivity) -> str:
    d = sensitivity.difference
    tool = "(all tools)" if sensitivity.tool is None else sensitivity.tool
    drop = f"{sensitivity.drop:+.2f}" if sensitivity.drop is not None else "—"
    interval = f"[{0.0 - d.ci[1]:+.2f}, {0.0 - d.ci[0]:+.2f}]" if d.ci is not None else "—"
    counts = f"{_counts(d.baseline):>9} {_counts(d.candidate):>9}"
    tests = f"{_probability(d.p_value):>7} {_probability(d.q_value):>7}"
    return f"  {d.model[:24]:<24} {tool[:28]:<28} {counts} {drop:>6}  {interval:<15} {tests}  {verdict_text(d)}"
