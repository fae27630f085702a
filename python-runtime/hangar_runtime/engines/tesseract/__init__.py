"""The `tesseract` engine: offline OCR with the tesseract program."""
