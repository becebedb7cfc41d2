"""Helpers the benchmark scripts share (run them from the repository root)."""

from __future__ import annotations


def parse_seeds(text: str) -> list[int]:
    """``"0-4"`` -> ``[0, 1, 2, 3, 4]``; ``"0,3,7"`` -> ``[0, 3, 7]``."""
    if "-" in text:
        first, last = text.split("-")
        return list(range(int(first), int(last) + 1))
    return [int(s) for s in text.split(",")]
