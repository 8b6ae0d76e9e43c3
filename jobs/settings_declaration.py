"""How a setting is declared, read from the environment, checked, shown and documented.

``jobs.config`` declares each setting once, as a field of ``Settings``::

    lease_seconds: float = setting("OCRGW_LEASE_SECONDS", seconds(), 30.0, "a claimed job's lease, ...")

Everything else follows from that line: the variable read, how its text is
parsed and checked (the ``Kind``), the error naming it when it cannot be
used, how its value is shown (a secret never is), the ``_FILE`` variant of
a secret, and its row in the table of docs/operating/configuration.md.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from marshmallow import ValidationError, validate
from marshmallow import fields as mf

# Where a field of ``Settings`` keeps its declaration.
_DECLARATION = "ocrgw.variable"
_PASSWORD_IN_URL = re.compile(r":[^:@/]*@")  # the ":password@" of a URL's user info
# What a secret's value is shown as, wherever settings are shown.
MASK = "***"


def without_password(url: str) -> str:
    return _PASSWORD_IN_URL.sub(f":{MASK}@", url)


@dataclass(frozen=True)
class Kind:
    """What a variable's text must be: its parser, and how that is said in an error and in the docs."""

    parse: mf.Field
    # An error reads "VARIABLE: must be <expects>, got <what it got>".
    expects: str
    # The same, short, in the docs' table.
    accepts: str
    # What exactly is wrong follows, from the parser (a line of a file, say); never a secret.
    explains: bool = False
    # A URL: a password in it is never repeated, in an error or elsewhere.
    hides_password: bool = False
    # The value read holds secrets though the text does not (the keys in the file a path names).
    holds_secrets: bool = False


@dataclass(frozen=True)
class Variable:
    """One setting as declared: the variable that fills it, what it takes, its default and what it means."""

    env: str
    kind: Kind
    default: Any
    doc: str
    # The value is never shown (a URL's: its password); it may be read from the file ``<env>_FILE`` names.
    secret: bool = False
    from_file: bool = False
    # The docs' "accepts", where a rule across settings adds to the kind's.
    accepts: str = ""
    # The docs' "default", where it is not a value (derived from another setting, say).
    default_doc: str = ""
    # The field of ``Settings`` it fills; set once the class is made (see ``declared``).
    setting: str = ""

    @property
    def file_env(self) -> str | None:
        """The variable naming a file that holds the value instead, for a secret."""
        return f"{self.env}_FILE" if self.from_file else None

    def shown(self, raw: str) -> str:
        """``raw`` as an error repeats it: a secret by its length, a URL without its password."""
        if self.kind.hides_password:
            return repr(without_password(raw))
        if self.secret:
            return f"a secret of {len(raw)} characters"
        return repr(raw)

    def masked(self, text: str) -> str:
        """``text`` as settings are shown: a URL's password masked, a secret replaced."""
        if self.kind.hides_password:
            return without_password(text)
        return MASK if self.secret and text else text

    def represented(self, value: Any) -> str:
        """``value`` of its setting as ``repr(settings)`` shows it: what ``masked`` shows of a secret."""
        if self.kind.hides_password and isinstance(value, str):
            return repr(without_password(value))
        if (self.secret or self.kind.holds_secrets) and value:
            return repr(MASK)
        return repr(value)

    def problem(self, given_as: str, raw: str, error: ValidationError) -> str:
        messages = error.messages if isinstance(error.messages, list) else [str(error.messages)]
        why = f" ({messages[0]})" if self.kind.explains and messages else ""
        return f"{given_as}: must be {self.kind.expects}, got {self.shown(raw)}{why}"

    def rows(self) -> list[tuple[str, str, str, str]]:
        """Its rows in the docs' table (variable, default, accepts, meaning): its own, then its file's."""
        rows = [
            (f"`{self.env}`", self.default_doc or documented(self.default), self.accepts or self.kind.accepts, self.doc)
        ]
        if self.file_env:
            rows.append((f"`{self.file_env}`", "(none)", "a readable file", f"`{self.env}`, read from this file"))
        return rows


def setting(
    env: str,
    kind: Kind,
    default: Any,
    doc: str,
    *,
    secret: bool = False,
    from_file: bool | None = None,
    accepts: str = "",
    default_doc: str = "",
) -> Any:
    """A field of ``Settings`` filled from ``env``: its one declaration.

    A secret may be read from a file (``<env>_FILE``) unless ``from_file`` is False.
    """
    from_file = secret if from_file is None else from_file
    variable = Variable(
        env, kind, default, doc, secret=secret, from_file=from_file, accepts=accepts, default_doc=default_doc
    )
    return field(default=default, metadata={_DECLARATION: variable})


def declared(cls: type) -> tuple[Variable, ...]:
    """The variables of ``cls``'s fields, in their order, each naming its field."""
    return tuple(replace(f.metadata[_DECLARATION], setting=f.name) for f in fields(cls) if _DECLARATION in f.metadata)


def as_text(value: Any) -> str:
    """A value as a variable would give it: ``30`` for 30.0, ``false`` for False, ``a,b`` for ("a", "b")."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, tuple):
        return ",".join(str(item) for item in value)
    return str(value)


def documented(value: Any) -> str:
    """A default as the docs' table shows it."""
    text = as_text(value)
    return f"`{text}`" if text else "(none)"


