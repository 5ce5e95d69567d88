"""The pictures of the runs an uploader process served, drawn after the script has its
answer, and kept out of the way of the script that waits next.

Drawing takes a few hundred milliseconds a picture, and matplotlib's import a second:
the script never waits for it (its run is whole without them), and a script that waits
for this process (its run being opened or ended) pauses the drawing between two pictures.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Iterator

from pypads.to_mlflow.timeouts import LOCAL_TIMEOUT
from pypads.to_mlflow.uploader.uploading import Uploader
from pypads.to_mlflow.wire import Command

# Seconds the pictures wait for the script to exit once its run has ended: on a machine
# of two cores, drawing them at once would slow down the interpreter's own teardown.
SCRIPT_EXIT_WAIT = 2.0


# The threads that draw the pictures of runs served, while this process waits as a spare
# or serves the next run: a script that comes right after one that ended need neither
# start an uploader of its own nor wait for the pictures of the run before its own.
_drawing: list[threading.Thread] = []
_one_drawing = threading.Lock()  # one run's pictures at a time (and one matplotlib user)

# Cleared while a script waits for this process (its run being opened, or ended): the
# pictures of an earlier run then pause between two models' or datasets' pictures, a few
# hundred milliseconds of drawing at most, so that they never lengthen a script's wait.
drawing_may_go = threading.Event()
drawing_may_go.set()
# The longest one pause lasts; past it the pictures are drawn all the same. A script's
# wait is bounded per unanswered MLflow call (pypads.to_mlflow.timeouts), not in total,
# so this is a bound of its own: twice the local store's bound for one call.
MOST_PAUSE = 2 * LOCAL_TIMEOUT


@contextlib.contextmanager
def script_waits() -> Iterator[None]:
    """Pictures pause while the script waits for this process."""
    drawing_may_go.clear()
    try:
        yield
    finally:
        drawing_may_go.set()


def draw_later(uploader: Uploader, commands: queue.Queue[Command | None], script_gone: bool) -> None:
    """Draw ``uploader``'s pictures in a thread, once the script has exited (its end of
    ``commands``) or :data:`SCRIPT_EXIT_WAIT` has passed (at once if it is ``script_gone``)."""
    wait = 0.0 if script_gone else SCRIPT_EXIT_WAIT
    drawing = threading.Thread(target=_draw_pictures, args=(uploader, commands, wait), name="pypads-pictures")
    drawing.start()
    _drawing[:] = [*filter(threading.Thread.is_alive, _drawing), drawing]


def _draw_pictures(uploader: Uploader, commands: queue.Queue[Command | None], wait: float) -> None:
    _until_the_script_exits(commands, wait)
    with _one_drawing:
        uploader.send_pictures(between=lambda: drawing_may_go.wait(MOST_PAUSE))


def pictures_drawn() -> None:
    """Wait for the pictures of the runs served so far, before this process exits."""
    while _drawing:
        _drawing.pop().join()


def _until_the_script_exits(commands: queue.Queue[Command | None], timeout: float) -> None:
    """Wait until the script's end of input (its exit), at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            if commands.get(timeout=left) is None:
                return
        except queue.Empty:
            return
