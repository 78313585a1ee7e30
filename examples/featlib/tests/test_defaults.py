import pytest

from featlib.defaults import build_defaults


def test_defaults_width():
    assert build_defaults(40)["width"] == 40


def test_defaults_slug_length():
    assert build_defaults(80)["max_slug"] == 40


def test_defaults_stop_words_sorted():
    words = build_defaults()["stop_words"]
    assert words == sorted(words)


def test_defaults_too_narrow():
    with pytest.raises(ValueError):
        build_defaults(10)