def markdown_table(variables: Iterable[Variable]) -> str:
    lines = ["| variable | default | accepts | meaning |", "|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for variable in variables for row in variable.rows()]
    return "\n".join(lines) + "\n"


# -- reading --------------------------------------------------------------------------------


@dataclass
class Given:
    """What the environment says: each set variable's text, where it came from, and what cannot be used."""

    # The text of each variable that is set, stripped, by variable; a file's, less its trailing newline,
    # under the variable it stands for.
    texts: dict[str, str] = field(default_factory=dict)
    # The variable each text was given as: itself, or its ``_FILE``.
    given_as: dict[str, str] = field(default_factory=dict)
    # The value of each setting read, by setting.
    values: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def read(variables: Sequence[Variable], environ: Mapping[str, str]) -> Given:
    """Every variable's text and value; an unset or blank one is left out, so that it takes its default."""
    given = Given()
    for variable in variables:
        text, given_as = _text(variable, environ, given.problems)
        if text is None:
            continue
        given.texts[variable.env], given.given_as[variable.env] = text, given_as
        try:
            given.values[variable.setting] = variable.kind.parse.deserialize(text)
        except ValidationError as error:
            given.problems.append(variable.problem(given_as, text, error))
    return given


def _text(variable: Variable, environ: Mapping[str, str], problems: list[str]) -> tuple[str | None, str]:
    text, file_env = environ.get(variable.env, "").strip(), variable.file_env
    path = environ.get(file_env, "").strip() if file_env else ""
    if not file_env or not path:
        return text or None, variable.env
    if text:
        problems.append(f"{file_env}: must not be set together with {variable.env} (one or the other), got both")
        return None, file_env
    try:
        # As Docker and Kubernetes write a secret: the value, perhaps with a newline after it.
        content = Path(path).read_text(encoding="utf-8").removesuffix("\n").removesuffix("\r")
    except OSError as error:
        problems.append(f"{file_env}: must be a readable file, got {path!r} ({error.strerror or error})")
        return None, file_env
    except UnicodeDecodeError:
        problems.append(f"{file_env}: must be a readable file, got {path!r} (not UTF-8)")
        return None, file_env
    if not content:
        problems.append(f"{file_env}: must be a readable file, got {path!r} (empty)")
        return None, file_env
    return content, file_env


# -- kinds ----------------------------------------------------------------------------------


def seconds(*, at_least: float | None = None) -> Kind:
    """A duration: above 0, or ``at_least`` and more where that bound is part of its meaning."""
    if at_least is None:
        return Kind(
            mf.Float(allow_nan=False, validate=validate.Range(min=0, min_inclusive=False)),
            "a number of seconds > 0",
            "> 0",
        )
    return Kind(
        mf.Float(allow_nan=False, validate=validate.Range(min=at_least)),
        f"a number of seconds >= {at_least:g}",
        f">= {at_least:g}",
    )


def whole_number(at_least: int = 1, at_most: int | None = None, *, unit: str = "", zero: str = "") -> Kind:
    """A whole number of ``unit`` in a range; ``zero`` says what 0 means where 0 is special."""
    unit = f" of {unit}" if unit else ""
    parse = mf.Integer(validate=validate.Range(min=at_least, max=at_most))
    if at_most is None:
        meaning = f" (0: {zero})" if zero else ""
        return Kind(parse, f"a whole number{unit} >= {at_least}{meaning}", f">= {at_least}")
    meaning = f" ({zero})" if zero else ""
    return Kind(parse, f"a whole number{unit} from {at_least}{meaning} to {at_most}", f"{at_least} to {at_most}")


def port() -> Kind:
    """A TCP port to listen on, 0 for none."""
    return Kind(mf.Integer(validate=validate.Range(min=0, max=65535)), "a port (1-65535), or 0", "a port, or `0`")


def switch() -> Kind:
    """0 or 1."""
    return Kind(mf.Integer(validate=validate.OneOf([0, 1])), "0 or 1", "`0` or `1`")


def boolean() -> Kind:
    return Kind(mf.Boolean(truthy={"true", "1"}, falsy={"false", "0"}), "true or false", "`true` or `false`")


def one_of(choices: Sequence[str]) -> Kind:
    parse = mf.String(validate=validate.OneOf(sorted(choices)))
    if len(choices) == 2:
        return Kind(parse, " or ".join(choices), " or ".join(f"`{c}`" for c in choices))
    return Kind(parse, f"one of {', '.join(choices)}", "one of " + ", ".join(f"`{c}`" for c in choices))


def url(schemes: Sequence[str] | None = None) -> Kind:
    """A URL with one of ``schemes`` (any scheme if None), as redis-py and kombu take them."""

    def check(text: str) -> None:
        parts = urlsplit(text)
        scheme_known = parts.scheme in schemes if schemes is not None else bool(parts.scheme)
        if not (scheme_known and "://" in text and (parts.netloc or parts.path)):
            raise ValidationError("not a URL of a known scheme")

    if schemes is None:
        expects, accepts = "a URL such as redis://host:6379/0", "a URL"
    else:
        listed = [f"{scheme}://" for scheme in schemes]
        expects = f"a {', '.join(listed[:-1])} or {listed[-1]} URL"
        accepts = f"a {', '.join(f'`{s}`' for s in listed[:-1])} or `{listed[-1]}` URL"
    return Kind(mf.String(validate=check), expects, accepts, hides_password=True)


def ip_address() -> Kind:
    def check(text: str) -> None:
        try:
            ipaddress.ip_address(text)
        except ValueError:
            raise ValidationError("not an IP address") from None

    return Kind(mf.String(validate=check), "an IP address", "an IP address")


def absolute_path() -> Kind:
    return Kind(mf.String(validate=validate.Regexp("^/")), "an absolute path", "an absolute path")
