"""Atari as DeepMind's DQN3.0 played it, and MinAtar, as gymnasium environments.

``make_atari(env_id, training)`` builds, for an ``ALE/...`` id (the ``atari`` extra:
ale-py ships the ROMs):

1. the ALE game with frame skip 1, no sticky actions, the minimal action set
   (``ALE/Breakout-v5`` with these settings is ``BreakoutNoFrameskip-v4``);
2. gymnasium's ``AtariPreprocessing``: 1-30 random no-op *frames* after a reset (DQN3.0's
   ``random_starts``: ``nextRandomGame`` steps single frames), action repeat 4 with the max
   over the last two frames, grey, 84x84 (``cv2.INTER_AREA``), uint8; no FIRE on reset
   (DQN3.0 never pressed it; ``fire_reset=True`` presses it, as SB3's ``AtariWrapper``:
   :class:`FireReset`, the PPO Atari preset's);
3. in training only, :class:`LifeLossTerminal`: a lost life ends the *training* episode
   (``terminated``) without resetting the game; the next ``reset`` plays 1-30 no-op frames
   in the same game, as DQN3.0's ``newGame``/``nextRandomGame`` do after a life loss.
   Evaluation plays whole games;
4. a history of 4 frames, zero-padded at every episode start (also after a lost life),
   channels last: observations ``[84, 84, 4]`` uint8.

Rewards are left as the game gives them (episode returns are game scores); DQN3.0's
clip to [-1, 1] is the agent's ``reward_clip = 1`` (the ``dqn3`` preset), applied to what
is stored in replay.

``MinAtar/<Game>-v0`` / ``-v1`` ids (the ``minatar`` package) are registered on first use;
their observations are ``[10, 10, channels]`` bool images, sticky actions 0.1 (the paper's).
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np

HISTORY = 4
SCREEN = 84
NOOP_MAX = 30
FRAME_SKIP = 4


def register(env_id: str) -> None:
    """Register the ids of the package ``env_id`` belongs to (ALE or MinAtar), if installed."""
    if env_id.startswith("ALE/"):
        import ale_py

        ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)  # no banner per env
        gym.register_envs(ale_py)
    elif env_id.startswith("MinAtar/"):
        import minatar.gym

        if not any(k.startswith("MinAtar/") for k in gym.registry):
            minatar.gym.register_envs()
        # the -v0 ids (all 6 actions) are the paper's setting, chosen on purpose: gymnasium's
        # "out of date, consider upgrading to v1" would only confuse
        warnings.filterwarnings("ignore", message=r".*The environment MinAtar/\S+ is out of date")


def make_atari(
    env_id: str,
    training: bool = True,
    life_loss_terminal: bool = True,
    noop_max: int = NOOP_MAX,
    fire_reset: bool = False,
    **kwargs,
):
    """The DQN3.0 Atari pipeline for ``env_id`` (see the module docstring).

    Other protocols for comparisons: ``life_loss_terminal=False`` trains on whole games,
    ``noop_max=0`` starts without random no-ops, ``fire_reset=True`` presses FIRE after
    every reset (:class:`FireReset`, SB3's ``AtariWrapper``; games without FIRE are left as
    they are), and keyword arguments go to ``gymnasium.make`` (e.g.
    ``repeat_action_probability=0.25``: sticky actions). Dopamine's DQN baseline is
    ``life_loss_terminal=False, noop_max=0, repeat_action_probability=0.25``.
    """
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    if noop_max < 0:
        raise ValueError(f"noop_max is a number of no-op frames (0 for none), got {noop_max}")
    register(env_id)
    settings = {"frameskip": 1, "repeat_action_probability": 0.0, "full_action_space": False}
    env = gym.make(env_id, **{**settings, **kwargs})
    env = AtariPreprocessing(
        env, noop_max=noop_max, frame_skip=FRAME_SKIP, screen_size=SCREEN,
        terminal_on_life_loss=False, grayscale_obs=True, scale_obs=False,
    )  # fmt: skip
    if training and life_loss_terminal:
        env = LifeLossTerminal(env)
    if fire_reset and has_fire(env):  # (after a lost life too: over LifeLossTerminal)
        env = FireReset(env)
    env = FrameStackObservation(env, HISTORY, padding_type="zero")
    return ChannelsLast(env)


def ale_of(env: gym.Env) -> Any:
    """The ALE interface (``ale_py.ALEInterface``, untyped) of an Atari env under wrappers."""
    atari_env: Any = env.unwrapped  # (ale_py's AtariEnv)
    return atari_env.ale


def has_fire(env: gym.Env) -> bool:
    """Does the game press FIRE with action 1 (SB3's ``AtariWrapper`` test: FIRE among its
    actions; ``FireResetEnv`` asserts it is action 1 of at least 3)?"""
    meanings = list(env.unwrapped.get_action_meanings())  # type: ignore[attr-defined]
    return len(meanings) >= 3 and meanings[1] == "FIRE"


class FireReset(gym.Wrapper):
    """FIRE after each reset, as SB3's (and baselines') ``FireResetEnv``: ``reset`` resets,
    then steps action 1 (FIRE) and action 2, resetting again where either step ends the
    episode; the steps' rewards are not reported (their frames count in the game's
    ``game_return``). Games such as Breakout wait for FIRE to launch the ball: over
    :class:`LifeLossTerminal` (training) it fires after every lost life too.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        if not has_fire(env):
            meanings = env.unwrapped.get_action_meanings()  # type: ignore[attr-defined]
            raise ValueError(f"FireReset needs FIRE as action 1 of at least 3, got {meanings}")

    def reset(self, *, seed=None, options=None):
        self.env.reset(seed=seed, options=options)
        obs = None
        for action in (1, 2):
            obs, _, terminated, truncated, _ = self.env.step(action)
            if terminated or truncated:
                obs, _ = self.env.reset(options=options)
        return obs, {}


