"""The function kind's static parts: extraction, dependency classes, testability, the case
codec, variants (trivial bodies, mutants), the prompt, and the yield table."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from taskfoundry.assets.function.fcodec import decode, encode, same, same_outcome
from taskfoundry.grading.summary import tier
from taskfoundry.kinds.function.analysis import complexity, param_hints, returns_depend_on_params
from taskfoundry.kinds.function.functions import find_candidates
from taskfoundry.kinds.function.mutate import mutants, trivial
from taskfoundry.kinds.function.package import case_ids, prompt
from taskfoundry.kinds.function.settings import FunctionConfig
from taskfoundry.pipeline.results import SourceResult

ROOT = Path(__file__).resolve().parents[1]


def _src(path: Path) -> SourceResult:
    return SourceResult(
        path=path, owner="local", repo=path.name, commit="0" * 40, source=str(path), task_id="t"
    )


@pytest.fixture(scope="module")
def pyfuncs() -> tuple[dict[str, str | None], dict[str, object]]:
    records, candidates = find_candidates(_src(ROOT / "examples" / "pyfuncs"), FunctionConfig())
    return {r.qualname.split(".", 2)[-1]: r.drop for r in records}, {c.name: c for c in candidates}


def test_each_function_is_kept_or_dropped_for_its_reason(pyfuncs) -> None:  # type: ignore[no-untyped-def]
    drops, _ = pyfuncs
    assert drops == {
        "clamp": None,
        "to_roman": None,
        "triangle_kind": None,
        "mean_gap": None,
        "jitter": "impure",
        "double": "complexity",
        "undocumented": "no_docstring",
        "uses_helper": "project_dependency",
        "spin": None,  # static stages cannot see a hang: the sandbox drops it
        "descend": None,
        "Counter.bump": "method",
        "slugify": None,
        "run_length": None,
        "wrap_words": None,
        "shout": "impure",
    }


def test_a_standalone_module_carries_its_imports_and_values(pyfuncs) -> None:  # type: ignore[no-untyped-def]
    _, candidates = pyfuncs
    slug = candidates["slugify"]
    assert slug.header == 'import re\n_NON_WORD = re.compile(r"[^a-z0-9]+")'
    namespace: dict[str, object] = {}
    exec(compile(slug.module, "candidate.py", "exec"), namespace)  # noqa: S102 - our own example
    assert namespace["slugify"]("Hello, World!") == "hello-world"  # type: ignore[operator]
    lines = slug.module.splitlines()
    assert lines[slug.body_first - 1].strip().startswith('"""Lower-case')
    assert lines[slug.last - 1].strip() == "return slug.strip(sep)"
    roman = candidates["to_roman"]
    assert "LIMIT = 3999" in roman.header and roman.raises == ["ValueError"]


def test_dependency_classes(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    body = 'def {}(x: int) -> int:\n    """doc"""\n    if x > 0:\n        return {}\n    return 0\n\n'
    (pkg / "m.py").write_text(
        "import numpy as np\nimport requests\nfrom .other import helper\n\n"
        + body.format("wsc", "int(np.sign(x))")
        + body.format("third", "requests.codes.ok")
        + body.format("rel", "helper(x)")
    )
    records, _ = find_candidates(_src(tmp_path), FunctionConfig())
    found = {r.qualname: (r.dep_class, r.drop, r.libraries) for r in records}
    assert found["pkg.m.wsc"] == ("WSC", None, ["numpy"])
    assert found["pkg.m.third"][1] == "third_party"
    assert found["pkg.m.rel"][1] == "project_dependency"
    none, _ = find_candidates(_src(tmp_path), FunctionConfig(allowed_libraries=()))
    assert {r.qualname: r.drop for r in none}["pkg.m.wsc"] == "third_party"


def _fn(text: str) -> ast.FunctionDef:
    node = ast.parse(text).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def test_complexity_and_data_flow() -> None:
    branchy = _fn("def f(a, b):\n    if a and b:\n        return 1\n    return [x for x in a if x]\n")
    assert complexity(branchy) == 1 + 1 + 1 + 2
    assert returns_depend_on_params(_fn("def f(a):\n    t = a * 2\n    return t\n"))
    assert returns_depend_on_params(
        _fn("def f(a):\n    out = []\n    for x in a:\n        out.append(1)\n    return out\n")
    )
    assert not returns_depend_on_params(_fn("def f(a):\n    if a:\n        pass\n    return 3\n"))


def test_literals_in_comparisons_become_examples() -> None:
    params, npos = param_hints(_fn("def f(a, /, b=2, *, c: str = 'x'):\n    return a > 10 or c == 'k'\n"))
    assert npos == 2
    assert [p.name for p in params] == ["a", "b", "c"]
    assert params[0].literals == [10, 9, 11] and params[0].guess == "int"
    assert params[1].guess == "int" and params[2].annotation == "str" and params[2].literals == ["k"]


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        3,
        -2.5,
        "s",
        [1, (2, 3)],
        (1,),
        {1, 2},
        frozenset({"a"}),
        b"\x00\xff",
        1 + 2j,
        {1: "a"},
        {"$t": 1},
    ],
)
def test_the_codec_round_trips(value: object) -> None:
    assert same(value, decode(encode(value)))
    assert type(decode(encode(value))) is type(value)


def test_comparison_is_typed_with_a_float_tolerance() -> None:
    assert same(0.1 + 0.2, 0.3) and not same(1.0, 1.00001)
    assert same(math.nan, decode(encode(math.nan))) and same(math.inf, decode(encode(math.inf)))
    assert not same(1, 1.0) and not same(True, 1) and not same([1], (1,))
    assert same_outcome({"raises": "ValueError"}, {"raises": "ValueError"})
    assert not same_outcome({"return": 1}, {"raises": "ValueError"})
    assert not same_outcome({"return": 1}, {"timeout": True})


