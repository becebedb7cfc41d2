"""The on-policy rollout store (rlkit/replay/rollout.py): its order, its cut episodes and its
checkpoint mid-rollout."""

from __future__ import annotations

import numpy as np
import pytest

from rlkit.replay.rollout import Rollout


def obs(stream: int, k: int) -> np.ndarray:
    """An observation naming its stream and step: ``[stream, k]``."""
    return np.array([stream, k], np.float32)


def two_streams(n_steps: int = 3) -> Rollout:
    rollout = Rollout(n_steps, (2,), np.float32)
    rollout.start_batch(np.stack([obs(0, 0), obs(1, 0)]), [0, 1])
    return rollout


def step(rollout: Rollout, k: int, terminated=(False, False), truncated=(False, False)):
    rollout.append_batch(np.array([k, 10 + k]), np.array([k, -k], np.float32),
                         np.stack([obs(0, k + 1), obs(1, k + 1)]), np.array(terminated),
                         np.array(truncated))  # fmt: skip


def test_steps_are_kept_t_by_n_in_order_with_their_next_observations():
    rollout = two_streams()
    step(rollout, 0)
    step(rollout, 1, truncated=(True, False))  # stream 0's episode ends by truncation
    rollout.start(0, obs(0, 50))  # its reset
    assert not rollout.full and len(rollout) == 4
    step(rollout, 2, terminated=(False, True))
    assert rollout.full and len(rollout) == 6
    batch = rollout.batch()
    assert batch.obs.shape == (3, 2, 2)
    np.testing.assert_array_equal(batch.obs[:, 0], [obs(0, 0), obs(0, 1), obs(0, 50)])
    np.testing.assert_array_equal(batch.obs[:, 1], [obs(1, 0), obs(1, 1), obs(1, 2)])
    # the truncated step keeps its final observation, not the reset that followed
    np.testing.assert_array_equal(batch.next_obs[1, 0], obs(0, 2))
    np.testing.assert_array_equal(batch.next_obs[2], [obs(0, 3), obs(1, 3)])  # the last row
    np.testing.assert_array_equal(batch.actions, [[0, 10], [1, 11], [2, 12]])
    np.testing.assert_array_equal(batch.rewards, [[0, 0], [1, -1], [2, -2]])
    np.testing.assert_array_equal(batch.truncated, [[0, 0], [1, 0], [0, 0]])
    np.testing.assert_array_equal(batch.terminated, [[0, 0], [0, 0], [0, 1]])
    assert rollout.in_progress(0) and not rollout.in_progress(1)
    with pytest.raises(ValueError, match="already has its 3 steps"):
        step(rollout, 3)


def test_clear_keeps_each_streams_episode_going():
    rollout = two_streams(n_steps=1)
    step(rollout, 0)
    rollout.clear()
    assert len(rollout) == 0 and rollout.in_progress(0) and rollout.in_progress(1)
    step(rollout, 1)
    np.testing.assert_array_equal(rollout.batch().obs[0], [obs(0, 1), obs(1, 1)])


def test_an_episode_cut_before_it_ended_is_marked_truncated():
    rollout = Rollout(4, (2,), np.float32)
    rollout.start(0, obs(0, 0))
    rollout.append(0, 1, 1.0, obs(0, 1), False, False)
    rollout.continue_or_start(0, obs(0, 1))  # the same observation: the episode goes on
    rollout.append(0, 1, 1.0, obs(0, 2), False, False)
    assert not rollout.truncated[:, 0].any()
    rollout.continue_or_start(0, obs(0, 77))  # another one: the episode was cut
    assert rollout.truncated[:, 0].tolist() == [False, True, False, False]
    np.testing.assert_array_equal(rollout.next_obs[1, 0], obs(0, 2))


