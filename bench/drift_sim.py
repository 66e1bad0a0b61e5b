"""Benchmark: drift detection (evalcore.drift) on simulated nightly histories with injected changes of known cause.

Each simulated store is 3 models x 8 cases, 21 nightly runs x 5 attempts. In
each store, some (model, case) pairs get a persistent drop of known cause on a
random night between the 3rd and the 19th (so at least 2 runs before and 3
after it), some get one bad night among good ones, and the rest are
noise-only at the same pass rates (before and after rates of the drops).
A cause changes its fingerprint the way it does in a real store:

- server: the server fingerprint and one tool description change for every pair of the store;
- model: the model's reported version changes for all its cases;
- silent: nothing changes;
- case: the golden case's hash changes (for every model);
- settings: the model's temperature changes (all its cases);
- evalcore: evalcore's version changes for the whole store;
- ambiguous: the server and the model change on the same night.

Some drops recover 4 to 8 nights later when their cause is undone.
Every history goes through `evalcore.drift.detect_changes`, night by night,
with BH across all pairs of a night, exactly as on a real store. Measured:

- recall: persistent drops of >= 0.4 found at most 3 runs after the change (detected on the 1st, 2nd or 3rd degraded run);
- attribution: found drops whose cause is the injected one;
- false flags: drop flags on noise-only pairs, per 100 noise-only (model x case) histories (and on one-bad-night pairs, and
  on changed pairs before their change);
- delay: runs from the change to the flag, 1 = flagged on the first degraded run (median over found drops);
- recoveries: drops whose recovery closed the flag with the run that fixed it.

Each seed is a separate simulation of `--stores` stores; the figures are printed per
seed and pooled, with the number of histories and 95% Wilson intervals.
`--sweep` prints the trade-off curve the defaults were chosen from (the
per-night p-value limit `max_p`, then the minimum baseline), on the first seed.
`--store` also puts one history per cause in a real DuckDB store through the
real `run` path (reference server, its `--variant v2` descriptions, scripted
sim models; see `bench/drift_store.py`) and checks drift on it. Run:
`.venv/bin/python bench/drift_sim.py [--stores N] [--seeds N,N,...] [--sweep] [--store]`.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalcore.drift import Change, DriftSettings, Fingerprints, RunPoint, detect_changes  # noqa: E402
from evalcore.drift.stats import Counts, split_p_value  # noqa: E402
from evalcore.scoring.stats import wilson_interval  # noqa: E402

NIGHTS = 21
ATTEMPTS = 5
MODELS = 3
CASES = 8
FIRST_NIGHT = date(2026, 11, 1)
CHANGE_NIGHTS = range(2, 19)  # 0-based: the 3rd..19th night, >= 2 runs before and >= 3 after
CAUSES = ("server", "model", "silent", "case", "settings", "evalcore", "ambiguous")
BASE_RATES = (1.0, 0.95, 0.9, 0.8)
ESTABLISHED = 5  # runs of history before a change for the headline's recall (the 3rd..5th nights of a store are its start-up)
HISTORY_BANDS = (("2-4", 2, 4), ("5-9", 5, 9), ("10+", 10, NIGHTS))
ALWAYS_PASSING_SHARE = 0.5  # half the drops are from a case that passed every attempt (5/5 -> 3/5); the rest from 0.95, 0.9, 0.8
DROPS = (0.4, 0.5, 0.6, 0.8, 1.0)
NOISE_RATES = (1.0, 0.95, 0.9, 0.8, 0.6, 0.5, 0.4, 0.2)
BLIP_RATES = (0.0, 0.2, 0.4)
DROPS_PER_STORE = 3
BLIPS_PER_STORE = 2
RECOVERY_SHARE = 0.3
SWEEP_MAX_P = (0.0005, 0.001, 0.0015, 0.002, 0.003)
SWEEP_BASELINES = (2, 3, 4, 5, 6)
TOOLS = (
    {"name": "search_knowledge_base", "description": "Search internal help-desk articles by keyword."},
    {"name": "get_invoice", "description": "One invoice."},
)


@dataclass(frozen=True)
class Truth:
    kind: str  # drop | blip | noise
    model: str
    case_id: str
    cause: str | None = None
    night: int | None = None  # change night or bad night (0-based)
    recovery_night: int | None = None
    base: float = 1.0
    after: float = 1.0


@dataclass(frozen=True)
class DropOutcome:
    base: float
    drop: float
    history: int  # runs before the change
    cause: str
    delay: int | None  # runs from the change to its flag (1 = the first degraded run); None when never flagged
    attributed: bool
    recovery_closed: bool | None  # for drops that recover: whether the flag was closed by the run that fixed it (+-1 run)


@dataclass
class Tally:
    drops: list[DropOutcome] = field(default_factory=list)
    noise: int = 0
    noise_flags: int = 0
    blips: int = 0
    blip_flags: int = 0
    early_flags: int = 0  # flags on changed pairs before their change
    misattributed: Counter[tuple[str, str]] = field(default_factory=Counter)


def simulate_store(rng: random.Random, store: int) -> tuple[list[RunPoint], list[Truth]]:
    """One store's points (run order) and the truth about each (model, case) pair."""
    models = [f"sim/model-{m}" for m in range(MODELS)]
    cases = [f"case-{c}" for c in range(CASES)]
    pairs = [(m, c) for m in models for c in cases]
    rng.shuffle(pairs)
    # Every event of a store (change or recovery) falls on its own night: two on one night would truly be ambiguous.
    taken: set[int] = set()
    truths: list[Truth] = []
    for index, (model, case_id) in enumerate(pairs):
        if index < DROPS_PER_STORE:
            base = 1.0 if rng.random() < ALWAYS_PASSING_SHARE else rng.choice(BASE_RATES[1:])
            drop = rng.choice(DROPS)
            night = rng.choice([n for n in CHANGE_NIGHTS if n not in taken])
            taken.add(night)
            recovery = None
            if rng.random() < RECOVERY_SHARE:
                free = [n for n in range(night + 4, min(night + 9, NIGHTS - 1)) if n not in taken]
                recovery = rng.choice(free) if free else None
                if recovery is not None:
                    taken.add(recovery)
            truths.append(Truth("drop", model, case_id, rng.choice(CAUSES), night, recovery, base, round(max(0.0, base - drop), 2)))
        elif index < DROPS_PER_STORE + BLIPS_PER_STORE:
            truths.append(Truth("blip", model, case_id, None, rng.randint(4, NIGHTS - 1), None, rng.choice(BASE_RATES[:3]), rng.choice(BLIP_RATES)))
        else:
            rate = rng.choice(NOISE_RATES)
            truths.append(Truth("noise", model, case_id, None, None, None, rate, rate))
    return _points(rng, store, models, cases, truths), truths


