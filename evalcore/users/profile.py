"""Pure data: who the simulated user of a case is (tau-bench / promptfoo conventions).

A case's `user:` gives the goal the user wants reached, the facts the user
knows (and may share when asked), the facts the user does not know, the facts
the user knows but never gives a server (`private`: passwords, keys), a
persona, and a turn limit on the user's follow-up messages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

SCRIPTED_USER: Final = "sim/user"
DEFAULT_MAX_TURNS: Final = 3
# Field names a user never types into a server's form: the spec reserves form mode for non-sensitive data.
_SECRET_NAME = re.compile(
    r"pass(word|phrase|code)?|secret|token|api[\s_-]?key|private[\s_-]?key|credential|ssn|social[\s_-]?security|cvv|cvc|pin\b|otp|card[\s_-]?number|iban",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class UserProfile:
    goal: str
    facts: Mapping[str, str] = field(default_factory=dict)  # name -> value the user knows and may share
    unknown: tuple[str, ...] = ()  # what the user does not know, and says so
    private: tuple[str, ...] = ()  # names of facts the user knows but never gives a server
    persona: str | None = None
    max_turns: int = DEFAULT_MAX_TURNS  # follow-up messages the user sends after the first prompt
    model: str = SCRIPTED_USER  # `sim/user` (scripted, offline) or any litellm model string

    @property
    def simulated_by_script(self) -> bool:
        return self.model == SCRIPTED_USER

    def is_private(self, name: str) -> bool:
        return normalise(name) in {normalise(p) for p in self.private} or looks_secret(name)

    def secret_values(self) -> tuple[str, ...]:
        """The values the user must never give away: facts marked private or named like a secret."""
        return tuple(value for name, value in self.facts.items() if self.is_private(name) and value)


def looks_secret(text: str) -> bool:
    return bool(_SECRET_NAME.search(text.replace("_", " ")))


def normalise(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def default_profile(prompt: str) -> UserProfile:
    """The user of a case without `user:`: wants what the prompt asks, knows nothing more, sends no follow-ups."""
    return UserProfile(goal=prompt, max_turns=0)
