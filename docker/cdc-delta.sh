#!/usr/bin/env bash
# Entry of the cdc-delta services in docker-compose.yml: Java and Maven on first start (the
# image is python:3.11-slim), the package with its sandbox drivers, then `python3 "$@"`.
set -euo pipefail
if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless maven >/dev/null
fi
pip install -q -e ".[sandbox]"
exec python3 "$@"
