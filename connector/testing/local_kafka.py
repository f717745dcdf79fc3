"""A throwaway Apache Kafka cluster in KRaft mode, from Kafka's own jars, for tests and local runs.

No Docker and no ZooKeeper: each node is a ``java -cp <jars> kafka.Kafka server.properties`` process
in a temporary directory, listening on free loopback ports. One node is both controller and broker
(``brokers=1``, the quickest to start); with more brokers a dedicated controller runs beside them, so
that brokers can be killed and restarted while the cluster's metadata quorum stays up.

The jars come from Maven Central (``.ci/kafka-jars.xml``, copied by ``.ci/setup`` into
``$MYSQL_CDC_KAFKA_JARS``, default ``~/.cache/mysql-cdc/kafka``). Start one from a shell with::

    python -m connector.testing.local_kafka --brokers 1

which prints the bootstrap address and runs until interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from connector.testing.local_server import free_port
from mysql_cdc_base.errors import MysqlCdcError

KAFKA_JARS_ENV = "MYSQL_CDC_KAFKA_JARS"
DEFAULT_KAFKA_JARS = Path.home() / ".cache" / "mysql-cdc" / "kafka"
START_TIMEOUT_S = 90.0

# Broker settings for a small cluster on one machine; replication settings follow the cluster size.
_BROKER_DEFAULTS = {
    "group.initial.rebalance.delay.ms": "0",
    "num.partitions": "1",
    "auto.create.topics.enable": "true",
    "log.segment.bytes": str(64 * 1024 * 1024),
    "log.retention.check.interval.ms": "5000",
    "transaction.state.log.num.partitions": "4",
    "offsets.topic.num.partitions": "4",
    "socket.request.max.bytes": str(200 * 1024 * 1024),
    # A heartbeat every 0.5 s (default 2 s): the controller's session timeout below needs several.
    "broker.heartbeat.interval.ms": "500",
}

# The controller fences a broker silent for broker.session.timeout.ms (default 9 s) and only then
# elects new leaders for its partitions and transaction coordinators. A broker-loss test's producer
# must see that within its delivery.timeout.ms on a loaded machine: 5 s (ten missed heartbeats).
_CONTROLLER_DEFAULTS = {"broker.session.timeout.ms": "5000"}

_LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {path}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = {level}
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = {level}
logger.apache.name = org.apache.kafka
logger.apache.level = {level}
"""


class KafkaStartError(MysqlCdcError, RuntimeError):
    pass


def kafka_jars() -> Path:
    """The directory of Kafka's jars, or a clear error saying how to get them."""
    path = Path(os.environ.get(KAFKA_JARS_ENV) or DEFAULT_KAFKA_JARS)
    if not any(path.glob("kafka_2.13-*.jar")):
        raise KafkaStartError(
            f"Apache Kafka's jars are not in {path} (set {KAFKA_JARS_ENV}); fetch them with "
            f"`mvn -f .ci/kafka-jars.xml dependency:copy-dependencies -DincludeScope=runtime "
            f"-DoutputDirectory={path}` (what `.ci/setup` runs)"
        )
    return path


def _java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    java = shutil.which("java")
    if not java:
        raise KafkaStartError("no `java` on PATH: Kafka needs Java 17 or newer")
    return java


@dataclass
class KafkaNode:
    """One Kafka process: a broker, a controller, or both (``roles``)."""

    node_id: int
    roles: str
    directory: Path
    port: int  # the client listener (brokers) or the controller listener (a pure controller)
    controller_port: int
    properties: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def log_path(self) -> Path:
        return self.directory / "server.log"

    def log_tail(self, lines: int = 40) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""


