"""The answer clock: a wait ends when one MLflow call goes unanswered too long, or when
nothing at all happens for too long; never while calls keep being answered."""

from __future__ import annotations

import threading
import time

from pypads.to_mlflow.timeouts import AnswerClock


def test_a_wait_on_an_uploader_that_does_nothing_ends_after_the_idle_limit():
    clock = AnswerClock(idle_limit=0.3)
    started = time.monotonic()
    assert clock.wait(lambda: False, timeout=0.1) is False
    assert 0.3 <= time.monotonic() - started < 5


def test_a_call_that_goes_unanswered_ends_the_wait_after_the_timeout():
    clock = AnswerClock(idle_limit=60)
    clock.started()
    started = time.monotonic()
    assert clock.wait(lambda: False, timeout=0.2) is False
    assert time.monotonic() - started < 5


def test_calls_that_keep_being_answered_keep_the_wait_going_past_the_idle_limit():
    clock = AnswerClock(idle_limit=0.3)
    finished = threading.Event()

    def busy_uploader() -> None:
        for _ in range(20):  # a second of short calls, three idle limits
            clock.call(time.sleep, 0.05)
        finished.set()

    threading.Thread(target=busy_uploader, daemon=True).start()
    assert clock.wait(finished.is_set, timeout=0.2) is True