def _points(rng: random.Random, store: int, models: Sequence[str], cases: Sequence[str], truths: Sequence[Truth]) -> list[RunPoint]:
    drops = [t for t in truths if t.kind == "drop"]
    points: list[RunPoint] = []
    for night in range(NIGHTS):
        run_id = f"s{store:04d}-n{night:02d}"
        day = FIRST_NIGHT + timedelta(days=night)
        active = [t for t in drops if t.night is not None and t.night <= night and (t.recovery_night is None or night < t.recovery_night)]
        causes = [(t, "server" if t.cause == "ambiguous" else t.cause) for t in active] + [(t, "model") for t in active if t.cause == "ambiguous"]
        server_changes = [t for t, cause in causes if cause == "server"]
        tools = [dict(tool) for tool in TOOLS]
        for index, _truth in enumerate(server_changes):
            tools[index % len(tools)]["description"] += f" (rev {index + 1})"
        server = "fp-" + "-".join(f"{t.model}/{t.case_id}" for t in server_changes)
        # Each change leaves its own mark, so two changes of one kind never cancel out.
        evalcore_version = "0.1.0" + "".join(f"+{_mark(t)}" for t, cause in causes if cause == "evalcore")
        for model in models:
            version = model + "-2026-05" + "".join(f"+{_mark(t)}" for t, cause in causes if cause == "model" and t.model == model)
            temperature = "0.0" + "".join(f"+{_mark(t)}" for t, cause in causes if cause == "settings" and t.model == model)
            for case_id in cases:
                case_hash = case_id + "".join(f"+{_mark(t)}" for t, cause in causes if cause == "case" and t.case_id == case_id)
                truth = next(t for t in truths if (t.model, t.case_id) == (model, case_id))
                rate = _rate(truth, night)
                fingerprints = Fingerprints(server, version, case_hash, (("temperature", temperature),), evalcore_version, json.dumps(tools))
                passes = sum(rng.random() < rate for _ in range(ATTEMPTS))
                points.append(RunPoint(model, case_id, run_id, day, passes, ATTEMPTS, fingerprints, simulated=True))
    return points


def _mark(truth: Truth) -> str:
    return f"{truth.model}/{truth.case_id}"


def _rate(truth: Truth, night: int) -> float:
    if truth.kind == "drop" and truth.night is not None and night >= truth.night and (truth.recovery_night is None or night < truth.recovery_night):
        return truth.after
    if truth.kind == "blip" and night == truth.night:
        return truth.after
    return truth.base


