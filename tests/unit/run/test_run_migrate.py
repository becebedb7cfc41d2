"""Run checkpoints of older formats upgraded by one pure function (rlkit.run.migrate)."""

from __future__ import annotations

import copy

import pytest

from rlkit.run.migrate import RUN_FORMAT, migrate


def _state(loop_state: dict, **top) -> dict:
    history = {"episode_returns": [9.0], "episode_lengths": [9], "episode_end_steps": [9],
               "evaluations": [[10, 20.5, 1.5]]}  # fmt: skip
    return {"agent": "dqn", "counters": {"num_steps": 12}, "rngs": {}, "extra": {},
            "loop": {"state": loop_state, "history": history}, **top}  # fmt: skip


def test_format_1_one_stream_of_plain_numbers_without_time_or_pending_evaluation():
    old = _state({"step": 12, "episodes": 1, "episode_return": 3.0, "episode_length": 3,
                  "obs": [0.5, 0.25], "evaluations": 1, "best_eval": 20.5, "best_step": 10,
                  "metrics_rows": 2})  # fmt: skip
    kept = copy.deepcopy(old)
    new = migrate(old)
    assert old == kept  # pure: the given dict is not changed
    assert new["format"] == RUN_FORMAT == 3
    assert new["loop"]["state"] == {
        "step": 12, "episodes": 1, "episode_return": [3.0], "episode_length": [3],
        "obs": [0.5, 0.25], "seconds": None,
    }  # fmt: skip
    assert new["loop"]["hooks"] == {
        "EvaluationHook": {"evaluations": 1, "best_eval": 20.5, "best_step": 10, "pending": False}
    }
    assert new["loop"]["run"] == {"metrics_rows": 2}
    assert new["loop"]["history"] == old["loop"]["history"]
    assert {k: new[k] for k in ("agent", "counters", "rngs", "extra")} == {
        k: old[k] for k in ("agent", "counters", "rngs", "extra")
    }


def test_format_1_written_after_vector_envs_keeps_its_lists_and_values():
    # no format key, but lists, seconds and eval_pending already (the last format-1 writer)
    loop = {"step": 12, "episodes": 1, "episode_return": [1.0, 2.0], "episode_length": [1, 2],
            "obs": None, "evaluations": 0, "best_eval": None, "best_step": None,
            "metrics_rows": 1, "seconds": 4.5, "eval_pending": True}  # fmt: skip
    new = migrate(_state(loop))
    assert new["loop"]["state"] == {
        "step": 12, "episodes": 1, "episode_return": [1.0, 2.0], "episode_length": [1, 2],
        "obs": None, "seconds": 4.5,
    }  # fmt: skip
    assert new["loop"]["hooks"]["EvaluationHook"]["pending"] is True
    assert new["loop"]["run"] == {"metrics_rows": 1}


def test_format_2_the_hooks_state_leaves_the_loop_state():
    loop = {"step": 40, "episodes": 2, "episode_return": [1.0], "episode_length": [1],
            "obs": [0.0], "evaluations": 2, "best_eval": -3.5, "best_step": 20,
            "metrics_rows": 4, "seconds": 1.25, "eval_pending": False}  # fmt: skip
    new = migrate(_state(loop, format=2))
    assert new["format"] == 3
    assert new["loop"]["state"] == {
        "step": 40, "episodes": 2, "episode_return": [1.0], "episode_length": [1],
        "obs": [0.0], "seconds": 1.25,
    }  # fmt: skip
    assert new["loop"]["hooks"] == {
        "EvaluationHook": {"evaluations": 2, "best_eval": -3.5, "best_step": 20, "pending": False}
    }
    assert new["loop"]["run"] == {"metrics_rows": 4}


def test_the_current_format_is_returned_as_it_is():
    current = migrate(_state({"step": 1, "episodes": 0, "episode_return": 1.0,
                              "episode_length": 1, "evaluations": 0, "best_eval": None,
                              "best_step": None, "metrics_rows": 1}))  # fmt: skip
    assert migrate(current) == current


def test_a_newer_format_or_no_object_is_refused():
    with pytest.raises(ValueError, match="newer"):
        migrate(_state({}, format=RUN_FORMAT + 1))
    with pytest.raises(TypeError):
        migrate([])  # type: ignore[arg-type]


def test_a_checkpoint_pickled_before_the_compiled_room_still_loads():
    """A compiled run's env.pkl written when ProgramState lived in rlkit.run.compiled_choice
    (before issue 51's rooms) loads as the class at its new place."""
    import pickle

    import numpy as np

    from rlkit.run.compiled.choice import ProgramState
    from rlkit.run.migrate import load_pickle

    state = ProgramState("rlkit/CartPole-v1", 2, {"step": np.arange(3)})
    data = pickle.dumps(state, protocol=4)
    old = data.replace(b"rlkit.run.compiled.choice", b"rlkit.run.compiled_choice")
    assert old != data  # the pickle names the module: the old name is what an old file holds
    with pytest.raises(ModuleNotFoundError):
        pickle.loads(old)
    loaded = load_pickle(old)
    assert type(loaded) is ProgramState
    assert loaded.env_id == "rlkit/CartPole-v1" and loaded.num_envs == 2
    assert loaded.arrays["step"].tolist() == [0, 1, 2]
