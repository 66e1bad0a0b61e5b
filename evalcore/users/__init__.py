"""The simulated user of multi-turn cases: a profile (goal, facts, persona, turn limit), a scripted `sim/user`, any litellm model."""
