"""Pure logic: does one argument the model passed match the golden case's expectation (Layer 1 scoring).

Three modes, chosen per argument in the golden set (`arg_match`):

- `exact`: equal as JSON values. Numbers compare by value (3 == 3.0), booleans
  only equal booleans, strings compare exactly (case matters: ids are
  case-sensitive), lists and objects compare structurally with the same rules.
- `semantic`: free text compared offline and explainably (no embeddings, no
  model). A match when every number/id token of the expected text appears in
  the actual text, and either the whole expected text appears in it (models add
  words) or `text_similarity` >= SEMANTIC_THRESHOLD. Non-strings fall back to `exact`.
- `ignore`: always matched; the golden case only cares that the tool was chosen.

A missing argument (pass `MISSING` as `actual`) fails `exact` and `semantic`.
"""

from __future__ import annotations

import json
import os
import unicodedata
from dataclasses import dataclass
from typing import Any, Final

from evalcore.golden.model import ArgMatch

# Calibrated on SEMANTIC_PAIRS in tests/test_scoring.py: paraphrases of ticket
# subjects, search queries and email subjects score 0.60-1.00; texts that share one
# of two meaning words ("cancel subscription" / "upgrade subscription") score 0.50
# and must fail, so the line sits strictly between.
SEMANTIC_THRESHOLD: Final = 0.55

# Function words carry no meaning of their own; scoring them lets two unrelated
# sentences overlap on "the", "to", "my". Negations ("not", "no") stay: they do.
_STOPWORD_TEXT = """
    a an the and or but if of to in on at by for with from into about as is are was were be been being
    do does did i me my we our you your he she it its they them their this that these those there here
    what which who whom how when where why please can could would should will shall may might must
    so than then too very just also any some all
"""
STOPWORDS: Final = frozenset(_STOPWORD_TEXT.split())


class _Missing:
    """The model did not pass the argument at all (distinct from passing null)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


@dataclass(frozen=True)
class ArgumentMatch:
    matched: bool
    similarity: float | None  # set by semantic text comparison only
    reason: str  # a few words for the drill-down: "equal", '"Lyon" != "Paris"', "similarity 0.31 < 0.50"


def match_argument(expected: Any, actual: Any, mode: ArgMatch) -> ArgumentMatch:
    """Judge one argument under its mode; `actual` is `MISSING` when the model left it out."""
    if mode not in ("exact", "semantic", "ignore"):
        raise ValueError(f"unknown argument match mode {mode!r} (expected exact, semantic or ignore)")
    if mode == "ignore":
        return ArgumentMatch(True, None, "ignored")
    if actual is MISSING:
        return ArgumentMatch(False, None, "missing")
    if mode == "semantic" and isinstance(expected, str) and isinstance(actual, str):
        return _match_text(expected, actual)
    if json_equal(expected, actual):
        return ArgumentMatch(True, None, "equal")
    return ArgumentMatch(False, None, f"{_show(actual)} != {_show(expected)}")


def json_equal(expected: Any, actual: Any) -> bool:
    """Equality of JSON values: 3 == 3.0, but True != 1 and "3" != 3; containers compared element-wise."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return expected == actual
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        return len(expected) == len(actual) and all(json_equal(e, a) for e, a in zip(expected, actual, strict=True))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(json_equal(expected[key], actual[key]) for key in expected)
    return type(expected) is type(actual) and expected == actual


