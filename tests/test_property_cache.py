"""policies/property_cache.py: the pack's analyzer converts each resource once, not once per policy,
and reports exactly what it reports without the cache."""

from __future__ import annotations

from collections.abc import Iterator
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
SECRET = "1b47061264138c4ac30d75fd1eb44270"  # Pulumi's secret signature


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
    secret["metadata"]["annotations"] = {"token": {"4dabf18193072939515e22adb298388d": SECRET, "value": "s3cr3t"}}
    return [*objects, unknown, secret]


def _request(i: int, obj: dict[str, Any]) -> proto.AnalyzeRequest:
    props = struct_pb2.Struct()
    json_format.ParseDict(obj, props)
    rtype = resource_type(obj)
    return proto.AnalyzeRequest(type=rtype, properties=props, urn=f"urn:pulumi:prod::p::{rtype}::r{i}", name=f"r{i}")


def _servicer() -> _PolicyAnalyzerServicer:
    every_rule_on = {p.name: EnforcementLevel.MANDATORY for p in build_policies()}
    return _PolicyAnalyzerServicer(PACK_NAME, "0.0.1", build_policies(), EnforcementLevel.ADVISORY, every_rule_on)


def _reports(requests: list[proto.AnalyzeRequest]) -> tuple[list[bytes], bytes]:
    servicer = _servicer()
    each = [servicer.Analyze(r, None).SerializeToString(deterministic=True) for r in requests]
    resources = [proto.AnalyzerResource(type=r.type, properties=r.properties, urn=r.urn, name=r.name) for r in requests]
    stack = proto.AnalyzeStackRequest(resources=resources)
    return each, servicer.AnalyzeStack(stack, None).SerializeToString(deterministic=True)


@pytest.fixture
def cache() -> Iterator[None]:
    property_cache.uninstall()
    assert property_cache.install(), "pulumi_policy's analyzer no longer converts properties as property_cache expects"
    yield
    property_cache.uninstall()


def test_the_pinned_analyzer_converts_properties_the_way_the_cache_wraps() -> None:
    """An upgrade of pulumi-policy that renames these steps must be looked at (install would do nothing)."""
    import pulumi_policy.policy as analyzer

    property_cache.uninstall()
    assert property_cache._originals(analyzer) is not None
    assert property_cache.install() and property_cache.install()  # a second install is a no-op
    property_cache.uninstall()
    assert analyzer.json_format is json_format


def test_each_resource_is_converted_once_and_the_reports_are_unchanged(cache: None) -> None:
    requests = [_request(i, obj) for i, obj in enumerate(_objects())]
    with_cache = _reports(requests)
    assert property_cache.conversions() == 2 * len(requests)  # Analyze's requests, then the stack's copies
    property_cache.uninstall()
    without = _reports(requests)
    assert with_cache == without
    diagnostics = [proto.AnalyzeResponse.FromString(b).diagnostics for b in without[0]]
    assert sum(len(d) for d in diagnostics) >= len(CASES)  # the comparison covers real violations
    unknown = proto.AnalyzeResponse.FromString(without[0][-2]).diagnostics
    assert any("can't be known during preview" in d.message for d in unknown)


def test_a_new_message_is_never_mistaken_for_a_cached_one(cache: None) -> None:
    """Identity keys are held while cached, so a recycled id cannot return another resource's props."""
    memo = property_cache.IdentityMemo(lambda m: json_format.MessageToDict(m), size=2)
    seen = []
    for i in range(50):
        msg = _request(i, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}}).properties
        seen.append(memo(msg)["metadata"]["name"])
        del msg  # its id may be reused by the next message
    assert seen == [f"c{i}" for i in range(50)]
    assert memo.calls == 50 and len(memo._entries) == 2


def test_the_remediation_path_is_not_memoised(cache: None) -> None:
    """``deserialize_properties(d, True)`` (Remediate) wraps secrets in proxies of its own: it runs each time."""
    import pulumi_policy.policy as analyzer

    props = {"a": {"4dabf18193072939515e22adb298388d": SECRET, "value": "x"}}
    plain = analyzer.deserialize_properties(props)
    assert plain == {"a": "x"} and analyzer.deserialize_properties(props) is plain
    assert analyzer.deserialize_properties(props, True) is not analyzer.deserialize_properties(props, True)