class ChannelsLast(gym.ObservationWrapper):
    """Observations ``[C, H, W]`` -> ``[H, W, C]`` (contiguous): TF's CPU convolutions want
    NHWC."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, gym.spaces.Box):
            raise TypeError(f"ChannelsLast takes a Box observation, got {space}")
        self.observation_space = gym.spaces.Box(
            np.moveaxis(space.low, 0, -1), np.moveaxis(space.high, 0, -1), dtype=space.dtype
        )

    def observation(self, observation):
        return np.ascontiguousarray(np.moveaxis(observation, 0, -1))


class LifeLossTerminal(gym.Wrapper):
    """DQN3.0's training rule: a lost life is terminal for learning, not a new game.

    ``step`` reports ``terminated=True`` when a life is lost (``info["life_lost"]``);
    the following ``reset`` does not reset the game: it plays 1-30 random no-op frames
    (as after a real reset) and returns the screen, so the agent starts a new training
    episode, with a zero-padded history, in the same game. When the game is really over,
    ``reset`` resets it. Wraps gymnasium's ``AtariPreprocessing``.

    The step on which a game really ends also reports the whole game in its ``info``:
    ``game_return`` (the game's score, all lives) and ``game_length`` (agent steps), the
    training measure Atari results such as Dopamine's are given in.
    """

    # class defaults: an env pickled (checkpointed) by an rlkit without game figures counts
    # its game in progress from the resume on
    game_return = 0.0
    game_length = 0

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.lives = 0
        self.life_lost = False

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.game_return += float(reward)
        self.game_length += 1
        lives = ale_of(self.env).lives()
        self.life_lost = lives < self.lives and not (terminated or truncated)
        self.lives = lives
        info["life_lost"] = self.life_lost
        if terminated or truncated:
            info["game_return"], info["game_length"] = self.game_return, self.game_length
        return obs, reward, terminated or self.life_lost, truncated, info

    def reset(self, *, seed=None, options=None):
        new_game = not self.life_lost or seed is not None
        if new_game:
            obs, info = self.env.reset(seed=seed, options=options)
        else:
            obs, info, new_game, noop_reward = _noop_frames(self.env)
            self.game_return += noop_reward  # the game's score counts every frame
        if new_game:
            self.game_return, self.game_length = 0.0, 0
        self.life_lost = False
        self.lives = ale_of(self.env).lives()
        return obs, info


def _noop_frames(preprocessing):
    """1-30 single no-op frames in the running game, then the screen as
    ``AtariPreprocessing.reset`` returns it (without resetting the game).

    Returns ``(obs, info, new_game, reward)``: ``new_game`` when the game ended during the
    no-ops and was reset; ``reward`` what the no-op frames scored."""
    base = preprocessing.env
    noop_max = preprocessing.noop_max
    noops = base.unwrapped.np_random.integers(1, noop_max + 1) if noop_max > 0 else 0
    info: dict = {}
    reward = 0.0
    for _ in range(noops):
        _, frame_reward, terminated, truncated, info = base.step(0)
        reward += float(frame_reward)
        if terminated or truncated:  # the game ended during the no-ops: a real new game
            return *preprocessing.reset(), True, 0.0
    preprocessing.ale.getScreenGrayscale(preprocessing.obs_buffer[0])
    preprocessing.obs_buffer[1].fill(0)
    return preprocessing._get_obs(), info, False, reward
