"""A real oslo.messaging notification listener, for nodemaint's
notification tests. Run with the Python of Ironic's virtual environment
(tests/ironic/ironic.sh install), which has oslo.messaging:

    python oslo_listener.py TRANSPORT_URL EXCHANGE TOPIC COUNT TIMEOUT OUT.json

Listens on TOPIC in EXCHANGE (its queues `<TOPIC>.<priority>` are declared
by the listener as oslo.messaging declares them, and by the publisher),
prints `ready` once it listens, and writes every notification it received
(priority, publisher_id, event_type, payload, metadata, and the context)
to OUT.json when COUNT have arrived or TIMEOUT seconds have passed.
"""
import json
import sys
import threading
import time

from oslo_config import cfg
import oslo_messaging


class Collector:
    def __init__(self, count):
        self.received = []
        self.count = count
        self.done = threading.Event()
        self.lock = threading.Lock()

    def _take(self, priority, ctxt, publisher_id, event_type, payload, metadata):
        with self.lock:
            self.received.append(
                {
                    "priority": priority,
                    "publisher_id": publisher_id,
                    "event_type": event_type,
                    "payload": payload,
                    "metadata": metadata,
                    "context": ctxt,
                }
            )
            if len(self.received) >= self.count:
                self.done.set()
        return oslo_messaging.NotificationResult.HANDLED


def endpoint_for(collector):
    class Endpoint:
        pass

    for priority in ("audit", "debug", "info", "warn", "error", "critical", "sample"):
        setattr(
            Endpoint,
            priority,
            lambda self, ctxt, publisher_id, event_type, payload, metadata, _p=priority: collector._take(
                _p, ctxt, publisher_id, event_type, payload, metadata
            ),
        )
    return Endpoint()


def main(url, exchange, topic, count, timeout, out):
    conf = cfg.ConfigOpts()
    conf([], project="nodemaint-test")
    transport = oslo_messaging.get_notification_transport(conf, url=url)
    collector = Collector(int(count))
    listener = oslo_messaging.get_notification_listener(
        transport,
        [oslo_messaging.Target(topic=topic, exchange=exchange)],
        [endpoint_for(collector)],
        executor="threading",
    )
    listener.start()
    print("ready", flush=True)
    collector.done.wait(float(timeout))
    time.sleep(0.5)  # anything sent twice shows up too
    listener.stop()
    listener.wait()
    with open(out, "w") as f:
        json.dump(collector.received, f, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:])
