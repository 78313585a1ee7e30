"""Flow runs carry the source or task they build (issue 59), not Prefect's random names."""

from __future__ import annotations


def test_flow_runs_are_named_after_what_they_build() -> None:
    from taskfoundry.flows.names import short_source

    assert short_source("/tmp/x/examples/csvq") == "csvq"
    assert short_source("https://example.org/o/tool.git#v1.2") == "tool#v1.2"
    assert short_source("debian:figlet=2.2.5-3") == "debian:figlet=2.2.5-3"
    assert short_source("crate:bat@0.24.0") == "crate:bat@0.24.0"
