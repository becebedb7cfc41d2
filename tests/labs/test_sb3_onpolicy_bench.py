"""benchmarks/compare_sb3_onpolicy.py (``--algo ppo-cartpole``, ``a2c-cartpole``): both sides
run rl-zoo's entry key by key, the ``lin_`` schedules as the zoo makes them, and the phase
split of a vector loop (the step count moving 8 at a time) against a clock moved by hand."""

import pytest

from benchmarks import compare_sb3, compare_sb3_onpolicy, phase_timer
from benchmarks.compare_sb3_onpolicy import ZOO, rlkit_settings, sb3_kwargs

pytestmark = [pytest.mark.labs]


def test_rlkit_runs_the_zoo_ppo_cartpole_entry_key_by_key():
    num_envs, settings = rlkit_settings("ppo-cartpole", 100_000)
    zoo = ZOO["ppo-cartpole"]
    assert num_envs == zoo["n_envs"] == 8
    for key in ("n_steps", "batch_size", "gae_lambda", "gamma", "n_epochs", "ent_coef"):
        assert settings[key] == zoo[key], key
    # lin_0.001 and lin_0.2: from the value to 0 over the whole run
    assert (settings["learning_rate"], settings["lr_end_fraction"]) == (0.001, 0.0)
    assert (settings["clip_range"], settings["clip_range_end_fraction"]) == (0.2, 0.0)
    assert settings["lr_anneal_steps"] == 100_000 and "lr_anneal_fraction" not in settings
    assert rlkit_settings("ppo-cartpole", 4096)[1]["lr_anneal_steps"] == 4096


def test_rlkit_runs_the_zoo_a2c_cartpole_entry():
    num_envs, settings = rlkit_settings("a2c-cartpole", 100_000)
    assert (num_envs, settings) == (8, {"ent_coef": 0.0})  # the rest: SB3's A2C defaults


def test_sb3_gets_the_zoo_entry_with_lin_made_linear_schedules():
    kwargs = sb3_kwargs("ppo-cartpole")
    assert set(kwargs) == {"n_steps", "batch_size", "gae_lambda", "gamma", "n_epochs",
                           "ent_coef", "learning_rate", "clip_range"}  # fmt: skip
    # SB3 calls a schedule with progress_remaining, 1 at the start, 0 at the end
    assert [kwargs["learning_rate"](p) for p in (1.0, 0.5, 0.0)] == [0.001, 0.0005, 0.0]
    assert [kwargs["clip_range"](p) for p in (1.0, 0.25)] == [0.2, 0.05]
    assert sb3_kwargs("a2c-cartpole") == {"ent_coef": 0.0}


def test_rollouts_and_the_warm_up_left_out_of_the_steady_phase():
    assert compare_sb3_onpolicy.rollout_steps("ppo-cartpole") == 8 * 32
    assert compare_sb3_onpolicy.rollout_steps("a2c-cartpole") == 8 * 5
    assert compare_sb3_onpolicy.warm_steps("ppo-cartpole") == 512  # two rollouts
    assert phase_timer.marks(0, 100_000, 512) == {0: "learn", 512: "steady"}
    assert phase_timer.marks(0, 400, 512) == {0: "learn"}  # too short for a steady phase


def test_both_algos_are_compare_sb3_choices_with_their_steps():
    assert compare_sb3.STEPS["ppo-cartpole"] == 100_000
    assert compare_sb3.STEPS["a2c-cartpole"] == 100_000


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_vector_loop_splits_into_a_learning_and_a_steady_phase(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(phase_timer.time, "perf_counter", clock)
    monkeypatch.setattr(phase_timer, "cpu_seconds", lambda: clock.now / 2)  # half busy
    timer = phase_timer.PhaseTimer(phase_timer.marks(0, 48, 16))
    timer.start()  # the learn mark: step 0, no random phase
    for step in range(8, 49, 8):  # 6 vector steps of 8; an update after every second one
        clock.now += 0.1  # env and acting
        if step % 16 == 0:
            clock.now += 0.4 if step > 16 else 1.0  # the first update is slower
        timer.at_step(step)
    timer.stop()
    out = phase_timer.phases(timer, 0, 48, 16)
    assert "random" not in out
    # learning: 6 x 0.1 + 1.0 + 2 x 0.4 = 2.4 s for 48 steps; steady: the last 32 steps,
    # 4 x 0.1 + 2 x 0.4 = 1.2 s
    assert out["learning"]["seconds"] == pytest.approx(2.4)
    assert out["learning"]["sps"] == pytest.approx(48 / 2.4)
    assert out["steady"]["seconds"] == pytest.approx(1.2)
    assert out["steady"]["sps"] == pytest.approx(32 / 1.2)
    assert out["steady"]["cpu_ms"] == pytest.approx(0.6 / 32 * 1000)
