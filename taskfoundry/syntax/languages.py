"""Which files are source code, by extension: every such set is spelled here, once.

stdlib only: the leak scan's in-container walk gets `PROGRAM_SOURCE` in its config.json.
"""

from __future__ import annotations

# the languages with a tree-sitter grammar (`syntax.parse`), by extension
EXT_LANGUAGE: dict[str, str] = {
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".rs": "rust",
    ".go": "go",
    ".py": "python",
    ".pyi": "python",
}
# code without a grammar here: tokenised by the C-like lexer alone
GENERIC_CODE = frozenset({".cs", ".java", ".js", ".kt", ".m", ".mm", ".scala", ".swift", ".ts", ".zig"})
# what a program is built from (sources, headers, assembly): a leak when a worker can read it
PROGRAM_SOURCE = frozenset(
    {
        ".S",
        ".asm",
        ".c",
        ".c++",
        ".cc",
        ".cpp",
        ".cs",
        ".cxx",
        ".go",
        ".h",
        ".hh",
        ".hpp",
        ".hs",
        ".hxx",
        ".java",
        ".js",
        ".kt",
        ".lua",
        ".m",
        ".ml",
        ".mm",
        ".nim",
        ".py",
        ".pyi",
        ".pyx",
        ".rb",
        ".rs",
        ".s",
        ".scala",
        ".swift",
        ".ts",
        ".zig",
    }
)
# interpreted languages' code, which a base system ships plenty of: code, never a test asset
SCRIPT_SOURCE = frozenset(
    {
        ".awk",
        ".bash",
        ".bat",
        ".cjs",
        ".clj",
        ".d",
        ".dart",
        ".el",
        ".erl",
        ".ex",
        ".exs",
        ".f",
        ".f90",
        ".fish",
        ".jl",
        ".l",
        ".lisp",
        ".mjs",
        ".php",
        ".pl",
        ".pm",
        ".ps1",
        ".pxd",
        ".r",
        ".scm",
        ".sed",
        ".sh",
        ".sql",
        ".sv",
        ".t",
        ".tcl",
        ".v",
        ".vhd",
        ".vim",
        ".y",
        ".zsh",
    }
)
ANY_SOURCE = PROGRAM_SOURCE | SCRIPT_SOURCE
# what counts toward a program's size (ProgramBench's difficulty): its parsed languages and Java
MEASURED = frozenset(EXT_LANGUAGE) | {".java"}
