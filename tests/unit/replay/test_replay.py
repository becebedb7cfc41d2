from dataclasses import astuple as _astuple

import gymnasium as gym
import numpy as np
import pytest

from rlkit import ReplayMemory


def astuple(batch) -> tuple:
    """A batch's transitions: (obs, actions, rewards, next_obs, terminated, truncated)."""
    return _astuple(batch)[:6]


def fill(memory, n, start=0):
    for i in range(start, start + n):
        memory.add([i, -i], i % 2, float(i), [i + 1, -i - 1], i % 3 == 0, i % 5 == 0)


def test_sized_from_spaces_with_their_dtypes():
    env = gym.make("CartPole-v1")
    memory = ReplayMemory.from_spaces(10, env.observation_space, env.action_space)
    assert memory.obs.shape == (10, 4) and memory.obs.dtype == np.float32
    assert memory.next_obs.shape == (10, 4)  # rebuilt for inspection, not a second array
    assert memory.actions.shape == (10,) and memory.actions.dtype == np.int64
    assert memory.rewards.dtype == np.float32
    assert memory.terminated.dtype == bool and memory.truncated.dtype == bool
    box = gym.spaces.Box(-1, 1, (3,), np.float32)
    memory = ReplayMemory.from_spaces(5, env.observation_space, box)
    assert memory.actions.shape == (5, 3) and memory.actions.dtype == np.float32


def test_capacity_and_wrap_around_overwrite_oldest():
    memory = ReplayMemory(4, obs_shape=(2,))
    fill(memory, 3)
    assert len(memory) == 3
    fill(memory, 3, start=3)  # transitions 0..5 into 4 slots
    assert len(memory) == 4
    assert sorted(memory.rewards.tolist()) == [2.0, 3.0, 4.0, 5.0]
    ordered = memory.ordered()
    np.testing.assert_array_equal(ordered.rewards, [2, 3, 4, 5])
    np.testing.assert_array_equal(ordered.obs[:, 0], [2, 3, 4, 5])
    np.testing.assert_array_equal(ordered.next_obs[:, 0], [3, 4, 5, 6])


def test_add_batch_wraps_like_add():
    one, many = ReplayMemory(5, obs_shape=(2,)), ReplayMemory(5, obs_shape=(2,))
    fill(one, 7)
    i = np.arange(7)
    obs = np.stack([i, -i], axis=1)
    many.add_batch(obs[:4], i[:4] % 2, i[:4], obs[:4] + [1, -1], i[:4] % 3 == 0, i[:4] % 5 == 0)
    many.add_batch(obs[4:], i[4:] % 2, i[4:], obs[4:] + [1, -1], i[4:] % 3 == 0, i[4:] % 5 == 0)
    for name in ("obs", "actions", "rewards", "next_obs", "terminated", "truncated"):
        np.testing.assert_array_equal(getattr(one, name), getattr(many, name))


def test_terminated_and_truncated_kept_apart():
    memory = ReplayMemory(3, obs_shape=(1,))
    memory.add([0], 0, 1.0, [1], True, False)
    memory.add([1], 1, 1.0, [2], False, True)
    memory.add([2], 0, 1.0, [3], False, False)
    batch = memory.ordered()
    np.testing.assert_array_equal(batch.terminated, [True, False, False])
    np.testing.assert_array_equal(batch.truncated, [False, True, False])


def test_seeded_sampling_is_reproducible_and_uniform_over_held():
    a, b = ReplayMemory(100, obs_shape=(2,), seed=7), ReplayMemory(100, obs_shape=(2,), seed=7)
    fill(a, 30)
    fill(b, 30)
    x, y = a.sample(16, num_batches=3), b.sample(16, num_batches=3)
    assert x.obs.shape == (3, 16, 2) and x.rewards.shape == (3, 16)
    np.testing.assert_array_equal(x.rewards, y.rewards)
    # only the 30 written slots are ever drawn, and a sample keeps rows together
    assert x.rewards.max() < 30
    np.testing.assert_array_equal(x.obs[..., 0], x.rewards)
    np.testing.assert_array_equal(x.next_obs[..., 0], x.rewards + 1)
    c = ReplayMemory(100, obs_shape=(2,), seed=8)
    fill(c, 30)
    assert not np.array_equal(c.sample(16).rewards, a.sample(16).rewards)


