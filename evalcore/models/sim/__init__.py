"""Models, offline provider: the `sim/` models (lexical baseline, scripted replay, word-overlap judge) and their HTTP endpoint.

The policies (`lexical`, `script`, `judge_policy`, `arguments`) are pure and do
not import litellm; `provider` registers them with litellm and `server` serves
them over HTTP.
"""
