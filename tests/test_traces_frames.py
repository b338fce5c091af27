import numpy as np
import pytest

from traces.errors import TraceError
from traces.frames import (
    FrameTrace,
    encode_command,
    encode_trace,
    ffmpeg_available,
    read_ffprobe_csv,
    read_frame_csv,
    read_frames,
    write_frame_csv,
)


def _w(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_plain_csv_round_trip(tmp_path):
    f = FrameTrace(np.array([True, False, False]), np.array([9000, 1000, 1200]))
    p = tmp_path / "f.csv"
    write_frame_csv(f, p)
    assert p.read_text() == "frame_type,size_bytes\nkey,9000\ndelta,1000\ndelta,1200\n"
    back = read_frame_csv(p)
    np.testing.assert_array_equal(back.is_key, f.is_key)
    np.testing.assert_array_equal(back.size_bytes, f.size_bytes)
    assert read_frames(p).size_bytes.sum() == 11200
    assert f.mean_bitrate_mbps(30) == pytest.approx(11200 / 3 * 8 * 30 / 1e6)


def test_ffprobe_forms(tmp_path):
    # ffprobe 5.1 prints pkt_size before pict_type and appends side data to the first frame
    text = "frame,4893,I,side_data,H.26[45] User Data Unregistered SEI message\n\nframe,1296,P\n"
    f = read_ffprobe_csv(_w(tmp_path, "a.csv", text))
    np.testing.assert_array_equal(f.is_key, [True, False])
    np.testing.assert_array_equal(f.size_bytes, [4893, 1296])
    g = read_frames(_w(tmp_path, "b.csv", "I,500\nB,20\nP,30\n"))  # -of csv=p=0, other order
    np.testing.assert_array_equal(g.size_bytes, [500, 20, 30])
    h = read_ffprobe_csv(_w(tmp_path, "c.csv", "frame,pict_type=P,pkt_size=77\n"))
    assert not h.is_key[0] and h.size_bytes[0] == 77


@pytest.mark.parametrize(
    ("reader", "text", "line", "problem"),
    [
        (read_frame_csv, "", None, "empty file"),
        (read_frame_csv, "frame_type,size_bytes\n", None, "no rows"),
        (read_frame_csv, "type,size\nkey,1\n", 1, "allowed exactly frame_type,size_bytes"),
        (read_frame_csv, "frame_type,size_bytes\nkey,10\nI,5\n", 3, "allowed key or delta"),
        (read_frame_csv, "frame_type,size_bytes\ndelta,0\n", 2, "allowed an integer >= 1"),
        (read_frame_csv, "frame_type,size_bytes\ndelta,nan\n", 2, "not an integer"),
        (read_frame_csv, "frame_type,size_bytes\ndelta,3,4\n", 2, "3 fields"),
        (read_ffprobe_csv, "", None, "empty file"),
        (read_ffprobe_csv, "frame,100,I\nframe,P\n", 2, "needs a pict_type"),
        (read_ffprobe_csv, "frame,100,I\nframe,12,Q\n", 2, "unexpected field 'Q'"),
        (read_ffprobe_csv, "frame,-5,P\n", 1, "allowed an integer >= 1"),
    ],
)
def test_frames_bad_input(tmp_path, reader, text, line, problem):
    p = _w(tmp_path, "bad.csv", text)
    with pytest.raises(TraceError) as e:
        reader(p)
    assert str(p) in str(e.value) and problem in str(e.value)
    assert e.value.line == line


def test_encode_command_is_realtime_cbr_without_periodic_keyframes(tmp_path):
    cmd = encode_command(tmp_path / "v.mkv", 10.0, 30, 2.0)
    assert cmd[0] == "ffmpeg"
    s = " ".join(cmd)
    assert "-b:v 10000000 -maxrate 10000000" in s
    assert "-tune zerolatency" in s and "-g 1000000" in s and "-sc_threshold 0" in s
    assert "testsrc2=size=1280x720:rate=30" in s


@pytest.mark.skipif(not ffmpeg_available(), reason="ffmpeg/ffprobe not installed (apt ffmpeg)")
def test_real_encode_two_seconds():
    f = encode_trace(1.0, 30, 2.0, width=320, height=180)
    assert len(f.size_bytes) == 60
    assert f.is_key[0] and f.is_key.sum() == 1  # one key frame, at the start only
    assert f.mean_bitrate_mbps(30) == pytest.approx(1.0, rel=0.3)
