"""Exceptions rlkit raises for input a user can fix."""


class UsageError(ValueError):
    """Bad input from the user: an unknown key, an out-of-range value, an unfit space.

    The message is one line that says what was wrong and what to do; the CLI prints
    it as is and exits with status 2.
    """


class EnvironmentFailed(UsageError):
    """The environment failed a run: it raised in ``reset()`` or ``step()``, or gave an
    observation that does not fit its observation space, or a reward or observation that
    is not finite (NaN, inf). The message is one line naming the environment, the call
    and what went wrong; the original exception, if any, is its ``__cause__``. The CLI
    exits with status 2: the fault is in the user's environment (their input), not in
    rlkit."""


class RlkitWarning(UserWarning):
    """Something a user should know that does not stop the work (the CLI prints it as one
    ``rlkit: ...`` line), e.g. an environment that resumes at an episode boundary."""
