"""The call-recording database (callmonitor): record calls, load them back, replay them.

    from pypads.recording.callmonitor import intercept, load

    @intercept
    def test_fn_2(x, y=2, z=3):
        pass

Outside a pypads run calls go to a local folder (``call-monitor``); inside one, to the
run's artifacts. A database is read as untrusted input; see "Trust model" in
``docs/callmonitor.md``.
"""

from pypads.core import CallMonitorError
from pypads.recording.callmonitor.database import Settings
from pypads.recording.callmonitor.handlers import REGISTRY, Handler, NPHandler, Registry
from pypads.recording.callmonitor.reading import DB, Args, Replay, load
from pypads.recording.callmonitor.recording import CONTEXT, CallRecorder, RecordingWarning, intercept
from pypads.recording.callmonitor.values import Pickled, Unsaved

__all__ = [
    "CONTEXT", "DB", "REGISTRY", "Args", "CallMonitorError", "CallRecorder", "Handler", "NPHandler",
    "Pickled", "Registry", "RecordingWarning", "Replay", "Settings", "Unsaved", "intercept", "load",
]
