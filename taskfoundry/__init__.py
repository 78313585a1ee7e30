"""taskfoundry: turn software repositories into ProgramBench-style benchmark tasks."""

__version__ = "0.2.0"
