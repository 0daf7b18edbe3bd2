"""The console's own sign-in and sign-out (django-axes throttles the sign-in)."""

from django.contrib.auth import views as auth_views


class SignIn(auth_views.LoginView):
    template_name = "timeline/login.html"
    redirect_authenticated_user = True


class SignOut(auth_views.LogoutView):
    pass
