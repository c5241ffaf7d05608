"""The Python package against the CLI it wraps (pytest; run by //python:python_test).

Environment (set by python_test.sh): ZIONSIM_BIN, the zionsim binary of the
same build; ZIONSIM_TESTDATA, the repository root in the runfiles.
"""

import csv
import io
import json
import math
import os
import signal
import subprocess
import threading
import time

import pandas as pd
import pytest

import zionsim

BIN = os.environ["ZIONSIM_BIN"]
ROOT = os.environ["ZIONSIM_TESTDATA"]


def cli(*args):
    done = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, check=True)
    return done.stdout


def test_whatif_frame_is_the_cli_json_with_the_csv_columns():
    frame = zionsim.whatif(model="dlrm-a-small", nodes=[1, 2], nic_gbit=[200, 400])
    document = json.loads(cli("whatif", "--model", "dlrm-a-small", "--nodes", "1,2", "--vary", "nic-gbit=200,400",
                              "--format", "json"))
    header = next(csv.reader(io.StringIO(cli("whatif", "--model", "dlrm-a-small", "--nodes", "1,2", "--vary",
                                             "nic-gbit=200,400", "--format", "csv"))))
    assert list(frame.columns) == header
    assert len(frame) == len(document["results"]) == 4
    for (_, row), result in zip(frame.iterrows(), document["results"]):
        assert row["nic-gbit"] == result["variant"]["nic-gbit"]
        assert row["nodes"] == result["nodes"]
        # Identical numbers, not close ones: the same code ran.
        assert row["iteration_time_ms"] == result["iteration_time_ms"]
        assert row["samples_per_s"] == result["samples_per_s"]
        assert row["exposed_all_to_all_ms"] == result["breakdown_ms"]["exposed_all_to_all"]
        assert row["bottleneck"] == result["bottleneck"]


def test_whatif_without_knobs_has_no_comparison_column_and_keeps_the_json():
    frame = zionsim.whatif(model="dlrm-a-small", nodes=1)
    assert "throughput_vs_first_variant" not in frame.columns
    assert list(frame.columns)[:2] == ["nodes", "gpus"]
    assert frame.attrs["json"]["model"]
    assert "..." not in repr(frame)  # printed whole


def test_size_that_does_not_fit_has_nan_times_and_its_reason():
    frame = zionsim.whatif(model="dlrm-a", nodes=1)
    assert not frame.loc[0, "fits"]
    assert math.isnan(frame.loc[0, "iteration_time_ms"])
    assert "fit" in frame.loc[0, "bottleneck"] or "HBM" in frame.loc[0, "bottleneck"]


def test_collective_frame_is_the_cli_json():
    frame = zionsim.collective(op="all_to_all", nodes=2, algorithms=["direct", "nccl_p2p"], min_bytes="64K",
                               max_bytes="256K", step_factor=4)
    document = json.loads(cli("collective", "--op", "all_to_all", "--nodes", 2, "--algo", "direct", "--algo",
                              "nccl_p2p", "-b", "64K", "-e", "256K", "-f", 4, "--format", "json"))
    assert frame.to_dict("records") == document["results"]
    # docs/network_model.md's table: 64 KiB on 2 nodes, 10.64 us direct, 11.07 us nccl_p2p.
    first = frame[frame["size_bytes"] == 65536].set_index("algorithm")["time_us"]
    assert round(first["direct"], 2) == 10.64 and round(first["nccl_p2p"], 2) == 11.07


def test_run_replays_a_trace_as_the_cli_does():
    trace = os.path.join(ROOT, "workloads/testdata/two_ranks.trace.json")
    frame = zionsim.run(trace)
    document = json.loads(cli("run", "--trace", trace, "--format", "json"))
    assert len(frame) == 1
    assert frame.attrs["json"] == document


def test_bad_model_raises_input_error_naming_the_flag():
    with pytest.raises(zionsim.InputError) as caught:
        zionsim.whatif(model="dlrm-z", nodes=1)
    assert caught.value.file == "--model"
    assert "unknown model 'dlrm-z'" in caught.value.message


