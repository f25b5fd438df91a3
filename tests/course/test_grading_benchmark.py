"""The grading benchmark (benchmarks/grade_class.py) run end to end on a tiny class: two students
graded on two of the course's notebooks by the real grader, and the term run on the result."""
import pytest


@pytest.mark.notebooks
def test_the_grading_benchmark_runs_on_a_tiny_class(tmp_path, capsys):
    pytest.importorskip("nbgrader")
    import json

    from benchmarks.grade_class import main
    record = tmp_path / "run.json"
    main(["--students", "2", "--notebooks", "00_welcome", "01_derivatives", "--jobs", "2",
          "--json", str(record), "--jobs-log", str(tmp_path / "jobs.jsonl")])
    out = capsys.readouterr().out
    assert "class: 1 honest, 1 partial" in out
    assert "jobs per minute per core" in out and "projection: 300 students x 2 notebooks on 64" \
        " cores" in out
    assert "term (late, manual, export, similarity, report)" in out
    data = json.loads(record.read_text())
    assert data["jobs_run"] == 4 + data["canary_jobs"] and len(data["job_seconds"]) == 4
    assert data["statuses"].get("partial", 0) + data["statuses"].get("failed", 0) > 0
    lines = (tmp_path / "jobs.jsonl").read_text().splitlines()
    assert len(lines) == 4 + (1 if data["canary_jobs"] else 0)
