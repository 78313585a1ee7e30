"""The function kind (Code2Bench): see `kind.FunctionKind`. No imports here."""
