"""The hidden cases of a function task: the candidate (`candidate.py` in the workspace) is
called on every stored input and its outcome compared with the reference's.

The candidate runs in one child process (fcall.py), through tfrun: under taskfoundry's
harness as its own uid that cannot read eval/ (these tests, cases.json, the report); what it
prints is discarded. Floats compare with a tolerance of 1e-6; an expected exception matches
by class name.
"""

import json
import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SPEC = json.loads((HERE / "function.json").read_text())
CASES = json.loads((HERE / "cases.json").read_text())
os.environ["TF_TIMEOUT"] = str(SPEC["timeout"])
os.environ["TF_EXECUTABLE"] = SPEC["python"]

import tfrun  # noqa: E402
from fcodec import same_outcome  # noqa: E402


@pytest.fixture(scope="session")
def outcomes(tmp_path_factory):
    work = tmp_path_factory.mktemp("call")
    files = {name: (HERE / name).read_text() for name in ("fcall.py", "fcodec.py")}
    request = {
        "module": str(tfrun.WORKSPACE / "candidate.py"),
        "name": SPEC["name"],
        "npos": SPEC["npos"],
        "timeout": SPEC["call_timeout"],
        "cases": [case["inputs"] for case in CASES],
    }
    try:
        result = tfrun.run(["-I", "fcall.py"], stdin=json.dumps(request), files=files, cwd=work)
    except Exception as exc:  # the whole run timed out
        return {"error": f"the candidate did not finish: {type(exc).__name__}"}
    try:
        return json.loads(result.stdout)
    except ValueError:
        return {"error": f"no outcomes (exit {result.returncode}): {result.stderr[-500:]}"}


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"c{i:03d}" for i in range(len(CASES))])
def test_case(outcomes, index):
    """CATCHES: a body whose outcome on this stored input differs from the reference's."""
    if "outcomes" not in outcomes:
        pytest.fail(outcomes.get("import_error") or outcomes.get("error") or "no outcomes")
    case = CASES[index]
    got = outcomes["outcomes"][index]
    assert same_outcome(case["expected"], got), (
        f"inputs {case['inputs']}: expected {case['expected']}, got {got}"
    )
