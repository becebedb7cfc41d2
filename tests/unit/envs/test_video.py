"""Videos show the game: MinAtar's own colours, scaled up, without gymnasium warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("minatar")

from rlkit.envs.minatar_frames import SCALE, minatar_frame, minatar_palette  # noqa: E402
from rlkit.run.video import record_frames  # noqa: E402

pytestmark = [pytest.mark.atari]


class FixedAction:
    """A stand-in for a trained agent: always the same action."""

    def __init__(self, action: int = 0) -> None:
        self.action = action

    def act(self, obs, explore: bool = True) -> int:
        return self.action


def test_minatar_frame_is_the_state_in_minatar_colours_scaled_up():
    state = np.zeros((10, 10, 4), bool)
    state[2, 3, 0] = True
    state[5, 5, 1] = state[5, 5, 3] = True  # two channels set: the last one's colour shows
    frame = minatar_frame(state, scale=4)
    palette = minatar_palette(4)
    assert frame.shape == (40, 40, 3) and frame.dtype == np.uint8
    assert (frame[8:12, 12:16] == palette[1]).all()  # cell (2, 3), channel 0, as a 4x4 block
    assert (frame[20:24, 20:24] == palette[4]).all()
    assert (frame[:8] == 0).all()  # empty cells are black
    assert len({tuple(c) for c in palette}) == 5 and tuple(palette[0]) == (0, 0, 0)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["MinAtar/Breakout-v0", "MinAtar/Freeway-v1"])
def test_minatar_video_frames_show_the_game_without_warnings(env_id):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frames, returns = record_frames(FixedAction(), env_id, episodes=1, seed=0)
    gym_warnings = [str(w.message) for w in caught if "gymnasium" in w.filename]
    assert gym_warnings == []
    assert len(frames) > 1 and len(returns) == 1
    for frame in frames[:5]:
        assert frame.shape == (10 * SCALE, 10 * SCALE, 3) and frame.dtype == np.uint8
        assert frame.max() > 64  # coloured cells, not a black (or 0..1 float) picture
        assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 2
    assert any(not np.array_equal(frames[0], f) for f in frames[1:])  # the game moves


def test_minatar_training_env_is_untouched():
    from rlkit.envs.make import make_env

    env = make_env("MinAtar/Breakout-v0")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (10, 10, 4) and env.render_mode is None
