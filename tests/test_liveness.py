"""The automation that crashes silent dispatched runs, on a real Prefect server: one per heartbeat
frequency, created once and then updated in place (every batch ensures it). That it fires on a
dead worker's run is tests/test_flows_scale.py's (it takes a 90 s window)."""

from __future__ import annotations

from prefect.client.orchestration import get_client

from taskfoundry.flows import liveness


def test_ensure_watch_makes_one_automation_per_frequency_scoped_to_its_tag(prefect_harness: None) -> None:
    for seconds in (30, 30, 45):
        liveness.ensure_watch(seconds)
    with get_client(sync_client=True) as client:
        found = {s: client.read_automations_by_name(liveness.automation(s).name) for s in (30, 45)}
    assert {s: len(autos) for s, autos in found.items()} == {30: 1, 45: 1}
    for seconds, (auto,) in found.items():
        trigger = auto.trigger.model_dump(mode="json")
        assert trigger["within"] == seconds * liveness.MISSES
        assert trigger["match_related"] == {
            "prefect.resource.role": "tag",
            "prefect.resource.id": f"prefect.tag.{liveness.tag(seconds)}",
        }
        assert trigger["posture"] == "Proactive" and trigger["after"] == [liveness.HEARTBEAT]
        assert auto.enabled and [a.type for a in auto.actions] == ["change-flow-run-state"]
