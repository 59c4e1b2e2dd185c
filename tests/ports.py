"""The loopback ports of the services the test modules start, in one table.

pytest-xdist runs modules side by side, and a service that finds a port taken exits: a broker
and an object store once met on 19692. Each service takes a block of ports around the one it is
given (`taken`); tests/unit/test_ports.py checks that no two blocks meet and that none lies in
the kernel's range for outgoing connections."""

from __future__ import annotations

# scripts/kafka.sh: the broker, its controller (+1) and its SASL listener (+2)
KAFKA = {"kafka": 19092, "databases": 19192, "faults": 19292, "object_store": 19392, "demo": 19492,
         "api": 19592, "routes": 19692, "security": 19792, "benchmarks": 19892,
         "class_archive": 18992}     # scripts/class_archive.sh, run by setup
S3 = {"object_store": 18333}        # scripts/seaweedfs.sh
CONNECT = {"databases": 18083}      # scripts/connect.sh
POSTGRES = {"databases": 15432}     # scripts/postgres.sh
MARIADB = {"databases": 13306}      # scripts/mariadb.sh
SPARK_MASTER = {"kafka": 17077}     # scripts/spark-cluster.sh

OFFSETS = {
    "kafka": (0, 1, 2),
    # s3, master, volume, filer; `weed server` gives each a gRPC port 10000 above it
    "s3": (0, 1, 2, 3, 10000, 10001, 10002, 10003),
    "connect": (0,), "postgres": (0,), "mariadb": (0,),
    "spark_master": (0, 1000, 1001),    # the master, its web UI, the worker's web UI
}
SERVICES = {"kafka": KAFKA, "s3": S3, "connect": CONNECT, "postgres": POSTGRES, "mariadb": MARIADB,
            "spark_master": SPARK_MASTER}


def taken(service: str, port: int) -> set[int]:
    return {port + offset for offset in OFFSETS[service]}


def blocks() -> dict[str, set[int]]:
    """Every block of ports, named by service and test module."""
    return {f"{service} of {module}": taken(service, port)
            for service, ports in SERVICES.items() for module, port in ports.items()}
