"""The program kind (ProgramBench): rebuild a program from its executable and docs.

`kind.ProgramKind` puts the parts together over its stages: `cleanroom/` (the start state,
leak-scanned), `testgen/` (the hidden suite), `lint.py` (review), `filter/` (validation),
`mutate/` (strengthening); `settings.py`, `results.py`, `package.py` and `solution.py` as in
every kind. No imports here (see `taskfoundry.kinds`).
"""
