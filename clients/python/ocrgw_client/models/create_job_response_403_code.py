from enum import StrEnum


class CreateJobResponse403Code(StrEnum):
    CROSS_SITE_REQUEST = "cross_site_request"
    INTERACTIVE_NOT_ALLOWED = "interactive_not_allowed"
    ON_PREM_REQUIRED = "on_prem_required"

    def __str__(self) -> str:
        return str(self.value)
