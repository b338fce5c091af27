"""How a throughput trace is read: `TraceRate`, the reading options a link's `trace:` and the
`priolab trace` commands share. It lives beside its reader (traces/throughput.py
`read_trace`, `load_trace`) so that traces/ imports nothing of the link model
(netem/model.py uses it as a link's service rate)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

_WINDOW = (
    "window start: replay only [start_s, end_s) of the trace, re-based to time 0 (e.g. skip "
    "a log's idle start); seconds in the trace's own time, after reading"
)


class TraceRate(BaseModel):
    """A throughput trace replayed as the link's service rate. The reading options are those
    of the `priolab trace` commands (traces/README.md); `traces.throughput.read_trace` reads
    both."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: Path = Field(description="trace file; relative paths resolve against the scenario file")
    format: Literal["mahimahi", "schedule", "csv"] = Field(
        description="mahimahi: one line per 1500-byte delivery opportunity (ms); "
        "schedule: columns `time_s rate_mbps [...]`, tab or space; csv: named columns"
    )
    rate_column: int | str | None = Field(
        default=None,
        description="schedule: 1-based column number of the rate (default 2; the SIGCOMM'21 "
        "multipath files: 3 = 4G); csv: the rate column's name (required)",
    )
    row_step_s: float | None = Field(
        default=None,
        gt=0.0,
        description="schedule only: replay row k as [k·row_step_s, (k+1)·row_step_s), "
        "ignoring the time column (as the SIGCOMM'21 artifact replays its files: 1 s)",
    )
    duplicates: Literal["error", "mean"] = Field(
        default="error",
        description="schedule/csv: rows with the same time are an error, or one row with "
        "their mean rate",
    )
    time_column: str | None = Field(default=None, description="csv only: the time column")
    time_format: str | None = Field(
        default=None,
        description="csv only: strptime format of a date-time time column "
        "(e.g. '%Y-%m-%d %H:%M:%S', no zone = UTC); default: seconds as numbers",
    )
    rate_unit: Literal["bps", "kbps", "mbps"] | None = Field(
        default=None, description="csv only: unit of the rate column (bit/s, kbit/s, Mbit/s)"
    )
    step_s: float = Field(default=1.0, gt=0.0, description="csv only: resampling step (s)")
    gap: Literal["error", "hold", "zero"] = Field(
        default="error",
        description="csv only: a gap longer than max_gap_s is an error, holds the previous "
        "rate, or is an outage (rate 0)",
    )
    max_gap_s: float | None = Field(
        default=None, gt=0.0, description="csv only: longest normal gap (default 5 × median)"
    )
    start_s: float = Field(default=0.0, ge=0.0, allow_inf_nan=False, description=_WINDOW)
    end_s: float | None = Field(
        default=None, gt=0.0, allow_inf_nan=False, description="window end; default: the end"
    )
    loop: bool = Field(default=True, description="wrap around at the end of the trace (window)")
    scale: float = Field(default=1.0, gt=0.0, description="multiply every rate by this")
    target_mean_mbps: float | None = Field(
        default=None, gt=0.0, description="rescale so the mean rate is this (of the window)"
    )

    @model_validator(mode="after")
    def _options_of_format(self) -> TraceRate:
        csv_only = {"time_column", "time_format", "rate_unit", "step_s", "gap", "max_gap_s"}
        given = self.model_fields_set
        if self.format == "csv":
            if not (self.time_column and isinstance(self.rate_column, str) and self.rate_unit):
                raise ValueError(
                    "format 'csv' needs time_column, rate_column (a column name) and rate_unit"
                )
        elif given & csv_only:
            raise ValueError(
                f"{', '.join(sorted(given & csv_only))}: only for format 'csv' "
                f"(this trace is format '{self.format}')"
            )
        if self.format == "schedule" and isinstance(self.rate_column, str):
            raise ValueError("rate_column: format 'schedule' takes a column number (2, 3, ...)")
        if isinstance(self.rate_column, int) and self.rate_column < 2:
            raise ValueError("rate_column: column 1 is the time; allowed: 2 or more")
        if self.format == "mahimahi" and given & {"rate_column", "row_step_s", "duplicates"}:
            raise ValueError(
                "rate_column/row_step_s/duplicates: not for format 'mahimahi' (one "
                "timestamp per line; a repeated timestamp is one more packet)"
            )
        if self.row_step_s is not None and self.format != "schedule":
            raise ValueError("row_step_s: only for format 'schedule'")
        if self.row_step_s is not None and "duplicates" in given:
            raise ValueError("duplicates: row_step_s ignores the times; give one of them")
        if self.end_s is not None and self.end_s <= self.start_s:
            raise ValueError(
                f"end_s {self.end_s:g} must be greater than start_s {self.start_s:g} "
                "(the window is [start_s, end_s) of the trace)"
            )
        if self.scale != 1.0 and self.target_mean_mbps is not None:
            raise ValueError("give either scale or target_mean_mbps, not both")
        return self
