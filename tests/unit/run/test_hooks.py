"""The training loop's hooks: a user's hook is called like the built-in ones, can stop
training, and changes nothing it does not mean to; the run folder's checkpoint index."""

from __future__ import annotations

import gymnasium as gym
import pytest

import rlkit
from rlkit.core.errors import UsageError
from rlkit.run.folder import RunFolder
from rlkit.run.hooks import Hook
from rlkit.run.hooks.checkpoint_hook import CheckpointHook
from rlkit.run.hooks.evaluation_hook import EvaluationHook
from rlkit.run.hooks.metrics_hook import MetricsHook
from rlkit.run.loop import Trainer

SMALL = {"hidden_sizes": (8,), "learning_starts": 50, "train_freq": 25, "gradient_steps": 2,
         "jit_compile": False}  # fmt: skip


def small_agent(env, seed: int = 0):
    return rlkit.agents.DQN.from_env(env, seed=seed, **SMALL)


class Recorder(Hook):
    """Every call, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def on_start(self, loop):
        self.calls.append(("start", loop.step))

    def on_update(self, loop, metrics):
        self.calls.append(("update", loop.step, sorted(metrics)))

    def on_episode(self, loop, episode_return, length):
        self.calls.append(("episode", loop.step, episode_return, length))

    def on_step(self, loop, before, info):
        assert loop.step == before + 1  # one environment: one step at a time
        self.calls.append(("step", loop.step))

    def on_end(self, loop):
        self.calls.append(("end", loop.step))


def test_a_users_hook_sees_every_event_in_order_and_the_loops_state():
    env = gym.make("CartPole-v1")
    recorder = Recorder()
    history = rlkit.train(small_agent(env), env, steps=200, hooks=[recorder])
    calls = recorder.calls
    assert calls[0] == ("start", 0) and calls[-1] == ("end", 200)
    assert [c[1] for c in calls if c[0] == "step"] == list(range(1, 201))
    episodes = [c for c in calls if c[0] == "episode"]
    assert [c[2] for c in episodes] == history.episode_returns
    assert [c[1] for c in episodes] == history.episode_end_steps
    updates = [c for c in calls if c[0] == "update"]
    update_steps = [75, 100, 125, 150, 175, 200]  # from max(learning_starts, batch 64)
    assert [c[1] for c in updates] == [s for s, _ in history.updates] == update_steps
    assert updates[0][2] == sorted(history.updates[0][1])
    # an episode's call comes before its step's
    first = calls.index(episodes[0])
    assert calls[first + 1] == ("step", episodes[0][1])


class StopAfterEpisodes(Hook):
    def __init__(self, episodes: int) -> None:
        self.episodes = episodes

    def on_step(self, loop, before, info):
        if loop.episodes >= self.episodes:
            return False


def test_a_hook_stops_training_and_a_run_folder_still_gets_its_checkpoint(tmp_path):
    env = gym.make("CartPole-v1")
    trainer = Trainer(small_agent(env), env, run_dir=tmp_path, tensorboard=False,
                      hooks=[StopAfterEpisodes(3)])  # fmt: skip
    history = trainer.run(10_000)
    trainer.close()
    assert len(history.episode_returns) == 3 and history.steps < 10_000
    folder = RunFolder(tmp_path)
    assert [p.name for p in folder.checkpoint_dirs()] == [folder.checkpoint_name(history.steps)]


@pytest.mark.slow
def test_the_built_in_hooks_come_first_in_order_and_a_quiet_hook_changes_nothing(tmp_path):
    def run(out, hooks):
        env = gym.make("CartPole-v1")
        trainer = Trainer(small_agent(env), env, run_dir=out, eval_env=gym.make("CartPole-v1"),
                          eval_every=100, eval_episodes=2, checkpoint_every=150,
                          tensorboard=False, hooks=hooks)  # fmt: skip
        trainer.run(300)
        trainer.close()
        return trainer

    plain = run(tmp_path / "plain", [])
    watched = run(tmp_path / "watched", [Recorder()])
    kinds = [type(h) for h in watched.hooks]
    assert kinds == [MetricsHook, EvaluationHook, CheckpointHook, Recorder]
    assert [type(h) for h in plain.hooks] == kinds[:3]
    assert plain.folder.metrics_path.read_text() == watched.folder.metrics_path.read_text()


def test_the_run_folder_names_its_checkpoints_and_refuses_what_is_no_run(tmp_path):
    with pytest.raises(UsageError, match="no run folder at"):
        RunFolder.open(tmp_path / "missing")
    with pytest.raises(UsageError, match="config.toml is missing"):
        RunFolder.open(tmp_path)
    first = RunFolder.create(tmp_path / "runs", "dqn", "ALE/Pong-v5", 3)
    second = RunFolder.create(tmp_path / "runs", "dqn", "ALE/Pong-v5", 3)
    assert first.path != second.path and first.path.name.startswith("dqn-ALE_Pong-v5-3-")
    with pytest.raises(UsageError, match="nothing to resume"):
        first.checkpoints_newest_first()
    for step in (100, 300, 200):
        (first.checkpoints_dir / first.checkpoint_name(step)).mkdir(parents=True)
    assert [p.name for p in first.checkpoints_newest_first()] == [
        "step-0000000300", "step-0000000200", "step-0000000100"
    ]  # fmt: skip
    first.mark_latest(first.checkpoints_dir / "step-0000000200")  # e.g. 300 written after
    assert first.checkpoints_newest_first()[0].name == "step-0000000200"
    kept = first.prune_checkpoints(2)
    assert [p.name for p in kept] == ["step-0000000200", "step-0000000300"]
    with pytest.raises(UsageError, match="already holds files"):
        RunFolder.create_at(first.path)


@pytest.mark.slow
def test_rlkit_train_shows_the_clis_progress_line_when_asked_and_is_quiet_by_default(capsys):
    env = gym.make("CartPole-v1")
    rlkit.train(small_agent(env), env, steps=300)
    assert capsys.readouterr().err == ""
    rlkit.train(small_agent(env), env, steps=300, progress=True)
    err = capsys.readouterr().err
    assert "dqn CartPole-v1" in err and "300/300 steps" in err and "100%" in err


class EpisodeCounter(Hook):
    """A user's hook with state of its own: the episodes and steps of episodes it saw."""

    def __init__(self) -> None:
        self.episodes, self.steps = 0, 0

    def on_episode(self, loop, episode_return, length):
        self.episodes += 1
        self.steps += length

    def state(self):
        return {"episodes": self.episodes, "steps": self.steps}

    def load_state(self, state):
        self.episodes, self.steps = state["episodes"], state["steps"]


