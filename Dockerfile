# One image for every place cdc-delta runs in a container (docker compose, Kubernetes, a
# spark-submit driver): Java 17 (Eclipse Temurin) and Python 3.11, the package with Spark and
# Delta, and the Delta, Kafka and S3A jars resolved at build time (nothing is downloaded at start).
#   docker build -t cdc-delta:0.1.0 .
ARG PYTHON_IMAGE=python:3.11-slim-bookworm
ARG JAVA_IMAGE=eclipse-temurin:17-jre

FROM ${JAVA_IMAGE} AS java

FROM ${PYTHON_IMAGE} AS build
COPY --from=java /opt/java/openjdk /opt/java/openjdk
ENV JAVA_HOME=/opt/java/openjdk PATH=/opt/java/openjdk/bin:/opt/venv/bin:$PATH CDC_DELTA_CACHE=/opt/cdc-delta/cache
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends maven \
    && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/venv
WORKDIR /src
COPY pyproject.toml README.md ./
COPY cdc_delta ./cdc_delta
RUN pip install --no-cache-dir ".[local,sandbox]" \
    && python -c "from cdc_delta.infra.jars import spark_jars; spark_jars(('s3a',))"

FROM ${PYTHON_IMAGE}
COPY --from=java /opt/java/openjdk /opt/java/openjdk
COPY --from=build /opt/venv /opt/venv
COPY --from=build /opt/cdc-delta/cache /opt/cdc-delta/cache
ENV JAVA_HOME=/opt/java/openjdk PATH=/opt/java/openjdk/bin:/opt/venv/bin:$PATH \
    CDC_DELTA_CACHE=/opt/cdc-delta/cache PYTHONUNBUFFERED=1 PYSPARK_PYTHON=/opt/venv/bin/python
RUN useradd --create-home --uid 10001 cdc
USER cdc
WORKDIR /app
COPY --chown=cdc configs ./configs
COPY --chown=cdc devtools ./devtools
COPY --chown=cdc connectors ./connectors
COPY --chown=cdc scripts/submit_main.py ./scripts/submit_main.py
ENTRYPOINT ["cdc-delta"]
CMD ["--help"]
