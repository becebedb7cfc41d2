"""Is today's Breakout the game Dopamine's 2018 DQN baseline played? Emulator against emulator.

Dopamine's published baselines ran on atari-py 0.1.x (gym ``BreakoutNoFrameskip-v0``), which
bundled ALE 0.5.1-era code; rlkit runs ale-py 0.12. This drives both emulators side by side,
on the ROM ale-py ships (md5 f34f08e5..., atari-py's own copy is the same file), with
``frame_skip`` 1 and colour averaging off:

1. deterministic (no sticky actions), two action streams in lockstep: random actions held
   for 1-40 frames, and a noisy ball-tracking policy read from RAM that scores up to ~100
   (a faster ball, a wall with holes). Every frame compares the reward, the lives,
   the game-over flag, the 128 bytes of RAM and the 210x160 grey screen, and reports the
   first difference;
2. sticky actions 0.25 (each emulator's own random numbers, so games differ one by one): a
   uniformly random agent acting every 4 frames on whole games; the score and length
   distributions side by side (means with standard errors; Kolmogorov-Smirnov if scipy
   is installed).

The old emulator is atari-py 0.1.7's C library, built from its source (git tag 0.1.7,
commit 372ae81)::

    cd atari-py/atari_py/ale_interface && mkdir build && cd build
    cmake .. -DCMAKE_CXX_FLAGS="-std=gnu++11 -w" && make -j2       # libale_c.so
    python -m labs.ale_versions --old-lib PATH/libale_c.so

Result (2026-11-23, docs/atari.md): bit-identical over 2 x 200,000 frames (197 and 54
games, best scores 6 and 99); with sticky actions, 1,000 random games each: scores
1.305 +- 0.040 and 1.348 +- 0.040 (KS p = 1.00), lengths 742.9 +- 6.5 and 751.6 +- 6.5
frames (KS p = 0.50).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
from pathlib import Path

import numpy as np

MINIMAL_ACTIONS = (0, 1, 3, 4)  # NOOP, FIRE, RIGHT, LEFT (ALE's full-set indices)
BALL_X, BALL_Y, PADDLE_X = 99, 101, 72  # Breakout's RAM addresses


@contextlib.contextmanager
def silenced():
    """File descriptors 1 and 2 to /dev/null (C/C++ output of a library) for the block."""
    saved = [os.dup(fd) for fd in (1, 2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in (1, 2):
            os.dup2(null, fd)
        yield
    finally:
        for fd, copy in zip((1, 2), saved, strict=True):
            os.dup2(copy, fd)
            os.close(copy)
        os.close(null)


class OldALE:
    """atari-py 0.1.7's ALE through its C wrapper (``ale_c_wrapper.h``)."""

    def __init__(self, library: Path, rom: Path, sticky: float, seed: int) -> None:
        lib = ctypes.cdll.LoadLibrary(str(library))
        ptr = ctypes.c_void_p
        signatures = {
            "ALE_new": ([], ptr), "setInt": ([ptr, ctypes.c_char_p, ctypes.c_int], None),
            "setFloat": ([ptr, ctypes.c_char_p, ctypes.c_float], None),
            "setBool": ([ptr, ctypes.c_char_p, ctypes.c_bool], None),
            "loadROM": ([ptr, ctypes.c_char_p], None), "act": ([ptr, ctypes.c_int], ctypes.c_int),
            "game_over": ([ptr], ctypes.c_bool), "reset_game": ([ptr], None),
            "lives": ([ptr], ctypes.c_int), "getRAM": ([ptr, ptr], None),
            "getScreenGrayscale": ([ptr, ptr], None),
        }  # fmt: skip
        for name, (args, result) in signatures.items():
            getattr(lib, name).argtypes, getattr(lib, name).restype = args, result
        with silenced():  # ALE 0.5 writes a banner to stderr on every start and ROM load
            self._lib, self._ale = lib, lib.ALE_new()
            lib.setInt(self._ale, b"random_seed", seed)
            lib.setFloat(self._ale, b"repeat_action_probability", sticky)
            lib.setInt(self._ale, b"frame_skip", 1)
            lib.setBool(self._ale, b"color_averaging", False)
            lib.loadROM(self._ale, str(rom).encode())
        self._ram = np.zeros(128, np.uint8)
        self._screen = np.zeros((210, 160), np.uint8)

    def act(self, action: int) -> int:
        return self._lib.act(self._ale, action)

    def game_over(self) -> bool:
        return self._lib.game_over(self._ale)

    def reset_game(self) -> None:
        self._lib.reset_game(self._ale)

    def lives(self) -> int:
        return self._lib.lives(self._ale)

    def ram(self) -> np.ndarray:
        self._lib.getRAM(self._ale, self._ram.ctypes.data)
        return self._ram

    def screen(self) -> np.ndarray:
        self._lib.getScreenGrayscale(self._ale, self._screen.ctypes.data)
        return self._screen


class NewALE:
    """ale-py's ALEInterface behind :class:`OldALE`'s methods."""

    def __init__(self, rom: Path, sticky: float, seed: int) -> None:
        import ale_py

        ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
        self._ale = ale_py.ALEInterface()
        self._ale.setInt("random_seed", seed)
        self._ale.setFloat("repeat_action_probability", sticky)
        self._ale.setInt("frame_skip", 1)
        self._ale.setBool("color_averaging", False)
        self._ale.loadROM(str(rom))
        self._actions = [ale_py.Action(i) for i in range(18)]
        self._screen = np.zeros((210, 160), np.uint8)
        self.game_over, self.reset_game = self._ale.game_over, self._ale.reset_game
        self.lives, self.ram = self._ale.lives, self._ale.getRAM

    def act(self, action: int) -> int:
        return int(self._ale.act(self._actions[action]))

    def screen(self) -> np.ndarray:
        self._ale.getScreenGrayscale(self._screen)
        return self._screen


