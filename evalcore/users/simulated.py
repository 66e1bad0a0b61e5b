"""Orchestration: the simulated user of one attempt, played by `sim/user` (scripted) or any litellm model.

It answers the server's elicitations (form and URL mode) and the assistant's
follow-up questions from its profile only. A model-played user gets the
published prompt (`evalcore.users.prompt`); what it submits is checked against
the form's schema, and an answer that does not fit is sent as a decline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.errors import ModelError
from evalcore.mcp.mrtr import InputAnswerError
from evalcore.models.adapter import ModelCaller
from evalcore.models.tool_format import to_openai_tools
from evalcore.models.types import ModelSpec
from evalcore.records import InputAnswer, InputRequest
from evalcore.users import prompt, scripted
from evalcore.users.profile import UserProfile

_NO_TOOLS = to_openai_tools([])


class SimulatedUser:
    """One attempt's user: `elicit` answers an `elicitation/create`, `follow_up` writes the next chat message."""

    def __init__(self, profile: UserProfile, models: ModelCaller, *, context: Mapping[str, Any] | None = None, api_base: str | None = None) -> None:
        self.profile = profile
        self.models = models
        self.context = dict(context or {})
        # A real user model goes where the models go (`--api-base`); a sim/ user needs no endpoint.
        self.spec = ModelSpec(profile.model, api_base=None if profile.model.startswith("sim/") else api_base)

    @property
    def name(self) -> str:
        return self.profile.model

    async def elicit(self, request: InputRequest) -> InputAnswer:
        params = request.params
        if self.profile.simulated_by_script:
            if request.elicitation_mode == "url":
                answer = scripted.answer_url(self.profile, str(params.get("message", "")), str(params.get("url", "")))
            else:
                schema = params.get("requestedSchema")
                answer = scripted.answer_form(self.profile, str(params.get("message", "")), schema if isinstance(schema, Mapping) else {})
            return InputAnswer(answer.as_result(), "user", self.name, answer.note)
        try:
            turn = await self.models.complete(self.spec, prompt.elicitation_messages(self.profile, params), *_NO_TOOLS, context=self.context)
        except ModelError as exc:
            raise InputAnswerError(f"the simulated user ({self.name}) failed: {exc}") from exc
        result = prompt.parse_elicit_reply(turn.text)
        if result is None:
            return InputAnswer({"action": "decline"}, "user", self.name, "the user model's reply was not an elicitation answer; sent as a decline")
        schema = params.get("requestedSchema")
        if result.get("action") == "accept" and request.elicitation_mode == "form" and isinstance(schema, dict):
            from evalcore.mcp.protocol.schemas import instance_errors  # jsonschema: imported by the first form answer, not by every run

            problems = instance_errors(result.get("content", {}), schema)
            if problems:
                return InputAnswer({"action": "decline"}, "user", self.name, f"the user model's answer did not fit the form ({problems[0]}); sent as a decline")
        return InputAnswer(result, "user", self.name)

    async def follow_up(self, conversation: Sequence[tuple[str, str]]) -> str | None:
        """The user's next message after the assistant's last reply (`conversation` is (speaker, text) pairs); None: done."""
        if self.profile.simulated_by_script:
            last = next((text for speaker, text in reversed(conversation) if speaker == "assistant"), None)
            return scripted.follow_up(self.profile, last)
        turn = await self.models.complete(self.spec, prompt.conversation_messages(self.profile, conversation), *_NO_TOOLS, context=self.context)
        return prompt.parse_user_message(turn.text)
