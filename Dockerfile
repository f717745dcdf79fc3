# mysql-cdc connector image.
#
#   docker build -t mysql-cdc:local .
#   docker run --rm -v "$PWD/my.properties:/etc/mysql-cdc/connector.properties:ro" \
#       -v mysql-cdc-data:/data -e CDC_PASSWORD=... mysql-cdc:local
#
# Configuration: the properties file mounted at /etc/mysql-cdc/connector.properties (an example for the
# docker-compose stack is baked in), with ${VAR} / ${VAR:-default} replaced from the container's
# environment; extra `--set key=value` arguments after `run` override single properties.
# State: offsets and schema history files live under the /data volume (data.dir=/data).

# ---- build stage: turn the source into a wheel ----------------------------------------------------
FROM python:3.11-slim AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY connector ./connector
COPY ddl ./ddl
COPY snapshot ./snapshot
COPY sink ./sink
COPY mysql_cdc_base ./mysql_cdc_base
RUN python -m pip wheel --no-deps --wheel-dir /dist .

# ---- runtime stage: only the wheel and its dependencies -------------------------------------------
FROM python:3.11-slim
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# The Spark sink needs a Java runtime as well; build FROM this image and add one
# (apt-get install default-jre-headless) if you use sink.type=spark.
COPY --from=build /dist/ /tmp/dist/
RUN python -m pip install /tmp/dist/*.whl && rm -rf /tmp/dist

RUN groupadd --system --gid 10001 mysql-cdc \
    && useradd --system --uid 10001 --gid mysql-cdc --home-dir /data --no-create-home \
       --shell /usr/sbin/nologin mysql-cdc \
    && mkdir -p /data /etc/mysql-cdc \
    && chown mysql-cdc:mysql-cdc /data
COPY docker/connector.properties /etc/mysql-cdc/connector.properties

USER 10001:10001
WORKDIR /data
VOLUME ["/data"]

# /health answers 200 once the connector is connected and snapshotting or streaming (503 otherwise);
# the port is metrics.port of docker/connector.properties (8083). A mounted configuration must keep
# metrics.port=8083 (or override this HEALTHCHECK) for the check to pass.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8083/health', timeout=4)"]

# Exec form: mysql-cdc is PID 1 and gets SIGTERM itself; `run` stops after the current batch, flushes
# the sinks and offsets and exits 0 (allow a stop timeout longer than one batch, e.g. `docker stop -t 30`).
STOPSIGNAL SIGTERM
ENTRYPOINT ["mysql-cdc"]
CMD ["run", "--config", "/etc/mysql-cdc/connector.properties"]
