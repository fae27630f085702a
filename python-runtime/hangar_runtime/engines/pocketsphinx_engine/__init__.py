"""The `pocketsphinx` engine: offline English speech-to-text with CMU PocketSphinx."""
