"""Dumping an answer through its marshmallow schema on a path compiled once per schema.

An answer is dumped through the schema that documents it, so it carries the
fields the schema names and no other, each written as its field writes it.
marshmallow's own ``dump`` walks every value through several calls (the
field's attribute, its getter, its serializer): a parent's view with its
page of children costs about four times what gathering it does.  Here each
schema is read once into a list of (attribute, key, conversion) steps, and
a dump runs the steps: a nested schema by its own steps, a list item by
item, a number through ``int`` or ``float`` (as marshmallow's ``Integer``
and ``Float`` do), a string or a raw value as is, and any other field
through its own ``_serialize``, so a field type added later is dumped as
marshmallow would.  As with marshmallow, an attribute the object does not
have is left out, and None stays null.  A test holds the two dumps equal
on every answer's schema.

Only what the answers use is supported: a schema is dumped whole, as its
class declares it (no ``only`` or ``exclude``), and one with a
``dump_default`` or a ``pre_dump``/``post_dump`` hook is refused when first
dumped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from marshmallow import Schema, fields
from marshmallow.utils import missing

Convert = Callable[[Any], Any]


def _as_is(value: Any) -> Any:
    return value


def _text(value: Any) -> Any:
    return value if isinstance(value, str) else str(value)


class AnswerSchema(Schema):
    """A schema that documents an answer and dumps it on the compiled path."""

    def dump(self, obj: Any, *, many: bool | None = None) -> Any:
        dump_one = compiled(type(self))
        if self.many if many is None else many:
            return [dump_one(one) for one in obj]
        return dump_one(obj)


@cache
def compiled(schema_class: type[Schema]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The dump of one object (a mapping, as the views gather them) through ``schema_class``."""
    schema = schema_class()
    unsupported = [name for name, field in schema.dump_fields.items() if field.dump_default is not missing]
    if any(schema._hooks.values()) or unsupported:
        raise TypeError(f"{schema_class.__name__}: dump hooks or dump_default ({unsupported}) are not compiled")
    steps = [
        (field.attribute or name, field.data_key if field.data_key is not None else name, _converter(field))
        for name, field in schema.dump_fields.items()
    ]

    def dump_one(obj: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for attribute, key, convert in steps:
            if attribute in obj:
                value = obj[attribute]
                out[key] = None if value is None else convert(value)
        return out

    return dump_one


def _converter(field: fields.Field) -> Convert:
    if isinstance(field, fields.Nested):
        inner = compiled(type(field.schema))
        return (lambda value: [inner(one) for one in value]) if field.many else inner
    if isinstance(field, fields.List):
        item = _converter(field.inner)
        return lambda value: [None if one is None else item(one) for one in value]
    if type(field) is fields.Integer and not field.as_string:
        return int
    if type(field) is fields.Float and not field.as_string:
        return float
    if type(field) is fields.String:
        return _text
    if type(field) is fields.Raw or (type(field) is fields.Dict and field.key_field is field.value_field is None):
        return _as_is
    return lambda value: field._serialize(value, None, None)
