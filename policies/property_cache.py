"""One property conversion per resource in each analyzer call, shared by every policy of the pack.

pulumi_policy 1.21.0's analyzer converts a resource's properties once per policy:
``unknown_checking_proxy(deserialize_properties(json_format.MessageToDict(request.properties)))`` runs
inside the loop over policies in ``Analyze``, and inside the loop over stack policies for every
resource in ``AnalyzeStack``. With this pack's 46 policies that is 46 conversions of each resource;
a chart's CustomResourceDefinition (KubeRay's are 250-490 KB) costs ~0.14 s a conversion, so the
four KubeRay CRDs alone took ~24 s of a prod preview (BENCHMARKS.md).

``install()`` wraps those three steps, as the analyzer module names them, in memos keyed by the
identity of their argument (the analyzer reads ``request.properties`` once per policy; upb hands back
the same object each time), and wraps ``Analyze`` and ``AnalyzeStack`` so that the memos live for one
call only, in the calling thread (the analyzer's gRPC server runs four): nothing converted outlives
the call that converted it (secrets included), and a call's memos hold their keys, so an id cannot
be reused within it. The policies share the converted mapping read-only: the pack's rules are pure
functions of it (``policies/rules/base.py``).

``install`` checks that the analyzer still names the library's own three steps and methods; if a
pulumi_policy upgrade renames them it changes nothing and returns False (the pack stays correct,
only slower; the pack says so on stderr). Whether the analyzer still calls them per policy is what
``tests/test_property_cache.py`` counts, so an upgrade that changes it fails there.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from collections.abc import Callable
from types import ModuleType, SimpleNamespace
from typing import Any

STEPS = ("MessageToDict", "deserialize_properties", "unknown_checking_proxy")
METHODS = ("Analyze", "AnalyzeStack")

_current = threading.local()
"""``memos``: one dict per step, id(argument) -> (argument, result), while an analyzer call runs."""
_counts: Counter[str] = Counter()
"""How many times each step really ran under ``install()`` (tests and the bench read it)."""
_counts_lock = threading.Lock()
_installed: dict[str, Any] = {}
"""The analyzer's originals, by name, while installed."""


def _memoised(step: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` answered from the current call's memo for a repeated argument (a call with more
    arguments, such as Remediate's ``deserialize_properties(d, True)``, or outside a call, runs ``fn``)."""

    @functools.wraps(fn)
    def call(arg: Any, *args: Any, **kwargs: Any) -> Any:
        memos: dict[str, dict[int, tuple[Any, Any]]] | None = getattr(_current, "memos", None)
        if memos is None or args or kwargs:
            return fn(arg, *args, **kwargs)
        memo = memos[step]
        hit = memo.get(id(arg))
        if hit is not None and hit[0] is arg:
            return hit[1]
        value = fn(arg)
        memo[id(arg)] = (arg, value)
        with _counts_lock:
            _counts[step] += 1
        return value

    return call


def _scoped(method: Callable[..., Any]) -> Callable[..., Any]:
    """The analyzer method with fresh memos for the duration of one call."""

    @functools.wraps(method)
    def call(self: Any, request: Any, context: Any) -> Any:
        outer = getattr(_current, "memos", None)
        _current.memos = {step: {} for step in STEPS}
        try:
            return method(self, request, context)
        finally:
            _current.memos = outer

    return call


def _analyzer_module() -> ModuleType:
    import pulumi_policy.policy as analyzer

    return analyzer


def _originals(analyzer: ModuleType) -> dict[str, Any] | None:
    """What ``install`` wraps, if the analyzer still names the library's own objects."""
    import google.protobuf.json_format as json_format
    from pulumi_policy.deserialize import deserialize_properties
    from pulumi_policy.proxy import unknown_checking_proxy

    servicer = getattr(analyzer, "_PolicyAnalyzerServicer", None)
    if not (
        getattr(analyzer, "json_format", None) is json_format
        and getattr(analyzer, "deserialize_properties", None) is deserialize_properties
        and getattr(analyzer, "unknown_checking_proxy", None) is unknown_checking_proxy
        and servicer is not None
        and all(callable(getattr(servicer, m, None)) for m in METHODS)
    ):
        return None
    return {
        "json_format": json_format,
        "deserialize_properties": deserialize_properties,
        "unknown_checking_proxy": unknown_checking_proxy,
        **{m: getattr(servicer, m) for m in METHODS},
    }


def install() -> bool:
    """Share the analyzer's property conversion between the policies of each call; False if it could not."""
    if _installed:
        return True
    analyzer = _analyzer_module()
    found = _originals(analyzer)
    if found is None:
        return False
    json_format = found["json_format"]
    shim = {name: getattr(json_format, name) for name in dir(json_format) if not name.startswith("__")}
    shim["MessageToDict"] = _memoised("MessageToDict", json_format.MessageToDict)
    analyzer.json_format = SimpleNamespace(**shim)  # type: ignore[attr-defined]
    for step in STEPS[1:]:
        setattr(analyzer, step, _memoised(step, found[step]))
    for method in METHODS:
        setattr(analyzer._PolicyAnalyzerServicer, method, _scoped(found[method]))
    _installed.update(found)
    return True


def uninstall() -> None:
    """Put the analyzer's own steps and methods back (tests compare the pack with and without)."""
    if not _installed:
        return
    analyzer = _analyzer_module()
    for name in ("json_format", *STEPS[1:]):
        setattr(analyzer, name, _installed[name])
    for method in METHODS:
        setattr(analyzer._PolicyAnalyzerServicer, method, _installed[method])
    _installed.clear()


def conversions() -> dict[str, int]:
    """How many times each step has really run under ``install()``, by step name."""
    with _counts_lock:
        return {step: _counts[step] for step in STEPS}
