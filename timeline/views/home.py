"""The dashboard: what waits for a person, and the last day's commands and refusals."""

from django.shortcuts import render

from timeline.charts import hour_chart
from timeline.dashboard import dashboard_get
from timeline.views.access import ConsolePage


class Home(ConsolePage):
    def get(self, request):
        dashboard = dashboard_get()
        return render(request, "timeline/home.html", {
            "dashboard": dashboard,
            "chart": hour_chart(dashboard.hours),
        })
