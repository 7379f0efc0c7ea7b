"""Readers the rules share: serve configs, runtime environments, images."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

import yaml

from components.manifests.ray_objects import (
    PodGroup,
    as_list,
    as_map,
    dig,
    group_accelerators,
    is_gpu_resource,
    job_spec,
    job_spec_path,
    pod_groups,
)
from components.upstream import LLM_IMPORT_PATH


@lru_cache(maxsize=1024)
def _parse_yaml(text: str) -> tuple[Any, str | None]:
    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)), None
    except yaml.YAMLError as exc:
        return None, str(getattr(exc, "problem", None) or exc).splitlines()[0]


def parse_yaml(text: Any) -> tuple[Any, str | None]:
    """(document, error) of a YAML string field such as ``serveConfigV2``; cached."""
    if not isinstance(text, str):
        return None, "not a string"
    return _parse_yaml(text)


def serve_config(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """A RayService's parsed ``serveConfigV2`` (empty when absent or unparsable)."""
    if obj.get("kind") != "RayService":
        return {}
    doc, _ = parse_yaml(dig(obj, "spec", "serveConfigV2"))
    return as_map(doc)


def runtime_envs(obj: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(where, runtime_env) of every runtime environment an object declares: a RayJob's (or a
    RayCronJob template's) ``runtimeEnvYAML``, and a RayService's serve applications and
    deployments (``runtime_env``, ``ray_actor_options.runtime_env``)."""
    job = job_spec(obj)
    if job is not None and "runtimeEnvYAML" in job:
        doc, _ = parse_yaml(job.get("runtimeEnvYAML"))
        yield f"{job_spec_path(obj)}.runtimeEnvYAML", as_map(doc)
    for i, app in enumerate(as_list(serve_config(obj).get("applications"))):
        app = as_map(app)
        where = f"spec.serveConfigV2 applications[{i}]"
        if "runtime_env" in app:
            yield f"{where}.runtime_env", as_map(app.get("runtime_env"))
        for j, dep in enumerate(as_list(app.get("deployments"))):
            env = dig(dep, "ray_actor_options", "runtime_env")
            if env is not None:
                yield f"{where}.deployments[{j}].ray_actor_options.runtime_env", as_map(env)
        for j, config in enumerate(as_list(dig(app, "args", "llm_configs"))):
            env = as_map(config).get("runtime_env")
            if env is not None:
                yield f"{where}.args.llm_configs[{j}].runtime_env", as_map(env)


def images(obj: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(path, image) of every container and init container of every Ray pod group."""
    for group in pod_groups(obj):
        for section in ("containers", "initContainers"):
            for i, container in enumerate(as_list(group.pod_spec.get(section))):
                image = as_map(container).get("image")
                if isinstance(image, str):
                    yield f"{group.path}.template.spec.{section}[{i}].image", image


_IMAGE = re.compile(
    r"^(?P<repo>[^@]+?)(?::(?P<tag>[\w][\w.-]{0,127}))?(?:@(?P<digest>[A-Za-z0-9_+.-]+:[0-9a-fA-F]{32,}))?$"
)


def split_image(image: str) -> tuple[str, str | None, str | None]:
    """(repository, tag, digest) of an image reference; a port in the registry is not a tag."""
    match = _IMAGE.match(image.strip())
    if not match:
        return image, None, None
    repo, tag, digest = match.group("repo"), match.group("tag"), match.group("digest")
    if tag is not None and "/" in tag:  # "registry:5000/ray" parsed as repo "registry", tag "5000/ray"
        return f"{repo}:{tag}", None, digest
    return repo, tag, digest


def is_gpu_group(group: PodGroup) -> bool:
    return any(is_gpu_resource(res) for res in group_accelerators(group))


def serving_text(obj: Mapping[str, Any]) -> str:
    return str(dig(obj, "spec", "serveConfigV2") or "")


def is_llm_service(obj: Mapping[str, Any]) -> bool:
    """A RayService that serves an LLM: Ray Serve LLM or vLLM in its serve config."""
    text = serving_text(obj)
    return obj.get("kind") == "RayService" and bool(re.search(r"ray\.serve\.llm|vllm|llm_configs", text))


def llm_configs(doc: Any) -> Iterator[tuple[int, int, Any]]:
    """(application index, config index, config) of every Ray Serve LLM model in a serve config."""
    for i, app in enumerate(as_list(as_map(doc).get("applications"))):
        if as_map(app).get("import_path") == LLM_IMPORT_PATH:
            for j, config in enumerate(as_list(dig(app, "args", "llm_configs"))):
                yield i, j, config
