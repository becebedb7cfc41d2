"""Breakout for Dopamine 4.1.2's legacy-TF Runner, emulated by today's ale-py (0.12).

Dopamine's published DQN baseline ran ``gym.make('BreakoutNoFrameskip-v0').env`` (old gym,
atari-py) wrapped in ``atari_lib.AtariPreprocessing``. This builds the same environment from
ale-py's own ``AtariEnv`` (the class behind every ``ALE/*`` and ``*NoFrameskip-v0`` id):

* ``frameskip=1``: AtariPreprocessing does the 4-frame skip and the max-pool of the last two
  frames itself;
* ``repeat_action_probability=0.25``: sticky actions, as the v0 ids (Dopamine's
  ``sticky_actions=True``);
* ``full_action_space=False``: the minimal action set (4 actions for Breakout);
* no frame cap in the emulator (``max_num_frames_per_episode`` unset) and no TimeLimit:
  Dopamine strips gym's TimeLimit (``env.env``) and caps games with the Runner's
  ``max_steps_per_episode = 27000`` agent steps (108k frames) instead;
* the ALE's RNG (sticky actions) is seeded with the run's seed.

``LegacyGymAtari`` gives it the old gym API that AtariPreprocessing uses with
``use_legacy_gym=True``: ``reset() -> obs``, ``step(a) -> (obs, reward, game_over, info)``,
``.env.ale`` (AtariPreprocessing reads the screen and lives from ``environment.env.ale``),
``.action_space``, ``.observation_space``, ``seed()``. ``game_over`` is the ALE's
``game_over()`` (no truncation can happen without a frame cap).
"""

from __future__ import annotations

import numpy as np


class LegacyGymAtari:
    """ale-py's AtariEnv behind the old (gym <= 0.25) step/reset API."""

    def __init__(
        self,
        game: str = "breakout",
        seed: int | None = None,
        repeat_action_probability: float = 0.25,
    ) -> None:
        from ale_py.env import AtariEnv

        # grayscale: the observation returned here is ignored (AtariPreprocessing reads the
        # ALE's grayscale screen itself); it only sets observation_space's (210, 160) shape
        self._atari = AtariEnv(
            game=game,
            obs_type="grayscale",
            frameskip=1,
            repeat_action_probability=repeat_action_probability,
            full_action_space=False,
            max_num_frames_per_episode=None,
        )
        self.ale = self._atari.ale
        self.action_space = self._atari.action_space
        self.observation_space = self._atari.observation_space
        self.reward_range = (-float("inf"), float("inf"))
        self.metadata = self._atari.metadata
        self.seeded_with = None
        if seed is not None:
            self.seed(seed)

    @property
    def env(self) -> LegacyGymAtari:
        # AtariPreprocessing reaches the emulator as ``environment.env.ale`` (the gym
        # wrapper's inner env); here both levels are this object
        return self

    @property
    def unwrapped(self):
        return self._atari

    def seed(self, seed: int) -> list[int]:
        """Seeds the ALE's RNG (sticky actions) and reloads the ROM, as gym's AtariEnv.seed."""
        self.seeded_with = self._atari.seed_game(int(seed))
        self._atari.load_game()
        return [int(seed)]

    def get_action_meanings(self) -> list[str]:
        return self._atari.get_action_meanings()

    def reset(self) -> np.ndarray:
        obs, _ = self._atari.reset()
        return obs

    def step(self, action: int):
        obs, reward, terminated, truncated, info = self._atari.step(int(action))
        return obs, reward, bool(terminated or truncated), info

    def render(self, mode: str = "rgb_array"):
        return self.ale.getScreenRGB()

    def close(self) -> None:
        self._atari.close()


def create_breakout_environment(seed: int, game: str = "breakout"):
    """Dopamine's ``create_atari_environment(sticky_actions=True)`` for ``game``, on ale-py
    0.12: the legacy env above (TimeLimit-free, as Dopamine's ``env.env``) wrapped in
    Dopamine's own ``AtariPreprocessing`` with its defaults (frame_skip 4, no terminal on
    life loss, 84x84)."""
    from dopamine.discrete_domains import atari_lib

    return atari_lib.AtariPreprocessing(LegacyGymAtari(game, seed=seed), use_legacy_gym=True)
