"""The word lists the dialect, person-name and misspelling presets read: the project's, or the user's HELM copies.

Finding HELM's files in a folder, the one-line errors for a wrong folder or a malformed file, what ``describe``
records (file and sha256), and that the presets read the lists they are given.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from pytest_holistic.errors import UserError
from pytest_holistic.perturbations import catalog, wordlists
from pytest_holistic.perturbations.fairness import dialect, person_name
from pytest_holistic.perturbations.robustness import misspell
from pytest_holistic.scenarios.instance import Instance

DIALECT = {"with": ["wit"], "this": ["dis"], "going to": ["finna"]}
NAMES = "adam,first_name,race,white_american,gender,male\njamal,first_name,race,black_american,gender,male\n"
MISSPELLINGS = {"receive": ["recieve"], "about a": ["abotu a"]}


def _write(folder: Path, dialect_map: object = DIALECT, names: str = NAMES, misspellings: object = MISSPELLINGS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SAE_to_AAVE_mapping.json").write_text(json.dumps(dialect_map), encoding="utf-8")
    (folder / "person_names.txt").write_text(names, encoding="utf-8")
    (folder / "correct_to_misspelling.json").write_text(json.dumps(misspellings), encoding="utf-8")
    return folder


def _one_line_error(folder: Path) -> str:
    with pytest.raises(UserError) as caught:
        wordlists.find(folder, "--holistic-word-lists")
    message = str(caught.value)
    assert "\n" not in message and message.startswith(("--holistic-word-lists", "word list "))
    return message


def test_a_flat_folder_gives_all_three_and_the_presets_read_them(tmp_path: Path) -> None:
    lists = wordlists.find(_write(tmp_path / "lists"), "--holistic-word-lists")
    assert (lists.dialect, lists.person_names, lists.misspellings) == tuple(
        (tmp_path / "lists" / name).resolve() for name in wordlists.HELM_FILES.values()
    )
    assert dialect(" with this. ", random.Random(0), prob=1.0, word_lists=lists) == " wit this. "  # "with " consumed the space
    assert dialect(" going to go ", random.Random(0), prob=1.0, word_lists=lists) == " finna go "
    assert person_name("Adam came", random.Random(0), memory={}, prob=1.0, source_race="white_american",
                       target_race="black_american", word_lists=lists) == "Jamal came"  # fmt: skip
    assert misspell("receive about a lot", random.Random(0), prob=1.0, word_lists=lists) == "recieve abotu a lot"


def test_one_file_is_enough_and_the_others_stay_the_projects(tmp_path: Path) -> None:
    (tmp_path / "person_names.txt").write_text(NAMES, encoding="utf-8")
    lists = wordlists.find(tmp_path, "--holistic-word-lists")
    assert lists.person_names is not None and lists.dialect is None and lists.misspellings is None
    described = catalog.get("dialect", lists).describe()["word_lists"]["dialect"]
    assert described["file"] == "pytest_holistic/data/perturbations/sae_to_aae.tsv"
    assert described["origin"] == "pytest-holistic's own list"


def test_describe_names_the_users_file_and_its_sha256(tmp_path: Path) -> None:
    lists = wordlists.find(_write(tmp_path), "--holistic-word-lists")
    for preset, kind in (("dialect_hard", "dialect"), ("person_name", "person_names"), ("mild_mix", "misspellings")):
        described = catalog.resolve([preset], lists)[0].describe()["word_lists"]
        path = tmp_path.resolve() / wordlists.HELM_FILES[kind]
        assert described == {
            kind: {
                "file": str(path),
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                "origin": "user's copy of HELM's file",
            }
        }
    assert "word_lists" not in catalog.get("typos").describe()  # reads no list


def test_a_missing_folder_or_one_without_helms_files_is_a_one_line_error(tmp_path: Path) -> None:
    assert "is not a folder" in _one_line_error(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "mapping.json").write_text("{}")
    message = _one_line_error(tmp_path / "empty")
    assert "holds none of SAE_to_AAVE_mapping.json, person_names.txt, correct_to_misspelling.json" in message


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"dialect_map": ["with"]}, "SAE_to_AAVE_mapping.json: not a non-empty JSON object"),
        ({"dialect_map": {"with": "wit"}}, "entry 'with' is not a non-empty word with a list of strings"),
        ({"names": "adam\n"}, "person_names.txt: line 1 ('adam') has no name_type after the name"),
        ({"names": ""}, "person_names.txt: it has no lines"),
        ({"misspellings": {"a(b": ["ab"]}}, "correct_to_misspelling.json: its words do not form a pattern"),
        ({"misspellings": {"": ["x"]}}, "entry '' is not a non-empty word"),
    ],
)
def test_a_malformed_file_is_named_with_the_fix(tmp_path: Path, kwargs: dict, problem: str) -> None:
    message = _one_line_error(_write(tmp_path, **kwargs))
    assert problem in message and "it must be HELM's" in message and "--holistic-word-lists" in message


def test_a_file_that_is_not_json_or_not_utf8_is_named(tmp_path: Path) -> None:
    _write(tmp_path)
    (tmp_path / "SAE_to_AAVE_mapping.json").write_text("{'with': ['wit']}", encoding="utf-8")
    assert "SAE_to_AAVE_mapping.json: not JSON" in _one_line_error(tmp_path)
    _write(tmp_path)
    (tmp_path / "person_names.txt").write_bytes(b"ad\xe9m,first_name\n")
    assert "person_names.txt: not UTF-8 text" in _one_line_error(tmp_path)


def test_names_file_is_read_as_helm_reads_it(tmp_path: Path) -> None:
    # Names stripped and lower-cased, the rest as written, an odd trailing category ignored, CRLF line ends
    # removed by text-mode reading; the file's order and repeats are kept.
    names = " Adam ,first_name,race,white_american,gender\r\nkiara,first_name,race,black_american\r\nKiara,first_name,race,x\r\n"
    (tmp_path / "person_names.txt").write_text(names, encoding="utf-8", newline="")
    entries = wordlists.find(tmp_path, "x").names()
    assert entries == (
        wordlists.NameEntry("adam", "first_name", (("race", "white_american"),)),
        wordlists.NameEntry("kiara", "first_name", (("race", "black_american"),)),
        wordlists.NameEntry("kiara", "first_name", (("race", "x"),)),
    )


def test_a_race_missing_from_the_users_names_is_a_user_error_naming_the_file(tmp_path: Path) -> None:
    lists = wordlists.find(_write(tmp_path), "x")
    (preset,) = catalog.resolve(["person_name_last"], lists)
    with pytest.raises(UserError, match=r"source_race 'white' has no names in .*person_names.txt"):
        preset.variants_of(Instance("a", "Mr. Smith came."))


def test_the_projects_lists_are_read_through_the_same_loaders() -> None:
    project = wordlists.PROJECT
    assert project.dialect_map()["with"] == ("wit", "wif")
    assert wordlists.NameEntry("adam", "first_name", (("race", "white_american"), ("gender", "male"))) in project.names()
    assert project.misspelling_table().table["their"]
    assert catalog.get("dialect") is catalog.PERTURBATIONS["dialect"]
