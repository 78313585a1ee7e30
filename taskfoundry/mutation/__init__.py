"""The mutation engine: mutants of C, C++, Rust, Go and Python sources from their tree-sitter
parse (`operators`), one engine for every kind that mutates."""

#: what `operators.mutants_of` can change (docs/mutation.md describes each)
OPERATORS = ("relational", "arithmetic", "logical", "negation", "constant", "statement", "return")