class StopAt(Hook):
    def __init__(self, step: int) -> None:
        self.step = step

    def on_step(self, loop, before, info):
        return loop.step < self.step


@pytest.mark.slow
def test_a_users_hook_with_state_resumes_exactly_as_an_uninterrupted_run(tmp_path):
    from rlkit.run.resume import resume_trainer

    def trainer(out, hooks):
        env = gym.make("CartPole-v1")
        return Trainer(small_agent(env), env, run_dir=out, eval_env=gym.make("CartPole-v1"),
                       eval_every=100, eval_episodes=2, tensorboard=False, hooks=hooks)  # fmt: skip

    whole_counter = EpisodeCounter()
    whole = trainer(tmp_path / "whole", [whole_counter])
    whole.run(400)
    whole.close()

    stopped = trainer(tmp_path / "stopped", [EpisodeCounter(), StopAt(250)])
    stopped.run(400)  # stops at step 250, mid-episode, with a checkpoint
    stopped.close()
    counter = EpisodeCounter()  # a fresh one: its state comes from the checkpoint
    resumed = resume_trainer(tmp_path / "stopped", lambda: gym.make("CartPole-v1"),
                             eval_every=100, eval_episodes=2, tensorboard=False,
                             hooks=[counter])  # fmt: skip
    assert counter.episodes > 0 and resumed.step == 250
    resumed.run(400)
    resumed.close()
    assert (counter.episodes, counter.steps) == (whole_counter.episodes, whole_counter.steps)
    assert counter.episodes == len(whole.history.episode_returns)
    assert resumed.folder.metrics_path.read_text() == whole.folder.metrics_path.read_text()
