"""The spaces PPO and A2C act in, checked before anything is built (no TensorFlow import:
the CLI refuses an environment cheaply)."""

from __future__ import annotations


def check_spaces(observation_space, action_space, env_id: str = "the environment",
                 agent: str = "ppo") -> None:  # fmt: skip
    """PPO (and A2C, ``agent``) take Discrete actions (a softmax policy), MultiDiscrete ones
    (one softmax per dimension) or a float Box (a diagonal Gaussian), with Box observations
    (vectors, or images ``[H, W, C]`` for the convolutional torso) or Discrete ones."""
    import numpy as np
    from gymnasium import spaces

    from rlkit.core.errors import UsageError
    from rlkit.core.spaces import observation_format

    if isinstance(action_space, spaces.Box):
        if not np.issubdtype(action_space.dtype, np.floating):
            raise UsageError(f"{agent}'s Gaussian policy needs float Box actions, but {env_id} "
                             f"has {action_space}")  # fmt: skip
    elif isinstance(action_space, spaces.MultiBinary):
        raise UsageError(
            f"{agent} takes Discrete, MultiDiscrete or Box actions, but {env_id} has "
            f"{action_space} (not built): MultiBinary(n) is MultiDiscrete([2] * n), so wrap "
            "the environment in a gymnasium ActionWrapper whose action_space is that"
        )
    elif not isinstance(action_space, spaces.Discrete | spaces.MultiDiscrete):
        raise UsageError(
            f"{agent} takes Discrete, MultiDiscrete or Box actions, but {env_id} has "
            f"{type(action_space).__name__} actions (not built): flatten them into one of "
            "those with a gymnasium ActionWrapper"
        )
    observation_format(observation_space, agent, images=True)


def check_a2c_spaces(observation_space, action_space, env_id: str = "the environment",
                     agent: str = "a2c") -> None:  # fmt: skip
    """A2C takes what PPO takes (:func:`check_spaces`), its messages naming a2c."""
    check_spaces(observation_space, action_space, env_id, agent)