def test_bad_cluster_file_raises_input_error_with_file_and_pointer(tmp_path):
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"schema_version": 1, "preset": "zionex", "nodes": 2,
                                "nic": {"bandwidth_gbit_per_s": -5}}))
    with pytest.raises(zionsim.InputError) as caught:
        zionsim.whatif(model="dlrm-a-small", cluster=str(path))
    error = caught.value
    assert error.file == str(path)
    assert error.pointer == "/nic/bandwidth_gbit_per_s"
    assert error.problems and error.message == error.problems[0].message


def test_unknown_knob_and_bad_value_raise_input_error():
    with pytest.raises(zionsim.InputError) as caught:
        zionsim.whatif(model="dlrm-a-small", nodes=1, nic_gibit=400)
    assert "unknown knob 'nic-gibit'" in caught.value.message
    with pytest.raises(zionsim.InputError):
        zionsim.whatif(model="dlrm-a-small", nodes=1, fidelity="exact")
    with pytest.raises(ValueError):
        zionsim.whatif(model="dlrm-a-small", nodes=1, hbm_reserve=float("nan"))


def test_bad_flag_raises_input_error_with_the_cli_message():
    with pytest.raises(zionsim.InputError) as caught:
        zionsim.command(["whatif", "--nodez", "2"])
    assert "--nodez" in str(caught.value)


def test_threads_give_identical_frames():
    one = zionsim.whatif(model="dlrm-a-small", nodes=[1, 2, 4], threads=1)
    two = zionsim.whatif(model="dlrm-a-small", nodes=[1, 2, 4], threads=2)
    pd.testing.assert_frame_equal(one, two, check_exact=True)


def test_progress_goes_to_the_callback_and_its_exception_stops_the_run():
    lines = []
    zionsim.whatif(model="dlrm-a-small", nodes=[1, 2], nic_gbit=[100, 200, 400], progress=lines.append)
    assert any(line.startswith("whatif: ") and " done (" in line for line in lines), lines

    def fail(line):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        zionsim.whatif(model="dlrm-a-small", nodes=[1, 2], nic_gbit=[100, 200, 400], progress=fail)
    # The package still works afterwards.
    assert len(zionsim.whatif(model="dlrm-a-small", nodes=1)) == 1


def test_progress_true_drives_a_tqdm_bar_when_tqdm_is_installed(monkeypatch, capsys):
    # A stand-in for tqdm (Debian's python3-tqdm is optional): the bar must
    # reach N of N points, and the other lines go above it.
    import sys
    import types

    bars = []

    class FakeTqdm:
        writes = []

        def __init__(self, total, unit, file):
            self.total, self.n, self.closed = total, 0, False
            bars.append(self)

        def update(self, k):
            self.n += k

        def close(self):
            self.closed = True

        @classmethod
        def write(cls, line, file=None):
            cls.writes.append(line)

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeTqdm))
    zionsim.whatif(model="dlrm-a-small", nodes=[1, 2], nic_gbit=[100, 200, 400], progress=True)
    assert len(bars) == 1 and bars[0].total == 6 and bars[0].n == 6 and bars[0].closed
    # Without tqdm, progress=True prints the lines to stderr.
    monkeypatch.setitem(sys.modules, "tqdm", None)
    zionsim.whatif(model="dlrm-a-small", nodes=[1, 2], nic_gbit=[100, 200, 400], progress=True)
    assert "whatif: " in capsys.readouterr().err


def test_ctrl_c_stops_a_run_and_the_next_one_runs():
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            zionsim.whatif(model="dlrm-a", nodes=[8, 16, 24, 32], threads=1)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 60
    assert len(zionsim.whatif(model="dlrm-a-small", nodes=1)) == 1


