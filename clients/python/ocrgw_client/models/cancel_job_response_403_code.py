from enum import StrEnum


class CancelJobResponse403Code(StrEnum):
    CROSS_SITE_REQUEST = "cross_site_request"
    ON_PREM_REQUIRED = "on_prem_required"

    def __str__(self) -> str:
        return str(self.value)
