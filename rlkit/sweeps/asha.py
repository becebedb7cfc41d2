"""ASHA as ``rlkit tune`` uses it: Ray Tune's ``ASHAScheduler``, and a trial level with the
worst score recorded at a rung stops too.

Ray's rule is "stop below the rung's cutoff" (the top ``1/reduction_factor`` quantile of
the scores recorded there), so ties go on. On environments with an episode cap most early
trials sit at the same floor (Acrobot's -500, MountainCar's -200): every one of them ties
the cutoff and plain ASHA keeps them all. Here, from the second rung on, a trial whose
score equals the lowest score recorded at its rung is stopped: it is no better than the
worst trial seen there. At the first rung ties go on (there the floor is where nearly
every trial starts: stopping them all would leave the first trial alone), and the first
trial at a rung always goes on. Imports Ray: only :mod:`rlkit.sweeps.tune_on_ray` imports
this, when a tune runs.
"""

from __future__ import annotations

from ray.tune.schedulers import ASHAScheduler, TrialScheduler


class FloorStoppingASHA(ASHAScheduler):
    """``ASHAScheduler`` that also stops a trial tied with the floor of its rung."""

    def on_trial_result(self, tune_controller, trial, result: dict) -> str:
        rungs = getattr(self._trial_info.get(trial.trial_id), "_rungs", [])
        before = {milestone for milestone, recorded in rungs if trial.trial_id in recorded}
        action = super().on_trial_result(tune_controller, trial, result)
        if action != TrialScheduler.CONTINUE:
            return action
        first_rung = min((milestone for milestone, _ in rungs), default=None)
        for milestone, recorded in rungs:  # the rung this result was just recorded at, if any
            if milestone in before or trial.trial_id not in recorded:
                continue
            if milestone == first_rung:  # early on the floor is everyone's: ties go on
                break
            others = [v for k, v in recorded.items() if k != trial.trial_id]
            if others and recorded[trial.trial_id] <= min(others):
                self._num_stopped += 1
                return TrialScheduler.STOP
            break
        return action
