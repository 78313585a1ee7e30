"""Flow runs whose machine died: heartbeats, and a server automation that marks the silent ones
Crashed, so a batch waiting on a dispatched source (`many.dispatched`) never waits forever.

A flow run's own process sends a `prefect.flow-run.heartbeat` event every
`PREFECT_FLOWS_HEARTBEAT_FREQUENCY` seconds (a thread of the engine, Prefect >= 3.1.8). When the
worker and that process are killed together (the machine died), nothing reports the run again and
it stays `Running`. A self-hosted Prefect server has no built-in zombie detection (Cloud's
"unresponsive run detection" is Cloud only); its documented answer is an automation
(docs.prefect.io/v3/advanced/detect-zombie-flows): after a heartbeat, expect another heartbeat or
a terminal state within a window, else change the run to Crashed. `ensure_watch` creates it.

The automation is scoped by a tag naming the frequency: only runs started by `dispatched`, which
sets that frequency in their environment, are watched. Every other flow run on the server beats
at Prefect's default (180 s), which a 90 s window would crash while it is healthy.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import StateType
from prefect.events.actions import ChangeFlowRunState
from prefect.events.schemas.automations import AutomationCore, EventTrigger, Posture

log = logging.getLogger(__name__)

HEARTBEAT = "prefect.flow-run.heartbeat"
ENDED = ("Completed", "Failed", "Cancelled", "Crashed")
MISSES = 3  # heartbeats missed before a run counts as dead (Prefect's recipe: 30 s, 90 s window)


TAG_PREFIX = "taskfoundry-heartbeat-"


def tag(seconds: int) -> str:
    """The tag of the flow runs that beat every `seconds` (what the automation watches)."""
    return f"{TAG_PREFIX}{seconds}s"


def watched(tags: list[str]) -> list[str]:
    """The liveness tags among a run's `tags`: its subflows get them, to be watched as it is."""
    return [t for t in tags if t.startswith(TAG_PREFIX)]


def job_variables(seconds: int) -> dict[str, dict[str, str]]:
    """Job variables that make a flow run beat every `seconds` (merged into the deployment's env
    by the worker)."""
    return {"env": {"PREFECT_FLOWS_HEARTBEAT_FREQUENCY": str(seconds)}}


def automation(seconds: int) -> AutomationCore:
    """Mark Crashed a tagged flow run silent for `MISSES` heartbeats."""
    window = seconds * MISSES
    return AutomationCore(
        name=f"taskfoundry-crash-silent-runs-{seconds}s",
        description=f"taskfoundry: a flow run tagged {tag(seconds)} without a heartbeat for {window} s "
        "lost its process (its worker or machine died): mark it Crashed, so the batch retries it",
        trigger=EventTrigger(
            after={HEARTBEAT},
            expect={HEARTBEAT, *(f"prefect.flow-run.{name}" for name in ENDED)},
            match={"prefect.resource.id": "prefect.flow-run.*"},
            match_related={
                "prefect.resource.role": "tag",
                "prefect.resource.id": f"prefect.tag.{tag(seconds)}",
            },
            for_each={"prefect.resource.id"},
            posture=Posture.Proactive,
            threshold=1,
            within=timedelta(seconds=window),
        ),
        actions=[
            ChangeFlowRunState(
                state=StateType.CRASHED,
                message=f"no heartbeat for {window} s: its worker or machine died",
            )
        ],
    )


def ensure_watch(seconds: int) -> None:
    """Create (or update to this definition) the automation watching runs that beat every `seconds`."""
    wanted = automation(seconds)
    with get_client(sync_client=True) as client:
        found = client.read_automations_by_name(wanted.name)
        if found:
            client.update_automation(found[0].id, wanted)
        else:
            client.create_automation(wanted)
    log.debug("automation %s: runs silent for %d s are Crashed", wanted.name, seconds * MISSES)