def score_store(changes: Sequence[Change], truths: Sequence[Truth], tally: Tally, run_index: dict[str, int]) -> None:
    for truth in truths:
        drops = [c for c in changes if (c.model, c.case_id) == (truth.model, truth.case_id) and c.kind == "drop"]
        if truth.kind == "noise":
            tally.noise += 1
            tally.noise_flags += len(drops)
            continue
        if truth.kind == "blip":
            tally.blips += 1
            tally.blip_flags += len(drops)
            continue
        assert truth.night is not None and truth.cause is not None
        tally.early_flags += sum(run_index[c.detected_run_id] < truth.night for c in drops)
        late = [c for c in drops if run_index[c.detected_run_id] >= truth.night]
        flag = late[0] if late else None
        right = flag is not None and flag.cause == truth.cause and (truth.cause != "ambiguous" or set(flag.changed) == {"server", "model"})
        if flag is not None and not right:
            tally.misattributed[(truth.cause, flag.cause)] += 1
        closed = None
        if flag is not None and truth.recovery_night is not None:
            closed = flag.closed_by_run_id is not None and abs(run_index[flag.closed_by_run_id] - truth.recovery_night) <= 1
        delay = run_index[flag.detected_run_id] - truth.night + 1 if flag is not None else None
        tally.drops.append(DropOutcome(truth.base, round(truth.base - truth.after, 2), truth.night, truth.cause, delay, right, closed))


def run(stores: int, seed: int, settings: DriftSettings) -> Tally:
    rng = random.Random(seed)
    tally = Tally()
    for store in range(stores):
        points, truths = simulate_store(rng, store)
        run_index = {p.run_id: int(p.run_id.rsplit("-n", 1)[1]) for p in points}
        score_store(detect_changes(points, settings), truths, tally, run_index)
    return tally


def merged(tallies: Sequence[Tally]) -> Tally:
    """The tallies of several seeds as one."""
    total = Tally()
    for tally in tallies:
        total.drops += tally.drops
        total.noise += tally.noise
        total.noise_flags += tally.noise_flags
        total.blips += tally.blips
        total.blip_flags += tally.blip_flags
        total.early_flags += tally.early_flags
        total.misattributed += tally.misattributed
    return total


def _within(drops: Sequence[DropOutcome], runs: int = 3) -> str:
    found = sum(d.delay is not None and d.delay <= runs for d in drops)
    return f"{found / len(drops):.1%} ({found}/{len(drops)})" if drops else "n/a"


def _interval(count: int, total: int, scale: float = 1.0, digits: int = 1) -> str:
    """The 95% Wilson interval of count/total, times `scale`."""
    interval = wilson_interval(count, total)
    return f"[{scale * interval[0]:.{digits}f}, {scale * interval[1]:.{digits}f}]" if interval else "[n/a]"


def headline(tally: Tally) -> str:
    always = [d for d in tally.drops if d.base == 1.0 and d.history >= ESTABLISHED]
    in_time = sum(d.delay is not None and d.delay <= 3 for d in always)
    found = [d for d in tally.drops if d.delay is not None]
    attributed = sum(d.attributed for d in found)
    delay = statistics.median(d.delay for d in found if d.delay is not None) if found else float("nan")
    return (
        f"recall {_within(always)} {_interval(in_time, len(always), 100)}% of drops >= 0.4 from 5/5 with >= {ESTABLISHED} runs of history "
        f"found within 3 runs ({_within([d for d in tally.drops if d.base == 1.0])} with any history, {_within(tally.drops)} from any base rate), "
        f"attribution {attributed / len(found):.1%} ({attributed}/{len(found)}) {_interval(attributed, len(found), 100)}%, "
        f"false flags {100 * tally.noise_flags / tally.noise:.2f} {_interval(tally.noise_flags, tally.noise, 100, 2)} "
        f"per 100 noise-only histories ({tally.noise_flags}/{tally.noise}), median delay {delay:g} runs"
    )


def details(tally: Tally) -> str:
    delays = Counter(d.delay for d in tally.drops)
    recovering = [d for d in tally.drops if d.recovery_closed is not None]
    lines = [
        f"  one bad night among good ones: {tally.blip_flags} flag(s) on {tally.blips} histories",
        f"  flags before the change on changed pairs: {tally.early_flags}",
        f"  recoveries: {sum(bool(d.recovery_closed) for d in recovering)}/{len(recovering)} found flags closed by the run that fixed them (+-1 run)",
        "  delay (runs from the change to the flag): " + ", ".join(f"{d}: {n}" for d, n in sorted(delays.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))),
        "  within 3 runs, by base rate: " + "; ".join(f"{base:.2f} {_within([d for d in tally.drops if d.base == base])}" for base in BASE_RATES),
        "  within 3 runs, by runs of history: "
        + "; ".join(f"{label} {_within([d for d in tally.drops if low <= d.history <= high])}" for label, low, high in HISTORY_BANDS),
        "  within 3 runs, by drop: " + "; ".join(f"{drop:.1f} {_within([d for d in tally.drops if d.drop == drop])}" for drop in DROPS),
        "  misattributed (true -> reported): " + (", ".join(f"{t} -> {r}: {n}" for (t, r), n in sorted(tally.misattributed.items())) or "none"),
    ]
    return "\n".join(lines)


