"""Progress while pytest itself is silent: the model loading, long streams of batches, and one long batch.

``lines`` writes the lines (throttled whole lines, never a rewritten one), ``estimate`` says how long is left as a
range, ``heartbeat`` speaks from a thread while pytest's own thread is inside the model.
"""

from __future__ import annotations

from .lines import ItemProgress, ModelProgress, Throttle, terminal_emitter

__all__ = ["ItemProgress", "ModelProgress", "Throttle", "terminal_emitter"]
