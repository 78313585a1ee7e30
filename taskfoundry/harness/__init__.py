"""The grading harness: how every suite runs, for the filter and the evaluator alike.

One container setup (`sandbox.GradingSandbox`), one way to put a suite in and run it
(`suite.run_suite`: pytest as root, the grader; the program under test as its own uid,
see assets/tfrun.py), one way to read the report (`report.trusted_outcomes`). What the
filter keeps is therefore exactly what the evaluator grades.
"""