def lone_case_false_flags(seed: int, settings: DriftSettings, per_rate: int = 100) -> tuple[int, int]:
    """Flags on noise-only histories that are alone in their store (one model, one case: no other test shares the night)."""
    rng = random.Random(seed)
    flags = histories = 0
    fingerprints = Fingerprints("fp", "v1", "case")
    for rate in NOISE_RATES:
        for index in range(per_rate):
            points = []
            for night in range(NIGHTS):
                passes = sum(rng.random() < rate for _ in range(ATTEMPTS))
                points.append(RunPoint("sim/m", "case", f"h{index}-n{night:02d}", FIRST_NIGHT + timedelta(days=night), passes, ATTEMPTS, fingerprints))
            flags += sum(c.kind == "drop" for c in detect_changes(points, settings))
            histories += 1
    return flags, histories


def oracle_bound(seed: int, level: float, draws: int = 4000) -> str:
    """What a test that knew the change point would find: the true split tested after 2 and after 3 runs, p <= `level`.

    The drops are those of the headline (>= ESTABLISHED runs of history), from each base rate.
    """
    rng = random.Random(seed)
    parts = []
    for base in BASE_RATES:
        hits = 0
        for _ in range(draws):
            after_rate, before_runs = max(0.0, base - rng.choice(DROPS)), rng.randint(ESTABLISHED, CHANGE_NIGHTS[-1])
            before = Counts(sum(rng.random() < base for _ in range(ATTEMPTS * before_runs)), ATTEMPTS * before_runs)
            after = [sum(rng.random() < after_rate for _ in range(ATTEMPTS)) for _ in range(3)]
            hits += any(split_p_value(before, Counts(sum(after[:runs]), ATTEMPTS * runs)) <= level for runs in (2, 3))
        parts.append(f"{base:.2f} {hits / draws:.1%}")
    return "; ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", type=int, default=600, help="simulated stores per seed (3 models x 8 cases each; default 600)")
    parser.add_argument("--seeds", default="2026,2027,2028", help="comma-separated seeds, one simulation each (default 2026,2027,2028)")
    parser.add_argument("--sweep", action="store_true", help="also print the trade-off curve the defaults were chosen from (first seed)")
    parser.add_argument("--store", action="store_true", help="also put one history per cause through the real run path into a DuckDB store")
    args = parser.parse_args()
    seeds = [int(seed) for seed in args.seeds.split(",")]
    started = time.perf_counter()
    default = DriftSettings()
    if args.sweep:
        curve = [replace(default, max_p=max_p) for max_p in SWEEP_MAX_P] + [replace(default, min_baseline=b) for b in SWEEP_BASELINES]
        for settings in dict.fromkeys(curve):  # the default appears once
            tally = run(args.stores, seeds[0], settings)
            knobs = f"max_p {settings.max_p:g}, fdr {settings.fdr:g}, min_baseline {settings.min_baseline}"
            print(f"sweep {knobs}: {headline(tally)}, one-bad-night flags {tally.blip_flags}/{tally.blips}", flush=True)
    tallies = []
    for seed in seeds:
        tallies.append(run(args.stores, seed, default))
        print(f"seed {seed} ({args.stores} stores): {headline(tallies[-1])}", flush=True)
    tally = merged(tallies)
    print(details(tally))
    lone, histories = lone_case_false_flags(seeds[0], default)
    print(f"  noise-only histories alone in their store: {100 * lone / histories:.2f} false flags per 100 ({lone}/{histories})")
    level = min(default.fdr / (MODELS * CASES), default.max_p)
    bound = oracle_bound(seeds[0], level)
    print(
        f"  bound: the true change point tested after 2 and 3 runs at p <= {level:.5f} (min(fdr / tests a night, max_p)), "
        f">= {ESTABLISHED} runs of history, finds {bound}"
    )
    print(
        f"drift simulation ({len(seeds)} seeds x {args.stores} stores, {NIGHTS} nights x {ATTEMPTS} attempts, "
        f"min_baseline {default.min_baseline}, fdr {default.fdr:g}, max_p {default.max_p:g}): {headline(tally)}"
    )
    print(f"  ({time.perf_counter() - started:.1f}s)")
    if args.store:
        from drift_store import run_store_scenarios  # type: ignore[import-not-found]

        return run_store_scenarios()
    return 0


if __name__ == "__main__":
    sys.exit(main())
