"""The dependency model of an I/P/B group of pictures (no B-pyramid: B frames are never
referenced), as pure functions of the picture types in **decode order**.

- I: references nothing.
- P: references the most recent reference frame (I or P) before it in decode order — one
  reference (libx264 `ref=1`).
- B: references the two most recent reference frames before it in decode order: the past one
  and the future one in display order (bi-prediction; a B is decoded after the reference
  that follows it in display order).

`closure` gives every frame a frame needs, transitively (a P at the end of a GoP needs every
P before it and the I). The model matches what libx264 produces with `bframes=2`,
`b-pyramid=none`, `ref=1` and a closed GoP (the encode of `traces/frames.encode_gop_trace`);
`check_display_order` checks a trace's presentation times against it.
"""

from __future__ import annotations

from collections.abc import Sequence

PICT_TYPES = ("I", "P", "B")
_REFS_NEEDED = {"I": 0, "P": 1, "B": 2}


class GopError(ValueError):
    """A sequence of picture types the model cannot explain (names the frame)."""


def references(pict_types: Sequence[str]) -> list[tuple[int, ...]]:
    """For each frame (decode order), the decode indices of the frames it references,
    past reference first."""
    out: list[tuple[int, ...]] = []
    refs_seen: list[int] = []  # decode indices of I and P frames so far
    for i, t in enumerate(pict_types):
        if t not in _REFS_NEEDED:
            raise GopError(f"frame {i}: picture type {t!r}; allowed I, P, B")
        n = _REFS_NEEDED[t]
        if t == "I":
            out.append(())
        elif len(refs_seen) < n:
            raise GopError(
                f"frame {i}: a {t} frame needs {n} earlier reference frame(s) in decode "
                f"order, there are {len(refs_seen)}"
            )
        else:
            out.append(tuple(refs_seen[-n:]))
        if t != "B":
            refs_seen.append(i)
    return out


def closure(refs: Sequence[Sequence[int]]) -> list[frozenset[int]]:
    """For each frame, every frame it needs to be decoded, transitively (itself excluded).
    References must point to earlier frames (decode order)."""
    out: list[frozenset[int]] = []
    for i, rs in enumerate(refs):
        need: set[int] = set()
        for r in rs:
            if not 0 <= r < i:
                raise GopError(f"frame {i}: reference {r} is not an earlier frame")
            need.add(r)
            need |= out[r]
        out.append(frozenset(need))
    return out


def check_display_order(
    pict_types: Sequence[str], pts: Sequence[float], refs: Sequence[Sequence[int]]
) -> None:
    """A B frame lies between its two references in display time; a P frame after its one.
    Raises GopError naming the first frame that does not."""
    for i, (t, rs) in enumerate(zip(pict_types, refs, strict=True)):
        if t == "P" and not pts[rs[0]] < pts[i]:
            raise GopError(f"frame {i}: P frame shown before its reference {rs[0]}")
        if t == "B" and not pts[rs[0]] < pts[i] < pts[rs[1]]:
            raise GopError(f"frame {i}: B frame not shown between its references {rs}")
