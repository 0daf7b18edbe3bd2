"""BROKER_URL may list a cluster's nodes: a (re)connect goes to the first that answers."""

import pytest
from django.conf import settings

from coupons.services import coupon_issue
from operations import asyncapi, broker


def test_one_url_is_one_node_and_a_list_is_each_in_order():
    assert broker.node_urls("amqp://a:5672/%2F") == ["amqp://a:5672/%2F"]
    assert broker.node_urls("amqp://a:5672/%2F, amqp://b:5673/%2F,") == [
        "amqp://a:5672/%2F", "amqp://b:5673/%2F"]


def test_the_asyncapi_document_names_the_first_node_without_credentials():
    server = asyncapi.broker_server(
        "amqp://relay:pw@mq1:5672/coupons,amqp://relay:pw@mq2:5673/coupons")
    assert (server["host"], server["pathname"]) == ("mq1:5672", "/coupons")
    assert "pw" not in str(server)


@pytest.mark.django_db
def test_a_dead_node_first_in_the_list_is_passed_over(template, ctx, broker_queue, make_relay):
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    nodes = f"amqp://guest:guest@127.0.0.1:1/%2F,{settings.BROKER_URL}"
    relay = make_relay(url=nodes)

    assert relay.run_batch().published == 1
    assert [m["headers"]["coupon_id"] for m in broker_queue.drain()] == [coupon.pk]
