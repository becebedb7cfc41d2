"""labs/ale_versions.py: the lockstep comparison of two emulators finds a difference
where there is one (checked with two ale-py emulators; the old atari-py library is built by
hand, not in CI)."""

import importlib
from pathlib import Path

import pytest

pytestmark = [pytest.mark.labs, pytest.mark.atari]

ale_py = pytest.importorskip("ale_py")


@pytest.fixture(scope="module")
def versions():
    return importlib.import_module("labs.ale_versions")


@pytest.fixture(scope="module")
def rom():
    import ale_py.roms

    return Path(ale_py.roms.get_rom_path("breakout"))


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["random", "ball"])
def test_two_equal_emulators_play_in_lockstep(versions, rom, policy):
    difference, games = versions.lockstep(
        versions.NewALE(rom, 0.0, 0), versions.NewALE(rom, 0.0, 0), 3000, policy
    )
    assert difference is None
    assert games and all(length > 0 for _, length in games)  # whole games were played


def test_sticky_actions_on_one_side_are_found_within_a_game(versions, rom):
    difference, _ = versions.lockstep(
        versions.NewALE(rom, 0.0, 0), versions.NewALE(rom, 0.25, 1), 3000, "random"
    )
    assert difference is not None and difference.startswith("frame ")


def test_random_games_are_whole_games(versions, rom):
    games = versions.random_games(versions.NewALE(rom, 0.25, 0), 3, seed=0)
    assert games.shape == (3, 2) and (games[:, 1] > 100).all()  # a game lasts 500+ frames


def test_a_file_that_is_no_library_is_refused_in_one_line(versions, tmp_path, monkeypatch, capsys):
    (tmp_path / "libale_c.so").write_text("not a library")
    monkeypatch.setattr("sys.argv", ["ale_versions.py", "--old-lib", str(tmp_path / "libale_c.so")])
    with pytest.raises(SystemExit) as stop:
        versions.main()
    assert stop.value.code == 2
    assert "cannot load" in capsys.readouterr().err.strip().splitlines()[-1]
