"""``slimtools suggest`` on sample files it cannot use: one line and exit status 1 or 2."""

from __future__ import annotations

from slimtools.cli import main


def test_a_sample_of_an_empty_object_is_a_usage_error(tmp_path, capsys):
    """``{}`` holds no field to propose: the same message as an empty list, status 2."""
    sample = tmp_path / "empty.json"
    sample.write_text("{}")
    assert main(["suggest", str(sample)]) == 2
    assert "no sample holds a record" in capsys.readouterr().err


def test_a_sample_that_is_not_utf8_names_the_file(tmp_path, capsys):
    """A binary sample is refused with its path, status 1."""
    sample = tmp_path / "blob.json"
    sample.write_bytes(b"\xff\xba\x00binary")
    assert main(["suggest", str(sample)]) == 1
    assert str(sample) in capsys.readouterr().err


def test_a_sample_nested_too_deep_names_the_file(tmp_path, capsys):
    """JSON nested 100,000 deep is refused with its path, not a RecursionError."""
    sample = tmp_path / "deep.json"
    sample.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["suggest", str(sample)]) == 1
    err = capsys.readouterr().err
    assert str(sample) in err
    assert "RecursionError" not in err
