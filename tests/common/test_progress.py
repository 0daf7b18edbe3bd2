"""What a long job writes while it runs: a bar on a terminal, a line with the rate and the
time left every interval elsewhere, and the two gauges."""

from prometheus_client import REGISTRY

from common.progress import Progress


class Ticks:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def job(on_terminal: bool, total=1000):
    written, ticks = [], Ticks()
    progress = Progress("verify", total, write=written.append, on_terminal=on_terminal,
                        unit="positions", every=10.0, monotonic=ticks)
    return progress, written, ticks


def test_off_a_terminal_a_line_every_interval_with_rate_and_time_left():
    progress, written, ticks = job(on_terminal=False)

    ticks.now += 4
    progress.advance(200)
    assert written == []  # not yet ten seconds
    ticks.now += 6
    progress.advance(200)
    ticks.now += 30
    progress.advance(600)
    progress.finish()

    assert written == [
        "verify: 400 of 1,000 positions (40%), 40/s, 10s so far, about 15s left\n",
        "verify: 1,000 of 1,000 positions (100%), 25/s, 40s so far\n",
        "verify: 1,000 of 1,000 positions (100%), 25/s, 40s so far\n",
    ]


def test_on_a_terminal_one_bar_rewritten_in_place():
    progress, written, ticks = job(on_terminal=True)

    ticks.now += 1
    progress.advance(500)
    progress.finish()

    assert written[0] == ("\r[###############...............] verify: 500 of 1,000 positions "
                          "(50%), 500/s, 1s so far, about 1s left")
    assert written[-1].startswith("\r[###############") and written[-1].endswith("\n")


def test_without_a_total_it_counts_and_the_gauges_follow():
    progress, written, ticks = job(on_terminal=False, total=None)
    ticks.now += 3700
    progress.advance(7)
    progress.finish()

    assert written == ["verify: 7 positions, 0/s, 1h01m so far\n",
                       "verify: 7 positions, 0/s, 1h01m so far\n"]
    assert REGISTRY.get_sample_value("coupons_job_done", {"job": "verify"}) == 7
    assert REGISTRY.get_sample_value("coupons_job_total", {"job": "verify"}) == 0
