"""Contains all the data models used in inputs/outputs"""

from .block import Block
from .block_type import BlockType
from .cap import Cap
from .cell import Cell
from .child_summary import ChildSummary
from .children_page import ChildrenPage
from .children_paging import ChildrenPaging
from .counts import Counts
from .create_job_model import CreateJobModel
from .create_job_priority import CreateJobPriority
from .error_code import ErrorCode
from .event import Event
from .event_operation import EventOperation
from .event_outcome import EventOutcome
from .events import Events
from .fanout import Fanout
from .fanout_priority import FanoutPriority
from .fanout_webhook_events_item import FanoutWebhookEventsItem
from .get_job_children import GetJobChildren
from .get_result_pdf_optimize import GetResultPdfOptimize
from .get_result_pdf_output_type import GetResultPdfOutputType
from .get_result_pdf_response_202 import GetResultPdfResponse202
from .get_result_pdf_response_202_status import GetResultPdfResponse202Status
from .get_usage_granularity import GetUsageGranularity
from .group import Group
from .job import Job
from .job_list import JobList
from .job_model import JobModel
from .job_options import JobOptions
from .job_priority import JobPriority
from .job_status import JobStatus
from .job_summary import JobSummary
from .job_summary_kind import JobSummaryKind
from .job_usage import JobUsage
from .job_webhook_events_item import JobWebhookEventsItem
from .line import Line
from .line_source import LineSource
from .list_children_status import ListChildrenStatus
from .list_jobs_kind import ListJobsKind
from .list_jobs_status import ListJobsStatus
from .merged_child import MergedChild
from .merged_result import MergedResult
from .model import Model
from .model_location import ModelLocation
from .model_options import ModelOptions
from .models import Models
from .page import Page
from .page_dpi_source import PageDpiSource
from .page_orientation_by_type_1 import PageOrientationByType1
from .page_orientation_by_type_2_type_1 import PageOrientationByType2Type1
from .page_orientation_by_type_3_type_1 import PageOrientationByType3Type1
from .page_rotation import PageRotation
from .page_source import PageSource
from .parent_view import ParentView
from .parent_view_kind import ParentViewKind
from .problem import Problem
from .problem_code import ProblemCode
from .problem_errors import ProblemErrors
from .problem_limit import ProblemLimit
from .result import Result
from .retry import Retry
from .run import Run
from .single_job_view import SingleJobView
from .single_job_view_kind import SingleJobViewKind
from .status import Status
from .table import Table
from .table_summary import TableSummary
from .usage import Usage
from .usage_granularity import UsageGranularity
from .usage_period import UsagePeriod
from .usage_total import UsageTotal
from .webhook_error_code import WebhookErrorCode
from .word import Word

__all__ = (
    "Block",
    "BlockType",
    "Cap",
    "Cell",
    "ChildrenPage",
    "ChildrenPaging",
    "ChildSummary",
    "Counts",
    "CreateJobModel",
    "CreateJobPriority",
    "ErrorCode",
    "Event",
    "EventOperation",
    "EventOutcome",
    "Events",
    "Fanout",
    "FanoutPriority",
    "FanoutWebhookEventsItem",
    "GetJobChildren",
    "GetResultPdfOptimize",
    "GetResultPdfOutputType",
    "GetResultPdfResponse202",
    "GetResultPdfResponse202Status",
    "GetUsageGranularity",
    "Group",
    "Job",
    "JobList",
    "JobModel",
    "JobOptions",
    "JobPriority",
    "JobStatus",
    "JobSummary",
    "JobSummaryKind",
    "JobUsage",
    "JobWebhookEventsItem",
    "Line",
    "LineSource",
    "ListChildrenStatus",
    "ListJobsKind",
    "ListJobsStatus",
    "MergedChild",
    "MergedResult",
    "Model",
    "ModelLocation",
    "ModelOptions",
    "Models",
    "Page",
    "PageDpiSource",
    "PageOrientationByType1",
    "PageOrientationByType2Type1",
    "PageOrientationByType3Type1",
    "PageRotation",
    "PageSource",
    "ParentView",
    "ParentViewKind",
    "Problem",
    "ProblemCode",
    "ProblemErrors",
    "ProblemLimit",
    "Result",
    "Retry",
    "Run",
    "SingleJobView",
    "SingleJobViewKind",
    "Status",
    "Table",
    "TableSummary",
    "Usage",
    "UsageGranularity",
    "UsagePeriod",
    "UsageTotal",
    "WebhookErrorCode",
    "Word",
)
