"""Pure logic: does one argument the model passed match the golden case's expectation (Layer 1 scoring).

Three modes, chosen per argument in the golden set (`arg_match`):

- `exact`: equal as JSON values. Numbers compare by value (3 == 3.0), booleans
  only equal booleans, strings compare exactly (case matters: ids are
  case-sensitive), lists and objects compare structurally with the same rules.
- `semantic`: free text compared offline and explainably (no embeddings, no
  model). Never a match when the actual text negates the expected one or says
  its opposite (`polarity_conflict`: "not California" for "California", "closed"
  for "open", "unpaid" for "paid"). Otherwise a match when every number/id token
  of the expected text appears in the actual text, and either the whole expected
  text appears in it (models add words) or `text_similarity` >= SEMANTIC_THRESHOLD.
  Both texts are first normalised (`normalise_text`): Unicode NFKC, case,
  punctuation, thousands separators, "3.0" as "3", number words up to twenty and
  the tens as digits. Non-strings fall back to `exact`.
- `ignore`: always matched; the golden case only cares that the tool was chosen.

An expected value may be a rule (`evalcore.golden.model.argument_rule`): any of
`one_of`'s values matches (each under the argument's mode), and an `optional`
argument may be absent. A missing argument (pass `MISSING` as `actual`) fails
`exact` and `semantic` unless it is optional.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Final

from evalcore.golden.model import ArgMatch, argument_rule

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

# Words that negate the words they govern, or give them negative polarity ("cannot download" = "download fails"). A
# negation governs the next NEGATION_SCOPE content words; the failure words ("fails", "failed") the ones before too.
# A word both texts hold must be negated in both or in neither: "not California" never matches "California", while
# "password reset email never arrives" still matches "password reset" (the "never" governs "arrives", not them).
NEGATION_SCOPE: Final = 3
_FAILURE_WORDS: Final = frozenset({"fail", "fails", "failed", "failing", "failure"})
NEGATIONS: Final = frozenset(
    [
        "not",
        "no",
        "never",
        "non",
        "without",
        "except",
        "excluding",
        "exclude",
        "excludes",
        "nor",
        "neither",
        "none",
        "nothing",
        "nobody",
        "nowhere",
        "cannot",
        "unable",
        "fail",
        "fails",
        "failed",
        "failing",
        "failure",
        "anti",
    ]
)
# A negating prefix glued to a word of the other text: "unpaid" / "paid", "inactive" / "active", "disabled" / "abled".
_NEGATING_PREFIXES: Final = ("non", "un", "in", "im", "il", "ir", "dis")
_PREFIXED_MIN: Final = 4  # letters left after the prefix: "invoice" is not "in" + "voice" unless "voice" is there
# Opposites: a text that says one where the other says its opposite is a different request, however close.
_ANTONYM_TEXT = """
    open:closed open:close enable:disable enabled:disabled include:exclude increase:decrease true:false yes:no
    on:off start:stop start:end begin:end first:last min:max minimum:maximum ascending:descending asc:desc
    add:remove accept:reject approve:reject allow:deny allowed:denied buy:sell win:lose before:after above:below
    up:down high:low higher:lower highest:lowest more:less most:least import:export upload:download
    arrival:departure arrive:depart incoming:outgoing inbound:outbound public:private success:failure pass:fail
    positive:negative male:female north:south east:west left:right old:new oldest:newest earliest:latest
    past:future yesterday:tomorrow credit:debit deposit:withdraw encrypt:decrypt upgrade:downgrade
    visible:hidden show:hide hot:cold input:output send:receive sent:received buyer:seller debtor:creditor
    plaintiff:defendant victim:suspect victim:perpetrator winner:loser
