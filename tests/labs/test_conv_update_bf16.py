"""labs/conv_update_bf16.py: bad counts are one line and exit 2 (before any timing)."""

import importlib

import pytest

pytestmark = [pytest.mark.labs]


@pytest.mark.parametrize("bad", [["--updates", "0"], ["--reps", "-1"]])
def test_bad_counts_are_usage_errors(monkeypatch, capsys, bad):
    bench = importlib.import_module("labs.conv_update_bf16")
    monkeypatch.setattr("sys.argv", ["conv_update_bf16.py", *bad])
    with pytest.raises(SystemExit) as exit_info:
        bench.main()
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "--updates and --reps must be positive" in err
