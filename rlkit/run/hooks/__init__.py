"""Hooks on the training loop: what happens around each step besides acting and learning.

The loop (:class:`rlkit.run.loop.Trainer`) calls each hook in order; the built-in ones
log metrics, evaluate (keeping the best model) and checkpoint. A user's own hook is the
same kind of object: subclass :class:`Hook` and pass it in ``hooks=``.
"""

from rlkit.run.hooks.base import CallbackHook, Hook

__all__ = ["CallbackHook", "Hook"]
