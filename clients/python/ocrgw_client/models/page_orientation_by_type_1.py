from enum import StrEnum


class PageOrientationByType1(StrEnum):
    CLASSIFIER = "classifier"
    OSD = "osd"

    def __str__(self) -> str:
        return str(self.value)
