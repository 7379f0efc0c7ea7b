"""policies/property_cache.py: within each analyzer call, every resource (and its provider) is
converted once, not once per policy; the reports are exactly those without it; nothing converted
outlives the call."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2 as proto
from pulumi_policy.policy import EnforcementLevel, _PolicyAnalyzerServicer

from policies import property_cache
from policies.pack import PACK_NAME, build_policies
from policies.rules.base import resource_type
from tests.policy_fixtures import CASES, GOLDEN, golden, head

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # Pulumi's unknown sentinel
SIG, SECRET = "4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270"  # a secret's signature


def _objects() -> list[dict[str, Any]]:
    """Every golden object, every violating fixture, one with an unknown value, one with a secret."""
    objects = [golden(name) for name in sorted(GOLDEN)]
    for cases in CASES.values():
        for base, change, _ in cases:
            twin = golden(base)
            change(twin)
            objects.append(twin)
    unknown = golden("raycluster")
    head(unknown)["rayStartParams"] = UNKNOWN
    secret = golden("raycluster")
    secret["metadata"]["annotations"] = {"token": {SIG: SECRET, "value": "s3cr3t"}}
    return [*objects, unknown, secret]


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    props = struct_pb2.Struct()
    json_format.ParseDict(value, props)
    return props


def _request(i: int, obj: dict[str, Any]) -> proto.AnalyzeRequest:
    """As the engine sends it: the resource and its provider, whose kubeconfig is a secret."""
    rtype = resource_type(obj)
    provider = proto.AnalyzerProviderResource(
        type="pulumi:providers:kubernetes",
        properties=_struct({"kubeconfig": {SIG: SECRET, "value": "apiVersion: v1"}, "renderYamlToDirectory": "out"}),
        urn="urn:pulumi:prod::p::pulumi:providers:kubernetes::k8s",
        name="k8s",
    )
    urn = f"urn:pulumi:prod::p::{rtype}::r{i}"
    return proto.AnalyzeRequest(type=rtype, properties=_struct(obj), urn=urn, name=f"r{i}", provider=provider)


def _servicer() -> _PolicyAnalyzerServicer:
    every_rule_on = {p.name: EnforcementLevel.MANDATORY for p in build_policies()}
    return _PolicyAnalyzerServicer(PACK_NAME, "0.0.1", build_policies(), EnforcementLevel.ADVISORY, every_rule_on)


def _stack(requests: list[proto.AnalyzeRequest]) -> proto.AnalyzeStackRequest:
    fields = ("type", "properties", "urn", "name", "provider")
    return proto.AnalyzeStackRequest(
        resources=[proto.AnalyzerResource(**{f: getattr(r, f) for f in fields}) for r in requests]
    )


def _reports(requests: list[proto.AnalyzeRequest]) -> tuple[list[bytes], bytes]:
    servicer = _servicer()
    each = [servicer.Analyze(r, None).SerializeToString(deterministic=True) for r in requests]
    return each, servicer.AnalyzeStack(_stack(requests), None).SerializeToString(deterministic=True)


@contextmanager
def _in_call() -> Iterator[None]:
    """The memos an analyzer call has while it runs."""
    property_cache._current.memos = {step: {} for step in property_cache.STEPS}
    try:
        yield
    finally:
        property_cache._current.memos = None


def _delta(before: dict[str, int]) -> dict[str, int]:
    return {step: n - before[step] for step, n in property_cache.conversions().items()}


@pytest.fixture
def cache() -> Iterator[None]:
    property_cache.uninstall()
    assert property_cache.install(), "pulumi_policy's analyzer no longer names what property_cache wraps"
    yield
    property_cache.uninstall()


def test_install_wraps_the_pinned_analyzer_and_uninstall_restores_it() -> None:
    """An upgrade of pulumi-policy that renames these must be looked at (install would do nothing)."""
    import pulumi_policy.policy as analyzer

    analyze = analyzer._PolicyAnalyzerServicer.Analyze
    property_cache.uninstall()
    assert property_cache._originals(analyzer) is not None
    assert property_cache.install() and property_cache.install()  # a second install is a no-op
    assert analyzer._PolicyAnalyzerServicer.Analyze is not analyze
    property_cache.uninstall()
    assert analyzer.json_format is json_format and analyzer._PolicyAnalyzerServicer.Analyze is analyze


def test_each_resource_and_provider_is_converted_once_per_call_and_the_reports_are_unchanged(cache: None) -> None:
    requests = [_request(i, obj) for i, obj in enumerate(_objects())]
    before = property_cache.conversions()
    with_cache = _reports(requests)
    # Analyze: each resource and its provider once; AnalyzeStack: the same again, for all its policies.
    assert _delta(before) == dict.fromkeys(property_cache.STEPS, 4 * len(requests))
    property_cache.uninstall()
    without = _reports(requests)
    assert with_cache == without
    diagnostics = [proto.AnalyzeResponse.FromString(b).diagnostics for b in without[0]]
    assert sum(len(d) for d in diagnostics) >= len(CASES)  # the comparison covers real violations
    unknown = proto.AnalyzeResponse.FromString(without[0][-2]).diagnostics
    assert any("can't be known during preview" in d.message for d in unknown)


def test_nothing_converted_outlives_its_call_and_calls_on_other_threads_keep_their_own(cache: None) -> None:
    requests = [_request(i, obj) for i, obj in enumerate(_objects())]
    servicer = _servicer()
    serial = [servicer.Analyze(r, None).SerializeToString(deterministic=True) for r in requests]
    assert getattr(property_cache._current, "memos", None) is None  # dropped (secrets and all) after each call
    before = property_cache.conversions()
    with ThreadPoolExecutor(max_workers=4) as pool:  # as the analyzer's gRPC server runs them
        threaded = list(pool.map(lambda r: servicer.Analyze(r, None).SerializeToString(deterministic=True), requests))
    assert threaded == serial
    assert _delta(before)["MessageToDict"] == 2 * len(requests)


def test_a_recycled_id_is_never_mistaken_for_a_cached_message(cache: None) -> None:
    """A call's memo holds its keys, so an id cannot be reused within the call; across calls the memo is new."""
    import pulumi_policy.policy as analyzer

    names = []
    with _in_call():
        for i in range(50):
            msg = _struct({"metadata": {"name": f"c{i}"}})
            names.append(analyzer.json_format.MessageToDict(msg)["metadata"]["name"])
            del msg  # its id may be reused by the next message were the memo not holding it
        assert len(property_cache._current.memos["MessageToDict"]) == 50
    assert names == [f"c{i}" for i in range(50)]


def test_the_remediation_path_is_not_memoised(cache: None) -> None:
    """``deserialize_properties(d, True)`` (Remediate) wraps secrets in proxies of its own: it runs each time."""
    import pulumi_policy.policy as analyzer

    props = {"a": {SIG: SECRET, "value": "x"}}
    with _in_call():
        plain = analyzer.deserialize_properties(props)
        assert plain == {"a": "x"} and analyzer.deserialize_properties(props) is plain
        assert analyzer.deserialize_properties(props, True) is not analyzer.deserialize_properties(props, True)
