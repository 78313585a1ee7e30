import pytest

from featlib.textstats import TextStats, summarize

STOP = {"the", "a", "and", "to"}


def test_word_count(sample_text):
    assert TextStats(sample_text).word_count() == 14


def test_word_count_without_stop_words(sample_text):
    assert TextStats(sample_text, STOP).word_count() == 7


def test_unique_words(sample_text):
    assert TextStats(sample_text, STOP).unique_words() == 4


def test_top_words(sample_text):
    assert TextStats(sample_text, STOP).top_words(2) == [("cat", 3), ("hat", 2)]


def test_top_words_ties_alphabetical():
    assert TextStats("b a c b a c").top_words(3) == [("a", 2), ("b", 2), ("c", 2)]


def test_top_words_negative():
    with pytest.raises(ValueError):
        TextStats("x").top_words(-1)


def test_ngrams():
    assert TextStats("one two three").ngrams(2) == [("one", "two"), ("two", "three")]


def test_ngrams_bad_n():
    with pytest.raises(ValueError):
        TextStats("one").ngrams(0)


def test_top_ngrams(sample_text):
    assert TextStats(sample_text, STOP).top_ngrams(2, 1) == [("cat hat", 1)]


@pytest.mark.parametrize(("count", "minutes"), [(0, 0), (1, 1), (200, 1), (201, 2)])
def test_reading_minutes(count, minutes):
    assert TextStats(" ".join(["word"] * count)).reading_minutes() == minutes


def test_reading_minutes_bad_rate():
    with pytest.raises(ValueError):
        TextStats("x").reading_minutes(0)


def test_lexical_density(sample_text):
    assert TextStats(sample_text, STOP).lexical_density() == 0.571


def test_lexical_density_empty():
    assert TextStats("").lexical_density() == 0.0


def test_summarize(sample_text):
    assert summarize(sample_text, STOP, k=1) == {
        "words": 7,
        "unique": 4,
        "top": [("cat", 3)],
        "minutes": 1,
        "density": 0.571,
    }
