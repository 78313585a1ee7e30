"""Source code as the pipeline reads it: which files are code (`languages`) and their
tree-sitter parse (`parse`), for the leak scan, the asset selection and the mutation engine."""
