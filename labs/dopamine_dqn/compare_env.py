"""Do rlkit's Atari environment under Dopamine's protocol and Dopamine's pipeline agree?

Drives, in lock step and with the same actions, two Breakout pipelines on ale-py 0.12:

* rlkit: ``make_atari("ALE/Breakout-v5", training=True, **DOPAMINE_ENV)`` (gymnasium's
  ``AtariPreprocessing`` + zero-padded ``FrameStackObservation(4)`` + channels last), seeded
  by ``reset(seed=s)`` (ale-py ``AtariEnv.reset``: ``seed_game(s)``, ``load_game()``,
  ``reset_game()``);
* Dopamine: ``ale_shim.create_breakout_environment(s)`` (ale-py ``AtariEnv`` behind the old
  gym API, seeded by ``seed_game(s)``, ``load_game()`` in its constructor, then
  ``reset_game()`` in ``reset``) inside Dopamine's own ``atari_lib.AtariPreprocessing``, with
  the 4-frame state Dopamine's DQN agent keeps (zeroed at every episode start) rebuilt here.

Both emulators thus get the same ``random_seed`` (sticky actions). At every agent step it
compares the newest 84x84 frame (exact, and max/mean |diff| and the fraction of pixels that
differ when not), the whole 4-frame state, the reward, game over / terminal / truncated, the
lives and the two emulators' RAM, and reports the first step where anything differs. Games
follow one another without reseeding, as in training. Policies: uniformly random actions,
a RAM-based ball tracker (hits bricks up to the top rows), and a never-FIRE policy (the
ball is never served) that runs into the 27000-agent-step cap. It also prints the reset
observations and the game lengths and returns of each pipeline.

Run it with the Dopamine venv (see README.md), environments only, one CPU thread, < 1 min:

    TF_CPP_MIN_LOG_LEVEL=3 PYTHONPATH=. ../dopamine-venv/bin/python \\
        labs/dopamine_dqn/compare_env.py
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"):  # fmt: skip
    os.environ[_var] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["CUDA_VISIBLE_DEVICES"] = ""

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

cv2.setNumThreads(1)
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

ENV_ID = "ALE/Breakout-v5"
MAX_STEPS_PER_EPISODE = 27_000  # Dopamine's Runner cap (dqn.gin), in agent steps
NOOP, FIRE, RIGHT, LEFT = range(4)  # Breakout's minimal action set
# Breakout's RAM: ball x, ball y (0 while no ball is in play), paddle x
BALL_X, BALL_Y, PADDLE_X = 99, 101, 72
PADDLE_OFFSET = 2  # ball x - paddle x when the ball is over the paddle's middle


def import_atari_lib():
    """Dopamine's ``atari_lib`` imports OpenAI baselines (unused here): stub it if absent."""
    try:
        import baselines.common.atari_wrappers  # noqa: F401
    except ImportError:
        names = ("baselines", "baselines.common", "baselines.common.atari_wrappers")
        for name in names:
            sys.modules[name] = types.ModuleType(name)
        sys.modules["baselines"].common = sys.modules["baselines.common"]
        sys.modules["baselines.common"].atari_wrappers = sys.modules[names[2]]
    import jax  # noqa: F401  (before tensorflow: see run_breakout.import_dopamine)
    from dopamine.discrete_domains import atari_lib

    return atari_lib


class RlkitSide:
    """rlkit's environment under Dopamine's protocol (labs/atari_dopamine.DOPAMINE_ENV)."""

    def __init__(self, seed: int) -> None:
        from labs.atari_dopamine import DOPAMINE_ENV
        from rlkit.envs.atari import make_atari

        self.env = make_atari(ENV_ID, training=True, **DOPAMINE_ENV)
        self.seed = seed
        self.ale = self.env.unwrapped.ale

    def reset(self) -> np.ndarray:
        seed, self.seed = self.seed, None  # seeded once, then games follow one another
        obs, _ = self.env.reset(seed=seed)
        return obs

    def step(self, action: int):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, float(reward), bool(terminated), bool(truncated), int(info["lives"])


