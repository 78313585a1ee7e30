"""The feature kind (FeatureBench / ACE-Bench), planned: the worker gets the repository with a
feature removed (level 1) or only its interface (level 2); the repository's own tests grade
it: fail-to-pass tests that fail on the stripped repository and pass with the reference, and
pass-to-pass tests that pass on both. Many tasks per source, one per F2P test file.

Its parts will be: start_state (the stripped repository), generate (F2P and P2P from tracing
the repository's tests), review (the removed code's size, the F2P count), validate (F2P fail
stripped and pass restored, P2P pass on both), package, grade (every F2P and P2P passes).
"""

from __future__ import annotations

from taskfoundry.kinds.base import NotBuiltKind


class FeatureKind(NotBuiltKind):
    name = "feature"
    plan = "FeatureBench-style feature tasks: a repository with a feature removed, graded by its own tests"
