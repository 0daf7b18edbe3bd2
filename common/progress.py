"""How far a long job has got, for the person or the cron log waiting on it.

The checkpoint's first run, `verify_ledger`, `reconcile` over every coupon and the policy
impact replay take minutes per million rows. On a terminal they draw one bar line rewritten in
place; otherwise (cron, a container's log) they write a line every `every` seconds with the
count, the rate and the time left, so a log shows a job alive and when it will end. Two gauges
(`coupons_job_done`, `coupons_job_total`, by job) say the same to a scrape of the process's
`--metrics-port`.
"""

import time
from collections.abc import Callable

from prometheus_client import Gauge

JOB_DONE = Gauge("coupons_job_done", "Items a long job has done so far.", ["job"])
JOB_TOTAL = Gauge("coupons_job_total", "Items a long job expects to do (0: unknown).", ["job"])
BAR_WIDTH = 30


class Progress:
    """`advance(n)` after each batch; `finish()` at the end writes the last line."""

    def __init__(self, job: str, total: int | None, *, write: Callable[[str], None],
                 on_terminal: bool, unit: str = "rows", every: float = 10.0,
                 monotonic: Callable[[], float] = time.monotonic):
        self.job, self.total, self.write, self.unit = job, total, write, unit
        self.on_terminal, self.every, self.monotonic = on_terminal, every, monotonic
        self.done = 0
        self.started = self.last_written = monotonic()
        JOB_TOTAL.labels(job).set(total or 0)
        JOB_DONE.labels(job).set(0)

    def expect(self, total: int) -> None:
        """The total, once the job knows it (inside its snapshot, say)."""
        self.total = total
        JOB_TOTAL.labels(self.job).set(total)

    def advance(self, count: int) -> None:
        self.done += count
        JOB_DONE.labels(self.job).set(self.done)
        now = self.monotonic()
        if self.on_terminal:
            self.write("\r" + self.line(now))
        elif now - self.last_written >= self.every:
            self.write(self.line(now) + "\n")
            self.last_written = now

    def finish(self) -> None:
        line = self.line(self.monotonic())
        self.write(("\r" + line + "\n") if self.on_terminal else line + "\n")

    def line(self, now: float) -> str:
        seconds = max(now - self.started, 1e-9)
        rate = self.done / seconds
        text = f"{self.job}: {self.done:,} {self.unit}"
        if self.total:
            share = min(self.done / self.total, 1.0)
            text = f"{self.job}: {self.done:,} of {self.total:,} {self.unit} ({share:.0%})"
            if self.on_terminal:
                filled = round(share * BAR_WIDTH)
                text = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] " + text
        text += f", {rate:,.0f}/s, {_duration(seconds)} so far"
        if self.total and rate > 0 and self.done < self.total:
            text += f", about {_duration((self.total - self.done) / rate)} left"
        return text



def command_progress(command, job: str, total: int | None, *, unit: str = "rows",
                     quiet: bool = False) -> Progress:
    """A management command's progress, on its stderr so its stdout stays its report."""
    def write(text: str) -> None:
        if not quiet:
            command.stderr.write(text, ending="")
            command.stderr.flush()

    return Progress(job, total, write=write, unit=unit,
                    on_terminal=not quiet and command.stderr.isatty())


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
