"""Test helpers shared across the suite: a loopback Hugging Face hub, tiny model repos."""
