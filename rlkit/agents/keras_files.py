"""Networks given as Python objects, kept in Keras' own format beside an agent's weights.

:meth:`rlkit.agents.base.Agent.save` writes ``<config key>.keras`` for each network the
config records as ``"<python object>"`` (where Keras can serialise it), and
:meth:`~rlkit.agents.base.Agent.load` gives such a file back as the network when no builder
is given again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

KERAS_SUFFIX = ".keras"


def save_keras_model(model: Any, file: Path) -> None:
    """``model`` in Keras' format at ``file`` (atomically), where Keras can save it (a model
    with layers of one's own that do not serialise is left out: its builder is then given
    again to load)."""
    tmp = file.with_name(f".{file.name}.tmp{KERAS_SUFFIX}")
    try:
        model.save(tmp)
    except Exception:  # Keras cannot serialise it: the builder is needed to load, as before
        tmp.unlink(missing_ok=True)
        return
    os.replace(tmp, file)


def saved_keras_models(path: Path, config: dict, given: dict) -> dict[str, Any]:
    """The Keras models ``Agent.save`` kept for networks given in Python and not given again
    now (``config``: the saved agent's config; ``given``: the networks given to load)."""
    from rlkit.networks.custom import GIVEN_IN_PYTHON

    found = {}
    for key, value in config.items():
        file = path / f"{key}{KERAS_SUFFIX}"
        if value == GIVEN_IN_PYTHON and key not in given and file.is_file():
            import keras

            found[key] = keras.models.load_model(file, compile=False)
    return found
