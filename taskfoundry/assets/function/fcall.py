"""Calls one function on stored inputs and prints the outcomes as JSON (stdlib + fcodec only).

    python3 -I fcall.py < {"module": PATH, "name": NAME, "npos": N, "timeout": S, "cases": [INPUTS...]}

prints {"outcomes": [...]} or {"import_error": TEXT}. An outcome is {"return": encoded value},
{"raises": exception class name}, {"timeout": true} or {"unencodable": TEXT}. Inputs are
{parameter name: encoded value}, in the signature's order; the first N go by position.
What the function prints is discarded, so it cannot garble the outcomes.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fcodec import Unencodable, decode, encode  # noqa: E402


class CallTimeout(BaseException):
    """Raised in the function by the interval timer (a BaseException: `except Exception` in the
    function under test does not swallow it)."""


def _alarm(signum: int, frame: Any) -> None:
    raise CallTimeout


def call(fn: Callable[..., Any], inputs: dict[str, Any], npos: int, timeout: float) -> dict[str, Any]:
    values = list(decode(inputs).items())
    args = [v for _, v in values[:npos]]
    kwargs = dict(values[npos:])
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        value = fn(*args, **kwargs)
        try:  # under the timer too: encoding runs a returned generator
            return {"return": encode(value)}
        except Unencodable as exc:
            return {"unencodable": str(exc)}
    except CallTimeout:
        return {"timeout": True}
    except (Exception, SystemExit) as exc:  # the function's own exceptions are outcomes
        return {"raises": type(exc).__name__}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def load(path: str, name: str, module: str = "candidate") -> Callable[..., Any]:
    spec = importlib.util.spec_from_file_location(module, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    spec.loader.exec_module(mod)
    fn = getattr(mod, name, None)
    if not callable(fn):
        raise ImportError(f"{path} defines no function {name}")
    return fn


def main() -> None:
    request = json.loads(sys.stdin.read())
    out = os.dup(1)
    sink = open(os.devnull, "w")  # noqa: SIM115 - held for the whole run
    sys.stdout = sys.stderr = sink
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
    try:
        fn = load(request["module"], request["name"])
    except BaseException as exc:  # a module that does not import fails every case
        result: dict[str, Any] = {"import_error": f"{type(exc).__name__}: {exc}"[:2000]}
    else:
        timeout = float(request.get("timeout", 2.0))
        npos = int(request["npos"])
        result = {"outcomes": [call(fn, case, npos, timeout) for case in request["cases"]]}
    os.write(out, json.dumps(result).encode())


if __name__ == "__main__":
    main()
