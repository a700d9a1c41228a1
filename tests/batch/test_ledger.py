"""Incremental batches: what makes a shot's input key change, and when its output is current."""

from __future__ import annotations

import zipfile
from dataclasses import replace

from waft.batch import BakeSettings, Shot
from waft.batch.ledger import Ledger, extension_identity, file_sha256, input_key

MANIFEST = 'schema_version = "1.0.0"\nid = "waft"\nversion = "0.1.0"\n'


def _zip(path, core_text: str, date=(2026, 1, 1, 0, 0, 0)):
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in (("blender_manifest.toml", MANIFEST), ("core/a.py", core_text)):
            zf.writestr(zipfile.ZipInfo(name, date_time=date), text)
    return path


def test_extension_identity_is_the_files_not_the_zip_timestamps(tmp_path):
    one = extension_identity(_zip(tmp_path / "1.zip", "x = 1"))
    rebuilt = extension_identity(_zip(tmp_path / "2.zip", "x = 1", date=(2026, 5, 5, 5, 5, 5)))
    changed = extension_identity(_zip(tmp_path / "3.zip", "x = 2"))
    assert one == rebuilt != changed
    assert one.startswith("waft 0.1.0 ")


def test_input_key_depends_on_everything_the_result_depends_on(tmp_path):
    blend = tmp_path / "sh010.blend"
    blend.write_bytes(b"BLENDER")
    shot = Shot(blend)
    base = {"blend_sha256": "a" * 64, "shot": shot, "settings": BakeSettings(),
            "extension": "waft 0.1.0 x", "python": ""}
    key = input_key(**base)
    assert input_key(**base) == key
    variants = [{"blend_sha256": "b" * 64}, {"shot": replace(shot, frames=(1, 2))},
                {"shot": replace(shot, objects=("Rig",))}, {"shot": replace(shot, scene="S")},
                {"settings": BakeSettings(substep_rate=480.0)},
                {"settings": BakeSettings(preroll=3)}, {"settings": BakeSettings(iterations=9)},
                {"extension": "waft 0.1.0 y"}, {"python": "/opt/py/bin/python"}]
    keys = {input_key(**{**base, **v}) for v in variants}
    assert key not in keys and len(keys) == len(variants)


def test_ledger_current_only_while_the_output_is_the_one_written(tmp_path):
    output = tmp_path / "out" / "sh010.blend"
    output.parent.mkdir()
    output.write_bytes(b"baked")
    path = tmp_path / "state" / "ledger.json"
    ledger = Ledger(path)
    assert not ledger.is_current("sh010", "k", output)
    ledger.record("sh010", key="k", output=output, output_sha256=file_sha256(output),
                  result={"bones": 3})
    reread = Ledger(path)  # persisted, atomically (no .part left)
    assert reread.is_current("sh010", "k", output)
    assert not reread.is_current("sh010", "other key", output)
    assert not list(path.parent.glob("*.part"))
    output.write_bytes(b"edited by hand")
    assert not reread.is_current("sh010", "k", output)
    output.unlink()
    assert not reread.is_current("sh010", "k", output)


def test_file_sha256_reads_in_chunks(tmp_path, monkeypatch):
    import hashlib

    import waft.batch.ledger as ledger

    monkeypatch.setattr(ledger, "CHUNK", 7)
    data = bytes(range(256)) * 3
    (tmp_path / "f").write_bytes(data)
    assert ledger.file_sha256(tmp_path / "f") == hashlib.sha256(data).hexdigest()
