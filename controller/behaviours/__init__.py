"""One module per mode: what the robot does in it (the Behaviour interface in base.py)."""
