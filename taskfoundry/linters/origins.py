"""Origin tags: where a value in a test comes from, and what literals look like."""

from __future__ import annotations

import re

# Where a value comes from (a value may carry several tags).
PROGRAM = "program"  # the program's run result, its stdout/stderr/exit status, files it wrote
LITERAL = "literal"  # written in the test's source
INPUT = "input"  # something the test fed to the program (stdin, args, files it wrote)
TEST_WRITTEN = "test_written"  # read back from a file the test wrote itself
WRITTEN_FROM_PROGRAM = "written_from_program"  # ...and the test wrote it from program output
GOLDEN = "golden"  # an expected-output file, or a large expected literal
GOLDEN_CODEC = "golden_codec"  # a golden file a codec, compressor or cipher produced
GOLDEN_RENDER = "golden_render"  # a golden file a renderer produced (image, pdf, svg)
DOC = "doc"  # the test's own docstring
HASH = "hash"  # a digest the test computes
HASH_PROGRAM = "hash_program"  # a digest the test computes over program output
CODEC_OUTPUT = "codec_output"  # program output a cipher, codec or compressor produced
DECODED = "decoded"  # passed through a standard-library roundtrip module
LIT_DIGEST = "lit_digest"  # literal holding a hex digest
LIT_B64 = "lit_base64"  # literal holding long base64
LIT_CODEC = "lit_codec"  # bytes literal of compressed or encoded data
LIT_IMAGE = "lit_image"  # bytes literal of an image or document
UNKNOWN = "unknown"

RECALL_LITERALS = frozenset({LIT_DIGEST, LIT_B64, LIT_CODEC})

PROGRAM_ATTRS = frozenset(
    {
        "stdout",
        "stderr",
        "returncode",
        "exit_code",
        "exitcode",
        "output",
        "stdout_bytes",
        "stderr_bytes",
    }
)
RETURNCODE_ATTRS = frozenset({"returncode", "exit_code", "exitcode"})

CODEC_EXTENSIONS = frozenset(
    {
        "gz",
        "gzip",
        "bz2",
        "xz",
        "lzma",
        "zst",
        "zstd",
        "lz4",
        "lzo",
        "br",
        "z",
        "7z",
        "rar",
        "enc",
        "gpg",
        "pgp",
        "aes",
        "sig",
        "der",
        "mp3",
        "ogg",
        "opus",
        "flac",
        "aac",
        "m4a",
        "mp4",
        "webm",
        "mkv",
        "avi",
        "qoi",
    }
)
RENDER_EXTENSIONS = frozenset(
    {
        "png",
        "jpg",
        "jpeg",
        "gif",
        "bmp",
        "ppm",
        "pgm",
        "pbm",
        "pnm",
        "svg",
        "pdf",
        "ps",
        "eps",
        "tif",
        "tiff",
        "webp",
        "ico",
        "dvi",
    }
)
GOLDEN_HINTS = (
    "golden",
    "expected",
    "snapshot",
    "reference",
    "fixture",
    "testdata",
    "__file__",
    "want",
)

_HEX_RUN = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{32,}(?![0-9A-Za-z])")
_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{40,}={0,2}")
_CODEC_MAGIC = (
    b"\x1f\x8b",  # gzip
    b"BZh",  # bzip2
    b"\xfd7zXZ\x00",  # xz
    b"\x5d\x00\x00",  # lzma alone
    b"\x28\xb5\x2f\xfd",  # zstd
    b"\x04\x22\x4d\x18",  # lz4 frame
    b"x\x9c",  # zlib
    b"x\xda",
    b"x\x01",
    b"7z\xbc\xaf",
    b"\x89LZO",
)
_IMAGE_MAGIC = (
    b"\x89PNG",
    b"GIF87a",
    b"GIF89a",
    b"\xff\xd8\xff",
    b"%PDF",
    b"%!PS",
    b"II*\x00",
    b"MM\x00*",
    b"RIFF",
    b"P6\n",
    b"P5\n",
    b"<svg",
)


def _is_digest(text: str) -> bool:
    for match in _HEX_RUN.finditer(text):
        run = match.group(0)
        if any(c.isdigit() for c in run) and any(c.isalpha() for c in run):
            return True
    return False


def _is_base64(text: str) -> bool:
    for match in _B64_RUN.finditer(text):
        run = match.group(0)
        if any(c.isdigit() for c in run) and any(c.isupper() for c in run) and any(c.islower() for c in run):
            return True
    return False


def _binary_fraction(data: bytes) -> float:
    printable = sum(1 for b in data if 32 <= b < 127 or b in (9, 10, 13))
    return 1 - printable / len(data) if data else 0.0


def literal_tags(value: str | bytes, golden_min: int) -> set[str]:
    """Tags a literal carries: digest, base64, codec or image bytes, or golden by size."""
    tags = {LITERAL}
    if len(value) >= golden_min:
        tags.add(GOLDEN)
    if isinstance(value, bytes):
        if value.startswith(_IMAGE_MAGIC):
            tags.add(LIT_IMAGE)
        elif value.startswith(_CODEC_MAGIC) or (len(value) >= 16 and _binary_fraction(value) > 0.3):
            tags.add(LIT_CODEC)
        text = value.decode("latin-1")
    else:
        text = value
        if text.lstrip().startswith("<svg"):
            tags.add(LIT_IMAGE)
    if _is_digest(text):
        tags.add(LIT_DIGEST)
    elif _is_base64(text):
        tags.add(LIT_B64)
    return tags


def extension_tags(path_key: str) -> set[str]:
    """GOLDEN_CODEC or GOLDEN_RENDER from the last file extension named in a path expression."""
    found = re.findall(r"\.([A-Za-z0-9]+)\"", path_key)
    if not found:
        return set()
    ext = found[-1].lower()
    if ext in CODEC_EXTENSIONS:
        return {GOLDEN_CODEC}
    if ext in RENDER_EXTENSIONS:
        return {GOLDEN_RENDER}
    return set()


# words of a run's arguments that ask for a cipher, codec or compressor's output
CODEC_WORDS = frozenset(
    {
        "encrypt",
        "encipher",
        "cipher",
        "crypt",
        "aes",
        "des",
        "3des",
        "blowfish",
        "twofish",
        "chacha",
        "chacha20",
        "salsa20",
        "rc4",
        "xtea",
        "camellia",
        "serpent",
        "compress",
        "deflate",
        "gzip",
        "bzip2",
        "xz",
        "lzma",
        "lzip",
        "lz4",
        "lzo",
        "zstd",
        "brotli",
        "huffman",
        "lzw",
        "encode",
        "sign",
        "hmac",
    }
)


def names_codec(words: list[str]) -> bool:
    """Whether a run's argument words ask for a cipher, codec or compressor (`--encrypt`, `-z
    gzip`, `compress`): its output comes from that algorithm."""
    return any(part in CODEC_WORDS for word in words for part in re.split(r"[^a-z0-9]+", word.lower()))


def is_golden_path(path_key: str) -> bool:
    """Whether a path expression names an expected-output file shipped with the suite."""
    lowered = path_key.lower()
    return any(hint in lowered for hint in GOLDEN_HINTS)
