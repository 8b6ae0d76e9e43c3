from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..models.usage_granularity import UsageGranularity

if TYPE_CHECKING:
    from ..models.usage_period import UsagePeriod
    from ..models.usage_total import UsageTotal


T = TypeVar("T", bound="Usage")


@_attrs_define
class Usage:
    """
    Attributes:
        from_ (datetime.datetime): The range's start, rounded down to its hour.
        granularity (UsageGranularity):
        periods (list[UsagePeriod]): Per period and model, oldest first; a period with nothing used is left out.
        tenant (str):
        to (datetime.datetime): The range's end, exclusive.
        totals (list[UsageTotal]): Per model.
    """

    from_: datetime.datetime
    granularity: UsageGranularity
    periods: list[UsagePeriod]
    tenant: str
    to: datetime.datetime
    totals: list[UsageTotal]

    def to_dict(self) -> dict[str, Any]:
        from_ = self.from_.isoformat()

        granularity = self.granularity.value

        periods = []
        for periods_item_data in self.periods:
            periods_item = periods_item_data.to_dict()
            periods.append(periods_item)

        tenant = self.tenant

        to = self.to.isoformat()

        totals = []
        for totals_item_data in self.totals:
            totals_item = totals_item_data.to_dict()
            totals.append(totals_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "from": from_,
                "granularity": granularity,
                "periods": periods,
                "tenant": tenant,
                "to": to,
                "totals": totals,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.usage_period import UsagePeriod  # noqa: PLC0415
        from ..models.usage_total import UsageTotal  # noqa: PLC0415

        d = dict(src_dict)
        from_ = datetime.datetime.fromisoformat(d.pop("from"))

        granularity = UsageGranularity(d.pop("granularity"))

        periods = []
        _periods = d.pop("periods")
        for periods_item_data in _periods:
            periods_item = UsagePeriod.from_dict(periods_item_data)

            periods.append(periods_item)

        tenant = d.pop("tenant")

        to = datetime.datetime.fromisoformat(d.pop("to"))

        totals = []
        _totals = d.pop("totals")
        for totals_item_data in _totals:
            totals_item = UsageTotal.from_dict(totals_item_data)

            totals.append(totals_item)

        usage = cls(
            from_=from_,
            granularity=granularity,
            periods=periods,
            tenant=tenant,
            to=to,
            totals=totals,
        )

        return usage
