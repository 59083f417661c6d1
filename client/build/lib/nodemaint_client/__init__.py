"""The node maintenance spec's client side for python-ironicclient's OSC plugin."""
