from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.job_status import JobStatus

if TYPE_CHECKING:
    from ..models.child_summary import ChildSummary
    from ..models.children_paging import ChildrenPaging


T = TypeVar("T", bound="ChildrenPage")


@_attrs_define
class ChildrenPage:
    """
    Attributes:
        children (list[ChildSummary]):
        children_page (ChildrenPaging):
        parent_id (str):
        status (JobStatus | None): The filter, if any.
    """

    children: list[ChildSummary]
    children_page: ChildrenPaging
    parent_id: str
    status: JobStatus | None

    def to_dict(self) -> dict[str, Any]:
        children = []
        for children_item_data in self.children:
            children_item = children_item_data.to_dict()
            children.append(children_item)

        children_page = self.children_page.to_dict()

        parent_id = self.parent_id

        status: None | str
        if isinstance(self.status, JobStatus):
            status = self.status.value
        else:
            status = self.status

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "children": children,
                "children_page": children_page,
                "parent_id": parent_id,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.child_summary import ChildSummary  # noqa: PLC0415
        from ..models.children_paging import ChildrenPaging  # noqa: PLC0415

        d = dict(src_dict)
        children = []
        _children = d.pop("children")
        for children_item_data in _children:
            children_item = ChildSummary.from_dict(children_item_data)

            children.append(children_item)

        children_page = ChildrenPaging.from_dict(d.pop("children_page"))

        parent_id = d.pop("parent_id")

        def _parse_status(data: object) -> JobStatus | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                status_type_1 = JobStatus(data)

                return status_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobStatus | None, data)

        status = _parse_status(d.pop("status"))

        children_page = cls(
            children=children,
            children_page=children_page,
            parent_id=parent_id,
            status=status,
        )

        return children_page
