"""Helpers the benchmark scripts share (run them from the repository root)."""

from __future__ import annotations


def parse_seeds(text: str) -> list[int]:
    """``"0-4"`` -> ``[0, 1, 2, 3, 4]``; ``"0,3,7"`` -> ``[0, 3, 7]``."""
    if "-" in text:
        first, last = text.split("-")
        return list(range(int(first), int(last) + 1))
    return [int(s) for s in text.split(",")]


def run_as_cli(agent: str, env: str, seed: int, overrides: dict[str, str], **run) -> dict:
    """One whole run exactly as ``rlkit train`` runs it (rlkit.run.experiment), in a temporary
    folder; returns the summary, the greedy evaluations during training and the final
    model's returns on ``wide_episodes`` further starts (when ``wide_episodes`` is given).

    ``run`` takes rlkit.run.experiment.plan's keywords (steps, episodes, eval_every, ...).
    """
    import os
    import tempfile

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import rlkit
    from rlkit.envs.make import make_env
    from rlkit.run import experiment

    wide_episodes = run.pop("wide_episodes", 0)
    plan = experiment.plan(agent, env, seed=seed, checkpoint_every=0, overrides=overrides, **run)
    with tempfile.TemporaryDirectory() as out:
        result = experiment.run(plan, out, handle_signals=False, tensorboard=False)
        if result.status != experiment.FINISHED:
            raise RuntimeError(result.message)
        wide = None
        if wide_episodes:  # the same policy on other starts: its quality apart from luck
            model = rlkit.load(result.run_dir / "model")
            wide = rlkit.evaluate(model, make_env(env), wide_episodes, seed=3_000_000 + seed)
    return {
        "seed": seed,
        "summary": result.summary,
        "final": (result.final_return, result.summary["final_model"]["eval_return_std"]),
        "best": None
        if result.best_return is None
        else (result.best_return, result.summary["best_model"]["eval_return_std"]),
        "best_step": result.summary.get("best_model", {}).get("step"),
        "evaluations": result.history.evaluations,
        "episodes": len(result.history.episode_returns),
        "steps": result.history.steps,
        "sps": result.history.steps_per_second,
        "seconds": result.history.seconds,
        "wide": wide,
    }
