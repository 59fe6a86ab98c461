"""What the CyberDog 2 protocol defines: command intake, blocks, the block queue, constants."""
