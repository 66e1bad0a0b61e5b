"""Pure logic: read a golden-set YAML document within `GoldenLimits`, keeping the line of every mapping key and list item.

PyYAML builds a node graph of the whole file before it constructs anything,
and a constructed document shares aliased objects, so an alias bomb costs
nothing until something walks it, and then it costs gigabytes. This reader
builds the document straight from the parser's events (libyaml's, when
PyYAML has it) and counts as it goes: nodes as written, nodes repeated
through aliases, nesting with aliases expanded. The first limit passed stops
it at that line, so memory stays proportional to what the file spells out.

Scalars resolve as `yaml.safe_load` resolves them (null, bool, int, float,
str), except that dates stay the text a tool would receive. Mapping keys may
not repeat, merge keys (`<<: *base`) work as in PyYAML, and tags other than
the standard scalar ones are refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.resolver import Resolver

from evalcore.golden.limits import GoldenLimits, raise_hint

_Parser: Final = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when PyYAML has it: ~5x faster
_MAP_TAGS: Final = (None, "!", "tag:yaml.org,2002:map")
_SEQ_TAGS: Final = (None, "!", "tag:yaml.org,2002:seq")
_MERGE: Final = "tag:yaml.org,2002:merge"


class YamlRefusal(Exception):
    """The document cannot be read: `line` (1-based, None when unknown) and the reason."""

    def __init__(self, line: int | None, reason: str) -> None:
        super().__init__(reason)
        self.line, self.reason = line, reason


class LineMapping(dict[Any, Any]):
    """A YAML mapping that remembers the line it starts on and the line of each of its keys."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.key_lines: dict[Any, int] = {}

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


class LineSequence(list[Any]):
    """A YAML sequence that remembers the line of each item."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.item_lines: list[int] = []

    def lined(self) -> list[tuple[int, Any]]:
        return list(zip(self.item_lines, self, strict=True))


class _ScalarConstructor(SafeConstructor):
    """SafeConstructor's scalar rules, with dates kept as text: tools receive JSON, where 2026-08-03 is a string."""

    def construct_plain_string(self, node: yaml.ScalarNode) -> str:
        return str(self.construct_scalar(node))


_ScalarConstructor.add_constructor("tag:yaml.org,2002:timestamp", _ScalarConstructor.construct_plain_string)  # type: ignore[type-var]
_ScalarConstructor.add_constructor("tag:yaml.org,2002:value", _ScalarConstructor.construct_plain_string)  # type: ignore[type-var]


