"""The batch evaluator: every task of a tasks directory against a run's submissions, each
graded by its kind (`taskfoundry.grading` holds how)."""