"""
ANTONYMS: Final = frozenset(pair for left, right in (item.split(":") for item in _ANTONYM_TEXT.split()) for pair in ((left, right), (right, left)))
_NUMBER_WORDS: Final = {
    word: str(value)
    for value, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
} | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90", "hundred": "100"}
_THOUSANDS: Final = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_WHOLE_DECIMAL: Final = re.compile(r"(?<![\d.])(\d+)\.0+(?![\d.])")
_CONTRACTED_NOT: Final = re.compile(r"n['’]t\b")


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
    """Judge one argument under its mode; `actual` is `MISSING` when the model left it out.

    `expected` is a value or a rule (`{one_of: [...], optional: true}`): any alternative matching is a match, the
    first that does gives the reason; when none does, the reason is the only alternative's, or lists them all.
    """
    if mode not in ("exact", "semantic", "ignore"):
        raise ValueError(f"unknown argument match mode {mode!r} (expected exact, semantic or ignore)")
    if mode == "ignore":
        return ArgumentMatch(True, None, "ignored")
    rule = argument_rule(expected)
    if actual is MISSING:
        return ArgumentMatch(True, None, "absent (optional)") if rule.optional else ArgumentMatch(False, None, "missing")
    if not rule.alternatives:
        return ArgumentMatch(True, None, "any value (optional)")
    results = [_match_value(alternative, actual, mode) for alternative in rule.alternatives]
    best = next((result for result in results if result.matched), None)
    if best is not None:
        return best
    if len(results) == 1:
        return results[0]
    similarities = [result.similarity for result in results if result.similarity is not None]
    shown = ", ".join(_show(alternative, 30) for alternative in rule.alternatives)
    return ArgumentMatch(False, max(similarities) if similarities else None, f"{_show(actual)} is none of {shown}")


def _match_value(expected: Any, actual: Any, mode: ArgMatch) -> ArgumentMatch:
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
    """Unicode NFKC, casefold, "n't" as " not", thousands separators dropped ("1,000" -> "1000"), whole decimals as
    integers ("3.0" -> "3"), punctuation and symbols to spaces, whitespace collapsed, number words as digits
    ("ten" -> "10", up to twenty, and the tens). Not normalised: other decimals ("2.10" stays apart from "2.1"),
    leading zeros (ids: "0002"), compound number words ("twenty-one" is "20 1"), units, dates, abbreviations."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = _WHOLE_DECIMAL.sub(r"\1", _THOUSANDS.sub("", _CONTRACTED_NOT.sub(" not", folded)))
    spaced = "".join(" " if unicodedata.category(char)[0] in "PSZC" else char for char in folded)
    return " ".join(_NUMBER_WORDS.get(token, token) for token in spaced.split())


def polarity_conflict(expected: str, actual: str) -> str | None:
    """Why `actual` says the opposite of `expected`, or None: a word both hold that a negation governs in one only
    (see NEGATION_SCOPE), a negating prefix on a word of the other text, or a word whose antonym the other text holds
    (and not the word itself)."""
    tokens_expected, tokens_actual = normalise_text(expected).split(), normalise_text(actual).split()
    negated_expected, negated_actual = _polarity(tokens_expected), _polarity(tokens_actual)
    for word, negated in negated_expected.items():
        others = [flag for other, flag in negated_actual.items() if same_word(word, other)]
        if others and any(others) != negated:
            where = "the actual text" if any(others) else "the expected text"
            return f"negation: {_show(actual)} vs {_show(expected)} ({word!r} is negated in {where} only)"
    set_expected, set_actual = set(tokens_expected), set(tokens_actual)
    for mine, theirs in ((set_actual, set_expected), (set_expected, set_actual)):
        for word in mine - theirs:
            for prefix in _NEGATING_PREFIXES:
                stem = word.removeprefix(prefix)
                if stem != word and len(stem) >= _PREFIXED_MIN and stem in theirs:
                    return f"negation: {_show(actual)} vs {_show(expected)} ({word!r} negates {stem!r})"
    for word in set_actual - set_expected:
        for other in set_expected - set_actual:
            if (word, other) in ANTONYMS:
                return f"opposite: {_show(actual)} vs {_show(expected)} ({word!r} is the opposite of {other!r})"
    return None


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


def _polarity(tokens: list[str]) -> dict[str, bool]:
    """Each content word of a normalised text, and whether a negation governs it (anywhere it occurs)."""
    content = [index for index, token in enumerate(tokens) if token not in STOPWORDS and token not in NEGATIONS]
    governed: set[int] = set()
    for index, token in enumerate(tokens):
        if token in NEGATIONS:
            governed.update([position for position in content if position > index][:NEGATION_SCOPE])
            if token in _FAILURE_WORDS:
                governed.update([position for position in content if position < index][-NEGATION_SCOPE:])
    polarity: dict[str, bool] = {}
    for position in content:
        polarity[tokens[position]] = polarity.get(tokens[position], False) or position in governed
    return polarity


def _match_text(expected: str, actual: str) -> ArgumentMatch:
    normal_expected, normal_actual = normalise_text(expected), normalise_text(actual)
    similarity = text_similarity(expected, actual)
    # Checked before anything can match: one added "not" keeps the expected text contained and the similarity high.
    if conflict := polarity_conflict(expected, actual):
        return ArgumentMatch(False, similarity, conflict)
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
