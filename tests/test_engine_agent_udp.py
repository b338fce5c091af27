"""The agent's reading of the kernel's UDP counters (/proc/net/snmp and snmp6 text)."""

from __future__ import annotations

from pathlib import Path

from priolab.engine.agent import parse_snmp6_udp, parse_snmp_udp, udp_counters

SNMP = """Ip: Forwarding DefaultTTL InReceives
Ip: 1 64 12345
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
Udp: 140100 3 238 94719 238 7 0 0 0
UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
UdpLite: 0 0 99 0 99 99 0 0 0
"""  # noqa: E501

SNMP6 = """Ip6InReceives                   	42
Udp6InDatagrams                 	10
Udp6InErrors                    	3
Udp6RcvbufErrors                	2
Udp6SndbufErrors                	1
UdpLite6RcvbufErrors            	99
"""


def test_snmp_udp_line_is_read_by_name_not_udplite() -> None:
    assert parse_snmp_udp(SNMP) == {"InErrors": 238, "RcvbufErrors": 238, "SndbufErrors": 7}


def test_snmp6_udp_counters_without_udplite() -> None:
    assert parse_snmp6_udp(SNMP6) == {"InErrors": 3, "RcvbufErrors": 2, "SndbufErrors": 1}


def test_missing_or_unreadable_files_give_none_or_nothing(tmp_path: Path) -> None:
    assert parse_snmp_udp("Ip: a\nIp: 1\n") == {}
    (tmp_path / "snmp").write_text(SNMP)
    c = udp_counters(tmp_path)
    assert c["udp"]["RcvbufErrors"] == 238
    assert c["udp6"] is None  # no snmp6 here (e.g. IPv6 disabled)


def test_this_namespace_can_be_read() -> None:
    c = udp_counters()
    assert set(c["udp"]) == {"InErrors", "RcvbufErrors", "SndbufErrors"}