class DopamineSide:
    """Dopamine's AtariPreprocessing on the ale-py shim, plus its DQN agent's state stack
    (``_reset_state`` zeroes it at ``begin_episode``; ``_record_observation`` rolls it)."""

    def __init__(self, seed: int, atari_lib) -> None:
        from ale_shim import LegacyGymAtari

        self.env = atari_lib.AtariPreprocessing(LegacyGymAtari(seed=seed), use_legacy_gym=True)
        self.ale = self.env.environment.ale
        self.state = np.zeros((84, 84, 4), np.uint8)

    def _record(self, obs: np.ndarray) -> np.ndarray:
        self.state = np.roll(self.state, -1, axis=-1)
        self.state[..., -1] = obs[..., 0]
        return self.state.copy()

    def reset(self) -> np.ndarray:
        self.state.fill(0)
        return self._record(self.env.reset())

    def step(self, action: int):
        obs, reward, is_terminal, _ = self.env.step(action)
        # the Runner ends a game on environment.game_over (and at MAX_STEPS_PER_EPISODE)
        lives = int(self.ale.lives())
        return self._record(obs), float(reward), bool(self.env.game_over), is_terminal, lives


def tracker(ale, rng: np.random.Generator) -> int:
    """Serve when no ball is in play, else keep the paddle under the ball (2% random)."""
    ram = ale.getRAM()
    if ram[BALL_Y] == 0:
        return FIRE
    if rng.random() < 0.02:
        return int(rng.integers(4))
    d = int(ram[BALL_X]) - (int(ram[PADDLE_X]) + PADDLE_OFFSET)
    return RIGHT if d > 3 else LEFT if d < -3 else NOOP


POLICIES = {
    "random": lambda ale, rng: int(rng.integers(4)),
    "tracker": tracker,
    "never-fire": lambda ale, rng: int(rng.choice([NOOP, RIGHT, LEFT])),
}


def frame_diff(a: np.ndarray, b: np.ndarray) -> str:
    d = np.abs(a.astype(np.int16) - b.astype(np.int16))
    return (f"max |diff| {d.max()}, mean |diff| {d.mean():.3f}, "
            f"{(d > 0).mean():.2%} of pixels differ")  # fmt: skip


class Tally:
    def __init__(self) -> None:
        self.steps = 0
        self.mismatches: dict[str, int] = {}
        self.first: list[str] = []
        self.terminal_frames: list[str] = []

    def note(self, what: str, where: str) -> None:
        self.mismatches[what] = self.mismatches.get(what, 0) + 1
        if len(self.first) < 8:
            self.first.append(f"{where}: {what}")


def compare_reset(r_obs, d_obs, where: str, tally: Tally) -> None:
    if not np.array_equal(r_obs, d_obs):
        tally.note(f"reset state differs ({frame_diff(r_obs, d_obs)})", where)


