"""PipelineTracker: the run's tracked calls as a graph, with the data flowing between them.

Nodes are calls (which function or method, on which instance, its call number and
depth). Edges are the order of calls, the nesting of calls, and the data flow: an
argument (or the instance) that is the very object an earlier call returned. Outputs
are remembered by identity through weak references only, so the tracker keeps no user
data alive; values that cannot be weakly referenced (numbers, tuples) make no edges.

At run end it writes ``pipeline/graph.json`` (every call) and ``pipeline/graph.svg``: the
script's own story — data → fit → predict → metric — in which calls of one kind are one
box with a count (a 50-fit loop is one box ×50) and what scikit-learn called inside a
call (a grid search's fits) is folded into it, so it stays readable however many calls
there were.

A node costs about 600 bytes until the run ends, so only the first ``max_calls`` calls
become nodes; later ones are counted per kind and place (``omitted`` in the document),
and a training loop that scores every batch for days holds no more memory than one
that scores 10,000 times.
"""

from __future__ import annotations

import functools
import json
import threading
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from pypads.core import PIPELINE_GRAPH, Logger
from pypads.recording.content.lineage import Origin, first_data, lineage, remember_weakly
from pypads.recording.content.picture import svg
from pypads.recording.loggers.values import named_arguments
from pypads.recording.provenance import provenance
from pypads.run import RunContext, TrackedCall

HOOK_KINDS = {"pypads_fit": "fit", "pypads_partial_fit": "fit", "pypads_predict": "predict",
              "pypads_transform": "transform", "pypads_metric": "metric"}


# (id, call, kinds, instance, number, depth, parent, arguments): a node as a call leaves it.
_Node = tuple[int, str, tuple[str, ...], "str | None", int, int, "int | None", "list[str] | None"]


