"""Prefect flows: thin wrappers that chain the stage functions of `taskfoundry.pipeline`."""

from taskfoundry.flows.defaults import apply_prefect_defaults

apply_prefect_defaults()  # before any flow runs: the embedded server starts with the first one
