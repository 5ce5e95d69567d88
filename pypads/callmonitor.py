"""The call-recording database under the seed's name (callmonitor): record calls, load
them back, replay them.

    from pypads.callmonitor import intercept, load

    @intercept
    def test_fn_2(x, y=2, z=3):
        pass

It lives in :mod:`pypads.recording.callmonitor`; this module is the name users type.
"""

from pypads.recording import (
    CONTEXT,
    DB,
    REGISTRY,
    Args,
    CallMonitorError,
    CallRecorder,
    Handler,
    NPHandler,
    Pickled,
    RecordingWarning,
    Registry,
    Replay,
    Settings,
    Unsaved,
    intercept,
    load,
)

__all__ = [
    "CONTEXT", "DB", "REGISTRY", "Args", "CallMonitorError", "CallRecorder", "Handler", "NPHandler",
    "Pickled", "Registry", "RecordingWarning", "Replay", "Settings", "Unsaved", "intercept", "load",
]
