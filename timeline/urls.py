from django.urls import path

from timeline.views import auth, coupon, home, policies, policy_editor, policy_impact

app_name = "console"

urlpatterns = [
    path("", home.Home.as_view(), name="home"),
    path("coupons/<int:coupon_id>/", coupon.CouponPage.as_view(), name="coupon"),
    path("policies/", policies.PolicyList.as_view(), name="policies"),
    path("policies/new/", policy_editor.NewPolicy.as_view(), name="policy_new"),
    path("policies/<int:policy_id>/", policies.PolicyPage.as_view(), name="policy"),
    path("policies/<int:policy_id>/diff/", policies.PolicyDiff.as_view(), name="policy_diff"),
    path("policies/<int:policy_id>/drafts/", policy_editor.NewDraft.as_view(),
         name="policy_draft_new"),
    path("policies/<int:policy_id>/versions/<int:number>/", policies.VersionPage.as_view(),
         name="policy_version"),
    path("policies/<int:policy_id>/versions/<int:number>/edit/",
         policy_editor.DraftEditor.as_view(), name="policy_version_edit"),
    path("policies/<int:policy_id>/versions/<int:number>/impact/",
         policy_impact.ImpactPage.as_view(), name="policy_version_impact"),
    path("policies/<int:policy_id>/versions/<int:number>/publish/",
         policy_impact.Publish.as_view(), name="policy_version_publish"),
    path("login/", auth.SignIn.as_view(), name="login"),
    path("logout/", auth.SignOut.as_view(), name="logout"),
]
