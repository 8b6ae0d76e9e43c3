from enum import StrEnum


class CreateJobModel(StrEnum):
    ECHO = "echo"
    PADDLEOCR = "paddleocr"
    TESSERACT = "tesseract"

    def __str__(self) -> str:
        return str(self.value)
