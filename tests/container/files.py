"""Reading container/: the Containerfile's instructions and the Kubernetes example.

No container engine and no YAML library are on the machines that run these tests, so
this module parses both itself: the Containerfile line by line, and the YAML subset
that container/kubernetes/supply-agent.yaml is written in (block mappings and sequences, plain and
quoted scalars, `|` and `|-` blocks, `[]`). Anything outside that subset is an error,
never a silent misreading.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CONTAINERFILE = ROOT / "container" / "Containerfile"
KUBERNETES = ROOT / "container" / "kubernetes" / "supply-agent.yaml"
REQUIREMENTS = ROOT / "container" / "requirements.txt"
DOCKERIGNORE = ROOT / ".dockerignore"
#: The env file docs/container.md runs the image with.
ENV_FILE = ROOT / "container" / "adapter.env"


@dataclass(frozen=True)
class Instruction:
    """One Containerfile instruction, continuation lines joined; `stage` counts FROMs from 0."""

    keyword: str
    arguments: str
    stage: int


def instructions(text: str | None = None) -> list[Instruction]:
    """The Containerfile's instructions in order (comments and blank lines dropped)."""
    text = CONTAINERFILE.read_text() if text is None else text
    result: list[Instruction] = []
    stage, pending = -1, ""
    for line in text.splitlines():
        if line.strip().startswith("#") or not line.strip():
            continue  # the engines drop comment lines, also inside a continued instruction
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        keyword, _, arguments = (pending + line).strip().partition(" ")
        pending = ""
        if keyword.upper() == "FROM":
            stage += 1
        result.append(Instruction(keyword.upper(), " ".join(arguments.split()), stage))
    assert not pending, "the Containerfile ends inside a continued instruction"
    return result


def final_stage(text: str | None = None) -> list[Instruction]:
    """The instructions of the last stage: what the image is."""
    every = instructions(text)
    return [i for i in every if i.stage == every[-1].stage]


def exec_form(arguments: str) -> list[str]:
    """A JSON-array argument (exec form, no shell); an AssertionError for shell form."""
    parsed = json.loads(arguments)
    assert isinstance(parsed, list) and all(isinstance(a, str) for a in parsed), arguments
    return parsed


def only(keyword: str, stage: list[Instruction]) -> Instruction:
    """The one instruction of that keyword in `stage`."""
    found = [i for i in stage if i.keyword == keyword]
    assert len(found) == 1, f"expected one {keyword} in the final stage, found {len(found)}"
    return found[0]


def env_variables(stage: list[Instruction]) -> dict[str, str]:
    """What the stage's ENV instructions set, unexpanded (`$PATH` stays as written)."""
    variables: dict[str, str] = {}
    for instruction in stage:
        if instruction.keyword == "ENV":
            for word in shlex.split(instruction.arguments):
                name, equals, value = word.partition("=")
                assert equals, f"ENV {instruction.arguments!r}: use the NAME=value form"
                variables[name] = value
    return variables


def healthcheck(stage: list[Instruction]) -> tuple[dict[str, str], list[str]]:
    """The HEALTHCHECK's options (`--timeout=5s` -> {"timeout": "5s"}) and its exec command."""
    words = only("HEALTHCHECK", stage).arguments
    options: dict[str, str] = {}
    while words.startswith("--"):
        option, _, words = words.partition(" ")
        name, _, value = option[2:].partition("=")
        options[name] = value
    keyword, _, command = words.partition(" ")
    assert keyword == "CMD", f"HEALTHCHECK must run a command, got {words!r}"
    return options, exec_form(command)


def seconds(duration: str) -> float:
    """A Containerfile duration such as `5s`, `1m30s` or `500ms`, in seconds."""
    units = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", duration)
    assert parts and "".join(n + u for n, u in parts) == duration, f"not a duration: {duration}"
    return sum(float(number) * units[unit] for number, unit in parts)


# ---- the YAML subset of container/kubernetes/supply-agent.yaml


@dataclass
class _Row:
    indent: int
    text: str  # stripped of the indentation
    raw: str


_KEY = re.compile(r"^[A-Za-z0-9_./-]+:(?: |$)")


def load_yaml_documents(text: str) -> list[Any]:
    """The documents of a `---`-separated YAML stream in the subset above (empty ones dropped)."""
    documents: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.rstrip() == "---":
            documents.append([])
        else:
            documents[-1].append(line)
    parsed = [_Parser(lines).document() for lines in documents]
    return [document for document in parsed if document is not None]


