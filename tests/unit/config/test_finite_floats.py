"""No agent option takes inf or nan: each float key refuses them in one UsageError."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from rlkit.agents.registry import AGENTS
from rlkit.config.options import make_config
from rlkit.core.errors import UsageError

FLOAT_KEYS = [
    (name, f.name)
    for name, spec in sorted(AGENTS.items())
    for f in dataclasses.fields(spec.config_class)
    if typing.get_type_hints(spec.config_class)[f.name] is float
]


def test_every_agent_has_float_keys_to_check():
    assert {name for name, _ in FLOAT_KEYS} >= {"dqn", "c51", "rainbow", "ddpg", "reinforce"}
    assert ("c51", "v_min") in FLOAT_KEYS and ("rainbow", "v_max") in FLOAT_KEYS


@pytest.mark.parametrize("text", ["inf", "-inf", "nan"])
@pytest.mark.parametrize("agent, key", FLOAT_KEYS)
def test_non_finite_float_is_refused(agent, key, text):
    config_class = AGENTS[agent].config_class
    with pytest.raises(UsageError, match=f"bad value .* for {key}: must be a finite number"):
        make_config(config_class, {key: text})
