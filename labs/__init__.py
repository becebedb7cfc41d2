"""Investigations that answered a question once (Dopamine keeps its own the same way).

Not part of the product: their findings are in docs/; labs/README.md lists each with the
question it answered and where the answer is written. Run from the repository root as a
module, e.g. ``python -m labs.ale_versions``.
"""