class _Parser:
    def __init__(self, lines: list[str]) -> None:
        self.rows = [_Row(len(raw) - len(raw.lstrip(" ")), raw.strip(), raw) for raw in lines]
        self.position = 0

    def document(self) -> Any:
        value = self._node(0)
        if (row := self._next()) is not None:
            raise ValueError(f"unexpected line: {self.rows[row].raw!r}")
        return value

    def _next(self) -> int | None:
        """The index of the next line that is neither blank nor a comment."""
        index = self.position
        while index < len(self.rows) and (
            not self.rows[index].text or self.rows[index].text.startswith("#")
        ):
            index += 1
        return index if index < len(self.rows) else None

    def _node(self, min_indent: int) -> Any:
        index = self._next()
        if index is None or self.rows[index].indent < min_indent:
            return None
        indent = self.rows[index].indent
        return self._sequence(indent) if _is_item(self.rows[index].text) else self._mapping(indent)

    def _mapping(self, indent: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        while (index := self._next()) is not None and self.rows[index].indent == indent:
            row = self.rows[index]
            if _is_item(row.text) or not _KEY.match(row.text):
                raise ValueError(f"expected 'key: value', got {row.raw!r}")
            key, _, rest = row.text.partition(":")
            rest = _strip_comment(rest.strip())
            if key in result:
                raise ValueError(f"duplicate key {key!r}")
            self.position = index + 1
            if rest in ("|", "|-"):
                result[key] = self._block(indent, keep_last_newline=rest == "|")
            elif rest:
                result[key] = _scalar(rest)
            else:
                following = self._next()
                same_level_items = (
                    following is not None
                    and self.rows[following].indent == indent
                    and _is_item(self.rows[following].text)
                )
                result[key] = self._sequence(indent) if same_level_items else self._node(indent + 1)
        if (index := self._next()) is not None and self.rows[index].indent > indent:
            raise ValueError(f"unexpected indentation: {self.rows[index].raw!r}")
        return result

    def _sequence(self, indent: int) -> list[Any]:
        items: list[Any] = []
        while (index := self._next()) is not None and self.rows[index].indent == indent:
            row = self.rows[index]
            if not _is_item(row.text):
                break  # the mapping that holds this sequence goes on
            content = row.text[1:].lstrip(" ")
            if not content:
                self.position = index + 1
                items.append(self._node(indent + 1))
            elif _KEY.match(content) or _is_item(content):
                # The item's mapping (or sequence) starts on the dash's line: read that
                # line as if the dash were a space, so it lines up with the lines below.
                self.rows[index] = _Row(indent + len(row.text) - len(content), content, row.raw)
                self.position = index
                items.append(self._node(self.rows[index].indent))
            else:
                self.position = index + 1
                items.append(_scalar(_strip_comment(content)))
        return items

    def _block(self, parent_indent: int, *, keep_last_newline: bool) -> str:
        """A literal block scalar: the lines indented past the key, as written."""
        lines: list[str] = []
        block_indent: int | None = None
        index = self.position
        while index < len(self.rows):
            raw = self.rows[index].raw
            if raw.strip():
                indent = len(raw) - len(raw.lstrip(" "))
                if indent <= parent_indent:
                    break
                block_indent = indent if block_indent is None else block_indent
                if indent < block_indent:
                    raise ValueError(f"block scalar line indented less than its first: {raw!r}")
                lines.append(raw[block_indent:])
            else:
                lines.append("")
            index += 1
        self.position = index
        while lines and not lines[-1]:
            lines.pop()
        text = "\n".join(lines)
        return text + "\n" if keep_last_newline and lines else text


def _is_item(text: str) -> bool:
    return text == "-" or text.startswith("- ")


def _strip_comment(value: str) -> str:
    if value[:1] in ("'", '"'):
        return value  # no comment after a quoted scalar in this subset
    return value.split(" #", 1)[0].rstrip()


def _scalar(value: str) -> Any:
    if value.startswith('"'):
        return json.loads(value)  # the double-quoted scalars here are JSON strings too
    if value.startswith("'"):
        if len(value) < 2 or not value.endswith("'"):
            raise ValueError(f"unterminated quoted scalar: {value}")
        return value[1:-1].replace("''", "'")
    if value == "[]":
        return []
    if value == "{}":
        return {}
    if value[:1] in ("[", "{", "&", "*", "!", "|", ">", "%", "@", "`"):
        raise ValueError(f"outside the YAML subset read here: {value}")
    keywords: dict[str, Any] = {"true": True, "false": False, "null": None, "~": None}
    if value in keywords:
        return keywords[value]
    if re.fullmatch(r"[-+]?\d+", value):
        return int(value)
    return value


# ---- the Kubernetes example


def kubernetes_objects() -> list[dict[str, Any]]:
    """The objects of container/kubernetes/supply-agent.yaml."""
    objects = load_yaml_documents(KUBERNETES.read_text())
    assert all(isinstance(o, dict) for o in objects)
    return objects


def kubernetes_object(kind: str) -> dict[str, Any]:
    """The one object of that kind in the example."""
    found = [o for o in kubernetes_objects() if o["kind"] == kind]
    assert len(found) == 1, f"expected one {kind} in {KUBERNETES.name}, found {len(found)}"
    return found[0]


def adapter_container() -> dict[str, Any]:
    """The Deployment's one container."""
    containers = kubernetes_object("Deployment")["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    container: dict[str, Any] = containers[0]
    return container


def configmap_environment() -> dict[str, str]:
    """The variables the container gets from its ConfigMap (`envFrom`), as strings."""
    sources = adapter_container()["envFrom"]
    names = [source["configMapRef"]["name"] for source in sources]
    configmap = kubernetes_object("ConfigMap")
    assert names == [configmap["metadata"]["name"]], names
    data = configmap["data"]
    # Kubernetes refuses a ConfigMap whose values are not strings ("30" must be quoted).
    assert all(isinstance(value, str) for value in data.values()), data
    return dict(data)


def env_file(text: str) -> dict[str, str]:
    """An env file as docker and podman read it: NAME=value a line, the value as written
    to the end of its line (quotes kept), blank lines and `#` lines skipped."""
    variables: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.partition("=")
            variables[name.strip()] = value
    return variables
