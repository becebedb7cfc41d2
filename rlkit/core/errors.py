"""Exceptions rlkit raises for input a user can fix."""


class UsageError(ValueError):
    """Bad input from the user: an unknown key, an out-of-range value, an unfit space.

    The message is one line that says what was wrong and what to do; the CLI prints
    it as is and exits with status 2.
    """


class RlkitWarning(UserWarning):
    """Something a user should know that does not stop the work (the CLI prints it as one
    ``rlkit: ...`` line), e.g. an environment that resumes at an episode boundary."""
