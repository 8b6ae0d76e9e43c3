from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..models.fanout_priority import FanoutPriority
from ..models.fanout_webhook_events_item import FanoutWebhookEventsItem
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.job import Job


T = TypeVar("T", bound="Fanout")


@_attrs_define
class Fanout:
    """
    Attributes:
        children (list[Job]): 1 to OCRGW_MAX_CHILDREN jobs (none: no_children; more: too_many_children); they may use
            different models.
        max_parallel (int): At most this many children run at once; <= 0: no cap.
        callback_url (str | Unset): Where the job's view is POSTed, signed, once it is terminal: an http(s) URL of a
            public address (see the manual's Webhooks, /manual/webhooks/); refused: invalid_callback_url.
        fail_fast (bool | Unset): Once more children failed than tolerated, cancel the held ones at once.
        on_prem (bool | Unset): true: the document must stay on premises; a model whose location is cloud refuses it
            (403 on_prem_required). Default false. Applies to every child.
        priority (FanoutPriority | Unset): 'interactive': the job goes ahead of batch work of its model (its own queue,
            consumed first); 'batch' (the default): behind interactive work. Within a lane, tenants take turns. The
            interactive lane is each key's to use as its interactive_max_inflight policy says (403 interactive_not_allowed,
            429 interactive_limit_reached). The group's and every child's.
        tolerated_failure_percentage (float | Unset): The same as a share of the children (rounded down); not with
            tolerated_failures.
        tolerated_failures (int | Unset): Children that may fail (or be cancelled) with the group still completed;
            default 0: any failure fails the group once every child has ended (collect-all).
        webhook_events (list[FanoutWebhookEventsItem] | Unset): Which webhooks go to callback_url: 'job.completed' (the
            default), one when the whole job ends; 'child.completed', one per child as it ends (completed, failed or
            cancelled), its own view, signed and retried as the job's. A child with a callback_url of its own gets its
            webhook there instead. Unknown names: invalid_field.
    """

    children: list[Job]
    max_parallel: int
    callback_url: str | Unset = UNSET
    fail_fast: bool | Unset = UNSET
    on_prem: bool | Unset = UNSET
    priority: FanoutPriority | Unset = UNSET
    tolerated_failure_percentage: float | Unset = UNSET
    tolerated_failures: int | Unset = UNSET
    webhook_events: list[FanoutWebhookEventsItem] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        children = []
        for children_item_data in self.children:
            children_item = children_item_data.to_dict()
            children.append(children_item)

        max_parallel = self.max_parallel

        callback_url = self.callback_url

        fail_fast = self.fail_fast

        on_prem = self.on_prem

        priority: str | Unset = UNSET
        if not isinstance(self.priority, Unset):
            priority = self.priority.value

        tolerated_failure_percentage = self.tolerated_failure_percentage

        tolerated_failures = self.tolerated_failures

        webhook_events: list[str] | Unset = UNSET
        if not isinstance(self.webhook_events, Unset):
            webhook_events = []
            for webhook_events_item_data in self.webhook_events:
                webhook_events_item = webhook_events_item_data.value
                webhook_events.append(webhook_events_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "children": children,
                "max_parallel": max_parallel,
            }
        )
        if callback_url is not UNSET:
            field_dict["callback_url"] = callback_url
        if fail_fast is not UNSET:
            field_dict["fail_fast"] = fail_fast
        if on_prem is not UNSET:
            field_dict["on_prem"] = on_prem
        if priority is not UNSET:
            field_dict["priority"] = priority
        if tolerated_failure_percentage is not UNSET:
            field_dict["tolerated_failure_percentage"] = tolerated_failure_percentage
        if tolerated_failures is not UNSET:
            field_dict["tolerated_failures"] = tolerated_failures
        if webhook_events is not UNSET:
            field_dict["webhook_events"] = webhook_events

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job import Job  # noqa: PLC0415

        d = dict(src_dict)
        children = []
        _children = d.pop("children")
        for children_item_data in _children:
            children_item = Job.from_dict(children_item_data)

            children.append(children_item)

        max_parallel = d.pop("max_parallel")

        callback_url = d.pop("callback_url", UNSET)

        fail_fast = d.pop("fail_fast", UNSET)

        on_prem = d.pop("on_prem", UNSET)

        _priority = d.pop("priority", UNSET)
        priority: FanoutPriority | Unset
        if isinstance(_priority, Unset):
            priority = UNSET
        else:
            priority = FanoutPriority(_priority)

        tolerated_failure_percentage = d.pop("tolerated_failure_percentage", UNSET)

        tolerated_failures = d.pop("tolerated_failures", UNSET)

        _webhook_events = d.pop("webhook_events", UNSET)
        webhook_events: list[FanoutWebhookEventsItem] | Unset = UNSET
        if _webhook_events is not UNSET:
            webhook_events = []
            for webhook_events_item_data in _webhook_events:
                webhook_events_item = FanoutWebhookEventsItem(webhook_events_item_data)

                webhook_events.append(webhook_events_item)

        fanout = cls(
            children=children,
            max_parallel=max_parallel,
            callback_url=callback_url,
            fail_fast=fail_fast,
            on_prem=on_prem,
            priority=priority,
            tolerated_failure_percentage=tolerated_failure_percentage,
            tolerated_failures=tolerated_failures,
            webhook_events=webhook_events,
        )

        return fanout
