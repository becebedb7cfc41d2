"""Incremental checkpoints: large arrays saved as blocks the checkpoints share."""

import json

import gymnasium as gym
import numpy as np
import pytest

import rlkit
from rlkit.core.errors import UsageError
from rlkit.run import checkpoint_blocks
from rlkit.run.checkpoint import (
    checkpoints_newest_first,
    load_checkpoint,
    load_newest_usable,
    save_checkpoint,
)
from rlkit.run.folder import RunFolder
from rlkit.run.loop import Trainer
from tests.integration.test_runs import ABSOLUTE, TINY, cli, only_run, weights

ROW_BYTES = 16  # one CartPole observation: 4 float32


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 100 CartPole observations (and of 200 int64 actions)."""
    monkeypatch.setattr(checkpoint_blocks, "BLOCK_BYTES", 100 * ROW_BYTES)


def cartpole_agent(capacity: int):
    env = gym.make("CartPole-v1")
    agent = rlkit.agents.DQN.from_env(env, seed=1, hidden_sizes=(8,), learning_starts=50,
                                      train_freq=25, gradient_steps=2, jit_compile=False,
                                      buffer_size=capacity)  # fmt: skip
    return agent, env


def manifest(checkpoint):
    return json.loads((checkpoint / checkpoint_blocks.MANIFEST_FILE).read_text())


def obs_blocks(checkpoint):
    return manifest(checkpoint)["memory/replay/obs"]["blocks"]


@pytest.mark.slow
def test_a_checkpoint_writes_only_the_blocks_the_ring_changed(small_blocks, tmp_path):
    agent, env = cartpole_agent(capacity=300)
    trainer = Trainer(agent, env, run_dir=tmp_path, checkpoint_every=100, tensorboard=False)
    root, store = tmp_path / "checkpoints", tmp_path / "checkpoints" / "blocks"
    trainer.run(200)
    first = obs_blocks(root / "step-0000000200")
    files = {n: (store / n).stat() for n in first}
    trainer.run(300)
    at_300 = agent.replay.obs.copy()
    second = obs_blocks(root / "step-0000000300")
    # rows 0-199 did not change: their blocks are the first checkpoint's files, not rewritten
    assert len(first) == 2 and second[:2] == first and second[2] not in first
    for name, stat in files.items():
        assert (store / name).stat().st_ino == stat.st_ino  # the same file, not rewritten
    trainer.run(400)  # the ring wraps: rows 0-99 are overwritten, so only block 0 is new
    third = obs_blocks(root / "step-0000000400")
    assert third[1:] == second[1:] and third[0] not in second
    # step-200 was pruned (two kept), and with it every block no kept checkpoint lists
    kept = sorted(p.name for p in root.glob("step-*"))
    assert kept == ["step-0000000300", "step-0000000400"]
    listed = {n for c in kept for entry in manifest(root / c).values() for n in entry["blocks"]}
    assert {p.name for p in store.iterdir()} == listed
    assert "memory/replay/rewards" not in manifest(root / kept[0])  # small: in state.npz
    # each checkpoint reads back its own replay, the older one from the blocks it shares
    older, _, _ = load_checkpoint(root / "step-0000000300")
    np.testing.assert_array_equal(older.replay.obs, at_300)
    newer, _, _ = load_checkpoint(root / "step-0000000400")
    np.testing.assert_array_equal(newer.replay.obs, agent.replay.obs)
    np.testing.assert_array_equal(newer.replay.actions, agent.replay.actions)
    assert newer.replay.rng.bit_generator.state == agent.replay.rng.bit_generator.state


@pytest.mark.slow
def test_interrupted_and_resumed_run_with_block_checkpoints_equals_uninterrupted_run(
    small_blocks, capsys, tmp_path
):
    common = ["--seed", "5", "--eval-every", "250", "--checkpoint-every", "200", *ABSOLUTE]
    status, _, err = cli(capsys, "train", "dqn", "--out", tmp_path / "whole", *TINY,
                         "--steps", "900", *common)  # fmt: skip
    assert status == 0, err
    status, _, err = cli(capsys, "train", "dqn", "--out", tmp_path / "split", *TINY,
                         "--steps", "430", *common)  # fmt: skip
    assert status == 0, err
    whole, split = only_run(tmp_path / "whole"), only_run(tmp_path / "split")
    assert obs_blocks(split / "checkpoints" / "step-0000000430")  # it did use blocks
    status, _, err = cli(capsys, "resume", split, "--steps", "900", "--quiet")
    assert status == 0, err
    assert (split / "metrics.csv").read_text() == (whole / "metrics.csv").read_text()
    a, b = weights(whole / "model"), weights(split / "model")
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["missing", "cut short"])
def test_a_damaged_block_falls_back_to_the_older_checkpoint(damage, small_blocks, tmp_path):
    agent, env = cartpole_agent(capacity=1000)
    trainer = Trainer(agent, env, run_dir=tmp_path, checkpoint_every=150, tensorboard=False)
    trainer.run(300)
    root = tmp_path / "checkpoints"
    block = root / "blocks" / obs_blocks(root / "step-0000000300")[-1]  # rows 200-299
    if damage == "missing":
        block.unlink()
    else:
        block.write_bytes(block.read_bytes()[:-ROW_BYTES])
    with pytest.raises(UsageError, match=f"block .* of memory/replay/obs is {damage}"):
        load_checkpoint(root / "step-0000000300")
    path, (restored, _, _), skipped = load_newest_usable(
        checkpoints_newest_first(RunFolder(tmp_path))
    )
    assert path.name == "step-0000000150" and restored.num_steps == 150
    assert len(skipped) == 1 and "corrupt checkpoint" in skipped[0][1]


@pytest.mark.slow
def test_a_save_interrupted_while_writing_a_block_leaves_no_block_behind(
    small_blocks, monkeypatch, tmp_path
):
    agent, env = cartpole_agent(capacity=1000)
    trainer = Trainer(agent, env, run_dir=tmp_path, checkpoint_every=0, tensorboard=False)
    trainer.run(150)
    root = tmp_path / "checkpoints"
    before = {p.name for p in (root / "blocks").iterdir()}
    agent.num_steps = 151
    agent.replay.obs[0] += 1.0  # block 0 changes: the next save writes it

    def save_half_then_stop(file, array, **kwargs):
        file.write(b"\x93NUMPY half a block")
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint_blocks.np, "save", save_half_then_stop)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(RunFolder(tmp_path), agent, {"state": {}}, keep=2)
    assert {p.name for p in (root / "blocks").iterdir()} == before  # nothing half-written
    assert sorted(p.name for p in root.iterdir()) == ["blocks", "latest", "step-0000000150"]
    restored, _, _ = load_checkpoint(root / "step-0000000150")
    assert len(restored.replay) == 150


@pytest.mark.slow
def test_small_arrays_stay_in_the_checkpoint_folder(tmp_path):
    agent, env = cartpole_agent(capacity=1000)  # default block size: nothing is that large
    Trainer(agent, env, run_dir=tmp_path, checkpoint_every=0, tensorboard=False).run(100)
    root = tmp_path / "checkpoints"
    assert not (root / "step-0000000100" / checkpoint_blocks.MANIFEST_FILE).exists()
    assert not (root / "blocks").exists()


@pytest.mark.slow
def test_a_shared_block_lost_is_a_one_line_error_naming_it(small_blocks, tmp_path):
    agent, env = cartpole_agent(capacity=1000)
    trainer = Trainer(agent, env, run_dir=tmp_path, checkpoint_every=150, tensorboard=False)
    trainer.run(300)
    root = tmp_path / "checkpoints"
    shared = obs_blocks(root / "step-0000000300")[0]  # rows 0-99: both checkpoints list it
    assert shared in obs_blocks(root / "step-0000000150")
    (root / "blocks" / shared).unlink()
    with pytest.raises(UsageError, match=f"block {shared} of memory/replay/obs is missing"):
        load_newest_usable(checkpoints_newest_first(RunFolder(tmp_path)))


@pytest.mark.slow
def test_a_cut_short_block_is_written_again_and_a_step_saved_twice_replaces_the_first(
    small_blocks, tmp_path
):
    agent, env = cartpole_agent(capacity=1000)
    trainer = Trainer(agent, env, run_dir=tmp_path, checkpoint_every=0, tensorboard=False,
                      keep_checkpoints=1)  # fmt: skip
    trainer.run(250)
    root = tmp_path / "checkpoints"
    block = root / "blocks" / obs_blocks(root / "step-0000000250")[1]
    size = block.stat().st_size
    block.write_bytes(block.read_bytes()[: size // 2])  # as after a crash mid-write
    agent.replay.obs[0] += 1.0  # block 0 changes too
    save_checkpoint(RunFolder(tmp_path), agent, {"state": {"step": 250, "episodes": 0}}, keep=1)
    assert block.stat().st_size == size  # rewritten whole, not trusted for its name
    restored, _, _ = load_checkpoint(root / "step-0000000250")
    np.testing.assert_array_equal(restored.replay.obs, agent.replay.obs)
    # keep=1: one checkpoint, and only the blocks it lists (the old block 0 is gone)
    assert sorted(p.name for p in root.iterdir()) == ["blocks", "latest", "step-0000000250"]
    listed = {n for entry in manifest(root / "step-0000000250").values() for n in entry["blocks"]}
    assert {p.name for p in (root / "blocks").iterdir()} == listed


@pytest.mark.slow
def test_a_manifest_of_the_wrong_shape_keeps_every_block_and_saving_goes_on(small_blocks, tmp_path):
    agent, env = cartpole_agent(capacity=1000)
    trainer = Trainer(agent, env, run_dir=tmp_path, checkpoint_every=100, tensorboard=False,
                      keep_checkpoints=3)  # fmt: skip
    trainer.run(200)
    root = tmp_path / "checkpoints"
    (root / "step-0000000100" / checkpoint_blocks.MANIFEST_FILE).write_text("[1, 2]")
    agent.replay.obs[:100] += 1.0  # the next save makes block 0 of step-200 unlisted
    before = {p.name for p in (root / "blocks").iterdir()}
    agent.num_steps = 201
    save_checkpoint(RunFolder(tmp_path), agent, {"state": {"step": 201, "episodes": 0}}, keep=3)
    assert before < {p.name for p in (root / "blocks").iterdir()}  # nothing was deleted
    with pytest.raises(UsageError, match="corrupt checkpoint"):
        load_checkpoint(root / "step-0000000100")
