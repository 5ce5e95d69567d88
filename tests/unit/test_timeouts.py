"""The answer clock: a wait ends when one MLflow call goes unanswered too long, or when
nothing at all happens for too long; never while calls keep being answered."""

from __future__ import annotations

import threading
import time

import pytest

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


class ServerDown(Exception):
    pass


def failing(times: int, error: Exception):
    calls = []

    def call() -> str:
        calls.append(time.monotonic())
        if len(calls) <= times:
            raise error
        return "answered"

    return call, calls


def test_a_call_failing_for_a_server_down_is_tried_again_and_counts_as_one_unanswered_call():
    clock = AnswerClock(passing=lambda error: isinstance(error, ServerDown))
    call, calls = failing(2, ServerDown())
    busy_between: list[bool] = []
    watcher = threading.Timer(0.3, lambda: busy_between.append(clock.busy))
    watcher.start()
    assert clock.call(call) == "answered"
    assert len(calls) == 3
    assert busy_between == [True]  # a script waiting on the clock sees one call, unanswered
    assert not clock.busy


def test_any_other_failure_is_raised_at_once():
    clock = AnswerClock(passing=lambda error: isinstance(error, ServerDown))
    call, calls = failing(1, KeyError("refused by the store"))
    with pytest.raises(KeyError):
        clock.call(call)
    assert len(calls) == 1


def test_once_given_up_after_a_deadline_a_server_down_is_raised_when_the_next_pause_would_pass_it():
    clock = AnswerClock(passing=lambda error: isinstance(error, ServerDown))
    clock.give_up_after(0.0)
    call, calls = failing(5, ServerDown())
    with pytest.raises(ServerDown):
        clock.call(call)
    assert len(calls) == 1
