from django.shortcuts import render

from timeline.views.access import ConsolePage


class Home(ConsolePage):
    def get(self, request):
        return render(request, "console/home.html")