def held_random_actions(rng: np.random.Generator):
    """Endless actions, each held for 1-40 frames (FIRE often enough to serve)."""
    while True:
        action = int(rng.choice(MINIMAL_ACTIONS, p=[0.15, 0.25, 0.3, 0.3]))
        yield from [action] * int(rng.integers(1, 41))


def ball_tracker(rng: np.random.Generator, ram: np.ndarray, previous: int) -> int:
    """A noisy policy that follows the ball (scores up to ~100): FIRE when no ball."""
    if rng.random() < 0.3:
        return previous
    if rng.random() < 0.05:
        return int(rng.choice(MINIMAL_ACTIONS))
    if ram[BALL_X] == 0 or ram[BALL_Y] == 0:
        return 1
    offset = int(ram[BALL_X]) - int(ram[PADDLE_X])
    return 3 if offset > 3 else 4 if offset < -3 else 0


def first_difference(old: OldALE, new: NewALE) -> str | None:
    for what, a, b in (("RAM", old.ram(), new.ram()), ("screen", old.screen(), new.screen())):
        if not np.array_equal(a, b):
            return f"{what} differs at {np.flatnonzero(a != b)[:10].tolist()}"
    return None


def lockstep(old: OldALE, new: NewALE, frames: int, policy: str) -> tuple[str | None, list]:
    """Play ``frames`` frames on both emulators with the same actions; the first difference
    (None if none) and the finished games' (score, frames)."""
    rng = np.random.default_rng(12345)
    stream, action, games, score, length = held_random_actions(rng), 0, [], 0, 0
    if difference := first_difference(old, new):
        return f"at the start: {difference}", games
    for frame in range(frames):
        action = next(stream) if policy == "random" else ball_tracker(rng, old.ram(), action)
        outcome_old = (old.act(action), old.lives(), old.game_over())
        outcome_new = (new.act(action), new.lives(), new.game_over())
        if outcome_old != outcome_new:
            return f"frame {frame}: (reward, lives, game over) {outcome_old} {outcome_new}", games
        score, length = score + outcome_old[0], length + 1
        if outcome_old[2]:
            games.append((score, length))
            score = length = 0
            old.reset_game()
            new.reset_game()
        if difference := first_difference(old, new):
            return f"frame {frame}: {difference}", games
    return None, games


def random_games(ale, games: int, seed: int) -> np.ndarray:
    """(score, frames) of ``games`` whole games of a uniformly random agent acting every 4
    frames."""
    rng, results = np.random.default_rng(seed), []
    for _ in range(games):
        score = frames = 0
        while not ale.game_over():
            action = MINIMAL_ACTIONS[rng.integers(len(MINIMAL_ACTIONS))]
            for _ in range(4):
                score, frames = score + ale.act(action), frames + 1
                if ale.game_over():
                    break
        results.append((score, frames))
        ale.reset_game()
    return np.array(results, dtype=float)


def compare_distributions(old: np.ndarray, new: np.ndarray, name: str) -> str:
    def mean(x: np.ndarray) -> str:
        return f"{x.mean():.3f} ± {x.std(ddof=1) / np.sqrt(len(x)):.3f}"

    line = f"{name}: atari-py 0.1.7 {mean(old)}, ale-py {mean(new)}"
    try:
        from scipy.stats import ks_2samp
    except ImportError:
        return line
    return line + f", Kolmogorov-Smirnov p = {ks_2samp(old, new).pvalue:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-lib", type=Path, required=True, help="atari-py 0.1.7 libale_c.so")
    parser.add_argument("--frames", type=int, default=200_000, help="per lockstep stream")
    parser.add_argument("--games", type=int, default=1000, help="sticky games per emulator")
    args = parser.parse_args()
    if args.frames < 1 or args.games < 2:
        parser.error("--frames must be at least 1 and --games at least 2")
    if not args.old_lib.is_file():
        parser.error(f"no library at {args.old_lib}: build it as this script's docstring says")
    try:
        import ale_py.roms
    except ImportError:
        parser.error("needs ale-py: pip install '.[atari]'")
    rom = Path(ale_py.roms.get_rom_path("breakout"))
    try:
        ctypes.cdll.LoadLibrary(str(args.old_lib.resolve()))
    except OSError as error:
        parser.error(f"cannot load {args.old_lib} as a library ({error}): build it as this "
                     "script's docstring says")  # fmt: skip
    for policy in ("random", "ball"):
        old, new = OldALE(args.old_lib, rom, 0.0, 0), NewALE(rom, 0.0, 0)
        difference, games = lockstep(old, new, args.frames, policy)
        best = max((score for score, _ in games), default=0)
        print(f"lockstep, {policy} actions, {args.frames:,} frames, {len(games)} games "
              f"(best score {best}): {difference or 'identical'}", flush=True)  # fmt: skip
    old_games = random_games(OldALE(args.old_lib, rom, 0.25, 101), args.games, seed=1)
    new_games = random_games(NewALE(rom, 0.25, 202), args.games, seed=2)
    print(f"sticky actions 0.25, {args.games} random games each:")
    print("  " + compare_distributions(old_games[:, 0], new_games[:, 0], "score"))
    print("  " + compare_distributions(old_games[:, 1], new_games[:, 1], "frames"))


if __name__ == "__main__":
    main()