def test_sample_larger_than_held_is_a_clear_error():
    memory = ReplayMemory(100, obs_shape=(2,))
    fill(memory, 5)
    with pytest.raises(ValueError, match="holds 5"):
        memory.sample(6)


def test_clear_and_state_round_trip():
    memory = ReplayMemory(4, obs_shape=(2,), seed=1)
    fill(memory, 6)
    state = {k: np.copy(v) for k, v in memory.state_dict().items()}
    expected = memory.sample(3).rewards
    other = ReplayMemory(4, obs_shape=(2,), seed=99)
    other.load_state_dict(state)
    np.testing.assert_array_equal(other.sample(3).rewards, expected)
    memory.clear()
    assert len(memory) == 0


def test_one_million_cartpole_transitions_fit_in_100_mb():
    memory = ReplayMemory(1_000_000, obs_shape=(4,))
    assert memory.nbytes < 100 * 2**20


# -- observations of any shape, each stored once ------------------------------------------------
IMAGE = (84, 84, 4)


class NaiveReplay:
    """The reference: both observations of every transition, copied as given."""

    def __init__(self, capacity):
        self.capacity, self.rows, self.next = capacity, [None] * capacity, 0

    def add(self, *row):
        self.rows[self.next] = tuple(np.copy(x) for x in row)
        self.next = (self.next + 1) % self.capacity

    def at(self, slots):
        return [np.stack([self.rows[s][k] for s in slots]) for k in range(6)]


def image_stream(n, seed=0, episode=7, frames_equal_reset=False):
    """``n`` transitions of one environment: episodes of ``episode`` steps, each ending
    (alternately terminated / truncated) with a final frame never seen again; the next
    episode starts from a fresh reset frame."""
    rng = np.random.default_rng(seed)
    frame = lambda: rng.integers(0, 256, IMAGE, dtype=np.uint8)  # noqa: E731
    obs, t = frame(), 0
    for i in range(n):
        t += 1
        next_obs = frame()
        end = t == episode
        yield obs, i % 4, float(i), next_obs, end and i % 2 == 0, end and i % 2 == 1
        if end:
            obs, t = (next_obs.copy() if frames_equal_reset else frame()), 0
        else:
            obs = next_obs


def test_uint8_images_round_trip_exactly_through_wrap_around_and_episode_ends():
    memory = ReplayMemory(50, IMAGE, np.uint8, seed=0)
    naive = NaiveReplay(50)
    for row in image_stream(133):  # wraps 2.66 times; 19 episode ends
        memory.add(*row)
        naive.add(*row)
    assert memory.obs.dtype == np.uint8 and len(memory) == 50
    slots = np.arange(50)
    batch = memory._gather(slots)
    for got, want in zip(astuple(batch), naive.at(slots), strict=True):
        np.testing.assert_array_equal(got, want)
    # the final observation of every terminated or truncated episode is the one given
    ends = np.flatnonzero(batch.terminated | batch.truncated)
    assert len(ends) >= 6
    # most next observations are not stored again: one side slot per episode end (+1)
    assert np.count_nonzero(memory.next_kind == 1) <= len(ends) + 1
    # a sampled [K, B] batch keeps its rows together
    sample = memory.sample(8, num_batches=3)
    for k in range(3):
        for b in range(8):
            (slot,) = np.flatnonzero(memory.rewards == sample.rewards[k, b])
            ref = naive.at([slot])
            np.testing.assert_array_equal(sample.obs[k, b], ref[0][0])
            np.testing.assert_array_equal(sample.next_obs[k, b], ref[3][0])


