"""The I/P/B dependency model (traces/gop.py) on hand-made GoPs, and the GoP frame trace."""

import json

import numpy as np
import pytest

from traces.errors import TraceError
from traces.frames import (
    FrameTrace,
    GopTiming,
    encode_gop_command,
    encode_gop_trace,
    ffmpeg_available,
    gop_trace_from_probe,
    read_frames,
    read_gop_csv,
    write_frame_csv,
)
from traces.gop import GopError, check_display_order, closure, references
from traces.make_synthetic import HERE

# Display order I B B P B B P; decode order I P B B P B B.
IBBP = ["I", "P", "B", "B", "P", "B", "B"]
IBBP_PTS = [0, 120, 40, 80, 240, 160, 200]


def test_ibbp_references_and_closure():
    refs = references(IBBP)
    assert refs == [(), (0,), (0, 1), (0, 1), (1,), (1, 4), (1, 4)]
    need = closure(refs)
    assert need[0] == frozenset()
    assert need[4] == {0, 1}  # the second P needs the first P and the I
    assert need[6] == {0, 1, 4}  # a B needs both references and what they need
    check_display_order(IBBP, IBBP_PTS, refs)


def test_closed_gops_do_not_depend_on_each_other():
    # two closed GoPs of I P B B (each ends on its P in display order)
    t = ["I", "P", "B", "B", "I", "P", "B", "B"]
    need = closure(references(t))
    assert need[7] == {4, 5}
    assert all(j >= 4 for i in range(4, 8) for j in need[i])


def test_open_gop_b_frames_need_the_previous_gop():
    # B frames decoded after the next I but shown before it reference the last P and that I
    t = ["I", "P", "B", "B", "I", "B", "B", "P"]
    refs = references(t)
    assert refs[5] == (1, 4) and refs[7] == (4,)
    assert closure(refs)[5] == {0, 1, 4}
    check_display_order(t, [0, 120, 40, 80, 240, 160, 200, 360], refs)


def test_p_only_chain():
    need = closure(references(["I", "P", "P", "P"]))
    assert need[3] == {0, 1, 2}


@pytest.mark.parametrize(
    ("types", "problem"),
    [
        (["P"], "frame 0: a P frame needs 1"),
        (["I", "B"], "frame 1: a B frame needs 2"),
        (["I", "X"], "frame 1: picture type 'X'"),
    ],
)
def test_bad_sequences_name_the_frame(types, problem):
    with pytest.raises(GopError, match=problem):
        references(types)


def test_closure_and_display_order_errors():
    with pytest.raises(GopError, match="frame 1: reference 1"):
        closure([(), (1,)])
    refs = references(IBBP)
    bad_pts = list(IBBP_PTS)
    bad_pts[2] = 130  # a B shown after its future reference
    with pytest.raises(GopError, match="frame 2: B frame not shown between"):
        check_display_order(IBBP, bad_pts, refs)


def _gop_trace() -> FrameTrace:
    refs = tuple(references(IBBP))
    g = GopTiming(
        tuple(IBBP), np.array(IBBP_PTS, float), np.array([-40.0, 0, 40, 80, 120, 160, 200]), refs
    )
    return FrameTrace(np.array([t == "I" for t in IBBP]), np.arange(1, 8) * 100, g)


def test_gop_csv_round_trip(tmp_path):
    p = tmp_path / "g.csv"
    write_frame_csv(_gop_trace(), p)
    lines = p.read_text().splitlines()
    assert lines[0] == "frame_type,size_bytes,pict_type,pts_ms,dts_ms,refs"
    assert lines[1] == "key,100,I,0,-40,"
    assert lines[3] == "delta,300,B,40,40,0;1"
    back = read_frames(p)
    assert back.gop is not None
    assert back.gop.pict_type == tuple(IBBP)
    assert back.gop.refs == tuple(references(IBBP))
    np.testing.assert_array_equal(back.gop.pts_ms, IBBP_PTS)
    np.testing.assert_array_equal(back.size_bytes, np.arange(1, 8) * 100)


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("delta,10,P,40,0,1", "allowed only earlier rows"),
        ("key,10,P,40,0,0", "disagrees with pict_type"),
        ("delta,10,Q,40,0,0", "allowed I, P or B"),
        ("delta,10,P,x,0,0", "pts_ms 'x' is not a number"),
        ("delta,10,P,40,0,a;b", "refs 'a;b'"),
        ("delta,10,P,40,0", "5 fields"),
    ],
)
def test_gop_csv_bad_rows(tmp_path, row, problem):
    p = tmp_path / "bad.csv"
    p.write_text(f"frame_type,size_bytes,pict_type,pts_ms,dts_ms,refs\nkey,100,I,0,-40,\n{row}\n")
    with pytest.raises(TraceError) as e:
        read_gop_csv(p)
    assert str(p) in str(e.value) and problem in str(e.value)
    assert e.value.line == 3


