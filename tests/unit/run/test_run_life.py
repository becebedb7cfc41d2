"""The run object (rlkit.run.run.Run) owns a run's life: config.toml written once, the
folder held by one process and let go in one place, hooks attached through the public
door (experiment.start/resume, as sweeps and tunes do) with their state resumed."""

from __future__ import annotations

import gymnasium as gym
import pytest

import rlkit
from rlkit.core.errors import UsageError
from rlkit.run.folder import RunFolder
from rlkit.run.hooks import Hook
from rlkit.run.loop import Trainer
from rlkit.run.run import Run

SMALL = {"hidden_sizes": (8,), "learning_starts": 50, "train_freq": 25, "gradient_steps": 2,
         "jit_compile": False}  # fmt: skip


@pytest.mark.slow
def test_a_trainers_folder_gets_its_config_once_and_a_trainer_takes_a_folder_or_a_run(tmp_path):
    env = gym.make("CartPole-v1")
    trainer = Trainer(rlkit.agents.DQN.from_env(env, **SMALL), env, run_dir=tmp_path,
                      tensorboard=False)  # fmt: skip
    trainer.run(60)
    config = (tmp_path / "config.toml").read_text()
    assert "steps = 60" in config
    trainer.run(120)  # a second session: the run's config.toml is not written again
    assert (tmp_path / "config.toml").read_text() == config
    trainer.close()
    with pytest.raises(ValueError, match="not both"):
        Trainer(trainer.agent, env, run_dir=tmp_path, run=Run(tmp_path))


def test_a_claimed_folder_is_refused_to_another_claim_until_closed(tmp_path):
    folder = RunFolder(tmp_path)
    folder.ensure()
    with Run.claim(folder):
        run = Run(folder)
    other = RunFolder(tmp_path)
    with pytest.raises(UsageError, match="in use by another rlkit process"), Run.claim(other):
        pass
    run.close()
    with Run.claim(other):  # let go by close()
        pass
    other.unlock()


class Episodes(Hook):
    def __init__(self) -> None:
        self.seen = 0

    def on_episode(self, loop, episode_return, length):
        self.seen += 1

    def state(self):
        return {"seen": self.seen}

    def load_state(self, state):
        self.seen = state["seen"]


class StopAt(Hook):
    """A stop request at ``step`` (as Ctrl-C makes one): the run checkpoints and stops."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step(self, loop, before, info):
        if loop.step >= self.step:
            loop.request_stop()


@pytest.mark.slow  # three small runs: ~15 s
def test_experiment_start_and_resume_take_hooks_as_a_user_passes_them(tmp_path):
    from rlkit.run import experiment

    overrides = {"learning_starts": 100, "train_freq": 50, "gradient_steps": 4,
                 "hidden_sizes": "16,16", "jit_compile": False}  # fmt: skip
    plan = experiment.plan("dqn", "CartPole-v1", steps=400, eval_every=150, eval_episodes=2,
                           checkpoint_every=100, overrides=overrides)  # fmt: skip
    whole_hook = Episodes()
    trainer = experiment.start(plan, tmp_path / "whole", hooks=[whole_hook])
    assert trainer.hooks[-1] is whole_hook  # after the built-in ones
    whole = experiment.drive(trainer, plan.settings, handle_signals=False)
    assert whole.status == experiment.FINISHED

    trainer = experiment.start(plan, tmp_path / "stopped", hooks=[Episodes(), StopAt(230)])
    stopped = experiment.drive(trainer, plan.settings, handle_signals=False)
    assert stopped.status == experiment.INTERRUPTED
    hook = Episodes()
    trainer, settings = experiment.resume(stopped.run_dir, hooks=[hook])
    assert hook.seen == len(stopped.history.episode_returns) > 0
    resumed = experiment.drive(trainer, settings, handle_signals=False)
    assert resumed.status == experiment.FINISHED
    assert hook.seen == whole_hook.seen == len(whole.history.episode_returns)
    metrics = [(r.run_dir / "metrics.csv").read_text() for r in (whole, resumed)]
    assert metrics[0] == metrics[1]
