"""The review part: static gates before anything runs (removed lines, the F2P file's size)."""

from __future__ import annotations

from taskfoundry.kinds.feature.results import CandidatesStage, ReviewStage


def review_stage(gen: CandidatesStage) -> ReviewStage:
    """Candidates with more than `min_removed_lines` removed and at least `min_f2p` passing tests
    in their file (an upper bound of their F2P tests; validation counts them)."""
    cfg = gen.config
    per_file: dict[str, int] = {}
    for case in gen.env.tests:
        if case.status == "passed":
            per_file[case.file] = per_file.get(case.file, 0) + 1
    kept, dropped = [], {}
    for cand in gen.candidates:
        if cand.dropped:
            dropped[cand.name] = f"{cand.dropped}: {cand.detail}"
        elif cand.removed_lines <= cfg.min_removed_lines:
            dropped[cand.name] = (
                f"too_few_removed_lines: {cand.removed_lines} (needs > {cfg.min_removed_lines})"
            )
        elif per_file.get(cand.f2p_file, 0) < cfg.min_f2p:
            dropped[cand.name] = (
                f"too_few_f2p: {per_file.get(cand.f2p_file, 0)} tests (needs >= {cfg.min_f2p})"
            )
        else:
            kept.append(cand.name)
    return ReviewStage(kept=kept, dropped=dropped)
