"""The on-policy runs of :mod:`benchmarks.compare_sb3`: PPO and A2C on CartPole-v1 at rl-zoo's
settings, in rlkit's Python loop and in Stable-Baselines3, each timed as a whole run.

- ``ppo-cartpole``: rl-zoo's ``hyperparams/ppo.yml`` CartPole-v1 entry (commit 00128b5) key by
  key: 8 envs, n_steps 32, batch_size 256, n_epochs 20, gae_lambda 0.8, gamma 0.98,
  ent_coef 0, learning_rate ``lin_0.001`` and clip_range ``lin_0.2`` (both fall linearly to
  0 over the run), 1e5 steps; every other key SB3's PPO default. rlkit runs its preset
  ``ppo/CartPole-v1`` (the same entry; its ``lr_anneal_fraction`` 1.0 made the run's steps).
- ``ppo-cartpole-xla``, ``a2c-cartpole-xla``: the same, rlkit's update calls compiled by XLA
  (``jit_compile = true``: the same formulas, another rounding).
- ``a2c-cartpole``: rl-zoo's ``a2c.yml`` CartPole-v1 entry (8 envs, ent_coef 0, SB3's A2C
  defaults: n_steps 5, RMSprop), rlkit's preset ``a2c/CartPole-v1``; 1e5 steps by default
  (a speed check: the zoo's 5e5 with ``--steps 500000``).

Both libraries step gymnasium's CartPole-v1, 8 copies one after another (rlkit a
``SyncVectorEnv``, SB3 rl-zoo's ``make_vec_env``: a ``DummyVecEnv`` of ``Monitor``-wrapped
envs). The phase split (:mod:`benchmarks.phase_timer`): ``env`` is the vector env's
``step`` (with its resets), ``act`` rlkit's ``agent.act`` (numpy, the whole batch) and SB3's
``policy.forward`` (torch, under ``no_grad``; the rollout's value and log-probability come
with it), ``update`` rlkit's ``agent.update`` on a full rollout (the rollout's values and
log-probabilities, GAE, the epochs) and SB3's ``train`` (the epochs; its GAE runs at the
rollout's end, in ``other``). The ``steady`` phase leaves out the first
:data:`WARM_ROLLOUTS` rollouts. SB3 ends a run at the first whole rollout at or past the
step count (100,096 steps for 1e5: 96 more than rlkit's, one more update).
"""

from __future__ import annotations

from typing import Any

#: rl-zoo's entries as its yml files spell them (``lin_X``: X falling linearly to 0)
ZOO: dict[str, dict[str, Any]] = {
    "ppo-cartpole": dict(n_envs=8, n_timesteps=100_000, policy="MlpPolicy", n_steps=32,
                         batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20,
                         ent_coef=0.0, learning_rate="lin_0.001", clip_range="lin_0.2"),
    "a2c-cartpole": dict(n_envs=8, n_timesteps=500_000, policy="MlpPolicy", ent_coef=0.0),
}  # fmt: skip
#: each algorithm's rlkit agent and preset
PRESETS = {"ppo-cartpole": ("ppo", "CartPole-v1"), "a2c-cartpole": ("a2c", "CartPole-v1")}
#: the benchmark's default steps (ppo: the zoo's; a2c: a fifth of its 5e5)
STEPS = {"ppo-cartpole": 100_000, "a2c-cartpole": 100_000}
#: ``<algo>-xla``: the same entry, rlkit's update compiled by XLA (``jit_compile = true``);
#: SB3 runs the entry as it is
for _algo in list(ZOO):
    ZOO[f"{_algo}-xla"], PRESETS[f"{_algo}-xla"] = ZOO[_algo], PRESETS[_algo]
    STEPS[f"{_algo}-xla"] = STEPS[_algo]
ENV_ID = "CartPole-v1"
#: rollouts left out of the steady phase (the first update's warm-up)
WARM_ROLLOUTS = 2
#: SB3's A2C default rollout length (n_steps) where the zoo entry gives none
SB3_A2C_N_STEPS = 5


def rollout_steps(algo: str) -> int:
    """Environment steps in one rollout: n_envs x n_steps (256 for PPO, 40 for A2C)."""
    zoo = ZOO[algo]
    return zoo["n_envs"] * zoo.get("n_steps", SB3_A2C_N_STEPS)


def warm_steps(algo: str) -> int:
    """The steps the steady phase leaves out: :data:`WARM_ROLLOUTS` rollouts."""
    return WARM_ROLLOUTS * rollout_steps(algo)


def linear(start: float):
    """rl-zoo's ``linear_schedule(start)``: SB3's ``progress_remaining`` (1 -> 0) times
    ``start``."""

    def schedule(progress_remaining: float) -> float:
        return progress_remaining * start

    return schedule


