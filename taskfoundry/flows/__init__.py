"""Prefect flows: thin wrappers that chain the stage functions of `taskfoundry.pipeline`."""

from taskfoundry.prefect_env import before_prefect

before_prefect()  # a library user's first import of the flows: before Prefect's own

from taskfoundry.flows.defaults import apply_prefect_defaults  # noqa: E402

apply_prefect_defaults()  # before any flow runs: the embedded server starts with the first one
