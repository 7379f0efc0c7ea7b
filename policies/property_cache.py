"""One property conversion per resource, shared by every policy of the pack.

pulumi_policy 1.21.0's analyzer converts a resource's properties once per policy:
``unknown_checking_proxy(deserialize_properties(json_format.MessageToDict(request.properties)))`` runs
inside the loop over policies in ``Analyze``, and inside the loop over stack policies for every
resource in ``AnalyzeStack``. With this pack's 46 policies that is 46 conversions of each resource;
a chart's CustomResourceDefinition (KubeRay's are 250-490 KB) costs ~0.14 s a conversion, so the
four KubeRay CRDs alone took 25.8 s of a prod preview.

``install()`` wraps those three steps, as the analyzer module names them, in identity memos: the
same protobuf message object (the analyzer reads ``request.properties`` once per policy; upb hands
back the same object each time) yields the same converted mapping. Each memo holds its keys
strongly, so an id is never reused while cached (no false hits), and keeps the last ``SIZE`` entries,
enough for every resource of a large stack in ``AnalyzeStack``. The policies share the converted
mapping read-only: the pack's rules are pure functions of it (``policies/rules/base.py``).

It checks what it wraps: if a pulumi_policy upgrade renames or stops calling these steps, ``install``
changes nothing and returns False (the pack stays correct, only slower), and a test fails so the
upgrade gets looked at.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from types import ModuleType, SimpleNamespace
from typing import Any

SIZE = 8192


class IdentityMemo:
    """``fn(x)`` remembered by the identity of ``x`` for the last ``size`` distinct arguments (a call
    with more arguments, such as the remediation path's ``deserialize_properties(d, True)``, runs ``fn``)."""

    def __init__(self, fn: Callable[[Any], Any], size: int = SIZE) -> None:
        self.fn = fn
        self.size = size
        self.calls = 0  # conversions actually run (for tests and the bench)
        self._entries: OrderedDict[int, tuple[Any, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, arg: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return self.fn(arg, *args, **kwargs)
        key = id(arg)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and hit[0] is arg:
                self._entries.move_to_end(key)
                return hit[1]
        value = self.fn(arg)
        with self._lock:
            self.calls += 1
            self._entries[key] = (arg, value)  # the key object stays alive while cached
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value


def _analyzer_module() -> ModuleType:
    import pulumi_policy.policy as analyzer

    return analyzer


def _originals(analyzer: ModuleType) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]] | None:
    """The three conversion steps the analyzer calls, if they are still the library's own."""
    import google.protobuf.json_format as json_format
    from pulumi_policy.deserialize import deserialize_properties
    from pulumi_policy.proxy import unknown_checking_proxy

    to_dict = json_format.MessageToDict
    if (
        getattr(analyzer, "json_format", None) is json_format
        and getattr(analyzer, "deserialize_properties", None) is deserialize_properties
        and getattr(analyzer, "unknown_checking_proxy", None) is unknown_checking_proxy
    ):
        return to_dict, deserialize_properties, unknown_checking_proxy
    return None


def install() -> bool:
    """Share the analyzer's property conversion between policies; False if it could not."""
    analyzer = _analyzer_module()
    if isinstance(getattr(analyzer, "json_format", None), SimpleNamespace):
        return True  # already installed
    found = _originals(analyzer)
    if found is None:
        return False
    to_dict, deserialize, proxy = found
    json_format: ModuleType = analyzer.json_format
    memo = IdentityMemo(to_dict)
    shim = {name: getattr(json_format, name) for name in dir(json_format) if not name.startswith("__")}
    shim["MessageToDict"] = memo
    shim["memo"] = memo
    analyzer.json_format = SimpleNamespace(**shim)  # type: ignore[attr-defined]
    analyzer.deserialize_properties = IdentityMemo(deserialize)  # type: ignore[attr-defined]
    analyzer.unknown_checking_proxy = IdentityMemo(proxy)  # type: ignore[attr-defined]
    return True


def uninstall() -> None:
    """Put the analyzer's own conversion steps back (tests compare the pack with and without)."""
    analyzer = _analyzer_module()
    shim = getattr(analyzer, "json_format", None)
    if not isinstance(shim, SimpleNamespace):
        return
    from google.protobuf import json_format
    from pulumi_policy.deserialize import deserialize_properties
    from pulumi_policy.proxy import unknown_checking_proxy

    analyzer.json_format = json_format  # type: ignore[attr-defined]
    analyzer.deserialize_properties = deserialize_properties  # type: ignore[attr-defined]
    analyzer.unknown_checking_proxy = unknown_checking_proxy  # type: ignore[attr-defined]


def conversions() -> int:
    """How many times the analyzer has really converted a message since ``install()`` (0 if not installed)."""
    json_format = getattr(_analyzer_module(), "json_format", None)
    memo = getattr(json_format, "memo", None)
    return memo.calls if isinstance(memo, IdentityMemo) else 0
