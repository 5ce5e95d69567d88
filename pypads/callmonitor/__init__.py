"""The call-recording database (callmonitor): record calls, load them back, replay them.

    from pypads.callmonitor import intercept, load

    @intercept
    def test_fn_2(x, y=2, z=3):
        pass

Outside a pypads run calls go to a local folder (``call-monitor``); inside one, to the
run's artifacts. A database is read as untrusted input; see "Trust model" in
``docs/callmonitor.md``.
"""

from pypads.callmonitor.database import Settings
from pypads.callmonitor.handlers import REGISTRY, Handler, NPHandler, Registry
from pypads.callmonitor.reading import DB, Args, Replay, load
from pypads.callmonitor.recording import CONTEXT, CallRecorder, RecordingWarning, intercept
from pypads.callmonitor.values import Pickled, Unsaved
from pypads.errors import CallMonitorError

__all__ = [
    "CONTEXT", "DB", "REGISTRY", "Args", "CallMonitorError", "CallRecorder", "Handler", "NPHandler",
    "Pickled", "Registry", "RecordingWarning", "Replay", "Settings", "Unsaved", "intercept", "load",
]
