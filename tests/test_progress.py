"""The progress bar (tqdm): when it shows, what it counts, and the CLI's default."""

from __future__ import annotations

from sinkproof import progress
from sinkproof.progress import Progress


def test_a_forced_bar_counts_and_shows_its_label_and_note(capsys):
    with Progress(4, "sink map", enabled=True) as bar:
        for _ in range(4):
            bar.update(1, note="t=3")
    err = capsys.readouterr().err
    assert bar.done == 4 and "sink map" in err and "t=3" in err and "4/4" in err


def test_small_work_off_a_terminal_draws_nothing(capsys):
    with Progress(10, "evaluate") as bar:
        bar.update(10)
    assert bar.done == 10 and not bar.enabled and capsys.readouterr().err == ""


def test_the_default_decides_when_the_caller_does_not(capsys):
    try:
        progress.set_default(True)
        assert Progress(1, "x").enabled and not Progress(1, "x", enabled=False).enabled
        progress.set_default(False)
        assert not Progress(1e9, "x").enabled and Progress(1, "x", enabled=True).enabled
    finally:
        progress.set_default(None)
    capsys.readouterr()
