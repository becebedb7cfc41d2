"""The compiled loop: a run's whole training as one XLA program on rlkit's TensorFlow
environments, beside the Python loop (:mod:`rlkit.run.loop`).

:mod:`.choice` (which loop a run takes, no TensorFlow) · :mod:`.program` (what every
agent's program shares: acting, the env's step, replay, updates in one ``tf.function``) ·
:mod:`.dqn`, :mod:`.ddpg`, :mod:`.sac`, :mod:`.ppo` (each family's program, named by the
registry) · :mod:`.trainer` (the program run in chunks, the run's life kept in Python) ·
:mod:`.xla_cache` (the XLA cache a sweep's trials share). Each in-graph twin the programs
call lives beside its Python original (``graph_*`` in ``agents/``, ``replay/``, ``core/``,
``learn/``), tied to it by a test (docs/architecture.md, "Two loops, one algorithm")."""
