"""The `espeak` engine: offline text-to-speech with the espeak-ng program."""
