"""The dashboard: what waits for a person, and the last day's commands and refusals."""

from django.conf import settings
from django.shortcuts import render

from console.charts import hour_chart
from console.dashboard import dashboard_get
from console.views.access import ConsolePage


class Home(ConsolePage):
    def get(self, request):
        dashboard = dashboard_get()
        return render(request, "console/home.html", {
            "dashboard": dashboard,
            "chart": hour_chart(dashboard.hours),
            "demo": settings.COUPONS_DEMO,
        })
