"""Benchmark: the memory one batch write of attempts takes, by the size of the store it goes to.

A run stores its finished attempts in batches, each in an open of the store of its own (so that other processes
can read the store meanwhile), and DuckDB checkpoints when the store closes. In the DuckDB evalcore installs
(2.0.1), a write to a checkpointed table appends a row group of its own, and the checkpoint's vacuum merges small row groups into larger
ones, up to DuckDB's row-group size (122,880 rows): now and then a batch's checkpoint re-reads and rewrites a large
row group whole. For `attempts`, whose transcripts are most of a store's bytes, that batch's memory spikes far above
the others' unless the checkpoint's memory is capped, as evalcore's store does (`CHECKPOINT_MEMORY` in
`evalcore/store/db.py`).

What this script does, in one process, side by side:

- `attempts` prefilled with `--rows` synthetic attempts (transcripts of about `--transcript-bytes` each: a JSON
  frame around the attempt's own hash, repeated to that length), in one statement (DuckDB's default row groups),
  in a store made and migrated by evalcore's own `connect`;
- then `--batches` batches of `--batch-size` attempts, each through evalcore's `connect` (open, insert, commit,
  close: the checkpoint), as the runner's batch writer does;
- the anonymous memory of this process (the heaps: DuckDB's and Python's) sampled every 2 ms, and each batch's peak
  above what it started with;
- three variants: evalcore's store as it is (its closing checkpoint capped at `CHECKPOINT_MEMORY`); the same
  with the checkpoint left to DuckDB's default memory limit (80% of the machine's), as before the cap; and with
  `SET max_vacuum_tasks = 0` (no merging), which shows that merging is what the uncapped spikes are. Turned off,
  every batch stays a row group of its own, never merged, and deleted rows are never reclaimed; the file's size
  and a full read show what that costs at this size.

It prints, per variant: the median and the largest spike, the batch it came at, the row groups left, the CPU per
batch, the store file's size and how long one query reading every transcript takes (what the merges buy), and the
load average; then the CPU per batch at the start and at the end (what the store's growth costs a writer), and
what a reader pays in a new process (its open, one run's attempts, a count per run). `--rows 0 --batches 700` grows
a store from empty past a full row group; `--rows 0 --batches 5000`, to a million attempts (about 23 minutes on 2 cores).
Run: `.venv/bin/python bench/store_batch_memory.py [--rows 122200] [--batches 20]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalcore.store import db as store_db  # noqa: E402
from evalcore.store.db import connect  # noqa: E402

ATTEMPT_ROWS = """
INSERT INTO attempts (run_id, model, case_id, attempt, case_hash, case_kind, simulated, passed, reasons_json, tool_calls_json, stop_reason, retries,
                      transcript_json, recorded_at, system_prompt)
