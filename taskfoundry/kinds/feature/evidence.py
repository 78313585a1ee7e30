"""What an F2P test's run must show, from several recorded runs of the reference.

An observation (assets/feature_types.py) names the function that returned and digests what
it returned: `name=digest` of the value's type and plain value, or `name~digest` of its type
only. Most values are the same in every run; some are not (marshmallow's test User has a
`uuid1()` and a `datetime.now()`: every `Schema.dump` of it differs), and requiring one run's
digest at grading fails the reference itself (`unproven`). So validation records the
reference more than once, each with another hash seed, and for each test and function:

- the same values in every run: those values are required, as before;
- values that changed, types that did not: the types are required (that function is
  `loose` in that test, and the guard reports its types too);
- types that changed as well: what every run showed is required, and the test is no longer
  held to exactly its values (only to showing them).

Nothing is accepted blindly: what varies is found at package time, and it is still required
at the level (type) at which it does not vary, as for any value that is not plain data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

VALUE, TYPE = "=", "~"


def split(observation: str) -> tuple[str, str]:
    """(function name, `=` or `~`): a name holds neither, a digest is hex."""
    cut = max(observation.rfind(VALUE), observation.rfind(TYPE))
    return observation[: max(cut, 0)], observation[cut : cut + 1] if cut >= 0 else ""


def is_typed(observation: str) -> bool:
    return split(observation)[1] == TYPE


def loose_names(required: Iterable[str]) -> set[str]:
    """The functions whose types, not values, `required` holds."""
    return {name for name, sep in map(split, required) if sep == TYPE}


def _by_name(observations: Iterable[str]) -> dict[str, dict[str, set[str]]]:
    out: dict[str, dict[str, set[str]]] = {}
    for obs in observations:
        name, sep = split(obs)
        out.setdefault(name, {VALUE: set(), TYPE: set()})[sep].add(obs)
    return out


def settle_one(runs: Sequence[Sequence[str]]) -> tuple[list[str], bool]:
    """(what the test's run must show, whether exactly that) from its observations in each run."""
    per_run = [_by_name(run) for run in runs]
    names = set().union(*per_run)
    required: set[str] = set()
    exact = True
    for name in names:
        seen = [run.get(name, {VALUE: set(), TYPE: set()}) for run in per_run]
        values, kinds = [s[VALUE] for s in seen], [s[TYPE] for s in seen]
        if all(v == values[0] for v in values):
            required |= values[0]
        elif all(k == kinds[0] for k in kinds):
            required |= kinds[0]
        else:
            required |= set.intersection(*kinds)
            exact = False
    return sorted(required), exact


def settle(runs: Sequence[Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Test -> {"direct": bool, "values": [...]} (validate.py's `values`) from each run's record
    of test -> {"all": [...], "direct": [...]} (assets/feature_types.py). A test recorded in
    only some runs passed in only some: it gets nothing (validation fails such a reference)."""
    out: dict[str, dict[str, Any]] = {}
    for test in set.intersection(*(set(run) for run in runs)) if runs else set():
        records = [run[test] for run in runs]
        direct = all(r.get("direct") for r in records)
        lists = [r["direct"] if direct else r["all"] for r in records]
        required, exact = settle_one(lists)
        if required:
            out[test] = {"direct": direct and exact, "values": required}
    return out


def shown(observed: set[str], required: Iterable[str]) -> set[str]:
    """Of a run's observations handed to a test's code, those comparable with `required`:
    values of the functions it holds values of, types of those it holds types of."""
    loose = loose_names(required)
    return {o for o in observed if is_typed(o) == (split(o)[0] in loose)}
