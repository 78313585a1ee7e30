"""Tree-sitter parses of source code, one grammar per language of `languages.EXT_LANGUAGE`."""

from __future__ import annotations

from functools import cache

from tree_sitter import Language, Parser, Tree

from taskfoundry.dotted import load

GRAMMARS = {
    "c": "tree_sitter_c:language",
    "cpp": "tree_sitter_cpp:language",
    "rust": "tree_sitter_rust:language",
    "go": "tree_sitter_go:language",
    "python": "tree_sitter_python:language",
}


@cache
def language(name: str) -> Language:
    return Language(load(GRAMMARS[name])())


def parse(data: bytes, lang: str) -> Tree:
    return Parser(language(lang)).parse(data)
