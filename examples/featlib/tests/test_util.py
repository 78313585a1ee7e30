import pytest

from featlib.util import clamp, normalize, words


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Crème Brûlée", "creme brulee"), ("ÀÉÎ", "aei"), ("plain", "plain")],
)
def test_normalize(text, expected):
    assert normalize(text) == expected


def test_words_splits_and_lowers():
    assert words("Hello, World! It's 2024.") == ["hello", "world", "it's", "2024"]


def test_words_empty():
    assert words("  ...  ") == []


@pytest.mark.parametrize(("value", "expected"), [(-5, 0), (5, 5), (50, 10)])
def test_clamp(value, expected):
    assert clamp(value, 0, 10) == expected


def test_clamp_rejects_bad_range():
    with pytest.raises(ValueError):
        clamp(1, 5, 0)
