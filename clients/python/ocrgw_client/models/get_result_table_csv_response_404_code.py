from enum import StrEnum


class GetResultTableCsvResponse404Code(StrEnum):
    JOB_NOT_FOUND = "job_not_found"
    TABLE_NOT_FOUND = "table_not_found"

    def __str__(self) -> str:
        return str(self.value)