class LocalKafkaCluster:
    """Kafka nodes on loopback. ``bootstrap`` is the brokers' address list."""

    def __init__(
        self,
        brokers: int = 1,
        *,
        base_dir: Path | None = None,
        broker_properties: Mapping[str, str] | None = None,
        log_level: str = "WARN",
    ) -> None:
        if brokers < 1:
            raise ValueError("a Kafka cluster needs at least one broker")
        self.jars = kafka_jars()
        self.directory = Path(base_dir or tempfile.mkdtemp(prefix="mysql-cdc-kafka-"))
        self.cluster_id = _cluster_id()
        self.log_level = log_level
        self.nodes: list[KafkaNode] = []
        replication = str(min(brokers, 3))
        min_isr = "2" if brokers >= 3 else "1"
        extra = {
            **_BROKER_DEFAULTS,
            "offsets.topic.replication.factor": replication,
            "transaction.state.log.replication.factor": replication,
            "transaction.state.log.min.isr": min_isr,
            "default.replication.factor": replication,
            **dict(broker_properties or {}),
        }
        if brokers == 1:
            port, controller_port = free_port(), free_port()
            self.nodes.append(
                KafkaNode(1, "broker,controller", self.directory / "node-1", port, controller_port)
            )
            voters = f"1@127.0.0.1:{controller_port}"
        else:
            controller_port = free_port()
            self.nodes.append(
                KafkaNode(100, "controller", self.directory / "controller", controller_port, controller_port)
            )
            voters = f"100@127.0.0.1:{controller_port}"
            for node_id in range(1, brokers + 1):
                self.nodes.append(
                    KafkaNode(node_id, "broker", self.directory / f"broker-{node_id}", free_port(), 0)
                )
        for node in self.nodes:
            node.properties = self._properties(node, voters, extra)

    @property
    def brokers(self) -> list[KafkaNode]:
        return [n for n in self.nodes if n.is_broker]

    @property
    def bootstrap(self) -> str:
        return ",".join(n.address for n in self.brokers)

    def broker(self, node_id: int) -> KafkaNode:
        return next(n for n in self.brokers if n.node_id == node_id)

    # -- life ----------------------------------------------------------------------------------
    def start(self) -> LocalKafkaCluster:
        for node in self.nodes:
            self._format(node)
        for node in self.nodes:
            self.start_node(node, wait=False)
        for node in self.nodes:
            self._wait_listening(node)
        self.wait_ready()
        return self

    def start_node(self, node: KafkaNode, wait: bool = True) -> None:
        if node.running:
            return
        env = {
            **os.environ,
            "KAFKA_LOG4J_OPTS": "",
        }
        command = [
            _java(),
            "-Xms128m",
            "-Xmx512m",
            "-XX:+UseG1GC",
            "-XX:TieredStopAtLevel=1",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={node.directory / 'log4j2.properties'}",
            "-cp",
            str(self.jars / "*"),
            "kafka.Kafka",
            str(node.directory / "server.properties"),
        ]
        stdout = open(node.directory / "stdout.log", "ab")  # noqa: SIM115 - owned by the process
        node.process = subprocess.Popen(
            command, stdout=stdout, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        stdout.close()
        if wait:
            self._wait_listening(node)

    def kill(self, node: KafkaNode) -> None:
        """SIGKILL one node: no controlled shutdown, like a machine that dies."""
        if node.process is not None and node.process.poll() is None:
            node.process.kill()
            node.process.wait(timeout=30)

    def stop_node(self, node: KafkaNode, timeout: float = 60.0) -> None:
        """A controlled shutdown (SIGTERM), falling back to SIGKILL."""
        if node.process is None or node.process.poll() is not None:
            return
        node.process.send_signal(signal.SIGTERM)
        try:
            node.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill(node)

    def stop(self) -> None:
        for node in self.brokers:
            self.kill(node)
        for node in self.nodes:
            self.kill(node)

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> None:
        """Until every running broker is registered and answers metadata requests."""
        from kafka.admin import KafkaAdminClient

        running = {n.node_id for n in self.brokers if n.running}
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            try:
                admin = KafkaAdminClient(
                    bootstrap_servers=[n.address for n in self.brokers if n.running],
                    request_timeout_ms=5000,
                    api_version_auto_timeout_ms=5000,
                )
                try:
                    seen = {b["node_id"] for b in admin.describe_cluster()["brokers"]}
                finally:
                    admin.close()
                if running <= seen:
                    return
            except Exception as exc:  # noqa: BLE001 - retried until the deadline
                last_error = exc
            time.sleep(0.3)
        tails = "\n".join(f"--- node {n.node_id}:\n{n.log_tail()}" for n in self.nodes)
        raise KafkaStartError(
            f"Kafka brokers {sorted(running)} not ready in {timeout:.0f}s ({last_error})\n{tails}"
        )

    # -- files -----------------------------------------------------------------------------------
    def _properties(self, node: KafkaNode, voters: str, extra: Mapping[str, str]) -> dict[str, str]:
        listeners, protocols = [], ["CONTROLLER:PLAINTEXT"]
        props: dict[str, str] = {
            "process.roles": node.roles,
            "node.id": str(node.node_id),
            "controller.quorum.voters": voters,
            "controller.listener.names": "CONTROLLER",
            "log.dirs": str(node.directory / "data"),
        }
        if node.is_broker:
            listeners.append(f"PLAINTEXT://127.0.0.1:{node.port}")
            protocols.append("PLAINTEXT:PLAINTEXT")
            props["advertised.listeners"] = f"PLAINTEXT://127.0.0.1:{node.port}"
            props["inter.broker.listener.name"] = "PLAINTEXT"
            props.update(extra)
        if "controller" in node.roles:
            listeners.append(f"CONTROLLER://127.0.0.1:{node.controller_port}")
            props.update(_CONTROLLER_DEFAULTS)
        props["listeners"] = ",".join(listeners)
        props["listener.security.protocol.map"] = ",".join(protocols)
        return props

    def _format(self, node: KafkaNode) -> None:
        node.directory.mkdir(parents=True, exist_ok=True)
        (node.directory / "server.properties").write_text(
            "".join(f"{k}={v}\n" for k, v in node.properties.items())
        )
        (node.directory / "log4j2.properties").write_text(
            _LOG4J2.format(path=node.log_path, level=self.log_level)
        )
        result = subprocess.run(
            [
                _java(),
                "-cp",
                str(self.jars / "*"),
                f"-Dlog4j2.configurationFile={node.directory / 'log4j2.properties'}",
                "kafka.tools.StorageTool",
                "format",
                "--ignore-formatted",
                "-t",
                self.cluster_id,
                "-c",
                str(node.directory / "server.properties"),
            ],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise KafkaStartError(
                f"kafka-storage format failed for node {node.node_id}: {result.stdout}{result.stderr}"
            )

    def _wait_listening(self, node: KafkaNode, timeout: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if node.process is not None and node.process.poll() is not None:
                raise KafkaStartError(
                    f"Kafka node {node.node_id} exited with {node.process.returncode}:\n{node.log_tail()}"
                    f"\n{(node.directory / 'stdout.log').read_text(errors='replace')[-3000:]}"
                )
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", node.port), timeout=1):
                return
            time.sleep(0.1)
        raise KafkaStartError(f"Kafka node {node.node_id} not listening on {node.port} in {timeout:.0f}s")

    def __enter__(self) -> LocalKafkaCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.destroy()


def _cluster_id() -> str:
    """A Kafka cluster id: 16 random bytes in URL-safe base64 without padding (22 characters).

    Not starting with "-", which kafka-storage's argument parser would take for an option (1 in 64
    ids; Kafka's own ``Uuid.randomUuid`` skips those too)."""
    import base64

    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


@contextlib.contextmanager
def local_kafka(brokers: int = 1, **kwargs: object) -> Iterator[LocalKafkaCluster]:
    cluster = LocalKafkaCluster(brokers, **kwargs)  # type: ignore[arg-type]
    try:
        yield cluster.start()
    finally:
        cluster.destroy()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run a throwaway Apache Kafka cluster (KRaft) on loopback.")
    parser.add_argument("--brokers", type=int, default=1)
    parser.add_argument("--dir", type=Path, default=None, help="keep the cluster's files here")
    args = parser.parse_args(argv)
    cluster = LocalKafkaCluster(args.brokers, base_dir=args.dir)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        cluster.start()
        print(f"bootstrap.servers={cluster.bootstrap}", flush=True)
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        cluster.destroy() if args.dir is None else cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