def play(policy: str, seed: int, games: int, atari_lib, tally: Tally, max_steps: int):
    """Lock-step games; returns per game (length, return) of each side."""
    rk, dp = RlkitSide(seed), DopamineSide(seed, atari_lib)
    rng = np.random.default_rng(1000 + seed)
    results = []
    for game in range(games):
        r_obs, d_obs = rk.reset(), dp.reset()
        where = f"{policy} seed {seed} game {game} reset"
        compare_reset(r_obs, d_obs, where, tally)
        if game == 0 and seed == 0:
            nz = int((r_obs[..., :3] != 0).sum())
            print(
                f"  reset ({policy}, seed {seed}): rlkit state frames 0-2 zero "
                f"(non-zero pixels {nz}), newest frame == Dopamine's: "
                f"{np.array_equal(r_obs[..., -1], d_obs[..., -1])}; lives "
                f"{rk.ale.lives()} vs {dp.ale.lives()}; emulator frame "
                f"{rk.ale.getEpisodeFrameNumber()} vs {dp.ale.getEpisodeFrameNumber()}"
            )
        r_ret = d_ret = 0.0
        r_len = d_len = None
        for t in range(1, max_steps + 1):
            a = POLICIES[policy](rk.ale, rng)
            r_obs, r_rew, r_term, r_trunc, r_lives = rk.step(a)
            d_obs, d_rew, d_over, d_term, d_lives = dp.step(a)
            tally.steps += 1
            r_ret += r_rew
            d_ret += d_rew
            where = f"{policy} seed {seed} game {game} step {t}"
            r_end = r_term or r_trunc
            d_end = d_over or t == MAX_STEPS_PER_EPISODE
            if not np.array_equal(rk.ale.getRAM(), dp.ale.getRAM()):
                tally.note("emulator RAM differs", where)
            if r_rew != d_rew:
                tally.note(f"reward {r_rew} vs {d_rew}", where)
            if (r_term, r_trunc) != (d_over, t == MAX_STEPS_PER_EPISODE and not d_over):
                tally.note(f"end: rlkit terminated={r_term} truncated={r_trunc}, Dopamine "
                           f"game_over={d_over} is_terminal={d_term} step cap="
                           f"{t == MAX_STEPS_PER_EPISODE}", where)  # fmt: skip
            if r_lives != d_lives:
                tally.note(f"lives {r_lives} vs {d_lives}", where)
            same_new = np.array_equal(r_obs[..., -1], d_obs[..., -1])
            if r_end or d_end:
                # the observation that ends a game: Dopamine's TF agent never records it
                # (Runner._end_episode stores the previous one); rlkit's DQN masks it when
                # terminated, but bootstraps from it when truncated (the 108k-frame cap)
                if not same_new:
                    kind = "truncated" if r_trunc else "game over"
                    frame = rk.ale.getEpisodeFrameNumber() % 4 or 4
                    tally.terminal_frames.append(
                        f"{where} ({kind} in frame {frame} of the skip): "
                        f"{frame_diff(r_obs[..., -1], d_obs[..., -1])}"
                    )
            else:
                if not same_new:
                    tally.note(f"newest frame ({frame_diff(r_obs[..., -1], d_obs[..., -1])})",
                               where)  # fmt: skip
                elif not np.array_equal(r_obs, d_obs):
                    tally.note(f"4-frame state ({frame_diff(r_obs, d_obs)})", where)
            if r_end and r_len is None:
                r_len = t
            if d_end and d_len is None:
                d_len = t
            if r_end or d_end:
                break
        results.append(((r_len, r_ret), (d_len, d_ret)))
    return results


def summary(results, policy: str) -> None:
    r = np.array([[g[0][0] or -1, g[0][1]] for g in results], float)
    d = np.array([[g[1][0] or -1, g[1][1]] for g in results], float)
    print(
        f"  {policy}: {len(results)} games; lengths (agent steps) rlkit "
        f"mean {r[:, 0].mean():.1f} [{r[:, 0].min():.0f}, {r[:, 0].max():.0f}], Dopamine "
        f"mean {d[:, 0].mean():.1f} [{d[:, 0].min():.0f}, {d[:, 0].max():.0f}]; returns "
        f"rlkit mean {r[:, 1].mean():.2f} max {r[:, 1].max():.0f}, Dopamine mean "
        f"{d[:, 1].mean():.2f} max {d[:, 1].max():.0f}; identical per game: "
        f"{np.array_equal(r, d)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    start = time.time()
    atari_lib = import_atari_lib()
    plan = {  # policy: (seeds, consecutive games per seed, step cap)
        "random": (args.seeds, 4, MAX_STEPS_PER_EPISODE),
        "tracker": (args.seeds, 2, MAX_STEPS_PER_EPISODE),
        "never-fire": (1, 1, MAX_STEPS_PER_EPISODE + 5),
    }
    ok = True
    for policy, (seeds, games, cap) in plan.items():
        tally, results = Tally(), []
        for seed in range(seeds):
            results += play(policy, seed, games, atari_lib, tally, cap)
        summary(results, policy)
        print(
            f"    {tally.steps} lock-step agent steps; mismatches (non-terminal): "
            f"{tally.mismatches or 'none'}"
        )
        for line in tally.first:
            print(f"    first: {line}")
        n_end = len(results)
        print(
            f"    game-ending observations that differ: {len(tally.terminal_frames)} of "
            f"{n_end} (unused by either agent after a game over)"
        )
        for line in tally.terminal_frames[:3]:
            print(f"      {line}")
        ok &= not tally.mismatches
    print(
        f"identical transitions (apart from game-ending observations): {ok}; "
        f"{time.time() - start:.0f} s"
    )


if __name__ == "__main__":
    main()
