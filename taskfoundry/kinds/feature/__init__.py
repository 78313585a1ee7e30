"""The feature kind (FeatureBench / ACE-Bench): see `kind.FeatureKind`. No imports here."""
