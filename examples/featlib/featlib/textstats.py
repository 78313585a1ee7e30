"""Word statistics of a text: counts, frequencies, reading time, n-grams."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from featlib.util import words

WORDS_PER_MINUTE = 200


def _strip_stop(tokens: list[str], stop_words: set[str]) -> list[str]:
    """`tokens` without the stop words."""
    return [t for t in tokens if t not in stop_words]


def _ngrams(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    """Consecutive runs of `n` tokens."""
    if n < 1:
        raise ValueError("n must be positive")
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def _rank(counts: Counter[str]) -> list[tuple[str, int]]:
    """Entries by descending count, ties broken alphabetically."""
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


@dataclass
class TextStats:
    """Statistics of one text, computed from its words."""

    text: str
    stop_words: set[str] = field(default_factory=set)

    def tokens(self) -> list[str]:
        """The text's words without stop words."""
        return _strip_stop(words(self.text), self.stop_words)

    def word_count(self) -> int:
        """How many words (stop words excluded)."""
        return len(self.tokens())

    def unique_words(self) -> int:
        """How many distinct words."""
        return len(set(self.tokens()))

    def top_words(self, k: int = 3) -> list[tuple[str, int]]:
        """The `k` most frequent words with their counts, most frequent first, ties
        alphabetically."""
        if k < 0:
            raise ValueError("k must not be negative")
        return _rank(Counter(self.tokens()))[:k]

    def ngrams(self, n: int = 2) -> list[tuple[str, ...]]:
        """The text's n-grams, in order."""
        return _ngrams(self.tokens(), n)

    def top_ngrams(self, n: int = 2, k: int = 3) -> list[tuple[str, int]]:
        """The `k` most frequent n-grams, joined with spaces, with their counts."""
        joined = Counter(" ".join(g) for g in self.ngrams(n))
        return _rank(joined)[:k]

    def reading_minutes(self, wpm: int = WORDS_PER_MINUTE) -> int:
        """Minutes to read the text at `wpm` words per minute, rounded up (0 for no words)."""
        if wpm <= 0:
            raise ValueError("wpm must be positive")
        count = len(words(self.text))
        return -(-count // wpm)

    def lexical_density(self) -> float:
        """Distinct words / words, rounded to 3 places (0.0 for an empty text)."""
        count = self.word_count()
        if count == 0:
            return 0.0
        return round(self.unique_words() / count, 3)


def summarize(text: str, stop_words: set[str] | None = None, k: int = 3) -> dict[str, object]:
    """A dictionary of the text's statistics: words, unique, top words, reading minutes."""
    stats = TextStats(text, stop_words or set())
    return {
        "words": stats.word_count(),
        "unique": stats.unique_words(),
        "top": stats.top_words(k),
        "minutes": stats.reading_minutes(),
        "density": stats.lexical_density(),
    }