def normalise_text(text: str) -> str:
    """Unicode NFKC, casefold, punctuation and symbols to spaces, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    spaced = "".join(" " if unicodedata.category(char)[0] in "PSZC" else char for char in folded)
    return " ".join(spaced.split())


def content_words(normalised: str) -> frozenset[str]:
    """The tokens that carry meaning; all tokens when the text is nothing but stopwords."""
    tokens = frozenset(normalised.split())
    return (tokens - STOPWORDS) or tokens


def same_word(left: str, right: str) -> bool:
    """Equal, or the same word with another ending: alphabetic, sharing a prefix of at least
    5 letters that covers 3/4 of the shorter word (invoice/invoices, delay/delayed,
    policy/policies, subscribe/subscription). Tokens with digits must be equal: ids differ by one digit.
    """
    if left == right:
        return True
    if not (left.isalpha() and right.isalpha()):
        return False
    prefix = len(os.path.commonprefix([left, right]))
    return prefix >= 5 and prefix >= 0.75 * min(len(left), len(right))


@dataclass(frozen=True)
class WordOverlap:
    expected_words: int
    expected_found: int  # expected content words with a `same_word` in the actual text
    actual_words: int
    actual_found: int  # actual content words with a `same_word` in the expected text

    @property
    def f1(self) -> float:
        """Harmonic mean of recall (expected_found/expected_words) and precision (actual_found/actual_words)."""
        if not self.expected_found or not self.actual_found:
            return 0.0
        recall = self.expected_found / self.expected_words
        precision = self.actual_found / self.actual_words
        return 2 * precision * recall / (precision + recall)


def word_overlap(expected: str, actual: str) -> WordOverlap:
    words_expected = content_words(normalise_text(expected))
    words_actual = content_words(normalise_text(actual))
    return WordOverlap(
        expected_words=len(words_expected),
        expected_found=sum(any(same_word(word, other) for other in words_actual) for word in words_expected),
        actual_words=len(words_actual),
        actual_found=sum(any(same_word(word, other) for other in words_expected) for word in words_actual),
    )


def text_similarity(expected: str, actual: str) -> float:
    """Similarity of two texts in [0, 1]: token-set F1 over content words.

        R = |{w in W_e : some v in W_a with w ~ v}| / |W_e|        (recall of the expected words)
        P = |{v in W_a : some w in W_e with w ~ v}| / |W_a|        (precision of the actual words)
        similarity = F1 = 2·P·R / (P + R)

    where W_x are the content words of `normalise_text(x)` (stopwords removed) and
    `~` is `same_word` (equal, or the same stem by a shared prefix). This is the
    token-overlap F1 SQuAD uses to score free-text answers (Rajpurkar et al. 2016,
    "SQuAD: 100,000+ Questions for Machine Comprehension of Text", EMNLP), with
    sets instead of bags and a crude stem match. It ignores word order
    ("password reset" / "reset my password" = 1.0) and knows no synonyms
    ("team sync" / "team meeting" = 0.5, a miss at the threshold). A character
    measure such as difflib's ratio was tried and dropped: one long shared word
    carried different requests over the line ("cancel subscription" /
    "upgrade subscription" scored 0.63 as the mean of F1 and ratio).
    """
    normal_expected, normal_actual = normalise_text(expected), normalise_text(actual)
    if not normal_expected and not normal_actual:
        return 1.0
    return word_overlap(expected, actual).f1


def _match_text(expected: str, actual: str) -> ArgumentMatch:
    normal_expected, normal_actual = normalise_text(expected), normalise_text(actual)
    similarity = text_similarity(expected, actual)
    # Models paraphrase words but must not change numbers: "invoice INV-2026-0003"
    # for "invoice INV-2026-0002" is a different request, however similar the text.
    actual_tokens = set(normal_actual.split())
    lost_numbers = [token for token in normal_expected.split() if any(char.isdigit() for char in token) and token not in actual_tokens]
    if lost_numbers:
        return ArgumentMatch(False, similarity, f"number {lost_numbers[0]} missing: {_show(actual)} vs {_show(expected)}")
    # Models add words ("refund" -> "refund policy for annual plans"); the expected
    # text intact inside the actual one, on word boundaries, is a match whatever the score.
    if normal_expected and f" {normal_expected} " in f" {normal_actual} ":
        return ArgumentMatch(True, similarity, "expected text contained")
    overlap = word_overlap(expected, actual)
    found = f"{overlap.expected_found}/{overlap.expected_words} expected words found"
    if similarity >= SEMANTIC_THRESHOLD:
        return ArgumentMatch(True, similarity, f"similarity {similarity:.2f} >= {SEMANTIC_THRESHOLD:.2f} ({found})")
    return ArgumentMatch(False, similarity, f"similarity {similarity:.2f} < {SEMANTIC_THRESHOLD:.2f} ({found}): {_show(actual)} vs {_show(expected)}")


def _show(value: Any, limit: int = 60) -> str:
    """A JSON rendering short enough for a one-line reason."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
