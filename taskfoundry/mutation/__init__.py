"""Mutation analysis: how many near-miss rebuilds of the reference the kept suite catches.

`operators` makes mutants from the tree-sitter parse, `select` samples those on covered
lines, `rebuild` and `worker` build and test each in a container of the build image,
`analyze` runs it all and returns the `models.MutationReport` (reports/mutation.json).
"""
