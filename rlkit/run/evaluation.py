"""Evaluation: play whole episodes with ``agent.act(obs, explore=False)`` (greedy, or as the
agent evaluates: DQN's ``eval_epsilon``, PPO's ``deterministic_eval``), with the invalid-action
masks the environment gives to an agent that acts with them."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from rlkit.core.errors import UsageError


def evaluate(agent, env, episodes: int = 10, seed: int | None = None) -> tuple[float, float]:
    """Mean and standard deviation of the return of ``episodes`` greedy episodes.

    ``env``: an environment, or its id (made with :func:`rlkit.make_env`, for evaluation),
    or a gymnasium vector env that resets its sub-environments itself (``gym.make_vec``:
    the episodes are shared out among them, the agent acting on all at once).
    ``seed`` seeds the first reset (later resets continue the env's generator; a vector
    env's sub-environment ``i`` gets ``seed + i``).
    """
    env = env_of(env, training=False)
    check_fits(agent, env)
    if isinstance(episodes, bool) or not isinstance(episodes, int | np.integer) or episodes <= 0:
        raise UsageError(f"episodes must be a positive whole number, got {episodes!r}")
    returns = episode_returns(agent, env, episodes, seed)
    return float(np.mean(returns)), float(np.std(returns))


def env_of(env: Any, training: bool = True) -> Any:
    """``env`` itself, or the environment an id names (``"CartPole-v1"``), as SB3 takes;
    UsageError in one line for anything else (None, a number)."""
    if isinstance(env, str):
        from rlkit.envs.make import make_env

        return make_env(env, training=training)
    if not all(callable(getattr(env, name, None)) for name in ("reset", "step")):
        shown = repr(env) if len(repr(env)) <= 40 else f"a {type(env).__name__}"
        raise UsageError(
            f"env must be a gymnasium environment or its id (e.g. 'CartPole-v1'), got {shown}"
        )
    return env


def _shape_of(description: Any) -> Any:
    """A space's description without its bounds (an agent works on any Box of its shape
    and dtype)."""
    if isinstance(description, dict):
        return {k: _shape_of(v) for k, v in description.items() if k not in ("low", "high")}
    if isinstance(description, list):
        return [_shape_of(v) for v in description]
    return description


def check_fits(agent: Any, env: Any) -> None:
    """UsageError when ``env``'s spaces (a vector env's: one sub-environment's) are not the
    ones ``agent`` was made for (as Stable-Baselines3 checks): not a numpy reshape error
    deep in acting."""
    from rlkit.core.spaces import space_to_dict

    for kind in ("observation_space", "action_space"):
        mine = getattr(agent, kind, None)
        theirs = getattr(env, f"single_{kind}", getattr(env, kind, None))
        if mine is None or theirs is None:
            continue
        try:
            same = _shape_of(space_to_dict(mine)) == _shape_of(space_to_dict(theirs))
        except Exception:  # a space rlkit does not describe: leave it to the agent
            continue
        if not same:
            name = kind.replace("_", " ")
            raise UsageError(
                f"the agent was made for another {name} ({mine}) than this environment's "
                f"({theirs}); train and evaluate it on the environment it was made for"
            )


class EvaluationStopped(Exception):
    """A stop was requested (Ctrl-C) in the middle of an evaluation: it was abandoned."""


def episode_returns(
    agent,
    env,
    episodes: int,
    seed: int | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[float]:
    """Returns of ``episodes`` greedy episodes (``agent.act(obs, explore=False)``).

    ``should_stop``: asked before every step; when it says True the evaluation is abandoned
    (:class:`EvaluationStopped`), so that Ctrl-C stops a run after the current step even
    while it evaluates.
    """
    if episodes <= 0:
        raise ValueError(f"episodes must be > 0, got {episodes}")
    if is_vector_env(env):
        return _vector_episode_returns(agent, env, episodes, seed, should_stop)
    from rlkit.run.streams import call_env, check_observation

    act = _acting(agent, env, vector=False)
    returns = []
    obs, info = call_env(env, "reset", seed=seed)
    check_observation(env, obs, "reset()")
    for episode in range(episodes):
        total, done = 0.0, False
        while not done:
            if should_stop is not None and should_stop():
                raise EvaluationStopped
            step = call_env(env, "step", act(obs, info))
            obs, reward, terminated, truncated, info = step
            check_observation(env, obs, "step()")
            total += float(reward)
            done = terminated or truncated
        _check_return(env, total, episode)
        returns.append(total)
        obs, info = call_env(env, "reset")
        check_observation(env, obs, "reset()")
    return returns


def _acting(agent, env, vector: bool) -> Callable[[Any, Any], Any]:
    """``(obs, info) -> agent.act(obs, explore=False)``; for an agent acting with
    invalid-action masks (``action_mask_width``), with the masks the environment gives
    (:func:`rlkit.envs.action_masks.read_action_masks`)."""
    width = getattr(agent, "action_mask_width", 0)
    if not width:
        return lambda obs, info: agent.act(obs, explore=False)
    from rlkit.envs.action_masks import read_action_masks
    from rlkit.run.streams import env_name

    nvec = getattr(getattr(agent, "acting", None), "nvec", None)
    name = env_name(env)

    def act(obs, info):
        masks = read_action_masks(env, info, width, vector, name, nvec)
        return agent.act(obs, explore=False, action_masks=masks)

    return act


def _check_return(env: Any, total: float, episode: int) -> None:
    """:class:`~rlkit.core.errors.EnvironmentFailed` when an evaluation episode's return is
    not finite: the environment gave a NaN or infinite reward (one check per episode)."""
    if not math.isfinite(total):
        from rlkit.core.errors import EnvironmentFailed
        from rlkit.run.streams import env_name

        raise EnvironmentFailed(
            f"environment {env_name(env)!r} gave a non-finite reward in evaluation episode "
            f"{episode + 1} (its return is {total}): rlkit learns from finite rewards; fix "
            "the environment (or wrap it to replace the value)"
        )


def is_vector_env(env: Any) -> bool:
    """Is ``env`` a gymnasium vector env (``num_envs`` sub-environments stepped together)?"""
    return hasattr(env, "num_envs") and hasattr(env, "single_action_space")


def _vector_episode_returns(
    agent, env, episodes: int, seed: int | None, should_stop: Callable[[], bool] | None
) -> list[float]:
    """:func:`episode_returns` on a vector env: sub-environment ``i`` plays ``(episodes + i)
    // num_envs`` of the episodes (a fixed share each, so that short episodes do not crowd
    out long ones: Stable-Baselines3's ``evaluate_policy`` does the same), the agent acting
    on all observations at once. A sub-environment's next episode starts by itself: in the
    step its episode ends (``SAME_STEP``) or the step after (``NEXT_STEP``, gymnasium's
    default, whose reset step has no reward)."""
    import gymnasium as gym

    modes = gym.vector.AutoresetMode
    mode = env.metadata.get("autoreset_mode", modes.NEXT_STEP)
    if mode not in (modes.NEXT_STEP, modes.SAME_STEP):
        raise UsageError(
            f"this vector env does not reset its sub-environments itself (autoreset_mode "
            f"{getattr(mode, 'name', mode)}): evaluate on one environment, or on a vector env "
            "with autoreset NEXT_STEP (gymnasium's default) or SAME_STEP"
        )
    count = env.num_envs
    wanted = [(episodes + i) // count for i in range(count)]
    found: list[list[float]] = [[] for _ in range(count)]
    totals = np.zeros(count)
    resetting = np.zeros(count, dtype=bool)  # NEXT_STEP: this step only resets them
    act = _acting(agent, env, vector=True)
    obs, info = env.reset(seed=seed)
    while any(len(found[i]) < wanted[i] for i in range(count)):
        if should_stop is not None and should_stop():
            raise EvaluationStopped
        obs, rewards, terminated, truncated, info = env.step(act(obs, info))
        ended = np.logical_or(terminated, truncated) & ~resetting
        totals += np.where(resetting, 0.0, np.asarray(rewards, dtype=np.float64))
        for i in np.flatnonzero(ended):
            if len(found[i]) < wanted[i]:
                found[i].append(float(totals[i]))
            totals[i] = 0.0
        resetting = ended if mode == modes.NEXT_STEP else resetting
    return [r for returns in found for r in returns]


def episodes_phrase(episodes: int, epsilon: float = 0.0, sampled: bool = False) -> str:
    """``"10 greedy episodes"``, ``"1 greedy episode"``, ``"10 ε-greedy (ε 0.05) episodes"``,
    ``"10 sampled episodes"`` (``sampled``: actions drawn from the policy, PPO's
    ``deterministic_eval = false``): what an evaluation played, said right."""
    rule = "greedy" if epsilon == 0 else f"ε-greedy (ε {epsilon:g})"
    rule = "sampled" if sampled else rule
    return f"{episodes} {rule} episode{'' if episodes == 1 else 's'}"


def sampled(agent: Any) -> bool:
    """Does ``agent`` evaluate with actions sampled from its policy (PPO's and A2C's
    ``deterministic_eval`` false)?"""
    return not getattr(agent, "deterministic_eval", True)


def evaluation_mode(agent: Any, stochastic: bool | None) -> None:
    """``rlkit evaluate --stochastic`` / ``--deterministic``: set a PPO's or A2C's
    ``deterministic_eval`` (None: leave it as its config says); UsageError in one line for
    an agent without the choice."""
    if stochastic is None:
        return
    if not hasattr(agent, "deterministic_eval"):
        raise UsageError(
            f"--stochastic and --deterministic apply to ppo and a2c; a {agent.name} agent "
            "evaluates greedily (or eval_epsilon-greedily)"
        )
    agent.deterministic_eval = not stochastic
