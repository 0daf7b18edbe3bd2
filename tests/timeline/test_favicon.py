"""Every page names the console's icon, and /favicon.ico (asked for by pages that name none)
leads to it instead of a 404."""

import pytest
from django.contrib.staticfiles import finders

pytestmark = pytest.mark.django_db


def test_pages_name_the_icon_and_favicon_ico_leads_to_it(client, signed_in):
    icon = "/static/timeline/favicon.svg"
    assert finders.find("timeline/favicon.svg")
    assert f'<link rel="icon" href="{icon}"' in client.get("/login/").content.decode()
    assert f'<link rel="icon" href="{icon}"' in signed_in("support").get("/").content.decode()

    answer = client.get("/favicon.ico")

    assert (answer.status_code, answer["Location"]) == (301, icon)
