"""The mutation engine: mutants of C, C++, Rust, Go and Python sources from their tree-sitter
parse (`operators`), one engine for every kind that mutates."""
