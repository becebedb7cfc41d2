"""The compiled loop's trainer: the program run in chunks, the run's life kept in Python.

:class:`CompiledTrainer` stands where :class:`~rlkit.run.loop.Trainer` stands for
``experiment.drive`` and ``finish``: it runs the agent's program
(the registry's ``compiled_program`` of its agent)
chunk by chunk and, between chunks, does what the Python loop does after a step: counts
and logs the episodes that ended (``metrics.csv`` rows at each episode's own step,
TensorBoard), the chunk's update metrics (its mean loss, Q and |delta|; divergence
stops the run), and calls the same hooks: evaluation with the best model, checkpoints,
the progress line. Chunks end where an evaluation or checkpoint is due (the first
multiple of ``N`` at or past it, where the Python loop would run them too), at the
step limit, or after at most ``chunk_steps`` steps; a stop request is answered at
the end of the chunk in progress. A hook runs once per chunk, not per step.

A checkpoint holds the agent as always and the program's variables in place of the
pickled environment (:class:`~rlkit.run.compiled.choice.ProgramState`): ``rlkit resume``
continues the same run, step for step as if it had not stopped.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from rlkit.agents.registry import AGENTS, load
from rlkit.envs.tf import make_tf_env
from rlkit.run.compiled.choice import ProgramState
from rlkit.run.compiled.program import ChunkOutput, CompiledProgram
from rlkit.run.hooks.base import Hook
from rlkit.run.hooks.checkpoint_hook import CheckpointHook
from rlkit.run.hooks.evaluation_hook import EvaluationHook
from rlkit.run.run import Run
from rlkit.run.state import TrainHistory
from rlkit.run.trainer_base import TrainerBase

#: the most environment steps one chunk runs (the progress line and a stop request wait
#: for a chunk: ~0.5 s at 40,000 steps/s)
CHUNK_STEPS = 20_000

#: the seconds a chunk aims at, from the speed of the chunks before it (MinAtar's DQN
#: takes ~1 ms a step: 20,000 steps would keep Ctrl-C and the progress line waiting ~20 s)
CHUNK_SECONDS = 1.0

#: the vector steps of the first chunk, before any speed is known
FIRST_CHUNK = 256


class CompiledTrainer(TrainerBase):
    """Trains an agent on ``num_envs`` copies of the TensorFlow env ``env_id`` with the
    compiled loop; the hooks, history and checkpoints of :class:`~rlkit.run.loop.Trainer`
    (both are a :class:`~rlkit.run.trainer_base.TrainerBase`).

    Args:
        agent: an agent with a compiled program (``rlkit.agents.DQN``, ``DDPG``, ...; built
            for ``env_id``'s spaces).
        env_id: an rlkit TensorFlow environment (``rlkit/CartPole-v1``).
        num_envs: ``N``.
        seed: the run's seed (the program's stateless keys, evaluations' seeds).
        run: the :class:`~rlkit.run.run.Run` it trains in (metrics, checkpoints, best/); a
            restored one says where the program starts.
        eval_env, eval_every, eval_episodes, hooks: as :class:`~rlkit.run.loop.Trainer`'s.
        chunk_steps: the most environment steps per chunk.
    """

    def __init__(
        self, agent, env_id: str, num_envs: int, seed: int, run: Run, eval_env=None,
        eval_every: int = 0, eval_episodes: int = 10, hooks: Iterable[Hook] = (),
        chunk_steps: int = CHUNK_STEPS,
    ) -> None:  # fmt: skip
        self.num_envs = int(num_envs)
        #: what a checkpoint keeps in place of the environment (:meth:`env_to_save`)
        env = ProgramState(env_id, self.num_envs, {})
        self._shown_step: int | None = None  # the step hooks see while an episode is logged
        super().__init__(agent, env, seed, run, eval_env, eval_every, eval_episodes, hooks)
        restored = run.restored
        if restored is None:
            self.state.episode_return = [0.0] * self.num_envs
            self.state.episode_length = [0] * self.num_envs
        else:
            self.history.earlier_seconds = self.state.seconds
        chunk = max(1, int(chunk_steps) // self.num_envs)
        program = load(AGENTS[agent.name].compiled_program)  # the registry names it
        self.program: CompiledProgram = program(
            agent, make_tf_env(env_id), self.num_envs, self.seed, chunk
        )
        if restored is not None:
            self.program.load_state_dict(restored.env.arrays)
        self.compile_seconds: float | None = None
        self._vector_steps_per_second: float | None = None  # measured over the last chunk

    @classmethod
    def restored(cls, agent, saved: ProgramState, run: Run, **kwargs) -> CompiledTrainer:
        """The trainer of a restored ``run`` (:meth:`~rlkit.run.run.Run.restore`):
        ``agent`` loaded from its checkpoint, ``saved`` the program's state there."""
        return cls(agent, saved.env_id, saved.num_envs, agent.seed, run, **kwargs)

    def env_to_save(self) -> ProgramState:
        """What a checkpoint keeps in place of the environment: the program's variables."""
        return ProgramState(self.env.env_id, self.num_envs, self.program.state_dict())

    @property
    def step(self) -> int:
        """Environment steps taken (an episode's own step while hooks log it)."""
        return self.agent.num_steps if self._shown_step is None else self._shown_step

    def compile(self) -> float:
        """Compile the program now (the first chunk would); returns the seconds it took."""
        if self.compile_seconds is None:
            start = time.perf_counter()
            self.program.compile()
            self.compile_seconds = time.perf_counter() - start
        return self.compile_seconds

    # -- the run -------------------------------------------------------------------------
    def run(
        self, total_steps: int, max_episodes: int | None = None, hooks: Iterable[Hook] = ()
    ) -> TrainHistory:
        """Train until ``agent.num_steps`` reaches ``total_steps`` (or ``max_episodes``
        episodes end, or a stop request), then the hooks' ``on_end``; ``hooks``: more hooks
        for this call only (as :meth:`~rlkit.run.loop.Trainer.run`). Returns the history."""
        if total_steps <= 0:
            raise ValueError(f"steps must be > 0, got {total_steps}")
        self.compile()
        return self.run_session(
            total_steps, max_episodes, hooks,
            lambda: self._chunk(self._chunk_length(total_steps), max_episodes),
        )  # fmt: skip

    def _chunk_length(self, total_steps: int) -> int:
        """Vector steps to the next stop: the step limit, the next evaluation or checkpoint
        (rounded up to whole vector steps), at most a chunk and about
        :data:`CHUNK_SECONDS` at the speed of the last chunk. (Where chunks end does not
        change a run: its steps are keyed by the step count.)"""
        step, n = self.agent.num_steps, self.num_envs
        ends = [total_steps]
        for hook in self._active:
            every = getattr(hook, "every", 0)
            if isinstance(hook, EvaluationHook | CheckpointHook) and every:
                ends.append((step // every + 1) * every)
        rate = self._vector_steps_per_second
        timely = FIRST_CHUNK if rate is None else max(1, int(rate * CHUNK_SECONDS))
        return max(1, min(self.program.chunk, timely, -(-(min(ends) - step) // n)))

    def _chunk(self, vector_steps: int, max_episodes: int | None) -> dict[str, Any]:
        """Run one chunk and report it as the Python loop reports its steps."""
        agent, before = self.agent, self.agent.num_steps
        start = time.perf_counter()
        out = self.program.run_chunk(vector_steps, max_episodes)
        seconds = time.perf_counter() - start
        if out.steps and seconds > 0:
            self._vector_steps_per_second = out.steps / seconds
        agent.num_steps = before + out.steps * self.num_envs
        self.program.after_chunk(out.updates)
        agent.refresh_policy()  # evaluations and saved models act on the new weights
        info: dict[str, Any] = {}
        if out.updates:
            self._record_update(out, info)
        self._record_episodes(out, before, info)
        self.state.episode_return = [float(x) for x in self.program.episode_return.numpy()]
        self.state.episode_length = [int(x) for x in self.program.episode_length.numpy()]
        return info

    def _record_update(self, out: ChunkOutput, info: dict[str, Any]) -> None:
        names, sums = self.program.metric_names, out.metric_sums
        metrics = {name: float(x) / out.updates for name, x in zip(names, sums, strict=True)}
        self.record_update(metrics, info, when="by")

    def _record_episodes(self, out: ChunkOutput, before: int, info: dict[str, Any]) -> None:
        """Each episode that ended, in the Python loop's order (by step, then copy), logged
        at the step it ended."""
        try:
            for row, copy in np.argwhere(out.done):
                ret, length = float(out.returns[row, copy]), int(out.lengths[row, copy])
                self._shown_step = before + (int(row) + 1) * self.num_envs
                self.record_episode(ret, length, info)
        finally:
            self._shown_step = None
