"""A searchable PDF's variants: each has one name, and a value that names none is refused where it is made."""

from __future__ import annotations

import pytest

from jobs.pdf_outputs import ALL_OUTPUTS, DEFAULT_OUTPUT, PdfOutput


def test_every_variant_is_found_again_by_its_name():
    assert [PdfOutput.named(output.name) for output in ALL_OUTPUTS] == list(ALL_OUTPUTS)
    assert DEFAULT_OUTPUT.name == "pdf"


@pytest.mark.parametrize("optimize", [1.0, True, "1", 3, -1])
def test_an_optimisation_level_that_is_not_0_1_or_2_as_an_integer_is_refused(optimize):
    # 1.0 would be "pdf-o1.0": a name no worker builds, and a PDF asked for again and again.
    with pytest.raises(ValueError):
        PdfOutput(optimize=optimize)


def test_a_jobs_options_with_a_float_level_give_way_to_the_query():
    with pytest.raises(ValueError):
        PdfOutput.of_options({"optimize": 1.0})
    assert PdfOutput.of_options({"optimize": 1.0}, optimize=2) == PdfOutput(optimize=2)
