"""The judge, the simulated user and the sampling model go where the models go (`--api-base`), or the judge to its own."""

from __future__ import annotations

from evalcore.cli import build_parser
from evalcore.commands.options import judge_spec_from_args as judge_spec
from evalcore.models.adapter import IN_PROCESS
from evalcore.users.profile import UserProfile
from evalcore.users.simulated import SimulatedUser

LOCAL = "http://127.0.0.1:8001/v1"


def _args(*extra: str):  # type: ignore[no-untyped-def]
    return build_parser().parse_args(["run", "--models", "hosted_vllm/m", "--api-base", LOCAL, *extra])


def test_a_judge_uses_the_models_endpoint_unless_it_has_its_own() -> None:
    assert judge_spec(_args()) is None
    assert judge_spec(_args("--judge", "hosted_vllm/judge")).api_base == LOCAL  # type: ignore[union-attr]
    own = judge_spec(_args("--judge", "hosted_vllm/judge", "--judge-api-base", "http://127.0.0.1:9000/v1"))
    assert own is not None and own.api_base == "http://127.0.0.1:9000/v1"
    sim = judge_spec(_args("--judge", "sim/judge"))
    assert sim is not None and sim.api_base is None


def test_a_real_simulated_user_uses_the_models_endpoint_and_sim_user_none() -> None:
    real = SimulatedUser(UserProfile(goal="g", model="hosted_vllm/user"), IN_PROCESS, api_base=LOCAL)
    scripted = SimulatedUser(UserProfile(goal="g"), IN_PROCESS, api_base=LOCAL)
    assert real.spec.api_base == LOCAL and scripted.spec.api_base is None
