from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.model_location import ModelLocation
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.model_options import ModelOptions


T = TypeVar("T", bound="Model")


@_attrs_define
class Model:
    """
    Attributes:
        content_types (list[str]):
        engine (str):
        location (ModelLocation):
        name (str):
        options (ModelOptions): The JSON schema of the options it reads.
        languages (list[str] | Unset): Models that read Tesseract languages (options.lang) only: the languages the live
            workers have, sorted; a job may name only these. Empty while no worker is live (a job is then accepted and waits
            for one).
    """

    content_types: list[str]
    engine: str
    location: ModelLocation
    name: str
    options: ModelOptions
    languages: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        content_types = self.content_types

        engine = self.engine

        location = self.location.value

        name = self.name

        options = self.options.to_dict()

        languages: list[str] | Unset = UNSET
        if not isinstance(self.languages, Unset):
            languages = self.languages

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "content_types": content_types,
                "engine": engine,
                "location": location,
                "name": name,
                "options": options,
            }
        )
        if languages is not UNSET:
            field_dict["languages"] = languages

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.model_options import ModelOptions  # noqa: PLC0415

        d = dict(src_dict)
        content_types = cast(list[str], d.pop("content_types"))

        engine = d.pop("engine")

        location = ModelLocation(d.pop("location"))

        name = d.pop("name")

        options = ModelOptions.from_dict(d.pop("options"))

        languages = cast(list[str], d.pop("languages", UNSET))

        model = cls(
            content_types=content_types,
            engine=engine,
            location=location,
            name=name,
            options=options,
            languages=languages,
        )

        return model
