"""The function kind (Code2Bench): not built yet; see `kind.FunctionKind`. No imports here."""
