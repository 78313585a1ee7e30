"""Agents on built tasks: `solve` one task in its worker's view, `run` many then grade them.

The core here never imports Prefect (`flows/solve.py` wraps it); `cli.py` is the face.
"""
