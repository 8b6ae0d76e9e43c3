from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..models.job_model import JobModel
from ..models.job_priority import JobPriority
from ..models.job_webhook_events_item import JobWebhookEventsItem
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.job_options import JobOptions


T = TypeVar("T", bound="Job")


@_attrs_define
class Job:
    """
    Attributes:
        content_type (str): The document's media type; parameters are ignored.
        model (JobModel):
        payload (str): The document, base64 (standard alphabet, padded); empty is empty_document.
        callback_url (str | Unset): Where the job's view is POSTed, signed, once it is terminal: an http(s) URL of a
            public address (see the manual's Webhooks, /manual/webhooks/); refused: invalid_callback_url.
        doc_hash (str | Unset): The client's name for the document; default: the payload's sha256.
        max_parallel (int | Unset): With split_pages: at most this many children run at once; 0 or absent: no cap. <= 0:
            no cap.
        on_prem (bool | Unset): true: the document must stay on premises; a model whose location is cloud refuses it
            (403 on_prem_required). Default false. In a group, the group's on_prem applies too.
        options (JobOptions | Unset): What the model reads; see GET /models for each model's.
        pages (int | Unset): The document's page count, if known.
        priority (JobPriority | Unset): 'interactive': the job goes ahead of batch work of its model (its own queue,
            consumed first); 'batch' (the default): behind interactive work. Within a lane, tenants take turns. The
            interactive lane is each key's to use as its interactive_max_inflight policy says (403 interactive_not_allowed,
            429 interactive_limit_reached). Not in a group's child: a child runs in its group's lane.
        split_pages (int | Unset): Split the PDF into children of this many pages each (the last may have fewer): the
            job becomes a fan-out group, each child's pages keep their page numbers in the whole document. A PDF only; not
            in a group's child.
        webhook_events (list[JobWebhookEventsItem] | Unset): Which webhooks go to callback_url: 'job.completed' (the
            default), one when the whole job ends; 'child.completed', one per child as it ends (completed, failed or
            cancelled), its own view, signed and retried as the job's. A child with a callback_url of its own gets its
            webhook there instead. Unknown names: invalid_field. child.completed with split_pages only; not in a group's
            child (give fanout.webhook_events).
    """

    content_type: str
    model: JobModel
    payload: str
    callback_url: str | Unset = UNSET
    doc_hash: str | Unset = UNSET
    max_parallel: int | Unset = UNSET
    on_prem: bool | Unset = UNSET
    options: JobOptions | Unset = UNSET
    pages: int | Unset = UNSET
    priority: JobPriority | Unset = UNSET
    split_pages: int | Unset = UNSET
    webhook_events: list[JobWebhookEventsItem] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        content_type = self.content_type

        model = self.model.value

        payload = self.payload

        callback_url = self.callback_url

        doc_hash = self.doc_hash

        max_parallel = self.max_parallel

        on_prem = self.on_prem

        options: dict[str, Any] | Unset = UNSET
        if not isinstance(self.options, Unset):
            options = self.options.to_dict()

        pages = self.pages

        priority: str | Unset = UNSET
        if not isinstance(self.priority, Unset):
            priority = self.priority.value

        split_pages = self.split_pages

        webhook_events: list[str] | Unset = UNSET
        if not isinstance(self.webhook_events, Unset):
            webhook_events = []
            for webhook_events_item_data in self.webhook_events:
                webhook_events_item = webhook_events_item_data.value
                webhook_events.append(webhook_events_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "content_type": content_type,
                "model": model,
                "payload": payload,
            }
        )
        if callback_url is not UNSET:
            field_dict["callback_url"] = callback_url
        if doc_hash is not UNSET:
            field_dict["doc_hash"] = doc_hash
        if max_parallel is not UNSET:
            field_dict["max_parallel"] = max_parallel
        if on_prem is not UNSET:
            field_dict["on_prem"] = on_prem
        if options is not UNSET:
            field_dict["options"] = options
        if pages is not UNSET:
            field_dict["pages"] = pages
        if priority is not UNSET:
            field_dict["priority"] = priority
        if split_pages is not UNSET:
            field_dict["split_pages"] = split_pages
        if webhook_events is not UNSET:
            field_dict["webhook_events"] = webhook_events

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_options import JobOptions  # noqa: PLC0415

        d = dict(src_dict)
        content_type = d.pop("content_type")

        model = JobModel(d.pop("model"))

        payload = d.pop("payload")

        callback_url = d.pop("callback_url", UNSET)

        doc_hash = d.pop("doc_hash", UNSET)

        max_parallel = d.pop("max_parallel", UNSET)

        on_prem = d.pop("on_prem", UNSET)

        _options = d.pop("options", UNSET)
        options: JobOptions | Unset
        if isinstance(_options, Unset):
            options = UNSET
        else:
            options = JobOptions.from_dict(_options)

        pages = d.pop("pages", UNSET)

        _priority = d.pop("priority", UNSET)
        priority: JobPriority | Unset
        if isinstance(_priority, Unset):
            priority = UNSET
        else:
            priority = JobPriority(_priority)

        split_pages = d.pop("split_pages", UNSET)

        _webhook_events = d.pop("webhook_events", UNSET)
        webhook_events: list[JobWebhookEventsItem] | Unset = UNSET
        if _webhook_events is not UNSET:
            webhook_events = []
            for webhook_events_item_data in _webhook_events:
                webhook_events_item = JobWebhookEventsItem(webhook_events_item_data)

                webhook_events.append(webhook_events_item)

        job = cls(
            content_type=content_type,
            model=model,
            payload=payload,
            callback_url=callback_url,
            doc_hash=doc_hash,
            max_parallel=max_parallel,
            on_prem=on_prem,
            options=options,
            pages=pages,
            priority=priority,
            split_pages=split_pages,
            webhook_events=webhook_events,
        )

        return job
