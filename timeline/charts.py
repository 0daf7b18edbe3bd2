"""Geometry of the dashboard's bar chart, so the template only draws (no JS chart library)."""

from dataclasses import dataclass

WIDTH, HEIGHT = 960, 220
TOP, BOTTOM, LEFT = 16, 28, 40  # room for the scale and the hour labels
BAR_GAP = 4


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    height: float
    count: int


@dataclass(frozen=True)
class HourColumn:
    label: str  # "14:00", shown every third hour
    starts_at: object
    command: Bar
    refusal: Bar


def hour_chart(hours) -> dict:
    """Two bars per hour (commands, refusals) on one scale; heights in SVG units."""
    peak = max([1, *(h.commands for h in hours), *(h.refusals for h in hours)])
    plot_height = HEIGHT - TOP - BOTTOM
    slot = (WIDTH - LEFT) / len(hours)
    bar_width = (slot - BAR_GAP) / 2
    baseline = HEIGHT - BOTTOM

    def bar(x, count):
        height = plot_height * count / peak
        return Bar(round(x, 1), round(baseline - height, 1), round(height, 1), count)

    columns = []
    for index, hour in enumerate(hours):
        x = LEFT + index * slot
        columns.append(HourColumn(
            label=hour.starts_at.strftime("%H:%M") if index % 3 == 0 else "",
            starts_at=hour.starts_at,
            command=bar(x, hour.commands),
            refusal=bar(x + bar_width, hour.refusals),
        ))
    return {
        "width": WIDTH, "height": HEIGHT, "left": LEFT, "top": TOP, "baseline": baseline,
        "peak": peak, "bar_width": round(bar_width, 1), "columns": columns,
        "label_y": HEIGHT - 8,
        "quiet": not any(h.commands or h.refusals for h in hours),
    }
