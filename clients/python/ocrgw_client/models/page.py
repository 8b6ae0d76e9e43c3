from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.page_dpi_source import PageDpiSource
from ..models.page_orientation_by_type_1 import PageOrientationByType1
from ..models.page_orientation_by_type_2_type_1 import PageOrientationByType2Type1
from ..models.page_orientation_by_type_3_type_1 import PageOrientationByType3Type1
from ..models.page_rotation import PageRotation
from ..models.page_source import PageSource
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.block import Block
    from ..models.line import Line


T = TypeVar("T", bound="Page")


@_attrs_define
class Page:
    """
    Attributes:
        lines (list[Line]):
        page (int): 1-based; in the whole document (a split's child, options.first_page).
        text (str):
        blocks (list[Block] | Unset): options.layout: the page's blocks in reading order (none on a page without text);
            absent without layout, or when it failed on this page (layout_error).
        child_index (int | Unset): In a merged result: the child it comes from.
        dpi (float | Unset): The resolution the page was read at, in dots per inch: the scale of its bboxes (for a page
            answered from its text layer, the resolution it would have been drawn at).
        dpi_source (PageDpiSource | Unset): Where dpi comes from: 'content' (a PDF page drawn so that its images' pixels
            land one to one), 'vector' (a PDF page without such an image, or with visible text, at 300 dpi), 'stated' (the
            image's own), 'option' (options.image_dpi), 'estimated' (from the image's text and the sheet its size fits),
            'assumed' (an image with too little text to tell, at 300 dpi).
        height (int | Unset): Its height in pixels.
        layout_error (str | Unset): options.layout: why the layout of this page could not be read; the page keeps its
            plain lines and the job completes.
        orientation_by (None | PageOrientationByType1 | PageOrientationByType2Type1 | PageOrientationByType3Type1 |
            Unset): Who said which way up the page stands (options.rotate_pages): the learned 'classifier', or Tesseract's
            orientation detection, 'osd' (options.orientation, or where the classifier was unsure); null when nobody was
            asked.
        rotation (PageRotation | Unset): Degrees clockwise the page was turned to stand upright (options.rotate_pages).
        skew (float | Unset): Degrees counter-clockwise the upright page was turned about its centre to straighten it
            (options.deskew); 0 when it was not.
        source (PageSource | Unset): Where the text comes from: an engine, or the PDF's own text (text_layer).
        width (int | Unset): The width in pixels of the page as displayed (upright and straightened): the image the
            engine read, the space of the bboxes.
    """

    lines: list[Line]
    page: int
    text: str
    blocks: list[Block] | Unset = UNSET
    child_index: int | Unset = UNSET
    dpi: float | Unset = UNSET
    dpi_source: PageDpiSource | Unset = UNSET
    height: int | Unset = UNSET
    layout_error: str | Unset = UNSET
    orientation_by: (
        None | PageOrientationByType1 | PageOrientationByType2Type1 | PageOrientationByType3Type1 | Unset
    ) = UNSET
    rotation: PageRotation | Unset = UNSET
    skew: float | Unset = UNSET
    source: PageSource | Unset = UNSET
    width: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        lines = []
        for lines_item_data in self.lines:
            lines_item = lines_item_data.to_dict()
            lines.append(lines_item)

        page = self.page

        text = self.text

        blocks: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.blocks, Unset):
            blocks = []
            for blocks_item_data in self.blocks:
                blocks_item = blocks_item_data.to_dict()
                blocks.append(blocks_item)

        child_index = self.child_index

        dpi = self.dpi

        dpi_source: str | Unset = UNSET
        if not isinstance(self.dpi_source, Unset):
            dpi_source = self.dpi_source.value

        height = self.height

        layout_error = self.layout_error

        orientation_by: None | str | Unset
        if isinstance(self.orientation_by, Unset):
            orientation_by = UNSET
        elif isinstance(self.orientation_by, PageOrientationByType1):
            orientation_by = self.orientation_by.value
        elif isinstance(self.orientation_by, PageOrientationByType2Type1):
            orientation_by = self.orientation_by.value
        elif isinstance(self.orientation_by, PageOrientationByType3Type1):
            orientation_by = self.orientation_by.value
        else:
            orientation_by = self.orientation_by

        rotation: int | Unset = UNSET
        if not isinstance(self.rotation, Unset):
            rotation = self.rotation.value

        skew = self.skew

        source: str | Unset = UNSET
        if not isinstance(self.source, Unset):
            source = self.source.value

        width = self.width

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "lines": lines,
                "page": page,
                "text": text,
            }
        )
        if blocks is not UNSET:
            field_dict["blocks"] = blocks
        if child_index is not UNSET:
            field_dict["child_index"] = child_index
        if dpi is not UNSET:
            field_dict["dpi"] = dpi
        if dpi_source is not UNSET:
            field_dict["dpi_source"] = dpi_source
        if height is not UNSET:
            field_dict["height"] = height
        if layout_error is not UNSET:
            field_dict["layout_error"] = layout_error
        if orientation_by is not UNSET:
            field_dict["orientation_by"] = orientation_by
        if rotation is not UNSET:
            field_dict["rotation"] = rotation
        if skew is not UNSET:
            field_dict["skew"] = skew
        if source is not UNSET:
            field_dict["source"] = source
        if width is not UNSET:
            field_dict["width"] = width

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.block import Block  # noqa: PLC0415
        from ..models.line import Line  # noqa: PLC0415

        d = dict(src_dict)
        lines = []
        _lines = d.pop("lines")
        for lines_item_data in _lines:
            lines_item = Line.from_dict(lines_item_data)

            lines.append(lines_item)

        page = d.pop("page")

        text = d.pop("text")

        _blocks = d.pop("blocks", UNSET)
        blocks: list[Block] | Unset = UNSET
        if _blocks is not UNSET:
            blocks = []
            for blocks_item_data in _blocks:
                blocks_item = Block.from_dict(blocks_item_data)

                blocks.append(blocks_item)

        child_index = d.pop("child_index", UNSET)

        dpi = d.pop("dpi", UNSET)

        _dpi_source = d.pop("dpi_source", UNSET)
        dpi_source: PageDpiSource | Unset
        if isinstance(_dpi_source, Unset):
            dpi_source = UNSET
        else:
            dpi_source = PageDpiSource(_dpi_source)

        height = d.pop("height", UNSET)

        layout_error = d.pop("layout_error", UNSET)

        def _parse_orientation_by(
            data: object,
        ) -> None | PageOrientationByType1 | PageOrientationByType2Type1 | PageOrientationByType3Type1 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                orientation_by_type_1 = PageOrientationByType1(data)

                return orientation_by_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                orientation_by_type_2_type_1 = PageOrientationByType2Type1(data)

                return orientation_by_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                orientation_by_type_3_type_1 = PageOrientationByType3Type1(data)

                return orientation_by_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None | PageOrientationByType1 | PageOrientationByType2Type1 | PageOrientationByType3Type1 | Unset, data
            )

        orientation_by = _parse_orientation_by(d.pop("orientation_by", UNSET))

        _rotation = d.pop("rotation", UNSET)
        rotation: PageRotation | Unset
        if isinstance(_rotation, Unset):
            rotation = UNSET
        else:
            rotation = PageRotation(_rotation)

        skew = d.pop("skew", UNSET)

        _source = d.pop("source", UNSET)
        source: PageSource | Unset
        if isinstance(_source, Unset):
            source = UNSET
        else:
            source = PageSource(_source)

        width = d.pop("width", UNSET)

        page = cls(
            lines=lines,
            page=page,
            text=text,
            blocks=blocks,
            child_index=child_index,
            dpi=dpi,
            dpi_source=dpi_source,
            height=height,
            layout_error=layout_error,
            orientation_by=orientation_by,
            rotation=rotation,
            skew=skew,
            source=source,
            width=width,
        )

        return page