class _Graph:
    """The graph of one run, filled while calls happen."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # A node is a tuple until the graph is written (see ``_Node``); its order and nesting
        # edges follow from the nodes then, so that a call adds no dicts but its data edges.
        self.nodes: list[_Node] = []
        self.data_edges: dict[int, list[tuple[int, str]]] = {}  # node -> (earlier node, argument)
        self.producers: dict[int, tuple[weakref.ref[Any], int]] = {}
        self.instances: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self.counts: dict[str, int] = {}
        self.first_call: Any = None  # the first tracked function: names the mapping in the provenance
        self.node_ids: set[int] = set()  # the calls that became nodes
        self.last_node = 0  # the order of the last of them
        self.omitted: dict[tuple[int, str, str | None], int] = {}  # (depth, call, parent's call): how many

    def instance_label(self, instance: Any) -> str | None:
        if instance is None:
            return None
        try:
            label = self.instances.get(instance)
            if label is None:
                kind = type(instance).__name__
                self.counts[kind] = self.counts.get(kind, 0) + 1
                label = self.instances[instance] = f"{kind}#{self.counts[kind]}"
            return label
        except TypeError:  # not weakly referenceable or not hashable
            return f"{type(instance).__name__}@{id(instance):x}"

    def parent_call(self, parent: TrackedCall | None) -> str | None:
        """The parent's call as :func:`~pypads.recording.content.picture.summarize` names it for a node: only a parent that
        is a node has one (a call past the limit is taken for one that would have been)."""
        if parent is None or (parent.order not in self.node_ids and parent.order < self.last_node):
            return None
        return parent.name

    def producer_of(self, value: Any) -> int | None:
        entry = self.producers.get(id(value))
        if entry is None:
            return None
        reference, node = entry
        return node if reference() is value else None

    def any_produced(self, values: Iterable[Any], node: int) -> bool:
        """Whether a call other than ``node`` returned one of ``values``: :meth:`producer_of`
        for each, in one loop (a metric in a loop asks this on every call)."""
        producers = self.producers
        if not producers:  # no call has returned anything to follow yet
            return False
        for value in values:
            entry = producers.get(id(value))
            if entry is not None and entry[1] != node and entry[0]() is value:
                return True
        return False

    def produced(self, value: Any, node: int) -> None:
        remember_weakly(self.producers, value, node)  # not weakly referenceable: no data edge


# Results that cannot be weakly referenced, so start no data edge: checked first, since a
# failed weak reference costs more, on a metric's every call.
_NO_EDGES = (float, int, str, bytes, tuple, type(None))


# The last logger and run that asked for their graph, and the graph: a metric in a loop
# asks on every call, and skips the run's states this way. Held here, not on the logger,
# which a config may copy.
_last: tuple[Any, RunContext | None, _Graph | None] = (None, None, None)


class PipelineTracker(Logger):
    """Options: the seed's ``pipeline_type`` (``"normal"``: every tracked call is a node,
    those a library made inside another call nested under it; ``"simple"``: only the
    script's own calls) and ``pipeline_args`` (``True`` also stores each call's argument
    names on its node), and ``max_calls``: how many calls become nodes; later ones are
    only counted."""

    defaults = {"pipeline_type": "normal", "pipeline_args": False, "max_calls": 10_000}

    def _graph(self, run: RunContext) -> _Graph:
        global _last
        logger, last_run, graph = _last
        if last_run is run and logger is self and graph is not None:
            return graph
        state = run.state(self)
        graph = state.get("graph")
        if graph is None:
            graph = state["graph"] = _Graph()
            run.on_end(lambda: _ended(run, graph))
        _last = (self, run, graph)
        return graph

    def pre(self, call: TrackedCall, options: Mapping[str, Any]) -> None:
        graph = self._graph(call.run)
        if call.depth > 0 and options["pipeline_type"] == "simple":
            return  # what a library did inside the script's call: not in a simple graph
        parent = call.parent
        if parent is not None and not parent.tracked:
            parent = _tracked_parent(call)
        order, instance, nodes = call.order, call.instance, graph.nodes
        with graph.lock:
            if len(nodes) >= options["max_calls"]:
                place = (call.depth, call.name, graph.parent_call(parent))
                graph.omitted[place] = graph.omitted.get(place, 0) + 1
                return
            graph.node_ids.add(order)
            if order > graph.last_node:
                graph.last_node = order
            if graph.first_call is None:
                graph.first_call = type(instance) if instance is not None else call.function
            nodes.append((
                order, call.name, _kinds(call.hooks),
                graph.instance_label(instance) if instance is not None else None,
                call.number, call.depth, parent.order if parent is not None else None,
                sorted(named_arguments(call)) if options["pipeline_args"] else None,
            ))
            if graph.producers:  # no data edge while no call has returned data
                sources = _data_sources(graph, call)
                if sources:
                    graph.data_edges[order] = sources

    def post(self, call: TrackedCall, before: None, options: Mapping[str, Any]) -> None:
        if call.exception is not None:
            return
        if call.instance is not None:  # a function's call (a metric) has no lineage to follow
            _follow(call)
        if isinstance(call.result, _NO_EDGES):  # a score: no data edge starts from it
            return
        graph = self._graph(call.run)
        if call.order not in graph.node_ids:  # omitted: no data edge can start from it
            return
        with graph.lock:
            graph.produced(call.result, call.order)


def _follow(call: TrackedCall) -> None:
    """The lineage of an estimator's call (see :mod:`pypads.recording.content.lineage`): the data
    a fit saw, and where a prediction came from, which names the metrics scoring it."""
    kinds = _kinds(call.hooks)
    known = lineage(call.run)
    data, position = first_data(call.args, call.kwargs, call.instance)
    if "fit" in kinds:
        known.fitted(call.instance, data)
        if call.parent is None:
            known.fitted_by_script(call.instance)
        else:
            outer = call.outermost.instance
            if outer is not None and outer is not call.instance:
                known.fitted_inside(call.instance, outer)
    if "predict" in kinds or "transform" in kinds:
        training = known.on_training_data(call.instance, data)
        if call.depth == 0:  # the script's call, or one its model made for an untracked method (score)
            name = known.caller_name(data, position) if data is not None else None
            if name is None and data is not None:  # a step's output, transformed from data with a name
                derived = known.origin_of((data,))
                name = derived.data if derived is not None else None
            known.produced(call.result, Origin(known.label(known.model_of(call.instance)), name, training))
        else:
            known.produced(call.result, Origin(None, None, training))


@functools.cache
def _kinds(hooks: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(HOOK_KINDS.get(hook, hook) for hook in hooks))


def _data_sources(graph: _Graph, call: TrackedCall) -> list[tuple[int, str]]:
    """(earlier call, argument) for each argument (or the instance) that an earlier call
    returned. Naming arguments takes a signature binding, which would cost a metric
    called in a loop more than all the rest of its node: it happens only for a call that
    has such an argument."""
    if not graph.any_produced(call.args, call.order) and not (
            call.kwargs and graph.any_produced(call.kwargs.values(), call.order)):
        return []
    sources = [("instance", call.instance)] if call.instance is not None else []
    found = []
    for name, value in [*sources, *named_arguments(call).items()]:
        producer = graph.producer_of(value)
        if producer is not None and producer != call.order:
            found.append((producer, name))
    return found


def _tracked_parent(call: TrackedCall) -> TrackedCall | None:
    parent = call.parent
    while parent is not None and not parent.tracked:
        parent = parent.parent
    return parent


def _ended(run: RunContext, graph: _Graph) -> None:
    """Write the graph, and let it go: a graph of 10,000 nodes is megabytes, not to be
    kept alive by the last run's place in ``_last`` after the run."""
    global _last
    if _last[1] is run:
        _last = (None, None, None)
    write_graph(run, graph)


def write_graph(run: RunContext, graph: _Graph) -> None:
    with graph.lock:
        document = {
            "schema": PIPELINE_GRAPH,
            "provenance": provenance("PipelineTracker", run.mappings, graph.first_call),
            "nodes": [_node_document(node) for node in graph.nodes],
            "edges": _edges(graph),
            "omitted": [{"call": call, "depth": depth, "parent_call": parent, "count": count}
                        for (depth, call, parent), count in graph.omitted.items()],
        }
    run.writer.log_bytes("pipeline/graph.json", json.dumps(document, indent=2).encode())
    if document["nodes"]:
        run.writer.log_bytes("pipeline/graph.svg", svg(document))



def _node_document(node: _Node) -> dict[str, Any]:
    order, name, kinds, instance, number, depth, parent, arguments = node
    document = {"id": order, "call": name, "kinds": list(kinds), "instance": instance, "number": number,
                "depth": depth, "parent": parent}
    if arguments is not None:
        document["arguments"] = arguments
    return document


def _edges(graph: _Graph) -> list[dict[str, Any]]:
    """Per node, in call order: from the node before it, from the call it was made in, and
    from the calls whose results it was given."""
    edges: list[dict[str, Any]] = []
    previous = None
    for order, *_, parent, _arguments in graph.nodes:
        if previous is not None:
            edges.append({"from": previous, "to": order, "kind": "order"})
        if parent is not None:
            edges.append({"from": parent, "to": order, "kind": "nested"})
        for producer, name in graph.data_edges.get(order, ()):
            edges.append({"from": producer, "to": order, "kind": "data", "argument": name})
        previous = order
    return edges