def test_a_checkpoint_mid_rollout_goes_on_exactly():
    rollout = two_streams(n_steps=3)
    step(rollout, 0)
    step(rollout, 1, terminated=(True, False))
    saved = {k: v.copy() for k, v in rollout.state_dict().items()}
    restored = Rollout(3, (2,), np.float32)
    restored.load_state_dict(saved)
    for store in (rollout, store2 := restored):
        store.start(0, obs(0, 40))
        step(store, 2)
    assert store2.full
    for a, b in zip(rollout.batch(), restored.batch(), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(rollout.current, restored.current)
    with pytest.raises(ValueError, match="shape"):
        Rollout(5, (2,), np.float32).load_state_dict(saved)


def test_image_observations_are_kept_in_their_own_dtype():
    """Atari's uint8 frames stay uint8 (1 byte a pixel, obs and next_obs alike), bit for bit
    what the streams gave; 8 streams x 128 steps of 84x84x4 frames are 57.8 MB both."""
    rng = np.random.default_rng(0)
    rollout = Rollout(4, (84, 84, 4), np.uint8)
    frames = rng.integers(0, 256, (5, 2, 84, 84, 4), dtype=np.uint8)
    rollout.start_batch(frames[0], [0, 1])
    for k in range(4):
        rollout.append_batch(np.array([k, k]), np.zeros(2, np.float32), frames[k + 1],
                             np.zeros(2, bool), np.zeros(2, bool))  # fmt: skip
    batch = rollout.batch()
    assert batch.obs.dtype == batch.next_obs.dtype == rollout.current.dtype == np.uint8
    np.testing.assert_array_equal(batch.obs, frames[:4])
    np.testing.assert_array_equal(batch.next_obs, frames[1:])
    rollout.continue_or_start_batch(frames[4])  # the same frames: the episodes go on
    assert rollout.in_progress(0) and not rollout.truncated.any()
    big = Rollout(128, (84, 84, 4), np.uint8)
    big.start_batch(np.zeros((8, 84, 84, 4), np.uint8), range(8))
    frame_bytes = 2 * 128 * 8 * 84 * 84 * 4
    assert big.obs.nbytes == frame_bytes // 2 and frame_bytes == 57_802_752
    assert frame_bytes < big.nbytes < frame_bytes + 8 * 84 * 84 * 4 + 20_000
    boards = Rollout(2, (10, 10, 4), bool)  # MinAtar's bool boards stay bool
    boards.start(0, np.ones((10, 10, 4), bool))
    assert boards.current.dtype == bool and boards.obs.dtype == bool


@pytest.mark.parametrize("action_shape, action_dtype", [((), np.int64), ((2,), np.float32)])
def test_append_batch_writes_a_whole_row_as_append_writes_it_stream_by_stream(
    action_shape, action_dtype, monkeypatch
):
    rng = np.random.default_rng(3)
    n, t_max = 4, 3
    row_wise = Rollout(t_max, (3,), np.float32, action_shape, action_dtype)
    by_stream = Rollout(t_max, (3,), np.float32, action_shape, action_dtype)
    first = rng.normal(size=(n, 3))
    row_wise.start_batch(first, range(n))
    by_stream.start_batch(first, range(n))
    calls = []
    monkeypatch.setattr(row_wise, "append", lambda *a: calls.append(a))  # the row path only
    for step in range(t_max):
        actions = (rng.integers(0, 5, size=n) if action_dtype == np.int64
                   else rng.normal(size=(n, 2)))  # fmt: skip
        rewards = rng.normal(size=n).astype(np.float32)
        next_obs = rng.normal(size=(n, 3))  # float64: stored as float32 either way
        terminated = np.array([step == 1, False, False, step == 0])
        truncated = np.array([False, step == 2, False, step == 0])
        row_wise.append_batch(actions, rewards, next_obs, terminated, truncated)
        for j in range(n):
            by_stream.append(j, actions[j], rewards[j], next_obs[j], bool(terminated[j]),
                             bool(truncated[j]))  # fmt: skip
        ended = np.flatnonzero(terminated | truncated)
        restart = rng.normal(size=(len(ended), 3))
        row_wise.start_batch(restart, ended)
        by_stream.start_batch(restart, ended)
    assert calls == [] and row_wise.full
    mine, theirs = row_wise.state_dict(), by_stream.state_dict()
    assert mine.keys() == theirs.keys()
    for key in mine:
        assert mine[key].dtype == theirs[key].dtype, key
        assert mine[key].tobytes() == theirs[key].tobytes(), key


def test_append_batch_goes_stream_by_stream_where_the_streams_differ():
    rollout = Rollout(2, (1,), np.float32)
    rollout.start_batch(np.zeros((2, 1)), [0, 1])
    rollout.append(0, 1, 1.0, [1.0], False, False)  # stream 0 one step ahead
    rollout.append_batch(np.array([2, 3]), np.array([2.0, 3.0], np.float32), np.ones((2, 1)),
                         np.array([False, False]), np.array([False, False]))  # fmt: skip
    assert rollout.filled.tolist() == [2, 1]
    assert rollout.actions.tolist() == [[1, 3], [2, 0]]
    with pytest.raises(ValueError, match="already has its 2 steps"):
        rollout.append_batch(np.array([4, 5]), np.zeros(2, np.float32), np.ones((2, 1)),
                             np.array([False, False]), np.array([False, False]))  # fmt: skip