def test_vector_env_streams_link_within_each_stream():
    n, memory = 3, ReplayMemory(40, IMAGE, np.uint8)
    streams = [list(image_stream(12, seed=s, episode=5)) for s in range(n)]
    naive = NaiveReplay(40)
    for t in range(12):
        rows = [streams[j][t] for j in range(n)]
        memory.add_batch(*(np.stack([r[k] for r in rows]) for k in range(6)))
        for r in rows:
            naive.add(*r)
    slots = np.arange(36)
    for got, want in zip(astuple(memory._gather(slots)), naive.at(slots), strict=True):
        np.testing.assert_array_equal(got, want)
    assert np.count_nonzero(memory.next_kind == 1) < 36 // 2


def test_transitions_that_do_not_chain_keep_their_own_next_observation():
    memory = ReplayMemory(8, obs_shape=(2,))
    memory.add([0, 0], 0, 0.0, [5, 5], False, False)
    memory.add([1, 1], 0, 1.0, [2, 2], False, False)  # does not start at [5, 5]
    memory.add([2, 2], 0, 2.0, [3, 3], False, False)  # starts where the last one ended
    np.testing.assert_array_equal(memory.ordered().next_obs, [[5, 5], [2, 2], [3, 3]])
    np.testing.assert_array_equal(memory.next_kind[:3], [1, 0, 1])
    # linking is bit for bit: -0.0 == 0.0 as numbers, but a next observation of 0.0 stays 0.0
    memory.add([-0.0, 1], 0, 3.0, [7, 7], False, False)
    memory.add([7, 7], 0, 4.0, [0.0, 1], False, False)
    memory.add([-0.0, 1], 0, 5.0, [8, 8], False, False)
    assert np.signbit(memory.ordered().next_obs[4, 0]) == np.False_


def test_state_round_trip_with_side_store_and_from_the_old_two_copy_format():
    memory = ReplayMemory(30, IMAGE, np.uint8, seed=3)
    for row in image_stream(47, seed=2, episode=4):
        memory.add(*row)
    state = {k: np.copy(v) for k, v in memory.state_dict().items()}
    restored = ReplayMemory(30, IMAGE, np.uint8, seed=0)
    restored.load_state_dict(state)
    for a, b in zip(astuple(memory.sample(5, 2)), astuple(restored.sample(5, 2)), strict=True):
        np.testing.assert_array_equal(a, b)
    # both go on linking the same way
    extra = list(image_stream(3, seed=9))
    for m in (memory, restored):
        for row in extra:
            m.add(*row)
    np.testing.assert_array_equal(memory.next_obs, restored.next_obs)
    # a checkpoint of the code before the side store held next_obs as a second array
    old = {k: v for k, v in state.items() if k not in ("next_kind", "next_ref", "side_obs")}
    legacy = ReplayMemory(30, IMAGE, np.uint8)
    legacy.load_state_dict(state)
    old["next_obs"] = legacy.next_obs[: len(legacy)]
    from_old = ReplayMemory(30, IMAGE, np.uint8)
    from_old.load_state_dict(old)
    np.testing.assert_array_equal(from_old.next_obs, legacy.next_obs)
    np.testing.assert_array_equal(from_old.obs, legacy.obs)


def test_atari_sized_memory_holds_one_copy_of_each_observation():
    space = gym.spaces.Box(0, 255, IMAGE, np.uint8)
    memory = ReplayMemory.from_spaces(4096, space, gym.spaces.Discrete(4))
    per_transition = memory.nbytes / memory.capacity
    assert np.prod(IMAGE) <= per_transition <= 30_000  # one uint8 copy is 28,224 bytes
    assert memory.nbytes == ReplayMemory.bytes_needed(4096, IMAGE, np.uint8)
    million = ReplayMemory.bytes_needed(1_000_000, IMAGE, np.uint8)
    print(f"1M 84x84x4 uint8 transitions: {million / 1e9:.2f} GB")
    assert million <= 30_000 * 1_000_000


# -- frames stored once ------------------------------------------------------------------------
FRAME = (6, 5)