def test_a_frame_prints_the_cli_table_and_a_derived_one_prints_as_a_frame():
    frame = zionsim.whatif(model="dlrm-a-small", nodes=[1, 2], nic_gbit=[200, 400])
    table = cli("whatif", "--model", "dlrm-a-small", "--nodes", "1,2", "--vary", "nic-gbit=200,400")
    assert repr(frame) == table.rstrip("\n")
    assert str(frame) == table.rstrip("\n")  # print(frame)
    derived = frame[frame["nodes"] == 2]
    assert repr(derived) == derived.to_string()
    assert "| exp a2a" not in repr(derived)


def test_scenario_is_the_clis_scenario(tmp_path):
    s = zionsim.Scenario(model="dlrm-a-small", nodes=[1, 2], embeddings="unfused", nic_gbit=400)
    assert s["model"] == "dlrm-a-small" and s["nodes"] == [1, 2] and s["fused_embeddings"] is False
    # The CLI writes the same scenario, with the same hash, for the same settings.
    emitted = tmp_path / "emitted.json"
    cli("whatif", "--model", "dlrm-a-small", "--nodes", "1,2", "--unfused", "--nic-gbit", 400, "--format", "csv",
        "--emit-scenarios", emitted)
    entry = json.loads(emitted.read_text())["scenarios"][0]
    assert s.key() == entry["hash"]
    assert s.to_dict() == entry["scenario"]
    # JSON round trip, from text, a dict or a file; a changed copy differs.
    assert zionsim.Scenario.from_json(s.to_json()) == s
    assert zionsim.Scenario.from_json(entry["scenario"]).key() == s.key()
    path = tmp_path / "s.json"
    s.save(str(path))
    assert zionsim.Scenario.load(str(path)) == s
    faster = s.set(nic_gbit=800)
    assert faster != s and faster.key() != s.key() and s["cluster"]["set"] == ["nic.bandwidth_gbit_per_s=400"]


def test_scenario_runs_as_whatif_does_and_sweeps():
    s = zionsim.Scenario(model="dlrm-a-small", nodes=[1, 2])
    direct = zionsim.whatif(model="dlrm-a-small", nodes=[1, 2], nic_gbit=[200, 400])
    varied = s.run(nic_gbit=[200, 400])
    pd.testing.assert_frame_equal(varied, direct, check_exact=True)
    assert repr(varied) == repr(direct)  # the same CLI table
    frame = zionsim.sweep([s, s.set(nodes=2, nic_gbit=400)], threads=1)
    assert list(frame["scenario"].unique()) == [s.key(), s.set(nodes=2, nic_gbit=400).key()]
    assert len(frame) == 3
    assert frame.loc[2, "iteration_time_ms"] == direct.loc[3, "iteration_time_ms"]


def test_bad_scenario_raises_input_error_at_its_pointer():
    with pytest.raises(zionsim.InputError) as caught:
        zionsim.Scenario.from_json('{"schema_version": 1, "fidelity": "flowz"}', "mine.json")
    assert caught.value.file == "mine.json" and caught.value.pointer == "/fidelity"
    with pytest.raises(zionsim.InputError) as caught:
        zionsim.Scenario(model="dlrm-a-small", nic_gibit=400)
    assert "unknown knob 'nic-gibit'" in caught.value.message
    with pytest.raises(zionsim.InputError) as caught:
        zionsim.Scenario(nodes=[0])
    assert caught.value.pointer == "/nodes/0"
    with pytest.raises(TypeError):
        zionsim.Scenario(nic_gbit=[200, 400])  # one value; vary it with run()


def test_catalog_lists_what_the_cli_lists():
    assert zionsim.list is zionsim.catalog
    listed = zionsim.list()
    document = json.loads(cli("list", "--format", "json"))
    assert list(listed["models"]["name"]) == [m["name"] for m in document["models"]]
    assert "zionex" in set(listed["clusters"]["name"])


def test_example_runs_headless(tmp_path):
    out = tmp_path / "sweep.png"
    env = dict(os.environ, MPLBACKEND="Agg")
    done = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "examples/whatif_sweep.py"), "--model",
                           "dlrm-a-small", "--nodes", "1,2", "--nic-gbit", "200,400", "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "wrote" in done.stdout
