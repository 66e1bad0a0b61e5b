"""Orchestration: who answers a server's input requests during one attempt.

`elicitation/create` goes to the simulated user, `sampling/createMessage` to
the sampling model (the model under test unless the case names another), and
`roots/list` is answered with the case's roots. Each answer says who gave it,
so the transcript can show every round in order.

The sampling model's turns are kept (`sampling_turns`): what it took, in time,
tokens and cost, is the attempt's (the server asked the client's model to work
for it). The simulated user's model and the judge are the evaluation's own
apparatus and are not counted in the attempt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.errors import ModelError
from evalcore.mcp.mrtr import InputAnswerError
from evalcore.models.adapter import ModelCaller
from evalcore.models.tool_format import to_openai_tools
from evalcore.models.types import ModelSpec, ModelTurn
from evalcore.records import InputAnswer, InputRequest
from evalcore.users.simulated import SimulatedUser

_NO_TOOLS = to_openai_tools([])


class AttemptResponder:
    """The `InputResponder` of one attempt."""

    def __init__(
        self,
        *,
        user: SimulatedUser,
        sampling_model: ModelSpec,
        models: ModelCaller,
        roots: Sequence[Mapping[str, str]] = (),
        context: Mapping[str, Any] | None = None,
    ) -> None:
        self.user = user
        self.sampling_model = sampling_model
        self.models = models
        self.roots = [dict(root) for root in roots]
        self.context = dict(context or {})
        self.sampling_turns: list[ModelTurn] = []

    async def answer(self, request: InputRequest) -> InputAnswer:
        if request.method == "elicitation/create":
            return await self.user.elicit(request)
        if request.method == "roots/list":
            return InputAnswer({"roots": self.roots}, "case", "case roots")
        return await self._sample(request.params)

    async def _sample(self, params: Mapping[str, Any]) -> InputAnswer:
        if params.get("tools") or params.get("toolChoice"):
            raise InputAnswerError("sampling with tools, but the client did not declare sampling.tools")
        try:
            turn = await self.models.complete(self.sampling_model, sampling_chat(params), *_NO_TOOLS, context=self.context)
        except ModelError as exc:
            raise InputAnswerError(f"the sampling model ({self.sampling_model.name}) failed: {exc}") from exc
        self.sampling_turns.append(turn)
        result = {
            "role": "assistant",
            "content": {"type": "text", "text": turn.text or ""},
            "model": turn.model_version or self.sampling_model.name,
            "stopReason": "endTurn" if turn.finish_reason in (None, "stop") else str(turn.finish_reason),
        }
        return InputAnswer(result, "model", self.sampling_model.name)


def sampling_chat(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A `sampling/createMessage` request as chat messages (text parts only; other parts are named, not sent)."""
    chat: list[dict[str, Any]] = []
    if isinstance(params.get("systemPrompt"), str) and params["systemPrompt"]:
        chat.append({"role": "system", "content": params["systemPrompt"]})
    for message in params.get("messages") or []:
        if not isinstance(message, Mapping):
            continue
        blocks = message.get("content")
        parts = blocks if isinstance(blocks, list) else [blocks]
        text = "\n".join(
            str(part.get("text", "")) if part.get("type") == "text" else f"[{part.get('type')} content]" for part in parts if isinstance(part, Mapping)
        )
        chat.append({"role": "assistant" if message.get("role") == "assistant" else "user", "content": text})
    return chat
