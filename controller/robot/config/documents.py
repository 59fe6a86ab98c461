"""YAML and TOML documents parsed once per text.

A test session builds hundreds of controllers from the same files, and a
controller reads some 80 of them (motions, trajectories, gaits): parsing was
two thirds of building one. The parsed document of a text is kept (at most
DOCUMENTS texts, least recently used first out) and every caller gets its own
copy of it, so a caller that edits its document (`extends` is popped from a
config) never changes what the next one reads. The key is the text itself,
not the file's name or time: a file rewritten within the file system's clock
tick is parsed again."""
from __future__ import annotations

import functools
import tomllib
from typing import Any

import yaml

# libyaml's loader when the wheel has it (several times faster), else PyYAML's own.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

DOCUMENTS = 512


def _copy(node: Any) -> Any:
    """A copy of a parsed document: new dicts, lists and sets all the way
    down; the scalars (numbers, strings, dates) are immutable and shared."""
    kind = type(node)
    if kind is dict:
        return {key: _copy(value) for key, value in node.items()}
    if kind is list:
        return [_copy(value) for value in node]
    if kind is set:
        return {_copy(value) for value in node}
    return node


@functools.lru_cache(maxsize=DOCUMENTS)
def _yaml(text: str) -> Any:
    loader = SAFE_LOADER(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


@functools.lru_cache(maxsize=DOCUMENTS)
def _toml(text: str) -> dict[str, Any]:
    return tomllib.loads(text)


def parse_yaml(text: str) -> Any:
    """What yaml.safe_load does, with libyaml's parser when there is one
    (raises yaml.YAMLError the same way)."""
    return _copy(_yaml(text))


def parse_toml(text: str) -> dict[str, Any]:
    """What tomllib.loads does (raises tomllib.TOMLDecodeError the same way)."""
    return _copy(_toml(text))


@functools.lru_cache(maxsize=DOCUMENTS)
def _yaml_nodes(text: str) -> tuple[Any, yaml.Node | None]:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        return (loader.construct_document(node) if node is not None else None), node
    finally:
        loader.dispose()


def parse_yaml_nodes(text: str) -> tuple[Any, yaml.Node | None]:
    """The document and its node tree, whose marks give each value's line
    (PyYAML's own parser: its marks and messages). The document is the
    caller's copy; the node tree is shared and is only read."""
    data, node = _yaml_nodes(text)
    return _copy(data), node
