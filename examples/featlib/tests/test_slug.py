import pytest

from featlib.slug import slugify, unique_slug


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Hello World", "hello-world"),
        ("  Crème Brûlée  recipe ", "creme-brulee-recipe"),
        ("It's a Test!", "it's-a-test"),
        ("", ""),
        ("!!!", ""),
    ],
)
def test_slugify(title, expected):
    assert slugify(title) == expected


def test_slugify_separator():
    assert slugify("one two three", separator="_") == "one_two_three"


def test_slugify_cuts_at_word_boundary():
    assert slugify("alpha beta gamma delta", max_length=12) == "alpha-beta"


def test_slugify_cuts_a_long_word():
    assert slugify("supercalifragilistic", max_length=5) == "super"


def test_unique_slug_free():
    assert unique_slug("Hello World", set()) == "hello-world"


def test_unique_slug_taken():
    assert unique_slug("Hello World", {"hello-world", "hello-world-2"}) == "hello-world-3"


def test_unique_slug_empty_title():
    assert unique_slug("???", {"item"}) == "item-2"