SELECT ?, 'openai/acme-chat-7b', 'case-' || (i // 5), (i % 5) + 1, md5((i // 5)::VARCHAR), 'hard', false, i % 3 = 0, '[]', '[]', 'final_answer', 0,
       '{"messages": [{"role": "system", "content": "You are a helpful assistant with tools."}, {"role": "user", "content": "'
       || repeat(md5(i::VARCHAR || ?), ?) || '"}], "calls": []}',
       now(), 'You are a helpful assistant with tools.'
FROM range(?, ?) r(i)
"""


# What a reader (the dashboard, `evalcore history`) pays, in a new process: CPU for the open, one run's attempts, a count per run.
READS = """
import sys, time, duckdb
started = time.process_time(); connection = duckdb.connect(sys.argv[1], read_only=True); opened = time.process_time()
connection.execute("SELECT count(*), avg(passed::INT) FROM attempts WHERE run_id = 'run-0'").fetchall(); one_run = time.process_time()
connection.execute("SELECT run_id, count(*) FROM attempts GROUP BY 1").fetchall(); per_run = time.process_time()
print(f"open {(opened - started) * 1000:.0f} ms, one run's attempts {(one_run - opened) * 1000:.0f} ms, a count per run {(per_run - one_run) * 1000:.0f} ms")
"""


def anonymous_mb() -> float:
    with open("/proc/self/smaps_rollup", encoding="utf-8") as rollup:
        for line in rollup:
            if line.startswith("Anonymous:"):
                return int(line.split()[1]) / 1024
    return 0.0


class PeakSampler:
    """This process's anonymous memory, sampled every 2 ms on a thread; `reset` starts a new peak."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # a sample taken before a reset must not land after it
        self.peak = anonymous_mb()
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        while True:
            with self._lock:
                self.peak = max(self.peak, anonymous_mb())
            time.sleep(0.002)

    def reset(self) -> float:
        with self._lock:
            self.peak = anonymous_mb()
            return self.peak


def one_variant(folder: Path, label: str, args: argparse.Namespace, sampler: PeakSampler) -> None:
    db = folder / f"{label}.duckdb"
    repeats = max(1, args.transcript_bytes // 32)
    with connect(db) as connection:  # the real schema, migrated as a user's store is
        connection.execute(ATTEMPT_ROWS, ["prefill", "p", repeats, 0, args.rows])
    spikes, cpu = [], []
    cap = store_db.CHECKPOINT_MEMORY
    if label != "capped":  # the close checkpoints under DuckDB's default limit, as it did before the cap
        store_db.CHECKPOINT_MEMORY = None
    for batch in range(args.batches):
        time.sleep(0.01)
        before = sampler.reset()
        started = time.process_time()
        with connect(db) as connection:
            if label == "no-vacuum":
                connection.execute("SET max_vacuum_tasks = 0")
            connection.execute("BEGIN TRANSACTION")
            first = args.rows + batch * args.batch_size
            # A run's attempts come in many batches: 100 batches a run, as at the peer workload's 100x.
            connection.execute(ATTEMPT_ROWS, [f"run-{batch // 100}", "b", repeats, first, first + args.batch_size])
            connection.execute("COMMIT")
        cpu.append(time.process_time() - started)
        time.sleep(0.01)
        spikes.append(sampler.peak - before)
    store_db.CHECKPOINT_MEMORY = cap
    with connect(db, read_only=True) as connection:
        groups = connection.execute("SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('attempts')").fetchone()
        started = time.perf_counter()
        connection.execute("SELECT model, case_id, count(*), avg(passed::INT), sum(length(transcript_json)) FROM attempts GROUP BY ALL").fetchall()
        scan_s = time.perf_counter() - started
    largest = max(spikes)
    tenth = max(1, len(cpu) // 10)
    print(
        f"  {label:<10} spike per batch: median {statistics.median(spikes):6.1f} MB, largest {largest:6.1f} MB (batch {spikes.index(largest) + 1}); "
        f"{groups[0] if groups else 0} row groups after; {statistics.median(cpu) * 1000:.0f} ms CPU per batch; the file {db.stat().st_size / 1e6:.1f} MB, "
        f"a read of every transcript {scan_s * 1000:.0f} ms; load {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    reads = subprocess.run([sys.executable, "-c", READS, str(db)], capture_output=True, text=True, timeout=600, check=True).stdout.strip()
    print(
        f"  {'':<10} CPU per batch: {statistics.median(cpu[:tenth]) * 1000:.0f} ms over the first tenth, "
        f"{statistics.median(cpu[-tenth:]) * 1000:.0f} ms over the last; a reader's, in a new process: {reads}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=122_200, help="attempts already in the store (default 122,200: one batch short of a full row group)")
    parser.add_argument("--batches", type=int, default=20, help="batches written after (default 20)")
    parser.add_argument("--batch-size", type=int, default=200, help="attempts per batch (default 200, about what a run's batch holds)")
    parser.add_argument("--transcript-bytes", type=int, default=1800, help="about how long each transcript is (default 1,800, the peer workload's)")
    parser.add_argument("--variants", default="capped,uncapped,no-vacuum", help="which of capped, uncapped, no-vacuum to run (default all three)")
    args = parser.parse_args()
    print(
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; {args.rows:,} attempts in the store, then "
        f"{args.batches} batches of {args.batch_size}, transcripts of about {args.transcript_bytes:,} bytes",
        flush=True,
    )
    sampler = PeakSampler()
    with tempfile.TemporaryDirectory(prefix="evalcore-batch-memory-") as name:
        for label in args.variants.split(","):
            one_variant(Path(name), label, args, sampler)


if __name__ == "__main__":
    main()