def test_trace_from_ffprobe_json():
    def pkt(pts, dts, size):
        return {
            "type": "packet",
            "pts_time": f"{pts:.6f}",
            "dts_time": f"{dts:.6f}",
            "size": str(size),
        }

    def frm(pts, t):
        return {"type": "frame", "pts_time": f"{pts:.6f}", "pict_type": t}

    items = [pkt(0.04, 0.0, 900), pkt(0.16, 0.04, 300), frm(0.04, "I"), pkt(0.08, 0.08, 100),
             frm(0.08, "B"), pkt(0.12, 0.12, 110), frm(0.12, "B"), frm(0.16, "P")]  # fmt: skip
    f = gop_trace_from_probe(json.dumps({"packets_and_frames": items}))
    assert f.gop is not None
    assert f.gop.pict_type == ("I", "P", "B", "B")
    np.testing.assert_allclose(f.gop.pts_ms, [0, 120, 40, 80])  # shifted: first shown at 0
    np.testing.assert_allclose(f.gop.dts_ms, [-40, 0, 40, 80])
    assert f.gop.refs == ((), (0,), (0, 1), (0, 1))
    np.testing.assert_array_equal(f.size_bytes, [900, 300, 100, 110])
    with pytest.raises(TraceError, match="does not follow the GoP model"):
        gop_trace_from_probe(json.dumps({"packets_and_frames": items[1:2] + [frm(0.16, "P")]}))


def test_gop_encode_command():
    s = " ".join(encode_gop_command(HERE / "x.mp4", 2.7, 25, 20, 50, 2))
    assert "testsrc2=size=1280x720:rate=25" in s and "noise=alls=6:allf=t" in s
    assert "-g 50 -keyint_min 50 -sc_threshold 0 -bf 2" in s
    assert "b-adapt=0:b-pyramid=none:ref=1:open-gop=0:bframes=2" in s
    assert "-b:v 2700000" in s and "-f mp4" in s


def test_shipped_gop_trace_has_the_paper_structure():
    """The committed encode: 720p25, a key frame every 50 frames, two B frames between
    references ([MoQ]), 40 ms between presentation times."""
    f = read_frames(HERE / "gop-x264-720p25-g50-bf2-2.7mbps-20s.csv")
    assert f.gop is not None
    t = "".join(f.gop.pict_type)
    assert len(t) == 500 and t.count("I") == 10
    assert [i for i, x in enumerate(t) if x == "I"] == list(range(0, 500, 50))
    display = "".join(x for _, x in sorted(zip(f.gop.pts_ms, t, strict=True)))
    assert display[:50] == "I" + "BBP" * 16 + "P"  # a closed GoP ends on a P
    np.testing.assert_allclose(np.diff(np.sort(f.gop.pts_ms)), 40.0)
    assert f.mean_bitrate_mbps(25) == pytest.approx(2.7, rel=0.1)


@pytest.mark.skipif(not ffmpeg_available(), reason="ffmpeg/ffprobe not installed (apt ffmpeg)")
def test_real_gop_encode():
    f = encode_gop_trace(1.0, 25, 1.6, gop_frames=20, b_frames=2, width=320, height=180)
    assert f.gop is not None
    t = "".join(f.gop.pict_type)
    assert len(t) == 40 and t.count("I") == 2
    display = "".join(x for _, x in sorted(zip(f.gop.pts_ms, t, strict=True)))
    assert display[:20] == "I" + "BBP" * 6 + "P"
