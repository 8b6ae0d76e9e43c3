"""marshmallow fields that take JSON's types as JSON means them.

JSON has stricter types than Python: ``true`` is not 1, ``2.0`` is not an
integer and ``"2"`` is not a number, so these refuse what marshmallow's
defaults would coerce.  Both the gateway's request schemas and the models'
option schemas (``jobs.registry``) are built from them.
"""

from __future__ import annotations

import re

from marshmallow import ValidationError, fields


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
