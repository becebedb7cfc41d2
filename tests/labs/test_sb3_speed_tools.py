"""benchmarks/phase_timer.py, benchmarks/update_flops.py and compare_sb3.py's bad input: the
per-step split against a clock moved by hand, the FLOP counts against sums done by hand."""

import subprocess
import sys

import pytest

from benchmarks import phase_timer, update_flops

pytestmark = [pytest.mark.labs]


class Clock:
    """A perf_counter that moves only when told."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_phase_split_matches_a_clock_moved_by_hand(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(phase_timer.time, "perf_counter", clock)
    monkeypatch.setattr(phase_timer, "cpu_seconds", lambda: clock.now / 4)  # a quarter busy

    class Env:
        def step(self):
            clock.now += 1.0

    class Agent:
        learning = False

        def update(self):
            clock.now += 2.0 if self.learning else 0.0

    env, agent = Env(), Agent()
    timer = phase_timer.PhaseTimer({2: "learn"})
    timer.wrap(env, "step", "env")
    timer.wrap(agent, "update", "update")
    timer.start()
    for step in range(1, 5):  # steps 1-2 random, 3-4 learning
        agent.learning = step > 2
        clock.now += 0.5  # the loop's own work
        env.step()
        agent.update()
        timer.at_step(step)
    timer.stop()
    out = phase_timer.phases(timer, 2, 4)
    # random: 2 steps of 0.5 + 1.0 s; learning: 2 steps of 0.5 + 1.0 + 2.0 s
    assert out["random"] == pytest.approx(
        {"seconds": 3.0, "steps": 2, "sps": 2 / 3, "cpu_ms": 375.0, "env_ms": 1000.0,
         "update_ms": 0.0, "other_ms": 500.0})  # fmt: skip
    assert out["learning"] == pytest.approx(
        {"seconds": 7.0, "steps": 2, "sps": 2 / 7, "cpu_ms": 875.0, "env_ms": 1000.0,
         "update_ms": 2000.0, "other_ms": 500.0})  # fmt: skip
    assert "steady" not in out  # 2 learning steps: fewer than WARM_STEPS
    assert timer.first_call["update"] == 2.0  # the first update after the "learn" mark


def test_a_run_shorter_than_its_random_phase_is_all_random(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(phase_timer.time, "perf_counter", clock)
    monkeypatch.setattr(phase_timer, "cpu_seconds", lambda: 0.0)
    timer = phase_timer.PhaseTimer(phase_timer.marks(10, 3))
    timer.start()
    for step in range(1, 4):
        clock.now += 0.25
        timer.at_step(step)
    timer.stop()
    assert phase_timer.phases(timer, 10, 3) == {
        "random": {"seconds": 0.75, "steps": 3, "sps": 4.0, "cpu_ms": 0.0, "other_ms": 250.0}
    }


def test_marks_leave_the_warm_up_out_of_the_steady_phase():
    assert phase_timer.marks(1000, 6000) == {1000: "learn", 1000 + phase_timer.WARM_STEPS: "steady"}
    assert phase_timer.marks(1000, 1050) == {1000: "learn"}


def test_td3_update_flops_by_hand():
    # actor 17-400-300-6, critic 23-400-300-1, batch 256: 2*B*sum(in*out) a forward pass
    f_a = 2 * 256 * (17 * 400 + 400 * 300 + 300 * 6)  # 65,843,200
    f_c = 2 * 256 * (23 * 400 + 400 * 300 + 300 * 1)  # 66,304,000
    first_c, first_a = 2 * 256 * 23 * 400, 2 * 256 * 17 * 400
    # targets: actor + 2 critics; each critic: forward, weight grads, input grads but the first
    critic = f_a + 2 * f_c + 2 * (3 * f_c - first_c)
    # actor: forward, critic forward and its input grads to the action, actor backward
    actor = f_a + 2 * f_c + (2 * f_a - first_a)
    assert (critic, actor) == (586_854_400, 326_656_000)
    products = update_flops.td3_products(256, 17, 6, (400, 300), 2)
    assert update_flops.flops(products["critic"]) == critic
    assert update_flops.flops(products["actor"]) == actor
    assert update_flops.td3_update_flops() == critic + actor / 2 == 750_182_400


def test_sac_update_flops_by_hand():
    f_a = 2 * 256 * (17 * 256 + 256 * 256 + 256 * 12)  # the head: mean and log std
    f_c = 2 * 256 * (23 * 256 + 256 * 256 + 256 * 1)
    first_c, first_a = 2 * 256 * 23 * 256, 2 * 256 * 17 * 256
    expected = (2 * f_a + 2 * f_c  # the actor on s and s', the target critics
                + 2 * (3 * f_c - first_c)  # the critics' step
                + 2 * 2 * f_c  # Q(s, ã) and its gradient to ã
                + 2 * f_a - first_a)  # fmt: skip
    assert expected == 581_566_464
    assert update_flops.flops(update_flops.sac_products(256, 17, 6, (256, 256))) == expected
    # Pendulum: 3 observations, 1 action
    f_a = 2 * 256 * (3 * 256 + 256 * 256 + 256 * 2)
    f_c = 2 * 256 * (4 * 256 + 256 * 256 + 256 * 1)
    pendulum = 4 * f_a - 2 * 256 * 3 * 256 + 12 * f_c - 2 * (2 * 256 * 4 * 256)
    assert pendulum == 545_914_880
    assert update_flops.flops(update_flops.sac_products(256, 3, 1, (256, 256))) == pendulum


@pytest.mark.parametrize(
    "args, says",
    [
        (["--algo", "nope"], "unknown --algo 'nope'"),
        (["--algo", "sac", "--sb3-venv", "/no/such/venv"], "/no/such/venv/bin/python is missing"),
        (["--algo", "sac", "--threads", "1,x"], "thread counts are whole numbers"),
    ],
)
def test_compare_sb3_bad_input_is_one_line_and_exit_2(args, says):
    done = subprocess.run([sys.executable, "-m", "benchmarks.compare_sb3", *args],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and says in done.stderr
