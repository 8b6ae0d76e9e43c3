"""Contains all the data models used in inputs/outputs"""

from .block import Block
from .block_type import BlockType
from .cancel_job_response_400 import CancelJobResponse400
from .cancel_job_response_400_code import CancelJobResponse400Code
from .cancel_job_response_401 import CancelJobResponse401
from .cancel_job_response_401_code import CancelJobResponse401Code
from .cancel_job_response_403 import CancelJobResponse403
from .cancel_job_response_403_code import CancelJobResponse403Code
from .cancel_job_response_404 import CancelJobResponse404
from .cancel_job_response_404_code import CancelJobResponse404Code
from .cancel_job_response_409 import CancelJobResponse409
from .cancel_job_response_409_code import CancelJobResponse409Code
from .cancel_job_response_414 import CancelJobResponse414
from .cancel_job_response_414_code import CancelJobResponse414Code
from .cancel_job_response_431 import CancelJobResponse431
from .cancel_job_response_431_code import CancelJobResponse431Code
from .cancel_job_response_500 import CancelJobResponse500
from .cancel_job_response_500_code import CancelJobResponse500Code
from .cancel_job_response_503 import CancelJobResponse503
from .cancel_job_response_503_code import CancelJobResponse503Code
from .cap import Cap
from .cell import Cell
from .child_summary import ChildSummary
from .child_summary_status import ChildSummaryStatus
from .children_page import ChildrenPage
from .children_page_status_type_1 import ChildrenPageStatusType1
from .children_page_status_type_2_type_1 import ChildrenPageStatusType2Type1
from .children_page_status_type_3_type_1 import ChildrenPageStatusType3Type1
from .children_paging import ChildrenPaging
from .counts import Counts
from .create_job_model import CreateJobModel
from .create_job_priority import CreateJobPriority
from .create_job_response_400 import CreateJobResponse400
from .create_job_response_400_code import CreateJobResponse400Code
from .create_job_response_401 import CreateJobResponse401
from .create_job_response_401_code import CreateJobResponse401Code
from .create_job_response_403 import CreateJobResponse403
from .create_job_response_403_code import CreateJobResponse403Code
from .create_job_response_413 import CreateJobResponse413
from .create_job_response_413_code import CreateJobResponse413Code
from .create_job_response_414 import CreateJobResponse414
from .create_job_response_414_code import CreateJobResponse414Code
from .create_job_response_415 import CreateJobResponse415
from .create_job_response_415_code import CreateJobResponse415Code
from .create_job_response_422 import CreateJobResponse422
from .create_job_response_422_code import CreateJobResponse422Code
from .create_job_response_429 import CreateJobResponse429
from .create_job_response_429_code import CreateJobResponse429Code
from .create_job_response_431 import CreateJobResponse431
from .create_job_response_431_code import CreateJobResponse431Code
from .create_job_response_500 import CreateJobResponse500
from .create_job_response_500_code import CreateJobResponse500Code
from .create_job_response_503 import CreateJobResponse503
from .create_job_response_503_code import CreateJobResponse503Code
from .error_code import ErrorCode
from .event import Event
from .event_operation import EventOperation
from .event_outcome import EventOutcome
from .event_status import EventStatus
from .events import Events
from .fanout import Fanout
from .fanout_priority import FanoutPriority
from .fanout_webhook_events_item import FanoutWebhookEventsItem
from .get_health_response_414 import GetHealthResponse414
from .get_health_response_414_code import GetHealthResponse414Code
from .get_health_response_431 import GetHealthResponse431
from .get_health_response_431_code import GetHealthResponse431Code
from .get_health_response_500 import GetHealthResponse500
from .get_health_response_500_code import GetHealthResponse500Code
from .get_job_children import GetJobChildren
from .get_job_response_400 import GetJobResponse400
from .get_job_response_400_code import GetJobResponse400Code
from .get_job_response_401 import GetJobResponse401
from .get_job_response_401_code import GetJobResponse401Code
from .get_job_response_404 import GetJobResponse404
from .get_job_response_404_code import GetJobResponse404Code
from .get_job_response_414 import GetJobResponse414
from .get_job_response_414_code import GetJobResponse414Code
from .get_job_response_422 import GetJobResponse422
from .get_job_response_422_code import GetJobResponse422Code
from .get_job_response_431 import GetJobResponse431
from .get_job_response_431_code import GetJobResponse431Code
from .get_job_response_500 import GetJobResponse500
from .get_job_response_500_code import GetJobResponse500Code
from .get_job_response_503 import GetJobResponse503
from .get_job_response_503_code import GetJobResponse503Code
from .get_readiness_response_414 import GetReadinessResponse414
from .get_readiness_response_414_code import GetReadinessResponse414Code
from .get_readiness_response_431 import GetReadinessResponse431
from .get_readiness_response_431_code import GetReadinessResponse431Code
from .get_readiness_response_500 import GetReadinessResponse500
from .get_readiness_response_500_code import GetReadinessResponse500Code
from .get_readiness_response_503 import GetReadinessResponse503
from .get_readiness_response_503_code import GetReadinessResponse503Code
from .get_result_alto_response_400 import GetResultAltoResponse400
from .get_result_alto_response_400_code import GetResultAltoResponse400Code
from .get_result_alto_response_401 import GetResultAltoResponse401
from .get_result_alto_response_401_code import GetResultAltoResponse401Code
from .get_result_alto_response_404 import GetResultAltoResponse404
from .get_result_alto_response_404_code import GetResultAltoResponse404Code
from .get_result_alto_response_409 import GetResultAltoResponse409
from .get_result_alto_response_409_code import GetResultAltoResponse409Code
from .get_result_alto_response_414 import GetResultAltoResponse414
from .get_result_alto_response_414_code import GetResultAltoResponse414Code
from .get_result_alto_response_431 import GetResultAltoResponse431
from .get_result_alto_response_431_code import GetResultAltoResponse431Code
from .get_result_alto_response_500 import GetResultAltoResponse500
from .get_result_alto_response_500_code import GetResultAltoResponse500Code
from .get_result_alto_response_503 import GetResultAltoResponse503
from .get_result_alto_response_503_code import GetResultAltoResponse503Code
from .get_result_hocr_response_400 import GetResultHocrResponse400
from .get_result_hocr_response_400_code import GetResultHocrResponse400Code
from .get_result_hocr_response_401 import GetResultHocrResponse401
from .get_result_hocr_response_401_code import GetResultHocrResponse401Code
from .get_result_hocr_response_404 import GetResultHocrResponse404
from .get_result_hocr_response_404_code import GetResultHocrResponse404Code
from .get_result_hocr_response_409 import GetResultHocrResponse409
from .get_result_hocr_response_409_code import GetResultHocrResponse409Code
from .get_result_hocr_response_414 import GetResultHocrResponse414
from .get_result_hocr_response_414_code import GetResultHocrResponse414Code
from .get_result_hocr_response_431 import GetResultHocrResponse431
from .get_result_hocr_response_431_code import GetResultHocrResponse431Code
from .get_result_hocr_response_500 import GetResultHocrResponse500
from .get_result_hocr_response_500_code import GetResultHocrResponse500Code
from .get_result_hocr_response_503 import GetResultHocrResponse503
from .get_result_hocr_response_503_code import GetResultHocrResponse503Code
from .get_result_markdown_response_400 import GetResultMarkdownResponse400
from .get_result_markdown_response_400_code import GetResultMarkdownResponse400Code
from .get_result_markdown_response_401 import GetResultMarkdownResponse401
from .get_result_markdown_response_401_code import GetResultMarkdownResponse401Code
from .get_result_markdown_response_404 import GetResultMarkdownResponse404
from .get_result_markdown_response_404_code import GetResultMarkdownResponse404Code
from .get_result_markdown_response_409 import GetResultMarkdownResponse409
from .get_result_markdown_response_409_code import GetResultMarkdownResponse409Code
from .get_result_markdown_response_414 import GetResultMarkdownResponse414
from .get_result_markdown_response_414_code import GetResultMarkdownResponse414Code
from .get_result_markdown_response_431 import GetResultMarkdownResponse431
from .get_result_markdown_response_431_code import GetResultMarkdownResponse431Code
from .get_result_markdown_response_500 import GetResultMarkdownResponse500
from .get_result_markdown_response_500_code import GetResultMarkdownResponse500Code
from .get_result_markdown_response_503 import GetResultMarkdownResponse503
from .get_result_markdown_response_503_code import GetResultMarkdownResponse503Code
from .get_result_pdf_optimize import GetResultPdfOptimize
from .get_result_pdf_output_type import GetResultPdfOutputType
from .get_result_pdf_response_202 import GetResultPdfResponse202
from .get_result_pdf_response_202_status import GetResultPdfResponse202Status
from .get_result_pdf_response_400 import GetResultPdfResponse400
from .get_result_pdf_response_400_code import GetResultPdfResponse400Code
from .get_result_pdf_response_401 import GetResultPdfResponse401
from .get_result_pdf_response_401_code import GetResultPdfResponse401Code
from .get_result_pdf_response_404 import GetResultPdfResponse404
from .get_result_pdf_response_404_code import GetResultPdfResponse404Code
from .get_result_pdf_response_409 import GetResultPdfResponse409
from .get_result_pdf_response_409_code import GetResultPdfResponse409Code
from .get_result_pdf_response_414 import GetResultPdfResponse414
from .get_result_pdf_response_414_code import GetResultPdfResponse414Code
from .get_result_pdf_response_422 import GetResultPdfResponse422
from .get_result_pdf_response_422_code import GetResultPdfResponse422Code
from .get_result_pdf_response_431 import GetResultPdfResponse431
from .get_result_pdf_response_431_code import GetResultPdfResponse431Code
from .get_result_pdf_response_500 import GetResultPdfResponse500
from .get_result_pdf_response_500_code import GetResultPdfResponse500Code
from .get_result_pdf_response_503 import GetResultPdfResponse503
from .get_result_pdf_response_503_code import GetResultPdfResponse503Code
from .get_result_response_400 import GetResultResponse400
from .get_result_response_400_code import GetResultResponse400Code
from .get_result_response_401 import GetResultResponse401
from .get_result_response_401_code import GetResultResponse401Code
from .get_result_response_404 import GetResultResponse404
from .get_result_response_404_code import GetResultResponse404Code
from .get_result_response_409 import GetResultResponse409
from .get_result_response_409_code import GetResultResponse409Code
from .get_result_response_414 import GetResultResponse414
from .get_result_response_414_code import GetResultResponse414Code
from .get_result_response_431 import GetResultResponse431
from .get_result_response_431_code import GetResultResponse431Code
from .get_result_response_500 import GetResultResponse500
from .get_result_response_500_code import GetResultResponse500Code
from .get_result_response_503 import GetResultResponse503
from .get_result_response_503_code import GetResultResponse503Code
from .get_result_table_csv_response_400 import GetResultTableCsvResponse400
from .get_result_table_csv_response_400_code import GetResultTableCsvResponse400Code
from .get_result_table_csv_response_401 import GetResultTableCsvResponse401
from .get_result_table_csv_response_401_code import GetResultTableCsvResponse401Code
from .get_result_table_csv_response_404 import GetResultTableCsvResponse404
from .get_result_table_csv_response_404_code import GetResultTableCsvResponse404Code
from .get_result_table_csv_response_409 import GetResultTableCsvResponse409
from .get_result_table_csv_response_409_code import GetResultTableCsvResponse409Code
from .get_result_table_csv_response_414 import GetResultTableCsvResponse414
from .get_result_table_csv_response_414_code import GetResultTableCsvResponse414Code
from .get_result_table_csv_response_431 import GetResultTableCsvResponse431
from .get_result_table_csv_response_431_code import GetResultTableCsvResponse431Code
from .get_result_table_csv_response_500 import GetResultTableCsvResponse500
from .get_result_table_csv_response_500_code import GetResultTableCsvResponse500Code
from .get_result_table_csv_response_503 import GetResultTableCsvResponse503
from .get_result_table_csv_response_503_code import GetResultTableCsvResponse503Code
from .get_usage_granularity import GetUsageGranularity
from .get_usage_response_400 import GetUsageResponse400
from .get_usage_response_400_code import GetUsageResponse400Code
from .get_usage_response_401 import GetUsageResponse401
from .get_usage_response_401_code import GetUsageResponse401Code
from .get_usage_response_403 import GetUsageResponse403
from .get_usage_response_403_code import GetUsageResponse403Code
from .get_usage_response_414 import GetUsageResponse414
from .get_usage_response_414_code import GetUsageResponse414Code
from .get_usage_response_422 import GetUsageResponse422
from .get_usage_response_422_code import GetUsageResponse422Code
from .get_usage_response_431 import GetUsageResponse431
from .get_usage_response_431_code import GetUsageResponse431Code
from .get_usage_response_500 import GetUsageResponse500
from .get_usage_response_500_code import GetUsageResponse500Code
from .get_usage_response_503 import GetUsageResponse503
from .get_usage_response_503_code import GetUsageResponse503Code
from .group import Group
from .job import Job
from .job_list import JobList
from .job_model import JobModel
from .job_options import JobOptions
from .job_priority import JobPriority
from .job_summary import JobSummary
from .job_summary_kind import JobSummaryKind
from .job_summary_status import JobSummaryStatus
from .job_usage import JobUsage
from .job_webhook_events_item import JobWebhookEventsItem
from .line import Line
from .line_source import LineSource
from .list_children_response_400 import ListChildrenResponse400
from .list_children_response_400_code import ListChildrenResponse400Code
from .list_children_response_401 import ListChildrenResponse401
from .list_children_response_401_code import ListChildrenResponse401Code
from .list_children_response_404 import ListChildrenResponse404
from .list_children_response_404_code import ListChildrenResponse404Code
from .list_children_response_414 import ListChildrenResponse414
from .list_children_response_414_code import ListChildrenResponse414Code
from .list_children_response_422 import ListChildrenResponse422
from .list_children_response_422_code import ListChildrenResponse422Code
from .list_children_response_431 import ListChildrenResponse431
from .list_children_response_431_code import ListChildrenResponse431Code
from .list_children_response_500 import ListChildrenResponse500
from .list_children_response_500_code import ListChildrenResponse500Code
from .list_children_response_503 import ListChildrenResponse503
from .list_children_response_503_code import ListChildrenResponse503Code
from .list_children_status import ListChildrenStatus
from .list_job_events_response_400 import ListJobEventsResponse400
from .list_job_events_response_400_code import ListJobEventsResponse400Code
from .list_job_events_response_401 import ListJobEventsResponse401
from .list_job_events_response_401_code import ListJobEventsResponse401Code
from .list_job_events_response_404 import ListJobEventsResponse404
from .list_job_events_response_404_code import ListJobEventsResponse404Code
from .list_job_events_response_414 import ListJobEventsResponse414
from .list_job_events_response_414_code import ListJobEventsResponse414Code
from .list_job_events_response_429 import ListJobEventsResponse429
from .list_job_events_response_429_code import ListJobEventsResponse429Code
from .list_job_events_response_431 import ListJobEventsResponse431
from .list_job_events_response_431_code import ListJobEventsResponse431Code
from .list_job_events_response_500 import ListJobEventsResponse500
from .list_job_events_response_500_code import ListJobEventsResponse500Code
from .list_job_events_response_503 import ListJobEventsResponse503
from .list_job_events_response_503_code import ListJobEventsResponse503Code
from .list_jobs_kind import ListJobsKind
from .list_jobs_response_400 import ListJobsResponse400
from .list_jobs_response_400_code import ListJobsResponse400Code
from .list_jobs_response_401 import ListJobsResponse401
from .list_jobs_response_401_code import ListJobsResponse401Code
from .list_jobs_response_414 import ListJobsResponse414
from .list_jobs_response_414_code import ListJobsResponse414Code
from .list_jobs_response_422 import ListJobsResponse422
from .list_jobs_response_422_code import ListJobsResponse422Code
from .list_jobs_response_431 import ListJobsResponse431
from .list_jobs_response_431_code import ListJobsResponse431Code
from .list_jobs_response_500 import ListJobsResponse500
from .list_jobs_response_500_code import ListJobsResponse500Code
from .list_jobs_response_503 import ListJobsResponse503
from .list_jobs_response_503_code import ListJobsResponse503Code
from .list_jobs_status import ListJobsStatus
from .list_models_response_400 import ListModelsResponse400
from .list_models_response_400_code import ListModelsResponse400Code
from .list_models_response_401 import ListModelsResponse401
from .list_models_response_401_code import ListModelsResponse401Code
from .list_models_response_414 import ListModelsResponse414
from .list_models_response_414_code import ListModelsResponse414Code
from .list_models_response_431 import ListModelsResponse431
from .list_models_response_431_code import ListModelsResponse431Code
from .list_models_response_500 import ListModelsResponse500
from .list_models_response_500_code import ListModelsResponse500Code
from .merged_child import MergedChild
from .merged_child_status import MergedChildStatus
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
from .parent_view_status import ParentViewStatus
from .problem import Problem
from .problem_code import ProblemCode
from .problem_errors import ProblemErrors
from .problem_limit import ProblemLimit
from .result import Result
from .retry import Retry
from .retry_job_response_400 import RetryJobResponse400
from .retry_job_response_400_code import RetryJobResponse400Code
from .retry_job_response_401 import RetryJobResponse401
from .retry_job_response_401_code import RetryJobResponse401Code
from .retry_job_response_403 import RetryJobResponse403
from .retry_job_response_403_code import RetryJobResponse403Code
from .retry_job_response_404 import RetryJobResponse404
from .retry_job_response_404_code import RetryJobResponse404Code
from .retry_job_response_409 import RetryJobResponse409
from .retry_job_response_409_code import RetryJobResponse409Code
from .retry_job_response_413 import RetryJobResponse413
from .retry_job_response_413_code import RetryJobResponse413Code
from .retry_job_response_414 import RetryJobResponse414
from .retry_job_response_414_code import RetryJobResponse414Code
from .retry_job_response_415 import RetryJobResponse415
from .retry_job_response_415_code import RetryJobResponse415Code
from .retry_job_response_422 import RetryJobResponse422
from .retry_job_response_422_code import RetryJobResponse422Code
from .retry_job_response_429 import RetryJobResponse429
from .retry_job_response_429_code import RetryJobResponse429Code
from .retry_job_response_431 import RetryJobResponse431
from .retry_job_response_431_code import RetryJobResponse431Code
from .retry_job_response_500 import RetryJobResponse500
from .retry_job_response_500_code import RetryJobResponse500Code
from .retry_job_response_503 import RetryJobResponse503
from .retry_job_response_503_code import RetryJobResponse503Code
from .run import Run
from .set_job_cap_response_400 import SetJobCapResponse400
from .set_job_cap_response_400_code import SetJobCapResponse400Code
from .set_job_cap_response_401 import SetJobCapResponse401
from .set_job_cap_response_401_code import SetJobCapResponse401Code
from .set_job_cap_response_403 import SetJobCapResponse403
from .set_job_cap_response_403_code import SetJobCapResponse403Code
from .set_job_cap_response_404 import SetJobCapResponse404
from .set_job_cap_response_404_code import SetJobCapResponse404Code
from .set_job_cap_response_409 import SetJobCapResponse409
from .set_job_cap_response_409_code import SetJobCapResponse409Code
from .set_job_cap_response_413 import SetJobCapResponse413
from .set_job_cap_response_413_code import SetJobCapResponse413Code
from .set_job_cap_response_414 import SetJobCapResponse414
from .set_job_cap_response_414_code import SetJobCapResponse414Code
from .set_job_cap_response_415 import SetJobCapResponse415
from .set_job_cap_response_415_code import SetJobCapResponse415Code
from .set_job_cap_response_422 import SetJobCapResponse422
from .set_job_cap_response_422_code import SetJobCapResponse422Code
from .set_job_cap_response_429 import SetJobCapResponse429
from .set_job_cap_response_429_code import SetJobCapResponse429Code
from .set_job_cap_response_431 import SetJobCapResponse431
from .set_job_cap_response_431_code import SetJobCapResponse431Code
from .set_job_cap_response_500 import SetJobCapResponse500
from .set_job_cap_response_500_code import SetJobCapResponse500Code
from .set_job_cap_response_503 import SetJobCapResponse503
from .set_job_cap_response_503_code import SetJobCapResponse503Code
from .single_job_view import SingleJobView
from .single_job_view_kind import SingleJobViewKind
from .single_job_view_status import SingleJobViewStatus
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
    "CancelJobResponse400",
    "CancelJobResponse400Code",
    "CancelJobResponse401",
    "CancelJobResponse401Code",
    "CancelJobResponse403",
    "CancelJobResponse403Code",
    "CancelJobResponse404",
    "CancelJobResponse404Code",
    "CancelJobResponse409",
    "CancelJobResponse409Code",
    "CancelJobResponse414",
    "CancelJobResponse414Code",
    "CancelJobResponse431",
    "CancelJobResponse431Code",
    "CancelJobResponse500",
    "CancelJobResponse500Code",
    "CancelJobResponse503",
    "CancelJobResponse503Code",
    "Cap",
    "Cell",
    "ChildrenPage",
    "ChildrenPageStatusType1",
    "ChildrenPageStatusType2Type1",
    "ChildrenPageStatusType3Type1",
    "ChildrenPaging",
    "ChildSummary",
    "ChildSummaryStatus",
    "Counts",
    "CreateJobModel",
    "CreateJobPriority",
    "CreateJobResponse400",
    "CreateJobResponse400Code",
    "CreateJobResponse401",
    "CreateJobResponse401Code",
    "CreateJobResponse403",
    "CreateJobResponse403Code",
    "CreateJobResponse413",
    "CreateJobResponse413Code",
    "CreateJobResponse414",
    "CreateJobResponse414Code",
    "CreateJobResponse415",
    "CreateJobResponse415Code",
    "CreateJobResponse422",
    "CreateJobResponse422Code",
    "CreateJobResponse429",
    "CreateJobResponse429Code",
    "CreateJobResponse431",
    "CreateJobResponse431Code",
    "CreateJobResponse500",
    "CreateJobResponse500Code",
    "CreateJobResponse503",
    "CreateJobResponse503Code",
    "ErrorCode",
    "Event",
    "EventOperation",
    "EventOutcome",
    "Events",
    "EventStatus",
    "Fanout",
    "FanoutPriority",
    "FanoutWebhookEventsItem",
    "GetHealthResponse414",
    "GetHealthResponse414Code",
    "GetHealthResponse431",
    "GetHealthResponse431Code",
    "GetHealthResponse500",
    "GetHealthResponse500Code",
    "GetJobChildren",
    "GetJobResponse400",
    "GetJobResponse400Code",
    "GetJobResponse401",
    "GetJobResponse401Code",
    "GetJobResponse404",
    "GetJobResponse404Code",
    "GetJobResponse414",
    "GetJobResponse414Code",
    "GetJobResponse422",
    "GetJobResponse422Code",
    "GetJobResponse431",
    "GetJobResponse431Code",
    "GetJobResponse500",
    "GetJobResponse500Code",
    "GetJobResponse503",
    "GetJobResponse503Code",
    "GetReadinessResponse414",
    "GetReadinessResponse414Code",
    "GetReadinessResponse431",
    "GetReadinessResponse431Code",
    "GetReadinessResponse500",
    "GetReadinessResponse500Code",
    "GetReadinessResponse503",
    "GetReadinessResponse503Code",
    "GetResultAltoResponse400",
    "GetResultAltoResponse400Code",
    "GetResultAltoResponse401",
    "GetResultAltoResponse401Code",
    "GetResultAltoResponse404",
    "GetResultAltoResponse404Code",
    "GetResultAltoResponse409",
    "GetResultAltoResponse409Code",
    "GetResultAltoResponse414",
    "GetResultAltoResponse414Code",
    "GetResultAltoResponse431",
    "GetResultAltoResponse431Code",
    "GetResultAltoResponse500",
    "GetResultAltoResponse500Code",
    "GetResultAltoResponse503",
    "GetResultAltoResponse503Code",
    "GetResultHocrResponse400",
    "GetResultHocrResponse400Code",
    "GetResultHocrResponse401",
    "GetResultHocrResponse401Code",
    "GetResultHocrResponse404",
    "GetResultHocrResponse404Code",
    "GetResultHocrResponse409",
    "GetResultHocrResponse409Code",
    "GetResultHocrResponse414",
    "GetResultHocrResponse414Code",
    "GetResultHocrResponse431",
    "GetResultHocrResponse431Code",
    "GetResultHocrResponse500",
    "GetResultHocrResponse500Code",
    "GetResultHocrResponse503",
    "GetResultHocrResponse503Code",
    "GetResultMarkdownResponse400",
    "GetResultMarkdownResponse400Code",
    "GetResultMarkdownResponse401",
    "GetResultMarkdownResponse401Code",
    "GetResultMarkdownResponse404",
    "GetResultMarkdownResponse404Code",
    "GetResultMarkdownResponse409",
    "GetResultMarkdownResponse409Code",
    "GetResultMarkdownResponse414",
    "GetResultMarkdownResponse414Code",
    "GetResultMarkdownResponse431",
    "GetResultMarkdownResponse431Code",
    "GetResultMarkdownResponse500",
    "GetResultMarkdownResponse500Code",
    "GetResultMarkdownResponse503",
    "GetResultMarkdownResponse503Code",
    "GetResultPdfOptimize",
    "GetResultPdfOutputType",
    "GetResultPdfResponse202",
    "GetResultPdfResponse202Status",
    "GetResultPdfResponse400",
    "GetResultPdfResponse400Code",
    "GetResultPdfResponse401",
    "GetResultPdfResponse401Code",
    "GetResultPdfResponse404",
    "GetResultPdfResponse404Code",
    "GetResultPdfResponse409",
    "GetResultPdfResponse409Code",
    "GetResultPdfResponse414",
    "GetResultPdfResponse414Code",
    "GetResultPdfResponse422",
    "GetResultPdfResponse422Code",
    "GetResultPdfResponse431",
    "GetResultPdfResponse431Code",
    "GetResultPdfResponse500",
    "GetResultPdfResponse500Code",
    "GetResultPdfResponse503",
    "GetResultPdfResponse503Code",
    "GetResultResponse400",
    "GetResultResponse400Code",
    "GetResultResponse401",
    "GetResultResponse401Code",
    "GetResultResponse404",
    "GetResultResponse404Code",
    "GetResultResponse409",
    "GetResultResponse409Code",
    "GetResultResponse414",
    "GetResultResponse414Code",
    "GetResultResponse431",
    "GetResultResponse431Code",
    "GetResultResponse500",
    "GetResultResponse500Code",
    "GetResultResponse503",
    "GetResultResponse503Code",
    "GetResultTableCsvResponse400",
    "GetResultTableCsvResponse400Code",
    "GetResultTableCsvResponse401",
    "GetResultTableCsvResponse401Code",
    "GetResultTableCsvResponse404",
    "GetResultTableCsvResponse404Code",
    "GetResultTableCsvResponse409",
    "GetResultTableCsvResponse409Code",
    "GetResultTableCsvResponse414",
    "GetResultTableCsvResponse414Code",
    "GetResultTableCsvResponse431",
    "GetResultTableCsvResponse431Code",
    "GetResultTableCsvResponse500",
    "GetResultTableCsvResponse500Code",
    "GetResultTableCsvResponse503",
    "GetResultTableCsvResponse503Code",
    "GetUsageGranularity",
    "GetUsageResponse400",
    "GetUsageResponse400Code",
    "GetUsageResponse401",
    "GetUsageResponse401Code",
    "GetUsageResponse403",
    "GetUsageResponse403Code",
    "GetUsageResponse414",
    "GetUsageResponse414Code",
    "GetUsageResponse422",
    "GetUsageResponse422Code",
    "GetUsageResponse431",
    "GetUsageResponse431Code",
    "GetUsageResponse500",
    "GetUsageResponse500Code",
    "GetUsageResponse503",
    "GetUsageResponse503Code",
    "Group",
    "Job",
    "JobList",
    "JobModel",
    "JobOptions",
    "JobPriority",
    "JobSummary",
    "JobSummaryKind",
    "JobSummaryStatus",
    "JobUsage",
    "JobWebhookEventsItem",
    "Line",
    "LineSource",
    "ListChildrenResponse400",
    "ListChildrenResponse400Code",
    "ListChildrenResponse401",
    "ListChildrenResponse401Code",
    "ListChildrenResponse404",
    "ListChildrenResponse404Code",
    "ListChildrenResponse414",
    "ListChildrenResponse414Code",
    "ListChildrenResponse422",
    "ListChildrenResponse422Code",
    "ListChildrenResponse431",
    "ListChildrenResponse431Code",
    "ListChildrenResponse500",
    "ListChildrenResponse500Code",
    "ListChildrenResponse503",
    "ListChildrenResponse503Code",
    "ListChildrenStatus",
    "ListJobEventsResponse400",
    "ListJobEventsResponse400Code",
    "ListJobEventsResponse401",
    "ListJobEventsResponse401Code",
    "ListJobEventsResponse404",
    "ListJobEventsResponse404Code",
    "ListJobEventsResponse414",
    "ListJobEventsResponse414Code",
    "ListJobEventsResponse429",
    "ListJobEventsResponse429Code",
    "ListJobEventsResponse431",
    "ListJobEventsResponse431Code",
    "ListJobEventsResponse500",
    "ListJobEventsResponse500Code",
    "ListJobEventsResponse503",
    "ListJobEventsResponse503Code",
    "ListJobsKind",
    "ListJobsResponse400",
    "ListJobsResponse400Code",
    "ListJobsResponse401",
    "ListJobsResponse401Code",
    "ListJobsResponse414",
    "ListJobsResponse414Code",
    "ListJobsResponse422",
    "ListJobsResponse422Code",
    "ListJobsResponse431",
    "ListJobsResponse431Code",
    "ListJobsResponse500",
    "ListJobsResponse500Code",
    "ListJobsResponse503",
    "ListJobsResponse503Code",
    "ListJobsStatus",
    "ListModelsResponse400",
    "ListModelsResponse400Code",
    "ListModelsResponse401",
    "ListModelsResponse401Code",
    "ListModelsResponse414",
    "ListModelsResponse414Code",
    "ListModelsResponse431",
    "ListModelsResponse431Code",
    "ListModelsResponse500",
    "ListModelsResponse500Code",
    "MergedChild",
    "MergedChildStatus",
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
    "ParentViewStatus",
    "Problem",
    "ProblemCode",
    "ProblemErrors",
    "ProblemLimit",
    "Result",
    "Retry",
    "RetryJobResponse400",
    "RetryJobResponse400Code",
    "RetryJobResponse401",
    "RetryJobResponse401Code",
    "RetryJobResponse403",
    "RetryJobResponse403Code",
    "RetryJobResponse404",
    "RetryJobResponse404Code",
    "RetryJobResponse409",
    "RetryJobResponse409Code",
    "RetryJobResponse413",
    "RetryJobResponse413Code",
    "RetryJobResponse414",
    "RetryJobResponse414Code",
    "RetryJobResponse415",
    "RetryJobResponse415Code",
    "RetryJobResponse422",
    "RetryJobResponse422Code",
    "RetryJobResponse429",
    "RetryJobResponse429Code",
    "RetryJobResponse431",
    "RetryJobResponse431Code",
    "RetryJobResponse500",
    "RetryJobResponse500Code",
    "RetryJobResponse503",
    "RetryJobResponse503Code",
    "Run",
    "SetJobCapResponse400",
    "SetJobCapResponse400Code",
    "SetJobCapResponse401",
    "SetJobCapResponse401Code",
    "SetJobCapResponse403",
    "SetJobCapResponse403Code",
    "SetJobCapResponse404",
    "SetJobCapResponse404Code",
    "SetJobCapResponse409",
    "SetJobCapResponse409Code",
    "SetJobCapResponse413",
    "SetJobCapResponse413Code",
    "SetJobCapResponse414",
    "SetJobCapResponse414Code",
    "SetJobCapResponse415",
    "SetJobCapResponse415Code",
    "SetJobCapResponse422",
    "SetJobCapResponse422Code",
    "SetJobCapResponse429",
    "SetJobCapResponse429Code",
    "SetJobCapResponse431",
    "SetJobCapResponse431Code",
    "SetJobCapResponse500",
    "SetJobCapResponse500Code",
    "SetJobCapResponse503",
    "SetJobCapResponse503Code",
    "SingleJobView",
    "SingleJobViewKind",
    "SingleJobViewStatus",
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
