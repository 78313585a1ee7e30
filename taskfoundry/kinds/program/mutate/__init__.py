"""The program kind's mutation analysis: how many near-miss rebuilds of the reference the kept
suite catches.

`taskfoundry.mutation.operators` makes the mutants, `select` samples those on covered lines,
`rebuild` and `worker` build and test each in a container of the build image, `analyze` runs
it all and returns the `models.MutationReport` (reports/mutation.json); `guided` writes tests
that kill survivors; `stage` is the cached stage.
"""
