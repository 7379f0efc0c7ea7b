"""The in-cluster GCS Redis keeps every acknowledged write across a crash: a real ``redis-server``
(Debian's 7.0.15, the release the image is pinned to) runs exactly the configuration the program
renders, with the password the way the container passes it (``--requirepass``)."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from components.manifests.redis import CONFIG_DIR, DATA_DIR, redis_conf, redis_objects
from components.spec.storage import REDIS_VERSION, InClusterRedis
from tests.conftest import needs_tool

PASSWORD = "durability-test-password"
KEYS = 10_000
SPEC = InClusterRedis.model_validate({"type": "redis", "namespace": "ray-serving", "password": {"config": "p"}})


def redis_server() -> str:
    return needs_tool("redis-server", "redis-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def local_conf(conf: str, data: Path, port: int) -> str:
    """The rendered config with only what a local run must change: data dir, port, and loopback."""
    replaced = conf.replace(f"dir {DATA_DIR}", f"dir {data}").replace("port 6379", f"port {port}")
    return replaced.replace("bind * -::*", "bind 127.0.0.1")


@contextmanager
def server(conf: str, data: Path, port: int, *extra: str) -> Iterator[subprocess.Popen[bytes]]:
    config = data.parent / "redis.conf"
    config.write_text(local_conf(conf, data, port))
    # As the container runs it: redis-server <conf> --requirepass "$REDIS_PASSWORD".
    command = [redis_server(), str(config), "--requirepass", PASSWORD, *extra]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.05)
        else:
            raise AssertionError("redis-server did not start")
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def command(port: int, *args: str, password: str | None = PASSWORD) -> bytes:
    """A RESP request over a socket (no client library): AUTH first when a password is given."""
    requests = ([["AUTH", password]] if password else []) + [list(args)]
    payload = b"".join(
        f"*{len(r)}\r\n".encode() + b"".join(f"${len(a.encode())}\r\n{a}\r\n".encode() for a in r) for r in requests
    )
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(payload)
        s.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def write_keys(port: int) -> None:
    """Pipelined SETs with the password; returns once every one is acknowledged (+OK)."""
    lines = [f"AUTH {PASSWORD}"] + [f"SET gcs:key:{i} value-{i}" for i in range(KEYS)]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(("\r\n".join(lines) + "\r\n").encode())
        s.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    assert data.count(b"+OK\r\n") == KEYS + 1, data[:200]


def wait_loaded(port: int) -> None:
    """Like the readiness probe: an authenticated PING answers PONG once the data is loaded (until
    then every command gets -LOADING)."""
    deadline = time.monotonic() + 30
    while not command(port, "PING").endswith(b"+PONG\r\n"):
        assert time.monotonic() < deadline, "redis-server did not finish loading"
        time.sleep(0.05)


def durable_keys(conf: str, tmp_path: Path, settle: float) -> int:
    """Write KEYS acknowledged keys, wait ``settle`` seconds, kill -9 the server, restart it on the
    same data directory, and count the keys that survived."""
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    with server(conf, data, port) as proc:
        write_keys(port)
        time.sleep(settle)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with server(conf, data, port):
        wait_loaded(port)
        reply = command(port, "DBSIZE")
    return int(reply.split(b"\r\n")[1].lstrip(b":"))


def test_the_rendered_config_refuses_unauthenticated_commands(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    with server(redis_conf(SPEC), data, port):
        assert command(port, "SET", "k", "v", password=None).startswith(b"-NOAUTH")
        assert command(port, "SET", "k", "v", password="wrong").startswith(b"-WRONGPASS")
        assert command(port, "SET", "k", "v").endswith(b"+OK\r\n")
        assert command(port, "CONFIG", "GET", "maxmemory-policy").split(b"\r\n")[-2] == b"noeviction"


# appendfsync everysec: while a background fsync runs, Redis may delay the AOF write by up to two
# seconds and still answer (the documented bound of what everysec can lose); past that, nothing.
EVERYSEC_WINDOW = 2.5


def test_every_acknowledged_key_survives_kill_9(tmp_path: Path) -> None:
    assert durable_keys(redis_conf(SPEC), tmp_path, settle=EVERYSEC_WINDOW) == KEYS


def test_with_appendfsync_always_even_the_last_acknowledged_write_survives(tmp_path: Path) -> None:
    always = InClusterRedis.model_validate({**SPEC.model_dump(by_alias=True), "appendfsync": "always"})
    assert "appendfsync always" in redis_conf(always)
    assert durable_keys(redis_conf(always), tmp_path, settle=0) == KEYS


def test_a_config_without_aof_loses_the_acknowledged_keys(tmp_path: Path) -> None:
    mutant = redis_conf(SPEC).replace("appendonly yes", "appendonly no")
    assert mutant != redis_conf(SPEC)
    assert durable_keys(mutant, tmp_path, settle=EVERYSEC_WINDOW) < KEYS


def test_the_server_version_is_the_pinned_image_release() -> None:
    out = subprocess.run([redis_server(), "--version"], capture_output=True, text=True, check=True).stdout
    assert f"v={REDIS_VERSION} " in out
    statefulset = next(
        o
        for o in redis_objects("gcs", SPEC, "prod", ("gcs-redis-password", "password"), {})
        if o["kind"] == "StatefulSet"
    )
    assert statefulset["spec"]["template"]["spec"]["containers"][0]["image"] == f"redis:{REDIS_VERSION}"


def test_the_container_runs_the_config_it_mounts() -> None:
    objects = redis_objects("gcs", SPEC, "prod", ("gcs-redis-password", "password"), {"ray-serving": ["qwen"]})
    config_map = next(o for o in objects if o["kind"] == "ConfigMap")
    assert config_map["data"]["redis.conf"] == redis_conf(SPEC)
    container = next(o for o in objects if o["kind"] == "StatefulSet")["spec"]["template"]["spec"]["containers"][0]
    assert f"{CONFIG_DIR}/redis.conf" in container["command"][-1] and "--requirepass" in container["command"][-1]
    assert PASSWORD not in str(objects)


def test_with_aof_on_an_rdb_snapshot_alone_is_not_loaded(tmp_path: Path) -> None:
    """Why the runbook's restore has a step of its own: Redis 7 with appendonly yes and no AOF
    starts empty, ignoring dump.rdb beside it."""
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    with server(redis_conf(SPEC), data, port):
        write_keys(port)
        assert command(port, "SAVE").endswith(b"+OK\r\n")
    shutil.rmtree(data / "appendonlydir")
    with server(redis_conf(SPEC), data, port):
        wait_loaded(port)
        assert command(port, "DBSIZE").split(b"\r\n")[1] == b":0"


def test_the_runbooks_restore_from_an_rdb_snapshot_keeps_every_key(tmp_path: Path) -> None:
    """docs/runbook.md, "Restore the Redis from a snapshot": the snapshot alone in the data directory,
    one start with --appendonly no, CONFIG SET appendonly yes (Redis rewrites the AOF from memory),
    then the normal start loads every key from the new AOF."""
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    conf = redis_conf(SPEC)
    with server(conf, data, port):
        write_keys(port)
        assert command(port, "SAVE").endswith(b"+OK\r\n")
    restored = tmp_path / "restored" / "data"
    restored.mkdir(parents=True)
    shutil.copy(data / "dump.rdb", restored / "dump.rdb")
    with server(conf, restored, port, "--appendonly", "no"):
        wait_loaded(port)
        assert command(port, "CONFIG", "SET", "appendonly", "yes").endswith(b"+OK\r\n")
        deadline = time.monotonic() + 60
        while True:
            info = command(port, "INFO", "persistence").decode()
            if "aof_rewrite_in_progress:0" in info and "aof_rewrite_scheduled:0" in info and "aof_enabled:1" in info:
                break
            assert time.monotonic() < deadline, info
            time.sleep(0.1)
        assert "aof_last_bgrewrite_status:ok" in info
    with server(conf, restored, port):
        wait_loaded(port)
        assert command(port, "DBSIZE").split(b"\r\n")[1] == f":{KEYS}".encode()