def test_trivial_bodies_and_mutants_are_valid_modules(pyfuncs) -> None:  # type: ignore[no-untyped-def]
    _, candidates = pyfuncs
    clamp = candidates["clamp"]
    variants = trivial(clamp.module, "clamp", "x") | mutants(clamp.module, "clamp", 8)
    assert set(variants) >= {"trivial_return_none", "trivial_raise", "trivial_return_first_arg"}
    assert sum(1 for k in variants if k.startswith("mutant")) >= 4
    for text in variants.values():
        assert text != clamp.module
        compile(text, "variant.py", "exec")


def test_mutants_come_from_the_one_engine_and_touch_only_the_function() -> None:
    """The function kind mutates with `mutation.operators`, like the program kind: a change
    outside the function (the other function, the module's constant) is never a mutant."""
    module = (
        "LIMIT = 3\n\n\ndef other(a):\n    return a + 1\n\n\n"
        "def f(x, y):\n    if x < y:\n        return x * 2\n    return y\n"
    )
    found = mutants(module, "f", 50)
    assert len(found) >= 4
    head = module[: module.index("def f")]
    for text in found.values():
        assert text.startswith(head) and text != module
        compile(text, "mutant.py", "exec")
    assert any("x <= y" in t or "x >= y" in t for t in found.values())  # the engine's relational swap


def test_the_prompt_has_the_signature_and_docstring_but_no_body(pyfuncs) -> None:  # type: ignore[no-untyped-def]
    _, candidates = pyfuncs
    text = prompt(candidates["wrap_words"])
    assert "def wrap_words(text: str, width: int) -> list[str]:" in text
    assert "Greedy word wrap" in text and "    ..." in text
    assert "lines.append" not in text
    assert case_ids(2) == ["eval.tests.test_cases.test_case[c000]", "eval.tests.test_cases.test_case[c001]"]


def test_diagnostic_tiers() -> None:
    assert [tier(1.0, True), tier(0.95, False), tier(0.5, False), tier(0.01, False), tier(0.0, False)] == [
        "all",
        "most",
        "half",
        "some",
        "none",
    ]


def test_a_value_rebound_from_itself_keeps_both_bindings(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "import math\nT = [1, 2]\nT = [x * 2 for x in T]\n\n"
        'def f(i: int) -> int:\n    """Doubled table entry."""\n'
        "    if 0 <= i < len(T):\n        return T[i]\n    return -1\n"
    )
    _, (candidate,) = find_candidates(_src(tmp_path), FunctionConfig())
    namespace: dict[str, object] = {}
    exec(compile(candidate.module, "candidate.py", "exec"), namespace)  # noqa: S102 - our own snippet
    assert namespace["T"] == [2, 4] and "import math" not in candidate.header


def test_a_returned_iterator_is_compared_by_its_items() -> None:
    encoded = encode(map(str, range(3)))
    assert encoded == {"$t": "iter", "v": ["0", "1", "2"]}
    assert same(decode(encoded), decode(encode(iter(["0", "1", "2"]))))
    assert not same(decode(encoded), ["0", "1", "2"])  # a list is not an iterator's items
    with pytest.raises(TypeError, match="more than 1000 items"):
        encode(iter(range(5000)))


def test_a_value_changed_at_module_level_is_copied_with_its_changes(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "TABLE = dict(a=1)\nTABLE['b'] = 2\n\n"
        'def get(key: str) -> int:\n    """Table entry, 0 when absent."""\n'
        "    if key in TABLE:\n        return TABLE[key]\n    return 0\n"
    )
    _, (candidate,) = find_candidates(_src(tmp_path), FunctionConfig())
    namespace: dict[str, object] = {}
    exec(compile(candidate.module, "candidate.py", "exec"), namespace)  # noqa: S102 - our own snippet
    assert namespace["TABLE"] == {"a": 1, "b": 2}


def _explore(fdir: Path, seed: int) -> list[object]:
    import json
    import subprocess
    import sys

    from taskfoundry.assets import asset
    from taskfoundry.kinds.function.runner import RUNNER_FILES, runner_config

    runner = fdir.parent.parent / "runner"
    runner.mkdir(exist_ok=True)
    for name in RUNNER_FILES:
        (runner / name).write_bytes(asset(f"function/{name}"))
    cfg = runner_config(FunctionConfig(seed=seed, rounds=1, examples=30))
    (fdir.parent / "config.json").write_text(json.dumps(cfg))
    subprocess.run([sys.executable, str(runner / "fn_runner.py"), "explore", str(fdir)], check=True)
    return [case["inputs"] for case in json.loads((fdir / "explore.json").read_text())["cases"]]


def test_the_hypothesis_inputs_come_from_the_builds_seed(pyfuncs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The rounds' seeds are the build's secret seed + 1, ...: a worker who runs fn_runner with
    the public defaults (seed 0) draws other inputs than the hidden cases'; the same seed draws
    the same ones (a build reproduced with --seed)."""
    import json

    from taskfoundry.kinds.function.cases import spec_of

    _, candidates = pyfuncs
    clamp = candidates["clamp"]
    fdir = tmp_path / "fns" / "clamp"
    fdir.mkdir(parents=True)
    (fdir / "spec.json").write_text(json.dumps(spec_of(clamp)))
    (fdir / "candidate.py").write_text(clamp.module)
    public, secret, again = _explore(fdir, 0), _explore(fdir, 8442897144), _explore(fdir, 8442897144)
    assert secret == again
    assert public and secret and public != secret
