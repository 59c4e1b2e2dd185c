import itertools
from pathlib import Path

from ..ports import blocks, taken


def outgoing_range() -> range:
    path = Path("/proc/sys/net/ipv4/ip_local_port_range")
    low, high = map(int, path.read_text().split()) if path.exists() else (32768, 60999)
    return range(low, high + 1)


def test_no_two_services_of_the_test_modules_share_a_port():
    shared = [(a, b, sorted(ports_a & ports_b))
              for (a, ports_a), (b, ports_b) in itertools.combinations(blocks().items(), 2) if ports_a & ports_b]
    assert shared == []


def test_no_service_port_can_be_taken_by_an_outgoing_connection():
    outgoing = outgoing_range()
    assert {name: sorted(p for p in ports if p in outgoing) for name, ports in blocks().items()
            if any(p in outgoing for p in ports)} == {}


def test_a_block_holds_every_port_its_script_opens():
    assert taken("kafka", 19692) == {19692, 19693, 19694}
    assert taken("s3", 18333) == {18333, 18334, 18335, 18336, 28333, 28334, 28335, 28336}