def sb3_kwargs(algo: str) -> dict[str, Any]:
    """The zoo entry as SB3's constructor takes it: ``lin_X`` strings made schedules, the
    entry's own bookkeeping keys (n_envs, n_timesteps, policy) left out."""
    out: dict[str, Any] = {}
    for key, value in ZOO[algo].items():
        if key in ("n_envs", "n_timesteps", "policy"):
            continue
        if isinstance(value, str) and value.startswith("lin_"):
            value = linear(float(value.removeprefix("lin_")))
        out[key] = value
    return out


def rlkit_settings(algo: str, steps: int) -> tuple[int, dict[str, Any]]:
    """rlkit's preset for ``algo``: ``(num_envs, agent keyword arguments)``, its
    ``lr_anneal_fraction`` resolved to ``lr_anneal_steps`` of a ``steps``-step run (as a
    run's plan resolves it)."""
    from rlkit.config import presets

    agent_name, stem = PRESETS[algo]
    preset = presets.lookup(agent_name, stem)
    settings = dict(preset.agent_config)
    fraction = settings.pop("lr_anneal_fraction", 0.0)
    if fraction > 0:
        settings["lr_anneal_steps"] = round(fraction * steps)
    if algo.endswith("-xla"):
        settings["jit_compile"] = True
    return int(preset.run["num_envs"]), settings


def _time_rollout_updates(timer, agent) -> None:
    """Time ``agent.update`` under ``update`` only where a rollout is full (the loop calls it
    every step; the other calls return at once and stay in ``other``), so that the first
    timed call is the first update."""
    from types import SimpleNamespace

    timed = SimpleNamespace(update=agent.update)
    timer.wrap(timed, "update", "update")
    agent.update = lambda: timed.update() if agent.rollout.full else None


def run_rlkit_onpolicy(algo: str, seed: int, steps: int) -> dict:
    """rlkit's run: the preset in the Python loop (``rlkit.train``), timed whole and in
    phases; the final greedy evaluation (10 episodes, seed ``seed + 10_000``)."""
    import gymnasium as gym
    import tensorflow as tf

    import rlkit
    from benchmarks.compare_sb3 import _peak_rss_mb, _timed_learn
    from benchmarks.phase_timer import PhaseTimer, marks
    from rlkit.envs.make import make_vector_env

    num_envs, settings = rlkit_settings(algo, steps)
    env = make_vector_env(ENV_ID, num_envs)
    cls = rlkit.agents.PPO if algo.startswith("ppo") else rlkit.agents.A2C
    agent = cls.from_env(env, seed=seed, **settings)
    timer = PhaseTimer(marks(0, steps, warm_steps(algo)))
    timer.wrap(env, "step", "env")
    timer.wrap(agent, "act", "act")
    _time_rollout_updates(timer, agent)

    def learn() -> None:
        rlkit.train(agent, env, steps=steps, seed=seed, callback=lambda n, *_: timer.at_step(n))

    result = _timed_learn(learn, timer, 0, steps, warm_steps(algo))
    mean, std = rlkit.evaluate(agent, gym.make(ENV_ID), episodes=10, seed=seed + 10_000)
    threads = (tf.config.threading.get_intra_op_parallelism_threads(),
               tf.config.threading.get_inter_op_parallelism_threads())  # fmt: skip
    return {**result, "eval": mean, "eval_std": std, "rss_mb": _peak_rss_mb(),
            "updates": int(agent.num_updates), "threads": "tf {}/{}".format(*threads)}  # fmt: skip


def run_sb3_onpolicy(algo: str, seed: int, steps: int) -> dict:
    """SB3's run (in SB3's venv: torch threads already set): the zoo entry, timed as rlkit's
    is; the final deterministic evaluation (10 episodes)."""
    import gymnasium as gym
    import torch
    from stable_baselines3 import A2C, PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    from benchmarks.compare_sb3 import _peak_rss_mb, _timed_learn
    from benchmarks.phase_timer import PhaseTimer, marks

    zoo = ZOO[algo]
    env = make_vec_env(ENV_ID, n_envs=zoo["n_envs"], seed=seed)  # rl-zoo's own call
    cls = PPO if algo.startswith("ppo") else A2C
    model = cls(zoo["policy"], env, seed=seed, device="cpu", **sb3_kwargs(algo))
    timer = PhaseTimer(marks(0, steps, warm_steps(algo)))
    timer.wrap(model.env, "step", "env")
    timer.wrap(model.policy, "forward", "act")
    timer.wrap(model, "train", "update")

    class Marks(BaseCallback):
        def _on_step(self) -> bool:
            timer.at_step(self.num_timesteps)
            return True

    learn = lambda: model.learn(steps, callback=Marks())  # noqa: E731
    result = _timed_learn(learn, timer, 0, steps, warm_steps(algo))
    mean, std = evaluate_policy(model, gym.make(ENV_ID), n_eval_episodes=10, deterministic=True)
    per_update = zoo.get("n_epochs", 1) if algo.startswith("ppo") else 1  # SB3 counts epochs
    return {**result, "eval": float(mean), "eval_std": float(std), "rss_mb": _peak_rss_mb(),
            "updates": int(model._n_updates) // per_update,
            "threads": f"torch {torch.get_num_threads()}"}  # fmt: skip
