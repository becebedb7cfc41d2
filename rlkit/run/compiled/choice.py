"""Which loop a run takes: the compiled one (the whole loop in one XLA program) or Python's.

No TensorFlow here: ``rlkit train`` decides (and refuses a forced ``--loop compiled`` it
cannot run, in one line) before paying for the import. The compiled loop
(:mod:`rlkit.run.compiled.trainer`) runs DQN and its family's value learners (C51, QR-DQN,
Rainbow, noisy networks included) on rlkit's discrete TensorFlow environments
(``rlkit/CartPole-v1``, ..., and MinAtar's games ``rlkit/MinAtar-Breakout-v0``, ...) and
DDPG/TD3 on the continuous ones (``rlkit/Pendulum-v1``), prioritized replay and n-step
returns included, with rlkit's own networks (MLPs; MinAtar's convolutional torso); anything
else
runs the usual Python loop (:class:`~rlkit.run.loop.Trainer`), which runs every agent and
option on the same environments.

:class:`ProgramState` is what a compiled run's checkpoint keeps where a Python run keeps its
pickled environment: the program's variables (the environments' state, the replay, the
counters), so that ``rlkit resume`` knows which loop to rebuild.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlkit.agents.registry import AGENTS
from rlkit.core.errors import UsageError
from rlkit.envs.tf import ENV_IDS, MINATAR_IDS, is_tf_env
from rlkit.run.compiled.xla_cache import CACHE_FLAG as CACHE_FLAG  # re-exported: callers import
from rlkit.run.compiled.xla_cache import XLA_CACHE as XLA_CACHE  # them from here too
from rlkit.run.compiled.xla_cache import use_xla_cache as use_xla_cache

LOOPS = ("auto", "compiled", "python")


def compiled_agents(minatar: bool = False) -> list[str]:
    """The agents the compiled loop runs (the registry's ``compiled_program``); ``minatar``:
    those it runs on MinAtar's games (the value learners: DQN's learner with a value head)."""
    return [name for name, spec in AGENTS.items()
            if spec.compiled_program and (spec.compiled_on_minatar or not minatar)]  # fmt: skip


#: how to run what the compiled loop does not take
PYTHON_LOOP = "--loop python runs it in the usual Python loop (Trainer in Python)"


def unsupported(env_id: str, agent: str, config: Any) -> str | None:
    """Why the compiled loop cannot run ``agent`` with ``config`` on ``env_id`` (None: it can)."""
    if not is_tf_env(env_id):
        return (
            f"{env_id} is not one of rlkit's TensorFlow environments (the compiled loop steps "
            f"{', '.join(ENV_IDS)} and rlkit/MinAtar-<Game>-v0)"
        )
    spec = AGENTS.get(agent)
    if spec is None or not spec.compiled_program:
        return f"{agent} has no compiled loop ({', '.join(compiled_agents())} have)"
    if env_id in MINATAR_IDS and not spec.compiled_on_minatar:
        return (f"the compiled loop runs {', '.join(compiled_agents(minatar=True))} on "
                f"{env_id}, not {agent}")  # fmt: skip
    refused = {
        "q_network": "a Q-network of your own",
        "actor": "an actor of your own",
        "critic": "a critic of your own",
        "frame_stack": "frame stacks",
        "r_max_running": "a running r_max",
        "norm_obs": "observation normalisation",
        "norm_reward": "reward scaling",
    }
    if getattr(config, "noise", "gaussian") != "gaussian":
        return "the compiled loop explores with Gaussian noise only (noise)"
    for key, what in refused.items():
        if getattr(config, key, None):
            return f"the compiled loop does not take {what} ({key})"
    if getattr(config, "torso", "auto") not in ("auto", "nature", "minatar"):
        return "the compiled loop does not take a torso of your own (torso)"
    if getattr(config, "train_freq_unit", "step") != "step":
        return "the compiled loop updates by steps, not episodes (train_freq_unit)"
    return None


def choose_loop(
    env_id: str, agent: str, config: Any, loop: str = "auto"
) -> tuple[bool, str | None]:
    """``(compiled, note)``: whether the run takes the compiled loop, and the line the CLI
    says about it: which loop on an rlkit TensorFlow environment, a tip naming the
    TensorFlow twin of an id that has one (where the compiled loop would run the same
    settings), else None.

    ``loop``: ``"auto"`` (compiled where it can run, else Python), ``"compiled"`` (a
    UsageError saying why when it cannot) or ``"python"``."""
    if loop not in LOOPS:
        raise UsageError(f"--loop must be one of {', '.join(LOOPS)}, got {loop!r}")
    why = unsupported(env_id, agent, config)
    if loop == "python":
        return False, ("loop: python (asked for)" if is_tf_env(env_id) else None)
    if why is None:
        return True, (
            "loop: compiled (acting, environment steps, replay and updates in one XLA "
            "program, run in chunks; --loop python for the usual loop)"
        )
    if loop == "compiled":
        raise UsageError(f"cannot run the compiled loop: {why}; {PYTHON_LOOP}")
    if is_tf_env(env_id):
        return False, f"loop: python ({why})"
    twin = tensorflow_twin(env_id)
    measured = measured_speedup(agent, env_id)
    if twin is not None and measured and unsupported(twin, agent, config) is None:
        return False, (
            f"tip: --env {twin} is this environment in TensorFlow, step for step the same; "
            f"there {agent} trains in the compiled loop, one XLA program: {measured}"
        )
    return False, None


def measured_speedup(agent: str, env_id: str) -> str | None:
    """What a benchmark measured of the compiled loop against the Python loop for ``agent``
    on ``env_id``'s family (the registry's ``compiled_speedups``), or None: the tip is given
    only where the compiled loop was measured faster (not at CartPole's defaults, where its
    compile and update-bound blocks make it slower in wall time)."""
    spec = AGENTS.get(agent)
    speedups = spec.compiled_speedups if spec is not None else {}
    return next((text for prefix, text in speedups.items() if env_id.startswith(prefix)), None)


def tensorflow_twin(env_id: str) -> str | None:
    """rlkit's TensorFlow environment equal step for step to the gymnasium or minatar id
    ``env_id`` (``CartPole-v1`` -> ``rlkit/CartPole-v1``, ``MinAtar/Breakout-v0`` ->
    ``rlkit/MinAtar-Breakout-v0``), or None."""
    twin = "rlkit/" + env_id.replace("MinAtar/", "MinAtar-", 1)
    return twin if is_tf_env(twin) else None


class ProgramState:
    """A compiled run's state, as a checkpoint keeps it (pickled in place of the env).

    Attributes:
        env_id: the TensorFlow environment's id.
        num_envs: copies stepped together.
        arrays: the program's variables by name (:meth:`DQNProgram.state_dict`).
        spec: None (no gymnasium spec: this is no environment).
    """

    spec = None

    def __init__(self, env_id: str, num_envs: int, arrays: dict[str, np.ndarray]) -> None:
        self.env_id, self.num_envs, self.arrays = env_id, int(num_envs), dict(arrays)

    def close(self) -> None:
        """Nothing to close (it stands where an environment would)."""
