"""The `transformers_audio` engine: Transformers speech recognition (Whisper family)
and text-to-speech pipelines."""
