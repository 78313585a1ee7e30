"""tfrun.py, the helper that runs the program under test as its own uid: what the program
leaves in its working directory cannot make the grader (root) read what it must not."""

from __future__ import annotations

import json

import pytest

from taskfoundry.assets import asset
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

pytestmark = pytest.mark.docker


LINKER = (
    "#!/bin/sh\nln -s /srv/secret.txt out.txt\necho in > inner.txt\nln -s inner.txt ok.txt\nmkfifo pipe\n"
)
CALL = r"""
import json, os, sys
sys.path.insert(0, "/tmp/t/eval/tests")
os.environ["TF_PROGRAM_UID"] = "2000"
import tfrun
if sys.argv[1] == "off":
    tfrun._remove_unsafe = lambda top: None
work = "/tmp/t/work"
os.makedirs(work)
tfrun.run([], cwd=work)
seen = {}
for name in ("out.txt", "ok.txt"):
    try:
        seen[name] = open(os.path.join(work, name)).read()
    except OSError:
        seen[name] = None
seen["pipe"] = os.path.lexists(os.path.join(work, "pipe"))
print(json.dumps(seen))
"""


def _called(base_image: str, docker_client, program: str, call: str, arg: str, secret: bool = False) -> dict:  # type: ignore[no-untyped-def, type-arg]
    """What `call` (a script that imports tfrun from /tmp/t/eval/tests and calls `program`,
    /tmp/t/executable) prints as JSON, run as root in a container of the base image; with
    `secret`, a root-only /srv/secret.txt is there."""
    with DockerSandbox(base_image, SandboxLimits(), client=docker_client) as box:
        assert box.exec("mkdir -p /srv /tmp/t/eval/tests", timeout=30, user="0:0").ok
        if secret:
            box.put_file(b"HIDDEN-TEST-TEXT\n", "/srv/secret.txt", mode=0o600)
        box.put_file(asset("grading/tfrun.py"), "/tmp/t/eval/tests/tfrun.py", mode=0o644)
        box.put_file(program.encode(), "/tmp/t/executable", mode=0o755)
        box.put_file(call.encode(), "/tmp/call.py", mode=0o644)
        res = box.exec(["python3", "/tmp/call.py", arg], timeout=60, user="0:0")
    assert res.ok, res.text()
    return json.loads(res.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("defence", ["on", "off"])
def test_links_the_program_leaves_are_not_followed_by_the_grader(
    base_image: str, docker_client, defence: str
) -> None:  # type: ignore[no-untyped-def]
    """The program leaves a link to a root-only file (a hidden test, say) where the test reads
    its output, and a FIFO; the helper removes both before root reads the directory."""
    seen = _called(base_image, docker_client, LINKER, CALL, defence, secret=True)
    assert seen["ok.txt"] == "in\n"  # a link that stays in the directory is the program's output
    if defence == "on":
        assert seen["out.txt"] is None and seen["pipe"] is False
    else:
        assert seen["out.txt"] == "HIDDEN-TEST-TEXT\n" and seen["pipe"] is True


# what the program runs as, and what it leaves running, both ways tfrun drops the uid: through
# setpriv (a vfork from pytest) and through Python's own user= (a fork of all of pytest)
CREDS = r"""#!/bin/sh
grep -E '^(Uid|Gid|Groups|CapPrm|CapEff|CapAmb):' /proc/self/status
python3 -c 'import os; os.setresuid(0, 0, 0); print("ROOT AGAIN")' 2>/dev/null
python3 -c 'import os; os.setgroups([0]); print("GROUP ROOT")' 2>/dev/null
( setsid sleep 300 >/dev/null 2>&1 & )
"""
WAYS = r"""
import json, os, sys
sys.path.insert(0, "/tmp/t/eval/tests")
way = sys.argv[1]
if way != "no uid":
    os.environ["TF_PROGRAM_UID"] = "2000"
import tfrun
setpriv = tfrun.SETPRIV
if way == "fork":
    tfrun.SETPRIV = None
if way == "no reap":
    tfrun.reap = lambda uid, rounds=50: None
work = f"/tmp/t/{way.replace(' ', '-')}"
os.makedirs(work)
res = tfrun.run([], cwd=work)
print(json.dumps({"out": res.stdout, "alive": tfrun._alive(2000), "setpriv": setpriv}))
"""
DROPPED = (
    "Uid:\t2000\t2000\t2000\t2000\nGid:\t2000\t2000\t2000\t2000\nGroups:\t \n"
    "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapAmb:\t0000000000000000\n"
)


@pytest.mark.parametrize("way", ["setpriv", "fork", "no reap", "no uid"])
def test_the_program_runs_as_its_uid_alone_and_leaves_nothing_running(
    base_image: str, docker_client, way: str
) -> None:  # type: ignore[no-untyped-def]
    """Every uid (real, effective, saved) and gid the program's, no group, no capability, no
    way back to root; a daemon it starts is gone when the call returns. `no reap` and `no uid`
    are the defences off: the daemon outlives the call; the program is root."""
    seen = _called(base_image, docker_client, CREDS, WAYS, way)
    assert seen["setpriv"] == "/usr/bin/setpriv"  # the base image has it: the fast way is tried
    if way == "no uid":
        assert seen["out"].startswith("Uid:\t0\t0\t0\t0") and "ROOT AGAIN" in seen["out"]
        return
    assert seen["out"] == DROPPED, seen["out"]
    assert seen["alive"] is (way == "no reap")


# the mutation analysis's guard stands at the executable's path and runs the mutant as the
# call's uid; with `reap_from` it kills what the program left of that uid as it ends
DAEMON = (  # it returns once the daemon is in a session of its own, out of the guard's reach
    "#!/bin/sh\n( setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' >/dev/null 2>&1 & )\n"
    "until [ -s daemon.pid ]; do sleep 0.01; done\necho started\n"
)
GUARDED = r"""
import json, os, sys
sys.path.insert(0, "/tmp/t/eval/tests")
os.environ |= {"TF_PROGRAM_UID": "2000", "TF_REAPED": "1"}
import tfrun
reapers = []
if sys.argv[1].endswith("tfrun off"):
    tfrun.reap = lambda uid, rounds=50: None
real = tfrun.subprocess.run
def counted(argv, *args, **kwargs):
    reapers.extend([1] if tfrun.KILL_ALL[-1] in argv else [])
    return real(argv, *args, **kwargs)
tfrun.subprocess.run = counted
os.makedirs("/tmp/t/work")
res = tfrun.run([], cwd="/tmp/t/work")
print(json.dumps({"out": res.stdout, "alive": tfrun._alive(2000), "reapers": len(reapers)}))
"""


@pytest.mark.parametrize("way", ["guard", "guard off", "guard, tfrun off", "guard off, tfrun off"])
def test_the_mutant_guard_kills_what_the_program_left_so_tfrun_only_looks(
    base_image: str, docker_client, way: str
) -> None:  # type: ignore[no-untyped-def]
    """A mutant's program leaves a daemon. The guard (compiled, as the worker does) kills it as
    it ends, so tfrun (TF_REAPED) starts no reaper; a guard that does not (`reap_from=0`) leaves
    it to tfrun's look, which finds it and reaps; with both off it outlives the call."""
    reaps = not way.startswith("guard off")
    settings = {
        "program": "/tmp/daemon",
        "argv0": "/tmp/t/executable",
        "timeout": "10",
        "cap": "1000000",
        "marks": "/tmp/marks",
        "current": "/tmp/none",
        "reap_from": "2000" if reaps else "0",
    }
    with DockerSandbox(base_image, SandboxLimits(), client=docker_client) as box:
        assert box.exec("mkdir -p /task/mutant /tmp/marks /tmp/t/eval/tests", timeout=30, user="0:0").ok
        box.put_file("".join(f"{k}={v}\n" for k, v in settings.items()).encode(), "/task/mutant/guard.conf")
        box.put_file(asset("program/mutant_guard.c"), "/tmp/guard.c")
        assert box.exec("cc -O2 -o /tmp/t/executable /tmp/guard.c", timeout=120, user="0:0").ok
        box.put_file(DAEMON.encode(), "/tmp/daemon", mode=0o755)
        box.put_file(asset("grading/tfrun.py"), "/tmp/t/eval/tests/tfrun.py", mode=0o644)
        box.put_file(GUARDED.encode(), "/tmp/call.py", mode=0o644)
        res = box.exec(["python3", "/tmp/call.py", way], timeout=60, user="0:0")
    assert res.ok, (res.exit_code, res.text())
    seen = json.loads(res.stdout)
    assert seen["out"] == "started\n"
    assert seen["alive"] is (way == "guard off, tfrun off")
    if way == "guard off":  # a killed process may not be gone at the first look: a round more
        assert seen["reapers"] >= 1
    else:
        assert seen["reapers"] == 0


# tfdrop (what the mutation analysis compiles for tfrun): the same credentials as setpriv, and
# a dropper the program could have replaced (writable by others) is not used
DROPPING = r"""
import json, os, sys
sys.path.insert(0, "/tmp/t/eval/tests")
os.environ["TF_PROGRAM_UID"] = "2000"
import tfrun
way = sys.argv[1]
if way == "writable, trusted anyway":
    tfrun._trusted = lambda path: True
    tfrun.reap = lambda uid, rounds=50: None  # through it, `kill -1` as root would end us all
argv, _ = tfrun._as_uid(2000, ["/tmp/t/executable"], "/tmp/t/executable")
work = f"/tmp/t/{way.replace(' ', '-').replace(',', '')}"
os.makedirs(work)
res = tfrun.run([], cwd=work)
print(json.dumps({"out": res.stdout, "alive": tfrun._alive(2000), "via": argv[0]}))
"""
# what a program left in a dropper others may write: it runs the next call as root
FAKE_DROPPER = '#!/bin/sh\nshift\nexec "$@"\n'


@pytest.mark.parametrize("way", ["tfdrop", "writable", "writable, trusted anyway"])
def test_tfdrop_drops_as_setpriv_does_and_only_when_root_alone_may_change_it(
    base_image: str, docker_client, way: str
) -> None:  # type: ignore[no-untyped-def]
    """Built as the mutation analysis builds it, tfdrop gives the program exactly setpriv's
    credentials and leaves nothing running. A dropper others may write (a program replaced it
    with one that does not drop) is passed over for setpriv; trusted anyway (the defence off),
    the next call runs as root."""
    with DockerSandbox(base_image, SandboxLimits(), client=docker_client) as box:
        assert box.exec("mkdir -p /tmp/t/eval/tests /usr/local/sbin", timeout=30, user="0:0").ok
        box.put_file(asset("grading/tfdrop.c"), "/tmp/tfdrop.c")
        build = "cc -O2 -static -o /usr/local/sbin/tfdrop /tmp/tfdrop.c"
        assert box.exec(build, timeout=120, user="0:0").ok
        if way != "tfdrop":
            box.put_file(FAKE_DROPPER.encode(), "/usr/local/sbin/tfdrop", mode=0o777)
        box.put_file(asset("grading/tfrun.py"), "/tmp/t/eval/tests/tfrun.py", mode=0o644)
        box.put_file(CREDS.encode(), "/tmp/t/executable", mode=0o755)
        box.put_file(DROPPING.encode(), "/tmp/call.py", mode=0o644)
        res = box.exec(["python3", "/tmp/call.py", way], timeout=60, user="0:0")
    assert res.ok, res.text()
    seen = json.loads(res.stdout)
    if way == "writable, trusted anyway":
        assert seen["via"] == "/usr/local/sbin/tfdrop" and seen["out"].startswith("Uid:\t0\t0\t0\t0")
        return
    assert seen["via"] == ("/usr/local/sbin/tfdrop" if way == "tfdrop" else "/usr/bin/setpriv")
    assert seen["out"] == DROPPED, seen["out"]
    assert seen["alive"] is False
