"""The messages between a script and its uploader: each travels as one JSON line and
comes back equal; a line that is not a message of its direction is one clear WireError."""

from __future__ import annotations

import pytest

from pypads.to_mlflow.wire import (
    ClockReading,
    Close,
    Closed,
    Flush,
    Flushed,
    Opened,
    Warned,
    WireError,
    decode_answer,
    decode_command,
    encode,
)


@pytest.mark.parametrize("command", [Flush(3), Close("FINISHED", 5.0), Close(None, 60)])
def test_a_command_travels_as_one_line_and_comes_back_equal(command):
    line = encode(command)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert decode_command(line) == command


@pytest.mark.parametrize("answer", [Opened("0" * 32), Opened(None), Flushed(3, True), Closed(False),
                                    Warned("batch", "could not log: disk full"), ClockReading(busy=True)])
def test_an_answer_travels_as_one_line_and_comes_back_equal(answer):
    assert decode_answer(encode(answer)) == answer


@pytest.mark.parametrize(("line", "says"), [
    (b"flush 3\n", "not a JSON command"),  # the old protocol's bare words
    (b"[1, 2]\n", "not a JSON object"),
    (b'{"kind": "explode"}\n', "not a known command (close, flush)"),
    (b'{"kind": "flush"}\n', "a flush command has the fields number"),
    (b'{"kind": "flush", "number": "3"}\n', "field 'number' of a flush command is not of type int"),
    (b'{"kind": "flush", "number": true}\n', "field 'number' of a flush command is not of type int"),
    (b'{"kind": "open", "run_id": null}\n', "not a known command"),  # an answer is not a command
])
def test_a_line_that_is_no_command_is_one_clear_error(line, says):
    with pytest.raises(WireError, match=says.replace("(", r"\(").replace(")", r"\)")):
        decode_command(line)


def test_a_command_is_not_taken_for_an_answer():
    with pytest.raises(WireError, match="not a known answer"):
        decode_answer(encode(Flush(1)))
