"""Task kinds: what differs between a program, a function and a feature task.

`base.TaskKind` is the seam (start state, generation, review, validation, packaging,
grading); `registry` names the kinds; one folder per kind holds its parts. Everything
else (sources, builders, sandboxes and images, the linter, the flows) is shared.

Nothing is imported here: a stage's code key covers the packages above its module, so
this file stays empty of imports.
"""
