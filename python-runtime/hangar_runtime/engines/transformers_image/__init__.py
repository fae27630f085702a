"""The `transformers_image` engine: image-to-text models (captioning, OCR models
such as GOT-OCR 2.0) through Transformers."""
