"""The simulated robot the daemon drives with --sim and the tests drive in process."""
