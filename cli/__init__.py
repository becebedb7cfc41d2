"""The ``rlkit`` command (installed as the ``rlkit.cli`` package)."""
