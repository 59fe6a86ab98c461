"""Motion sources: files and generators that become joint trajectories."""