def stacked_stream(n, seed=0, history=4, max_len=9):
    """``n`` transitions of one env whose observations are zero-padded frame stacks (as
    FrameStackObservation(padding_type="zero") makes them), episodes of random lengths."""
    rng = np.random.default_rng(seed)
    frame = lambda: rng.integers(1, 256, FRAME, dtype=np.uint8)  # noqa: E731
    stack = np.zeros((*FRAME, history), np.uint8)
    stack[..., -1] = frame()
    length = rng.integers(1, max_len)
    t = 0
    for i in range(n):
        next_stack = np.concatenate([stack[..., 1:], frame()[..., None]], axis=-1)
        t += 1
        end = t >= length
        yield stack, i % 3, float(i), next_stack, end and i % 2 == 0, end and i % 2 == 1
        if end:
            stack = np.zeros_like(stack)
            stack[..., -1] = frame()
            length, t = rng.integers(1, max_len), 0
        else:
            stack = next_stack


def test_frame_replay_rebuilds_exactly_the_stacks_it_was_given():
    from rlkit.replay.frames import FrameReplay

    memory = FrameReplay(40, (*FRAME, 4), np.uint8, seed=0)
    naive = NaiveReplay(40)
    for row in stacked_stream(157):  # wraps ~4 times, many episode starts
        memory.add(*row)
        naive.add(*row)
    assert memory.obs.shape == (40, *FRAME)  # one frame per transition
    slots = np.arange(40)
    _, valid = memory._history(slots)
    for got, want, ok in zip(astuple(memory._gather(slots))[0], naive.at(slots)[0], valid,
                             strict=True):  # fmt: skip
        if ok:
            np.testing.assert_array_equal(got, want)  # zero padding included
    # the only transitions not sampled are the oldest, whose stacks reach overwritten frames
    assert 0 < (~valid).sum() <= 3
    for got, want in zip(astuple(memory._gather(slots[valid])), naive.at(slots[valid]),
                         strict=True):  # fmt: skip
        np.testing.assert_array_equal(got, want)
    sample = memory.sample(16, num_batches=20)
    for k in range(20):
        for b in range(16):
            (slot,) = np.flatnonzero(memory.rewards == sample.rewards[k, b])
            assert valid[slot]
            np.testing.assert_array_equal(sample.obs[k, b], naive.at([slot])[0][0])
            np.testing.assert_array_equal(sample.next_obs[k, b], naive.at([slot])[3][0])


def test_frame_replay_with_vector_streams_and_state_round_trip():
    from rlkit.replay.frames import FrameReplay

    streams = [list(stacked_stream(30, seed=s)) for s in range(3)]
    memory, naive = FrameReplay(60, (*FRAME, 4), np.uint8, seed=4), NaiveReplay(60)
    for t in range(30):
        rows = [streams[j][t] for j in range(3)]
        memory.add_batch(*(np.stack([r[k] for r in rows]) for k in range(6)))
        for r in rows:
            naive.add(*r)
    slots = np.arange(60)
    _, valid = memory._history(slots)
    for got, want in zip(astuple(memory._gather(slots[valid])), naive.at(slots[valid]),
                         strict=True):  # fmt: skip
        np.testing.assert_array_equal(got, want)
    state = {k: np.copy(v) for k, v in memory.state_dict().items()}
    restored = FrameReplay(60, (*FRAME, 4), np.uint8, seed=0)
    restored.load_state_dict(state)
    for a, b in zip(astuple(memory.sample(8, 3)), astuple(restored.sample(8, 3)), strict=True):
        np.testing.assert_array_equal(a, b)


def test_frame_replay_refuses_what_is_not_a_frame_stack():
    from rlkit.replay.frames import FrameReplay

    memory = FrameReplay(10, (*FRAME, 4), np.uint8)
    full = np.ones((*FRAME, 4), np.uint8)
    with pytest.raises(ValueError, match="zero-padded"):
        memory.add(full, 0, 0.0, full, False, False)


def test_one_million_atari_transitions_fit_in_7_2_gb():
    from rlkit.replay.frames import FrameReplay

    million = FrameReplay.bytes_needed(1_000_000, IMAGE, np.uint8)
    print(f"1M Atari transitions, frames stored once: {million / 1e9:.3f} GB")
    assert million <= 7.2e9
    memory = FrameReplay(2048, IMAGE, np.uint8)
    assert memory.nbytes == FrameReplay.bytes_needed(2048, IMAGE, np.uint8)
