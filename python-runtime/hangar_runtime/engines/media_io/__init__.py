"""Decoding uploads and encoding results for the audio, image and video engines."""
