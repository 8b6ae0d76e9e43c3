"""A block's lines joined into a paragraph, words hyphenated at a line's end joined back when known."""

import pytest

from documents.layout import paragraphs
from documents.layout.paragraphs import join, words_of


def test_lines_are_joined_with_spaces():
    assert (
        join(["The files created by", "update-mime-database are:", ""])
        == "The files created by update-mime-database are:"
    )


def test_a_word_the_dictionary_knows_is_joined_back():
    assert paragraphs.DICTIONARY.is_file(), "scripts/setup.sh installs wamerican"
    assert join(["For exam-", "ple, a file"]) == "For example, a file"
    assert join(["all the infor-", "mation in them."]) == "all the information in them."


def test_a_compound_neither_knows_keeps_its_hyphen_and_no_space():
    assert join(["a self-", "contained page"]) == "a self-contained page"
    assert join(["the mime-", "type node"]) == "the mime-type node"


def test_a_word_the_document_knows_is_joined_back_though_no_dictionary_has_it():
    document = words_of(["Each mimetype node may contain any combination of elements."])
    assert "mimetype" in document
    assert join(["each mime-", "type of it"], document) == "each mimetype of it"
    assert join(["each mime-", "type of it"]) == "each mime-type of it"


def test_a_hyphen_before_a_capital_or_a_number_keeps_its_hyphen_and_no_space():
    assert join(["the shared-", "MIME database"]) == "the shared-MIME database"
    assert join(["pages 3-", "7 of it"]) == "pages 3-7 of it"


def test_a_dash_set_apart_is_not_a_hyphen():
    assert join(["the database -", "not the files"]) == "the database - not the files"


def test_a_soft_hyphen_counts_as_a_hyphen():
    assert join(["a data\u00ad", "base of types"]) == "a database of types"


def test_without_a_dictionary_only_the_document_counts(monkeypatch: pytest.MonkeyPatch, tmp_path):
    monkeypatch.setattr(paragraphs, "DICTIONARY", tmp_path / "missing")
    monkeypatch.setattr(paragraphs, "dictionary", paragraphs.LoadedOnce(paragraphs._load_dictionary))
    assert join(["For exam-", "ple"]) == "For exam-ple"
    assert join(["For exam-", "ple"], frozenset({"example"})) == "For example"
