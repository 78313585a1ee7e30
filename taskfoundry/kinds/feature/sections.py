"""The feature kind's stages' sections of a `Config`: one `FeatureSettings` for all of them."""

from __future__ import annotations

from taskfoundry.config import Config
from taskfoundry.kinds.feature.settings import FeatureSettings


def for_feature(config: Config) -> FeatureSettings:
    return FeatureSettings(
        out=config.out,
        namespace=config.namespace,
        base=config.base,
        feature=config.feature,
        harness=config.eval,
    )
