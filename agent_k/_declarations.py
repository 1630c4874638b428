"""A vocabulary whose members are each declared once, by name (metrics, platforms): the built-in ones load on
first use, and `declare` adds more from anywhere (a plug-in, a test)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, Protocol, TypeVar


class _Named(Protocol):
    @property
    def name(self) -> str: ...


Member = TypeVar("Member", bound=_Named)


class Declarations(Generic[Member]):
    def __init__(self, kind: str, builtins: Callable[[], Iterable[Member]]) -> None:
        self.kind = kind
        self._builtins = builtins
        self._members: dict[str, Member] = {}

    def _loaded(self) -> dict[str, Member]:
        if not self._members:
            for member in self._builtins():
                self._members.setdefault(member.name, member)
        return self._members

    def declare(self, member: Member) -> Member:
        """Make `member` known by its name; a second, different declaration of a name is refused."""
        known = self._loaded()
        if known.get(member.name, member) != member:
            raise ValueError(f"{self.kind} {member.name!r} is already declared")
        known[member.name] = member
        return member

    def names(self) -> tuple[str, ...]:
        return tuple(self._loaded())

    def members(self) -> tuple[Member, ...]:
        return tuple(self._loaded().values())

    def known(self, name: str) -> str:
        """`name` when a member has it, else a one-line `ValueError` naming the known ones."""
        if name not in self._loaded():
            raise ValueError(f"unknown {self.kind} '{name}': use one of {', '.join(self.names())}")
        return name

    def named(self, name: str) -> Member:
        return self._loaded()[self.known(name)]
