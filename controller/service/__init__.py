"""What runs the daemon on a machine: the loop, real-time setup, systemd, LCM, recordings."""
