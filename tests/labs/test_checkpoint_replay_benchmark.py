"""labs/checkpoint_replay.py: both layouts run on a small frame replay, and the
shared-block layout writes less for its second checkpoint than the whole one."""

import importlib

import pytest

pytestmark = [pytest.mark.labs, pytest.mark.atari]

pytest.importorskip("ale_py")  # the atari extra: the dqn3 agent is built for an ALE env


@pytest.mark.slow
def test_a_small_run_prints_both_layouts_and_blocks_write_less(monkeypatch, capsys, tmp_path):
    bench = importlib.import_module("labs.checkpoint_replay")
    from rlkit.run import checkpoint_blocks

    monkeypatch.setattr(checkpoint_blocks, "BLOCK_BYTES", 50 * 84 * 84)  # 50 frames a block
    monkeypatch.setattr("sys.argv", ["checkpoint_replay.py", "--fill", "300", "--more", "60",
                                     "--capacity", "400", "--dir", str(tmp_path)])  # fmt: skip
    results = bench.main()
    out = capsys.readouterr().out
    assert "whole load of the newest" in out and "blocks load of the newest" in out
    assert list(tmp_path.iterdir()) == []  # it cleans up after itself
    # the second checkpoint writes the blocks the ring touched (60 new frames: 2 blocks of
    # 50), not all 360 frames (2.5 MB); the weights (~15 MB) are written either way
    assert results["whole"]["second"] - results["blocks"]["second"] > 1.5e6


def test_bad_counts_are_usage_errors(monkeypatch, capsys):
    bench = importlib.import_module("labs.checkpoint_replay")
    monkeypatch.setattr("sys.argv", ["checkpoint_replay.py", "--more", "0"])
    with pytest.raises(SystemExit) as exit_info:
        bench.main()
    assert exit_info.value.code == 2 and "--more must be positive" in capsys.readouterr().err
