"""Where a webhook may go: a public address of another machine, or one an admin allows (AGENT_K_WEBHOOK_ALLOW).

Whoever starts a mission picks its webhook URL, and a worker inside the deployment POSTs to it: unchecked, that
reaches loopback services, the cloud's metadata address (169.254.169.254, however it is spelled), the private
network and the API itself. The host is resolved once, the address checked, and the request sent to that very
address (`Destination.url`), so a name that resolves elsewhere the second time (DNS rebinding) reaches nothing new.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

REFUSED = (
    "the webhook's address is not one a webhook may reach (loopback, private, link-local, multicast or this "
    "host's own; AGENT_K_WEBHOOK_ALLOW lists exceptions)"
)


class AddressRefused(Exception):
    """The URL's host is, or resolves to, an address webhooks may not reach."""


@dataclass(frozen=True)
class Destination:
    url: httpx.URL
    """The webhook URL with the checked address in place of its host name."""
    written: httpx.URL
    """The URL as written: its host is the `Host` header, and the name TLS checks the certificate against."""

    @property
    def headers(self) -> dict[str, str]:
        """The `Host` header the receiver expects (the URL's own name and port, IDNA-encoded, not the address)."""
        return {} if self.url == self.written else {"Host": self.written.netloc.decode("ascii")}

    @property
    def extensions(self) -> dict[str, str]:
        """TLS's server name: the certificate is checked against the name, not the address."""
        return {} if self.url == self.written else {"sni_hostname": self.written.raw_host.decode("ascii")}


def refused(address: Address, allow: Sequence[Network]) -> bool:
    """Whether a webhook may not go to `address`: anything but a public unicast address of another machine,
    unless an allowed network holds it."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if any(address in network for network in allow):
        return False
    return not address.is_global or address.is_multicast or address.is_reserved or _is_this_host(address)


def check_literal(url: str, allow: Sequence[Network]) -> None:
    """Refuse at once a URL whose host is an address (in any spelling the C library reads) or `localhost` that
    webhooks may not reach; any other name is checked on every delivery, where it is resolved. `httpx.InvalidURL`
    for a URL no request could be sent to."""
    host = _parsed(url).host
    name = host.lower().rstrip(".")
    literals = ["127.0.0.1", "::1"] if name == "localhost" or name.endswith(".localhost") else [host]
    for literal in literals:
        with contextlib.suppress(OSError, ValueError):  # not an address: a name, checked on delivery
            for address in _addresses(socket.getaddrinfo(literal, None, flags=socket.AI_NUMERICHOST)):
                if refused(address, allow):
                    raise AddressRefused(REFUSED)


async def resolve(url: str, allow: Sequence[Network]) -> Destination:
    """The URL pinned to its host's first address, once every address it resolves to is allowed
    (`AddressRefused` if any is not; `OSError` if it does not resolve)."""
    parsed = _parsed(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    found = await asyncio.get_running_loop().getaddrinfo(parsed.host, port, type=socket.SOCK_STREAM)
    addresses = _addresses(found)
    if not addresses:
        raise OSError(f"{parsed.host} has no address")
    if any(refused(address, allow) for address in addresses):  # one bad answer is enough: no picking around it
        raise AddressRefused(REFUSED)
    return Destination(parsed.copy_with(host=str(addresses[0])), parsed)


def _parsed(url: str) -> httpx.URL:
    """The URL as httpx reads it; `httpx.InvalidURL` whatever is wrong with it (an IDNA error included)."""
    try:
        parsed = httpx.URL(url)
        parsed.host  # noqa: B018  # decoded on first read: an IDNA error surfaces here
    except (UnicodeError, ValueError) as exc:
        raise httpx.InvalidURL(str(exc)) from None
    return parsed


def _addresses(found: Sequence[tuple[Any, ...]]) -> list[Address]:
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in found]


def _is_this_host(address: Address) -> bool:
    """Whether `address` is one of this machine's own: binding to it succeeds only then (no list of interfaces
    to read, and the API's own address is among them however it was bound)."""
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((str(address), 0))
        except OSError:
            return False
    return True
