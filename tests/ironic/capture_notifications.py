"""Capture what a real Ironic 39 sends on the message bus, for issue #29's
comparison with `nodemaint serve` (the comparison test itself is still to
be written). Run with the Python of Ironic's virtual environment
(tests/ironic/ironic.sh install), which has kombu:

    python capture_notifications.py declare EXCHANGE TOPIC   # before the calls
    python capture_notifications.py read EXCHANGE TOPIC OUT.json
    python capture_notifications.py read EXCHANGE TOPIC OUT.json COUNT PREFIX TIMEOUT

`declare` makes the queues `<TOPIC>.info` and `<TOPIC>.error` on the topic
exchange EXCHANGE (not durable, as oslo.messaging declares it) so nothing
sent after it is lost; `read` drains them into OUT.json: each message's
routing key, AMQP properties and body (the oslo 2.0 envelope, parsed).
With COUNT, PREFIX and TIMEOUT it keeps only the messages whose event_type
starts with PREFIX, and waits (at most TIMEOUT seconds) until COUNT came.
Ironic must run with `[DEFAULT] notification_level = info`,
`versioned_notifications_topics = TOPIC`, `control_exchange = EXCHANGE` and
`[oslo_messaging_notifications] driver = messagingv2`.
"""
import json
import os
import sys
import time

import kombu


def main(mode, exchange, topic, out=None, count=None, prefix="", timeout="0"):
    url = os.environ.get("NODEMAINT_RABBIT_URL", "amqp://guest:guest@127.0.0.1:5672//")
    ex = kombu.Exchange(exchange, type="topic", durable=False)
    queues = [kombu.Queue(f"{topic}.{p}", ex, routing_key=f"{topic}.{p}", durable=False) for p in ("info", "error")]
    with kombu.Connection(url) as conn:
        channel = conn.channel()
        for q in queues:
            q(channel).declare()
        if mode != "read":
            return
        captured = []
        deadline = time.monotonic() + float(timeout)
        while True:
            for q in queues:
                while (m := q(channel).get(no_ack=True, accept=["json"])) is not None:
                    body = json.loads(m.body)
                    if not json.loads(body["oslo.message"])["event_type"].startswith(prefix):
                        continue
                    captured.append(
                        {
                            "routing_key": m.delivery_info["routing_key"],
                            "properties": m.properties,
                            "content_type": m.content_type,
                            "content_encoding": m.content_encoding,
                            "body": body,
                        }
                    )
            if count is None or len(captured) >= int(count) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        with open(out, "w") as f:
            json.dump(captured, f, indent=1, default=str)
        print(len(captured), "messages")


if __name__ == "__main__":
    main(*sys.argv[1:])
