"""The feature kind (FeatureBench / ACE-Bench): not built yet; see `kind.FeatureKind`. No imports here."""
