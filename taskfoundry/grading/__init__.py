"""Grading: how every suite runs and how a submission is scored, for the filter and the
evaluator alike.

One container setup (`sandbox.GradingSandbox`), one way to put a suite in and run it
(`suite.run_suite`: pytest as root, the grader; the program under test as its own uid,
see assets/grading/tfrun.py), one way to read the report (`junit`). What the filter keeps is
therefore exactly what the evaluator grades. A program submission is compiled
(`compile`), its branches run (`branch`), graded (`grade`) and scored (`summary`); `task`
ties them together.
"""
