"""Pure logic: the word handling the sim models share (tokenise, lower-case, light stemming, stop-words).

Tokens are runs of ASCII letters and digits; tool names are split on `_`, `-`,
`.`, `/` and camelCase first. Digit-only tokens are dropped from relevance
scoring (they are argument values, not topic words). The stemmer is a
deliberately small suffix stripper (plural `-ies`/`-es`/`-s`, `-ing`, `-ed`,
then a final `-e`), applied the same way to both sides, so "invoices" and
"invoice" or "scheduled" and "schedule" meet.
"""

from __future__ import annotations

import re

_STOP_WORD_TEXT = """
    a about above after again against all am an and any are as at be because been before being below between both but by
    can could did do does doing down during each few for from further had has have having he her here hers herself him
    himself his how i if in into is it its itself just let me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their theirs them themselves then
    there these they this those through to too under until up very was we were what when where which while who whom why
    will with would you your yours yourself yourselves s t d ll m re ve e g eg ie etc
    please pls thanks thank hi hello hey ok okay yes right now today tell know like want need get got give show find
    also maybe really just use using one two
"""
STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())
_TOKEN = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Argument values, not topic words: emails, URLs, ISO dates and times, clock times.
_VALUES = re.compile(r"\S+@\S+|https?://\S+|\b\d{4}-\d{2}-\d{2}(?:T[\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?|\b\d{1,2}:\d{2}\b")


def split_identifier(name: str) -> str:
    """`getWeather` / `get_weather` / `billing.search-invoices` -> words separated by spaces."""
    return _CAMEL.sub(" ", re.sub(r"[_\-./:]+", " ", name))


def stem(word: str) -> str:
    word = word.lower()
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return word


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens, stop-words and digit-only tokens kept."""
    return [token.lower() for token in _TOKEN.findall(text)]


def content_terms(text: str) -> list[str]:
    """Stemmed content words in order: no stop-words, no digit-only tokens."""
    return [stem(token) for token in tokens(text) if token not in STOP_WORDS and not token.isdigit()]


def without_values(text: str) -> str:
    """`text` without emails, URLs, dates and times, which say what to pass, not which tool to pick."""
    return _VALUES.sub(" ", text)
