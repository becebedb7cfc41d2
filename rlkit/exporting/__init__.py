"""Export: an agent's greedy policy as a SavedModel or a TFLite flatbuffer, checked to act as
the agent, and an export loaded back to act.

:func:`rlkit.exporting.writer.export` is the one entry point: ``Agent.export``, ``rlkit.export``
(:mod:`rlkit.run.export_run`, which first finds a run's model) and ``rlkit export`` all call
it. The room sits below the agents and reads them only through what every agent offers (its
networks, spaces, config, replay), so an agent's own ``export`` method imports it downwards:
:mod:`.signatures` (each agent's SavedModel signatures, named by the registry),
:mod:`.tflite` (the conversion), :mod:`.check` (the proof of equality), :mod:`.exported` (an
export loaded to act), :mod:`.destination` (where an export may be written, checked before
TensorFlow loads)."""
