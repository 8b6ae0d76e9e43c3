from enum import StrEnum


class LineSource(StrEnum):
    TEXT_LAYER = "text_layer"

    def __str__(self) -> str:
        return str(self.value)
