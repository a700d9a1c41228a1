"""The shot list: .blend paths, text and JSON lists, per-shot frames/objects, clear errors."""

from __future__ import annotations

import json

import pytest

from waft.batch import BatchError, Shot, read_shots


@pytest.fixture
def blends(tmp_path):
    for name in ("sh010", "sh020", "sh030"):
        (tmp_path / "shots").mkdir(exist_ok=True)
        (tmp_path / "shots" / f"{name}.blend").write_bytes(b"BLENDER")
    return tmp_path / "shots"


def test_text_list_frames_objects_comments_and_quoting(blends, tmp_path):
    (blends / "my shot.blend").write_bytes(b"BLENDER")
    listing = tmp_path / "shots.txt"
    listing.write_text("# delivery 3\n"
                       "shots/sh010.blend\n"
                       "\n"
                       "shots/sh020.blend 101 148   # the chase\n"
                       "shots/sh030.blend -5 96 Hero Hero_hair\n"
                       "'shots/my shot.blend'\n")
    shots = read_shots([listing])
    assert [s.name for s in shots] == ["sh010", "sh020", "sh030", "my shot"]
    assert shots[0].frames is None and shots[0].objects is None
    assert shots[1].frames == (101, 148)
    assert shots[2].frames == (-5, 96) and shots[2].objects == ("Hero", "Hero_hair")
    assert shots[0].blend == (blends / "sh010.blend").resolve()  # relative to the list file


def test_json_list_and_defaults_for_shots_that_say_nothing(blends, tmp_path):
    listing = tmp_path / "list.json"
    listing.write_text(json.dumps([
        "shots/sh010.blend",
        {"blend": "shots/sh020.blend", "frames": [10, 20], "objects": ["Cape"],
         "name": "sh020_cape", "scene": "Layout"}]))
    shots = read_shots([listing, blends / "sh030.blend"], frames=(1, 5), objects=["Rig"])
    by_name = {s.name: s for s in shots}
    assert by_name["sh010"].frames == (1, 5) and by_name["sh010"].objects == ("Rig",)
    assert by_name["sh020_cape"].frames == (10, 20) and by_name["sh020_cape"].objects == ("Cape",)
    assert by_name["sh020_cape"].scene == "Layout"
    assert by_name["sh030"].frames == (1, 5)


@pytest.mark.parametrize(("content", "message"), [
    ("shots/nope.blend\n", "does not exist"),
    ("shots/sh010.blend 12\n", "two numbers"),
    ("shots/sh010.blend 20 10\n", "ends before it starts"),
    ("shots/sh010.blend\nshots/sh010.blend 1 2\n", "two shots are named 'sh010'"),
])
def test_bad_lists_name_the_problem(blends, tmp_path, content, message):
    listing = tmp_path / "shots.txt"
    listing.write_text(content)
    with pytest.raises(BatchError, match=message):
        read_shots([listing])


def test_bad_json_and_missing_list(tmp_path):
    listing = tmp_path / "shots.json"
    listing.write_text('[{"blend": "a.blend", "frame": [1, 2]}]')
    with pytest.raises(BatchError, match="unknown key"):
        read_shots([listing])
    listing.write_text("{not json")
    with pytest.raises(BatchError, match="not valid JSON"):
        read_shots([listing])
    with pytest.raises(BatchError, match="no such shot list"):
        read_shots([tmp_path / "missing.txt"])
    with pytest.raises(BatchError, match="no shots"):
        read_shots([])


def test_shot_objects_given_directly(blends):
    shot = Shot(blends / "sh010.blend", frames=(3, 4), objects=["A"])
    assert read_shots([shot]) == [shot]
    assert shot.objects == ("A",) and shot.name == "sh010"
