"""motiond: a motion-controller daemon for legged robots."""

__version__ = "0.1.0"
