"""Marshmallow schemas of what POST /jobs accepts.

JSON has stricter types than Python: ``true`` is not 1, ``2.0`` is not an
integer and ``"2"`` is not a number, so the numeric and boolean fields here
refuse what marshmallow's defaults would coerce.  Unknown fields are refused
(marshmallow's default), so a misspelt ``option`` fails loudly instead of
being ignored.  Limits that come from ``Settings`` are given to a schema
when it is built.
"""

from __future__ import annotations

import re

from marshmallow import INCLUDE, Schema, ValidationError, fields, validates
from marshmallow.validate import Length, Range

MAX_DOC_HASH_CHARS = 128


class Text(fields.String):
    """A string that can be stored: JSON may spell unpaired surrogates, UTF-8 cannot encode them."""

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        try:
            text.encode()
        except UnicodeEncodeError:
            raise ValidationError("Contains an unpaired surrogate.") from None
        return text


class StrictInteger(fields.Integer):
    """A JSON integer: booleans, floats (even 2.0) and strings are refused."""

    def __init__(self, **kwargs):
        super().__init__(strict=True, **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool):  # bool is an int subclass in Python
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)


class StrictNumber(fields.Float):
    """A finite JSON number; marshmallow's Float would also parse a numeric string."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)


class StrictBoolean(fields.Boolean):
    """``true`` or ``false`` only; marshmallow's Boolean also maps "yes", 1, "on"."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class DigitsInteger(fields.Integer):
    """An integer from a query string, spelt with ASCII digits only.

    ``int()`` alone would also take " 7", "+7", "7_0" and non-ASCII digits.
    """

    _DIGITS = re.compile(r"[0-9]{1,18}")

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, str) or not self._DIGITS.fullmatch(value):
            raise self.make_error("invalid", input=value)
        return int(value)


class _Document(Schema):
    """Fields that a raw document's query and a JSON job share."""

    doc_hash = Text(validate=Length(max=MAX_DOC_HASH_CHARS))

    def __init__(self, *, max_pages: int, **kwargs):
        super().__init__(**kwargs)
        self.max_pages = max_pages

    @validates("pages")
    def _pages_in_range(self, value: int, **_):
        if not 0 <= value <= self.max_pages:
            raise ValidationError(f"Must be between 0 and {self.max_pages}.")


class RawQuerySchema(_Document):
    """The query of a raw-document POST: the body is the document itself."""

    model = Text()
    pages = DigitsInteger()


class JobSchema(_Document):
    """A single job, or one child of a fan-out group, as JSON."""

    model = Text(required=True)
    payload = fields.String(required=True)  # base64, decoded strictly by the submission
    content_type = Text(required=True, validate=Length(min=1))
    pages = StrictInteger()
    options = fields.Dict(keys=fields.String())


class FanoutSchema(Schema):
    max_parallel = StrictInteger(required=True)
    # Each child is validated on its own, so that a problem names its index.
    children = fields.List(fields.Raw(allow_none=True), required=True)


class GroupSchema(Schema):
    fanout = fields.Nested(FanoutSchema, required=True)


class EchoOptionsSchema(Schema):
    """The options the echo model reads; any other key is passed through untouched."""

    class Meta:
        unknown = INCLUDE

    delay_ms = StrictNumber(validate=Range(min=0))
    fail = StrictBoolean()
    transient_fail = StrictBoolean()
    crash = StrictBoolean()


#: Models whose options have a known shape, checked at submission.
OPTION_SCHEMAS: dict[str, Schema] = {"echo": EchoOptionsSchema()}
