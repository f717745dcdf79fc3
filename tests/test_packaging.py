"""Container packaging (issue 19): the compose stack runs the image built from the repository's Dockerfile,
which installs only the wheel, and no service installs the project from a mounted source tree at start-up.

Docker itself is not needed: these tests read docker-compose.yml, the Dockerfile and .dockerignore.
Building the wheel and sdist, installing the wheel into a fresh virtualenv and running the demo from it,
and installing from a read-only copy of the source, is `.ci/package` (run by `.ci/run`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from connector.config import ConnectorConfig, load_properties_file

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
CONFIG_IN_IMAGE = "/etc/mysql-cdc/connector.properties"
INSTALL_COMMANDS = re.compile(r"\bpip3?\s+install\b|\bsetup\.py\b|\buv\s+pip\b|\bpython3?\s+-m\s+pip\b")


def services() -> dict[str, dict[str, Any]]:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))["services"]


def as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    return str(value)


def volumes(service: dict[str, Any]) -> Iterator[tuple[str, str | None, str, bool]]:
    """(kind, source, target, read_only) for each volume entry, short or long syntax."""
    for entry in service.get("volumes", []):
        if isinstance(entry, dict):
            kind = entry.get("type", "volume")
            yield kind, entry.get("source"), entry["target"], bool(entry.get("read_only"))
            continue
        parts = str(entry).split(":")
        if len(parts) == 1:
            yield "volume", None, parts[0], False
            continue
        source, target, mode = parts[0], parts[1], parts[2] if len(parts) > 2 else ""
        kind = "bind" if source.startswith((".", "/", "~", "$")) else "volume"
        yield kind, source, target, "ro" in mode.split(",")


def test_no_service_installs_the_project_at_start_up() -> None:
    for name, service in services().items():
        for key in ("command", "entrypoint"):
            text = as_text(service.get(key))
            assert not INSTALL_COMMANDS.search(text), (
                f"service {name!r} installs something at start: {text!r}"
            )


def test_no_service_mounts_the_source_tree() -> None:
    """Bind mounts from the checkout may only bring in files from docker/ (init scripts, properties)."""
    allowed = ROOT / "docker"
    for name, service in services().items():
        for kind, source, target, _ in volumes(service):
            if kind != "bind":
                continue
            assert source is not None and not source.startswith(("$", "~")), (name, source)
            resolved = (ROOT / source).resolve()
            assert resolved == allowed or allowed in resolved.parents, (
                f"service {name!r} mounts {source} at {target}: only files under docker/ may be mounted"
            )
            assert resolved.exists(), f"service {name!r} mounts {source}, which does not exist"


def test_connector_service_runs_the_image_built_from_the_dockerfile() -> None:
    connector = services()["connector"]
    build = connector["build"]
    context, dockerfile = (
        (build, "Dockerfile")
        if isinstance(build, str)
        else (
            build.get("context", "."),
            build.get("dockerfile", "Dockerfile"),
        )
    )
    assert (ROOT / context).resolve() == ROOT
    assert (ROOT / context / dockerfile).resolve() == DOCKERFILE
    assert connector["image"] == "mysql-cdc:local"
    assert "connector" in connector.get("profiles", [])
    # The image's ENTRYPOINT/CMD start the connector; nothing may replace them with a shell.
    assert "entrypoint" not in connector
    assert "working_dir" not in connector
    if "command" in connector:
        assert as_text(connector["command"]).split()[0] == "run"

    mounts = {target: (kind, source, ro) for kind, source, target, ro in volumes(connector)}
    kind, source, read_only = mounts[CONFIG_IN_IMAGE]
    assert kind == "bind" and read_only, "the configuration is mounted read-only"
    assert (ROOT / str(source)).resolve() == ROOT / "docker" / "connector.properties"
    kind, _, _ = mounts["/data"]
    assert kind == "volume", "offsets and history live in a named volume at /data"


def test_compose_connector_properties_load_and_keep_state_under_data() -> None:
    path = ROOT / "docker" / "connector.properties"
    assert load_properties_file(path)["data.dir"] == "/data"
    config = ConnectorConfig.from_file(path)  # ${CDC_PASSWORD:-...} has a default
    assert config.data_dir == Path("/data")


# -- Dockerfile -------------------------------------------------------------------------------------


def dockerfile_stages() -> list[list[tuple[str, str]]]:
    """The Dockerfile as stages of (INSTRUCTION, arguments), continuations joined, comments dropped."""
    lines: list[str] = []
    pending = ""
    for raw in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        lines.append(pending + stripped)
        pending = ""
    assert not pending, "the Dockerfile ends inside a continuation"
    stages: list[list[tuple[str, str]]] = []
    for line in lines:
        instruction, _, args = line.partition(" ")
        instruction = instruction.upper()
        if instruction == "FROM":
            stages.append([])
        assert stages, f"{instruction} before the first FROM"
        stages[-1].append((instruction, args.strip()))
    return stages


def instructions(stage: list[tuple[str, str]], name: str) -> list[str]:
    return [args for instruction, args in stage if instruction == name]


def exec_form(args: str) -> list[str]:
    value = json.loads(args)  # shell form is not JSON and fails here
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


def test_dockerfile_builds_the_wheel_in_a_build_stage() -> None:
    stages = dockerfile_stages()
    assert len(stages) >= 2, "a build stage and a runtime stage"
    build = stages[0]
    assert re.fullmatch(r"python:3\.11-slim\S*\s+AS\s+build", build[0][1], re.IGNORECASE), build[0][1]
    runs = " ".join(instructions(build, "RUN"))
    assert re.search(r"pip\s+wheel\b.*--no-deps|-m\s+build\b", runs), runs


def test_dockerfile_runtime_stage_installs_only_the_wheel() -> None:
    runtime = dockerfile_stages()[-1]
    assert runtime[0][1].startswith("python:3.11-slim"), runtime[0][1]
    copies = instructions(runtime, "COPY")
    assert any(c.startswith("--from=build ") for c in copies), "the wheel comes from the build stage"
    for copy in copies:
        if copy.startswith("--from="):
            continue
        sources = copy.split()[:-1]
        assert all(s.startswith("docker/") for s in sources), f"runtime stage copies source: COPY {copy}"
    runs = " ".join(instructions(runtime, "RUN"))
    assert re.search(r"pip\s+install\s+\S*\.whl", runs), runs


def test_dockerfile_runs_as_non_root_with_a_data_volume_and_exec_form_entrypoint() -> None:
    runtime = dockerfile_stages()[-1]
    users = instructions(runtime, "USER")
    assert users, "the runtime stage sets a USER"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0", ""), f"runs as {users[-1]!r}"

    declared = [
        v
        for args in instructions(runtime, "VOLUME")
        for v in (exec_form(args) if args.startswith("[") else args.split())
    ]
    assert "/data" in declared
    assert instructions(runtime, "WORKDIR")[-1] == "/data"

    assert exec_form(instructions(runtime, "ENTRYPOINT")[-1]) == ["mysql-cdc"]
    assert exec_form(instructions(runtime, "CMD")[-1]) == ["run", "--config", CONFIG_IN_IMAGE]
    assert instructions(runtime, "STOPSIGNAL")[-1] == "SIGTERM"


def test_dockerfile_sources_are_in_the_build_context() -> None:
    """Every COPY source exists and is not excluded by .dockerignore."""
    ignored = {
        line.strip().rstrip("/")
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }
    for stage in dockerfile_stages():
        for copy in instructions(stage, "COPY"):
            if copy.startswith("--from="):
                continue
            for source in copy.split()[:-1]:
                assert (ROOT / source).exists(), f"COPY {source}: no such file"
                top = PurePosixPath(source).parts[0]
                assert top not in ignored and source not in ignored, f"COPY {source} is in .dockerignore"


def test_dockerfile_healthcheck_asks_health_on_the_configured_metrics_port() -> None:
    """The HEALTHCHECK fetches /health on loopback at the port the image's default configuration serves."""
    runtime = dockerfile_stages()[-1]
    checks = instructions(runtime, "HEALTHCHECK")
    assert len(checks) == 1, checks
    options, _, command = checks[0].partition("CMD ")
    assert command, f"HEALTHCHECK without CMD: {checks[0]}"
    argv = exec_form(command)
    assert argv[:2] == ["python", "-c"], argv
    urls = re.findall(r"http://([\d.]+):(\d+)(/\S*?)['\"]", argv[2])
    assert len(urls) == 1, argv[2]
    host, port, path = urls[0]
    assert (host, path) == ("127.0.0.1", "/health")
    compile(argv[2], "<healthcheck>", "exec")  # the one-liner is valid Python

    config = ConnectorConfig.from_file(ROOT / "docker" / "connector.properties")
    assert config.int_of("metrics.port") == int(port)
    # the check runs inside the container, so the endpoint must answer on its loopback; with compose's
    # host networking, binding loopback keeps it off the host's other interfaces
    assert services()["connector"].get("network_mode") == "host"
    assert config.get("metrics.host") == "127.0.0.1"
