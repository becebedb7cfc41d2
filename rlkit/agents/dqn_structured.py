"""DQN's acting rule for ``Dict`` and ``Tuple`` observations (bound once, at construction).

The same epsilon-greedy rule as :meth:`rlkit.agents.dqn.DQN.act`, reading a structured
observation: one observation is a dict (or tuple) of arrays in each part's own shape, a
batch the same with a leading axis ``[N, ...]`` on every part (a vector env's). The
network runs only for greedy actions, through one compiled call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rlkit.core.errors import UsageError
from rlkit.core.structure import batch_size, describe, is_single

if TYPE_CHECKING:
    from rlkit.agents.dqn import DQN


def refuse_builtin_network(agent: DQN) -> None:
    """UsageError: rlkit's own networks take vectors, images or one-hot observations."""
    fmt = agent.obs_format
    raise UsageError(
        f"dqn's built-in networks cannot take a {describe(fmt.kind, fmt.parts)} observation: "
        "pass a network of your own that takes it, DQN(..., q_network=build) in Python or "
        "--set q_network=module:function on the command line"
    )


def act(agent: DQN, obs, explore: bool = True):
    """Epsilon-greedy action for one structured observation (an int) or a batch (``[N]``
    ints); with ``explore`` False, greedy or ``eval_epsilon``-greedy as DQN evaluates."""
    x = agent.encode(obs)
    if not explore and agent.config.eval_epsilon > 0:
        return epsilon_greedy(agent, x, agent.config.eval_epsilon, agent.eval_rng)
    if not explore:
        q = agent._policy(x)
        single = is_single(agent.obs_format.parts, x)
        return (int(np.argmax(q)) if single else np.argmax(q, axis=-1)) + agent._action_start
    return epsilon_greedy(agent, x, agent.epsilon, agent.rng)


def epsilon_greedy(agent: DQN, x, epsilon: float, rng: np.random.Generator):
    """As :meth:`DQN._epsilon_greedy`, for an encoded structured observation or batch."""
    parts, start = agent.obs_format.parts, agent._action_start
    if is_single(parts, x):
        if rng.random() < epsilon:
            return int(rng.integers(agent.num_actions)) + start
        return int(np.argmax(agent._policy(x))) + start
    n = batch_size(parts, x)
    random = rng.random(n) < epsilon
    actions = rng.integers(agent.num_actions, size=n)
    if not random.all():
        actions = np.where(random, actions, np.argmax(agent._policy(x), axis=-1))
    return actions + start
