"""The program kind (ProgramBench): rebuild a program from its executable and docs.

`kind.ProgramKind` puts the parts together; each part is a stage module here (`cleanroom`,
`generate`, `lint`, `filter`) over the packages that do the work (`cleanroom/`,
`testgen/`, `linters/`, `filtering/`). No imports here (see `taskfoundry.kinds`).
"""
