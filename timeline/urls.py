from django.urls import path

from timeline.views import auth, home

app_name = "console"

urlpatterns = [
    path("", home.Home.as_view(), name="home"),
    path("login/", auth.SignIn.as_view(), name="login"),
    path("logout/", auth.SignOut.as_view(), name="logout"),
]
