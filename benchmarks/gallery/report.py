"""What one gallery script cost, and the benchmark's printed lines and tables (see run.py)."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

MEDIAN_FILES, MAX_FILES = 60, 500
MEDIAN_BYTES, MAX_BYTES = 1_000_000, 20_000_000
MEDIAN_RATIO, MAX_RATIO = 1.2, 2.0  # issue 21's budgets


@dataclass
class Outcome:
    """What one script cost: its artifacts (from the first tracked run) and its wall times."""

    name: str
    untracked: list[float] = field(default_factory=list)
    tracked: list[float] = field(default_factory=list)
    files: int = 0
    other_bytes: int = 0
    model_files: int = 0
    model_bytes: int = 0
    runs: int = 0
    statuses: str = ""
    failures: list[str] = field(default_factory=list)
    patterns: Counter[str] = field(default_factory=Counter)
    pattern_bytes: Counter[str] = field(default_factory=Counter)
    error: str = ""

    @property
    def ratio(self) -> float:
        return statistics.median(self.tracked) / statistics.median(self.untracked)


def size(count_bytes: float) -> str:
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if count_bytes >= scale:
            return f"{count_bytes / scale:.1f} {unit}"
    return f"{count_bytes:.0f} B"


def describe(outcome: Outcome) -> str:
    if outcome.error:
        return f"  {outcome.name}: FAILED {outcome.error.strip().splitlines()[-1] if outcome.error.strip() else ''}"
    failures = f"; failed loggers: {', '.join(outcome.failures)}" if outcome.failures else ""
    return (f"  {outcome.name}: {outcome.files} files, {size(outcome.other_bytes)} other, models {outcome.model_files} "
            f"files {size(outcome.model_bytes)}; {outcome.runs} runs ({outcome.statuses}) | untracked "
            f"{statistics.median(outcome.untracked):.2f} s, tracked {statistics.median(outcome.tracked):.2f} s | "
            f"{outcome.ratio:.2f}x{failures}")


def top_patterns(outcome: Outcome, shown: int = 4) -> str:
    return ", ".join(f"{kind} x{files} ({size(outcome.pattern_bytes[kind])})"
                     for kind, files in outcome.patterns.most_common(shown))


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def summary(outcomes: list[Outcome], repeats: int) -> None:
    done = [outcome for outcome in outcomes if not outcome.error]
    failed = [outcome.name for outcome in outcomes if outcome.error]
    if not done:
        print("no script ran to the end")
        return
    files = [outcome.files for outcome in done]
    other = [outcome.other_bytes for outcome in done]
    models = [outcome.model_bytes for outcome in done]
    ratios = [outcome.ratio for outcome in done]
    most_files = max(done, key=lambda outcome: outcome.files)
    most_bytes = max(done, key=lambda outcome: outcome.other_bytes)
    over_files = [outcome.name for outcome in done if outcome.files > MAX_FILES]
    over_bytes = [outcome.name for outcome in done if outcome.other_bytes > MAX_BYTES]
    rows = [
        (f"artifact files per run ({len(done)} scripts)", f"median {statistics.median(files):.0f}, max {most_files.files} "
         f"({most_files.name})", f"of which model files: median {statistics.median(o.model_files for o in done):.0f}",
         f"budget median ≤ {MEDIAN_FILES} ({verdict(statistics.median(files) <= MEDIAN_FILES)}), none above {MAX_FILES} "
         f"({verdict(not over_files)}: {len(over_files)} above)"),
        ("artifact bytes other than models", f"median {size(statistics.median(other))}, max {size(most_bytes.other_bytes)} "
         f"({most_bytes.name})", f"models: median {size(statistics.median(models))}, max {size(max(models))}",
         f"budget median ≤ {size(MEDIAN_BYTES)} ({verdict(statistics.median(other) <= MEDIAN_BYTES)}), none above "
         f"{size(MAX_BYTES)} ({verdict(not over_bytes)}: {len(over_bytes)} above)"),
        (f"wall time, tracked / untracked (median of {repeats})",
         f"tracked median {statistics.median(statistics.median(o.tracked) for o in done):.2f} s",
         f"untracked median {statistics.median(statistics.median(o.untracked) for o in done):.2f} s",
         f"median ratio {statistics.median(ratios):.2f}x, max {max(ratios):.2f}x (budget median ≤ {MEDIAN_RATIO}x: "
         f"{verdict(statistics.median(ratios) <= MEDIAN_RATIO)}, none above {MAX_RATIO}x: "
         f"{verdict(max(ratios) <= MAX_RATIO)}: {sum(ratio > MAX_RATIO for ratio in ratios)} above)"),
    ]
    print("\n| row | pypads | anchor | ratio |\n|---|---|---|---|")
    for name, measured, anchor, ratio in rows:
        print(f"| {name} | {measured} | {anchor} | {ratio} |")
    print("\nWorst 5 by artifact files:\n\n| script | files | other bytes | model bytes | wall ratio | most files |\n"
          "|---|---|---|---|---|---|")
    for outcome in sorted(done, key=lambda o: (o.files, o.other_bytes), reverse=True)[:5]:
        print(f"| {outcome.name} | {outcome.files} | {size(outcome.other_bytes)} | {size(outcome.model_bytes)} | "
              f"{outcome.ratio:.2f}x | {top_patterns(outcome)} |")
    everything: Counter[str] = Counter()
    for outcome in done:
        everything.update(outcome.patterns)
    print("\nFiles by kind over all scripts: " + ", ".join(f"{kind} x{n}" for kind, n in everything.most_common(10)))
    if failed:
        print(f"\nFAILED ({len(failed)}): {', '.join(failed)}")