@dataclass
class _Open:
    """A mapping or list being read: its object, where it started, and what its subtree costs with aliases expanded."""

    value: LineMapping | LineSequence
    anchor: str | None
    size: int = 1
    height: int = 1
    key: Any = None
    key_line: int = 0
    has_key: bool = False
    merges: list[tuple[int, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class _Anchored:
    value: Any
    size: int
    height: int


class _Reader:
    def __init__(self, limits: GoldenLimits) -> None:
        self.limits = limits
        self.resolver = Resolver()
        self.scalars = _ScalarConstructor()
        self.anchors: dict[str, _Anchored] = {}
        self.stack: list[_Open] = []
        self.nodes = 0
        self.alias_nodes = 0
        self.documents = 0
        self.root: Any = None

    def read(self, text: str) -> Any:
        parser = _Parser(text)
        try:
            while parser.check_event():
                self.handle(parser.get_event())
        finally:
            parser.dispose()
        return self.root

    def handle(self, event: yaml.Event) -> None:
        line = event.start_mark.line + 1 if event.start_mark is not None else None
        if isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise YamlRefusal(line, "a second YAML document ('---'); a golden set is one document")
        elif isinstance(event, yaml.ScalarEvent):
            self.count_node(line)
            self.add(self.scalar(event, line), line, 1, 0, event.anchor)
        elif isinstance(event, yaml.AliasEvent):
            self.alias(event.anchor or "", line)
        elif isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            self.count_node(line)
            mapping = isinstance(event, yaml.MappingStartEvent)
            if event.tag not in (_MAP_TAGS if mapping else _SEQ_TAGS):
                raise YamlRefusal(line, f"the tag {event.tag} is not allowed in a golden set (plain mappings, lists and scalars only)")
            self.check_depth(len(self.stack) + 1, line)
            self.stack.append(_Open(LineMapping(line or 0) if mapping else LineSequence(line or 0), event.anchor))
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            done = self.stack.pop()
            if isinstance(done.value, LineMapping):
                _merge(done)
            self.add(done.value, done.value.line, done.size, done.height, done.anchor)

    def count_node(self, line: int | None) -> None:
        self.nodes += 1
        if self.nodes > self.limits.nodes:
            raise YamlRefusal(line, f"more than {self.limits.nodes} YAML nodes (limit nodes; {raise_hint('nodes')})")

    def check_depth(self, depth: int, line: int | None) -> None:
        if depth > self.limits.depth:
            raise YamlRefusal(line, f"nested deeper than {self.limits.depth} levels (limit depth; {raise_hint('depth')})")

    def scalar(self, event: yaml.ScalarEvent, line: int | None) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolver.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == _MERGE:
            return _MergeKey
        node = yaml.ScalarNode(tag, event.value, None, None, event.style)
        constructors: dict[Any, Any] = self.scalars.yaml_constructors
        construct = constructors.get(tag, constructors[None])
        try:
            return construct(self.scalars, node)
        except ConstructorError as exc:
            raise YamlRefusal(line, str(exc.problem or exc)) from exc

    def alias(self, name: str, line: int | None) -> None:
        if any(item.anchor == name for item in self.stack):
            raise YamlRefusal(line, f"not valid YAML: the alias *{name} is inside the node &{name} it names; recursive structures are not allowed")
        anchored = self.anchors.get(name)
        if anchored is None:
            raise YamlRefusal(line, f"not valid YAML: the alias *{name} names no anchor defined above it (&{name})")
        self.alias_nodes += anchored.size
        if self.alias_nodes > self.limits.alias_nodes:
            raise YamlRefusal(
                line, f"aliases repeat more than {self.limits.alias_nodes} nodes, as an alias bomb does (limit alias_nodes; {raise_hint('alias_nodes')})"
            )
        self.check_depth(len(self.stack) + anchored.height, line)
        self.add(anchored.value, line, anchored.size, anchored.height, None)

    def add(self, value: Any, line: int | None, size: int, height: int, anchor: str | None) -> None:
        """Put a finished node into the mapping or list being read (or make it the document)."""
        if anchor is not None:
            self.anchors[anchor] = _Anchored(value, size, height)
        line = line or 0
        if not self.stack:
            self.root = value
            return
        parent = self.stack[-1]
        parent.size += size
        parent.height = max(parent.height, height + 1)
        container = parent.value
        if isinstance(container, LineSequence):
            container.append(value)
            container.item_lines.append(line)
        elif not parent.has_key:
            if isinstance(value, dict | list):
                raise YamlRefusal(line, "not valid YAML: a mapping key must be text or a number, not a mapping or a list")
            parent.key, parent.key_line, parent.has_key = value, line, True
        else:
            parent.has_key = False
            if parent.key is _MergeKey:
                parent.merges.append((parent.key_line, value))
            elif parent.key in container.key_lines:
                # PyYAML silently keeps the last value; a case must not say two things.
                raise YamlRefusal(parent.key_line, f"not valid YAML: duplicate key {parent.key!r} (first at line {container.key_lines[parent.key]})")
            else:
                container[parent.key] = value
                container.key_lines[parent.key] = parent.key_line


class _MergeKeyType:
    def __repr__(self) -> str:
        return "<<"


_MergeKey: Final = _MergeKeyType()


def _merge(done: _Open) -> None:
    """Apply `<<` merges as PyYAML does: the mapping's own keys win, then earlier merged mappings over later ones."""
    mapping = done.value
    assert isinstance(mapping, LineMapping)
    for line, merged in done.merges:
        sources = merged if isinstance(merged, list) else [merged]
        for source in sources:
            if not isinstance(source, dict):
                raise YamlRefusal(line, "not valid YAML: a merge key '<<' takes a mapping or a list of mappings")
            for key, value in source.items():
                if key not in mapping:
                    mapping[key] = value
                    mapping.key_lines[key] = line


def read_yaml(text: str, limits: GoldenLimits) -> Any:
    """The document in `text` (None when empty), or `YamlRefusal` at the first line past a limit or not valid YAML."""
    try:
        return _Reader(limits).read(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise YamlRefusal(line, _yaml_reason(text, exc, mark)) from exc
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise YamlRefusal(line, f"not valid YAML: character {exc.character!r} is not allowed ({exc.reason})") from exc
    except yaml.YAMLError as exc:
        raise YamlRefusal(None, f"not valid YAML: {' '.join(str(exc).split())}") from exc


def _yaml_reason(text: str, exc: yaml.MarkedYAMLError, mark: Any) -> str:
    """The parser's reason; a tab in the indentation is named as such (libyaml often calls it a character that cannot start a token)."""
    if mark is not None:
        lines = text.split("\n")
        source = lines[mark.line] if mark.line < len(lines) else ""
        indentation = source[: len(source) - len(source.lstrip(" \t"))]
        if "\t" in indentation or source[mark.column : mark.column + 1] == "\t":
            return f"a tab in the indentation at column {source.index(chr(9)) + 1}; YAML indents with spaces only"
    return f"not valid YAML: {exc.problem}"
